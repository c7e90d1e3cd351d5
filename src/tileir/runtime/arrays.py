"""Launch arguments turned into what a kernel takes: device pointers and packed scalars.

A pointer parameter takes a device array (``__cuda_array_interface__``, a torch CUDA tensor,
DLPack on a CUDA device, or a raw ``CUdeviceptr``), passed as its pointer with no copy, or a host
``numpy.ndarray``, which is copied to the GPU before the launch and back into the same array after
it. A value parameter takes a Python or numpy number, packed in the parameter's format.

Everything except ``HostStaging`` is plain Python and runs without a GPU.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from ..errors import TileirError

# ---------------------------------------------------------------------------------------------
# Scalars

_INT_BITS = {"i64": 64, "i32": 32, "i16": 16, "i8": 8}
_INT_CTYPES = {"i64": ctypes.c_int64, "i32": ctypes.c_int32, "i16": ctypes.c_int16, "i8": ctypes.c_int8}
_FLOAT_CTYPES = {"f64": ctypes.c_double, "f32": ctypes.c_float}
# Narrow floats travel as their bit pattern, rounded by ml_dtypes (nearest even).
_NARROW_FLOATS = {
    "f16": (np.float16, ctypes.c_uint16, np.uint16),
    "bf16": (ml_dtypes.bfloat16, ctypes.c_uint16, np.uint16),
    "f8E4M3FN": (ml_dtypes.float8_e4m3fn, ctypes.c_uint8, np.uint8),
    "f8E5M2": (ml_dtypes.float8_e5m2, ctypes.c_uint8, np.uint8),
}
SCALAR_DTYPES = tuple(_FLOAT_CTYPES) + tuple(_NARROW_FLOATS) + tuple(_INT_CTYPES) + ("i1",)


def _where(pos: int | None) -> str | None:
    return None if pos is None else f"argument {pos}"


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_bool(v) -> bool:
    return isinstance(v, (bool, np.bool_))


def _is_real(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def pack_scalar(value, dtype: str, *, kernel: str | None = None, pos: int | None = None):
    """``value`` as the ctypes object a by-value parameter of format ``dtype`` takes."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    where = _where(pos)
    if dtype in _FLOAT_CTYPES or dtype in _NARROW_FLOATS:
        if not _is_real(value):
            raise TileirError(f"a {dtype} value parameter takes a number, not {type(value).__name__}.",
                              kernel=kernel, what=where)
        if dtype in _FLOAT_CTYPES:
            return _FLOAT_CTYPES[dtype](float(value))
        np_t, c_t, bits_t = _NARROW_FLOATS[dtype]
        return c_t(int(np.asarray(float(value), dtype=np_t).view(bits_t)))
    if dtype in _INT_CTYPES:
        if not (_is_int(value) or _is_bool(value)):
            raise TileirError(f"an {dtype} value parameter takes an integer, not {type(value).__name__} "
                              f"{value!r}.", kernel=kernel, what=where, fix="int(x)")
        v, bits = int(value), _INT_BITS[dtype]
        if not -(1 << (bits - 1)) <= v < (1 << bits):
            raise TileirError(f"{v} does not fit in {dtype} (signed {-(1 << (bits - 1))}..{(1 << (bits - 1)) - 1}, "
                              f"or an unsigned pattern up to {(1 << bits) - 1}).", kernel=kernel, what=where)
        if v >= 1 << (bits - 1):  # an unsigned pattern: Tile IR integers are signless
            v -= 1 << bits
        return _INT_CTYPES[dtype](v)
    if dtype == "i1":
        if not (_is_bool(value) or (_is_int(value) and int(value) in (0, 1))):
            raise TileirError(f"an i1 value parameter takes True/False (or 0/1), not {value!r}.",
                              kernel=kernel, what=where)
        return ctypes.c_bool(bool(value))
    raise TileirError(f"a value parameter of format {dtype!r} cannot be passed from the host; the formats "
                      f"that can are {', '.join(SCALAR_DTYPES)}.", kernel=kernel, what=where)


