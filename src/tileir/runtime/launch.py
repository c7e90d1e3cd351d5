"""One kernel launch: check the call, load the cubin once, pass the arguments, run, copy back.

tileiras decides the threads of a block itself (FACTS.md), so every launch is a grid of blocks
of (1, 1, 1) with no dynamic shared memory. kernelParams is passed to ``cuLaunchKernel`` as the
integer address of a C array of ``void*``, each pointing at an 8-byte zeroed slot holding one
argument (a device pointer, or a scalar in its format's bytes): the one form every cuda-bindings
release accepts, from 12.x through 13.x.
"""

from __future__ import annotations

import ctypes
import hashlib
import threading

from ..errors import TileirError
from .arrays import DeviceArg, HostArg, HostStaging, is_torch_tensor, pack_scalar, prepare
from .driver import Module, check, context, cu

_GRID_LIMITS = (2**31 - 1, 65535, 65535)
ALIGN = 16  # every buffer parameter's address must be a multiple of this (ops/memory.py claims it)

_modules: dict[str, Module] = {}
_modules_lock = threading.Lock()


def normalize_grid(grid, kernel: str | None = None) -> tuple[int, int, int]:
    """``grid`` (an int, or 1-3 positive ints) as three ints, padded with 1s."""
    dims = (grid,) if not isinstance(grid, (tuple, list)) else tuple(grid)
    if not 1 <= len(dims) <= 3:
        raise TileirError(f"the grid must be 1 to 3 positive ints, not {grid!r}.", kernel=kernel, what="grid")
    out = []
    for axis, (n, limit) in enumerate(zip(dims, _GRID_LIMITS)):
        if isinstance(n, bool) or not hasattr(n, "__index__"):
            raise TileirError(f"grid dimension {axis} must be an int, not {type(n).__name__} {n!r}.",
                              kernel=kernel, what="grid")
        n = n.__index__()
        if not 1 <= n <= limit:
            raise TileirError(f"grid dimension {axis} is {n}; it must be between 1 and {limit}.",
                              kernel=kernel, what="grid")
        out.append(n)
    return tuple(out + [1] * (3 - len(out)))


def normalize_params(params, kernel: str | None = None) -> list[tuple[str, bool]]:
    """``params`` as (dtype name, by pointer) pairs; ir.KParam-like objects are accepted too."""
    out = []
    for i, p in enumerate(params):
        if hasattr(p, "dtype") and hasattr(p, "by_ptr"):
            p = (p.dtype, p.by_ptr)
        if not (isinstance(p, (tuple, list)) and len(p) == 2 and isinstance(p[0], str)):
            raise TileirError(f"parameter {i} must be described as (dtype name, by_ptr), not {p!r}.",
                              kernel=kernel, what=f"argument {i}")
        out.append((p[0], bool(p[1])))
    return out


def stream_handle(stream, kernel: str | None = None) -> int:
    """The raw CUstream handle of None (the default stream), a torch or cupy stream, a cuda.core
    stream (``__cuda_stream__``), a cuda.bindings CUstream, or an int."""
    if stream is None:
        return 0
    if isinstance(stream, int) and not isinstance(stream, bool):
        if stream < 0:
            raise TileirError(f"a stream handle cannot be negative ({stream}).", kernel=kernel, what="stream")
        return stream
    if hasattr(stream, "__cuda_stream__"):  # cuda.core
        return int(stream.__cuda_stream__()[1])
    if hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
        return int(stream.cuda_stream)
    if isinstance(getattr(stream, "ptr", None), int):  # cupy
        return int(stream.ptr)
    if type(stream).__name__ == "CUstream":
        return int(stream)
    raise TileirError(f"stream must be None, a torch/cupy/cuda.core stream, a CUstream or an int handle, not "
                      f"{type(stream).__name__}.", kernel=kernel, what="stream")


def module_for(cubin: bytes, kernel: str) -> Module:
    """The loaded Module of ``cubin`` (loaded once per cubin, by its sha256)."""
    key = hashlib.sha256(bytes(cubin)).hexdigest()
    with _modules_lock:
        mod = _modules.get(key)
        if mod is None:
            mod = Module(cubin, kernel)
            _modules[key] = mod
        return mod


def clear_modules() -> None:
    """Unload every cached module."""
    with _modules_lock:
        mods = list(_modules.values())
        _modules.clear()
    for m in mods:
        m.unload()


