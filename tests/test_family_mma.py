"""mmai (exact: i8 x i8 into i32, signed) and mma_scaled (block-scaled, sm_100+), and entry hints."""

import numpy as np
import pytest

import tileir as ti
from tileir import F32, I8, I32, TileirError
from tileir.assemble import assemble
from tileir.ref import run_host
from tileir.render import normalise


def test_mmai_is_exact_and_signed(disasm):
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (16, 32)).astype(np.int8)
    b = rng.integers(-128, 128, (32, 16)).astype(np.int8)
    out = np.zeros((16, 16), np.int32)

    def body():
        z = ti.idx_const(0)
        ti.store(ti.param(I32, 2), z, ti.mmai(ti.load(ti.param(I8, 0), z, [16, 32]),
                                             ti.load(ti.param(I8, 1), z, [32, 16]), 7))

    prog = ti.trace_kernel("k", (ti.ByPtr(I8), ti.ByPtr(I8), ti.ByPtr(I32)), body)
    run_host(prog, [a, b, out], (1,))
    assert np.array_equal(out, a.astype(np.int64) @ b.astype(np.int64) + 7)
    k = ti.lower(prog)
    assert normalise(disasm(ti.encode_kernel(k))) == normalise(ti.render_kernel(k))
    assert assemble(ti.encode_kernel(k), "sm_90", kernel="k")[:4] == b"\x7fELF"


def test_mmai_refuses_other_formats():
    def body():
        z = ti.idx_const(0)
        t = ti.load(ti.param(I32, 0), z, [16, 16])
        ti.mmai(t, t, 0)

    with pytest.raises(TileirError, match="i8"):
        ti.trace_kernel("k", (ti.ByPtr(I32),), body)


def test_mma_scaled(disasm):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 64)).astype(ti.F8E4M3FN.np)
    b = rng.standard_normal((64, 16)).astype(ti.F8E4M3FN.np)
    sa = np.exp2(rng.integers(-2, 3, (16, 2))).astype(ti.F8E8M0FNU.np)
    sb = np.exp2(rng.integers(-2, 3, (2, 16))).astype(ti.F8E8M0FNU.np)
    out = np.zeros((16, 16), np.float32)
    F8, E8 = ti.F8E4M3FN, ti.F8E8M0FNU

    def body():
        z = ti.idx_const(0)
        ta, tb = ti.load(ti.param(F8, 0), z, [16, 64]), ti.load(ti.param(F8, 1), z, [64, 16])
        tsa, tsb = ti.load(ti.param(E8, 2), z, [16, 2]), ti.load(ti.param(E8, 3), z, [2, 16])
        ti.store(ti.param(F32, 4), z, ti.mma_scaled(ta, tb, 0.0, tsa, tsb))

    params = (ti.ByPtr(F8), ti.ByPtr(F8), ti.ByPtr(E8), ti.ByPtr(E8), ti.ByPtr(F32))
    prog = ti.trace_kernel("k", params, body)
    run_host(prog, [a, b, sa, sb, out], (1,))
    want = (a.astype(np.float64) * np.repeat(sa.astype(np.float64), 32, 1)) @ \
        (b.astype(np.float64) * np.repeat(sb.astype(np.float64), 32, 0))
    assert np.allclose(out, want, rtol=1e-5, atol=1e-5)
    k = ti.lower(prog)
    assert normalise(disasm(ti.encode_kernel(k))) == normalise(ti.render_kernel(k))
    assert assemble(ti.encode_kernel(k), "sm_100", kernel="k")[:4] == b"\x7fELF"  # the formats need sm_100


def test_mma_scaled_refuses_pairs_outside_the_table():
    def body():
        z = ti.idx_const(0)
        t = ti.load(ti.param(ti.F16, 0), z, [16, 64])
        s = ti.load(ti.param(ti.F8E8M0FNU, 1), z, [16, 2])
        ti.mma_scaled(t, ti.load(ti.param(ti.F16, 0), z, [64, 16]), 0.0, s, ti.load(ti.param(ti.F8E8M0FNU, 1), z,
                                                                                   [2, 16]))

    with pytest.raises(TileirError, match="table"):
        ti.trace_kernel("k", (ti.ByPtr(ti.F16), ti.ByPtr(ti.F8E8M0FNU)), body)


def test_entry_hints_reach_the_bytes(disasm):
    hints = [ti.for_arch("sm_90", [ti.hint_occupancy(2), ti.hint_num_cta_in_cga(1)])]

    @ti.kernel(hints=hints, grid=lambda: (1,))
    def k(a=ti.ByPtr(F32)):
        ti.store(a, ti.idx_const(0), ti.full([16], 1.0, F32))

    text = k.mlir()
    assert "occupancy = 2" in text
    assert normalise(disasm(k.bytecode())) == normalise(text)
    assert k.cubin("sm_90")[:4] == b"\x7fELF"


