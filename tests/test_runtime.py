"""tileir.runtime: argument packing, launch refusals and the launch sequence against a fake driver;
the real device under @pytest.mark.gpu (skipped where tileir.runtime.available() is False)."""

from __future__ import annotations

import ctypes
import importlib
import struct
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from tileir import ir
from tileir.errors import TileirError
from tileir.runtime import Module, arrays, available, driver, launch

launch_mod = importlib.import_module("tileir.runtime.launch")
cu = pytest.importorskip("cuda.bindings.driver")
OK = cu.CUresult.CUDA_SUCCESS

gpu = pytest.mark.skipif(not available(), reason="no CUDA GPU here")


def raw(c) -> bytes:
    return ctypes.string_at(ctypes.addressof(c), ctypes.sizeof(c))


# ---- scalars ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype, value, ctype, bits", [
    ("f32", 1.5, ctypes.c_float, struct.pack("<f", 1.5)),
    ("f32", 3, ctypes.c_float, struct.pack("<f", 3.0)),
    ("f64", -0.1, ctypes.c_double, struct.pack("<d", -0.1)),
    ("f16", 1.0, ctypes.c_uint16, (0x3C00).to_bytes(2, "little")),
    ("f16", np.float16(-2.0), ctypes.c_uint16, (0xC000).to_bytes(2, "little")),
    ("bf16", 1.0, ctypes.c_uint16, (0x3F80).to_bytes(2, "little")),
    ("bf16", 1.00390625, ctypes.c_uint16, (0x3F80).to_bytes(2, "little")),  # rounds to nearest even
    ("f8E4M3FN", 1.0, ctypes.c_uint8, b"\x38"),
    ("f8E5M2", 1.0, ctypes.c_uint8, b"\x3c"),
    ("i64", -(2**40), ctypes.c_int64, struct.pack("<q", -(2**40))),
    ("i32", -1, ctypes.c_int32, struct.pack("<i", -1)),
    ("i32", 0xFFFFFFFF, ctypes.c_int32, struct.pack("<i", -1)),  # an unsigned pattern, signless
    ("i32", np.int64(7), ctypes.c_int32, struct.pack("<i", 7)),
    ("i16", 300, ctypes.c_int16, struct.pack("<h", 300)),
    ("i8", -128, ctypes.c_int8, struct.pack("<b", -128)),
    ("i1", True, ctypes.c_bool, b"\x01"),
    ("i1", np.bool_(False), ctypes.c_bool, b"\x00"),
    ("i1", 1, ctypes.c_bool, b"\x01"),
    ("f32", np.array(2.0, dtype=np.float32), ctypes.c_float, struct.pack("<f", 2.0)),  # 0-d array
])
def test_pack_scalar(dtype, value, ctype, bits):
    c = arrays.pack_scalar(value, dtype)
    assert type(c) is ctype
    assert raw(c) == bits


def test_pack_bf16_matches_ml_dtypes():
    for v in (0.1, -3.3e38, 65504.0, 1e-40):
        want = np.asarray(v, dtype=ml_dtypes.bfloat16).view(np.uint16)
        assert arrays.pack_scalar(v, "bf16").value == int(want)


@pytest.mark.parametrize("dtype, value, words", [
    ("i32", 1.5, "integer"), ("i32", 2**32, "does not fit"), ("i8", -129, "does not fit"),
    ("f32", "1.0", "number"), ("f32", True, "number"), ("i1", 2, "True/False"),
    ("i4", 1, "cannot be passed"), ("f32", None, "number"),
])
def test_pack_scalar_refusals(dtype, value, words):
    with pytest.raises(TileirError, match=words) as e:
        arrays.pack_scalar(value, dtype, kernel="k", pos=3)
    assert "kernel 'k'" in str(e.value) and "argument 3" in str(e.value)


# ---- arrays ----------------------------------------------------------------------------------


class FakeCai:
    def __init__(self, ptr, shape, typestr="<f4", strides=None):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape, "typestr": typestr,
                                         "strides": strides, "version": 3}


