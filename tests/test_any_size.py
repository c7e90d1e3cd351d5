"""One kernel, any size (issue 11), on the host reference: every library kernel at 32 sizes each --
odd, tiny and past a tile (1, 3, 257, 1000, 4097 and random ones) -- against its numpy answer, all
from ONE recording per configuration (``compiled()["recordings"]`` of a fresh copy of the kernel);
strided operands (a slice of a wider array, a ``[B, S, H, D]`` tensor's transpose) read and
written in place; and bad sizes refused with the argument and the fix before anything runs.

The sizes are drawn from a fixed seed (bench/any_size_device.py draws the same ones on the GPU)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from tileir import TileirError
from tileir.kernels import CASES, attention, conv1d, layernorm, matmul_f16, matmul_i8, rmsnorm, softmax, vadd
from tileir.kernels.attention import reference as attention_reference


def _sweeps():
    """bench/any_sizes.py: the sweep's sizes and configurations, shared with the GPU run."""
    path = Path(__file__).resolve().parents[1] / "bench" / "any_sizes.py"
    spec = importlib.util.spec_from_file_location("any_sizes", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["any_sizes"] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


SW = _sweeps()



@pytest.mark.parametrize("name", sorted(SW.SWEEPS))
def test_every_size_from_one_recording(name, monkeypatch):
    sweep, case = SW.SWEEPS[name], CASES[name]
    if sweep.runs:  # a runner of several launches: its module's kernels replaced by fresh copies
        kernels = {}
        for module, attr in sweep.runs:
            kernels[attr] = getattr(module, attr).fresh()
            monkeypatch.setattr(module, attr, kernels[attr])
    else:
        kernels = {case.kernel.name: case.kernel.fresh()}
    sizes = SW.sizes_of(name)
    assert len(set(sizes)) >= 30
    rng = np.random.default_rng(11)
    for size in sizes:
        args = case.inputs(size, rng)
        want = case.expected([a.copy() if isinstance(a, np.ndarray) else a for a in args])
        if sweep.runs:
            case.runner(args, "host", **sweep.config)
        else:
            kernels[case.kernel.name].run_host(*args, **sweep.config)
        err, ok = case.check(args[case.output], want)
        assert ok, f"{name} at {size}: max error {err}"
    got = {k: v.compiled()["recordings"] for k, v in kernels.items()}
    assert got == SW.recordings(name, case.kernel.name), f"{name}: {got} recordings over {len(sizes)} sizes"


def test_the_sweep_covers_every_library_case_with_odd_and_tiny_sizes():
    covered = {n for n, c in CASES.items() if c.kernel.fn.__module__.rsplit(".", 1)[1] in SW.MODULES}
    assert set(SW.SWEEPS) == covered  # the training kernels' cases: tests/test_backward.py
    extents = {int(e) for name in SW.SWEEPS for e in np.ravel(SW.sizes_of(name))}
    assert set(SW.EDGES) <= extents
    assert SW.sizes_of("vadd")[:5] == [1, 3, 257, 1000, 4097]


# ---- strides: a slice of a wider array, read and written in place --------------------------------


def _window(big, top, left, rows, cols):
    """The [rows, cols] window of a wider matrix at (top, left): a leading stride, read in place."""
    w = big[top:top + rows, left:left + cols]
    assert not w.flags.c_contiguous
    return w


@pytest.mark.parametrize("kern,dtype,extra", [(matmul_f16, np.float16, {}), (matmul_f16, np.float16, {"group": 3}),
                                              (matmul_i8, np.int8, {})], ids=["f16", "f16-grouped", "i8"])
def test_matmul_operands_with_a_leading_stride(kern, dtype, extra):
    rng = np.random.default_rng(1)
    m, n, k = 130, 77, 99
    if dtype == np.int8:
        big_a, big_b = (rng.integers(-128, 128, shape).astype(np.int8) for shape in ((m + 5, k + 9), (k + 2, n + 7)))
        out_t = np.int32
    else:
        big_a = (rng.standard_normal((m + 5, k + 9)) / 10).astype(dtype)
        big_b = rng.standard_normal((k + 2, n + 7)).astype(dtype)
        out_t = dtype
    a, b = _window(big_a, 2, 7, m, k), _window(big_b, 1, 3, k, n)
    big_c = np.full((m + 4, n + 9), 7, out_t)
    c = _window(big_c, 3, 5, m, n)
    kern.run_host(a, b, c, tm=64, tn=32, tk=32, **extra)
    want = a.astype(np.float64) @ b.astype(np.float64)
    if dtype == np.int8:
        assert np.array_equal(c, want.astype(np.int32))
    else:
        np.testing.assert_allclose(c.astype(np.float64), want, rtol=1e-2, atol=2e-2)
    outside = np.ones(big_c.shape, bool)
    outside[3:3 + m, 5:5 + n] = False
    assert np.all(big_c[outside] == 7)  # only the window was written


def test_bmm_operands_with_batch_and_row_strides():
    from tileir.kernels import bmm

    rng = np.random.default_rng(2)
    bt, m, n, k = 3, 65, 33, 47
    a = (rng.standard_normal((bt, m + 2, k + 9)) / 7).astype(np.float16)[:, 1:1 + m, 4:4 + k]
    b = rng.standard_normal((bt, k + 1, n + 3)).astype(np.float16)[:, :k, 2:2 + n]
    big = np.zeros((bt, m, n + 10), np.float16)
    c = big[:, :, 6:6 + n]
    bmm.run_host(a, b, c, tm=32, tn=32, tk=16)
    np.testing.assert_allclose(c.astype(np.float64), np.matmul(a.astype(np.float64), b.astype(np.float64)),
                               rtol=1e-2, atol=2e-2)
    assert not big[:, :, :6].any() and not big[:, :, 6 + n:].any()


@pytest.mark.parametrize("causal", [False, True])
def test_attention_on_a_bshd_tensor_transposed_in_place(causal):
    """q, k, v and o in torch's [B, S, H, D] memory layout, passed as .transpose(1, 2) views
    (numpy's transpose(0, 2, 1, 3)); grouped-query heads and a K/V length of their own."""
    rng = np.random.default_rng(3)
    b, h, h_kv, s, s_kv, d = 2, 4, 2, 37, 53, 24
    q = rng.standard_normal((b, s, h, d + 8)).astype(np.float16)[..., :d].transpose(0, 2, 1, 3)
    k = rng.standard_normal((b, s_kv, h_kv, d)).astype(np.float16).transpose(0, 2, 1, 3)
    v = rng.standard_normal((b, s_kv, h_kv, d)).astype(np.float16).transpose(0, 2, 1, 3)
    o_bshd = np.full((b, s, h, d), 9, np.float16)
    o = o_bshd.transpose(0, 2, 1, 3)
    attention.run_host(q, k, v, o, causal=causal, bq=16, bk=16, d_tile=32)
    np.testing.assert_allclose(o.astype(np.float64), attention_reference(q, k, v, causal), rtol=1e-2, atol=1e-2)
    assert np.shares_memory(o, o_bshd)


def test_attention_with_torch_tensors_under_interpret(monkeypatch):
    """The torch spelling: a [B, S, H, D] tensor's .transpose(1, 2), no copy, through a plain call."""
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("TILEIR_INTERPRET", "1")
    g = torch.Generator().manual_seed(0)
    b, s, h, d = 1, 40, 2, 16
    q, k, v = (torch.randn(b, s, h, d, generator=g).half().transpose(1, 2) for _ in range(3))
    out = torch.zeros(b, s, h, d, dtype=torch.half)
    attention(q, k, v, out.transpose(1, 2), causal=True, bq=16, bk=16, d_tile=16)
    want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
    torch.testing.assert_close(out.transpose(1, 2).float(), want, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("kern,fmt,dtype", [(softmax, "f32", np.float32), (softmax, "bf16", None),
                                            (layernorm, "f16", np.float16), (rmsnorm, "f32", np.float32)])
def test_row_kernels_on_slices_of_wider_matrices(kern, fmt, dtype):
    from tileir.dtypes import dtype as fmt_dtype

    npd = dtype or fmt_dtype(fmt).np
    rng = np.random.default_rng(4)
    r, cols = 5, 300
    x = (rng.standard_normal((r, cols + 11)) * 2).astype(npd)[:, 4:4 + cols]
    w = (1 + rng.standard_normal(cols + 2) / 2).astype(npd)[1:1 + cols]  # a 1-D slice: unit stride still
    bias = rng.standard_normal(cols).astype(npd)
    big = np.zeros((r, cols + 20), npd)
    y = big[:, 10:10 + cols]
    xd = x.astype(np.float64)
    if kern is softmax:
        kern.run_host(x, y, fmt=fmt, max_tile=128)
        e = np.exp(xd - xd.max(1, keepdims=True))
        want = e / e.sum(1, keepdims=True)
    elif kern is layernorm:
        kern.run_host(x, w, bias, y, fmt=fmt, max_tile=128)
        mu = xd.mean(1, keepdims=True)
        want = (xd - mu) / np.sqrt(((xd - mu) ** 2).mean(1, keepdims=True) + 1e-5) * w.astype(np.float64) + bias
    else:
        kern.run_host(x, w, y, fmt=fmt, max_tile=128)
        want = xd / np.sqrt((xd * xd).mean(1, keepdims=True) + 1e-6) * w.astype(np.float64)
    tol = 1e-4 if fmt == "f32" else 2e-2
    np.testing.assert_allclose(y.astype(np.float64), want, rtol=tol, atol=tol)
    assert not big[:, :10].astype(np.float64).any() and not big[:, 10 + cols:].astype(np.float64).any()


@pytest.mark.parametrize("kern", [softmax, layernorm, rmsnorm])
def test_the_one_chunk_programs_agree_with_the_walks_and_refuse_a_wider_row(kern):
    """one_chunk (the rule's choice where a row's bucket fits the chunk) records no walk: it must
    answer what the walking program answers at every width up to the chunk, rows sharing a block
    or not -- and refuse a row past it, where it would leave the rest of the row unwritten (the
    mutant: a plan without the one-cell limit runs it and the last check fails)."""
    rng = np.random.default_rng(7)
    for cols, rows in ((1, 1), (13, 2), (100, 1), (127, 4), (128, 1)):
        x = (rng.standard_normal((6, cols)) * 3).astype(np.float32)
        w, bias = rng.standard_normal(cols).astype(np.float32), rng.standard_normal(cols).astype(np.float32)
        args = {softmax: (x,), layernorm: (x, w, bias), rmsnorm: (x, w)}[kern]
        got, want = np.zeros_like(x), np.zeros_like(x)
        kern.run_host(*args, got, max_tile=128, rows=rows, one_chunk=True)
        kern.run_host(*args, want, max_tile=32, rows=rows)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert kern.compiled()["recordings"] >= 2
    x = np.ones((2, 129), np.float32)
    args = {softmax: (x,), layernorm: (x, x[0], x[0]), rmsnorm: (x, x[0])}[kern]
    y = np.full_like(x, 7.0)
    _refused(lambda: kern.run_host(*args, y, max_tile=128, one_chunk=True), "129", "one cell", what="argument 0")
    assert (y == 7.0).all()  # nothing ran


# ---- bad input: refused, naming the argument and the fix, with nothing run -----------------------


def _refused(call, *words, what=None, fix=None) -> TileirError:
    with pytest.raises(TileirError) as e:
        call()
    msg = str(e.value)
    for w in words:
        assert w in msg, msg
    if what is not None:
        assert what in (e.value.what or ""), msg
    if fix is not None:
        assert e.value.fix and fix in e.value.fix, msg
    return e.value


def _matmul_args(m=20, n=12, k=9):
    rng = np.random.default_rng(5)
    return [rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16),
            np.full((m, n), 3, np.float16)]


def test_a_size_larger_than_the_array_is_refused():
    a, b, c = _matmul_args()
    _refused(lambda: matmul_f16.run_host(a, b, c, M=21), "M=21 was given, and the arrays say M is 20", what="M",
             fix="leave M out")
    assert np.all(c == 3)  # nothing ran
    matmul_f16.run_host(a, b, c, M=np.int64(20), N=12)  # the right sizes, a numpy int among them: accepted
    assert not np.all(c == 3)


def test_arrays_that_disagree_are_refused_naming_the_argument():
    a, b, c = _matmul_args()
    _refused(lambda: matmul_f16.run_host(a, b[:8], c), "size K is 9 in a (dimension 1) and 8 here",
             what="argument 1 (b)", fix="arrays that agree on K")
    _refused(lambda: vadd.run_host(np.zeros(10, np.float32), np.zeros(11, np.float32), np.zeros(10, np.float32)),
             "size N is 10", what="argument 1 (b)", fix="agree on N")
    x = np.zeros((4, 100), np.float32)
    _refused(lambda: layernorm.run_host(x, np.zeros(99, np.float32), np.zeros(100, np.float32), x),
             "size C is 100 in x", what="argument 1 (w)")
    q = np.zeros((1, 3, 8, 16), np.float16)
    kv = np.zeros((1, 2, 8, 16), np.float16)
    _refused(lambda: attention.run_host(q, kv, kv, q.copy()), "q has 3 heads and k / v 2", what="k",
             fix="divides q's")
    _refused(lambda: attention.run_host(q, q, q, q.copy(), d_tile=8), "head dimension D is 16", what="d_tile",
             fix="d_tile=16")
    _refused(lambda: conv1d.run_host(np.zeros(10, np.float32), np.zeros(3, np.float32), np.zeros(7, np.float32)),
             "y has N - W + 1 = 8; it has 7", what="y", fix="a y of 8 elements")
    _refused(lambda: matmul_f16.run_host(a, b, np.zeros((20, 12, 1), np.float16)), "an array of shape [20, 12, 1] "
             "for a parameter of rank 2", what="argument 2 (c)", fix="2-dimensional")


def test_a_zero_size_array_is_refused():
    z = np.zeros(0, np.float32)
    _refused(lambda: vadd.run_host(z, z, z), "nothing to compute", what="argument 0 (a)", fix="skip the call")
    x = np.zeros((0, 5), np.float32)
    _refused(lambda: softmax.run_host(x, x), "dimension 0 of the array is 0", what="argument 0 (x)")


def test_a_float_or_none_is_refused():
    a, b, c = _matmul_args()
    _refused(lambda: matmul_f16.run_host(a, b, c, M=20.0), "M=20.0: a size is an int", what="M", fix="leave M out")
    _refused(lambda: matmul_f16.run_host(a, b, c, M=None), "M=None: a size is an int", what="M")
    _refused(lambda: matmul_f16.run_host(None, b, c), "a NoneType has no shape", what="argument 0 (a)",
             fix="pass an array")
    _refused(lambda: vadd.run_host(1.5, np.zeros(4, np.float32), np.zeros(4, np.float32)), "a float has no shape",
             what="argument 0 (a)")
    _refused(lambda: matmul_f16.run_host(a, b, c, tm=64.0), "tm=64.0 is a float", fix="tm=64")
    _refused(lambda: softmax.run_host(np.zeros((2, 3)), np.zeros((2, 3)), cols=3), "unknown configuration cols",
             fix="sizes come from the arrays")
    assert np.all(c == 3)


def test_a_size_keyword_names_the_sizes_a_kernel_has():
    q = np.zeros((1, 2, 8, 16), np.float16)
    attention.run_host(q, q, q, q.copy(), S=8, D=np.int64(16), H_kv=2)
    _refused(lambda: attention.run_host(q, q, q, q.copy(), S=9), "S=9 was given, and the arrays say S is 8")
    _refused(lambda: attention.run_host(q, q, q, q.copy(), s=8), "unknown configuration s",
             fix="sizes come from the arrays")


def test_blocks_of_a_dimension_along_an_axis_is_the_cells_not_the_grid():
    """blocks_of reads cdiv(extent, tile) even where the dimension follows a grid axis: a kernel
    launched on a grid of its own choosing still walks its array's cells. Kills: num_blocks."""
    import tileir as ti
    from tileir import F32, In, Shared, cells

    @ti.kernel(grid=lambda: (1,))
    def count(x=In(F32, cells(["N"], [4])), out=Shared(F32, [1])):
        n = ti.idx_as_tile(ti.blocks_of(x, 0))
        ti.store(out, ti.idx_const(0), ti.broadcast(ti.int_to_float(n, F32), [1]))

    out = np.zeros(1, np.float32)
    count.run_host(np.zeros(10, np.float32), out)
    assert out[0] == 3  # 10 elements in cells of 4, on a one-block grid


def test_an_int_for_a_float_configuration_is_the_same_recording():
    """eps=0 and eps=0.0 are one configuration. Kills: keying configuration by repr alone."""
    x = np.random.default_rng(0).standard_normal((2, 5)).astype(np.float32)
    y = np.zeros_like(x)
    from tileir.kernels import layernorm

    ln = layernorm.fresh()
    w, b = np.ones(5, np.float32), np.zeros(5, np.float32)
    ln.run_host(x, w, b, y, eps=0)
    ln.run_host(x, w, b, y, eps=0.0)
    assert ln.compiled()["recordings"] == 1



def test_a_slice_for_a_parameter_read_as_dense_rows_is_refused_not_misread():
    """Cells and array_view follow an array's strides; the pointer path and retile compute dense
    offsets, so a slice there is refused (it would read the wrong elements). Kills: admitting every
    parameter with extents as strided."""
    import tileir as ti
    from tileir import F32, TileirError

    @ti.kernel(grid=lambda R: (R,))
    def rows(x=ti.Whole(F32, ["R", 8]), y=ti.Shared(F32, ["R", 8])):
        base = ti.tile_at(ti.block_id(0), 8)
        ti.store(y, base, ti.load(x, base, [8]))

    big = np.arange(64, dtype=np.float32).reshape(4, 16)
    y = np.zeros((4, 8), np.float32)
    with pytest.raises(TileirError, match="reads it as dense rows") as e:
        rows.run_host(big[:, :8], y)
    assert "ascontiguousarray" in e.value.fix and "argument 0 (x)" in str(e.value)
    rows.run_host(np.ascontiguousarray(big[:, :8]), y)
    assert np.array_equal(y, big[:, :8])
    from tileir.runtime.arrays import prepare

    with pytest.raises(TileirError, match="holds float64"):  # a strided host array's format is checked too
        prepare(np.zeros((4, 16), np.float64)[:, :8], "f32", True, strided_ok=True)
