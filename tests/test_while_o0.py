"""The while-O0 workaround (docs/assembler-defect.md, the sixth defect), without a GPU: with tileiras 13.4.92 a
kernel whose lowered program still holds a while loop (the loops a first exit does not write once) is
assembled at --opt-level 0 on every target unless the caller forces a level; campaign 2's while-stale-carries
failures (all nine equal at -O0 on the H200, bench/results/fuzz_while_O0_h200.json) and 2926's misaligned
address (right at -O0) are its device evidence. The fuzzer reports the workaround ("while-O0") and no longer
counts a failure of a run that had it as a cause that -O0 is right for.

Each test names the mutants of the code it kills."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

import tileir as ti
from tests.kernelcheck import compile_spy, first_exit_loop
from tileir import assemble as asm
from tileir.diff import fuzzgen as G
from tileir.diff.classify import LOWERING, TILEIRAS, classify
from tileir.diff.fuzz import Campaign
from tileir.diff.fuzzbuild import build
from tileir.diff.fuzzknown import (
    CAUSES,
    OLD_WORKAROUNDS,
    WHILE_O0,
    WORKAROUNDS,
    assembled_at_O0,
    known_cause,
    run_workarounds,
)
from tileir.diff.fuzzspec import Profile
from tileir.diff.shrink import Tester
from tileir.errors import TileirError
from tileir.kernels import CASES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPRO_2926 = os.path.join(ROOT, "bench", "results", "fuzz_repro_after2", "errors2_repro",
                          "fuzz_device_error_2926.json")
CAMPAIGN2 = os.path.join(ROOT, "bench", "results", "fuzz_h200.json")
STALE = (85, 217, 2374, 4138, 6651, 7290, 7529, 8215, 9254)  # campaign 2's while-stale-carries failures
TARGETS = ("sm_80", "sm_86", "sm_90", "sm_100", "sm_103", "sm_107", "sm_110", "sm_120")
O0 = ["--opt-level", "0"]


def _loop(trips=1, once=False, init_from_data=False, in_for=False, n=64):
    """Campaign 2's 3439 as tests/test_assembler_defect.py records it (kernelcheck.first_exit_loop): the
    loop stops when its counter reaches ``trips`` (0 with ``once``: its constants stop it on its first
    iteration, and the lowering writes it as its body once). ``init_from_data``: the counter starts at a
    loaded value (kept as a loop); ``in_for``: all of it inside a d_range of one trip."""
    return first_exit_loop(trips=0 if once else trips, n=n, init_from_data=init_from_data, in_for=in_for)


def _lowered(name):
    case = CASES[name]
    return case.kernel.kernel(**case.config(case.default_size))


def _has_tileiras():
    try:
        asm.tileiras_version()
        return True
    except TileirError:
        return False


needs_tileiras = pytest.mark.skipif(not _has_tileiras(), reason="tileiras is not installed")


# ---- which kernels get -O0 ------------------------------------------------------------------------------


@pytest.mark.parametrize("gpu", TARGETS)
def test_a_kernel_that_keeps_a_while_loop_gets_O0_on_every_target(gpu):
    """Kills: the -O0 rule dropped (VERSION_DEFECTS emptied, or kernel_args no longer reading it); the rule
    narrowed to sm_90 or to the spec's five targets (the CPU reproduction failed alike on sm_80 to sm_120);
    a trigger that misses a WhileLoop nested in a region (the loop inside a d_range)."""
    k = ti.lower(_loop(trips=1))
    assert asm.holds_while_loop(k)
    assert asm.kernel_args(k, "13.4.92", gpu) == ["--gpu-name", gpu, *O0]
    assert asm.while_loops_at_O0("13.4.92", gpu)
    data = ti.lower(_loop(init_from_data=True))  # a first stop the data decides: kept as a loop
    assert asm.kernel_args(data, "13.4.92", gpu) == ["--gpu-name", gpu, *O0]
    nested = ti.lower(_loop(trips=1, in_for=True))
    assert "WhileLoop" not in {type(i).__name__ for i in nested.body}  # inside the ForLoop's body
    assert asm.kernel_args(nested, "13.4.92", gpu) == ["--gpu-name", gpu, *O0]


@pytest.mark.parametrize("gpu", TARGETS)
def test_a_kernel_without_a_while_loop_keeps_tileiras_own_level(gpu):
    """Kills: a trigger that is every kernel (EVERY_KERNEL, or holds_while_loop answering True), one that
    takes a ForLoop for a while loop (the matmuls' K loop), one that counts a loop the first-exit workaround
    wrote once (no WhileLoop is left of it)."""
    for name in ("vadd", "softmax", "matmul_f16"):
        assert asm.kernel_args(_lowered(name), "13.4.92", gpu) == ["--gpu-name", gpu], name
    once = ti.lower(_loop(once=True))
    assert not asm.holds_while_loop(once)
    assert asm.kernel_args(once, "13.4.92", gpu) == ["--gpu-name", gpu]
    assert asm.tileiras_args("13.4.92", gpu) == ["--gpu-name", gpu]  # not every kernel's


def test_no_library_kernel_holds_a_while_loop():
    """The workaround costs the library nothing (no library kernel has a d_loop). Kills: a trigger that
    reaches a library kernel, which would slow it at -O0 (up to 12.6x on the H200)."""
    for name, case in CASES.items():
        assert not asm.optimiser_loops(case.kernel.kernel(**case.config(case.default_size))), name


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_an_explicit_level_wins_over_the_workaround(level):
    """Kills: the workaround appended after (or instead of) a forced level; the forced level dropped."""
    k = ti.lower(_loop(trips=1))
    assert asm.kernel_args(k, "13.4.92", "sm_90", opt_level=level) == ["--gpu-name", "sm_90", "--opt-level", str(level)]


def test_another_version_gets_its_own_level_and_two_defects_share_one_flag(monkeypatch):
    """Kills: the rule for every tileiras version (only 13.4.92 was seen: a new version is checked again), and
    the workaround written twice where a kernel reaches two defects (the target's token defect, patched here to
    take every kernel, and the version's while loops)."""
    k = ti.lower(_loop(trips=1))
    assert asm.kernel_args(k, "13.5.0", "sm_90") == ["--gpu-name", "sm_90"]
    assert not asm.while_loops_at_O0("13.5.0", "sm_90")
    table = dict(asm.DEFECTS)
    table[("13.4.92", "sm_90")] = asm.Defect(asm.uses("WhileLoop"), ("--opt-level", "0"), "s.")
    monkeypatch.setattr(asm, "DEFECTS", table)
    assert asm.kernel_args(k, "13.4.92", "sm_90") == ["--gpu-name", "sm_90", *O0]
    assert asm.kernel_args(None, "13.4.92", "sm_90") == ["--gpu-name", "sm_90", *O0]


def test_the_sentence_names_the_evidence():
    """Kills: assembler_defect dropping the version's sentence (it answers the target's only)."""
    s = asm.VERSION_DEFECTS["13.4.92"].sentence
    assert asm.VERSION_DEFECTS["13.4.92"].trigger is asm.optimiser_loops
    assert "13.4.92" in s and "while loop" in s and "--opt-level 0" in s and "docs/assembler-defect.md" in s
    assert s.endswith(".") and ". " not in s
    assert asm.assembler_defect("13.4.92", "sm_86") == s
    assert asm.assembler_defect("13.4.92", "sm_90").endswith(s)


@pytest.mark.parametrize("seed", STALE)
def test_the_device_evidence_is_assembled_at_O0_now(seed):
    """Campaign 2's nine stale-carries programs (each equal at -O0 on the H200) and 2926 (right at -O0, as drawn
    and as shrunk) keep a while loop: each gets -O0 by default now. Kills: the -O0 rule dropped."""
    k = ti.lower(build(G.generate(seed, Profile(version=2))).prog)
    assert asm.kernel_args(k, "13.4.92", "sm_90") == ["--gpu-name", "sm_90", *O0]
    with open(REPRO_2926) as f:
        shrunk = json.load(f)["desc"]
    for desc in (shrunk, G.generate(2926, Profile(version=2))):
        assert asm.kernel_args(ti.lower(build(desc).prog), "13.4.92", "sm_90") == ["--gpu-name", "sm_90", *O0]


# ---- the command line and the cache, with tileiras ------------------------------------------------------


@pytest.fixture
def compiles(tmp_path, monkeypatch):
    """The argv of every tileiras compile from now on (the real run still happens), in a fresh cache."""
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path / "cubins"))
    asm.clear_memory_cache()
    yield compile_spy(monkeypatch)
    asm.clear_memory_cache()