class FakeDlpackCuda:
    """A numpy array's DLPack capsule presented as if it were on CUDA device 0."""

    def __init__(self, a, device=(2, 0)):
        self.a, self.device = a, device

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.device


class FakeTorchTensor:
    __module__ = "torch.fake"

    def __init__(self, ptr, cuda=True, contiguous=True, dtype="torch.float32", index=0):
        self.ptr, self.is_cuda, self.contig, self.dtype = ptr, cuda, contiguous, dtype
        self.device = type("Dev", (), {"index": index})()

    def data_ptr(self):
        return self.ptr

    def is_contiguous(self):
        return self.contig

    def get_device(self):
        return self.device.index if self.is_cuda else -1

    def record_stream(self, stream):
        self.recorded = [*getattr(self, "recorded", []), stream]


def test_prepare_host_and_device_arrays():
    a = np.zeros(8, np.float32)
    assert isinstance(arrays.prepare(a, "f32", True), arrays.HostArg)
    d = arrays.prepare(FakeCai(0xDEAD00, (8,)), "f32", True)
    assert isinstance(d, arrays.DeviceArg) and d.ptr == 0xDEAD00
    assert arrays.prepare(FakeCai(0x100, (2, 3), strides=(12, 4)), "f32", True).ptr == 0x100
    assert arrays.prepare(FakeTorchTensor(0x200), "f32", True).ptr == 0x200
    assert arrays.prepare(cu.CUdeviceptr(0x300), "f32", True).ptr == 0x300
    b = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert arrays.prepare(FakeDlpackCuda(b), "i32", True).ptr == b.ctypes.data
    assert arrays.prepare(FakeDlpackCuda(b[1:]), "i32", True).ptr == b.ctypes.data + 16  # offset kept
    # signless integers and bytes for i1
    assert isinstance(arrays.prepare(np.zeros(4, np.uint32), "i32", True), arrays.HostArg)
    assert isinstance(arrays.prepare(np.zeros(4, np.bool_), "i1", True), arrays.HostArg)
    assert isinstance(arrays.prepare(np.zeros(4, ml_dtypes.bfloat16), "bf16", True), arrays.HostArg)


@pytest.mark.parametrize("arg", [
    np.zeros((4, 4), np.float32)[:, 1],
    np.zeros((4, 4), np.float32).T,
    FakeCai(0x100, (2, 3), strides=(4, 8)),
    FakeTorchTensor(0x100, contiguous=False),
    FakeDlpackCuda(np.zeros((4, 4), np.float32)[:, ::2]),
])
def test_non_contiguous_is_refused(arg):
    with pytest.raises(TileirError, match="not contiguous") as e:
        arrays.prepare(arg, "f32", True, kernel="k", pos=1)
    assert "contiguous" in (e.value.fix or "") and "argument 1" in str(e.value)


@pytest.mark.parametrize("arg, dtype, words", [
    (object(), "f32", "cannot take"),
    ("text", "f32", "cannot take"),
    (3.0, "f32", "takes an array"),
    (np.zeros(4, np.float64), "f32", "holds float64"),
    (FakeCai(0x100, (4,), typestr="<i4"), "f32", "holds int32"),
    (FakeTorchTensor(0x100, dtype="torch.float16"), "f32", "holds float16"),
    (FakeTorchTensor(0x100, cuda=False), "f32", "on the CPU"),
    (FakeDlpackCuda(np.zeros(4, np.float32), device=(1, 0)), "f32", "device type 1"),
])
def test_pointer_refusals(arg, dtype, words):
    with pytest.raises(TileirError, match=words) as e:
        arrays.prepare(arg, dtype, True, kernel="k", pos=2)
    assert "kernel 'k'" in str(e.value) and "argument 2" in str(e.value)


def test_arrays_on_other_gpus_are_accepted_and_say_which():
    assert arrays.prepare(FakeTorchTensor(0x100, index=1), "f32", True).device == 1
    assert arrays.prepare(FakeDlpackCuda(np.zeros(4, np.float32), device=(2, 3)), "f32", True).device == 3


