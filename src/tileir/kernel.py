"""``@tileir.kernel``: a Python function as a kernel that records once per configuration and
runs on the GPU or on the host reference.

    @ti.kernel
    def vadd(a=ti.In(ti.F32, ti.cells(["N"], [1024])), b=ti.In(ti.F32, ti.cells(["N"], [1024])),
             c=ti.Out(ti.F32, ti.cells(["N"], [1024]))):
        ti.store_cell(c, ti.load_cell(a) + ti.load_cell(b))

    vadd(x, y, z)            # torch / cupy CUDA arrays: asynchronous, on torch's current stream
    vadd.run_host(x, y, z)   # numpy arrays, the host reference
    print(vadd.mlir())       # the text; .bytecode(), .cubin("sm_90"), .program() likewise

Positional parameters declare the entry's parameters: markers (``In`` / ``Out`` / ``Shared`` /
``Whole``, whose extents may be run-time sizes read off the arrays at launch) or ``ByPtr(fmt)`` /
``ByValue(fmt)``. Keyword-only parameters are host configuration: each distinct set of values
records its own program (cached), so a number given there is a constant in the kernel; a size
that changes from call to call belongs in a marker's extent (``"M"``), not there.
"""

from __future__ import annotations

import copy
import functools
import inspect
import math
import operator
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from . import autotune
from .check import check as _check
from .errors import TileirError
from .ir import KParam
from .lru import LRU
from .markers import Marker, kparam_of
from .record import record
from .sizes import SizePlan, flat_span
from .sizes import specialising as sizes_specialise
from .switches import FAST_ENV as _FAST_ENV
from .switches import OFF as _OFF
from .switches import checking_bounds, interpreting
from .values import Param

if TYPE_CHECKING:
    from .check import CheckResult
    from .ir import Kernel
    from .judge import Judge
    from .prog import TileProg

    # what ``@kernel(grid=...)`` and ``hints=...`` take (read by type checkers only)
    _GridFn = Callable[..., int | Sequence[int]]
    _Hints = Iterable[object] | Callable[..., Iterable[object]]


