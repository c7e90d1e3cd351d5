"""A plain call's fast path, on the CPU: torch tensors that say they live on cuda:0 and a driver
that only records what it is asked, so the generated reader, the call site's variant, the
generated grid and the Launcher's slots are exercised without a GPU (the GPU tests run the same
path for real: tests/test_torch_runtime.py)."""

from __future__ import annotations

import ctypes
import sys

import pytest

torch = pytest.importorskip("torch")

import tileir as ti  # noqa: E402
from tileir import F32, In, Out, cells  # noqa: E402
from tileir.kernel import KernelFn  # noqa: E402


class OnGpu0(torch.Tensor):
    """A CPU tensor that answers get_device() == 0 (nothing else changes)."""

    __torch_function__ = torch._C._disabled_torch_function_impl

    def get_device(self):
        return 0


class Results:
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_CONTEXT = 201
    CUDA_ERROR_INVALID_HANDLE = 400
    CUDA_ERROR_CONTEXT_IS_DESTROYED = 709


class Driver:
    """Records every cuLaunchKernel: the grid and the slot values the parameters point at."""

    CUresult = Results

    def __init__(self):
        self.launches = []

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        n = 4  # a, b, c and the hidden N
        ptrs = (ctypes.c_void_p * n).from_address(params)
        self.launches.append(((gx, gy, gz), [ctypes.c_uint64.from_address(p).value for p in ptrs]))
        return (0,)

    def CUstream(self, handle):
        return handle


@ti.kernel
def vadd(a=In(F32, cells(["N"], [256])), b=In(F32, cells(["N"], [256])), c=Out(F32, cells(["N"], [256]))):
    ti.store_cell(c, ti.load_cell(a) + ti.load_cell(b))


@pytest.fixture
def fake_gpu(monkeypatch):
    launch_mod = sys.modules["tileir.runtime.launch"]
    drv = Driver()
    monkeypatch.setattr(KernelFn, "cubin", lambda self, *a, **k: b"\x7fELF")
    monkeypatch.setattr("tileir.assemble.gpu_name_of_device", lambda *a: "sm_90")
    monkeypatch.setattr(launch_mod, "cu", lambda: drv)
    monkeypatch.setattr(launch_mod, "current_torch_stream", lambda device: 0)
    monkeypatch.setattr(launch_mod, "bind", lambda device: True)
    monkeypatch.delenv("TILEIR_INTERPRET", raising=False)
    vadd.forget()
    yield drv
    vadd.forget()


def _arrays(n):
    return [torch.zeros(n).as_subclass(OnGpu0) for _ in range(3)]


def _prime(arrays):
    """The first call takes the full path, which refuses CPU memory; the variant it made is then
    marked checked, as a first GPU call would leave it, so the next calls take the fast path."""
    with pytest.raises(ti.TileirError):
        vadd(*arrays)
    (site,) = vadd._sites.values()
    for variant in site.variants.values():
        variant[0]._checked = True
        variant[0]._functions[0] = "function"


def test_a_plain_call_launches_its_slots_on_the_generated_grid(fake_gpu):
    arrays = _arrays(1000)
    _prime(arrays)
    vadd(*arrays)
    grid, slots = fake_gpu.launches[-1]
    assert grid == (4, 1, 1)  # cdiv(1000, 256), padded to three axes
    assert slots == [arrays[0].data_ptr(), arrays[1].data_ptr(), arrays[2].data_ptr(), 1000]
    # another size of the same claims (not a multiple of 16 either): the same variant, new slots and
    # grid (the mutant: launch_ready skipping the slot writes launches with 1000 again)
    more = _arrays(3000)
    vadd(*more)
    grid, slots = fake_gpu.launches[-1]
    assert grid == (12, 1, 1) and slots[3] == 3000 and slots[0] == more[0].data_ptr()
    assert len(vadd._sites) == 1 and len(fake_gpu.launches) == 2