def test_a_launch_refuses_arrays_on_two_gpus_naming_both(fake):
    drv = fake(nparams=2, param_sizes=[8, 8])
    with pytest.raises(TileirError, match="argument 0 is on cuda:0 and argument 1 on cuda:1") as e:
        launch(b"cubin", "k", (1,), [FakeTorchTensor(0x100), FakeTorchTensor(0x200, index=1)],
               [("f32", True), ("f32", True)])
    assert "to('cuda:0')" in e.value.fix and drv.launches == []
    launch(b"cubin", "k", (1,), [FakeTorchTensor(0x100, index=1), FakeTorchTensor(0x200, index=1)],
           [("f32", True), ("f32", True)])
    assert len(drv.launches) == 1


def test_a_read_only_host_output_is_refused(fake):
    drv = fake(nparams=1, param_sizes=[8])
    x = np.zeros(4, np.float32)
    x.setflags(write=False)
    with pytest.raises(TileirError, match="read-only, and the kernel writes it") as e:
        launch_mod.Launcher(b"cubin", "k", [("f32", True)], written={0})((1,), [x])
    assert "writable" in e.value.fix and drv.launches == []
    launch_mod.Launcher(b"cubin", "k", [("f32", True)], written=set())((1,), [x], sync=True)  # only read: fine
    assert len(drv.launches) == 1


def test_value_parameter_refuses_an_array():
    with pytest.raises(TileirError, match="value, not a pointer"):
        arrays.prepare(np.zeros(3, np.float32), "f32", False, kernel="k", pos=0)


# ---- grid, params, streams, the argument count ------------------------------------------------


def test_grid():
    assert launch_mod.normalize_grid(5) == (5, 1, 1)
    assert launch_mod.normalize_grid((2, 3)) == (2, 3, 1)
    assert launch_mod.normalize_grid([2, 3, 4]) == (2, 3, 4)
    assert launch_mod.normalize_grid((np.int64(7),)) == (7, 1, 1)
    for bad in ((), (1, 2, 3, 4), 0, -1, 1.5, True, (1, 0), (1, 70000), "4", (2**31,)):
        with pytest.raises(TileirError, match="grid") as e:
            launch_mod.normalize_grid(bad, kernel="k")
        assert "kernel 'k'" in str(e.value)


def test_params_accept_kparams():
    assert launch_mod.normalize_params([ir.KParam("f32"), ("i32", False)]) == [("f32", True), ("i32", False)]
    with pytest.raises(TileirError, match="parameter 0"):
        launch_mod.normalize_params(["f32"])


def test_stream_handles():
    sh = launch_mod.stream_handle
    assert sh(None) == 0 and sh(12345) == 12345 and sh(cu.CUstream(99)) == 99
    assert sh(type("TorchStream", (), {"cuda_stream": 77})()) == 77
    assert sh(type("CupyStream", (), {"ptr": 88})()) == 88
    assert sh(type("CoreStream", (), {"__cuda_stream__": lambda self: (0, 66)})()) == 66
    for bad in ("0", 1.0, True, -1):
        with pytest.raises(TileirError, match="stream"):
            sh(bad, kernel="k")


def test_launch_refusals_before_any_device_work():
    params = [("f32", True), ("f32", False)]
    x = np.zeros(4, np.float32)
    with pytest.raises(TileirError, match=r"takes 2 argument\(s\), got 1") as e:
        launch(b"", "vadd", (1,), [x], params)
    assert "kernel 'vadd'" in str(e.value)
    with pytest.raises(TileirError, match="grid"):
        launch(b"", "vadd", (0,), [x, 1.0], params)
    with pytest.raises(TileirError, match="argument 1"):
        launch(b"", "vadd", (1,), [x, object()], params)
    with pytest.raises(TileirError, match="argument 0.*not contiguous"):
        launch(b"", "vadd", (1,), [np.zeros((4, 4), np.float32).T, 1.0], params)


# ---- the driver wrappers without a GPU --------------------------------------------------------


def test_available_is_a_bool_and_never_raises():
    assert available() in (True, False)


