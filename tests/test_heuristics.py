"""Issue 12 on the CPU: the kernel variants that make every shape fast (rows per block, split-K,
the f32 product's precisions, the fp8 product) against independent references on the host
reference at odd sizes, and the rule for unmeasured shapes (heuristics.py) as
autotune.best consults it."""

import ml_dtypes
import numpy as np
import pytest

from tileir import autotune
from tileir.errors import TileirError
from tileir.heuristics import SMALL_OPERAND, bmm_walk, matmul_split, matmul_walk, pow2_at_least, rule
from tileir.kernels import bmm, layernorm, matmul_bf16, matmul_f16, matmul_nt, matmul_tf32, rmsnorm, softmax
from tileir.kernels.attention import attention
from tileir.kernels.gemm import even_splits, gemm, matmul_partial, matmul_split_k, plan
from tileir.kernels.matmul_f8 import matmul_f8, reference

U = 2.0 ** -24


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path))
    return tmp_path / "tune.json"


def rng():
    return np.random.default_rng(12)


# ---- rows per block ------------------------------------------------------------------------------


def _softmax_ref(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("r,c,tile,rows,fmt", [(13, 100, 128, 4, "f32"), (7, 300, 128, 2, "f32"),
                                                (5, 1000, 1024, 8, "f16"), (9, 33, 64, 16, "bf16"),
                                                (1, 7, 16, 8, "f32")])
def test_softmax_with_several_rows_a_block(r, c, tile, rows, fmt):
    npd = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}[fmt]
    x = (rng().standard_normal((r, c)) * 4).astype(npd)
    y = np.full((r, c), 7, npd)
    softmax.run_host(x, y, fmt=fmt, max_tile=tile, rows=rows)
    tol = {"f32": 1e-6, "f16": 2e-3, "bf16": 1e-2}[fmt]
    assert np.abs(y.astype(np.float64) - _softmax_ref(x)).max() < tol
    assert softmax.grid(x, y, max_tile=tile, rows=rows) == (-(-r // rows),)


@pytest.mark.parametrize("r,c,tile,rows", [(13, 100, 128, 4), (7, 300, 128, 2), (3, 7, 16, 8)])
def test_norms_with_several_rows_a_block(r, c, tile, rows):
    g = rng()
    x = (g.standard_normal((r, c)) * 2 + 0.5).astype(np.float32)
    w = (1 + 0.5 * g.standard_normal(c)).astype(np.float32)
    b = g.standard_normal(c).astype(np.float32)
    xx = x.astype(np.float64)
    mu = xx.mean(1, keepdims=True)
    y = np.zeros_like(x)
    layernorm.run_host(x, w, b, y, max_tile=tile, rows=rows)
    want = (xx - mu) / np.sqrt(((xx - mu) ** 2).mean(1, keepdims=True) + 1e-5) * w + b
    assert np.abs(y - want).max() < 1e-5
    y = np.zeros_like(x)
    rmsnorm.run_host(x, w, y, max_tile=tile, rows=rows)
    assert np.abs(y - xx / np.sqrt((xx * xx).mean(1, keepdims=True) + 1e-6) * w).max() < 1e-5


def test_the_forwards_that_save_statistics_with_several_rows_a_block():
    from tileir.kernels import layernorm_fwd_stats, rmsnorm_fwd_stats

    g = rng()
    r, c = 11, 300
    x = (g.standard_normal((r, c)) * 2 + 0.5).astype(np.float32)
    w = (1 + 0.5 * g.standard_normal(c)).astype(np.float32)
    b = g.standard_normal(c).astype(np.float32)
    xx = x.astype(np.float64)
    mu = xx.mean(1)
    rs = 1 / np.sqrt(((xx - mu[:, None]) ** 2).mean(1) + 1e-5)
    y, mean, rstd = np.zeros_like(x), np.zeros(r, np.float32), np.zeros(r, np.float32)
    layernorm_fwd_stats.run_host(x, w, b, y, mean, rstd, max_tile=128, rows=4)
    assert np.abs(mean - mu).max() < 1e-5 and np.abs(rstd - rs).max() < 1e-4
    assert np.abs(y - ((xx - mu[:, None]) * rs[:, None] * w + b)).max() < 1e-4
    y, rstd = np.zeros_like(x), np.zeros(r, np.float32)
    rmsnorm_fwd_stats.run_host(x, w, y, rstd, max_tile=512, rows=8)
    want = 1 / np.sqrt((xx * xx).mean(1) + 1e-6)
    assert np.abs(rstd - want).max() < 1e-4 and np.abs(y - xx * want[:, None] * w).max() < 1e-4
    # the rule serves them as their siblings
    got = layernorm_fwd_stats.tuned_config({"fmt": "f16"}, "sm_90", {"R": 32768, "C": 1000})
    assert got["max_tile"] == 1024 and got["rows"] > 1


# ---- the f32 product's precisions ----------------------------------------------------------------


def _err_in_u(got, a, b):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return float((np.abs(got - a64 @ b64) / (np.abs(a64) @ np.abs(b64))).max() / U)


@pytest.mark.parametrize("group", [0, 2])
def test_3xtf32_is_f32_accurate_where_tf32_is_not(group):
    g = rng()
    a = g.uniform(0, 1, (70, 200)).astype(np.float32)  # positive: the errors pile up
    b = g.uniform(0, 1, (200, 50)).astype(np.float32)
    errs = {}
    for p in ("tf32", "3xtf32", "ieee"):
        c = np.zeros((70, 50), np.float32)
        matmul_tf32.run_host(a, b, c, precision=p, tm=32, tn=32, tk=16, group=group)
        errs[p] = _err_in_u(c, a, b)
    assert errs["tf32"] > 500  # tf32 keeps 10 mantissa bits: ~2^-11 of sum |a||b|
    assert errs["3xtf32"] < 8 and errs["ieee"] < 32  # f32 products and sums (the host's models)


def test_an_unknown_precision_is_refused():
    with pytest.raises(TileirError, match="3xtf32"):
        matmul_tf32.bytecode(precision="fp64")


# ---- split-K -------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt,m,n,k,splits", [("f16", 37, 70, 300, 3), ("bf16", 5, 33, 129, 8), ("f32", 64, 64, 64, 4),
                                              ("f16", 1, 40, 1000, 16)])
