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


def compile_spy(monkeypatch) -> list:
    """The argv of every tileiras compile (-o ...) made from now on, in a list that grows; the real run
    still happens."""
    from tileir import assemble as asm

    seen: list = []
    real = asm._run_child
    asm.tileiras_version()

    def spy(cmd, *a, **kw):
        if "-o" in cmd:
            seen.append(list(cmd))
        return real(cmd, *a, **kw)

    monkeypatch.setattr(asm, "_run_child", spy)
    return seen


def first_exit_loop(trips=0, n=256, init_from_data=False, in_for=False, literal=False):
    """Campaign 2's 3439, recorded by hand: a [n] i32 tile carried through a d_loop whose body loads and
    stores an f32 tile, the carry stored after the loop; the loop stops when its counter reaches
    ``trips`` (0: on its first iteration, by its constants)."""
    import tileir as ti
    from tileir.diff.fuzzval import bini

    def body():
        pin, pout = ti.param(ti.I32, 0), ti.param(ti.I32, 1)
        fin, fout = ti.param(ti.F32, 2), ti.param(ti.F32, 3)

        def one():
            x = ti.load(pin, ti.idx_const(0), [n])
            c = ti.carry(x)
            start = ti.reduce_min(ti.load(pin, ti.idx_const(0), [16]), 0) if init_from_data else ti.i_const(0)
            cnt = ti.carry(start)

            def step():
                cur = ti.get(cnt)
                stop = ti.ge_i(ti.i_const(0), ti.i_const(0)) if literal else ti.ge_i(cur, ti.i_const(trips))
                ti.store(fout, ti.idx_const(0), ti.load(fin, ti.idx_const(0), [128]))
                ti.set(c, bini("addi", ti.get(c), x))
                ti.set(cnt, ti.add_i(cur, ti.i_const(1)))
                return stop

            ti.d_loop(step)
            ti.store(pout, ti.idx_const(0), ti.get(c))

        if in_for:
            for _ in ti.d_range(0, 1):
                one()
        else:
            one()

    import tileir as ti2

    return ti2.trace_kernel("k", (ti2.ByPtr(ti2.I32),) * 2 + (ti2.ByPtr(ti2.F32),) * 2, body)


# ---- the fuzzer's programs, written by hand ----------------------------------------------------------


def fuzz_desc(body, fmts=("f32",), grid=1, seed=7):
    """A fuzz program description (diff/fuzzspec's form) holding ``body``'s steps."""
    return {"v": 1, "seed": seed, "grid": [grid], "warps": 0, "fmts": list(fmts), "globals": [], "body": body}


def fuzz_load(i, fmt="f32", shape=(8,), dist="small"):
    """A fuzz program's load step of value ``i``."""
    return {"op": "load", "id": i, "fmt": fmt, "shape": list(shape), "dist": dist, "moving": False, "mask": False}


def fuzz_job(desc):
    """``desc`` recorded and lowered (not assembled) as a campaign's worker does it."""
    from tileir.diff.fuzzrun import compile_task

    c = compile_task({"desc": desc, "seed": desc["seed"], "assemble": False})
    assert c["status"] == "ready", c.get("detail")
    return c
