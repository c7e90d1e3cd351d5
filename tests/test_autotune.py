"""tileir.autotune on the CPU: the shape buckets and keys, the cache on disk, the committed default
table and the measurements it cites, the choice among answers and timings given to it, the library
matmuls taking their tiles from it, and the refusal to time where there is no GPU."""

import importlib
import json
from pathlib import Path

import numpy as np
import pytest

from tileir import autotune
from tileir.errors import TileirError
from tileir.kernels import CASES, conv1d, histogram, matmul_f16, matmul_i8, tile_for

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path))
    return tmp_path / "tune.json"


@pytest.fixture
def on(monkeypatch):
    """Pretend this machine's GPU is the named target (for best() without a gpu argument)."""

    def set_gpu(gpu):
        monkeypatch.setattr(autotune, "this_gpu", lambda: gpu)

    return set_gpu


# ---- keys ----------------------------------------------------------------------------------------


def test_the_bucket_rounds_sizes_up_to_powers_of_two_and_keeps_the_rest():
    assert autotune.bucket({"m": 200, "n": 136, "k": 300}) == {"k": 512, "m": 256, "n": 256}
    assert autotune.bucket({"s": 4096, "d": 128, "causal": True, "fmt": "bf16", "scale": None}) == {
        "causal": True, "d": 128, "fmt": "bf16", "s": 4096, "scale": None}
    assert autotune.bucket({"a": 0, "b": 1, "c": 2, "d": 3, "e": 1025}) == {"a": 1, "b": 1, "c": 2, "d": 4, "e": 2048}


def test_keys_share_a_bucket_and_part_on_gpu_kernel_sizes_and_formats():
    key = autotune.cache_key
    assert key("sm_90", "matmul_f16", {"M": 200, "N": 136, "K": 300}) == key("sm_90", matmul_f16,
                                                                             {"K": 257, "N": 129, "M": 256})
    base = key("sm_90", "attention", {"S": 500, "D": 64, "fmt": "bf16"})
    for other in (key("sm_80", "attention", {"S": 500, "D": 64, "fmt": "bf16"}),
                  key("sm_90", "bmm", {"S": 500, "D": 64, "fmt": "bf16"}),
                  key("sm_90", "attention", {"S": 600, "D": 64, "fmt": "bf16"}),
                  key("sm_90", "attention", {"S": 500, "D": 64, "fmt": "f16"})):
        assert other != base