def _param_size(by_ptr: bool, packed) -> int:
    return 8 if by_ptr else ctypes.sizeof(packed)


def check_param_info(function, expected: list[int], kernel: str) -> None:
    """Where the driver has cuFuncGetParamInfo, hold the entry's parameter count and sizes to
    ``expected``; where it has not (older driver or bindings), check nothing."""
    d = cu()
    get = getattr(d, "cuFuncGetParamInfo", None)
    if get is None:
        return
    sizes = []
    try:
        for i in range(len(expected) + 64):
            res = get(function, i)
            if res[0] == d.CUresult.CUDA_ERROR_INVALID_VALUE:
                break
            if res[0] != d.CUresult.CUDA_SUCCESS:
                return
            sizes.append(int(res[2]))
        else:
            return
    except Exception:
        return
    if sizes != expected:
        raise TileirError(f"the cubin's entry takes {len(sizes)} parameter(s) of sizes {sizes} bytes, but this "
                          f"launch describes {len(expected)} of sizes {expected}.", kernel=kernel, what="launch",
                          fix="pass the params (and arguments) of the kernel that was assembled into this cubin")


class Launcher:
    """One kernel of one cubin, ready to launch again and again: the module loaded, the function
    found and its parameter list checked once, so a launch costs the argument packing and the
    driver call (issue 7: keep the launch overhead low).

    A call whose buffers are all CUDA tensors of types and formats that passed the full checks
    before, at the same positions, takes the fast lane: per tensor only the device, contiguity and
    alignment are asked again (three calls into torch) before its pointer goes into its slot.
    Anything else -- a first sight, a numpy array, a refusal to explain -- takes the full path
    (``prepare``), which then admits what it passed to the fast lane."""

    def __init__(self, cubin: bytes, kernel: str, params):
        self.kernel = kernel
        self.params = normalize_params(params, kernel)
        context()
        self.function = module_for(cubin, kernel).function(kernel)
        self._checked = False
        n = max(1, len(self.params))
        self._slots = (ctypes.c_uint64 * n)()
        self._pointers = (ctypes.c_void_p * n)(*[ctypes.addressof(self._slots) + 8 * i for i in range(n)])
        self._lock = threading.Lock()
        self._driver = cu()
        self._default_stream = self._driver.CUstream(0)
        self._seen: set = set()  # (position, array type, its dtype) that passed the full checks
        self._params_addr = ctypes.addressof(self._pointers) if self.params else None
        self._success = self._driver.CUresult.CUDA_SUCCESS
        self._last_grid = None  # (the grid as given, as three ints): normalised once while it repeats
        self._last_values = None  # what the slots hold after a fast-lane call
        self._by_ptr = [bp for _, bp in self.params]

    def _fast_values(self, args):
        """The slots' values of a call the fast lane can take (device pointers and packed scalars),
        or None."""
        seen, out = self._seen, []
        for i, (a, bp) in enumerate(zip(args, self._by_ptr)):
            if not bp:
                if type(a) not in (int, float):  # anything else: the full path checks it
                    return None
                out.append(pack_scalar(a, self.params[i][0], kernel=self.kernel, pos=i))
                continue
            if (i, type(a), getattr(a, "dtype", None)) not in seen or a.get_device() != 0 or not a.is_contiguous():
                return None
            ptr = a.data_ptr()
            if ptr % ALIGN:
                return None
            out.append(ptr)
        return out

    def _put(self, i: int, value) -> None:
        """Slot i holds ``value``: a device address (an int), or a packed scalar's bytes, zero-padded."""
        if isinstance(value, int):
            self._slots[i] = value
        else:
            self._slots[i] = 0
            ctypes.memmove(ctypes.addressof(self._slots) + 8 * i, ctypes.addressof(value), ctypes.sizeof(value))

    def _launch(self, gx: int, gy: int, gz: int, hstream, sync: bool) -> None:
        """The driver call on the slots as they stand, then (``sync``) the wait for it."""
        d = self._driver
        res = d.cuLaunchKernel(self.function, gx, gy, gz, 1, 1, 1, 0, hstream, self._params_addr, 0)
        if res[0] != self._success:  # the words are made only for an error
            check(res, f"launching on grid ({gx}, {gy}, {gz}) (cuLaunchKernel)", self.kernel)
        if sync:
            check(d.cuStreamSynchronize(hstream), "running the kernel (cuStreamSynchronize after the launch)",
                  self.kernel)

    def __call__(self, grid, args, stream=None, sync: bool = True) -> None:
        kernel, params = self.kernel, self.params
        if len(args) != len(params):
            raise TileirError(f"takes {len(params)} argument(s), got {len(args)}.", kernel=kernel, what="launch")
        last_grid = self._last_grid  # only tuples of ints are kept: nothing the caller can change later
        if last_grid is not None and type(grid) is tuple and grid == last_grid[0] and \
                all(type(n) is int for n in grid):
            gx, gy, gz = last_grid[1]
        else:
            gx, gy, gz = normalize_grid(grid, kernel)
            if type(grid) is tuple:
                self._last_grid = (grid, (gx, gy, gz))
        handle = 0 if stream is None else stream_handle(stream, kernel)
        d = self._driver
        hstream = self._default_stream if handle == 0 else d.CUstream(handle)
        values = self._fast_values(args) if self._checked else None
        if values is not None:
            with self._lock:  # the slots are reused: the driver copies them at the launch
                if values != self._last_values:  # the same pointers as last time (and no scalar): kept
                    for i, v in enumerate(values):
                        self._put(i, v)
                    self._last_values = values
                self._launch(gx, gy, gz, hstream, sync)
            return
        prepared = [prepare(a, dt, bp, kernel=kernel, pos=i, stream=handle)
                    for i, (a, (dt, bp)) in enumerate(zip(args, params))]
        for i, p in enumerate(prepared):
            if isinstance(p, DeviceArg) and p.ptr % ALIGN:
                raise TileirError(f"argument {i}'s device address {p.ptr:#x} is not {ALIGN}-byte aligned: the kernel "
                                  f"claims every buffer is (assume div_by<{ALIGN}>), and a misaligned one would read "
                                  "wrong", kernel=kernel, what=f"argument {i}",
                                  fix="pass an aligned buffer (a fresh tensor, or .clone() of an offset view)")
        if not self._checked:
            check_param_info(self.function, [_param_size(bp, p) for (_, bp), p in zip(params, prepared)], kernel)
            self._checked = True
        staging = HostStaging(kernel, hstream)
        ok = False
        with self._lock:
            self._last_values = None
            try:
                for i, p in enumerate(prepared):
                    if isinstance(p, HostArg):
                        p = staging.upload(p.array, i)
                    elif isinstance(p, DeviceArg):
                        p = p.ptr
                    self._put(i, p)
                self._launch(gx, gy, gz, hstream, bool(staging) or sync)
                if staging:
                    staging.download()
                ok = True
            finally:
                staging.free(quiet=not ok)
        for i, (a, p) in enumerate(zip(args, prepared)):  # admit the torch tensors that passed to the fast lane
            if isinstance(p, DeviceArg) and p.keep is a and is_torch_tensor(a):
                self._seen.add((i, type(a), a.dtype))


