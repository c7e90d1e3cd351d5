"""``kern.check(*args, **config)``: a kernel of your own run on the GPU and on the host reference,
on copies of the same inputs, every array judged lane by lane with layer 2's judgements.

    res = softmax.check(x, y)            # x, y: torch tensors (CPU or CUDA), numpy arrays
    print(res)                           # which arrays differ, in which lanes, by how much
    assert res.ok

The host reference interprets the recording the GPU runs, rounding as the device rounds, so the
two should agree: an integer or bit-pattern output bit for bit, a float output within a tolerance
(the device may add in another order, and its exp / log / tanh are within a few ulp of the
correctly rounded value the host computes). Where they do not, the lowering, tileiras or the
device disagrees with what the kernel says -- or the kernel reads something undefined (a lane
past the end with ``NoPadding``, a race between blocks). The judgements are layer 2's
(``tileir.judge``, which the device diff uses too; docs/layer2.md):

* ``"exact"``: bit for bit, except that two NaNs agree whatever their payloads (IEEE leaves a
  generated NaN's payload to the implementation); the default for integer and flag outputs;
* ``"bits"``: bit for bit, NaN payloads included;
* ``"tol"``: NaN where NaN, the same infinity where an infinity, and elsewhere
  ``|device - host| <= ulps * ulp(host) + atol``; the default for float outputs, with 8 ulp and
  ``atol = 8 * eps * max |host|`` (eps the output format's machine epsilon), so a sum whose terms
  cancel is not held to the ulps of its small result. ``Judge("tol", ulps=..., atol=...)`` sets
  both.

``judge=`` takes one of those for every output, or a dict of them by parameter name. Every array
argument is compared, the read-only ones included (a device that writes an input is a finding);
the report lists the outputs and any other array that differs.

Without a GPU there is nothing to compare with, and ``check`` says so (a TileirError) unless it is
given ``device=``: a callable standing for the device run, called like the kernel with numpy
copies of the arguments and the configuration, writing its outputs in place (the tests pass the
host reference with one lane changed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING

import ml_dtypes
import numpy as np

from .errors import TileirError
from .switches import interpreting

if TYPE_CHECKING:  # for the annotations; the functions import judge where they use it
    from .judge import Judge, Verdict

TOL_ULPS = 8.0  # the default float judgement: 8 ulp of the host's value ...
TOL_SCALE_EPS = 8.0  # ... plus 8 machine epsilons of the output's largest magnitude
SHOWN_LANES = 4  # disagreeing lanes shown per array (compare keeps the first four)

__all__ = ["check", "CheckResult", "ArrayCheck", "random_inputs", "TOL_ULPS", "TOL_SCALE_EPS"]


@dataclass
class ArrayCheck:
    """One array argument compared: the host reference's answer against the device's."""

    name: str  # the kernel's parameter name
    pos: int  # its position among the kernel's parameters
    role: str  # In, Out, Shared, Whole (its marker), or ByPtr
    judge: Judge  # the tileir.judge Judge it was held to
    verdict: Verdict  # the tileir.judge Verdict (lanes, bad, max_err, max_ulp, first)
    host: np.ndarray = field(repr=False)  # the host reference's answer
    device: np.ndarray = field(repr=False)  # the device's

    @property
    def ok(self) -> bool:
        return self.verdict.ok

    @property
    def written(self) -> bool:
        """Whether the kernel may write it (an Out, a Shared or a ByPtr buffer)."""
        return self.role not in ("In", "Whole")

    @property
    def first_bad(self) -> list[tuple]:
        """The first disagreeing lanes: (index in the array, host value, device value), the values
        with their bits in hex for floats."""
        out: list[tuple] = []
        for lane, _, want, got in self.verdict.first[:SHOWN_LANES]:
            if lane < 0:  # the sizes differ: compare says so in one entry
                out.append(((), want, got))
                continue
            index = tuple(int(i) for i in np.unravel_index(lane, self.host.shape)) if self.host.ndim else ()
            out.append((index, want, got))
        return out

    def __str__(self) -> str:
        v = self.verdict
        shape = "x".join(str(n) for n in self.host.shape) or "scalar"
        head = f"{self.name} [{shape}] {self.host.dtype} ({self.role}), {_describe(self.judge)}: "
        if v.ok:
            head += f"all {v.lanes} lanes agree"
        else:
            head += f"{v.bad} of {v.lanes} lanes differ"
        if v.max_err:
            head += f"; max |device - host| = {v.max_err:.3g}"
            if v.max_ulp:
                head += f" ({v.max_ulp:.3g} ulp)"
        lines = [head]
        for index, want, got in self.first_bad:
            at = f"[{', '.join(map(str, index))}]" if index else "size"
            lines.append(f"    {self.name}{at}: host {want}, device {got}")
        if v.bad > SHOWN_LANES:
            lines.append(f"    ... and {v.bad - SHOWN_LANES} more")
        return "\n".join(lines)


@dataclass
class CheckResult:
    """What ``check`` found: ``ok`` when every array agrees; ``arrays`` holds one ArrayCheck per
    array argument (``[name]`` indexes them by parameter name)."""

    kernel: str
    config: dict
    device: str  # what ran as the device: "the GPU (sm_90)", or the device= callable's name
    arrays: list

    @property
    def ok(self) -> bool:
        return all(a.ok for a in self.arrays)

    @property
    def bad(self) -> list:
        """The arrays that differ."""
        return [a for a in self.arrays if not a.ok]

    def __getitem__(self, name: str) -> ArrayCheck:
        for a in self.arrays:
            if a.name == name:
                return a
        raise KeyError(f"{self.kernel} has no array argument {name!r}; it has {', '.join(a.name for a in self.arrays)}")

    def __str__(self) -> str:
        cfg = ", ".join(f"{k}={v!r}" for k, v in self.config.items())
        verdict = "every array agrees" if self.ok else \
            f"{len(self.bad)} of {len(self.arrays)} arrays differ: {', '.join(a.name for a in self.bad)}"
        lines = [f"check {self.kernel}{f'({cfg})' if cfg else ''} on {self.device} against the host reference: "
                 f"{verdict}"]
        lines += ["  " + str(a) for a in self.arrays if a.written or not a.ok]
        return "\n".join(lines)


def _callable_name(fn) -> str:
    """How the report names a device= stand-in: a kernel's bound method by the kernel's name."""
    owner = getattr(fn, "__self__", None)
    if owner is not None and hasattr(owner, "name") and hasattr(fn, "__name__"):
        return f"{owner.name}.{fn.__name__}"
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def _describe(judge) -> str:
    if judge.kind != "tol":
        return judge.kind
    parts = [f"{judge.ulps:g} ulp"] if judge.ulps else []
    if judge.atol:
        parts.append(f"{judge.atol:.2g}")
    return "within " + " + ".join(parts or ["0"])


# ---- the judgement of one array ------------------------------------------------------------------


def _is_float(a: np.ndarray) -> bool:
    return a.dtype.kind == "f" or a.dtype in (np.dtype(ml_dtypes.bfloat16), np.dtype(ml_dtypes.float8_e4m3fn),
                                             np.dtype(ml_dtypes.float8_e5m2))


def default_judge(host: np.ndarray):
    """The judgement of an array when none is given: exact for integers and flags; for floats 8
    ulp of the host's value plus 8 machine epsilons of the array's largest finite magnitude."""
    from .judge import EXACT, Judge

    if not _is_float(host):
        return EXACT
    h = host.astype(np.float64)
    finite = np.abs(h[np.isfinite(h)])
    scale = float(finite.max()) if finite.size else 0.0
    return Judge("tol", TOL_ULPS, TOL_SCALE_EPS * float(ml_dtypes.finfo(host.dtype).eps) * scale)


def _judge_for(spec, host: np.ndarray, name: str):
    from .judge import BITS, EXACT, Judge

    if isinstance(spec, dict):
        spec = spec.get(name)
    if spec is None or spec == "tol":
        return default_judge(host)
    if isinstance(spec, Judge):
        return spec
    if spec in ("exact", "bits"):
        return EXACT if spec == "exact" else BITS
    raise TileirError(f"judge={spec!r} for {name}", what="check",
                      fix="'exact', 'bits', 'tol', a tileir.judge.Judge, or a dict of them by parameter name")


# ---- copies of the arguments ---------------------------------------------------------------------


def _is_array(a) -> bool:
    return hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, (np.generic,))


def _host_copy(a) -> np.ndarray:
    """A numpy copy of an array argument (torch CPU or CUDA, cupy, numpy), in memory of its own."""
    from .runtime.arrays import is_torch_tensor, torch_to_numpy

    if is_torch_tensor(a):
        return np.array(torch_to_numpy(a), copy=True)
    if hasattr(a, "get") and not isinstance(a, np.ndarray):  # cupy
        return np.array(a.get(), copy=True)
    return np.array(a, copy=True)


def _device_copy(a, torch):
    """A GPU copy of an array argument: a CUDA tensor stays on its device, anything else goes to
    torch's current device (formats torch lacks stay numpy: the launch stages them)."""
    from .runtime.arrays import is_torch_tensor, numpy_to_torch

    if is_torch_tensor(a) and a.is_cuda:
        return a.detach().clone()
    host = _host_copy(a)
    if torch is None or (host.dtype.kind == "V" and str(host.dtype) != "bfloat16"):
        return host
    return numpy_to_torch(host, torch)


