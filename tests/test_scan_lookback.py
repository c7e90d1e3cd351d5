"""The one-pass prefix sum (kernels.prefix_sum's scan_lookback) on the host reference: whole vectors against numpy
(f32 within the module's bound, i32 exactly), and the look-back walk itself on status words seeded as a
GPU could leave them -- the host runs blocks in order, so each block otherwise finds the tile before it
finished. Layer 1 for the kernel (tileirdisasm of our bytes == render_kernel; tileiras assembles)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tileir.assemble as asm
from tests.kernelcheck import render_matches_disassembly
from tileir.kernels.prefix_sum import AGGREGATE, INCLUSIVE, prefix_sum, scan_lookback, status_words


@pytest.mark.parametrize("n,tile,window", [(1, 1024, 32), (1000, 256, 32), (5000, 64, 4), (100_003, 1024, 32),
                                           (3001, 32, 32), (4096, 1024, 2)])
def test_one_pass_scan_matches_numpy(n, tile, window):
    rng = np.random.default_rng(n)
    x = (rng.random(n, dtype=np.float32) - np.float32(0.25)) * np.float32(4)  # a quarter of them negative
    want = np.cumsum(x.astype(np.float64))
    y = prefix_sum(x, tile=tile, window=window, one_pass=True)
    tiles = -(-n // tile)
    bound = (2 * tile + window + tiles + 1) * 2.0**-24 * np.cumsum(np.abs(x.astype(np.float64)))  # the module's
    assert np.all(np.abs(y - want) <= bound)
    xi = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    assert np.array_equal(prefix_sum(xi, tile=tile, window=window, one_pass=True),
                          np.cumsum(xi.astype(np.int64)).astype(np.int32))  # wraps, exactly


def _word(flag, value, fmt):
    bits = np.array([value], np.float32).view(np.int32)[0] if fmt == "f32" else np.int32(value)
    return np.int64((flag << 32) | (int(bits) & 0xFFFFFFFF))


@pytest.mark.parametrize("fmt", ["f32", "i32"])
@pytest.mark.parametrize("seeded,window", [
    # tiles 0..7 as running blocks may have left them: tile 2's inclusive sum, the others' own sums
    ({2: INCLUSIVE}, 8),  # the window holds tiles 0..7: tile 2's inclusive sum and 3..7's own
    ({2: INCLUSIVE}, 32),  # the window reaches before tile 0: still the nearest inclusive sum, tile 2's
    ({6: INCLUSIVE, 2: INCLUSIVE}, 8),  # the nearest (6's) ends it, not 2's
    ({5: INCLUSIVE}, 4),  # the window holds tiles 4..7 only: 5's inclusive sum, 6's and 7's own
    ({}, 16),  # no inclusive sum at all: the window reaches before tile 0 (the inclusive sum 0)
])
def test_the_look_back_adds_the_sums_after_the_nearest_inclusive_one(fmt, seeded, window):
    """Kills: the farthest inclusive sum taken for the nearest, the tiles after it left out or the
    inclusive word's value dropped, the window's lanes off by one (tile 4 read at window 4)."""
    tile, done = 8, 8  # the ticket starts at 8: the first block takes tile 8, as if 8 blocks had started
    n = 12 * tile
    x = (np.arange(n) % 5).astype(np.float32 if fmt == "f32" else np.int32)
    sums = {t: -10 * (t + 1) for t in range(done)}  # tile t's published sum (not x's: the walk must read them;
    incl = {t: -1000 - t for t in seeded}  # negative, so the words' high halves hold the flags alone)
    status = np.zeros(status_words(n, tile) + done, np.int64)  # the blocks past the 12 tiles publish too
    status[0] = done
    for t in range(done):
        status[1 + t] = _word(seeded.get(t, AGGREGATE), incl.get(t, sums[t]), fmt)
    y = np.zeros(n, x.dtype)
    scan_lookback.run_host(x, y, status, fmt=fmt, tile=tile, window=window)
    stop = max(seeded, default=-1)
    before = (incl[stop] if stop >= 0 else 0) + sum(sums[t] for t in range(stop + 1, done))
    want = before + np.cumsum(x[done * tile:].astype(np.int64))
    assert np.array_equal(y[done * tile:], want.astype(x.dtype))
    assert not y[:done * tile].any()  # the seeded tiles' blocks never ran
    flags = status[1:1 + n // tile] >> 32
    assert (flags[done:] == INCLUSIVE).all()


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_any_published_state_gives_the_same_sum_before_the_tile(data):
    """Whatever running blocks have published -- each earlier tile's own sum, or its inclusive sum, or
    (before the nearest inclusive sum) nothing yet -- the sum before the tile is the same: the walk's
    answer against a model of the words (the window holding an inclusive sum, or reaching before tile 0).
    Kills: the farthest inclusive sum taken for the nearest, an inclusive word's value dropped or added
    twice, a window's lanes off by one."""
    done = data.draw(st.integers(1, 20), "tiles before")
    window = data.draw(st.sampled_from([1, 2, 4, 8, 32]), "window")
    own = data.draw(st.lists(st.integers(-50, 50), min_size=done, max_size=done), "their sums")
    kinds = data.draw(st.lists(st.sampled_from("AI0"), min_size=done, max_size=done), "published")
    if done > window and "I" not in kinds[done - window:]:  # an inclusive sum in the window (else it waits)
        kinds[data.draw(st.integers(done - window, done - 1), "inclusive at")] = "I"
    last_incl = max((t for t, k in enumerate(kinds) if k == "I"), default=-1)
    kinds = [k if k != "0" or t < last_incl else "A" for t, k in enumerate(kinds)]  # no wait after it
    kinds[0] = "I" if kinds[0] == "A" else kinds[0]  # tile 0 publishes its inclusive sum at once
    inclusive = [sum(own[:t + 1]) for t in range(done)]
    tile, n = 4, 4 * (done + 1)
    status = np.zeros(status_words(n, tile) + done, np.int64)
    status[0] = done
    for t, k in enumerate(kinds):
        status[1 + t] = 0 if k == "0" else _word(INCLUSIVE, inclusive[t], "i32") if k == "I" else \
            _word(AGGREGATE, own[t], "i32")
    x = np.arange(n, dtype=np.int32)
    y = np.zeros(n, np.int32)
    scan_lookback.run_host(x, y, status, fmt="i32", tile=tile, window=window)
    assert y[done * tile] == inclusive[-1] + x[done * tile]


