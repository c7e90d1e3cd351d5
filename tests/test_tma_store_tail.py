"""The TMA store workaround (docs/assembler-defect.md, the fourth defect): a store_view whose tile can
cross the contiguous end off a 16-byte boundary, or before a pitch gap, carries allow_tma = false
(families/views.py tail_may_share_a_group), and a launch of dense rows claims ROW so the library's own
stores keep TMA (sizes.SizePlan.claim, record/core.py read_hidden)."""

import os
import re
import subprocess
import tempfile

import numpy as np
import pytest

import tileir as ti
import tileir.kernels as K
from tests.kernelcheck import fuzz_desc, fuzz_load, walk
from tileir import assemble as asm
from tileir.diff.fuzzbuild import build
from tileir.families.views import NO_TMA, tail_may_share_a_group
from tileir.sizes import ROW

ATOMIC = {"op": "atomic", "id": 90, "mode": "xchg", "a": 3, "collide": False, "mul": 5, "add": 9}  # brings TMA


def _store(tile, tshape, pitch=0, extra=(ATOMIC,)):
    """A fuzz program storing an f32 ``tile`` into a tensor of ``tshape`` (rows padded by ``pitch``)."""
    vs = {"op": "vstore", "id": 40, "a": 1, "tshape": list(tshape), "dim_map": list(range(len(tshape))),
          "order": "row", "pitch": pitch, "idx": [{"c": 0, "by": "const"} for _ in tshape]}
    body = [fuzz_load(1, "f32", tile), fuzz_load(2, "f32", (32,)), fuzz_load(3, "i32", (32,)), vs, *extra]
    return build(fuzz_desc(body, fmts=("f32", "i32"))).prog


def _hinted(prog) -> list:
    return [tail_may_share_a_group(prog, o.a.view, o.a.inbounds) for o in prog.walk() if o.kind == "store_view"]


@pytest.mark.parametrize("tile, tshape, pitch, want", [
    ((32,), (26,), 0, True),     # the end 8 bytes into a 16-byte group (campaigns' view-store-tail)
    ((32,), (28,), 0, False),    # the end on a 16-byte boundary: TMA kept
    ((4, 8), (4, 6), 2, True),   # a pitch gap (view-store-pitch-gap)
    ((4, 8), (4, 4), 4, True),   # a gap of a whole 16-byte group (the focused campaign's 21207)
    ((4, 8), (4, 8), 0, False),  # the tile fits the tensor: no edge crossed
    ((4, 8), (3, 8), 0, False),  # only whole rows past the end: a row starts a 16-byte group
])
def test_the_rule_over_static_geometries(tile, tshape, pitch, want):
    """Kills: the end's alignment ignored ([26]), every store hinted ([28], [4,8]), the gap ignored
    ([4,6] and [4,4] pitch 4), rows past the end treated as a tail ([3,8])."""
    assert _hinted(_store(tile, tshape, pitch)) == [want]


def _library_hints(kern, arrays, **static):
    cfg = kern.config(**static)
    plan = kern.plan(cfg)
    claims = plan.div16(plan.values(arrays), arrays)
    k = kern.kernel(div16=claims, **static)
    return claims, [i.hints == NO_TMA for i in walk(k.body) if type(i).__name__ == "StoreViewTile"]


def test_dense_rows_claim_row_and_keep_tma():
    """Kills: the ROW claim missing (every library store would lose TMA: the tf32 product 1.42x slower,
    bench/results/tma_store_ab_h200.json) or granted to a slice with a gap."""
    a = np.zeros((1000, 1000), np.float32)
    claims, hinted = _library_hints(K.matmul_tf32, [a, a.copy(), a.copy()])
    assert any(isinstance(c, tuple) and c[0] == ROW for c in claims) and hinted == [False]
    wide = np.zeros((1000, 1024), np.float32)
    claims, hinted = _library_hints(K.matmul_tf32, [a, a.copy(), wide[:, :1000]])
    assert hinted == [True]  # rows of 1000 at a pitch of 1024: the gap a TMA store would write
    odd = np.zeros((1001, 1001), np.float32)
    assert _library_hints(K.matmul_tf32, [odd, odd.copy(), odd.copy()])[1] == [True]  # ends off 16 bytes