def _to_numpy(a) -> np.ndarray:
    from .runtime.arrays import is_torch_tensor, torch_to_numpy

    if is_torch_tensor(a):
        return torch_to_numpy(a)
    return np.asarray(a)


# ---- check ---------------------------------------------------------------------------------------


def _roles(kern, cfg) -> list[str]:
    from .markers import Marker

    return [m.role if isinstance(m, Marker) else "ByPtr" if m.by_ptr else "ByValue" for m in kern.markers(cfg)]


def _gpu_or_refuse(kern) -> str:
    from .assemble import gpu_name_of_device

    gpu = gpu_name_of_device()
    if gpu is None:
        raise TileirError("check compares a GPU run with the host reference, and there is no GPU here (no CUDA "
                          "driver or no device): there is nothing to compare with", kernel=kern.name, what="check",
                          fix="run check where there is a GPU; here, kern.run_host(...) runs the host reference "
                          "alone (compare it with numpy), and check(..., device=fn) compares it with fn's run")
    if interpreting():
        raise TileirError("TILEIR_INTERPRET=1 sends plain calls to the host reference, so check would compare the "
                          "host reference with itself", kernel=kern.name, what="check",
                          fix="unset TILEIR_INTERPRET (or set it to 0) to compare the GPU with the host reference")
    return gpu