@pytest.mark.skipif(available(), reason="checks the no-GPU refusals")
def test_without_a_gpu_launch_refuses_clearly():
    with pytest.raises(TileirError, match="no CUDA GPU"):
        driver.context()
    with pytest.raises(TileirError, match="no CUDA GPU"):
        launch(b"\x7fELF", "k", (1,), [np.zeros(4, np.float32)], [("f32", True)])
    with pytest.raises(TileirError, match="no CUDA GPU"):
        Module(b"\x7fELF", "k")


def test_check():
    assert driver.check((OK,), "x") is None
    assert driver.check((OK, 5), "x") == 5
    assert driver.check((OK, 5, 6), "x") == (5, 6)
    with pytest.raises(TileirError, match=r"running the kernel failed: CUDA_ERROR_ASSERT.*assert") as e:
        driver.check((cu.CUresult.CUDA_ERROR_ASSERT,), "running the kernel", kernel="k")
    assert e.value.kernel == "k"
    with pytest.raises(TileirError, match="CUDA_ERROR_ILLEGAL_ADDRESS"):
        driver.check((cu.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, None), "y")


# ---- the launch sequence against a fake driver -------------------------------------------------


class FakeDriver:
    """Enough of cuda.bindings.driver to run launch(): memory in dicts, a Python 'kernel'."""

    CUresult = cu.CUresult
    CUstream = cu.CUstream

    def __init__(self, kernel, nparams=0, param_sizes=None, launch_error=OK, sync_error=OK):
        self.kernel, self.nparams, self.param_sizes = kernel, nparams, param_sizes
        self.launch_error, self.sync_error = launch_error, sync_error
        self.mem, self.next, self.calls, self.launches = {}, 0x10000, [], []

    def cuMemAlloc(self, n):
        p, self.next = self.next, self.next + n + 256
        self.mem[p] = bytearray(n)
        return OK, cu.CUdeviceptr(p)

    def cuMemFree(self, p):
        del self.mem[int(p)]
        return (OK,)

    def cuMemcpyHtoDAsync(self, dst, src, n, stream):
        self.mem[int(dst)][:] = ctypes.string_at(src, n)
        return (OK,)

    def cuMemcpyDtoHAsync(self, dst, src, n, stream):
        ctypes.memmove(dst, bytes(self.mem[int(src)]), n)
        return (OK,)

    def cuStreamSynchronize(self, stream):
        self.calls.append(("sync", int(stream)))
        return (self.sync_error,)

    def cuFuncGetParamInfo(self, f, i):
        if self.param_sizes is None:
            return cu.CUresult.CUDA_ERROR_NOT_SUPPORTED, 0, 0
        if i >= len(self.param_sizes):
            return cu.CUresult.CUDA_ERROR_INVALID_VALUE, 0, 0
        return OK, 8 * i, self.param_sizes[i]

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shmem, stream, kernel_params, extra):
        n = self.nparams
        ptrs = (ctypes.c_void_p * n).from_address(kernel_params) if n else []
        slots = [ctypes.string_at(p, 8) for p in ptrs]
        self.launches.append({"grid": (gx, gy, gz), "block": (bx, by, bz), "shmem": shmem,
                              "stream": int(stream), "slots": slots, "extra": extra})
        if self.launch_error == OK:
            self.kernel(self, slots)
        return (self.launch_error,)


class FakeModule:
    def function(self, name):
        return "fn:" + name


@pytest.fixture
def fake(monkeypatch):
    def make(kernel=lambda drv, slots: None, **kw):
        drv = FakeDriver(kernel, **kw)
        monkeypatch.setattr(driver, "cu", lambda: drv)
        monkeypatch.setattr(launch_mod, "cu", lambda: drv)
        monkeypatch.setattr(launch_mod, "bind", lambda device: True)
        monkeypatch.setattr(launch_mod, "rebind", lambda device: True)
        monkeypatch.setattr(launch_mod, "module_for", lambda cubin, kernel, device=0: FakeModule())
        monkeypatch.setattr(launch_mod, "current_torch_stream", lambda device: 0)
        monkeypatch.setattr(launch_mod, "pointer_device", lambda ptr: 0)
        monkeypatch.setattr(launch_mod, "_torch_stream_of", lambda stream, handle, device: ("stream", handle))
        return drv
    return make


