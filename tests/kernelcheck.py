"""What the family tests share: record a small kernel, run it on the host reference, and (given the
disasm fixture) hold its bytes to render_kernel's text and have tileiras assemble them."""

from dataclasses import dataclass, field

import pytest

import tileir as ti
from tileir import TileirError
from tileir.assemble import assemble
from tileir.ref import run_host
from tileir.render import normalise


def run_and_read_back(body, params, args, grid=(1,), disasm=None, targets=("sm_90",), version=None):
    """(the lowered Kernel, the host interpreter after the run)."""
    return read_back(ti.trace_kernel("k", params, body), args, grid, disasm, targets, version)


def read_back(prog, args, grid=(1,), disasm=None, targets=("sm_90",), version=None):
    """run_and_read_back for a program already recorded."""
    it = run_host(prog, args, grid)
    k = ti.lower(prog)
    if disasm is not None:
        data = ti.encode_kernel(k, version)
        assert normalise(disasm(data)) == normalise(ti.render_kernel(k))
        for t in targets:
            assert assemble(data, t, kernel=k.name, program=k)[:4] == b"\x7fELF"
    return k, it


def refused(body, params) -> TileirError:
    """The recording's refusal of ``body``, held to naming the kernel, the op and the fix."""
    with pytest.raises(TileirError) as e:
        ti.trace_kernel("k", params, body)
    msg = str(e.value)
    assert msg.startswith("kernel 'k', op "), msg
    assert e.value.op is not None and e.value.fix, msg
    return e.value


def walk(instrs):
    """Every instruction of a body, the nested regions' too, in order."""
    for x in instrs:
        yield x
        for f in ("body", "on_true", "on_false"):
            yield from walk(getattr(x, f, ()))


def config_id(kc) -> str:
    """A test id for a (kernel, configuration) pair."""
    k, c = kc
    return k.name + "-" + "-".join(f"{a}{b}" for a, b in c.items())


def render_matches_disassembly(kern, cfg, disasm, versions) -> None:
    """Layer 1 for one configuration: tileirdisasm of the bytes at each version is render's text."""
    text = normalise(kern.mlir(**cfg))
    for v in versions:
        assert normalise(disasm(kern.bytecode(version=v, **cfg))) == text, v


def run_case_on_host(case, size, extra, seed=7):
    """(max error, ok) of a library case (tileir.kernels.CASES) at ``size`` with configuration
    ``extra`` on the host reference, through its runner where it has one, against its numpy
    reference."""
    import numpy as np

    rng = np.random.default_rng(seed)
    args = case.inputs(size, rng)
    want = case.expected([a.copy() if isinstance(a, np.ndarray) else a for a in args])
    cfg = dict(case.config(size), **extra)
    if case.runner is not None:
        case.runner(args, "host", **cfg)
    else:
        case.kernel.run_host(*args, **cfg)
    return case.check(args[case.output], want)


@dataclass(frozen=True)
class At:
    """A size, and configuration beyond what the case's size implies (smaller tiles, to walk the
    chunked / multi-block paths on small shapes)."""

    size: object
    extra: dict = field(default_factory=dict)

    def __repr__(self):
        return f"{self.size}{self.extra or ''}"


def assert_matches_on_host(name, at):
    """The library case ``name`` at ``at`` (a size, or an At) agrees with its numpy reference on the host."""
    from tileir.kernels import CASES

    size, extra = (at.size, at.extra) if isinstance(at, At) else (at, {})
    err, ok = run_case_on_host(CASES[name], size, extra)
    assert ok, f"{name} {at}: max error {err}"