# ---------------------------------------------------------------------------------------------
# Arrays

@dataclass
class DeviceArg:
    """An argument already on the GPU: its pointer, whatever must stay alive with it, and the GPU
    it lives on (None: ask the driver about the pointer when it matters)."""

    ptr: int
    keep: Any = None  # the array itself, or its owner: anything
    device: int | None = None


@dataclass
class HostArg:
    """A host numpy array, to be copied in before the launch and out after it."""

    array: np.ndarray


# numpy/torch/ml_dtypes dtype names -> the pointee formats each may stand for. Integers are
# signless in Tile IR, so uint and int of a width are one; i1 lives in a byte in memory.
_ARRAY_FORMATS = {
    "float64": {"f64"}, "float32": {"f32", "tf32"}, "float16": {"f16"}, "half": {"f16"},
    "bfloat16": {"bf16"}, "float8_e4m3fn": {"f8E4M3FN"}, "float8_e5m2": {"f8E5M2"},
    "float8_e8m0fnu": {"f8E8M0FNU"},
    "int64": {"i64"}, "uint64": {"i64"}, "int32": {"i32"}, "uint32": {"i32"},
    "int16": {"i16"}, "uint16": {"i16"}, "int8": {"i8", "i1"}, "uint8": {"i8", "i1"}, "bool": {"i1", "i8"},
}
_CHECKED_FORMATS = set().union(*_ARRAY_FORMATS.values())
_NP_FOR = {"f64": "float64", "f32": "float32", "tf32": "float32", "f16": "float16", "bf16": "ml_dtypes.bfloat16",
           "f8E4M3FN": "ml_dtypes.float8_e4m3fn", "f8E5M2": "ml_dtypes.float8_e5m2",
           "f8E8M0FNU": "ml_dtypes.float8_e8m0fnu", "i64": "int64", "i32": "int32", "i16": "int16", "i8": "int8",
           "i1": "bool"}


def _check_format(array_dtype: str | None, dtype: str, kernel, pos) -> None:
    if array_dtype is None or dtype not in _CHECKED_FORMATS:
        return
    allowed = _ARRAY_FORMATS.get(array_dtype)
    if allowed is not None and dtype not in allowed:
        raise TileirError(f"this parameter points to {dtype} elements but the array holds {array_dtype}.",
                          kernel=kernel, what=_where(pos), fix=f"convert the array to {_NP_FOR[dtype]}")


def _c_contiguous(shape, strides_bytes, itemsize) -> bool:
    expect = itemsize
    for n, s in zip(reversed(shape), reversed(strides_bytes)):
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


def _not_contiguous(kernel, pos, fix=".contiguous()") -> TileirError:
    return TileirError("this array is not contiguous (row-major, no gaps); a kernel reads a pointer parameter "
                       "as one dense block.", kernel=kernel, what=_where(pos), fix=fix)


def _torch_arg(t, dtype, kernel, pos, strided_ok=False) -> DeviceArg:
    if not t.is_cuda:
        raise TileirError("this torch tensor is on the CPU; a pointer parameter takes a CUDA tensor or a numpy array.",
                          kernel=kernel, what=_where(pos), fix="t.cuda() (or t.numpy(), or TILEIR_INTERPRET=1 to run "
                          "on the host reference)")
    if not strided_ok and not t.is_contiguous():
        raise _not_contiguous(kernel, pos)
    _check_format(str(t.dtype).rpartition(".")[2], dtype, kernel, pos)
    return DeviceArg(int(t.data_ptr()), t, t.get_device())