def add_scalar_in_python(drv, slots):
    """x[i] += s over the host copy: slot 0 a device pointer, slot 1 an f32 in its low 4 bytes."""
    ptr = struct.unpack("<Q", slots[0])[0]
    (s,) = struct.unpack("<f", slots[1][:4])
    buf = np.frombuffer(drv.mem[ptr], dtype=np.float32)
    drv.mem[ptr][:] = (buf + np.float32(s)).tobytes()


def test_launch_copies_host_arrays_in_and_back(fake):
    drv = fake(add_scalar_in_python, nparams=2, param_sizes=[8, 4])
    x = np.arange(6, dtype=np.float32)
    launch(b"cubin", "add_scalar", (3,), [x, 2.5], [("f32", True), ("f32", False)], sync=False)
    np.testing.assert_array_equal(x, np.arange(6, dtype=np.float32) + 2.5)
    (call,) = drv.launches
    assert call["grid"] == (3, 1, 1) and call["block"] == (1, 1, 1) and call["shmem"] == 0
    assert call["slots"][1] == struct.pack("<f", 2.5) + b"\0" * 4  # zero-padded slot
    assert drv.mem == {}  # freed
    assert ("sync", 0) in drv.calls  # host arrays force a sync even with sync=False


def test_launch_passes_device_pointers_and_streams(fake):
    drv = fake(nparams=3, param_sizes=[8, 8, 2])
    t = FakeTorchTensor(0xDEF0, dtype="torch.int32")
    launch(b"cubin", "k", (2, 3), [FakeCai(0xABC0, (4,)), t, 1.0],
           [("f32", True), ("i32", True), ("f16", False)], stream=type("S", (), {"cuda_stream": 42})(), sync=False)
    assert t.recorded == [("stream", 42)]  # on a stream other than torch's current one: kept alive there
    (call,) = drv.launches
    assert call["grid"] == (2, 3, 1) and call["stream"] == 42
    assert [struct.unpack("<Q", s)[0] for s in call["slots"][:2]] == [0xABC0, 0xDEF0]
    assert call["slots"][2] == (0x3C00).to_bytes(2, "little") + b"\0" * 6
    assert drv.calls == []  # device arrays only and sync=False: no synchronisation
    launch(b"cubin", "k", 1, [FakeCai(0xABC0, (4,)), FakeTorchTensor(0xDEF0, dtype="torch.int32"), 1.0],
           [("f32", True), ("i32", True), ("f16", False)])
    assert drv.calls == [("sync", 0)]


def test_launch_with_no_parameters(fake):
    drv = fake()
    launch(b"cubin", "k", (1,), [], [])
    assert drv.launches[0]["slots"] == []


def test_param_info_mismatch_is_refused(fake):
    fake(nparams=2, param_sizes=[8, 8, 8])
    with pytest.raises(TileirError, match=r"entry takes 3 parameter\(s\) of sizes \[8, 8, 8\]"):
        launch(b"cubin", "k", (1,), [np.zeros(2, np.float32), 1.0], [("f32", True), ("f32", False)])


def test_param_info_size_mismatch_is_refused(fake):
    fake(nparams=2, param_sizes=[8, 8])
    with pytest.raises(TileirError, match=r"sizes \[8, 4\]"):
        launch(b"cubin", "k", (1,), [np.zeros(2, np.float32), 1.0], [("f32", True), ("f32", False)])


def test_device_assert_surfaces_at_the_sync_and_memory_is_freed(fake):
    drv = fake(nparams=1, sync_error=cu.CUresult.CUDA_ERROR_ASSERT)
    x = np.ones(4, np.float32)
    with pytest.raises(TileirError, match="CUDA_ERROR_ASSERT.*An assert in the kernel failed") as e:
        launch(b"cubin", "checker", (1,), [x], [("f32", True)])
    assert "kernel 'checker'" in str(e.value)
    assert drv.mem == {}
    np.testing.assert_array_equal(x, 1.0)  # nothing copied back