def _ends(code: str) -> list[str]:
    """The words ``code`` prints, run in a subprocess that must end within 120 s (a look-back that waits on
    the host never ends: it runs one block at a time)."""
    import subprocess
    import sys

    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    return got.stdout.split()


def _still_running(code: str, first_lines=()) -> None:
    """``code`` in a subprocess prints ``first_lines`` and is still running 5 s later (the runs that end took
    well under a second)."""
    import subprocess
    import sys
    import time

    run = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        for want in first_lines:
            assert run.stdout.readline().strip() == want
        time.sleep(5)
        assert run.poll() is None, run.stdout.read()
    finally:
        run.kill()
        run.wait()


def test_the_walk_waits_for_a_tile_after_the_nearest_inclusive_sum_but_not_before_it():
    """Kills: the wait dropped (an unpublished word read as a sum of 0), and the wait on every word of
    the window (also the words before the nearest inclusive sum, which the walk does not need). A
    walk that waits never ends on the host, which runs one block at a time, so it runs in subprocesses:
    with the unpublished word before the inclusive sum (it must end, and its answer is checked), then
    that run again and, the program recorded, one with the word after it (still running 5 s later)."""
    tile, n = 8, 8 * 9
    code = (
        "import numpy as np\n"
        "from tileir.kernels.prefix_sum import scan_lookback\n"
        "def status(gap):\n"
        "    s = np.zeros(10 + 9, np.int64); s[0] = 8\n"
        "    s[1:9] = [(1 << 32) | 5] * 8\n"  # tiles 0..7: their own sums, 5 each
        "    s[1 + 2] = (2 << 32) | 7\n"  # tile 2: the inclusive sum 7
        "    s[1 + gap] = 0\n"  # tile gap not yet published
        "    return s\n"
        f"x = np.ones({n}, np.int32); y = np.zeros({n}, np.int32)\n"
        f"scan_lookback.run_host(x, y, status(1), fmt='i32', tile={tile}, window=8)\n"
        "print(int(y[-1]), flush=True)\n"
        "print('waiting', flush=True)\n"
        f"scan_lookback.run_host(x, y, status(5), fmt='i32', tile={tile}, window=8)\n"
        "print('ended', flush=True)\n"
    )
    first = code.split("print('waiting'")[0]  # the run that must end, alone: a hang there is a timeout
    assert _ends(first) == [str(7 + 5 * 5 + tile)]  # tile 1 lies before tile 2's sum
    _still_running(code, [str(7 + 5 * 5 + tile), "waiting"])


