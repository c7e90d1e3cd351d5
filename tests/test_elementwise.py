"""The element-wise table (``tileir.elementwise``): every row's public function records the row, refuses
the formats the row does not take and carries a docstring; every row's layer-2 family records it and
lists its dialect operation; the fuzz generator's frozen vocabulary agrees with the table; and every
op the table does not name is refused by the recorder and by the writer's generic layer.

Mutants it kills: a surface function handing its arguments to another row (``exp2`` recording exp),
a row whose formats the surface stops enforcing (``max_i`` taking i16), a row dropped from its
family's cases, a fuzz list that drifts from the table's tiers."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tileir as ti
from tileir import elementwise as E
from tileir.dev import dev
from tileir.diff import fuzzspec
from tileir.diff.families import families
from tileir.surface._util import h

SIZE = 8
_FMT = {E.FLOAT: "f32", E.INT: "i32"}
# a source and destination each row named by several rows of one function converts between
_TARGETS = {"ftof": ("f64", "f32"), "ftof_zero": ("f64", "f32"), "ftof_neg_inf": ("f64", "f32"),
            "ftof_pos_inf": ("f64", "f32"), "ftof_away": ("f32", "tf32"), "ftoi": ("f32", "i32"),
            "ftoi_sat": ("f32", "i32"), "itof": ("i32", "f32")}


def _fmt(row) -> str:
    return _TARGETS[row.op][0] if row.op in _TARGETS else _FMT.get(row.formats) or row.formats[0]


def _call(row, fmt: str):
    """Call row's public function on tiles of ``fmt`` (the row of a function that names several:
    by the argument that picks it)."""
    fn = getattr(ti, row.name)
    a, b, c = (ti.full([SIZE], v, fmt) for v in (1, 2, 3))
    if row.kind == "convert":
        if row.name == "float_to_float":
            return fn(a, _TARGETS[row.op][1], rounding=row.fixed_value("rounding"))
        if row.name == "float_to_int":
            return fn(a, "i32", saturating=row.fixed_value("saturating"))
        return fn(a, _TARGETS[row.op][1]) if not row.to else fn(a)
    arity = {"unaryf": 1, "unaryi": 1, "fma": 3}.get(row.kind, 2)
    return fn(*(a, b, c)[:arity])


def _name(a) -> str:
    return getattr(a, "pred", None) or getattr(a, "op", "fma")


def matches(row, op) -> bool:
    """Whether the recorded ``op`` is what ``row``'s function records (format aside where it takes any)."""
    a = op.a
    if op.kind != row.kind or _name(a) != row.op:
        return False
    if row.kind == "unaryf" and a.rounding != row.rounding:
        return False
    if row.kind == "cmpf" and a.ordered != row.ordered:
        return False
    if row.kind == "cmpi" and not a.signed:
        return False
    if row.kind == "convert":
        return (not row.to or a.to == row.to) and (not isinstance(row.formats, tuple) or a.from_ in row.formats)
    return not isinstance(row.formats, tuple) or a.dtype in row.formats


def _recorded(body) -> list:
    """The operations ``body`` records (the token and the return the recorder adds left out)."""
    return [op for op in ti.trace_kernel("k", (), body).walk() if op.kind not in ("make_token", "return")]


@pytest.mark.parametrize("row", E.ROWS, ids=lambda r: f"{r.name}-{r.op}")
def test_each_rows_function_records_the_row(row):
    ops = _recorded(lambda: _call(row, _fmt(row)))
    assert ops and matches(row, ops[-1]), (row, ops[-1].a if ops else None)
    fn = getattr(ti, row.name)
    doc = inspect.getdoc(fn)
    assert doc and len(doc) > 8 and fn.__name__ == row.name
    assert inspect.signature(fn).return_annotation in ("Tile", ti.Tile)


WRONG = {"f32": "f64", "i32": "i16", "i8": "i16", "i4": "i8", "i1": "i8"}