def test_split_k_matches_the_product(fmt, m, n, k, splits):
    npd = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}[fmt]
    g = rng()
    a = (g.standard_normal((m, k)) / np.sqrt(k)).astype(npd)
    b = g.standard_normal((k, n)).astype(npd)
    c = np.zeros((m, n), npd)
    matmul_split_k(a, b, c, splits=splits, config={"tm": 32, "tn": 32, "tk": 32}, reduce_config={"rm": 16, "rn": 32},
                   precision="3xtf32")
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = {"f32": 1e-5, "f16": 3e-3, "bf16": 2e-2}[fmt]
    assert np.abs(c.astype(np.float64) - want).max() < tol


def test_split_counts_leave_no_split_empty():
    assert even_splits(300, 32, 3) == 3  # 10 K blocks: 4 + 4 + 2
    assert even_splits(129, 32, 8) == 5  # 5 K blocks, one each
    assert even_splits(9 * 32, 32, 6) == 5  # per = 2: five splits cover the nine blocks
    assert even_splits(10, 64, 16) == 1
    for k in range(1, 2000, 37):
        for s in (2, 3, 5, 8, 16):
            got = even_splits(k, 64, s)
            nk = -(-k // 64)
            per = -(-nk // got)
            assert 1 <= got <= s and (got - 1) * per < nk  # the last split has a K block


def test_a_short_workspace_is_refused():
    a = np.zeros((8, 256), np.float16)
    b = np.zeros((256, 8), np.float16)
    with pytest.raises(TileirError, match="workspace"):
        matmul_split_k(a, b, np.zeros((8, 8), np.float16), splits=4, workspace=np.zeros((2, 8, 8), np.float32))


def test_gemm_runs_one_pass_without_a_gpu_and_splits_where_told():
    g = rng()
    a = (g.standard_normal((9, 700)) / 30).astype(np.float16)
    b = g.standard_normal((700, 20)).astype(np.float16)
    assert plan(a, b) == {"splits": 1}  # host arrays, no GPU named
    want = a.astype(np.float64) @ b.astype(np.float64)
    for splits in (None, 3):
        c = np.zeros((9, 20), np.float16)
        gemm(a, b, c, splits=splits)
        assert np.abs(c.astype(np.float64) - want).max() < 3e-3


# ---- fp8 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["f8E4M3FN", "f8E5M2"])
@pytest.mark.parametrize("out,kw", [("bf16", {}), ("f16", {"group": 2, "promote": True}), ("f32", {"group": 3}),
                                    ("bf16", {"group": 2, "programs": 2})])  # a walk: 6 ragged cells, 2 blocks
def test_fp8_product_with_per_tensor_scales(fmt, out, kw):
    npd = {"f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2}[fmt]
    g = rng()
    m, n, k = 37, 70, 300
    a = g.standard_normal((m, k)).astype(npd)
    b = g.standard_normal((n, k)).astype(npd)  # [N, K]: the weight's layout
    c = np.zeros((m, n), {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32}[out])
    sa, sb = np.array([0.5], np.float32), np.array([0.03], np.float32)
    matmul_f8.run_host(a, b, c, sa, sb, fmt=fmt, out=out, tm=32, tn=32, tk=32, **kw)
    want = reference(a, b, sa, sb)
    rel = np.abs(c.astype(np.float64) - want) / (np.abs(want) + 1e-3)
    assert rel.max() < {"bf16": 8e-3, "f16": 1e-3, "f32": 1e-5}[out]


def test_fp8_refuses_other_formats():
    with pytest.raises(TileirError, match="f8E4M3FN or f8E5M2"):
        matmul_f8.bytecode(fmt="f16")
    with pytest.raises(TileirError, match="bf16, f16 or f32"):
        matmul_f8.bytecode(out="i32")
    with pytest.raises(TileirError, match="grouped order"):  # the walk divides by the group
        matmul_f8.bytecode(programs=132)


# ---- the rule ------------------------------------------------------------------------------------

M_SIZES = (1, 16, 64, 128, 512, 1000, 2048, 4096, 8192)
NK = ((4096, 4096), (11008, 4096), (4096, 11008), (14336, 4096), (1024, 1024), (5000, 1000))


def _valid(kern, cfg):
    assert autotune.entry_problem(kern, {"config": cfg}) is None, cfg
    tiles = [cfg.get(k) for k in ("tm", "tn", "tk", "max_tile", "bq", "bk", "d_tile") if cfg.get(k)]
    assert all(t & (t - 1) == 0 for t in tiles), cfg


def test_the_rule_answers_every_matmul_shape_of_the_suite(cache):
    for kern in (matmul_f16, matmul_tf32):
        for m in M_SIZES:
            for n, k in NK + ((8192, 8192),):
                cfg = kern.tuned_config({}, "sm_90", {"M": m, "N": n, "K": k})
                _valid(kern, cfg)
                if m <= 16 and pow2_at_least(n) * pow2_at_least(k) > SMALL_OPERAND:  # the rule's buckets
                    assert cfg["tm"] == 16
                elif m <= 64 and cfg["tm"] != 128:
                    assert cfg["tm"] == 64
    # the benchmark's shape keeps the measured configuration (the headline rows)
    measured = next(e["config"] for e in autotune.defaults()
                    if e.get("gpu") == "sm_90" and e.get("kernel") == "matmul_f16" and not e.get("when"))
    got = matmul_f16.tuned_config({}, "sm_90", {"M": 8192, "N": 8192, "K": 8192})
    assert {k: got[k] for k in measured} == measured
    # and a small problem gets the rule's tile, not that entry's 128 x 256 (one block for 16 x 1024)
    assert matmul_f16.tuned_config({}, "sm_90", {"M": 16, "N": 1024, "K": 1024})["tm"] == 64
    # a small M with a long K: one pass leaves most SMs idle, so K is split (at K 4096 one pass was
    # faster on the H200: bench/results/matmul_probe_h200.json)
    assert matmul_split("sm_90", "f16", 16, 4096, 4096) == {"splits": 1}
    got = matmul_split("sm_90", "f16", 16, 1024, 4096)
    assert got["splits"] > 1 and got["config"]["tm"] == 64
    _valid(matmul_partial, got["config"])
    assert matmul_split("sm_90", "f16", 8192, 8192, 8192) == {"splits": 1}
    assert matmul_split("sm_80", "f16", 16, 4096, 4096) == {"splits": 1}



def test_the_persistent_walk_where_it_measured_faster():
    """matmul_walk: 16-bit, K <= 1024, more than 1.5 waves of 128 x 256 cells (persistent_h200.json's
    wins); bmm_walk: where the one-cell rule takes 128 x 256. Kills: the threshold moved to take 1000 x
    5000 x 1000 (160 cells, 1% slower walking) or to drop 8192 x 1024 x 1024 (256 cells, 7% faster), a
    long K walked in the row-major product (4096^3 lost 3.6%) or not in x @ W^T (it won there), f32
    walked (the kernel is 16-bit only), another GPU's count, a product of few rows or columns walked."""
    for fmt in ("f16", "bf16"):
        for m, n, k in ((2048, 5000, 1000), (8192, 5000, 1000), (8192, 1024, 1024)):
            got = matmul_walk("sm_90", fmt, m, n, k)
            assert got is not None and (got["tm"], got["tn"], got["programs"]) == (128, 256, 132)
        for m, n, k in ((1000, 5000, 1000), (512, 5000, 1000), (4096, 1024, 1024), (4096, 4096, 4096),
                        (8192, 8192, 8192), (2048, 11008, 4096)):
            assert matmul_walk("sm_90", fmt, m, n, k) is None, (m, n, k)
    # x @ W^T walks at any K (persistent_nt_long_h200.json: 14 of 14 faster), but not below 1.5 waves
    assert matmul_walk("sm_90", "bf16", 8192, 4096, 4096) is None
    assert matmul_walk("sm_90", "bf16", 8192, 4096, 4096, weight_t=True) is not None
    assert matmul_walk("sm_90", "f16", 4096, 4096, 14336, weight_t=True) is not None
    assert matmul_walk("sm_90", "f16", 2048, 1024, 1024, weight_t=True) is None
    # few rows or few columns were never timed walking: the rule's own cells (16-row tiles at decode)
    assert matmul_walk("sm_90", "f16", 16, 65536, 1024) is None
    assert matmul_walk("sm_90", "f16", 65536, 64, 1024) is None
    assert matmul_walk("sm_90", "bf16", 16, 128256, 4096, weight_t=True) is None
    assert matmul_walk("sm_90", "f32", 8192, 5000, 1000) is None
    assert matmul_walk("sm_80", "f16", 8192, 5000, 1000) is None
    assert matmul_walk(None, "f16", 8192, 5000, 1000) is None
    for b, m, n, k in ((64, 512, 512, 512), (128, 256, 256, 256), (16, 1000, 1000, 1000), (64, 2048, 2048, 2048)):
        got = bmm_walk("sm_90", "f16", b, m, n, k)
        assert got is not None and (got["tm"], got["tn"], got["tk"]) == (128, 256, 64)
        got["tm"] = 1  # the caller's own copy: the cached plan is not changed through it
        assert bmm_walk("sm_90", "f16", b, m, n, k)["tm"] == 128
    for b, m, n, k in ((8, 512, 512, 512), (64, 64, 64, 64), (512, 128, 128, 128)):  # smaller one-cell tiles
        assert rule("bmm", "sm_90", {"B": b, "M": m, "N": n, "K": k})["tn"] < 256
        assert bmm_walk("sm_90", "f16", b, m, n, k) is None
    assert bmm_walk("sm_80", "f16", 64, 512, 512, 512) is None


def test_gemm_plans_the_walk_only_for_one_pass():
    """gemm.plan: the walk rides on a one-pass plan; where the split rule splits, the split stands even
    for a shape the walk would take (no suite shape is both: the split is forced here). Kills: the walk
    asked before the split, or added to a split plan."""
    import importlib
    from unittest import mock

    a, b = np.zeros((8192, 1000), np.float16), np.zeros((1000, 5000), np.float16)
    got = plan(a, b, "sm_90")
    assert got["splits"] == 1 and got["walk"]["tm"] == 128
    split = {"splits": 2, "config": {"tm": 64, "tn": 128, "tk": 64}, "reduce": {"rm": 64, "rn": 128}}
    gemm_mod = importlib.import_module("tileir.kernels.gemm")
    with mock.patch.object(gemm_mod, "matmul_split", lambda *args: dict(split)):
        assert plan(a, b, "sm_90") == split
    assert plan(a, b) == {"splits": 1}  # host arrays, no GPU named: the one-cell pass

def test_attention_at_head_dim_64_loads_with_latency_1():
    """The long sequences' 128 x 128 blocks at d 64 take latency 1 on every view load
    (heuristics.LONG_D64_LATENCY, bench/results/latency_attention_h200.json). Kills: the latency at d 128 (no
    change measured there), at the short sequences' 64-key blocks (not measured), or missing at d 64."""
    long64 = rule("attention", "sm_90", {"B": 8, "H": 16, "S": 2048, "D": 64, "causal": True})
    assert long64["latency"] == 1 and (long64["bq"], long64["bk"]) == (128, 128)
    assert "latency" not in rule("attention", "sm_90", {"B": 8, "H": 16, "S": 2048, "D": 128})
    assert "latency" not in rule("attention", "sm_90", {"B": 32, "H": 16, "S": 512, "D": 64})
    from tileir.kernels import attention

    cfg = attention.config(**long64)
    assert ("view_load_latency", 1) in attention.hints_for(cfg)[0][1]


def test_long_causal_attention_of_few_heads_starts_the_heaviest_first():
    """heuristics.HEAVY_FIRST_KEYS / _MOST_HEADS (bench/results/attention_order*_h200.json): causal with at
    least 4096 keys (by size class) and at most 64 heads takes heavy_first; shorter, with more heads or without
    the mask it does not (slower there). Kills: the order reaching non-causal attention, short sequences or
    the headline's 128 heads, or missing at S 4096 and 16384."""
    base = {"B": 4, "H": 16, "D": 64}
    for s in (4096, 16384):
        assert rule("attention", "sm_90", dict(base, S=s, causal=True))["heavy_first"] is True
        assert "heavy_first" not in rule("attention", "sm_90", dict(base, S=s, causal=False))
    assert "heavy_first" not in rule("attention", "sm_90", dict(base, S=2048, causal=True))
    assert rule("attention", "sm_90", {"B": 1, "H": 16, "S": 8192, "D": 128, "causal": True})["heavy_first"]
    assert "heavy_first" not in rule("attention", "sm_90", {"B": 4, "H": 32, "S": 4096, "D": 128, "causal": True})


def test_products_of_at_most_16_rows_take_row_tiles_of_16(cache):
    """One pass at 1-16 rows (bench/results/small_m_tiles_h200.json, small_m_thin_h200.json): row tiles of
    16 with twice the K slice, the narrowest column tile of 32, 64, 128 whose blocks fit one wave. Kills: the
    rule keeping 64-row tiles there, reaching 32 rows (where 64 rows were within 10%) or a launch-bound
    1024 x 1024 B (where it lost), a K slice left at 64 / 32, a column tile that ignores the wave (32 at
    N 5000 or 8192, 64 at 11008) or stays 64 where 32 fits (N 4096), the narrow tile reaching 3xtf32,
    matmul_tn or a tf32 x @ W^T (unmeasured), and an f16 / bf16 x @ W^T of 1 or 16 rows left out of it
    (bench/results/small_m_nt_h100.json)."""
    for m in (1, 7, 16):
        f16 = rule("matmul_f16", "sm_90", {"M": m, "N": 4096, "K": 11008})
        assert (f16["tm"], f16["tn"], f16["tk"]) == (16, 32, 128)  # 128 blocks of 32 columns: one wave
        assert rule("matmul_bf16", "sm_90", {"M": m, "N": 4096, "K": 4096})["tk"] == 128
        wide = rule("matmul_f16", "sm_90", {"M": m, "N": 11008, "K": 4096})
        assert (wide["tm"], wide["tn"]) == (16, 128)  # 172 blocks of 64 would be two waves
        assert rule("matmul_f16", "sm_90", {"M": m, "N": 5000, "K": 4096})["tn"] == 64  # 157 of 32: two
        assert rule("matmul_f16", "sm_90", {"M": m, "N": 8192, "K": 4096})["tn"] == 64  # 128 of 64
        tf32 = rule("matmul_tf32", "sm_90", {"M": m, "N": 4096, "K": 4096})
        assert (tf32["tm"], tf32["tn"], tf32["tk"]) == (16, 32, 64)
        _valid(matmul_f16, f16)
        _valid(matmul_tf32, tf32)
    assert rule("matmul_f16", "sm_90", {"M": 32, "N": 4096, "K": 4096})["tm"] == 64
    assert rule("matmul_f16", "sm_90", {"M": 1, "N": 1024, "K": 1024})["tm"] == 64  # a launch-bound B
    assert rule("matmul_f16", "sm_90", {"M": 1, "N": 1024, "K": 2048})["tm"] == 64  # 2^21: still small
    assert rule("matmul_f16", "sm_90", {"M": 1, "N": 2048, "K": 2048})["tm"] == 16  # past it
    assert rule("matmul_tn", "sm_90", {"M": 16, "N": 4096, "K": 4096, "fmt": "f16"})["tm"] == 64
    assert rule("matmul_tf32", "sm_90", {"M": 16, "N": 4096, "K": 4096, "precision": "3xtf32"})["tm"] == 64
    for m in (1, 16):
        for fmt in ("f16", "bf16"):
            nt = rule("matmul_nt", "sm_90", {"M": m, "N": 4096, "K": 11008, "fmt": fmt})
            assert (nt["tm"], nt["tn"], nt["tk"]) == (16, 32, 128)
            assert "group" not in nt  # matmul_nt has no grouped order
            _valid(matmul_nt, nt)
        wide = rule("matmul_nt", "sm_90", {"M": m, "N": 11008, "K": 4096, "fmt": "bf16"})
        assert (wide["tm"], wide["tn"]) == (16, 128)
    assert rule("matmul_nt", "sm_90", {"M": 32, "N": 4096, "K": 4096, "fmt": "f16"})["tm"] == 64
    assert rule("matmul_nt", "sm_90", {"M": 16, "N": 4096, "K": 4096, "fmt": "f32"})["tm"] == 64


def test_rows_not_a_multiple_of_16_take_k_slices_of_64(cache):
    """16-bit products with K or N rows of 8-element multiples (1000, 5000) in the 128 x 256 cell: K
    slices of 64, not the 8192^3 measurement's 32 (bench/results/small_m_h200.json). Kills: the slice
    change applied everywhere (8192 x 4096 x 4096: 435 us at 32 against 468 at 64), or not at all
    (8192 x 5000 x 1000: 196 against 174), or to tf32 (not measured)."""
    for kern in (matmul_f16, matmul_bf16):
        # one wave of blocks or less keeps 32 (512 x 5000 x 1000: 0.82x torch at 32, 0.77x at 64)
        assert kern.tuned_config({}, "sm_90", {"M": 512, "N": 5000, "K": 1000})["tk"] == 32
        odd = kern.tuned_config({}, "sm_90", {"M": 8192, "N": 5000, "K": 1000})
        assert (odd["tm"], odd["tn"], odd["tk"]) == (128, 256, 64)
        assert kern.tuned_config({}, "sm_90", {"M": 8192, "N": 5008, "K": 1008})["tk"] == 32
        assert kern.tuned_config({}, "sm_90", {"M": 8192, "N": 5000, "K": 1024})["tk"] == 64  # N alone
        assert kern.tuned_config({}, "sm_90", {"M": 8192, "N": 4096, "K": 1000})["tk"] == 64  # K alone
        assert kern.tuned_config({}, "sm_90", {"M": 8192, "N": 4096, "K": 4096})["tk"] == 32
    assert matmul_tf32.tuned_config({}, "sm_90", {"M": 8192, "N": 5000, "K": 1000})["tk"] == 32
    # and there 128 x 128 ran 1.28x slower than 128 x 256 (2048 x 5000 x 1000: 61 against 52 us), which the
    # aligned efficiencies picked; at 16-element rows the same sizes keep their pick
    odd = matmul_f16.tuned_config({}, "sm_90", {"M": 2048, "N": 5000, "K": 1000})
    assert (odd["tm"], odd["tn"], odd["tk"]) == (128, 256, 64)
    assert matmul_f16.tuned_config({}, "sm_90", {"M": 2048, "N": 5008, "K": 1008})["tn"] == 128


def test_a_small_m_with_a_long_k_fills_one_wave_of_splits():
    """Small M, long K (bench/results/small_m_h200.json): K is cut until 64 x 128 cells (3xtf32 past 64
    rows: 128 x 128) fill one wave,
    where one pass is slower than a split call's host time at its worst (60 us). Kills: the rule
    dropped (3xtf32 at 16 x 4096 x 4096 one pass, 160 us of GPU time against 66 split), a fill past one
    wave (S 8 at 32 cells), splitting where one pass is near the bandwidth already (f16 at 64 rows) or
    quicker than the split call's host time (f16 16 x 4096 x 11008: 43 us one pass, 56 us of host time
    split; 3xtf32 16 x 5000 x 1000: 41 us, where its buckets 8192 x 1024 would say 77), or the buckets
    weighed instead of the sizes."""
    three = matmul_split("sm_90", "f32", 16, 4096, 4096, precision="3xtf32")
    assert three["splits"] == 4 and (three["config"]["tm"], three["config"]["tn"]) == (64, 128)
    _valid(matmul_partial, dict(three["config"], fmt="f32", precision="3xtf32"))
    # past 64 rows 3xtf32 fills the wave with 128 x 128 cells at 8 warps (small_m_x3_h200.json: 88 us against
    # 64 x 128's 131 at 128 rows): 32 cells, 4 splits. Kills: the 64-row cell kept there, or taken at 16 rows
    wide = matmul_split("sm_90", "f32", 128, 4096, 4096, precision="3xtf32")
    cell = wide["config"]
    assert wide["splits"] == 4 and (cell["tm"], cell["tn"], cell["warps"]) == (128, 128, 8)
    _valid(matmul_partial, dict(wide["config"], fmt="f32", precision="3xtf32"))
    assert matmul_split("sm_90", "f32", 64, 4096, 4096, precision="3xtf32")["config"]["tm"] == 64
    assert matmul_split("sm_90", "f32", 512, 4096, 4096, precision="3xtf32") == {"splits": 1}
    assert matmul_split("sm_90", "f32", 16, 5000, 1000, precision="3xtf32") == {"splits": 1}
    for fmt in ("f16", "bf16"):
        assert matmul_split("sm_90", fmt, 1, 4096, 32768)["splits"] == 4
        assert matmul_split("sm_90", fmt, 64, 4096, 32768) == {"splits": 1}
        assert matmul_split("sm_90", fmt, 16, 4096, 11008) == {"splits": 1}
    assert matmul_split("sm_90", "f32", 64, 4096, 11008, precision="tf32")["splits"] == 4
    assert matmul_split("sm_90", "f32", 128, 4096, 11008, precision="tf32") == {"splits": 1}
    assert matmul_split("sm_90", "f32", 64, 4096, 4096, precision="tf32") == {"splits": 1}  # 34 us one pass
    # 128 cells already fill the wave: one pass
    assert matmul_split("sm_90", "f16", 16, 16384, 16384) == {"splits": 1}
    assert matmul_split("sm_80", "f32", 16, 4096, 4096, precision="3xtf32") == {"splits": 1}


def test_the_transposed_products_take_the_models_tile(cache):
    """matmul_nt / matmul_tn naming no tile: the product model's (no grouped order: they have none).
    Kills: a weight gradient's [512, 1536] result over 8192 tokens in the 128 x 128 default (48 blocks
    for 132 SMs), or the measured 8192 x 4096 x 4096 winner (128 x 256, 8 warps) lost."""
    from tileir.kernels import matmul_nt, matmul_tn

    for kern in (matmul_nt, matmul_tn):
        big = kern.tuned_config({"fmt": "bf16"}, "sm_90", {"M": 8192, "N": 4096, "K": 4096})
        assert big == {"fmt": "bf16", "tm": 128, "tn": 256, "tk": 64, "warps": 8}
        grad = kern.tuned_config({"fmt": "bf16"}, "sm_90", {"M": 512, "N": 1536, "K": 8192})
        assert -(-512 // grad["tm"]) * -(-1536 // grad["tn"]) >= 96 and "group" not in grad
        _valid(kern, grad)
        assert kern.tuned_config({"fmt": "f32"}, "sm_90", {"M": 8192, "N": 4096, "K": 4096})["tk"] == 32


def test_3xtf32_and_ieee_get_tiles_of_their_own(cache):
    big = {"M": 4096, "N": 4096, "K": 4096}
    three = matmul_tf32.tuned_config({"precision": "3xtf32"}, "sm_90", big)
    assert three["tm"] * three["tn"] <= 128 * 128
    small = matmul_tf32.tuned_config({"precision": "3xtf32"}, "sm_90", {"M": 64, "N": 64, "K": 64})
    assert small["tm"] * small["tn"] <= 128 * 128  # not the tf32 entry's 128 x 256, even where small
    assert matmul_tf32.tuned_config({"precision": "ieee"}, "sm_90", big)["tn"] == 64


def test_the_rule_for_rows():
    for kern in (softmax, layernorm, rmsnorm):
        for c in (128, 512, 1000, 1024, 2048, 4096, 8192, 16384, 32768, 65536):
            for r in (1, 64, 4096, 32768):
                cfg = kern.tuned_config({"fmt": "f16"}, "sm_90", {"R": r, "C": c})
                _valid(kern, cfg)
                cfg = kern.config(**cfg)
                lanes = cfg["rows"] * cfg["max_tile"]
                assert lanes <= 1 << 16
                if c < 8192:  # small problems too (the rule no longer defers on them)
                    assert cfg["max_tile"] == pow2(c)  # no padded lanes past the row's bucket
                assert cfg["one_chunk"] == (pow2(c) <= cfg["max_tile"])  # exactly where the row is one chunk
    # rows past the chunk and up to the measured widths are one tile (softmax's spilled at 65536)
    one = {"rows": 1, "one_chunk": True, "warps": 8}
    assert softmax.tuned_config({}, "sm_90", {"R": 4096, "C": 16384}) == dict(one, max_tile=16384, occupancy=2)
    assert softmax.tuned_config({}, "sm_90", {"R": 1, "C": 20000}) == dict(one, max_tile=32768, occupancy=1)
    assert rmsnorm.tuned_config({}, "sm_90", {"R": 64, "C": 65536}) == dict(one, max_tile=65536, occupancy=1)
    walk = softmax.tuned_config({}, "sm_90", {"R": 64, "C": 65536})  # the walk, with its measured hints
    assert (walk["max_tile"], walk["one_chunk"], walk["warps"], walk["occupancy"]) == (8192, False, 8, 2)
    narrow = softmax.tuned_config({"fmt": "f16"}, "sm_90", {"R": 32768, "C": 1000})
    assert (narrow["rows"], narrow["warps"]) == (8, 8)  # several rows a block, 8 warps
    assert layernorm.tuned_config({}, "sm_90", {"R": 32768, "C": 1000})["warps"] == 0  # not measured so
    assert layernorm.tuned_config({}, "sm_90", {"R": 64, "C": 1 << 17})["max_tile"] == 8192
    # the measured shape keeps the measured configuration, as one chunk
    assert softmax.tuned_config({}, "sm_90", {"R": 8192, "C": 8192}) == {"max_tile": 8192, "warps": 0, "occupancy": 4,
                                                                         "one_chunk": True}


def pow2(n):
    return 1 << (n - 1).bit_length()


def test_attention_at_d64_and_short_sequences_takes_64_key_blocks():
    def cfg(s, d, causal=True):
        return attention.tuned_config({"causal": causal}, "sm_90",
                                      {"B": max(1, 2 ** 18 // s // 16), "H": 16, "S": s, "D": d, "H_kv": 16, "S_kv": s})

    for s in (512, 1024):
        assert (cfg(s, 64)["bk"], cfg(s, 64)["occupancy"]) == (64, 2)
        assert cfg(s, 64, causal=False)["bk"] == 64
    assert cfg(2048, 64)["bk"] == 128  # not measured so
    d128 = cfg(512, 128)
    assert (d128["bq"], d128["bk"]) == (64, 64)  # not 128 x 64 at d 128 (0.59x SDPA): CAUSAL_D128_SHORT_KEYS' 64 x 64
    # the keys decide (S_kv), as the kernel's walk runs over them
    keys = {"B": 4, "H": 16, "S": 2048, "D": 128, "H_kv": 16}
    assert attention.tuned_config({"causal": True}, "sm_90", dict(keys, S_kv=512))["bk"] == 64
    assert attention.tuned_config({"causal": True}, "sm_90", dict(keys, S_kv=2048))["bk"] == 128


def test_the_rule_for_attention():
    for d in (64, 128):
        for s in (512, 1024, 2048, 4096, 8192, 16384):
            for causal in (False, True):
                sizes = {"B": max(1, 2 ** 14 // s), "H": 16, "S": s, "D": d, "H_kv": 16, "S_kv": s}
                cfg = attention.tuned_config({"causal": causal}, "sm_90", sizes)
                full = attention.config(**cfg)
                assert full["d_tile"] == d  # the head tile fits the head: no doubled work at d 64
                if causal:
                    assert not (full["bq"] <= 64 and full["warps"] >= 8)  # tileiras' wrong answers
                _valid(attention, cfg)
    # few blocks: a shorter query block
    few = attention.tuned_config({}, "sm_90", {"B": 1, "H": 2, "S": 1024, "D": 64, "H_kv": 2, "S_kv": 1024})
    assert few["bq"] == 64


def test_the_rule_defers_where_it_has_nothing_to_say():
    assert rule("matmul_f16", "sm_80", {"M": 16, "N": 4096, "K": 4096}) is None  # another GPU
    assert rule("vadd", "sm_90", {"N": 1 << 20}) is None  # a kernel it does not know
    assert rule("softmax", "sm_90", {"R": 4, "C": 100})["max_tile"] == 128  # small: a chunk of its width
    assert rule("attention", "sm_90", {"S": 4096, "D": 64}) is None  # no batch or heads: no grid to fill


def test_one_bucket_one_configuration():
    """The call site prepares one variant per size class (a power-of-two bucket, the bucket's own
    size apart from the rest: kernel._size_class), so the rule must answer alike inside one."""
    for lo, hi in (((1000, 4097, 4000), (1023, 8191, 4095)), ((17, 3000, 5000), (31, 4095, 8191))):
        a = rule("matmul_f16", "sm_90", dict(zip("MNK", lo)))
        assert a == rule("matmul_f16", "sm_90", dict(zip("MNK", hi)))
    assert rule("softmax", "sm_90", {"R": 3000, "C": 600}) == rule("softmax", "sm_90", {"R": 4096, "C": 1024})


def test_best_asks_the_cache_then_measured_entries_then_the_rule_then_the_catch_all(cache, monkeypatch):
    sizes = {"M": 16, "N": 4096, "K": 4096}
    ruled = autotune.best("matmul_f16", "sm_90", **sizes)
    assert ruled == rule("matmul_f16", "sm_90", sizes, autotune.best("matmul_f16", "sm_90", M=64, N=64, K=64))
    assert ruled["tm"] == 16
    # D 128 attention has no measured entry any more (heuristics.HALF_ROWS_WARPS, CAUSAL_D128_SHORT_KEYS): the rule's,
    # causal the 128 x 128 blocks the table's entry held past 1024 keys
    att = {"B": 4, "H": 32, "S": 4096, "D": 128, "H_kv": 32, "S_kv": 4096}
    assert autotune.best("attention", "sm_90", causal=True, **att) == {"bq": 128, "bk": 128, "d_tile": 128, "warps": 8,
                                                                       "occupancy": 1}
    plain = dict(att, causal=False)
    assert autotune.best("attention", "sm_90", **plain) == rule("attention", "sm_90", plain)
    # a specific measured entry (its when names D = 128 and causal) beats the rule; the committed table holds none
    # now, so one is added for this call alone
    entry = {"gpu": "sm_90", "kernel": "attention", "when": {"D": 128, "causal": True},
             "config": {"bq": 128, "bk": 64, "warps": 8, "occupancy": 1}}
    monkeypatch.setattr(autotune, "_defaults_memo", [autotune.defaults() + [entry]])
    assert autotune.best("attention", "sm_90", causal=True, **att) == entry["config"]
    assert autotune.best("attention", "sm_90", **plain) == rule("attention", "sm_90", plain)  # when fails: the rule
    # the cache beats everything
    autotune._write_entry(autotune.cache_key("sm_90", "matmul_f16", sizes), {"config": {"tm": 128, "tn": 64}})
    assert autotune.best("matmul_f16", "sm_90", **sizes) == {"tm": 128, "tn": 64}
    # bmm has no table entry: the rule at every size
    assert autotune.best("bmm", "sm_90", B=8, M=512, N=512, K=512)["tm"] == 128
    _valid(bmm, autotune.best("bmm", "sm_90", B=3, M=5, N=7, K=9))


def test_fp8_takes_its_own_measured_cells(cache):
    """matmul_f8 naming no tile: F8_TILES' cells (bench/results/f8_tiles*_h200.json). Kills: the
    16-bit products' 128 x 256 back (it spilled: 0.33-0.42x torch._scaled_mm against 0.85-0.88x),
    128 x 128 at 16 rows; and the 128 x 128 cells walked by 132 blocks with slices of 128 (F8_WALKS:
    persistent_f8_h200.json, 2-39% faster than one cell a block; with slices of 256 the walk ran at half
    speed) past one wave of them (at 112 cells one a block with slices of 256 ran 4% faster), the 64-row
    cells one a block."""
    for fmt in ("f8E4M3FN", "f8E5M2"):
        for m in M_SIZES:
            for n, k in ((4096, 4096), (14336, 4096), (8192, 8192)):
                cfg = matmul_f8.tuned_config({"fmt": fmt}, "sm_90", {"M": m, "N": n, "K": k})
                _valid(matmul_f8, cfg)
                assert cfg["tn"] <= 128, cfg
        big = matmul_f8.tuned_config({"fmt": fmt}, "sm_90", {"M": 8192, "N": 8192, "K": 8192})
        assert {k: big[k] for k in ("tm", "tn", "tk", "warps", "group", "programs")} == \
            {"tm": 128, "tn": 128, "tk": 128, "warps": 8, "group": 8, "programs": 132}
        few = matmul_f8.tuned_config({"fmt": fmt}, "sm_90", {"M": 16, "N": 4096, "K": 4096})
        assert {k: few[k] for k in ("tm", "tn", "tk", "warps")} == {"tm": 64, "tn": 64, "tk": 128, "warps": 4}
        assert few.get("programs", 0) == 0
        one_wave = matmul_f8.tuned_config({"fmt": fmt}, "sm_90", {"M": 128, "N": 14336, "K": 4096})
        assert (one_wave["tm"], one_wave["tk"], one_wave.get("programs", 0)) == (128, 256, 0)


@pytest.mark.parametrize("results,count", [("attention_fwd_configs_h100.json", 12),
                                           ("attention_fwd_held_out_h100.json", 10)])
def test_attention_at_d128_takes_the_blocks_it_was_timed_with(results, count):
    """At every head-dim-128 row of the forward's two H100 files (the fitted shapes and the held-out ones) the
    library's call runs exactly one of the configurations timed there, and it was the fastest of the two
    the rule chose between: without the mask the 64 x 128 blocks two an SM (heuristics.HALF_ROWS_WARPS) over
    the 128 x 128 blocks, by at least 5% at S 512-4096 where fitted; causal the 64 x 64 blocks two an SM up to
    1024 keys (CAUSAL_D128_SHORT_KEYS) and the 128 x 128 blocks past them. Kills: another warp count or
    occupancy (never timed), 64-row blocks causal past 1024 keys or 128-row ones below, or the rule ignored
    under a default-table entry."""
    import json
    from pathlib import Path

    rows = json.loads((Path(__file__).parents[1] / "bench/results" / results).read_text())["rows"]
    assert len(rows) == count
    for r in rows:
        b, h, h_kv, s, d = r["shape"]
        got = attention.tuned_config({"causal": r["causal"]}, "sm_90",
                                     {"B": b, "H": h, "S": s, "D": d, "H_kv": h_kv, "S_kv": s})
        short = r["causal"] and s <= 1024
        # "rule": that run's rule, the 128 x 128 blocks (causal) or, without the mask, the 64 x 128 ones
        name = "bq64_occ2" if short or (not r["causal"] and "tiles128" not in r["configs"]) else "rule"
        other = "rule" if name == "bq64_occ2" else ("tiles128" if not r["causal"] else "bq64_occ2")
        timed = dict(r["configs"][name])
        got.pop("d_tile", None), got.pop("heavy_first", None), timed.pop("heavy_first", None), timed.pop("d_tile", None)
        assert got == timed, (r["shape"], r["causal"], got, timed)
        assert r["max_err"][name] < 2e-2
        if not r["causal"] and s <= 4096 and results.endswith("configs_h100.json"):
            assert r["ms"][name] <= 0.95 * r["ms"][other], r["shape"]
        else:  # the rule's choice of the two, at most 1% behind where they tie -- but fitted S 2048 causal, where
            # the 64-row blocks won by 1.4% and the size class keeps 128 x 128 for held-out S 1500's 2.6% the other way
            slack = 1.015 if r["causal"] and s == 2048 else 1.01
            assert r["ms"][name] <= slack * r["ms"][other], (r["shape"], r["causal"])