def test_a_window_without_an_inclusive_sum_waits_for_one():
    """Tiles 4..7 published their own sums only and tile 2 its inclusive sum: a window of 4 (tiles 4..7)
    holds no inclusive sum, so the block waits (its predecessors publish theirs in time on a GPU); a window
    of 8 reaches tile 2 and ends. Kills: a window read as if an inclusive sum lay before it (the own sums
    added with nothing under them), and a window that ignores where it ends."""
    code = (
        "import numpy as np\n"
        "from tileir.kernels.prefix_sum import scan_lookback\n"
        "def run(window):\n"
        "    s = np.zeros(19, np.int64); s[0] = 8\n"
        "    s[1:9] = [(1 << 32) | 5] * 8; s[1 + 2] = (2 << 32) | 7\n"
        "    y = np.zeros(72, np.int32)\n"
        "    scan_lookback.run_host(np.ones(72, np.int32), y, s, fmt='i32', tile=8, window=window)\n"
        "    return int(y[-1])\n"
    )
    assert _ends(code + "print(run(8))\n") == [str(7 + 5 * 5 + 8)]  # window 8: ends
    _still_running(code + "print(run(4))\n")  # window 4: still waiting


def test_the_look_back_carries_nothing_and_prefix_sum_assembles_it_at_the_default_level(monkeypatch):
    """The forced level (prefix_sum's LEVEL) rests on the loop carrying no data (only the memory token that
    orders its atomics) and the kernel holding no alloca: tileiras 13.4.92's while-loop defect answered
    stale carried values (assemble.optimiser_loops). Kills: a carried value added to the look-back, an
    alloca, and the level dropped from prefix_sum's call (the kernel then runs at -O0, where its first form ran
    4-8x slower than two passes: bench/results/scan_lookback_h100.json)."""
    import importlib

    from tileir.instrs import WhileLoop

    module = importlib.import_module("tileir.kernels.prefix_sum")  # (the package's prefix_sum is the function)

    for cfg in ({"fmt": "f32"}, {"fmt": "i32", "tile": 256, "window": 8}):
        k = scan_lookback.kernel(**cfg)
        loops = [i for i in asm._walk(k.body) if isinstance(i, WhileLoop)]
        # the one value it carries is the memory token that orders its atomic reads: no data
        assert len(loops) == 1 and all(type(t).__name__ == "Token" for t in (loops[0].carried_tys or loops[0].tys))
        assert "AllocaPtr" not in asm.instr_kinds(k)
        assert asm.kernel_args(k, "13.4.92", "sm_90") == ["--gpu-name", "sm_90", "--opt-level", "0"]  # unforced
    calls = []

    class Recorder:
        def __call__(self, *args, **kw):
            calls.append(kw)

    monkeypatch.setattr(module, "scan_lookback", Recorder())
    x = np.ones(5000, np.float32)
    prefix_sum(x, host=False, one_pass=True)
    assert calls and calls[0]["opt_level"] == module.LEVEL == 3


def test_a_short_status_vector_is_refused():
    from tileir.errors import TileirError

    with pytest.raises(TileirError, match="status words"):
        scan_lookback.run_host(np.ones(100, np.float32), np.zeros(100, np.float32), np.zeros(3, np.int64), tile=32)


def test_layer1_disassembly_and_tileiras(disasm):
    for cfg in ({"fmt": "f32"}, {"fmt": "i32", "tile": 256, "window": 16}):
        render_matches_disassembly(scan_lookback, cfg, disasm, ["13.4"])
        k = scan_lookback.kernel(**cfg)
        cubin = asm.assemble(scan_lookback.bytecode(**cfg), "sm_90", kernel="scan_lookback", cache=False, program=k)
        assert cubin[:4] == b"\x7fELF"


@pytest.mark.gpu
@pytest.mark.parametrize("opt_level", [None, 0])  # prefix_sum's LEVEL, and the while-loop workaround's
@pytest.mark.parametrize("n", [1, 1000, (1 << 20) + 3, 1 << 24])
def test_one_pass_scan_on_the_gpu(n, opt_level):
    torch = pytest.importorskip("torch")
    x = torch.rand(n, device="cuda")
    want = torch.cumsum(x.double(), 0)
    y = prefix_sum(x, one_pass=True, opt_level=opt_level)
    tiles = -(-n // 1024)
    assert torch.all((y.double() - want).abs() <= (2 * 1024 + 32 + tiles + 1) * 2.0**-24 * want)  # the module's L
    xi = torch.randint(-2**31, 2**31 - 1, (n,), device="cuda", dtype=torch.int32)
    assert torch.equal(prefix_sum(xi, one_pass=True, opt_level=opt_level), torch.cumsum(xi.long(), 0).to(torch.int32))