def _level(cmd):
    return cmd[cmd.index("--opt-level") + 1] if "--opt-level" in cmd else None


@needs_tileiras
def test_a_while_loop_kernel_is_assembled_at_O0_and_the_cache_key_says_so(compiles):
    """tileiras' command line holds --opt-level 0 for the while loop and none for vadd; the cubin cache's key
    holds the level: the default and a forced -O3 are two entries, and the default's key is the -O0 key.
    Kills: the -O0 rule dropped; the cache key computed without the chosen arguments (a forced -O3 would be
    answered the -O0 cubin, or the reverse)."""
    k = ti.lower(_loop(trips=1))
    data = ti.encode_kernel(k)
    version = asm.tileiras_version()
    first = asm.assemble(data, "sm_90", kernel="k", program=k)
    assert first[:4] == b"\x7fELF" and len(compiles) == 1 and _level(compiles[0]) == "0"
    key = asm.cache_key(data, version, "sm_90", ["--gpu-name", "sm_90", *O0])
    assert asm.cache_key(data, version, "sm_90", asm.kernel_args(k, version, "sm_90")) == key
    assert (asm.cache_dir() / f"{key}.cubin").is_file()
    asm.assemble(data, "sm_90", kernel="k", program=k, opt_level=0)  # the same arguments: the same entry
    assert len(compiles) == 1
    o3 = asm.assemble(data, "sm_90", kernel="k", program=k, opt_level=3)
    assert len(compiles) == 2 and _level(compiles[1]) == "3" and o3 != first
    vadd = _lowered("vadd")
    asm.assemble(ti.encode_kernel(vadd), "sm_90", kernel="vadd", program=vadd)
    assert len(compiles) == 3 and _level(compiles[2]) is None


