"""``Dev`` (dev.py, the spec's effect) held to its one implementer, the recorder.

Kills these mutants, each of which the rest of the suite lets through:
- a parameter added to, removed from, renamed in or reordered in one recorder method (or in one
  ``Dev`` declaration), or a default added, dropped or changed on one side
  (``test_every_dev_operation_has_the_recorders_signature``);
- a ``t_*`` operation the recorder answers that ``Dev`` does not declare, so another handler
  could not say by name that it does not answer it (``test_every_recorder_operation_is_declared``);
- a call ``dev().t_xxx(...)`` anywhere in ``src/tileir`` (the surface functions, the recorder's own
  calls, the device diff's builders) with arguments ``Dev``'s signature does not accept, e.g. a
  sixth argument to a five-parameter operation (``test_every_call_binds_to_the_declared_signature``).
"""

import ast
import inspect
from pathlib import Path

import pytest

from tileir.dev import Dev
from tileir.record import Recorder

SRC = Path(__file__).resolve().parents[1] / "src" / "tileir"

DECLARED = sorted(n for n, f in vars(Dev).items() if callable(f) and not n.startswith("_"))


def test_dev_declares_the_operations():
    assert len(DECLARED) > 90
    assert all(n.startswith("t_") for n in DECLARED)


@pytest.mark.parametrize("name", DECLARED)
def test_every_dev_operation_has_the_recorders_signature(name):
    impl = getattr(Recorder, name)
    assert impl is not vars(Dev)[name], f"the recorder does not answer {name}"
    declared, actual = inspect.signature(vars(Dev)[name]), inspect.signature(impl)
    owner = next(c for c in Recorder.__mro__ if name in vars(c))
    assert declared == actual, (f"Dev.{name}{declared} but {owner.__module__}.{owner.__name__}.{name}{actual}: "
                                "make dev.py describe what the recorder takes")


def test_every_recorder_operation_is_declared():
    answered = {n for n in dir(Recorder) if n.startswith("t_") and callable(getattr(Recorder, n))}
    assert answered - set(DECLARED) == set(), "declare these in dev.Dev"


def _calls():
    """Every call ``<expr>.t_name(...)`` in src/tileir whose name is a Dev operation."""
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr.startswith("t_")):
                yield path.relative_to(SRC), node


def test_every_call_binds_to_the_declared_signature():
    checked, bad = 0, []
    for path, call in _calls():
        name = call.func.attr
        if name not in DECLARED:
            bad.append(f"{path}:{call.lineno}: {name} is not a Dev operation")
            continue
        sig = inspect.signature(vars(Dev)[name])
        params = list(sig.parameters.values())[1:]
        keywords = [k for k in call.keywords if k.arg is not None]
        starred = any(isinstance(a, ast.Starred) for a in call.args) or len(keywords) < len(call.keywords)
        if starred:  # only the count of plain arguments can be held: no more than the parameters
            if len([a for a in call.args if not isinstance(a, ast.Starred)]) + len(keywords) > len(params):
                bad.append(f"{path}:{call.lineno}: {name} takes at most {len(params)} arguments")
            continue
        checked += 1
        try:
            sig.bind(None, *call.args, **{k.arg: k.value for k in keywords})
        except TypeError as e:
            bad.append(f"{path}:{call.lineno}: {name}{sig}: {e}")
    assert not bad, "\n".join(bad)
    assert checked > 150


def test_the_check_sees_a_sixth_argument():
    """The binding check is not vacuous: a six-argument t_unaryf call fails it."""
    call = ast.parse("d.t_unaryf('negf', 'f32', [], a, '', False, 1)").body[0].value
    with pytest.raises(TypeError):
        inspect.signature(Dev.t_unaryf).bind(None, *call.args)