_launchers: dict = {}


def launcher_for(cubin: bytes, kernel: str, params) -> Launcher:
    """The Launcher of (cubin, kernel, params), made once."""
    key = (id(cubin), len(cubin), kernel, tuple(map(tuple, normalize_params(params, kernel))))
    got = _launchers.get(key)
    if got is None or got[0] is not cubin:
        got = (cubin, Launcher(cubin, kernel, params))
        _launchers[key] = got
    return got[1]


def launch(cubin: bytes, kernel: str, grid, args, params, stream=None, sync: bool = True) -> None:
    """Run entry ``kernel`` of ``cubin`` on ``grid`` blocks with ``args``; ``params[i]`` is
    ``(dtype name, by_ptr)`` of parameter i. Host numpy arrays are copied in and back (and the
    stream is then always synchronised); device arrays are passed by pointer."""
    params = normalize_params(params, kernel)
    if len(list(args)) != len(params):
        raise TileirError(f"takes {len(params)} argument(s), got {len(list(args))}.", kernel=kernel, what="launch")
    normalize_grid(grid, kernel)
    handle = stream_handle(stream, kernel)
    for i, (a, (dt, bp)) in enumerate(zip(args, params)):  # refuse bad arguments before touching the driver
        prepare(a, dt, bp, kernel=kernel, pos=i, stream=handle)
    launcher_for(cubin, kernel, params)(grid, args, stream, sync)