@needs_tileiras
def test_the_first_exit_loop_kept_as_a_loop_assembles_by_default_now(monkeypatch):
    """tileiras 13.4.92 refuses campaign 2's 3439 written as a loop at -O1 to -O3 (the fifth defect) on every
    target tried; with the loop kept, the while-O0 workaround alone makes it assemble at the default level, and
    a forced -O3 still meets the defect (the explicit level wins). Kills: the -O0 rule dropped (the default
    fails); the forced level overridden by the workaround (-O3 would assemble)."""
    import tileir.families.loops as loops

    monkeypatch.setattr(loops, "stops_on_first_iteration", lambda prog, op: False)
    k = ti.lower(_loop(once=True, n=256))
    assert asm.holds_while_loop(k)
    data = ti.encode_kernel(k)
    for gpu in ("sm_80", "sm_90", "sm_120"):
        assert asm.assemble(data, gpu, kernel="k", program=k, cache=False)[:4] == b"\x7fELF"
        if asm.tileiras_version() == "13.4.92":
            with pytest.raises(TileirError, match="failed to compile|exit -11"):
                asm.assemble(data, gpu, kernel="k", program=k, opt_level=3, cache=False)


# ---- the fuzzer ------------------------------------------------------------------------------------------


def test_the_fuzzer_reports_the_workaround_only_where_it_applies():
    """Kills: while-O0 missing from WORKAROUNDS or from a campaign's report; listed for a run at a forced level
    (which drops it); listed for a tileiras version that does not have it."""
    assert WHILE_O0 == "while-O0" and WHILE_O0 in WORKAROUNDS and WHILE_O0 not in OLD_WORKAROUNDS
    assert WHILE_O0 in run_workarounds(None, "sm_90", "13.4.92")
    assert WHILE_O0 in run_workarounds(None, "sm_86", "13.4.92")
    assert WHILE_O0 not in run_workarounds(3, "sm_90", "13.4.92")
    assert WHILE_O0 in run_workarounds(0, "sm_90", "13.4.92")  # forced -O0: its while loops are at -O0 too
    assert WHILE_O0 not in run_workarounds(None, "sm_90", "13.5.0")
    assert {"tf32-k4", "while-first-exit"} <= set(run_workarounds(3, "sm_90", "13.4.92"))
    quiet = {"workers": 0, "assemble": False, "log": lambda *a: None, "device": "fake"}
    assert WHILE_O0 in Campaign(0, 0, **quiet).workarounds("13.4.92")
    assert WHILE_O0 not in Campaign(0, 0, opt_level=2, **quiet).workarounds("13.4.92")


