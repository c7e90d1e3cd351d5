"""The CUDA driver through cuda-bindings: error checks, each GPU's primary context, loaded modules.

Every function here imports ``cuda.bindings.driver`` lazily, so importing tileir.runtime works on
a machine without cuda-bindings or without a GPU; ``available()`` says whether launching can.
"""

from __future__ import annotations

import threading

from ..errors import TileirError

INSTALL_HINT = "pip install 'tileir[cuda]'"

# Words added to the driver's own for the errors a tileir user is most likely to meet.
_HINTS = {
    "CUDA_ERROR_ASSERT": "an assert in the kernel failed on the device. The CUDA context is now unusable: "
                         "every later CUDA call in this process fails, so restart it after fixing the kernel",
    "CUDA_ERROR_ILLEGAL_ADDRESS": "the kernel read or wrote outside its memory: check the grid against the "
                                  "array sizes. The CUDA context is now unusable; restart the process",
    "CUDA_ERROR_NO_BINARY_FOR_GPU": "the cubin was assembled for another target than this GPU: assemble for "
                                    "tileir.assemble.gpu_name_of_device()",
    "CUDA_ERROR_INVALID_IMAGE": "the cubin was assembled for another target than this GPU, or is damaged",
    "CUDA_ERROR_NOT_FOUND": "no such symbol in the cubin",
}


def cu():
    """The cuda.bindings.driver module, or a TileirError saying how to install it."""
    try:
        from cuda.bindings import driver
    except ImportError:
        raise TileirError("launching needs cuda-bindings (the CUDA driver's Python bindings), which is "
                          "not installed.", fix=INSTALL_HINT) from None
    return driver


def _error_words(err) -> tuple[str, str]:
    """(name, description) of a CUresult, from the driver when it answers, else the enum's name."""
    d = cu()
    name = getattr(err, "name", str(err))
    text = ""
    try:
        e, s = d.cuGetErrorName(err)
        if e == d.CUresult.CUDA_SUCCESS and s:
            name = s.decode() if isinstance(s, bytes) else str(s)
        e, s = d.cuGetErrorString(err)
        if e == d.CUresult.CUDA_SUCCESS and s:
            text = s.decode() if isinstance(s, bytes) else str(s)
    except Exception:
        pass
    return name, text


def check(result, what: str, kernel: str | None = None):
    """The values of a cuda-bindings call's ``(CUresult, ...)`` answer, or a TileirError naming the
    error, the driver's words for it and ``what`` was being done."""
    d = cu()
    if isinstance(result, tuple):
        err, values = result[0], result[1:]
    else:
        err, values = result, ()
    if err != d.CUresult.CUDA_SUCCESS:
        name, text = _error_words(err)
        msg = f"{what} failed: {name}" + (f" ({text})" if text else "")
        hint = _HINTS.get(name)
        if hint:
            msg += f". {hint[0].upper()}{hint[1:]}."
        raise TileirError(msg, kernel=kernel)
    if not values:
        return None
    return values[0] if len(values) == 1 else values


_state_lock = threading.RLock()
_available: bool | None = None
_contexts: dict[int, object] = {}  # device ordinal -> its primary context, retained once
_bound = threading.local()  # .device: the GPU whose primary context this thread last made current


def available() -> bool:
    """Whether the driver loads, initialises and sees at least one GPU. Never raises."""
    global _available
    with _state_lock:
        if _available is None:
            _available = _probe()
        return _available


def _probe() -> bool:
    try:
        from cuda.bindings import driver as d

        (err,) = d.cuInit(0)
        if err != d.CUresult.CUDA_SUCCESS:
            return False
        err, count = d.cuDeviceGetCount()
        return err == d.CUresult.CUDA_SUCCESS and count >= 1
    except Exception:
        return False


def device_count() -> int:
    """How many GPUs the driver sees (0 where it cannot)."""
    if not available():
        return 0
    return int(check(cu().cuDeviceGetCount(), "cuDeviceGetCount"))