def test_launch_error_is_reported(fake):
    drv = fake(nparams=1, launch_error=cu.CUresult.CUDA_ERROR_INVALID_VALUE)
    with pytest.raises(TileirError, match=r"launching on grid \(1, 1, 1\).*CUDA_ERROR_INVALID_VALUE"):
        launch(b"cubin", "k", (1,), [np.ones(4, np.float32)], [("f32", True)])
    assert drv.mem == {}


# ---- on the GPU ----------------------------------------------------------------------------------


BLOCK = 1024


def add_scalar_kernel() -> ir.Kernel:
    """x[i] += s for one block of 1024 f32 per tile block (x is a pointer, s a value)."""
    from tileir.ir import Arg, PtrTo, Tile, tile
    from tileir.ir import Val as V

    i32, ii, ff = tile((), "i32"), tile((BLOCK,), "i32"), tile((BLOCK,), "f32")
    p, p0, p1 = Tile((BLOCK,), PtrTo("f32")), Tile((), PtrTo("f32")), Tile((1,), PtrTo("f32"))
    s0, s1 = tile((), "f32"), tile((1,), "f32")
    body = (ir.MakeTok(0), ir.BlockIds(1, 2, 3), ir.IotaTile(4, ii), ir.ConstInt(5, i32, BLOCK),
            ir.MulInt(6, i32, V(1), V(5)), ir.Reshape(7, V(6), i32, tile((1,), "i32")),
            ir.Broadcast(8, V(7), tile((1,), "i32"), ii), ir.AddInt(9, ii, V(8), V(4)),
            ir.Reshape(10, Arg(0), p0, p1), ir.Broadcast(11, V(10), p1, p), ir.Offset(12, V(11), V(9), p, ii),
            ir.LoadPtr(13, 14, V(12), None, None, V(0), p, None, ff),
            ir.Reshape(15, Arg(1), s0, s1), ir.Broadcast(16, V(15), s1, ff),
            ir.FloatBin(17, "addf", ff, V(13), V(16)),
            ir.StorePtr(18, V(12), V(17), None, V(14), p, None, ff), ir.Ret())
    return ir.Kernel("add_scalar", (ir.KParam("f32"), ir.KParam("f32", False)), body=body)


def fill_kernel(dtype: str) -> ir.Kernel:
    """x[i] = s over one block of 1024 (x a pointer to dtype, s a dtype value): the packing, end to end."""
    from tileir.ir import Arg, PtrTo, Tile, tile
    from tileir.ir import Val as V

    i32, ii, tt = tile((), "i32"), tile((BLOCK,), "i32"), tile((BLOCK,), dtype)
    p, p0, p1 = Tile((BLOCK,), PtrTo(dtype)), Tile((), PtrTo(dtype)), Tile((1,), PtrTo(dtype))
    body = (ir.MakeTok(0), ir.BlockIds(1, 2, 3), ir.IotaTile(4, ii), ir.ConstInt(5, i32, BLOCK),
            ir.MulInt(6, i32, V(1), V(5)), ir.Reshape(7, V(6), i32, tile((1,), "i32")),
            ir.Broadcast(8, V(7), tile((1,), "i32"), ii), ir.AddInt(9, ii, V(8), V(4)),
            ir.Reshape(10, Arg(0), p0, p1), ir.Broadcast(11, V(10), p1, p), ir.Offset(12, V(11), V(9), p, ii),
            ir.Reshape(13, Arg(1), tile((), dtype), tile((1,), dtype)),
            ir.Broadcast(14, V(13), tile((1,), dtype), tt),
            ir.StorePtr(15, V(12), V(14), None, V(0), p, None, tt), ir.Ret())
    return ir.Kernel(f"fill_{dtype}", (ir.KParam(dtype), ir.KParam(dtype, False)), body=body)


