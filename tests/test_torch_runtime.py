"""tileir in a PyTorch program: launches on torch's current stream, asynchronous, from any thread,
captured by CUDA graphs, safe against the caching allocator, on any GPU; and the same calls on the
host reference under TILEIR_INTERPRET=1 (CPU)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tileir as ti
from tileir import F32, In, Out, cells

torch = pytest.importorskip("torch")


@ti.kernel
def vadd(a=In(F32, cells(["N"], [1024])), b=In(F32, cells(["N"], [1024])), c=Out(F32, cells(["N"], [1024]))):
    ti.store_cell(c, ti.load_cell(a) + ti.load_cell(b))


@ti.kernel
def scale_rows(x=In(F32, cells(["R", "C"], [1, 256], pad=ti.PadZero)), y=Out(F32, cells(["R", "C"], [1, 256]))):
    ti.store_cell(y, ti.load_cell(x) * 3.0)


# ---- the host reference through the same call (CI) ----------------------------------------------


def test_interpret_runs_plain_calls_on_cpu_tensors_in_place(monkeypatch):
    monkeypatch.setenv("TILEIR_INTERPRET", "1")
    a, b = torch.randn(3000), torch.randn(3000)
    c = torch.zeros(3000)
    vadd(a, b, c)
    assert torch.equal(c, a + b)
    wide = torch.randn(7, 600)
    x = wide[:, 17:530]  # a slice: a leading stride of 600, read in place
    y = torch.zeros(7, 513)
    scale_rows(x, y)
    assert torch.equal(y, x * 3)
    n = np.arange(5, dtype=np.float32)
    out = np.zeros(5, np.float32)
    vadd(n, n, out)  # numpy arrays too
    assert np.array_equal(out, 2 * n)


def test_interpret_refuses_bad_sizes_before_running(monkeypatch):
    monkeypatch.setenv("TILEIR_INTERPRET", "1")
    with pytest.raises(ti.TileirError, match="size N is 10 in a .* and 11 here") as e:
        vadd(torch.zeros(10), torch.zeros(11), torch.zeros(10))
    assert "agree on N" in e.value.fix
    with pytest.raises(ti.TileirError, match="nothing to compute"):
        vadd(torch.zeros(0), torch.zeros(0), torch.zeros(0))
    with pytest.raises(ti.TileirError, match="N=12 was given, and the arrays say N is 10"):
        vadd(torch.zeros(10), torch.zeros(10), torch.zeros(10), N=12)
    vadd(torch.zeros(10), torch.zeros(10), torch.zeros(10), N=np.int64(10))  # numpy ints are ints


# ---- on the GPU ---------------------------------------------------------------------------------

gpu = pytest.mark.gpu


def _cuda():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    from tileir.runtime import available

    if not available():
        pytest.skip("no CUDA driver for tileir")


@gpu
def test_a_plain_call_is_asynchronous_on_torch_current_stream():
    _cuda()
    n = 1 << 24
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    c = torch.empty_like(a)
    vadd(a, b, c)  # compile and load
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)  # the producer is slow ...
        a.fill_(2.0)  # ... and writes a on the side stream
        t = time.perf_counter()
        vadd(a, b, c)  # no stream named: torch's current one (s), so it reads a after the fill
        returned_ms = (time.perf_counter() - t) * 1e3
    s.synchronize()
    assert torch.equal(c, 2.0 + b)
    assert returned_ms < 20, f"the call waited {returned_ms:.1f} ms for the GPU"
    # where torch has its C++ launcher, the plain calls went through it, never refused (the mutant:
    # a block other than the cubin's REQNTID, which the driver refuses, falls back every time)
    launchers = [v[0] for site in vadd._sites.values() for v in site.variants.values()]
    if hasattr(torch._C, "_StaticCudaLauncher"):
        assert launchers and all(x._torch_launch is not None and x._torch_launch_failures == 0 for x in launchers)


@gpu
def test_cuda_graph_captures_and_replays():
    _cuda()
    a, b = torch.randn(5000, device="cuda"), torch.randn(5000, device="cuda")
    c = torch.empty_like(a)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        vadd(a, b, c)  # warm up: record, assemble, load
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        vadd(a, b, c)
    a.copy_(torch.arange(5000, device="cuda", dtype=torch.float32))
    c.zero_()
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(c, a + b)


@gpu
def test_eight_fresh_threads_launch_right():
    _cuda()
    a, b = torch.randn(10_000, device="cuda"), torch.randn(10_000, device="cuda")
    want = a + b
    errors, outs = [], []

    def work():
        try:
            c = torch.empty_like(a)
            for _ in range(200):
                vadd(a, b, c)
            torch.cuda.synchronize()
            outs.append(torch.equal(c, want))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert outs == [True] * 8


@gpu
def test_a_tensor_freed_during_an_async_launch_is_not_handed_out():
    _cuda()
    n = 1 << 22
    a, b = torch.ones(n, device="cuda"), torch.ones(n, device="cuda")
    vadd(a, b, torch.empty_like(a))
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    c = torch.empty_like(a)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)
    vadd(a, b, c, stream=side)  # a stream other than c's: recorded there
    del c  # freed while the kernel has not run yet
    d = torch.zeros(n, device="cuda")  # the allocator must not give it c's block
    torch.cuda.synchronize()
    assert int((d != 0).sum()) == 0


@gpu
def test_numpy_arguments_stay_synchronous():
    _cuda()
    x = np.arange(3000, dtype=np.float32)
    out = np.zeros_like(x)
    vadd(x, x, out)
    assert np.array_equal(out, 2 * x)


@gpu
def test_a_second_gpu_when_present():
    _cuda()
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU")
    for dev in ("cuda:1", "cuda:0", "cuda:1"):
        a, b = torch.randn(3000, device=dev), torch.randn(3000, device=dev)
        c = torch.empty_like(a)
        vadd(a, b, c)
        torch.cuda.synchronize(dev)
        assert torch.equal(c, a + b)
    with pytest.raises(ti.TileirError, match="cuda:0 and argument 1 on cuda:1"):
        vadd(torch.zeros(8, device="cuda:0"), torch.zeros(8, device="cuda:1"), torch.zeros(8, device="cuda:0"))


@gpu
def test_ragged_sizes_and_strides_on_the_device_one_cubin():
    _cuda()
    k = ti.KernelFn(scale_rows.fn, "scale_rows_fresh")
    for r, cols in ((1, 1), (3, 257), (100, 1000), (5, 4097)):
        wide = torch.randn(r, cols + 40, device="cuda")
        x = wide[:, 7:7 + cols]
        y = torch.full((r, cols), -1.0, device="cuda")
        k(x, y)
        torch.cuda.synchronize()
        assert torch.equal(y, x * 3)
    # at most one per stride claim (divisible by 16 or not), and the one-row call's: a single row is dense
    # whatever its stride (sizes.ROW), so its stride claims ROW where the others' do not
    assert k.compiled()["recordings"] <= 3


class _OnGpu0(torch.Tensor):
    """A CPU tensor that says it is on GPU 0: the generated reader's checks, tested on the CPU."""

    def get_device(self):
        return 0