def test_view_load_latency_moves_onto_each_view_load(disasm):
    """hint_view_load_latency is an entry hint of this package's: the lowering writes it as ``latency``
    on every view load (beside a load's own hints) and leaves it off the entry, whose other hints stay.
    Kills: the key written on the entry (not the dialect's), a load without it, a load's own allow_tma
    dropped by the merge, the other entry hints dropped with it."""
    hints = [ti.for_arch("sm_90", [ti.hint_occupancy(2), ti.hint_view_load_latency(3)])]

    @ti.kernel(hints=hints, grid=lambda: (1,))
    def k(a=ti.Whole(F32, [32, 64]), b=ti.Whole(F32, [32, 64]), c=ti.Shared(F32, [32, 64])):
        pa = ti.partition_view(ti.array_view(a), [32, 64])
        pb = ti.partition_view(ti.array_view(b), [32, 64])
        pc = ti.partition_view(ti.array_view(c), [32, 64])
        ti.store_view(pc, [0, 0], ti.load_view(pa, [0, 0]) + ti.load_view(pb, [0, 0]))

    text = k.mlir()
    assert "view_load_latency" not in text and "occupancy = 2" in text
    loads = [ln for ln in text.splitlines() if "load_view_tko" in ln]
    assert len(loads) == 2 and all("latency = 3" in ln for ln in loads)
    assert not any("latency" in ln for ln in text.splitlines() if "store_view_tko" in ln)
    assert normalise(disasm(k.bytecode())) == normalise(text)
    assert k.cubin("sm_90")[:4] == b"\x7fELF"
    from tileir.surface.hints import merge_hints

    own = (("sm_90", (("allow_tma", False),)),)
    assert merge_hints(own, (("sm_90", (("latency", 1),)),)) == (("sm_90", (("allow_tma", False), ("latency", 1))),)


def test_view_store_no_tma_moves_onto_each_view_store(disasm):
    """hint_view_store_no_tma (the kernels' ``no_tma_store``) is an entry hint of this package's: the
    lowering writes ``allow_tma = false`` on every view store and leaves the key off the entry, whose other
    hints stay; 0 names none. Kills: the key written on the entry, a store without it, a load given it."""
    def k_with(hints):
        @ti.kernel(hints=hints, grid=lambda: (1,))
        def k(a=ti.Whole(F32, [32, 64]), c=ti.Shared(F32, [32, 64])):
            pa = ti.partition_view(ti.array_view(a), [32, 64])
            pc = ti.partition_view(ti.array_view(c), [32, 64])
            ti.store_view(pc, [0, 0], ti.load_view(pa, [0, 0]))

        return k

    k = k_with([ti.for_arch("sm_90", [ti.hint_occupancy(2), ti.hint_view_store_no_tma()])])
    text = k.mlir()
    assert "view_store_no_tma" not in text and "occupancy = 2" in text
    stores = [ln for ln in text.splitlines() if "store_view_tko" in ln]
    assert len(stores) == 1 and "allow_tma = false" in stores[0]
    assert not any("allow_tma" in ln for ln in text.splitlines() if "load_view_tko" in ln)
    assert normalise(disasm(k.bytecode())) == normalise(text)
    assert k.cubin("sm_90")[:4] == b"\x7fELF"
    off = k_with([ti.for_arch("sm_90", [ti.hint_view_store_no_tma(0)])]).mlir()
    assert "allow_tma" not in off and "optimization_hints" not in off.splitlines()[0]


def _small_k_product(fmt, k):
    import tileir as ti
    from tileir import F32

    @ti.kernel(grid=lambda: (1,))
    def product(a=ti.Whole(F32, [32, k]), b=ti.Whole(F32, [k, 32]), c=ti.Shared(F32, [32, 32])):
        pa = ti.partition_view(ti.array_view(a), [32, k])
        pb = ti.partition_view(ti.array_view(b), [k, 32])
        x, y = ti.to(ti.load_view(pa, [0, 0]), fmt), ti.to(ti.load_view(pb, [0, 0]), fmt)
        ti.store_view(ti.partition_view(ti.array_view(c), [32, 32]), [0, 0], ti.to(ti.mma(x, y, 0.0), F32))

    return product


def test_tf32_products_with_k_4_are_padded_to_8_and_no_other():
    """tileiras 13.4.92 answers tf32 mma with K = 4 wrong on sm_90 (bench/results/tf32_small_k_h200.json);
    the lowering pads K to 8 with zeros. Kills: dropping the padding (the K = 4 text), padding
    what is right (the K = 8 and f16 texts), padding with something other than zeros (the host)."""
    from tileir import F16, TF32

    text = _small_k_product(TF32, 4).mlir()
    assert "tile<32x8xtf32>, tile<8x32xtf32>" in text and text.count(" cat ") == 2
    assert " cat " not in _small_k_product(TF32, 8).mlir()
    assert " cat " not in _small_k_product(F16, 4).mlir()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((32, 4)).astype(np.float32), rng.standard_normal((4, 32)).astype(np.float32)
    c = np.zeros((32, 32), np.float32)
    _small_k_product(TF32, 4).run_host(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-2, atol=1e-2)