@pytest.mark.parametrize("row", [r for r in E.ROWS if isinstance(r.formats, tuple) and r.name not in
                                 ("float_to_float", "float_to_int", "int_to_float")], ids=lambda r: r.name)
def test_a_row_refuses_a_format_it_does_not_take(row):
    with pytest.raises(ti.TileirError, match=row.name):
        _recorded(lambda: _call(row, WRONG[row.formats[0]]))


def test_a_narrow_spelling_names_the_any_width_one():
    with pytest.raises(ti.TileirError) as e:
        _recorded(lambda: ti.max_i(ti.full([4], 1, "i8"), ti.full([4], 2, "i8")))
    assert "max_i takes i32 tiles, got i8" in str(e.value) and "widen them first" in e.value.fix
    with pytest.raises(ti.TileirError) as e:
        _recorded(lambda: ti.and_i(ti.full([4], 1, "i8"), ti.full([4], 2, "i8")))
    assert e.value.fix.startswith("andi(a, b)")


def test_an_op_no_row_names_is_refused_by_the_recorder_and_the_writer():
    def body():
        a = ti.full([4], 1.0, "f32")
        dev().t_unaryf("expm1", "f32", [4], h(a))

    with pytest.raises(ti.TileirError, match="unknown float unary operation 'expm1'; the table's are negf"):
        _recorded(body)
    from tileir import generic, ir

    bad = ir.FloatUn(1, "expm1", ir.tile((4,), "f32"), ir.Val(0))
    with pytest.raises(ti.TileirError, match="unknown float unary operation 'expm1'"):
        generic.to_generic(bad)


def test_every_rows_family_records_it_and_lists_its_dialect_operation():
    fams = families()
    corpora = {r.corpus for r in E.ROWS if r.corpus}
    assert corpora <= set(fams), corpora - set(fams)
    for name in sorted(corpora):
        fam = fams[name]
        ops = [op for case in fam.cases for op in case.prog().walk()]
        for row in E.of_corpus(name):
            assert row.dialect in fam.ops, (name, row.name)
            assert any(matches(row, op) for op in ops), f"family {name} records no {row.name} ({row.kind} {row.op})"
    no_family = sorted(r.name for r in E.ROWS if not r.corpus)
    assert no_family == ["sqrt_approx"], no_family  # a new row names its family, or is added here knowingly


def test_the_fuzz_vocabulary_agrees_with_the_table():
    """fuzzspec writes its vocabulary out (a seed draws the same program whatever the table gains: a new
    row joins the draw with a generator version); what it says of each op is the table's."""
    un = [r for r in E.ROWS if r.kind == "unaryf"]
    name = {r.name: (r.op if E.OPS[(r.kind, r.op)] is r else r.name) for r in un}
    assert fuzzspec.UN_EXACT == tuple(name[r.name] for r in un if r.tier == E.EXACT)
    assert fuzzspec.UN_APPROX == tuple(name[r.name] for r in un if r.tier == E.TOLERANCE)
    assert fuzzspec.BIN_APPROX == E.tolerance_ops("binaryf")
    assert tuple(b for b in fuzzspec.BIN_EXACT if not b.endswith("_nan")) == tuple(
        op for op in E.ops_of("binaryf") if op not in E.tolerance_ops("binaryf"))
    assert fuzzspec.IBIN == E.ops_of("binaryi")
    assert fuzzspec.PREDS == E.ops_of("cmpf") == E.ops_of("cmpi")
    assert set(fuzzspec.UN_JUMPS) <= {r.op for r in un if r.tier == E.EXACT}