def check(kern, *args, device: Callable | None = None, judge=None, grid=None, **config) -> CheckResult:
    """Run ``kern`` on the GPU (or ``device``) and on the host reference, each on its own copies of
    ``args``, and judge every array argument (module docstring). The arguments are not written."""
    if len(args) != len(kern.params):
        raise TileirError(f"{len(args)} arguments for {len(kern.params)} parameters "
                          f"({', '.join(n for n, _ in kern.params)})", kernel=kern.name, what="check",
                          fix="pass one argument a parameter, as to a call")
    fixed, _ = kern.split_sizes(dict(config))
    cfg = kern.config(**fixed)
    roles = _roles(kern, cfg)
    arrays = [i for i, a in enumerate(args) if _is_array(a)]
    extra = {} if grid is None else {"grid": grid}

    host_args = [_host_copy(a) if i in arrays else a for i, a in enumerate(args)]
    if device is None:
        gpu = _gpu_or_refuse(kern)
        cuda_torch: ModuleType | None  # torch, where it has CUDA
        try:
            import torch

            # a CPU build of torch: the call stages numpy arrays itself
            cuda_torch = torch if torch.cuda.is_available() else None
        except ImportError:
            cuda_torch = None
        dev_args = [_device_copy(a, cuda_torch) if i in arrays else a for i, a in enumerate(args)]
        kern(*dev_args, sync=True, **extra, **config)
        where = f"the GPU ({gpu})"
    else:
        dev_args = [_host_copy(a) if i in arrays else a for i, a in enumerate(args)]
        device(*dev_args, **extra, **config)
        where = f"device={_callable_name(device)}"
    kern.run_host(*host_args, **extra, **config)

    from .judge import compare

    out = []
    for i in arrays:
        name = kern.params[i][0]
        host = np.asarray(host_args[i])
        got = _to_numpy(dev_args[i])
        j = _judge_for(judge, host, name)
        verdict = compare(j, host, got.reshape(host.shape) if got.size == host.size else got)
        out.append(ArrayCheck(name, i, roles[i], j, verdict, host, got))
    return CheckResult(kern.name, dict(config), where, out)