def test_the_generated_grid_keeps_to_the_drivers_limits():
    """fast_grid answers three ints, and None (the checked way, which refuses with words) for a y
    or z axis past 65535."""

    @ti.kernel
    def tiles(x=In(F32, cells(["R", "C"], [1, 16])), y=Out(F32, cells(["R", "C"], [1, 16]))):
        ti.store_cell(y, ti.load_cell(x))

    fast = tiles.plan(tiles.config()).fast_grid()
    r, c = tiles.plan(tiles.config()).size_names.index("R"), tiles.plan(tiles.config()).size_names.index("C")
    values = [0, 0]
    values[r], values[c] = 5, 100
    assert fast(values) == (5, 7, 1)
    values[c] = 16 * 65536  # 65536 cells along axis 1: past the driver's y limit
    assert fast(values) is None


def test_a_tuned_one_chunk_entry_narrower_than_the_bucket_runs_the_defaults(fake_gpu, monkeypatch):
    """A tune entry (stale, or made without arrays) that names the one-chunk program with a chunk
    narrower than the call's size bucket must not run: that variant's launches are read against
    the defaults' plan, which has no one-cell limit, so the wider row would be left half written.
    The call warns and runs the defaults (the mutant: no bucket check in _prepare, no warning)."""
    from tileir.kernels import softmax as library_softmax

    # a fresh copy: no recordings from other tests of this process
    softmax = library_softmax.fresh()
    monkeypatch.setattr(KernelFn, "tuned_config",
                        lambda self, static, gpu, sizes=None: dict(static, max_tile=16, one_chunk=True))
    x, y = (torch.zeros(4, 100).as_subclass(OnGpu0) for _ in range(2))
    with pytest.warns(UserWarning, match="defaults run instead"), pytest.raises(ti.TileirError):
        softmax(x, y)  # the first call's full path refuses the CPU memory after preparing the variant
    recorded = [dict(key[0]) for key in softmax._progs]  # (configuration key, claims, checked)
    assert recorded and all(cfg["one_chunk"] == "False" and cfg["max_tile"] == "4096" for cfg in recorded)


def test_a_tuned_one_chunk_row_that_fills_its_chunk_records_the_width_as_a_constant(fake_gpu, monkeypatch):
    """A row exactly as wide as its one-chunk tile runs the program with the width recorded (no
    masks: layernorm 8192^2 measured 1.10x slower with it run-time); a narrower row of the same
    bucket, the run-time program. The mutants: the key without the exactness (the second size
    would reuse the constant-width variant, 128 recorded for a row of 112), the
    twin never made (no constant), its recordings not counted."""
    from tileir.kernels import softmax as library_softmax

    softmax = library_softmax.fresh()
    monkeypatch.setattr(KernelFn, "tuned_config",
                        lambda self, static, gpu, sizes=None: dict(static, max_tile=128, one_chunk=True))
    for cols in (128, 112, 128, 112):  # 112: a multiple of 16 too (the same stride and size claims)
        x, y = (torch.zeros(4, cols).as_subclass(OnGpu0) for _ in range(2))
        with pytest.raises(ti.TileirError):  # the full path refuses the CPU memory after preparing
            softmax(x, y)
    (site,) = softmax._sites.values()
    assert len(site.variants) == 2  # one per (bucket, exactly the bucket or not)
    (twin,) = softmax._full_twins.values()
    ((_, spec, _),) = list(twin._progs)
    assert spec[-1] == 128  # the width, recorded
    assert all(len(key[1]) < len(spec) for key in softmax._progs)  # the narrower row: run-time width
    assert softmax.compiled()["recordings"] == 2


def test_one_cell_bounds_a_dyn_dim_extent_too():
    from tileir.ir import DYN_DIM

    @ti.kernel
    def rows(x=In(F32, cells([DYN_DIM, DYN_DIM], [1, 16], along=[0, ti.FREE_AXIS], one_cell=[1])),
             y=ti.Shared(F32, [DYN_DIM, DYN_DIM])):
        ti.store_view(ti.partition_view(ti.array_view(y), [1, 16]), [ti.block_id(0), 0], ti.load_at(x, [0]))

    import numpy as np

    x, y = np.ones((3, 16), np.float32), np.zeros((3, 16), np.float32)
    rows.run_host(x, y)
    assert (y == 1).all()
    with pytest.raises(ti.TileirError, match="one cell"):
        rows.run_host(np.ones((3, 17), np.float32), np.zeros((3, 17), np.float32))