def _recorded(seed):
    with open(CAMPAIGN2) as f:
        row = next(r for r in json.load(f)["differences"] if r["seed"] == seed)
    out = {"status": row["status"], "detail": row.get("detail"), "workarounds": list(OLD_WORKAROUNDS),
           "verdict": {"regions": row.get("regions", []), "bad": row.get("bad"), "lanes": row.get("lanes")}}
    return out, G.generate(seed, Profile(version=2))


@pytest.mark.parametrize("seed", [85, 7529])
def test_a_stale_carries_failure_of_a_run_with_the_workaround_is_news(seed):
    """The same failure: the known cause for a run without while-O0 (campaign 2's; one at a forced -O3), news
    (no cause) for a run with it (listed, or no list: the current workarounds). Kills: the matcher ignoring the
    run's workarounds; the matcher refusing runs without the workaround too."""
    out, desc = _recorded(seed)
    stale = next(c for c in CAUSES if c.name == "while-stale-carries")
    assert stale.state == "worked around"
    for without in (out, dict(out, workarounds=list(run_workarounds(3, "sm_90", "13.4.92")))):
        assert known_cause(without, desc)["cause"] == "while-stale-carries"
    for now in (dict(out, workarounds=list(WORKAROUNDS)), {k: v for k, v in out.items() if k != "workarounds"}):
        assert stale.match(now, desc) is None and known_cause(now, desc) is None


def test_a_first_exit_loop_kept_and_assembled_at_O0_is_not_that_cause():
    """A run that had while-O0 but not the written-once rule (its loops kept, so at -O0): campaign 2's 6 is not
    while-first-exit there; with neither workaround it is. Kills: the first-exit matcher ignoring while-O0."""
    out, desc = _recorded(6)
    first = next(c for c in CAUSES if c.name == "while-first-exit")
    assert first.match(dict(out, workarounds=[]), desc) is not None
    assert first.match(dict(out, workarounds=[WHILE_O0]), desc) is None


class _EqualAtO0:
    """A tester whose -O0 re-run answers equal."""

    def outcomes(self, descs):
        return [{"status": "equal", "detail": None, "verdict": {}} for _ in descs]