def test_the_table_is_whole():
    """Each op's first row names its dialect operation and host rule, which every later row shares;
    one row a name, but for the functions whose argument picks the row."""
    seen: dict = {}
    for r in E.ROWS:
        first = seen.setdefault((r.kind, r.op), r)
        assert r.dialect == first.dialect and r.host is first.host and r.fixed == first.fixed
    names = [r.name for r in E.ROWS]
    assert {n for n in names if names.count(n) > 1} == {"float_to_float", "float_to_int"}
    assert E.BY_NAME["float_to_float"].op == "ftof" and E.BY_NAME["float_to_int"].op == "ftoi"
    new = E.Row("expm1", "unaryf", "expm1", E.FLOAT, tier=E.TOLERANCE)
    with pytest.raises(ValueError, match="first row names its dialect operation and its host rule"):
        E._resolve(E._TABLE + (new,))
    with pytest.raises(ValueError, match="exp2 has no such attribute"):
        E._resolve((E.Row("x", "unaryf", "x", E.FLOAT, "exp2", (("expm1", 1),), np.exp),))
    with pytest.raises(ValueError, match="the op's first row's"):
        E._resolve(E._TABLE + (E.Row("exp_again", "unaryf", "exp", E.FLOAT, "exp"),))


def test_host_rules_of_a_few_rows_against_numpy():
    """The rows' rules through the host reference (the families' tests hold every one in depth)."""
    x = np.linspace(-3, 3, SIZE).astype(np.float32)
    k = np.arange(-4, 4, dtype=np.int32)
    out_f = np.zeros((3, SIZE), np.float32)
    out_i = np.zeros((2, SIZE), np.int32)

    def body():
        a = ti.load(ti.param("f32", 0), ti.idx_const(0), [SIZE])
        b = ti.load(ti.param("i32", 1), ti.idx_const(0), [SIZE])
        for i, t in enumerate((ti.exp2(a), ti.abs(a), ti.atan2(a, a + 4.0))):
            ti.store(ti.param("f32", 2), ti.idx_const(i * SIZE), t)
        for i, t in enumerate((ti.shr_u(b, ti.full([SIZE], 1, "i32")), ti.max_i(b, ti.full([SIZE], 0, "i32")))):
            ti.store(ti.param("i32", 3), ti.idx_const(i * SIZE), t)

    prog = ti.trace_kernel("k", (ti.ByPtr("f32"), ti.ByPtr("i32"), ti.ByPtr("f32"), ti.ByPtr("i32")), body)
    from tileir.ref import run_host

    run_host(prog, [x, k, out_f, out_i], (1,))
    x64 = x.astype(np.float64)
    assert out_f[0].tobytes() == np.exp2(x64).astype(np.float32).tobytes()
    assert out_f[1].tobytes() == np.abs(x).tobytes()
    assert out_f[2].tobytes() == np.arctan2(x64, (x + np.float32(4)).astype(np.float64)).astype(np.float32).tobytes()
    assert out_i[0].tolist() == (k.view(np.uint32) >> 1).view(np.int32).tolist()
    assert out_i[1].tolist() == np.maximum(k, 0).tolist()


def test_ext_i8_widens_each_octet_with_its_sign(disasm):
    """docs/design.md's worked example: ext_i8 is a row (extis from i8 to i32, whose dialect operation and
    host rule ext_i4's row gave) and its function; the host reference against numpy on every octet, the
    bytes read back as render's text and assembled for sm_90."""
    from tests.kernelcheck import run_and_read_back

    x = np.arange(-128, 128, dtype=np.int16).astype(np.int8)
    out = np.zeros((2, 256), np.int32)

    def body():
        a = ti.load(ti.param("i8", 0), ti.idx_const(0), [256])
        ti.store(ti.param("i32", 1), ti.idx_const(0), ti.ext_i8(a))
        ti.store(ti.param("i32", 1), ti.idx_const(256), ti.ext_u8(a))

    k, _ = run_and_read_back(body, (ti.ByPtr("i8"), ti.ByPtr("i32")), [x, out], disasm=disasm)
    assert out[0].tolist() == x.astype(np.int32).tolist()  # -128 .. 127
    assert out[1].tolist() == x.view(np.uint8).astype(np.int32).tolist()  # 0 .. 255
    assert "exti" in ti.render_kernel(k) and "signed" in ti.render_kernel(k)