FILLS = [("f32", np.float32, -1.25), ("f64", np.float64, 1e300), ("f16", np.float16, 0.333),
         ("bf16", ml_dtypes.bfloat16, -3.0e38), ("i64", np.int64, -(2**40) - 3), ("i32", np.int32, -7),
         ("i16", np.int16, 12345), ("i8", np.int8, -100), ("i1", np.bool_, True)]


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("dtype, np_t, value", FILLS)
def test_gpu_scalar_packing_end_to_end(dtype, np_t, value):
    from tileir.assemble import assemble, gpu_name_of_device
    from tileir.bytecode import encode_kernel

    k = fill_kernel(dtype)
    cubin = assemble(encode_kernel(k), gpu_name_of_device(), kernel=k.name)
    x = np.zeros(2 * BLOCK, dtype=np_t)
    launch(cubin, k.name, (2,), [x, value], k.params)
    np.testing.assert_array_equal(x, np.full(2 * BLOCK, value, dtype=np_t))


@pytest.fixture
def add_scalar_cubin():
    from tileir.assemble import assemble, gpu_name_of_device
    from tileir.bytecode import encode_kernel

    return assemble(encode_kernel(add_scalar_kernel()), gpu_name_of_device(), kernel="add_scalar")


PARAMS = [("f32", True), ("f32", False)]


@pytest.mark.gpu
@gpu
def test_gpu_host_numpy_round_trip(add_scalar_cubin):
    x = np.arange(4 * BLOCK, dtype=np.float32)
    launch(add_scalar_cubin, "add_scalar", (4,), [x, 2.5], PARAMS)
    np.testing.assert_array_equal(x, np.arange(4 * BLOCK, dtype=np.float32) + 2.5)
    launch(add_scalar_cubin, "add_scalar", (4,), [x, -2.5], PARAMS)  # the module is cached
    np.testing.assert_array_equal(x, np.arange(4 * BLOCK, dtype=np.float32))


@pytest.mark.gpu
@gpu
def test_gpu_torch_tensor_in_place(add_scalar_cubin):
    torch = pytest.importorskip("torch")
    x = torch.arange(2 * BLOCK, dtype=torch.float32, device="cuda")
    launch(add_scalar_cubin, "add_scalar", (2,), [x, 1.0], PARAMS)
    s = torch.cuda.Stream()
    launch(add_scalar_cubin, "add_scalar", (2,), [x, 1.0], PARAMS, stream=s)
    assert torch.equal(x.cpu(), torch.arange(2 * BLOCK, dtype=torch.float32) + 2)
    with pytest.raises(TileirError, match="not contiguous"):
        launch(add_scalar_cubin, "add_scalar", (1,), [x.view(2, BLOCK).t(), 1.0], PARAMS)


@pytest.mark.gpu
@gpu
def test_gpu_cupy_array(add_scalar_cubin):
    cupy = pytest.importorskip("cupy")
    x = cupy.zeros(BLOCK, dtype=cupy.float32)
    launch(add_scalar_cubin, "add_scalar", (1,), [x, 4.0], PARAMS)
    assert float(x.sum()) == 4.0 * BLOCK


@pytest.mark.gpu
@gpu
def test_gpu_param_info_catches_a_wrong_signature(add_scalar_cubin):
    if not hasattr(cu, "cuFuncGetParamInfo"):
        pytest.skip("cuda-bindings has no cuFuncGetParamInfo")
    with pytest.raises(TileirError, match="entry takes 2 parameter"):
        launch(add_scalar_cubin, "add_scalar", (1,), [np.zeros(BLOCK, np.float32)], [("f32", True)])


@pytest.mark.gpu
@gpu
def test_gpu_module_and_missing_function(add_scalar_cubin):
    m = Module(add_scalar_cubin, "add_scalar")
    assert m.function("add_scalar") is m.function("add_scalar")
    with pytest.raises(TileirError, match="CUDA_ERROR_NOT_FOUND"):
        m.function("nope")
    with pytest.raises(TileirError, match="CUDA_ERROR_NOT_FOUND"):
        m.global_ptr("nope")
    m.unload()
    m.unload()