def test_right_at_O0_is_not_said_of_a_run_that_was_at_O0():
    """classify: wrong in the run, right in the -O0 re-run is "tileiras' optimiser" only where the run's level was
    not -O0 already; a program that keeps a while loop in a run with while-O0 was at -O0. Kills: classify's -O0
    rule ignoring the workaround; assembled_at_O0 answering True for a program with no kept while loop."""
    out, desc = _recorded(85)
    assert classify(desc, out, _EqualAtO0())["class"] == TILEIRAS  # campaign 2's run: the default level
    now = dict(out, workarounds=list(WORKAROUNDS))
    assert assembled_at_O0(now, desc) and not assembled_at_O0(out, desc)
    c = classify(desc, now, _EqualAtO0())
    assert c["class"] == LOWERING and "while-O0" in c["why"] and "assembled_at_O0" in c["evidence"]
    assert not c.get("known")
    vstore = {"v": 1, "seed": 1, "grid": [1], "warps": 0, "fmts": ["f32"], "globals": [], "body": [
        {"op": "load", "id": 1, "fmt": "f32", "shape": [8], "dist": "small", "moving": False, "mask": False},
        {"op": "store", "id": 2, "a": 1, "mask": False}]}
    assert not assembled_at_O0(now, vstore)


def test_a_testers_outcomes_carry_the_runs_workarounds():
    """The shrinker's and fuzz-repro's outcomes say which workarounds their run had, so the matchers judge them
    as run. Kills: outcomes without the key at a forced level (the matchers would take the current ones)."""
    from tileir.diff.fuzzrun import InProcessDevice, fake_answer

    desc = G.generate(85, Profile(version=2))
    dev = InProcessDevice(lambda job: fake_answer(job))
    forced = Tester(dev, None, "sm_90", 3, assemble=False).outcomes([desc])[0]
    assert forced["status"] == "equal" and WHILE_O0 not in forced["workarounds"]
    plain = Tester(dev, None, "sm_90", None, assemble=False).outcomes([desc])[0]
    assert plain["workarounds"] == list(run_workarounds(None, "sm_90"))


def test_an_alloca_in_a_for_loop_is_assembled_at_O0():
    """Campaign 4's 3958 (bench/results/fuzz_repro_campaign4/): an alloca in a for loop, wrong at tileiras'
    default level on the H200, right at -O0. Kills: alloca_in_a_loop missing from the trigger, or reading
    only the top level (the alloca is in the loop's body)."""
    from tileir.diff.shrink import read_reproducer

    doc = read_reproducer(os.path.join(os.path.dirname(__file__), "..", "bench", "results", "fuzz_repro_campaign4",
                                       "fuzz_differ_3958.json"))
    k = ti.lower(build(doc["desc"]).prog)
    assert asm.alloca_in_a_loop(k) and not asm.holds_while_loop(k)
    assert asm.kernel_args(k, "13.4.92", "sm_90")[-2:] == ["--opt-level", "0"]
    flat = [i for i in k.body if type(i).__name__ != "ForLoop"]  # the loop gone, its alloca with it
    assert not asm.alloca_in_a_loop(dataclasses.replace(k, body=tuple(flat)))


def test_a_run_without_the_alloca_workaround_is_not_taken_for_O0():
    """Campaign 4 ran before alloca-loop-O0: its 3958 was assembled at tileiras' level, so "right at -O0" is
    evidence there; a run with the workaround assembled it at -O0 already. Kills: assembled_at_O0 reading
    while-O0 alone (or the alloca trigger under while-O0's name)."""
    from tileir.diff.fuzzknown import ALLOCA_O0, WORKAROUNDS, assembled_at_O0
    from tileir.diff.fuzzmodel import ALLOCA_ANY_O0
    from tileir.diff.shrink import read_reproducer

    doc = read_reproducer(os.path.join(os.path.dirname(__file__), "..", "bench", "results", "fuzz_repro_campaign4",
                                       "fuzz_differ_3958.json"))
    before = [w for w in WORKAROUNDS if w not in (ALLOCA_O0, ALLOCA_ANY_O0)]
    assert not assembled_at_O0({"workarounds": before}, doc["desc"])
    assert assembled_at_O0({"workarounds": list(WORKAROUNDS)}, doc["desc"])