class TorchLauncher:
    """Stands in for torch._C._StaticCudaLauncher._launch_kernel: records each launch, or refuses
    (RuntimeError, as torch's AT_CUDA_DRIVER_CHECK raises) while ``refuse`` is set."""

    def __init__(self, refuse=False):
        self.calls, self.refuse = [], refuse

    def __call__(self, f, gx, gy, gz, warps, shmem, tys, slots, stream):
        self.calls.append(((gx, gy, gz), warps, tys, slots))
        if self.refuse:
            raise RuntimeError("CUDA driver error: invalid argument")


@pytest.fixture
def torch_launcher(fake_gpu, monkeypatch):
    """fake_gpu with torch's launcher present and the cubin naming a block of 4 warps."""
    launch_mod = sys.modules["tileir.runtime.launch"]
    fake = TorchLauncher()
    monkeypatch.setattr(launch_mod, "_torch_launcher", lambda: fake)
    monkeypatch.setattr(launch_mod, "warps_of", lambda cubin, kernel: 4)
    monkeypatch.setattr(launch_mod._bound, "device", 0, raising=False)

    def bind(device):  # as driver.bind leaves it: this thread bound this GPU last
        launch_mod._bound.device = device
        return True

    monkeypatch.setattr(launch_mod, "bind", bind)
    monkeypatch.setattr(launch_mod, "_launchers", type(launch_mod._launchers)())  # launchers made afresh
    arrays = _arrays(1000)
    _prime(arrays)
    (site,) = vadd._sites.values()
    for variant in site.variants.values():
        variant[0]._function_ints[0] = 1234
    return fake, arrays


def test_a_plain_call_goes_through_torchs_launcher_with_the_cubins_block(torch_launcher, fake_gpu):
    """Torch's launcher gets the cubin's warps (a tileiras kernel runs only with its own block or
    (1, 1, 1)), every slot as a 64-bit integer in a tuple, and the generated grid; the driver is not
    asked (the mutants: one warp, a list of slots, or both launchers launching)."""
    fake, arrays = torch_launcher
    vadd(*arrays)
    assert fake.calls == [((4, 1, 1), 4, "KKKK", (arrays[0].data_ptr(), arrays[1].data_ptr(), arrays[2].data_ptr(),
                                                  1000))]
    assert fake_gpu.launches == []


def test_a_refusal_by_torchs_launcher_launches_once_through_the_driver(torch_launcher, fake_gpu):
    """A refusal (nothing launched) falls back to cuda-bindings, which launches once and words any
    error; after three refusals the launcher stops asking torch's (the mutants: no fallback, a
    launch through both, asking forever)."""
    fake, arrays = torch_launcher
    fake.refuse = True
    for n in range(1, 6):
        vadd(*arrays)
        assert len(fake_gpu.launches) == n  # one launch per call, through the driver
    assert len(fake.calls) == 3


def test_a_waiting_call_and_an_oversized_grid_go_through_the_driver(torch_launcher, fake_gpu):
    """sync=True waits on the driver's stream (cuda-bindings' path); a grid whose product torch's
    launcher would overflow in 32 bits (and then launch nothing) is the driver's too."""
    fake, arrays = torch_launcher
    fake_gpu.cuStreamSynchronize = lambda stream: (0,)
    vadd(*arrays, sync=True)
    assert fake.calls == [] and len(fake_gpu.launches) == 1
    (site,) = vadd._sites.values()
    (variant,) = site.variants.values()
    variant[0].launch_ready(0, tuple(fake_gpu.launches[0][1]), (65536, 65535, 1), False)
    assert fake.calls == [] and fake_gpu.launches[-1][0] == (65536, 65535, 1)