def cdiv(a: int, b: int) -> int:
    """ceil(a / b) for positive ints: how many tiles of ``b`` cover ``a``."""
    return -(-a // b)


_PLAIN_KEYS = {c: ((), None, None, False, c) for c in (False, True)}  # a call with no keywords


@functools.lru_cache(maxsize=1024)
def _cached_names(fn: Callable[..., object]) -> frozenset[str]:
    return frozenset(inspect.signature(fn).parameters)


def _parameter_names(fn: Callable[..., object]) -> frozenset[str]:
    """The names ``fn`` takes (a marker, hints or grid function of the configuration): read once per
    function, as inspect.signature costs about 20 us and a launch with a grid function asks every
    time (an unhashable callable is read each time)."""
    try:
        return _cached_names(fn)
    except TypeError:
        return frozenset(inspect.signature(fn).parameters)


def _pow2_at_least(v: int) -> int:
    return 1 if v <= 1 else 1 << (v - 1).bit_length()


def _size_class(v: int) -> int:
    """A tuned call's size key: its power-of-two bucket, negated where the size is not exactly the
    bucket (so a variant knows whether its sizes fill their one-cell tiles: ``_CallSite._full_cells``)."""
    b = 1 if v <= 1 else 1 << (v - 1).bit_length()
    return b if v == b else -b


class KernelFn:
    """A kernel: see the module docstring. Call it on device arrays (GPU), ``run_host`` on numpy
    arrays (the host reference), ``mlir`` / ``bytecode`` / ``cubin`` / ``program`` for its forms."""

    def __init__(self, fn: Callable[..., object], name: str | None = None, grid: _GridFn | None = None,
                 hints: _Hints = (), tuned: Iterable[str] = (), exact: Iterable[str] = ()):
        self.fn = fn
        self.tuned = tuple(tuned)
        self.exact = (exact,) if isinstance(exact, str) else tuple(exact)
        self.name = name or fn.__name__
        self.grid_fn: Callable[..., Any] | None = grid
        self.hints = hints if callable(hints) else tuple(hints)
        self.params: list[tuple[str, Any]] = []  # (name, KParam | Marker | a function of the config)
        self.static: dict[str, Any] = {}
        for p in inspect.signature(fn).parameters.values():
            if p.kind == p.KEYWORD_ONLY:
                self.static[p.name] = p.default
            elif isinstance(p.default, (KParam, Marker)) or callable(p.default):
                self.params.append((p.name, p.default))
            else:
                raise TileirError(f"parameter {p.name!r} has no marker: give it a default of In/Out/Shared/Whole, "
                                  "ByPtr(fmt) (a buffer) or ByValue(fmt) (a scalar), or make it keyword-only "
                                  "(after *) for host configuration", kernel=self.name)
        self._fresh_caches()
        self.__doc__ = fn.__doc__
        self.__name__ = self.name
        self.__wrapped__ = fn
        autotune.know(self)  # so autotune.best("name", ...) and the tune cache's keys find it by name

    def _fresh_caches(self) -> None:
        # bounded (lru.py: TILEIR_MEMORY_CACHE_ENTRIES each): a sweep over configurations keeps the
        # recent ones, not every one for the life of the process
        self._progs = LRU()
        self._cubins = LRU()
        self._sites = LRU()  # (call keywords, arch, opt level, grid given) -> _CallSite
        self._markers = LRU()
        self._plans = LRU()
        self._made = {"recordings": 0, "cubins": 0}  # how many were made (an eviction makes one again)
        self._full_twins: dict = {}  # the one-cell sizes recorded -> the twin that records them (_full_cells)

    def __repr__(self) -> str:
        return f"<tileir kernel {self.name}>"

    def specialised(self, exact: Iterable[str] | str = "all") -> KernelFn:
        """This kernel with the named run-time sizes -- or ``"all"``: every size and stride -- recorded
        as each call's values, so every new value records and assembles again, as when sizes were
        configuration. The sizes the kernel already records (``@kernel(exact=...)``) stay recorded.
        The same name, configuration and tune entries; caches of its own. What run-time sizes cost
        is measured against it (bench/h200.py's ``tileir_exact`` column)."""
        twin = self.fresh()
        named = (exact,) if isinstance(exact, str) else tuple(exact)
        twin.exact = self.exact + tuple(n for n in named if n not in self.exact)
        unknown = set(twin.exact) - {"all"} - set(self.size_labels())
        if unknown:
            raise TileirError(f"specialised({sorted(unknown)}): not run-time sizes of this kernel", kernel=self.name,
                              what="exact", fix=f"names among {self.size_labels()}, or 'all'")
        return twin

    def fresh(self) -> KernelFn:
        """This kernel with nothing recorded, assembled or prepared yet (its own caches and counts):
        what a benchmark or a test counts recordings and cubins on."""
        twin = copy.copy(self)
        twin._fresh_caches()
        return twin

    def size_labels(self) -> list[str]:
        """The names of the default configuration's run-time sizes (what ``specialised`` takes)."""
        return self.plan(self.config()).size_names

    # -- configuration --------------------------------------------------------------------------
    def config(self, **static: object) -> dict[str, Any]:
        """The whole configuration of a call with these keywords: the kernel's defaults filled in,
        numpy integers taken as ints, a float where the default is an int refused."""
        cfg: dict[str, Any] = {}
        for k, default in self.static.items():
            if k in static:
                cfg[k] = self._config_value(k, static.pop(k), default)
            elif default is inspect.Parameter.empty:
                raise TileirError(f"missing configuration {k}=...", kernel=self.name)
            else:
                cfg[k] = default
        if static:
            sized = any(isinstance(getattr(m, "extent", None), tuple) for _, m in self.params) or any(
                callable(m) and not isinstance(m, (KParam, Marker)) for _, m in self.params)
            raise TileirError(f"unknown configuration {', '.join(static)}; this kernel takes "
                              f"{', '.join(self.static) or 'none'}", kernel=self.name,
                              fix="leave them out if they are sizes: sizes come from the arrays" if sized else None)
        return cfg

    def _config_value(self, k, v, default):
        if isinstance(v, np.integer):
            v = int(v)
        if isinstance(v, np.floating):
            v = float(v)
        if isinstance(default, float) and isinstance(v, int) and not isinstance(v, bool):
            return float(v)  # eps=0 and eps=0.0 are one configuration (one recording)
        wants_int = isinstance(default, int) and not isinstance(default, bool)
        if wants_int and isinstance(v, float):
            raise TileirError(f"configuration {k}={v!r} is a float; {k} is an int", kernel=self.name, what=k,
                              fix=f"{k}={int(v)}" if v == int(v) else f"an int {k}")
        if wants_int and (v is None or isinstance(v, str)):
            raise TileirError(f"configuration {k}={v!r}; {k} is an int", kernel=self.name, what=k,
                              fix=f"an int, like the default {default}")
        return v

    def _key(self, cfg) -> tuple:
        return tuple(sorted((k, repr(v)) for k, v in cfg.items()))

    def markers(self, cfg) -> tuple:
        """Each parameter's marker (or KParam) for this configuration (made once per configuration)."""
        key = self._key(cfg)
        got = self._markers.get(key)
        if got is None:
            got = self._markers[key] = self._make_markers(cfg)
        return got

    def _make_markers(self, cfg) -> tuple:
        out = []
        for _, m in self.params:
            if not isinstance(m, (KParam, Marker)):
                wanted = _parameter_names(m)
                m = m(**{k: v for k, v in cfg.items() if k in wanted})
                if not isinstance(m, (KParam, Marker)):
                    raise TileirError(f"a parameter's marker function answered {m!r}, not a marker", kernel=self.name)
            out.append(m)
        return tuple(out)

    def plan(self, cfg: Mapping[str, object], checked: bool = False) -> SizePlan:
        """The run-time sizes and strides of this configuration's markers (tileir.sizes); with
        ``checked``, each buffer's span too (the bounds-checked variant)."""
        key = (self._key(cfg), checked)
        got = self._plans.get(key)
        if got is None:
            got = self._plans[key] = SizePlan(self.name, [n for n, _ in self.params], self.markers(cfg), checked,
                                              self.exact)
        return got

    def hints_for(self, cfg) -> tuple:
        """The entry's optimization hints for this configuration: ``@kernel(hints=[...])`` as given,
        or ``@kernel(hints=fn)`` called with the configuration's names it takes (so a tuned
        configuration can carry warps or occupancy)."""
        h: Any = self.hints
        if callable(h):
            wanted = _parameter_names(h)
            h = h(**{k: v for k, v in cfg.items() if k in wanted})
            if not isinstance(h, (list, tuple)):
                raise TileirError(f"the hints function answered {h!r}, not a list of for_arch(...) entries",
                                  kernel=self.name)
        return tuple(h)

    def tuned_config(self, static: dict[str, Any], gpu: str | None,
                     sizes: Mapping[str, int] | None = None) -> dict[str, Any]:
        """``static`` with the tuned keys (``@kernel(tuned=[...])``: tiles, hints) filled from
        ``autotune.best`` for ``gpu`` and the call's run-time ``sizes`` (by name) -- the tune
        cache's winner for their bucket, else the committed default table's -- when the call names
        none of them; a call that names any keeps its own choice whole, so a tile the caller chose
        never meets a partner it did not. Unchanged where nothing applies."""
        if not self.tuned or gpu is None or any(k in static for k in self.tuned):
            return static
        got = autotune.best(self, gpu, **{**(sizes or {}), **static}) or {}  # a configuration key wins a name clash
        return dict(static, **{k: v for k, v in got.items() if k in self.tuned})

    def kparams(self, cfg, checked: bool = False) -> tuple:
        """The entry's parameters: the kernel's own, then the hidden run-time sizes and strides."""
        own = tuple(kparam_of(m) for m in self.markers(cfg))
        return own + (KParam("i32", False),) * len(self.plan(cfg, checked).hidden)

    def program(self, div16: Iterable[bool | int] = (), checked: bool = False, **static: object) -> TileProg:
        """The recorded TileProg for this configuration (recorded once, then cached). ``div16``:
        per hidden stride, whether the program claims it a multiple of 16 (a launch specialises
        on it; tileir.sizes), then a specialised call's exact sizes (``SizePlan.div16``);
        ``checked``: pointer loads and stores assert their lanes inside the arrays passed (the
        bounds-checked variant, TILEIR_CHECK_BOUNDS)."""
        cfg = self.config(**static)
        key = (self._key(cfg), tuple(div16), checked)
        prog = self._progs.get(key)
        if prog is None:
            marks = self.markers(cfg)
            args: list[Param] = [Param(i, kparam_of(m).dtype, kparam_of(m).by_ptr, n) for i, ((n, _), m) in
                    enumerate(zip(self.params, marks))]
            prog = record(self.name, marks, lambda: self.fn(*args, **cfg), self.hints_for(cfg),
                          sizes=self.plan(cfg, checked), div16=tuple(div16))
            self._progs[key] = prog
            self._made["recordings"] += 1
        return prog

    def kernel(self, div16: Iterable[bool] = (), checked: bool = False, **static: object) -> Kernel:
        """The lowered Kernel (typed Tile IR instructions)."""
        from .lower import lower

        return lower(self.program(div16, checked, **static))

    def mlir(self, div16: Iterable[bool] = (), checked: bool = False, **static: object) -> str:
        """The cuda_tile text of this configuration (what tileirdisasm prints for its bytes)."""
        from .render import render_kernel

        return render_kernel(self.kernel(div16, checked, **static))

    def bytecode(self, version: str | tuple[int, int] | None = None, div16: Iterable[bool] = (),
                 checked: bool = False, **static: object) -> bytes:
        """The Tile IR bytecode (13.4 unless ``version`` says otherwise)."""
        from .bytecode import encode_kernel

        return encode_kernel(self.kernel(div16, checked, **static), version)

    def cubin(self, arch: str = "sm_90", opt_level: int | None = None, div16: Iterable[bool] = (),
              checked: bool = False, **static: object) -> bytes:
        """The cubin tileiras makes of the bytecode for ``arch`` (cached on disk). tileiras runs at
        its own level unless ``opt_level`` forces one or this kernel reaches an assembler defect
        known for ``arch`` (``assemble.kernel_args``, docs/assembler-defect.md)."""
        from .assemble import assemble
        from .bytecode import encode_kernel

        cfg = self.config(**static)
        key = (self._key(cfg), arch, opt_level, tuple(div16), checked)
        got = self._cubins.get(key)
        if got is None:
            k = self.kernel(div16, checked, **cfg)
            got = assemble(encode_kernel(k), arch, kernel=self.name, opt_level=opt_level, program=k)
            self._cubins[key] = got
            self._made["cubins"] += 1
        return got

    def compiled(self) -> dict[str, int]:
        """How many recordings and cubins this kernel has made so far (a new size should add none;
        the cubin count includes those the disk cache served)."""
        return dict(self._made)

    # -- sizes and grids --------------------------------------------------------------------------
    def sizes(self, *arrays: Any, **static: object) -> list[int]:
        """The hidden parameters (run-time sizes, then strides) a call with ``arrays`` passes."""
        return self.plan(self.config(**static)).values(arrays)

    def grid(self, *arrays: Any, **static: object) -> tuple[int, ...]:
        """The launch grid: ``@kernel(grid=fn)`` called with the configuration, the by-value
        arguments and the named run-time sizes (by name); else the cells' blocks along each axis."""
        cfg = self.config(**static)
        plan = self.plan(cfg)
        values = plan.values(arrays)
        return self._grid_of(cfg, plan, arrays, values)

    def _grid_of(self, cfg, plan, arrays, values) -> tuple[int, ...]:
        if self.grid_fn is None:
            if not plan.axes:
                raise TileirError("no grid: pass grid=(x, y, z) to the call, give @kernel(grid=...), or declare "
                                  "parameters with cells (In / Out markers)", kernel=self.name)
            return plan.grid(values)
        names = dict(cfg)
        for (pname, _), m, value in zip(self.params, self.markers(cfg), arrays):
            if not kparam_of(m).by_ptr:
                names[pname] = value
        names.update(plan.named(values))
        wanted = _parameter_names(self.grid_fn)
        g = self.grid_fn(**{k: v for k, v in names.items() if k in wanted})
        return tuple(g) if isinstance(g, (tuple, list)) else (int(g),)

    def split_sizes(self, static: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """(configuration, sizes the call asserts by name): a keyword that is not configuration but
        names a run-time size (``M=1000``) is checked against the arrays, not recorded."""
        extra = {k: v for k, v in static.items() if k not in self.static}
        if not extra:
            return static, {}
        conf = {k: v for k, v in static.items() if k in self.static}
        names = set(self.plan(self.config(**conf)).size_names)
        unknown = [k for k in extra if k not in names]
        if unknown:
            self.config(**static)  # refuses, naming them
        return conf, extra

    def _check_asserted(self, plan, values, asserted) -> None:
        named = plan.named(values)
        for k, v in asserted.items():
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TileirError(f"{k}={v!r}: a size is an int", kernel=self.name, what=k,
                                  fix=f"leave {k} out: it is read from the arrays")
            if int(v) != named[k]:
                raise TileirError(f"{k}={v} was given, and the arrays say {k} is {named[k]}", kernel=self.name,
                                  what=k, fix=f"leave {k} out (it is read from the arrays), or pass arrays of {k}={v}")

    # -- running --------------------------------------------------------------------------------
    def run_host(self, *arrays: Any, grid: Sequence[int] | None = None, check_bounds: bool | None = None,
                 **static: object) -> None:
        """Run on the host reference: numpy arrays for buffers (written in place, strided ones
        too), numbers for values. ``check_bounds`` (default: TILEIR_CHECK_BOUNDS): pointer loads
        and stores assert their lanes inside the arrays passed, naming the first bad lane."""
        from .ref import run_host

        checked = checking_bounds() if check_bounds is None else bool(check_bounds)
        static, asserted = self.split_sizes(static)
        cfg = self.config(**static)
        plan = self.plan(cfg, checked)
        values = plan.values(arrays)
        self._check_asserted(plan, values, asserted)
        # a specialised kernel's host program holds the call's exact sizes too (no other claims: one
        # host recording per configuration)
        spec = plan.exact_only(values) if plan.exact_slots else ()
        prog = self.program(spec, checked=checked, **cfg)
        for p in sorted(prog.dense & set(plan.ranks)):
            a = arrays[p]
            if isinstance(a, np.ndarray) and not a.flags.c_contiguous:
                raise TileirError("this array has gaps (a slice), and the kernel reads it as dense rows (load, store "
                                  "or retile compute its element offsets)", kernel=self.name,
                                  what=f"argument {p} ({self.params[p][0]})",
                                  fix="np.ascontiguousarray(a) / a.contiguous(); or read it through its cells / "
                                      "array_view, which follow the strides")
        args = [flat_span(a) if isinstance(a, np.ndarray) and i in plan.ranks else a for i, a in enumerate(arrays)]
        g = tuple(grid) if grid is not None else self._grid_of(cfg, plan, arrays, values)
        ran = run_host(prog, args + list(values), g)
        if ran.printed:  # what d_print wrote goes to standard output, as the device's does
            sys.stdout.write("".join(ran.printed))

    def __call__(self, *arrays: Any, grid: Sequence[int] | None = None, stream: object = None,
                 arch: str | None = None, opt_level: int | None = None, sync: bool = False,
                 check_bounds: bool | None = None, **static: object) -> None:
        """Run on the GPU: torch/cupy arrays (no copies; asynchronous, on torch's current stream of
        the arrays' device unless ``stream`` names another; ``sync=True`` waits) or numpy arrays
        (copied in and out; the call waits). With ``TILEIR_INTERPRET=1`` it runs on the host
        reference instead (numpy arrays and CPU torch tensors in place). ``check_bounds`` (default:
        TILEIR_CHECK_BOUNDS): the bounds-checked variant -- a pointer load or store with a lane
        outside the array passed stops the kernel (an assert naming kernel, op and parameter; the
        host reference also names the lane) -- and the call waits for it.

        The first call of a configuration records, lowers, encodes, assembles and loads; later
        calls, of any size, find the loaded function and only read the sizes, pack the arguments
        and launch (bench/launch_overhead.py measures it)."""
        env = _FAST_ENV
        if env is not None:  # the two switches read inline: a plain call is a hot path
            checked = env.get(b"TILEIR_CHECK_BOUNDS") not in _OFF if check_bounds is None else bool(check_bounds)
            interpret = env.get(b"TILEIR_INTERPRET") not in _OFF
        else:
            checked = checking_bounds() if check_bounds is None else bool(check_bounds)
            interpret = interpreting()
        if interpret:
            return self._interpret(arrays, grid, dict(static, check_bounds=checked))
        if static or arch is not None or opt_level is not None or grid is not None:
            key: tuple | None = (tuple(static.items()), arch, opt_level, grid is not None, checked)
        else:
            key = _PLAIN_KEYS[checked]
        try:
            site = self._sites.get(key)
        except TypeError:  # an unhashable configuration value: a fresh site every time
            key, site = None, None
        if site is None:
            site = _CallSite(self, dict(static), arch, opt_level, grid is not None, checked)
            if key is not None:
                self._sites[key] = site
        site(arrays, grid, stream, sync or checked)

    def _interpret(self, arrays, grid, static) -> None:
        from .runtime.arrays import host_view

        views = [host_view(a) for a in arrays]
        self.run_host(*[v for v, _ in views], grid=grid, **static)
        for (v, back), a in zip(views, arrays):
            if back is not None:
                back(a, v)

    def forget(self) -> None:
        """Drop the prepared calls (a new tune winner then takes effect at the next call)."""
        self._sites.clear()

    def check(self, *args: Any, device: Callable[..., object] | None = None,
              judge: Judge | str | Mapping[str, Judge | str] | None = None,
              grid: Sequence[int] | None = None, **static: object) -> CheckResult:
        """Run on the GPU and on the host reference, each on copies of ``args``, and judge every
        array lane by lane (tileir.check): a CheckResult whose ``ok`` says whether they agree and
        whose text names the lanes that differ. ``device``: a callable standing in for the GPU."""
        return _check(self, *args, device=device, judge=judge, grid=grid, **static)


class _CallSite:
    """Everything a call with one set of keywords needs after its first time: the configuration,
    the size plan, and per (shape bucket, stride claims) the launcher and its grid rule. A call
    reads the hidden sizes off the arrays, picks its variant and launches."""

    def __init__(self, fn: KernelFn, static: dict, arch, opt_level, grid_given: bool, checked: bool = False):
        from .assemble import gpu_name_of_device

        self.fn = fn
        self.target = arch or gpu_name_of_device()
        if self.target is None:
            raise TileirError("there is no GPU here", kernel=fn.name,
                              fix="TILEIR_INTERPRET=1 runs plain calls on the host reference; or "
                                  f"{fn.name}.run_host(...)")
        self.opt_level = opt_level
        self.static, self.asserted = fn.split_sizes(static)
        self.base = fn.config(**self.static)
        self.checked = checked
        self.plan = fn.plan(self.base, checked)
        # a call that gives its own grid keeps its configuration as written (no tuned keys filled in):
        # the grid was worked out for that configuration
        self.tuned = bool(fn.tuned) and not grid_given and not any(k in self.static for k in fn.tuned)
        self.variants: dict = {}
        self.size_slots = tuple(k for k, h in enumerate(self.plan.hidden) if h.kind == "size")
        self.reader = None
        if sizes_specialise() and not self.asserted and not checked:
            from .runtime.fastpath import reader

            self.reader = reader(self.plan, [(kp.dtype, kp.by_ptr) for kp in fn.kparams(self.base)], len(fn.params))

    def __call__(self, arrays, grid, stream, sync) -> None:
        if self.reader is not None:  # the generated path: every check in a few comparisons
            got = self.reader(arrays)
            if got is not None:
                device, slots, values, claims = got
                key = (claims, tuple(_size_class(values[k]) for k in self.size_slots)) if self.tuned else claims
                variant = self.variants.get(key)
                if variant is not None and variant[0]._checked and (
                        not variant[2] or all(arrays[p].is_contiguous() for p in variant[2])):
                    launcher, grid_rule, _, grid3 = variant
                    if grid is None and stream is None and grid3 is not None:
                        g = grid3(values)  # three ints in the driver's limits, or None: the checked way
                        if g is not None:
                            launcher.launch_ready(device, slots, g, sync)
                            return
                    if grid is None:
                        grid = grid_rule(arrays, values)
                    launcher.launch_slots(device, slots, grid, stream, sync, arrays if stream is not None else ())
                    return
        plan = self.plan  # the full path: the generic reader, which says what is wrong
        if len(arrays) != len(self.fn.params):
            raise TileirError(f"takes {len(self.fn.params)} argument(s) ({', '.join(n for n, _ in self.fn.params)}), "
                              f"got {len(arrays)}", kernel=self.fn.name, what="launch")
        values = plan.values(arrays) if plan else []
        claims = plan.div16(values, arrays) if plan else ()
        if self.asserted:
            self.fn._check_asserted(plan, values, self.asserted)
        key = (claims, tuple(_size_class(values[k]) for k in self.size_slots)) if self.tuned else claims
        got = self.variants.get(key)
        if got is None:
            got = self.variants[key] = self._prepare(claims, values)
        launcher, grid_rule = got[0], got[1]
        if grid is None:
            grid = grid_rule(arrays, values)
        launcher(grid, arrays + tuple(values) if values else arrays, stream, sync)

    def _prepare(self, spec, values):
        """(launcher, grid rule) of the variant these sizes and stride claims select: the tuned
        configuration for their bucket, recorded, assembled and loaded once."""
        from .runtime.launch import launcher_for

        fn = self.fn
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
            raise TileirError("a first call of this configuration (or of a new size class: stride or alignment) "
                              "inside CUDA graph capture: it would assemble and load a cubin, which a capture "
                              "cannot hold", kernel=fn.name, what="launch",
                              fix="call the kernel once with the same arrays before torch.cuda.graph(...) (warm-up)")
        static = self.static
        if self.tuned:
            static = fn.tuned_config(dict(static), self.target, self.plan.named(values))
        cfg = fn.config(**static)
        plan = fn.plan(cfg, self.checked)
        if [h.label for h in plan.hidden] != [h.label for h in self.plan.hidden]:
            raise TileirError("the tuned configuration's markers declare other run-time sizes than the defaults'",
                              kernel=fn.name, fix="keep a marker's extents independent of its tiles")
        # a tuned configuration whose cells cover a run-time extent with one cell (one_cell) serves the
        # whole bucket only where the bucket fits that cell: the launches of this variant are checked
        # against the defaults' plan, which has no such limit (a stale or hand-made tune entry)
        for p, d, t in plan.limits if self.tuned else ():
            if _pow2_at_least(plan.extent_value(values, p, d)) > t:
                warnings.warn(f"kernel '{fn.name}': the tuned configuration {static} covers dimension {d} of "
                              f"argument {p} with one cell of {t}, and this call's size bucket is wider; the "
                              "kernel's defaults run instead (retune, or clear the entry: tileir cache clear "
                              "--tune)", stacklevel=4)
                static = self.static
                cfg = fn.config(**static)
                plan = fn.plan(cfg, self.checked)
                break
        maker, spec = self._full_cells(cfg, plan, values, spec)
        # self.target is a str: __init__ refuses None
        cubin = maker.cubin(self.target, self.opt_level, spec, self.checked, **cfg)  # type: ignore[arg-type]
        prog = maker.program(spec, self.checked, **cfg)
        params = [(kp.dtype, kp.by_ptr) for kp in fn.kparams(cfg, self.checked)]
        dense = frozenset(prog.dense & set(plan.ranks))  # read as dense rows: contiguous arrays only
        launcher = launcher_for(cubin, fn.name, params, written=prog.written, strided=set(plan.ranks) - dense,
                                unaligned=prog.unaligned)
        fast = plan.fast_grid() if fn.grid_fn is None else _user_grid(fn, cfg, plan)

        def grid_rule(arrays, values):
            g = fast(values) if fast is not None else None
            return g if g is not None else fn._grid_of(cfg, plan, arrays, values)

        return launcher, grid_rule, dense, fast

    def _full_cells(self, cfg, plan: SizePlan, values, spec) -> tuple[KernelFn, tuple]:
        """The kernel and claims to record for a tuned variant whose run-time sizes exactly fill the
        one cell its configuration covers them with (``cells(one_cell=...)``: a row norm's width of
        8192 in a tile of 8192): those sizes recorded as constants, so nothing is masked. Every call
        this variant serves has the same size there -- its key holds the size's power-of-two bucket
        and whether the size is the bucket (``_size_class``), and the tile is at least the bucket --
        so the constant holds for all of them. Measured: layernorm f16 8192^2 ran 1.10x slower with
        the width run-time than recorded (bench/results/exact_sizes_rounds_h200.json: the masked program, 5 rounds).
        TILEIR_SPECIALISE_SIZES=0 turns it off with the other size claims."""
        fn = self.fn
        if not (self.tuned and plan.size_slots and not plan.exact_slots and not self.checked
                and len(spec) == len(plan.claim_slots) + len(plan.array_params)):  # div16's whole layout
            return fn, spec
        full = []
        for p, d, t in plan.limits:
            e = plan.extent[(p, d)]
            if values[e[1]] == t and plan.hidden[e[1]].label not in full:
                full.append(plan.hidden[e[1]].label)
        if not full:
            return fn, spec
        twins = fn._full_twins
        twin = twins.get(tuple(full))
        if twin is None:
            twin = twins[tuple(full)] = fn.specialised(full)
            twin._made = fn._made  # its recordings and cubins are this kernel's (compiled() counts them)
        return twin, tuple(spec) + tuple(values[k] for k in twin.plan(cfg).exact_slots)


GRID_ANSWERS_KEPT = 4096  # a user grid's answers kept per variant (then forgotten together)


def _user_grid(fn: KernelFn, cfg: Mapping[str, object], plan: SizePlan):
    """A function of ``values`` answering ``@kernel(grid=fn)``'s grid as three ints within the
    driver's limits (else None: the checked way, which says what is wrong), with the configuration's
    names bound once; None where the grid function takes a by-value argument (read off the call).
    The generic ``_grid_of`` (a names dict, the markers, the plan's
    named sizes, the signature) was a third of a gemm call's host time under cProfile on the H200's host
    (bench/gemm_host_profile.py: 0.109 of 0.335 s over 3000 calls; the plain call 24-37 us)."""
    grid_fn = fn.grid_fn
    if grid_fn is None:
        return None
    wanted = _parameter_names(grid_fn)
    if any(n in wanted for (n, _), m in zip(fn.params, fn.markers(cfg)) if not kparam_of(m).by_ptr):
        return None
    sizes = tuple((h.label, k) for k, h in enumerate(plan.hidden)
                  if h.kind == "size" and h.label.isidentifier() and h.label in wanted)
    sized = {n for n, _ in sizes}
    const = {k: v for k, v in cfg.items() if k in wanted and k not in sized}
    # the answers by the sizes the grid function reads: a training step calls the same few sizes again
    # and again, and the function's call with keywords was the costliest part of a launch's Python
    # (8 us of a gemm's under cProfile on the H200's host: bench/results/op_host_cost_after_h200.json);
    # the grid is a function of the configuration and those sizes alone (@kernel(grid=...))
    slots = tuple(k for _, k in sizes)
    answers: dict = {}

    def fast(values):
        key = tuple([values[k] for k in slots])
        g = answers.get(key)
        if g is None:
            g = counted(values)
            if g is not None:
                if len(answers) >= GRID_ANSWERS_KEPT:
                    answers.clear()
                answers[key] = g
        return g

    def counted(values):
        kw = dict(const)
        for n, k in sizes:
            kw[n] = values[k]
        g = grid_fn(**kw)
        g = tuple(g) if isinstance(g, (tuple, list)) else (g,)
        counts = []
        for x in g:  # ints, numpy's too; not bools or floats (the checked way words those)
            if isinstance(x, bool):
                return None
            try:
                counts.append(operator.index(x))
            except TypeError:
                return None
        if not 1 <= len(counts) <= 3 or min(counts) <= 0:
            return None
        g = tuple(counts)
        g = g + (1,) * (3 - len(g))
        return g if g[0] < 2**31 and g[1] <= 65535 and g[2] <= 65535 else None

    return fast


@overload
def kernel(fn: Callable[..., object], *, name: str | None = None, grid: _GridFn | None = None, hints: _Hints = (),
           tuned: Iterable[str] = (), exact: Iterable[str] = ()) -> KernelFn: ...


@overload
def kernel(fn: None = None, *, name: str | None = None, grid: _GridFn | None = None, hints: _Hints = (),
           tuned: Iterable[str] = (), exact: Iterable[str] = ()) -> Callable[[Callable[..., object]], KernelFn]: ...


def kernel(fn: Callable[..., object] | None = None, *, name: str | None = None, grid: _GridFn | None = None,
           hints: _Hints = (), tuned: Iterable[str] = (),
           exact: Iterable[str] = ()) -> KernelFn | Callable[[Callable[..., object]], KernelFn]:
    """Make ``fn`` a kernel: its positional parameters' markers are the entry's parameters, its
    keyword-only parameters its configuration (one recording each).

    ``grid``: a function answering the launch grid, called with the configuration, the by-value
    arguments and the named run-time sizes it takes by name (default: from the cells' extents); a
    pure function of those: without by-value arguments its answer is kept per configuration and
    sizes, and asked again only for new sizes;
    ``hints``: the entry's optimization hints, or a function of the configuration answering them;
    ``tuned``: configuration keys a GPU call leaves to ``autotune.best`` when it names none of them;
    ``exact``: run-time sizes recorded as each call's values (one program per value) -- for sizes
    that take few values in a program and measurably pay as constants, as ``specialised`` does.
    Usable bare (``@kernel``) or with arguments (``@kernel(grid=...)``)."""
    if fn is None:
        return lambda f: KernelFn(f, name, grid, hints, tuned, exact)
    return KernelFn(fn, name, grid, hints, tuned, exact)


def trace_kernel(name: str, params, body, hints=()):
    """The spec's spelling: record ``body()`` (which reads parameters with ``param(fmt, pos)``) as a
    kernel named ``name`` with entry parameters ``params`` (ByPtr / ByValue); answers the TileProg."""
    return record(name, tuple(params), body, hints)


__all__ = ["kernel", "KernelFn", "trace_kernel", "cdiv", "math", "interpreting"]
