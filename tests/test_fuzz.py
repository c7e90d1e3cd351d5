"""Fuzzing the surface (issue 3): random well-typed programs -- loads, element-wise float and
integer arithmetic, compares and selects, conversions, reductions, loops with carries, ifs,
stores, mixed formats. Recording never fails with anything but a TileirError; every program it
records is encoded, read back by tileirdisasm as exactly the text render_kernel gives, and
assembled by tileiras for sm_90. 200 examples a CI run; `-m slow` runs 2000."""

import os

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import tileir as ti
from tileir import F16, F32, I32, TileirError
from tileir.assemble import assemble
from tileir.render import normalise

SHAPES = ([16], [4, 16])
FLOAT_UN = (ti.neg, ti.abs, ti.exp, ti.sqrt, ti.floor, ti.ceil, ti.tanh, ti.log, ti.sin)
FLOAT_BIN = (ti.add, ti.sub, ti.mul, ti.div, ti.max, ti.min)
INT_BIN = (ti.add_i, ti.sub_i, ti.mul_i, ti.max_i, ti.min_i, ti.and_i, ti.xor_i, ti.shr_i, ti.shr_u)
PARAMS = (ti.Shared(F32), ti.Shared(F16), ti.Shared(I32))
FMT = {"f32": 0, "f16": 1, "i32": 2}


class Replay:
    """A region's body runs twice (a trial, then for real): its draws are made on the first run and
    replayed on the second, so both runs record the same program, as a kernel's body does."""

    def __init__(self, draw):
        self.real, self.log, self.pos = draw, [], None

    def __call__(self, strategy):
        if self.pos is None:
            v = self.real(strategy)
            self.log.append(v)
            return v
        v = self.log[self.pos]
        self.pos += 1
        return v

    def again(self):
        self.pos = 0


class Builder:
    """Turns a hypothesis draw function into one kernel body."""

    def __init__(self, draw, steps):
        self.draw = draw
        self.steps = steps

    def pick(self, pool, kind=None, shape=None):
        cands = [t for t in pool if (kind is None or t[0] == kind) and (shape is None or t[1] == shape)]
        return cands[self.draw(st.integers(0, len(cands) - 1))] if cands else None  # an index: replayable

    def load(self, pool, fmt):
        shape = self.draw(st.sampled_from(SHAPES))
        t = ti.load(ti.param(fmt, FMT[fmt.name]), ti.idx_const(0), shape)
        pool.append((fmt.name, tuple(shape), t))

    def body(self):
        pool = []
        self.load(pool, F32)
        self.load(pool, I32)
        for _ in range(self.steps):
            self.step(pool, depth=0)
        for fmt in (F32, F16, I32):
            x = self.pick(pool, fmt.name)
            if x is not None and x[1]:
                ti.store(ti.param(fmt, FMT[fmt.name]), ti.idx_const(0), x[2])

    def step(self, pool, depth):
        action = self.draw(st.sampled_from(["load", "fun", "fbin", "ibin", "cmp", "conv", "reduce", "loop", "if",
                                            "lit", "bcast"]))
        if action == "load":
            self.load(pool, self.draw(st.sampled_from([F32, F16, I32])))
        elif action == "fun":
            x = self.pick(pool, self.draw(st.sampled_from(["f32", "f16"])))
            if x:
                pool.append((x[0], x[1], self.draw(st.sampled_from(FLOAT_UN))(x[2])))
        elif action == "fbin":
            x = self.pick(pool, self.draw(st.sampled_from(["f32", "f16"])))
            y = self.pick(pool, x[0], x[1]) if x else None
            if y:
                pool.append((x[0], x[1], self.draw(st.sampled_from(FLOAT_BIN))(x[2], y[2])))
        elif action == "ibin":
            x = self.pick(pool, "i32")
            y = self.pick(pool, "i32", x[1]) if x else None
            if y:
                pool.append(("i32", x[1], self.draw(st.sampled_from(INT_BIN))(x[2], y[2])))
        elif action == "cmp":
            x = self.pick(pool, "f32")
            y = self.pick(pool, "f32", x[1]) if x else None
            if y:
                c = self.draw(st.sampled_from([ti.lt, ti.ge, ti.eq_u, ti.ne]))(x[2], y[2])
                pool.append(("f32", x[1], ti.select(c, x[2], y[2])))
        elif action == "conv":
            x = self.pick(pool)
            if x and x[0] == "f32":
                pool.append(("f16", x[1], ti.to(x[2], F16)))
                pool.append(("i32", x[1], ti.float_to_int(x[2], I32)))
            elif x and x[0] == "f16":
                pool.append(("f32", x[1], ti.to(x[2], F32)))
            elif x:
                pool.append(("f32", x[1], ti.int_to_float(x[2], F32)))
        elif action == "reduce":
            x = self.pick(pool)
            if x and x[1]:
                r = self.draw(st.sampled_from([ti.reduce_sum, ti.reduce_max, ti.reduce_min]))(x[2], -1, True)
                pool.append((x[0], x[1][:-1] + (1,), r))
        elif action == "lit":
            x = self.pick(pool, "f32")
            if x:
                pool.append(("f32", x[1], x[2] * self.draw(st.floats(-4, 4, allow_nan=False, width=32))))
        elif action == "bcast":
            x = self.pick(pool)
            if x and x[1] and x[1][-1] == 1:
                pool.append((x[0], x[1][:-1] + (16,), ti.broadcast(x[2], list(x[1][:-1]) + [16])))
        elif action in ("loop", "if") and depth < 2:
            x = self.pick(pool, "f32")
            if x is None:
                return
            c = ti.carry(x[2])
            replay = Replay(self.draw)
            runs = []

            def region():
                outer, self.draw = self.draw, replay
                if runs:
                    replay.again()
                runs.append(1)
                inner = list(pool)  # a fresh pool each run: nothing made in one run reaches the other
                try:
                    for _ in range(self.draw(st.integers(1, 3))):
                        self.step(inner, depth + 1)
                    y = self.pick(inner, "f32", x[1])
                    ti.set(c, ti.add(ti.get(c), y[2]) if y else ti.get(c))
                finally:
                    self.draw = outer

            if action == "loop":
                for _ in ti.d_range(0, self.draw(st.integers(1, 5))):
                    region()
            else:
                cond = ti.lt(ti.reduce_sum(ti.reshape(x[2], [x[1][0] * (x[1][1] if len(x[1]) > 1 else 1)])),
                             ti.f_const(F32, 0.0))
                ti.d_if(cond, region, lambda: None)
            pool.append(("f32", x[1], ti.get(c)))


def check_program(draw, disasm):
    steps = draw(st.integers(1, 8))
    try:
        prog = ti.trace_kernel("fuzz", PARAMS, Builder(draw, steps).body)
    except TileirError:
        return "refused"
    k = ti.lower(prog)
    data = ti.encode_kernel(k)
    assert normalise(disasm(data)) == normalise(ti.render_kernel(k))
    assert assemble(data, "sm_90", kernel="fuzz")[:4] == b"\x7fELF"
    return "ok"


FAST = settings(max_examples=int(os.environ.get("TILEIR_FUZZ_EXAMPLES", "200")), deadline=None, database=None,
                suppress_health_check=list(HealthCheck))


@FAST
@given(data=st.data())
def test_random_programs_record_encode_read_back_and_assemble(data, disasm):
    event(check_program(data.draw, disasm))


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_programs_many(data, disasm):
    check_program(data.draw, disasm)