REPRO_100243 = os.path.join(ROOT, "bench", "results", "fuzz_repro_campaign6", "fuzz_differ_100243.json")


def _swap_kernel():
    from tileir.diff.shrink import read_reproducer

    k = ti.lower(build(read_reproducer(REPRO_100243)["desc"]).prog)
    (loop,) = [i for i in k.body if type(i).__name__ == "ForLoop" and i.carried]
    return k, loop


def test_a_loop_passing_one_carry_to_another_is_assembled_at_O0():
    """Campaigns 5 and 6's 100243 (bench/results/fuzz_repro_campaign6/): a for loop continuing with its first
    carry's entering value as its second carry's, wrong at tileiras' default level on the H200 and right at
    -O0 (fuzz_100243_h200.json, fuzz_100243_O0_h200.json). Kills: carry_yielded_to_another missing from the
    trigger; a trigger taking a carry passed on in its own place (every loop carrying a token does that)."""
    k, loop = _swap_kernel()
    assert asm.carry_yielded_to_another(k) and not asm.holds_while_loop(k) and not asm.alloca_in_a_loop(k)
    assert asm.kernel_args(k, "13.4.92", "sm_90")[-2:] == ["--opt-level", "0"]
    cont = loop.body[-1]
    own = tuple(ti.ir.Val(c) for c in loop.carried)  # each carry passed on in its own place
    same = dataclasses.replace(loop, body=loop.body[:-1] + (dataclasses.replace(cont, values=own),))
    flat = dataclasses.replace(k, body=tuple(same if i is loop else i for i in k.body))
    assert not asm.carry_yielded_to_another(flat)
    assert asm.kernel_args(flat, "13.4.92", "sm_90") == ["--gpu-name", "sm_90"]


def test_the_carry_trigger_reads_each_loop_with_its_own_continues():
    """Kills: reading the top level only (the swap nested in another loop is missed), and taking a nested
    loop's continue for its outer loop's (an inner loop passing on its own carries is not a swap of the
    outer loop's, even where the positions differ)."""
    k, loop = _swap_kernel()
    outer = dataclasses.replace(loop, results=(), tys=(), inits=(), carried=(), body=(loop, ti.ir.Cont((), ())))
    assert asm.carry_yielded_to_another(dataclasses.replace(k, body=tuple(outer if i is loop else i for i in k.body)))
    own = tuple(ti.ir.Val(c) for c in loop.carried)
    inner = dataclasses.replace(loop, body=loop.body[:-1] + (dataclasses.replace(loop.body[-1], values=own),))
    shifted = tuple(reversed(loop.carried))  # the outer loop's places of the inner loop's carries differ
    outer = dataclasses.replace(loop, carried=shifted, body=(inner, ti.ir.Cont((), ())))
    nested = dataclasses.replace(k, body=tuple(outer if i is loop else i for i in k.body))
    assert not asm.carry_yielded_to_another(nested)


def test_a_run_with_the_carry_workaround_is_taken_for_O0():
    """Kills: assembled_at_O0 not reading carry-swap-O0 (a campaign's 100243 would be "right at -O0" though it
    ran at -O0), or reading it where the run did not have it (campaign 5)."""
    from tileir.diff.fuzzknown import CARRY_SWAP_O0, O0_triggers
    from tileir.diff.shrink import read_reproducer

    desc = read_reproducer(REPRO_100243)["desc"]
    assert O0_triggers(desc) == (CARRY_SWAP_O0,)
    assert assembled_at_O0({"workarounds": list(WORKAROUNDS)}, desc)
    assert not assembled_at_O0({"workarounds": [w for w in WORKAROUNDS if w != CARRY_SWAP_O0]}, desc)
    assert CARRY_SWAP_O0 not in run_workarounds(2, "sm_90")
