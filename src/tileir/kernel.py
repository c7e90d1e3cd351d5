"""``@tileir.kernel``: a Python function as a kernel that records once per configuration and
runs on the GPU or on the host reference.

    @ti.kernel(grid=lambda n, tile=1024: (ti.cdiv(n, tile),))
    def vadd(a=ti.ByPtr(ti.F32), b=ti.ByPtr(ti.F32), c=ti.ByPtr(ti.F32), *, n: int, tile: int = 1024):
        base = ti.tile_at(ti.block_id(0), tile)
        m = ti.tail_mask(base, [tile], n)
        ti.store(c, base, ti.load(a, base, [tile], mask=m) + ti.load(b, base, [tile], mask=m), mask=m)

    vadd(x, y, z, n=len(x))          # torch / cupy arrays on the GPU, no copies
    vadd.run_host(x, y, z, n=len(x))  # numpy arrays, the host reference
    print(vadd.mlir(n=1000))          # the text; .bytecode(), .cubin("sm_90"), .program() likewise

Positional parameters declare the entry's parameters (``ByPtr(fmt)``: a buffer; ``ByValue(fmt)``:
a scalar passed by value). Keyword-only parameters are host configuration: each distinct set of
values records its own program (cached), so a size given there is a constant in the kernel.
"""

from __future__ import annotations

import inspect
import math

from .errors import TileirError
from .ir import KParam
from .markers import Marker, grid_from_markers, kparam_of
from .record import record
from .values import Param