# ---- inputs for the command line -----------------------------------------------------------------


def size_names(kern, cfg) -> list[str]:
    """The run-time sizes a call of ``kern`` under ``cfg`` reads off its arrays, by label."""
    return list(kern.plan(cfg).size_names)


def random_inputs(kern, sizes: dict, values: dict, rng: np.random.Generator, **config) -> list:
    """Arguments for ``kern``: for each parameter with declared extents, an array of the shape
    ``sizes`` gives its run-time sizes (by label: ``M``, or ``x.shape[0]`` for a DYN_DIM), random
    where it is read (normal floats, small integers), zeros for an Out; for each by-value
    parameter, ``values[name]``."""
    from .dtypes import BY_NAME
    from .ir import DYN_DIM
    from .markers import Marker, kparam_of

    cfg = kern.config(**config)
    names = size_names(kern, cfg)
    missing = [n for n in names if n not in sizes]
    if missing:
        raise TileirError(f"no value for the run-time size{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
                          kernel=kern.name, what="check",
                          fix=f"--size {'x'.join('N' for _ in names)} in the order {', '.join(names)}, or --size "
                          + ",".join(f"{n}=..." for n in names))
    out = []
    for (pname, _), m in zip(kern.params, kern.markers(cfg)):
        kp = kparam_of(m)
        npd = BY_NAME[kp.dtype].np
        if not kp.by_ptr:
            if pname not in values:
                raise TileirError(f"the by-value parameter {pname} has no value", kernel=kern.name, what="check",
                                  fix=f"--arg {pname}=VALUE")
            out.append(values[pname])
            continue
        extent = m.extent if isinstance(m, Marker) else None
        if extent is None:
            raise TileirError(f"parameter {pname} declares no extents, so its array's shape is unknown",
                              kernel=kern.name, what="check", fix="declare its extents (In / Out cells, or "
                              "Shared(fmt, shape) / Whole(fmt, shape)), or call kern.check(...) with arrays")
        shape = []
        for d, e in enumerate(extent):
            if isinstance(e, str):
                shape.append(sizes[e])
            elif e == DYN_DIM:
                shape.append(sizes[f"{pname}.shape[{d}]"])
            else:
                shape.append(int(e))
        if m.role == "Out":
            out.append(np.zeros(shape, npd))
        elif npd.kind in "iu":
            out.append(rng.integers(-100 if npd.kind == "i" else 0, 100, size=shape).astype(npd))
        elif npd.kind == "b":
            out.append(rng.integers(0, 2, size=shape).astype(bool))
        else:
            out.append(rng.standard_normal(shape).astype(np.float32).astype(npd))
    return out