def test_the_generated_reader_equals_the_full_checks():
    from tileir.runtime.fastpath import reader

    def on0(t):
        return torch.Tensor._make_subclass(_OnGpu0, t)

    cfg = scale_rows.config()
    plan = scale_rows.plan(cfg)
    read = reader(plan, [(kp.dtype, kp.by_ptr) for kp in scale_rows.kparams(cfg)], 2)
    wide = torch.randn(5, 100)
    for x, y in ((wide[:, 3:50], torch.zeros(5, 47)), (torch.randn(3, 32), torch.zeros(3, 32))):
        device, slots, values, claims = read((on0(x), on0(y)))
        assert device == 0 and values == plan.values((x, y))
        assert claims == plan.div16(values, (x, y))
        assert slots == (x.data_ptr(), y.data_ptr(), *values)
    # anything the full path would refuse or explain, the reader hands back (None)
    x = on0(torch.randn(5, 40))
    for bad in ((x, on0(torch.zeros(5, 41))),  # the sizes disagree
                (x, on0(torch.zeros(5, 40, dtype=torch.float16))),  # another format
                (x, torch.zeros(5, 40)),  # on the CPU
                (x, on0(torch.zeros(5, 80))[:, ::2]),  # a last dimension with a stride
                (x,), (x, on0(torch.zeros(0, 40)))):
        assert read(bad) is None, bad
    # scalars pack into their slot's bit pattern
    k = ti.KernelFn(lambda a=ti.In(F32, cells(["N"], [256])), s=ti.ByValue(ti.I32), f=ti.ByValue(F32),
                    c=ti.Out(F32, cells(["N"], [256])): None, "scalars")
    kcfg = k.config()
    read = reader(k.plan(kcfg), [(kp.dtype, kp.by_ptr) for kp in k.kparams(kcfg)], 4)
    a, c = on0(torch.zeros(10)), on0(torch.zeros(10))
    _, slots, _, _ = read((a, -3, 1.5, c))
    assert slots[1] == (-3) & 0xFFFFFFFF and slots[2] == 0x3FC00000
    assert read((a, 2**40, 1.5, c)) is None and read((a, 3.0, 1.5, c)) is None
