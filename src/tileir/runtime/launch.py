"""One kernel launch: check the call, load the cubin once, pass the arguments, run, copy back.

tileiras decides the threads of a block itself (FACTS.md), so every launch is a grid of blocks
of (1, 1, 1) with no dynamic shared memory. kernelParams is passed to ``cuLaunchKernel`` as the
integer address of a C array of ``void*``, each pointing at an 8-byte zeroed slot holding one
argument (a device pointer, or a scalar in its format's bytes): the one form every cuda-bindings
release accepts, from 12.x through 13.x.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import sys
import threading

from ..errors import TileirError
from ..lru import LRU
from .arrays import DeviceArg, HostArg, HostStaging, is_torch_tensor, pack_scalar, prepare
from .cubin_info import warps_of
from .driver import Module, _bound, bind, check, cu, pointer_device, pushed, rebind

_GRID_LIMITS = (2**31 - 1, 65535, 65535)
ALIGN = 16  # every buffer parameter's address must be a multiple of this (ops/memory.py claims it)

_modules = LRU()  # (cubin sha256, device) -> Module (an evicted one stays loaded while a Launcher holds it)
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


def module_for(cubin: bytes, kernel: str, device: int = 0) -> Module:
    """The loaded Module of ``cubin`` on GPU ``device`` (loaded once per cubin and GPU, by its sha256)."""
    key = (hashlib.sha256(bytes(cubin)).hexdigest(), device)
    with _modules_lock:
        mod = _modules.get(key)
        if mod is None:
            mod = Module(cubin, kernel, device)
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


def _torch():
    return sys.modules.get("torch")


def current_torch_stream(device: int) -> int:
    """The raw handle of torch's current stream on ``device`` (what torch's own kernels launch on)."""
    torch = _torch()
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return int(raw(device)) if raw is not None else int(torch.cuda.current_stream(device).cuda_stream)


def _torch_launcher():
    """torch's own C++ launcher of a loaded CUfunction (``torch._C._StaticCudaLauncher``, what
    inductor launches Triton's cubins with), or None: where torch is not loaded, its build has
    none, or TILEIR_TORCH_LAUNCHER=0. It takes the slots as a tuple of 64-bit integers, and its
    blocks are 32 x num_warps threads: a tileiras kernel runs with exactly the block its cubin names
    (runtime/cubin_info.py; bench/results/static_launch_h200.json measured both)."""
    torch = _torch()
    if torch is None or os.environ.get("TILEIR_TORCH_LAUNCHER", "1") in ("0", "off", "false", "no"):
        return None
    return getattr(getattr(torch._C, "_StaticCudaLauncher", None), "_launch_kernel", None)


def _torch_stream_of(stream, handle: int, device: int):
    """A torch stream object for ``stream`` (for record_stream): itself, or the handle wrapped."""
    torch = _torch()
    if isinstance(stream, torch.cuda.Stream):
        return stream
    return torch.cuda.ExternalStream(handle, device=torch.device("cuda", device))


class Launcher:
    """One kernel of one cubin, ready to launch again and again on any GPU: loaded once per GPU
    (the primary context the arguments' device names), its parameter list checked once, so a
    launch costs the argument packing and the driver call.

    Launch semantics are torch's: asynchronous, on the current torch stream of the arguments'
    device unless ``stream`` names another (then every torch tensor is ``record_stream``-ed on it,
    so the caching allocator does not hand its memory out while the kernel runs); host numpy
    arguments are copied in and back and the call then waits. Any thread may launch: the device's
    primary context is made current on the calling thread when it is not.

    A call whose buffers are all CUDA tensors of types and formats that passed the full checks
    before, at the same positions, takes the fast lane: per tensor only the device, layout and
    alignment are asked again before its pointer goes into its slot. Anything else -- a first
    sight, a numpy array, a refusal to explain -- takes the full path (``prepare``), which then
    admits what it passed to the fast lane.

    ``strided``: positions whose arrays the kernel reads through strides the launch passes (their
    layout was checked by tileir.sizes), so they need not be contiguous; ``written``: positions the
    kernel may write (a read-only host array there is refused)."""

    def __init__(self, cubin: bytes, kernel: str, params, written=None, strided=(), unaligned=()):
        self.kernel = kernel
        self.cubin = cubin
        self.params = normalize_params(params, kernel)
        self.written = None if written is None else frozenset(written)
        self.strided = frozenset(strided)
        self.unaligned = frozenset(unaligned)  # arrays the program makes no alignment claim for
        self._functions: dict = {}  # device -> CUfunction
        self._checked = False
        n = max(1, len(self.params))
        self._slots = (ctypes.c_uint64 * n)()
        self._pointers = (ctypes.c_void_p * n)(*[ctypes.addressof(self._slots) + 8 * i for i in range(n)])
        self._lock = threading.Lock()
        self._driver = cu()
        self._streams: dict = {}  # raw handle -> CUstream object
        self._seen: set = set()  # (position, array type, its dtype) that passed the full checks
        self._params_addr = ctypes.addressof(self._pointers) if self.params else None
        self._success = self._driver.CUresult.CUDA_SUCCESS
        self._retry = {self._driver.CUresult.CUDA_ERROR_INVALID_CONTEXT,
                       self._driver.CUresult.CUDA_ERROR_INVALID_HANDLE,
                       self._driver.CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED}
        # (the grid as given, as three ints): normalised once while it repeats
        self._last_grid: tuple[tuple, tuple[int, int, int]] | None = None
        self._last_values: list | None = None  # what the slots hold after a fast-lane call
        self._by_ptr = [bp for _, bp in self.params]
        self._warps = warps_of(cubin, kernel)  # the block tileiras compiled the kernel for, in warps
        # None: every launch goes through cuda-bindings
        self._torch_launch = _torch_launcher() if self._warps is not None else None
        self._torch_launch_failures = 0
        self._tys = "K" * len(self.params)  # every slot a 64-bit integer, as the slots hold them
        self._function_ints: dict = {}  # device -> the CUfunction's address
        self._contig = [bp and i not in self.strided for i, (_, bp) in enumerate(self.params)]

    def function(self, device: int = 0):
        """The CUfunction on GPU ``device`` (the cubin loaded there on first use)."""
        f = self._functions.get(device)
        if f is None:
            f = module_for(self.cubin, self.kernel, device).function(self.kernel)
            self._functions[device] = f
            if self._torch_launch is not None:
                self._function_ints[device] = int(f)
        return f

    def _fast_values(self, args):
        """(device, the slots' values) of a call the fast lane can take (device pointers and packed
        scalars), or None; the device is None when no tensor is among them."""
        seen, out, device = self._seen, [], None
        for i, (a, bp) in enumerate(zip(args, self._by_ptr)):
            if not bp:
                if type(a) not in (int, float):  # anything else: the full path checks it
                    return None
                out.append(pack_scalar(a, self.params[i][0], kernel=self.kernel, pos=i))
                continue
            if (i, type(a), getattr(a, "dtype", None)) not in seen:
                return None
            dev = a.get_device()
            if dev < 0:  # a CPU tensor now: the full path says so
                return None
            if device is None:
                device = dev
            elif dev != device:
                return None
            if self._contig[i] and not a.is_contiguous():
                return None
            ptr = a.data_ptr()
            if ptr % ALIGN and i not in self.unaligned:
                return None
            out.append(ptr)
        return device, out

    def _put(self, i: int, value) -> None:
        """Slot i holds ``value``: a device address (an int), or a packed scalar's bytes, zero-padded."""
        if isinstance(value, int):
            self._slots[i] = value
        else:
            self._slots[i] = 0
            ctypes.memmove(ctypes.addressof(self._slots) + 8 * i, ctypes.addressof(value), ctypes.sizeof(value))

    def _stream(self, handle: int):
        s = self._streams.get(handle)
        if s is None:
            s = self._streams[handle] = self._driver.CUstream(handle)
        return s

    def _launch(self, device: int, gx: int, gy: int, gz: int, hstream, sync: bool) -> None:
        """The driver call on the slots as they stand, in GPU ``device``'s primary context: made
        current where the thread has none (or had it last), pushed for this call only where another
        GPU's is current (torch's current device stays the user's); then (``sync``) the wait."""
        d = self._driver
        f = self._functions.get(device) or self.function(device)
        if getattr(_bound, "device", None) == device or bind(device):
            res = d.cuLaunchKernel(f, gx, gy, gz, 1, 1, 1, 0, hstream, self._params_addr, 0)
            if res[0] in self._retry:  # the context changed under us: bind afresh, or push ours
                if rebind(device):
                    res = d.cuLaunchKernel(f, gx, gy, gz, 1, 1, 1, 0, hstream, self._params_addr, 0)
                else:
                    with pushed(device):
                        res = d.cuLaunchKernel(f, gx, gy, gz, 1, 1, 1, 0, hstream, self._params_addr, 0)
        else:
            with pushed(device):
                res = d.cuLaunchKernel(f, gx, gy, gz, 1, 1, 1, 0, hstream, self._params_addr, 0)
        if res[0] != self._success:  # the words are made only for an error
            check(res, f"launching on grid ({gx}, {gy}, {gz}) of GPU {device} (cuLaunchKernel)", self.kernel)
        if sync:
            check(d.cuStreamSynchronize(hstream), "running the kernel (cuStreamSynchronize after the launch)",
                  self.kernel)

    def _launch_current(self, gx, gy, gz, hstream, sync, device, bound) -> None:
        """``_launch`` (``bound``), or the bare launch where the caller pushed the context."""
        if bound:
            return self._launch(device, gx, gy, gz, hstream, sync)
        d = self._driver
        res = d.cuLaunchKernel(self.function(device), gx, gy, gz, 1, 1, 1, 0, hstream, self._params_addr, 0)
        check(res, f"launching on grid ({gx}, {gy}, {gz}) (cuLaunchKernel)", self.kernel)
        if sync:
            check(d.cuStreamSynchronize(hstream), "running the kernel (cuStreamSynchronize after the launch)",
                  self.kernel)

    def _grid(self, grid):
        last_grid = self._last_grid  # only tuples of ints are kept: nothing the caller can change later
        if last_grid is not None and type(grid) is tuple and grid == last_grid[0] and \
                all(type(n) is int for n in grid):
            return last_grid[1]
        g = normalize_grid(grid, self.kernel)
        if type(grid) is tuple:
            self._last_grid = (grid, g)
        return g

    def _stream_for(self, stream, device: int, tensors) -> int:
        """The raw stream handle of a launch on ``device``: ``stream`` when given (recording every
        torch tensor on it when it is not torch's current one), else torch's current stream when a
        torch tensor is among the arguments, else cupy's current one for cupy arrays, else 0."""
        if stream is None:
            if tensors:
                return current_torch_stream(device)
            return 0
        handle = stream_handle(stream, self.kernel)
        if tensors and handle != current_torch_stream(device):
            ts = _torch_stream_of(stream, handle, device)
            for t in tensors:
                t.record_stream(ts)
        return handle

    def launch_ready(self, device: int, slots: tuple, grid3: tuple, sync: bool) -> None:
        """``launch_slots`` on torch's current stream with a grid already three ints within the
        driver's limits (a call site's generated grid): the plain call's path, nothing asked twice."""
        self._send(device, slots, grid3, current_torch_stream(device), sync)

    def _send(self, device: int, slots: tuple, grid3: tuple, handle: int, sync: bool) -> None:
        """The launch of checked slots: through torch's launcher where it can take it (this thread
        bound this GPU's context last, the call does not wait), else through cuda-bindings, which
        also binds contexts afresh and words the driver's refusals."""
        launch = self._torch_launch
        if launch is not None and not sync and getattr(_bound, "device", None) == device:
            f = self._function_ints.get(device)
            gx, gy, gz = grid3
            # torch's launcher multiplies the grid in 32 bits and launches nothing where that is <= 0
            if f is not None and 0 < gx * gy * gz < 2**31:
                try:
                    launch(f, gx, gy, gz, self._warps, 0, self._tys, slots, handle)
                    return
                except RuntimeError:  # nothing was launched: the path below asks the driver again
                    _bound.device = None  # (a context changed under us is bound afresh there)
                    self._torch_launch_failures += 1
                    if self._torch_launch_failures >= 3:  # it keeps refusing this kernel: stop asking
                        self._torch_launch = None
        self._slots_and_launch(device, slots, grid3, self._streams.get(handle) or self._stream(handle), sync)

    def _slots_and_launch(self, device: int, slots, grid3, hstream, sync: bool) -> None:
        with self._lock:  # the slots are reused: the driver copies them at the launch
            if slots != self._last_values:
                put = self._slots
                for i, v in enumerate(slots):
                    put[i] = v
                self._last_values = slots
            self._launch(device, grid3[0], grid3[1], grid3[2], hstream, sync)

    def launch_slots(self, device: int, slots: tuple, grid, stream, sync: bool, tensors=()) -> None:
        """Launch with ``slots`` (every entry parameter's 64-bit value, read and checked by the
        caller's generated reader, runtime/fastpath.py) on GPU ``device``: the fastest way in,
        taken only after a full-path call has checked this launcher's parameter list."""
        grid3 = self._grid(grid)
        if stream is None:
            handle = current_torch_stream(device)
        else:
            handle = self._stream_for(stream, device, [t for t in tensors if hasattr(t, "record_stream")])
        self._send(device, slots, grid3, handle, sync)

    def __call__(self, grid, args, stream=None, sync: bool = False) -> None:
        kernel, params = self.kernel, self.params
        if len(args) != len(params):
            raise TileirError(f"takes {len(params)} argument(s), got {len(args)}.", kernel=kernel, what="launch")
        gx, gy, gz = self._grid(grid)
        fast = self._fast_values(args) if self._checked else None
        if fast is not None:
            device, values = fast
            if device is None:  # scalars only
                device, handle = 0, (0 if stream is None else stream_handle(stream, kernel))
            elif stream is None:
                handle = current_torch_stream(device)
            else:
                handle = self._stream_for(stream, device, [a for a, bp in zip(args, self._by_ptr) if bp])
            hstream = self._stream(handle)
            with self._lock:  # the slots are reused: the driver copies them at the launch
                if values != self._last_values:  # the same pointers as last time (and no scalar): kept
                    for i, v in enumerate(values):
                        self._put(i, v)
                    self._last_values = values
                self._launch(device, gx, gy, gz, hstream, sync)
            return
        self._full(gx, gy, gz, args, stream, sync)

    def _full(self, gx, gy, gz, args, stream, sync) -> None:
        kernel, params = self.kernel, self.params
        handle0 = 0 if stream is None else stream_handle(stream, kernel)
        prepared = [prepare(a, dt, bp, kernel=kernel, pos=i, stream=handle0, strided_ok=i in self.strided)
                    for i, (a, (dt, bp)) in enumerate(zip(args, params))]
        device, first = None, None
        for i, p in enumerate(prepared):
            if isinstance(p, DeviceArg):
                if p.ptr % ALIGN and i not in self.unaligned:
                    raise TileirError(f"argument {i}'s device address {p.ptr:#x} is not {ALIGN}-byte aligned: the "
                                      f"kernel claims every buffer is (assume div_by<{ALIGN}>), and a misaligned one "
                                      "would read wrong", kernel=kernel, what=f"argument {i}",
                                      fix="pass an aligned buffer (a fresh tensor, or .clone() of an offset view)")
                dev = p.device if p.device is not None else pointer_device(p.ptr)
                if device is None:
                    device, first = dev, i
                elif dev != device:
                    raise TileirError(f"argument {first} is on cuda:{device} and argument {i} on cuda:{dev}; one "
                                      "launch runs on one GPU", kernel=kernel, what=f"argument {i}",
                                      fix=f"move them to one device (.to('cuda:{device}'))")
            elif isinstance(p, HostArg) and (self.written is None or i in self.written) \
                    and not p.array.flags.writeable:
                raise TileirError("this numpy array is read-only, and the kernel writes it: its answer would be "
                                  "dropped", kernel=kernel, what=f"argument {i}", fix="pass a writable array "
                                  "(np.array(a) copies one; a.setflags(write=True) where you own the memory)")
        tensors = [a for a in args if is_torch_tensor(a) and a.is_cuda]
        if device is None:  # no device array (numpy, scalars): torch's current GPU where torch is in use
            torch = _torch()
            device = torch.cuda.current_device() if torch is not None and torch.cuda.is_initialized() else 0
        if stream is None and not tensors:
            cupy = sys.modules.get("cupy")
            if cupy is not None and any(type(a).__module__.startswith("cupy") for a in args):
                stream = cupy.cuda.get_current_stream()
        handle = self._stream_for(stream, device, tensors)
        hstream = self._stream(handle)
        if not self._checked:
            check_param_info(self.function(device), [_param_size(bp, p) for (_, bp), p in zip(params, prepared)],
                             kernel)
            self._checked = True
        self.function(device)
        bound = bind(device)
        with (contextlib.nullcontext() if bound else pushed(device)):  # the copies in this GPU's context
            self._stage_and_launch(gx, gy, gz, args, prepared, hstream, sync, device, bound)

    def _stage_and_launch(self, gx, gy, gz, args, prepared, hstream, sync, device, bound) -> None:
        kernel = self.kernel
        staging = HostStaging(kernel, hstream)
        if any(isinstance(p, HostArg) for p in prepared) and _capturing(hstream):
            raise TileirError("a numpy argument during CUDA graph capture: it would be copied and waited for, "
                              "which a capture cannot hold", kernel=kernel, what="launch",
                              fix="pass device tensors (torch CUDA tensors) inside torch.cuda.graph(...)")
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
                self._launch_current(gx, gy, gz, hstream, bool(staging) or sync, device, bound)
                if staging:
                    staging.download()
                ok = True
            finally:
                staging.free(quiet=not ok)
        for i, (a, p) in enumerate(zip(args, prepared)):  # admit the torch tensors that passed to the fast lane
            if isinstance(p, DeviceArg) and p.keep is a and is_torch_tensor(a):
                self._seen.add((i, type(a), a.dtype))


def _capturing(hstream) -> bool:
    d = cu()
    try:
        res = d.cuStreamIsCapturing(hstream)
        return res[0] == d.CUresult.CUDA_SUCCESS and res[1] != d.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE
    except Exception:
        return False


_launchers = LRU()


def launcher_for(cubin: bytes, kernel: str, params, written=None, strided=(), unaligned=()) -> Launcher:
    """The Launcher of (cubin, kernel, params), made once."""
    key = (id(cubin), len(cubin), kernel, tuple(map(tuple, normalize_params(params, kernel))),
           None if written is None else frozenset(written), frozenset(strided), frozenset(unaligned))
    got = _launchers.get(key)
    if got is None or got[0] is not cubin:
        got = (cubin, Launcher(cubin, kernel, params, written, strided, unaligned))
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
    launcher_for(cubin, kernel, params)(grid, args, stream, sync)  # the low-level call waits by default