def test_the_cache_lives_in_tileir_cache_dir_or_home(monkeypatch, tmp_path):
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path))
    assert autotune.cache_path() == tmp_path / "tune.json"
    monkeypatch.delenv("TILEIR_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert autotune.cache_path() == tmp_path / ".cache" / "tileir" / "tune.json"


# ---- the default table ---------------------------------------------------------------------------


def test_the_default_table_for_sm90():
    best = autotune.best
    for size in ((64, 64, 64), (8192, 8192, 8192), (1, 7, 65)):
        cfg = dict(zip("MNK", size))  # the run-time sizes, as a call passes them
        assert best("matmul_i8", "sm_90", **cfg) == {"tm": 128, "tn": 256, "tk": 64, "warps": 8}  # no rule: the table
        if size != (8192, 8192, 8192):  # small products get the rule's tile, not the 8192^3 entry's 128 x 256
            assert [best(k, "sm_90", **cfg)["tm"] for k in ("matmul_f16", "matmul_bf16", "matmul_tf32")] == [64] * 3
            continue
        assert best("matmul_f16", "sm_90", **cfg) == {"tm": 128, "tn": 256, "tk": 32, "group": 8, "warps": 8}
        assert best("matmul_bf16", "sm_90", **cfg) == {"tm": 128, "tn": 256, "tk": 32, "group": 8, "warps": 8,
                                                       "occupancy": 1}
        assert best("matmul_tf32", "sm_90", **cfg) == {"tm": 128, "tn": 256, "tk": 32, "group": 8, "warps": 8,
                                                       "occupancy": 0}
    # D 128 has no entry since the rule's 64-row blocks (heuristics.HALF_ROWS_WARPS without the mask,
    # CAUSAL_D128_SHORT_KEYS causal); causal past 1024 keys the rule gives what the causal entry held
    data = json.loads(autotune.DEFAULTS_FILE.read_text())
    assert not [e for e in data["entries"] if e["kernel"] == "attention"]
    assert best("attention", "sm_90", B=4, H=32, S=4096, D=128, causal=True) == {"bq": 128, "bk": 128, "d_tile": 128,
                                                                                 "warps": 8, "occupancy": 1}
    assert best("attention", "sm_90", B=4, H=32, S=4096, D=128, causal=False) == {"bq": 64, "bk": 128, "d_tile": 128,
                                                                                  "warps": 4, "occupancy": 2}
    assert best("softmax", "sm_90", R=8192, C=8192) == {"max_tile": 8192, "warps": 0, "occupancy": 4, "one_chunk": True}
    # D 64 has no committed measurement, so the table holds no entry for it
    assert best("attention", "sm_90", S=200, D=64, fmt="bf16") is None
    assert best("attention", "sm_90", S=200, D=32) is None
    assert best("matmul_f16", "sm_80", M=64, N=64, K=64) is None
    assert best("vadd", "sm_90", N=1000) is None


def test_the_default_table_cites_measurements_that_say_so():
    data = json.loads(autotune.DEFAULTS_FILE.read_text())
    src = data["source"]
    rounds = ("bench/results/tune_h200.json", "bench/results/tune2_h200.json", "bench/results/tune_tf32_h200.json")
    for f in rounds + ("bench/results/h200.json",):
        assert f in src and (ROOT / f).exists(), f
    by_name = {}
    for f in rounds:  # round 2 replaces round 1 where it ran
        sweep = json.loads((ROOT / f).read_text())
        assert sweep["target"] == "sm_90" and not sweep["assembly_failures"]
        by_name.update({w["workload"]: (f, w) for w in sweep["workloads"]})
    swept = [e for e in data["entries"] if "workload" in e]
    assert len(swept) == len(data["entries"])  # every entry is a sweep's winner
    # the row kernels measured again on run-time sizes (bench/row_configs.py): the entry is the
    # fastest candidate's hints, without one_chunk (the rule sets it where the row is one chunk: a
    # catch-all entry also serves rows wider than the chunk)
    rows_file = "bench/results/row_configs_h200.json"
    again = {r["workload"]: r for r in json.loads((ROOT / rows_file).read_text())["records"]}
    for e in [e for e in swept if e["results"] == rows_file]:
        r = again[e["workload"]]
        fastest = min((c for c in r["candidates"] if c["ok"]), key=lambda c: c["ms"])
        assert fastest["ms"] == r["best_ms"] and "one_chunk" not in e["config"], e["workload"]
        assert all(fastest["config"][k] == v for k, v in e["config"].items()), e["workload"]
        assert str(r["ratio"]) in e["measured"] and rows_file in e["measured"]
    swept = [e for e in swept if e["results"] != rows_file]
    for e in swept:
        f, w = by_name[e["workload"]]
        assert e["results"] == f
        # the entry is the sweep's winner, the winner agreed with torch, and it is the fastest
        assert e["config"] == w["winner"] and w["winner_equals_torch"], e["workload"]
        # the entry's when holds for the sweep: its configuration and its arrays' run-time sizes; the
        # committed sweeps ran when sizes were configuration, spelled in lower case (d=128 for D)
        ran = dict(w["config"], **w.get("sizes", {}))
        assert e["kernel"] == w["kernel"], e["workload"]
        assert all(ran.get(k, ran.get(k.lower())) == v for k, v in e["when"].items()), e["workload"]
        ok = [c for c in w["candidates"] if c["ok"]]
        assert max(ok, key=lambda c: c["rate"])["config"] == e["config"]
        assert str(w["best_rate"]) in e["measured"] and f in e["measured"]
    h200 = {r["workload"]: r for r in json.loads((ROOT / "bench/results/h200.json").read_text())}
    # the benchmark ran the table's choices (the library's own, through autotune.best)
    benchmarked = [e for e in swept if e["workload"] in h200]
    assert {e["kernel"] for e in swept} - {e["kernel"] for e in benchmarked} <= {"rmsnorm"}  # not a workload
    for e in benchmarked:
        ran = h200[e["workload"]]["tileir_config"]
        assert all(ran[k] == v for k, v in e["config"].items()), e["workload"]
    # every entry cites a results file
    assert all("bench/results/" in e["measured"] for e in data["entries"])


def test_best_without_a_gpu_answers_none(cache, on):
    on(None)
    assert autotune.best("matmul_f16", M=8192, N=8192, K=8192) is None
    on("sm_90")
    assert autotune.best("matmul_f16", M=8192, N=8192, K=8192)["tm"] == 128


def test_a_call_fills_the_tuned_keys_it_leaves_out(cache):
    from tileir.kernels import attention, matmul_f16, softmax

    # nothing named: the table's winner for the call's run-time sizes; anything named: the caller's choice whole
    sizes = {"M": 8192, "N": 8192, "K": 8192}
    assert matmul_f16.tuned_config({}, "sm_90", sizes) == {"tm": 128, "tn": 256, "tk": 32, "group": 8, "warps": 8}
    assert matmul_f16.tuned_config({"tm": 64}, "sm_90", sizes) == {"tm": 64}
    assert matmul_f16.tuned_config({}, None, sizes) == {}
    assert matmul_f16.tuned_config({}, "sm_80", sizes) == {}
    got = attention.tuned_config({"causal": True}, "sm_90", {"B": 4, "H": 32, "S": 4096, "D": 128})
    assert (got["bq"], got["bk"], got["warps"], got["occupancy"]) == (128, 128, 8, 1)
    # the rule's heavy_first joins the 128 x 128 blocks where it applies (causal, at least 4096 keys, at most 64
    # heads), and nowhere else. Kills: the order dropped, or given where it measured slower
    assert "heavy_first" not in got  # 128 heads: the headline's shape, where the order measured 2% slower
    long = attention.tuned_config({"causal": True}, "sm_90", {"B": 2, "H": 16, "S": 8192, "D": 128})
    assert long["heavy_first"] is True and (long["bq"], long["occupancy"]) == (128, 1)
    # a shape whose 128-row blocks would not fill the GPU (bq 64 and tileiras' warps without the mask): causal
    # D 128 keeps the 128 x 128 blocks with 8 warps the table's entry held (heuristics.CAUSAL_D128_SHORT_KEYS)
    few = attention.tuned_config({"causal": True}, "sm_90", {"B": 1, "H": 4, "S": 4096, "D": 128})
    assert (few["bq"], few["warps"], few["heavy_first"]) == (128, 8, True)
    assert "heavy_first" not in attention.tuned_config({"causal": True}, "sm_90", {"B": 32, "H": 16, "S": 512,
                                                                                   "D": 128})
    assert "heavy_first" not in attention.tuned_config({"causal": False}, "sm_90", {"B": 4, "H": 32, "S": 4096,
                                                                                    "D": 128})
    assert "bq" not in attention.tuned_config({"causal": True}, "sm_90", {"S": 4096, "D": 64})  # no entry for D 64
    assert softmax.tuned_config({}, "sm_90", {"R": 8192, "C": 8192})["occupancy"] == 4
    # the cache's winner comes before the table
    autotune._write_entry(autotune.cache_key("sm_90", "softmax", {"R": 8192, "C": 8192}),
                          {"config": {"max_tile": 4096, "warps": 8}})
    assert softmax.tuned_config({}, "sm_90", {"R": 8192, "C": 8192})["max_tile"] == 4096
    # another bucket: not the cache's; a narrow row is one chunk of its own width (heuristics.py)
    assert softmax.tuned_config({}, "sm_90", {"R": 8192, "C": 100})["max_tile"] == 128


def _calls_on_sm90(monkeypatch):
    """GPU calls on a CPU: the cubin and the launch replaced, the configuration each call was
    prepared with recorded."""
    from tileir.kernel import KernelFn

    prepared = []

    def cubin(self, arch="sm_90", opt_level=None, div16=(), checked=False, **static):
        prepared.append(dict(static))
        return b""

    monkeypatch.setattr(KernelFn, "cubin", cubin)
    launch_module = importlib.import_module("tileir.runtime.launch")  # the package exports a function of that name
    monkeypatch.setattr(launch_module, "launcher_for", lambda *a, **k: lambda g, args, s, sync: None)
    return prepared


def test_a_new_winner_reaches_calls_prepared_before_it(cache, monkeypatch):
    """tune forgets the kernel's prepared calls, so the next plain call looks its tuned keys up again."""
    from tileir.kernels import softmax

    prepared = _calls_on_sm90(monkeypatch)
    x, y = np.zeros((4, 8192), np.float32), np.zeros((4, 8192), np.float32)
    softmax.forget()
    softmax(x, y, arch="sm_90")
    assert prepared[-1]["max_tile"] == 8192 and prepared[-1]["occupancy"] == 4  # the table's
    autotune.tune(softmax, [{"max_tile": 4096}, {"max_tile": 8192}], [x, y], run=lambda cfg: [np.zeros(4)],
                  timer=lambda call, cfg: 1.0 if cfg["max_tile"] == 4096 else 2.0, gpu="sm_90")
    softmax(x, y, arch="sm_90")
    # the cache's winner, whole: what was measured (occupancy left to the kernel's default)
    assert prepared[-1]["max_tile"] == 4096 and prepared[-1]["occupancy"] == 0
    softmax(np.zeros((4, 100), np.float32), np.zeros((4, 100), np.float32), arch="sm_90")
    assert prepared[-1]["max_tile"] == 128  # another size bucket: not the winner (the rule's: its own width)
    softmax.forget()


def test_a_call_with_its_own_grid_keeps_its_configuration(cache, monkeypatch):
    """kernel.grid(...) works from the configuration as written, so a call given that grid must run
    that configuration, not the table's tiles (which would want another grid)."""
    from tileir.kernels import matmul_f16

    prepared = _calls_on_sm90(monkeypatch)
    a = np.zeros((256, 256), np.float16)
    matmul_f16.forget()
    matmul_f16(a, a, a, grid=matmul_f16.grid(a, a, a), arch="sm_90")
    assert prepared[-1]["tn"] == 128 and prepared[-1]["group"] == 0  # the kernel's own defaults
    matmul_f16(a, a, a, arch="sm_90")
    want = autotune.best("matmul_f16", "sm_90", M=256, N=256, K=256)
    assert {k: prepared[-1][k] for k in want} == want and want["tn"] != 128  # best's (the rule's here)
    matmul_f16.forget()


def test_spellings_of_one_call_meet_one_cache_entry(cache):
    from tileir.kernels import attention

    assert autotune.canonical(attention, {"S": 4096, "D": 128, "fmt": "f16", "causal": False, "warps": 8}) == \
        {"S": 4096, "D": 128}  # defaults and tuned keys are not part of the key
    assert autotune.canonical("attention", {"S": 4096, "fmt": "bf16"}) == {"S": 4096, "fmt": "bf16"}
    assert autotune.canonical("no_such_kernel", {"fmt": "f16"}) == {"fmt": "f16"}
    # no arrays given: the sizes the call names (S=, D=) key the entry
    autotune.tune(attention, [{"bq": 64}, {"bq": 128}], [], run=lambda cfg: [np.zeros(4)],
                  timer=lambda call, cfg: 1.0 if cfg["bq"] == 64 else 2.0, gpu="sm_90", S=4096, D=128,
                  causal=False, fmt="f16", bk=64)
    for spelled in ({}, {"fmt": "f16"}, {"causal": False, "fmt": "f16"}):
        # the winner, self-complete: the tuned key the fixed configuration named (bk) comes with it
        assert autotune.best(attention, "sm_90", S=4096, D=128, **spelled) == {"bq": 64, "bk": 64}
        assert autotune.best("attention", "sm_90", S=4096, D=128, **spelled) == {"bq": 64, "bk": 64}
    # another call (bf16, causal) does not meet that entry: the rule's 128 x 128 blocks
    assert autotune.best(attention, "sm_90", B=4, H=32, S=4096, D=128, fmt="bf16", causal=True)["bk"] == 128


def test_tune_keys_its_entry_by_the_sizes_of_its_arrays(cache):
    """The arrays' run-time sizes key the entry, so a call of that size bucket finds it."""
    from tileir.kernels import attention

    q = np.zeros((1, 2, 300, 80), np.float16)
    k = np.zeros((1, 1, 500, 80), np.float16)
    autotune.tune(attention, [{"bq": 64, "d_tile": 128}, {"bq": 32, "d_tile": 128}], [q, k, k, q],
                  run=lambda cfg: [np.zeros(4)], timer=lambda call, cfg: cfg["bq"] / 64, gpu="sm_90")
    (entry,) = json.loads(cache.read_text())["entries"].values()
    assert entry["bucket"] == {"B": 1, "D": 128, "H": 2, "H_kv": 1, "S": 512, "S_kv": 512}
    sizes = {"B": 1, "H": 2, "S": 400, "D": 100, "H_kv": 1, "S_kv": 257}
    assert attention.tuned_config({}, "sm_90", sizes) == {"bq": 32, "d_tile": 128}


# ---- the choice, with answers and timings given ---------------------------------------------------


def _fake(times, answers=None, refuse=()):
    seen = []

    def run(cfg):
        seen.append(cfg)
        if cfg["tm"] in refuse:
            raise TileirError("tile refused")
        return [np.full(4, (answers or {}).get(cfg["tm"], 1.0), np.float32)]

    def timer(call, cfg):
        return times[cfg["tm"]]

    return run, timer, seen


def test_tune_picks_the_fastest_agreeing_candidate_and_remembers_it(cache):
    cands = [{"tm": 128, "tk": 64}, {"tm": 64, "tk": 64}, {"tm": 32, "tk": 32}, {"tm": 256, "tk": 64},
             {"tm": 16, "tk": 16}]
    run, timer, seen = _fake({128: 2.0, 64: 1.5, 32: 0.5, 256: 0.1, 16: 1.0}, answers={32: 1.5}, refuse=(256,))
    results = []
    win = autotune.tune(matmul_f16, cands, [], run=run, timer=timer, gpu="sm_90", results=results,
                        M=1000, N=1000, K=1000)
    # 256 is the fastest but refused, 32 faster still than 16 but its answer differs
    assert win == {"tm": 16, "tk": 16}
    assert [r["ok"] for r in results] == [True, True, False, False, True]
    assert "differs" in results[2]["error"] and "refused" in results[3]["error"]
    assert all(c["M"] == 1000 and c["N"] == 1000 for c in seen)  # the sizes the call named, passed on
    entries = json.loads(cache.read_text())["entries"]
    (entry,) = entries.values()
    assert entry["config"] == win and entry["ms"] == 1.0 and entry["bucket"] == {"K": 1024, "M": 1024, "N": 1024}
    # the cache now answers for the whole bucket, ahead of the default table; other buckets keep the table
    assert autotune.best("matmul_f16", "sm_90", M=600, N=1024, K=513) == win
    # another bucket: the rule for shapes nobody measured (heuristics.py), not the cache's winner
    from tileir.heuristics import rule

    other = autotune.best("matmul_f16", "sm_90", M=2000, N=1000, K=1000)
    assert other != win and other == rule("matmul_f16", "sm_90", {"M": 2000, "N": 1000, "K": 1000},
                                          autotune.best("matmul_f16", "sm_90", M=64, N=64, K=64))
    assert autotune.best("matmul_f16", "sm_80", M=1000, N=1000, K=1000) is None


def test_the_tolerance_decides_agreement(cache):
    cands = [{"tm": 128}, {"tm": 64}]
    run, timer, _ = _fake({128: 2.0, 64: 1.0}, answers={64: 1.0 + 1e-4})
    assert autotune.tune(matmul_f16, cands, [], run=run, timer=timer, gpu="sm_90", M=8, N=8, K=8) == {"tm": 64}
    assert autotune.tune(matmul_f16, cands, [], run=run, timer=timer, gpu="sm_90", rtol=0, atol=1e-6,
                         M=8, N=8, K=8) == {"tm": 128}


def test_tune_refuses_when_no_candidate_runs_and_keeps_nothing_without_a_gpu_name(cache, on):
    on(None)
    run, timer, _ = _fake({128: 1.0, 64: 2.0}, refuse=(128, 64))
    with pytest.raises(TileirError, match="no candidate ran"):
        autotune.tune(matmul_f16, [{"tm": 128}, {"tm": 64}], [], run=run, timer=timer, gpu="sm_90", M=8, N=8, K=8)
    run, timer, _ = _fake({128: 1.0, 64: 2.0})
    assert autotune.tune(matmul_f16, [{"tm": 128}, {"tm": 64}], [], run=run, timer=timer, M=8, N=8, K=8) == {"tm": 128}
    assert not cache.exists()
    with pytest.raises(TileirError, match="both a candidate"):
        autotune.tune(matmul_f16, [{"tm": 8}], [], run=run, timer=timer, tm=8)


def test_tune_with_the_host_reference_as_the_answer(cache):
    # real answers (the host reference at three tile shapes), fake timings
    case = CASES["matmul_f16"]
    size = (70, 40, 100)
    args = case.inputs(size, np.random.default_rng(0))

    def run(cfg):
        c = np.zeros_like(args[2])
        matmul_f16.run_host(args[0], args[1], c, **cfg)
        return [c]

    cands = [{"tm": 64, "tn": 64, "tk": 32}, {"tm": 32, "tn": 64, "tk": 64}, {"tm": 128, "tn": 32, "tk": 16}]
    times = {64: 3.0, 32: 1.0, 128: 2.0}
    results = []
    win = autotune.tune(matmul_f16, cands, args, run=run, timer=lambda call, cfg: times[cfg["tm"]], gpu="sm_90",
                        results=results)  # the sizes: the arrays' 70 x 100 x 40
    assert win == {"tm": 32, "tn": 64, "tk": 64} and all(r["ok"] for r in results)
    assert tile_for("matmul_f16", 70, 40, 100, gpu="sm_90") == win


def test_a_damaged_cache_reads_as_empty(cache):
    cache.write_text("{not json")
    with pytest.warns(autotune.TuneCacheWarning, match="not JSON"):  # naming the file
        assert autotune.read_cache() == {}
    assert autotune.best("matmul_bf16", "sm_90", M=8192, N=8192, K=8192)["tn"] == 256  # the table's


def test_tune_refuses_to_time_without_a_gpu(on):
    on(None)
    with pytest.raises(TileirError, match="there is none here"):
        autotune.tune(matmul_f16, [{"tm": 128}], [], M=8, N=8, K=8)
    with pytest.raises(TileirError, match="there is none here"):  # an answer alone is not a timing
        autotune.tune(matmul_f16, [{"tm": 128}], [], run=lambda cfg: [], M=8, N=8, K=8)


def test_the_buffers_a_kernel_writes():
    assert autotune._written(matmul_f16, {}) == [2]
    assert autotune._written(matmul_f16, {"group": 8}) == [2]  # C a Shared
    assert autotune._written(matmul_i8, {}) == [2]
    assert autotune._written(histogram, {}) == [1]
    assert autotune._written(conv1d, {"tile": 256}) == [2]


# ---- the library takes its tiles from it ---------------------------------------------------------


def test_the_matmul_cases_take_their_tiles_from_best(cache, on):
    case = CASES["matmul_f16"]
    on(None)  # no GPU: no tiles, the kernel's own defaults
    assert case.config((200, 136, 300)) == {}
    assert tile_for(matmul_f16, 200, 136, 300) == {}
    on("sm_90")  # best's: the rule's tile for a product this small (64 x 64 here)
    cfg = case.config((200, 136, 300))
    assert cfg == autotune.best("matmul_f16", "sm_90", M=200, N=136, K=300) and cfg["tm"] == 64
    assert matmul_f16.config(**cfg) == dict(matmul_f16.config(), **cfg)
    assert matmul_f16.tuned_config({}, "sm_90", {"M": 200, "N": 136, "K": 300}) == cfg  # a call's the same
    assert CASES["matmul_tf32"].config(64)["tn"] == 64  # the rule's, within the 64 x 64 problem
    assert CASES["matmul_i8"].config(64)["tn"] == 256  # no rule for i8: the table's
    # a tuned winner for the bucket wins, and only the tuned keys are taken
    run, timer, _ = _fake({64: 1.0, 128: 2.0})
    autotune.tune(matmul_f16, [{"tm": 128, "tn": 128, "tk": 64}, {"tm": 64, "tn": 128, "tk": 32}], [], run=run,
                  timer=timer, M=200, N=136, K=300)
    assert case.config((250, 150, 400)) == {"tm": 64, "tn": 128, "tk": 32}
    assert case.kernel is matmul_f16 and matmul_f16.static["tm"] == 128  # the kernel's defaults are untouched