def cdiv(a: int, b: int) -> int:
    """ceil(a / b) for positive ints: how many tiles of ``b`` cover ``a``."""
    return -(-a // b)


class KernelFn:
    def __init__(self, fn, name=None, grid=None, hints=(), tuned=()):
        self.fn = fn
        self.tuned = tuple(tuned)
        self.name = name or fn.__name__
        self.grid_fn = grid
        self.hints = hints if callable(hints) else tuple(hints)
        self.params: list[tuple[str, object]] = []  # (name, KParam | Marker | a function of the config)
        self.static: dict = {}
        for p in inspect.signature(fn).parameters.values():
            if p.kind == p.KEYWORD_ONLY:
                self.static[p.name] = p.default
            elif isinstance(p.default, (KParam, Marker)) or callable(p.default):
                self.params.append((p.name, p.default))
            else:
                raise TileirError(f"parameter {p.name!r} has no marker: give it a default of In/Out/Shared/Whole, "
                                  "ByPtr(fmt) (a buffer) or ByValue(fmt) (a scalar), or make it keyword-only "
                                  "(after *) for host configuration", kernel=self.name)
        self._progs: dict = {}
        self._cubins: dict = {}
        self._fast: dict = {}  # (call keywords, arch, opt level) -> (launcher, grid rule)
        self._markers: dict = {}
        self.__doc__ = fn.__doc__
        self.__name__ = self.name

    # -- configuration --------------------------------------------------------------------------
    def config(self, **static) -> dict:
        cfg = {}
        for k, default in self.static.items():
            if k in static:
                cfg[k] = static.pop(k)
            elif default is inspect.Parameter.empty:
                raise TileirError(f"missing configuration {k}=...", kernel=self.name)
            else:
                cfg[k] = default
        if static:
            raise TileirError(f"unknown configuration {', '.join(static)}; this kernel takes "
                              f"{', '.join(self.static) or 'none'}", kernel=self.name)
        return cfg

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
                wanted = inspect.signature(m).parameters
                m = m(**{k: v for k, v in cfg.items() if k in wanted})
                if not isinstance(m, (KParam, Marker)):
                    raise TileirError(f"a parameter's marker function answered {m!r}, not a marker", kernel=self.name)
            out.append(m)
        return tuple(out)

    def hints_for(self, cfg) -> tuple:
        """The entry's optimization hints for this configuration: ``@kernel(hints=[...])`` as given,
        or ``@kernel(hints=fn)`` called with the configuration's names it takes (so a tuned
        configuration can carry warps or occupancy)."""
        h = self.hints
        if callable(h):
            wanted = inspect.signature(h).parameters
            h = h(**{k: v for k, v in cfg.items() if k in wanted})
            if not isinstance(h, (list, tuple)):
                raise TileirError(f"the hints function answered {h!r}, not a list of for_arch(...) entries",
                                  kernel=self.name)
        return tuple(h)

    def tuned_config(self, static: dict, gpu: str | None) -> dict:
        """``static`` with the tuned keys (``@kernel(tuned=[...])``: tiles, hints) filled from
        ``autotune.best`` for ``gpu`` -- the tune cache's winner, else the committed default table's
        -- when the call names none of them; a call that names any keeps its own choice whole, so
        a tile the caller chose never meets a partner it did not. Unchanged where nothing applies."""
        if not self.tuned or gpu is None or any(k in static for k in self.tuned):
            return static
        from .autotune import best

        got = best(self, gpu, **static) or {}
        return dict(static, **{k: v for k, v in got.items() if k in self.tuned})

    def launch_config(self, arch: str | None = None, **static) -> dict:
        """The whole configuration a GPU call with these keywords runs (tuned keys filled in)."""
        from .assemble import gpu_name_of_device

        return self.config(**self.tuned_config(dict(static), arch or gpu_name_of_device()))

    def kparams(self, cfg) -> tuple:
        return tuple(kparam_of(m) for m in self.markers(cfg))

    def program(self, **static):
        """The recorded TileProg for this configuration (recorded once, then cached)."""
        cfg = self.config(**static)
        key = self._key(cfg)
        prog = self._progs.get(key)
        if prog is None:
            marks = self.markers(cfg)
            args = [Param(i, kparam_of(m).dtype, kparam_of(m).by_ptr, n) for i, ((n, _), m) in
                    enumerate(zip(self.params, marks))]
            prog = record(self.name, marks, lambda: self.fn(*args, **cfg), self.hints_for(cfg))
            self._progs[key] = prog
        return prog

    def kernel(self, **static):
        """The lowered Kernel (typed Tile IR instructions)."""
        from .lower import lower

        return lower(self.program(**static))

    def mlir(self, **static) -> str:
        """The cuda_tile text of this configuration (what tileirdisasm prints for its bytes)."""
        from .render import render_kernel

        return render_kernel(self.kernel(**static))

    def bytecode(self, version=None, **static) -> bytes:
        """The Tile IR bytecode (13.4 unless ``version`` says otherwise)."""
        from .bytecode import encode_kernel

        return encode_kernel(self.kernel(**static), version)

    def cubin(self, arch: str = "sm_90", opt_level=None, **static) -> bytes:
        """The cubin tileiras makes of the bytecode for ``arch`` (cached on disk). tileiras runs at
        its own level unless ``opt_level`` forces one or this kernel reaches an assembler defect
        known for ``arch`` (``assemble.kernel_args``, issue 6)."""
        from .assemble import assemble
        from .bytecode import encode_kernel

        cfg = self.config(**static)
        key = (self._key(cfg), arch, opt_level)
        got = self._cubins.get(key)
        if got is None:
            k = self.kernel(**cfg)
            got = assemble(encode_kernel(k), arch, kernel=self.name, opt_level=opt_level, program=k)
            self._cubins[key] = got
        return got

    def grid(self, *arrays, **static) -> tuple:
        """The launch grid: ``@kernel(grid=fn)`` called with the configuration and, by name, the
        values of the by-value parameters given at launch (so a length passed by value can size it)."""
        cfg = self.config(**static)
        marks = self.markers(cfg)
        if self.grid_fn is None:
            if any(isinstance(m, Marker) and m.cells is not None for m in marks):
                try:
                    return grid_from_markers(marks, [getattr(a, "shape", None) for a in arrays])
                except TileirError as e:
                    raise TileirError(str(e), kernel=self.name) from None
            raise TileirError("no grid: pass grid=(x, y, z) to the call, give @kernel(grid=...), or declare "
                              "parameters with cells (In / Out markers)", kernel=self.name)
        names = dict(cfg)
        for (pname, _), m, value in zip(self.params, marks, arrays):
            if not kparam_of(m).by_ptr:
                names[pname] = value
        wanted = inspect.signature(self.grid_fn).parameters
        g = self.grid_fn(**{k: v for k, v in names.items() if k in wanted})
        return tuple(g) if isinstance(g, (tuple, list)) else (int(g),)

    # -- running --------------------------------------------------------------------------------
    def run_host(self, *arrays, grid=None, **static) -> None:
        """Run on the host reference: numpy arrays for buffers (written in place), numbers for values."""
        from .ref import run_host

        cfg = self.config(**static)
        prog = self.program(**cfg)
        run_host(prog, list(arrays), tuple(grid) if grid is not None else self.grid(*arrays, **cfg))

    def __call__(self, *arrays, grid=None, stream=None, arch=None, opt_level=None, sync=True, **static) -> None:
        """Run on the GPU: torch/cupy arrays (no copies) or numpy arrays (copied in and out).

        The first call of a configuration records, lowers, encodes, assembles and loads; later
        calls find the loaded function and the grid rule by the call's keyword arguments and
        only pack the arguments and launch (bench/launch_overhead.py measures it)."""
        # a call that gives its own grid keeps its configuration as written (no tuned keys filled in):
        # the grid was worked out for that configuration (kernel.grid(...) does not fill them either)
        given = grid is not None
        try:
            key = (tuple(sorted(static.items())), arch, opt_level, given)
            fast = self._fast.get(key)
        except TypeError:  # an unhashable configuration value: take the slow path every time
            key, fast = None, None
        if fast is None:
            fast = self._prepare_launch(arch, opt_level, static, fill_tuned=not given)
            if key is not None:
                self._fast[key] = fast
        launcher, grid_rule = fast
        g = grid if grid is not None else grid_rule(arrays)
        launcher(g, arrays, stream, sync)

    def _prepare_launch(self, arch, opt_level, static, fill_tuned=True):
        from .assemble import gpu_name_of_device
        from .runtime.launch import launcher_for

        target = arch or gpu_name_of_device()
        if target is None:
            raise TileirError("there is no GPU here; run_host(...) runs the kernel on the host reference",
                              kernel=self.name)
        cfg = self.config(**(self.tuned_config(dict(static), target) if fill_tuned else static))
        cubin = self.cubin(target, opt_level, **cfg)
        params = [(kp.dtype, kp.by_ptr) for kp in self.kparams(cfg)]
        launcher = launcher_for(cubin, self.name, params)
        marks = self.markers(cfg)
        if self.grid_fn is not None:
            wanted = set(inspect.signature(self.grid_fn).parameters)
            value_names = [(i, n) for i, ((n, _), m) in enumerate(zip(self.params, marks))
                           if not kparam_of(m).by_ptr and n in wanted]
            fixed = {k: v for k, v in cfg.items() if k in wanted}

            def grid_rule(arrays, fn=self.grid_fn):
                g = fn(**fixed, **{n: arrays[i] for i, n in value_names})
                return tuple(g) if isinstance(g, (tuple, list)) else (int(g),)
        else:
            plan = _grid_plan(marks)
            if plan is None:
                def grid_rule(arrays):
                    return self.grid(*arrays, **cfg)
            else:
                def grid_rule(arrays, plan=plan):
                    try:
                        return plan(arrays)
                    except Exception:  # let the full rule refuse it in its own words
                        return self.grid(*arrays, **cfg)
        return launcher, grid_rule


def _grid_plan(marks):
    """A fast grid rule for cells whose extents are static or whole tiles of the argument: the
    blocks along each axis read straight off the argument shapes (the full rule, grid_from_markers,
    runs when this one meets anything it does not expect, and says what is wrong)."""
    from .ir import DYN_DIM

    terms = {}
    for i, m in enumerate(marks):
        if not isinstance(m, Marker) or m.cells is None:
            continue
        c = m.cells
        for d, (e, t, a) in enumerate(zip(c.extent, c.tile, c.along)):
            if a < 0:
                continue
            terms.setdefault(a, (i, d, e, t))
    if not terms:
        return None
    axes = max(terms) + 1

    def plan(arrays):
        g = [1] * axes
        for a, (i, d, e, t) in terms.items():
            n = arrays[i].shape[d] if e == DYN_DIM else e
            if e == DYN_DIM and n % t:
                raise ValueError
            g[a] = -(-n // t)
        full = grid_from_markers(marks, [getattr(x, "shape", None) for x in arrays]) if _CHECK_GRIDS else None
        if full is not None and tuple(g) != full:
            raise ValueError
        return tuple(g)

    return plan


_CHECK_GRIDS = False  # tests set it: every fast grid is checked against the full rule


def kernel(fn=None, *, name=None, grid=None, hints=(), tuned=()):
    """Make ``fn`` a kernel (see the module docstring). Usable bare or with arguments. ``hints``:
    the entry's optimization hints, or a function of the configuration answering them; ``tuned``:
    configuration keys a GPU call leaves to ``autotune.best`` when it names none of them."""
    if fn is None:
        return lambda f: KernelFn(f, name, grid, hints, tuned)
    return KernelFn(fn, name, grid, hints, tuned)


def trace_kernel(name: str, params, body, hints=()):
    """The spec's spelling: record ``body()`` (which reads parameters with ``param(fmt, pos)``) as a
    kernel named ``name`` with entry parameters ``params`` (ByPtr / ByValue); answers the TileProg."""
    return record(name, tuple(params), body, hints)


__all__ = ["kernel", "KernelFn", "trace_kernel", "cdiv", "math"]