def _primary(device: int):
    d = cu()
    with _state_lock:
        ctx = _contexts.get(device)
        if ctx is None:
            if not available():
                raise TileirError("no CUDA GPU is usable here: the driver did not load, did not initialise, "
                                  "or reports no device.",
                                  fix="run on a machine with an NVIDIA GPU and driver (tileir.runtime.available() "
                                      "says whether this one can), or TILEIR_INTERPRET=1 for the host reference")
            check(d.cuInit(0), "cuInit")
            count = device_count()
            if not 0 <= device < count:
                raise TileirError(f"there is no GPU {device} (this machine has {count}).", fix="cuda:0 .. "
                                  f"cuda:{count - 1}")
            dev = check(d.cuDeviceGet(device), f"cuDeviceGet({device})")
            ctx = check(d.cuDevicePrimaryCtxRetain(dev), f"retaining the primary context of GPU {device}")
            _contexts[device] = ctx
        return ctx


def context(device: int = 0):
    """The primary context of GPU ``device`` (torch's and the runtime API's too): retained once,
    and made current on the calling thread if it is not (any thread may launch)."""
    d = cu()
    ctx = _primary(device)
    current = check(d.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if current is None or int(current) != int(ctx):
        check(d.cuCtxSetCurrent(ctx), f"making the primary context of GPU {device} current")
    _bound.device = device
    return ctx


def bind(device: int) -> bool:
    """Whether GPU ``device``'s primary context is current on this thread, making it so where the
    thread has none current (a fresh thread); cheaply when this thread bound it last. False where
    another GPU's context is current (torch's current device is another): the caller then pushes
    ours for its call only (``pushed``), so torch's current device is left as the user set it."""
    if getattr(_bound, "device", None) == device:
        return True
    d = cu()
    ctx = _primary(device)
    current = check(d.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if current is None or int(current) == 0:
        check(d.cuCtxSetCurrent(ctx), f"making the primary context of GPU {device} current")
    elif int(current) != int(ctx):
        _bound.device = None
        return False
    _bound.device = device
    return True


def rebind(device: int) -> bool:
    """``bind`` again, asking the driver what is current (someone changed it under us)."""
    _bound.device = None
    return bind(device)


class pushed:  # noqa: N801 - a context manager, read as a phrase: with pushed(device): ...
    """GPU ``device``'s primary context current for the ``with`` body, the thread's own after."""

    def __init__(self, device: int):
        self.device = device

    def __enter__(self):
        check(cu().cuCtxPushCurrent(_primary(self.device)), f"pushing the primary context of GPU {self.device}")
        return self

    def __exit__(self, *exc):
        check(cu().cuCtxPopCurrent(), "popping the context back")
        _bound.device = None
        return False


def pointer_device(ptr: int) -> int:
    """The ordinal of the GPU a device pointer's memory lives on (0 where the driver cannot say)."""
    d = cu()
    try:
        res = d.cuPointerGetAttribute(d.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr)
        if res[0] == d.CUresult.CUDA_SUCCESS:
            return int(res[1])
    except Exception:
        pass
    return 0


class Module:
    """A cubin loaded into the primary context of one GPU."""

    def __init__(self, cubin: bytes, kernel: str, device: int = 0):
        d = cu()
        self.kernel = kernel
        self.device = device
        self._functions: dict[str, object] = {}
        self._lock = threading.Lock()
        with pushed(device):  # in that GPU's context, leaving the thread's current one as it was
            self._handle = check(d.cuModuleLoadData(bytes(cubin)), "loading the cubin (cuModuleLoadData)", kernel)

    @property
    def handle(self):
        if self._handle is None:
            raise TileirError("this module was unloaded.", kernel=self.kernel)
        return self._handle

    def function(self, name: str):
        """The CUfunction ``name`` (cached)."""
        with self._lock:
            f = self._functions.get(name)
            if f is None:
                with pushed(self.device):
                    f = check(cu().cuModuleGetFunction(self.handle, name.encode()),
                              f"finding the entry '{name}' in the cubin (cuModuleGetFunction)", self.kernel)
                self._functions[name] = f
            return f

    def global_ptr(self, name: str) -> tuple[int, int]:
        """(device pointer, size in bytes) of the global ``name``."""
        with pushed(self.device):
            dptr, size = check(cu().cuModuleGetGlobal(self.handle, name.encode()),
                               f"finding the global '{name}' in the cubin (cuModuleGetGlobal)", self.kernel)
        return int(dptr), int(size)

    def unload(self) -> None:
        with self._lock:
            if self._handle is None:
                return
            handle, self._handle = self._handle, None
            self._functions.clear()
        with pushed(self.device):
            check(cu().cuModuleUnload(handle), "unloading the module (cuModuleUnload)", self.kernel)