def test_the_fast_reader_claims_what_the_plan_does():
    """Kills: the generated reader (runtime/fastpath.py) and SizePlan.div16 disagreeing on ROW (one
    variant recorded for another's claims)."""
    torch = pytest.importorskip("torch")
    from tileir.runtime.fastpath import reader

    kern = K.softmax
    cfg = kern.config()
    plan = kern.plan(cfg)
    read = reader(plan, [(kp.dtype, kp.by_ptr) for kp in kern.kparams(cfg)], 2)
    assert read is not None
    class OnDevice(torch.Tensor):  # a CPU tensor the reader takes for one on cuda:0 (it reads no data)
        def get_device(self):
            return 0

    def dev(t):
        return torch.Tensor._make_subclass(OnDevice, t)

    base = torch.zeros(64, 1024)
    for x in (dev(torch.zeros(64, 1000)), dev(base[:, :1000]), dev(torch.zeros(64, 1001))):
        y = dev(torch.zeros(x.shape))
        got = read((x, y))
        assert got is not None
        values = plan.values((x, y))
        assert tuple(got[3]) == tuple(plan.div16(values, (x, y)))
        assert sum(isinstance(c, tuple) for c in got[3]) == 1 + (x.stride(0) == x.shape[1])  # y's, and x's if dense


def _tma_stores(prog) -> int:
    k = ti.lower(prog)
    with tempfile.TemporaryDirectory() as d:
        bc, yml = os.path.join(d, "k.tilebc"), os.path.join(d, "r.yaml")
        with open(bc, "wb") as f:
            f.write(ti.encode_kernel(k))
        subprocess.run([asm.find_tileiras(), *asm.kernel_args(k, asm.tileiras_version(), "sm_90"),
                        "--remarks=memory", "--remark-format=yaml", f"--remarks-output-file={yml}",
                        "-o", os.path.join(d, "k.cubin"), bc], capture_output=True, timeout=300, check=True)
        text = open(yml).read()
    return len(re.findall(r"Instruction:\s+TMA Store instruction", text))


def _has_tileiras():
    try:
        asm.tileiras_version()
        return True
    except ti.TileirError:
        return False


@pytest.mark.skipif(not _has_tileiras(), reason="tileiras is not installed")
def test_tileiras_takes_the_hint():
    """tileiras --remarks=memory: the store into [26] (hinted) gets no TMA store, the one into [28]
    (not hinted) still does, beside the same atomic. Kills: the hint written where tileiras does not
    read it (another key, another architecture's dictionary)."""
    assert _tma_stores(_store((32,), (26,))) == 0
    assert _tma_stores(_store((32,), (28,))) > 0


def test_a_batch_of_one_row_matrices_claims_no_row():
    """Kills: ROW claimed for [B, 1, N] (its one row's stride is torch's dense stand-in, the next row the
    next matrix's: a gap ROW cannot see), and ROW refused for a dense [B, M, N] (bmm's store keeps TMA)."""
    import tileir as ti2
    from tileir.markers import In, cells
    from tileir.sizes import SizePlan

    plan = SizePlan("k", ["x"], [In(ti2.F16, cells(["B", "M", "N"], [1, 16, 16]))])
    k = plan.stride_slots[-1]  # x.stride(1): the row stride
    for shape, strides, want in (((4, 8, 32), (256, 32, 1), True), ((4, 1, 32), (64, 32, 1), False),
                                 ((4, 8, 32), (512, 64, 1), False)):
        a = np.lib.stride_tricks.as_strided(np.zeros(4096, np.float16), shape, [s * 2 for s in strides])
        assert isinstance(plan.claim(plan.values([a]), k), tuple) == want, shape


def test_a_study_lowers_as_its_campaign_did():
    """fuzzmodel.lower_as_run: a report without no-tma-store-tail is drawn again without the hint (the
    studies of bench/ must see the bytes the campaign assembled). Kills: views.HINT ignored by the lowering."""
    from tileir.diff.fuzzmodel import OLD_WORKAROUNDS, WORKAROUNDS, lower_as_run

    prog = _store((32,), (26,))
    try:
        for ws, want in ((OLD_WORKAROUNDS, ()), (WORKAROUNDS, NO_TMA)):
            lower_as_run(ws)
            (st,) = [i for i in walk(ti.lower(prog).body) if type(i).__name__ == "StoreViewTile"]
            assert st.hints == want
    finally:
        lower_as_run(WORKAROUNDS)