@pytest.mark.gpu
@gpu
def test_gpu_wrong_target_cubin_is_explained():
    from tileir.assemble import assemble, gpu_name_of_device
    from tileir.bytecode import encode_kernel

    other = "sm_80" if gpu_name_of_device() != "sm_80" else "sm_90"
    cubin = assemble(encode_kernel(add_scalar_kernel()), other, kernel="add_scalar")
    # a separate process: a failed load must not leave this one in an odd state
    code = ("import sys, numpy as np; from tileir.runtime import launch\n"
            "try:\n"
            f"    launch(sys.stdin.buffer.read(), 'add_scalar', (1,), [np.zeros({BLOCK}, np.float32), 1.0],"
            " [('f32', True), ('f32', False)])\n"
            "except Exception as e: print(type(e).__name__, e)\n")
    r = subprocess.run([sys.executable, "-c", code], input=cubin, capture_output=True, check=True)
    out = r.stdout.decode()
    # sm_80 code may still load on a newer GPU (SASS of an older family can run); only a refusal is checked
    if out.strip():
        assert out.startswith("TileirError") and "kernel 'add_scalar'" in out


def test_the_fast_lane_takes_tensors_seen_before_and_hands_the_rest_back(fake):
    """A second call with tensors of a type and format that passed goes straight to the slots; a
    tensor that is now on the CPU, not contiguous, misaligned or of another format takes the full
    path again, which refuses it in its own words."""
    drv = fake(nparams=2, param_sizes=[8, 4])
    run = launch_mod.Launcher(b"cubin", "k", [("f32", True), ("f32", False)])
    calls = []
    real = run._fast_values
    run._fast_values = lambda args: calls.append(real(args)) or calls[-1]
    run((1,), [FakeTorchTensor(0x1000), 1.5], sync=False)
    assert calls == []  # the first call is checked in full (the parameter sizes too)
    run((2,), [FakeTorchTensor(0x2000), 2.5], sync=False)
    assert calls[-1] is not None and calls[-1][0] == 0 and calls[-1][1][0] == 0x2000  # (device, slots)
    assert drv.launches[-1]["slots"] == [struct.pack("<Q", 0x2000), struct.pack("<f", 2.5) + b"\0" * 4]
    assert drv.launches[-1]["grid"] == (2, 1, 1)
    run((2,), [FakeTorchTensor(0x2000), 2.5], sync=False)  # the same buffers and grid again
    assert drv.launches[-1]["slots"] == drv.launches[-2]["slots"] and drv.launches[-1]["grid"] == (2, 1, 1)
    run([3, 2], [FakeTorchTensor(0x5000), -1.0], sync=False)  # another buffer, scalar and grid: no stale slot
    assert drv.launches[-1]["slots"] == [struct.pack("<Q", 0x5000), struct.pack("<f", -1.0) + b"\0" * 4]
    assert drv.launches[-1]["grid"] == (3, 2, 1)
    g = [4]
    run(tuple(g), [FakeTorchTensor(0x5000), -1.0], sync=False)
    g[0] = 5  # a list the caller changes is never kept: the launch follows it
    run(g, [FakeTorchTensor(0x5000), -1.0], sync=False)
    assert drv.launches[-1]["grid"] == (5, 1, 1)
    run((5,), [FakeTorchTensor(0x5000), 7.0], sync=False)  # only the scalar changes
    assert drv.launches[-1]["slots"][1] == struct.pack("<f", 7.0) + b"\0" * 4
    with pytest.raises(TileirError, match="must be an int"):
        run((5.0,), [FakeTorchTensor(0x5000), 7.0], sync=False)  # equal to the kept grid, and still refused
    for bad, words in ((FakeTorchTensor(0x3000, cuda=False), "on the CPU"),
                       (FakeTorchTensor(0x3000, contiguous=False), "not contiguous"),
                       (FakeTorchTensor(0x3008), "not 16-byte aligned"),
                       (FakeTorchTensor(0x3000, dtype="torch.float16"), "holds float16")):
        with pytest.raises(TileirError, match=words):
            run((1,), [bad, 1.0], sync=False)
        assert calls[-1] is None
    with pytest.raises(TileirError, match="value, not a pointer"):
        run((1,), [FakeTorchTensor(0x3000), FakeTorchTensor(0x4000)], sync=False)
    assert len(drv.launches) == 7