def _cai_arg(obj, dtype, kernel, pos, strided_ok=False) -> DeviceArg:
    cai = obj.__cuda_array_interface__
    if cai.get("mask") is not None:
        raise TileirError("masked arrays (__cuda_array_interface__ with a mask) are not supported.",
                          kernel=kernel, what=_where(pos))
    try:
        npd = np.dtype(cai["typestr"])
    except TypeError:
        npd = None
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if not strided_ok and strides is not None and npd is not None and \
            not _c_contiguous(shape, strides, npd.itemsize):
        raise _not_contiguous(kernel, pos, fix=".contiguous() / cupy.ascontiguousarray(a)")
    _check_format(npd.name if npd is not None else None, dtype, kernel, pos)
    dev = getattr(getattr(obj, "device", None), "id", None)  # cupy says; others: the driver, when asked
    return DeviceArg(int(cai["data"][0] or 0), obj, dev if isinstance(dev, int) else None)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_CUDA = 2
_DL_CODES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 6: "bool"}


def _dlpack_arg(obj, dtype, kernel, pos, stream: int, strided_ok=False) -> DeviceArg:
    dev_type, dev_id = obj.__dlpack_device__()
    if int(dev_type) != _DL_CUDA:
        raise TileirError(f"this array is on DLPack device type {int(dev_type)}, not CUDA (2); a pointer parameter "
                          "takes a CUDA array or a numpy array.", kernel=kernel, what=_where(pos))
    try:  # DLPack: 1 is the legacy default stream, 0 is not allowed
        capsule = obj.__dlpack__(stream=stream if stream else 1)
    except TypeError:
        capsule = obj.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    addr = get(capsule, b"dltensor")
    t = _DLTensor.from_address(addr)  # DLManagedTensor starts with its DLTensor
    shape = [t.shape[i] for i in range(t.ndim)]
    if t.strides:
        itemsize = max(1, t.dtype.bits * t.dtype.lanes // 8)
        strides = [t.strides[i] * itemsize for i in range(t.ndim)]
        # strides the launch read itself (sizes.shape_strides) only where the object shows them
        shown = hasattr(obj, "strides") or callable(getattr(obj, "stride", None))
        if not (strided_ok and shown) and not _c_contiguous(shape, strides, itemsize):
            raise _not_contiguous(kernel, pos)
    kind = _DL_CODES.get(t.dtype.code)
    name = None if kind is None else ("bool" if kind == "bool" else f"{kind}{t.dtype.bits}")
    _check_format(name, dtype, kernel, pos)
    return DeviceArg(int(t.data or 0) + int(t.byte_offset), (obj, capsule), int(dev_id))


def is_torch_tensor(obj) -> bool:
    return type(obj).__module__.startswith("torch") and hasattr(obj, "data_ptr") and hasattr(obj, "is_cuda")


def prepare(arg, dtype: str, by_ptr: bool, *, kernel: str | None = None, pos: int | None = None,
            stream: int = 0, strided_ok: bool = False):
    """What one argument becomes: a DeviceArg or HostArg for a pointer parameter, a ctypes
    number for a value parameter. Refuses, naming the kernel and position, what it cannot pass.
    ``strided_ok``: the kernel reads this array through the strides the launch passes
    (tileir.sizes checked them), so it need not be contiguous."""
    if not by_ptr:
        if (isinstance(arg, np.ndarray) and arg.ndim != 0) or is_torch_tensor(arg):
            raise TileirError(f"this parameter is a {dtype} value, not a pointer; pass a number.",
                              kernel=kernel, what=_where(pos))
        return pack_scalar(arg, dtype, kernel=kernel, pos=pos)
    if isinstance(arg, np.ndarray):
        _check_format(arg.dtype.name, dtype, kernel, pos)
        if not arg.flags.c_contiguous:
            if strided_ok:  # staged from its first element to its last, so the strides still hold
                from ..sizes import flat_span

                return HostArg(flat_span(arg))
            raise _not_contiguous(kernel, pos, fix="np.ascontiguousarray(a)")
        return HostArg(arg)
    if type(arg).__name__ == "CUdeviceptr":
        return DeviceArg(int(arg), arg)
    if is_torch_tensor(arg):
        return _torch_arg(arg, dtype, kernel, pos, strided_ok)
    if hasattr(arg, "__cuda_array_interface__"):
        return _cai_arg(arg, dtype, kernel, pos, strided_ok)
    if hasattr(arg, "__dlpack__") and hasattr(arg, "__dlpack_device__"):
        return _dlpack_arg(arg, dtype, kernel, pos, stream, strided_ok)
    if _is_real(arg) or _is_bool(arg):
        raise TileirError(f"this parameter is a pointer to {dtype}; it takes an array, not the number {arg!r}.",
                          kernel=kernel, what=_where(pos))
    raise TileirError(f"a pointer parameter cannot take a {type(arg).__module__}.{type(arg).__name__}; it takes a "
                      "numpy array, a CUDA array (__cuda_array_interface__, a torch CUDA tensor, DLPack) or a "
                      "cuda.bindings CUdeviceptr.", kernel=kernel, what=_where(pos))


# ---------------------------------------------------------------------------------------------
# Host arrays on the device (needs the GPU)

class HostStaging:
    """Device copies of host numpy arrays for one launch: upload, download into the same arrays, free."""

    def __init__(self, kernel: str, stream):
        self.kernel = kernel
        self.stream = stream  # a cuda.bindings CUstream
        self._items: list[tuple[np.ndarray, object]] = []

    def __bool__(self) -> bool:
        return bool(self._items)

    def upload(self, array: np.ndarray, pos: int) -> int:
        from .driver import check, cu

        d = cu()
        if array.nbytes == 0:
            return 0
        dptr = check(d.cuMemAlloc(array.nbytes), f"allocating {array.nbytes} bytes for argument {pos}", self.kernel)
        self._items.append((array, dptr))
        check(d.cuMemcpyHtoDAsync(dptr, array.ctypes.data, array.nbytes, self.stream),
              f"copying argument {pos} to the GPU", self.kernel)
        return int(dptr)

    def download(self) -> None:
        """Copy every writable array back (stream-ordered), then wait for the copies."""
        from .driver import check, cu

        d = cu()
        for array, dptr in self._items:
            if array.flags.writeable:
                check(d.cuMemcpyDtoHAsync(array.ctypes.data, dptr, array.nbytes, self.stream),
                      "copying an array back from the GPU", self.kernel)
        check(d.cuStreamSynchronize(self.stream), "waiting for the copies back from the GPU", self.kernel)

    def free(self, quiet: bool = False) -> None:
        from .driver import check, cu

        d = cu()
        items, self._items = self._items, []
        for _, dptr in items:
            if quiet:
                d.cuMemFree(dptr)
            else:
                check(d.cuMemFree(dptr), "freeing a device copy of a host array", self.kernel)


def numpy_to_torch(a: np.ndarray, torch):
    """A CUDA torch tensor holding ``a``'s values (torch has no numpy bf16: through the bits)."""
    if str(a.dtype) == "bfloat16":
        return torch.from_numpy(a.view(np.uint16)).view(torch.bfloat16).cuda()
    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


def torch_to_numpy(t) -> np.ndarray:
    """A host copy of a torch tensor (bf16 as ml_dtypes' bfloat16, through the bits)."""
    import torch

    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.cpu().view(torch.uint16).numpy().view(ml_dtypes.bfloat16)
    return t.cpu().numpy()


def host_view(a):
    """(a numpy array the host reference can run on in place, and how to copy the answer back or
    None): numpy arrays as they are, CPU torch tensors as numpy views of their memory (bf16 through
    its bits), CUDA tensors copied to the host and back (``TILEIR_INTERPRET=1`` on device arrays);
    anything else (a scalar) as it is."""
    if not is_torch_tensor(a):
        return a, None
    import torch

    t = a.detach()
    if t.is_cuda:
        host = torch_to_numpy(t)

        def back(orig, view):
            orig.copy_(numpy_to_torch(np.ascontiguousarray(view), torch).view(orig.dtype).reshape(orig.shape))

        return host, back
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16), None
    return t.numpy(), None
