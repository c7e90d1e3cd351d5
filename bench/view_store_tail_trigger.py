"""What decides `view-store-tail` (docs/fuzz.md): the CPU half, no GPU needed.

tileiras 13.4.92 on the H200, for a ``store_view`` whose tile crosses the tensor's end, writes the
out-of-bounds lanes that share a 16-byte group of memory with an in-bounds lane
(``diff.fuzzknown.vector_tail_store``) -- in some programs only: many others whose store the model
would change were right. This script draws every program of a campaign again from its seed (the
report's generator version; for a report without the ``while-first-exit`` workaround the lowering keeps
every while loop, as that run did), runs the host reference and the model (judged as the campaign judges
the device), assembles it as the campaign did with ``tileiras --remarks=memory`` and, for every view
store the model changes (an AT-RISK store: a differing region of its own in the model's verdict),
records candidate features: tileiras' remark (a "TMA Store instruction" of this tile's box, matched by
shape: the remarks name no location), whether the model changes memory outside the tensor's elements
(not merely lanes of the tile that alias another element of it), the stored tile's format, shape, the
view's shape / strides / dim_map, the lanes past the end, the end within its 16-byte group, the
operation that made the stored value and what else uses it, loops / ifs, the warps hint, the kernel's
op kinds ...

Each at-risk store is labelled FAILING (its region is among the regions of a campaign failure whose
cause is view-store-tail) or RIGHT (its program is not among the campaign's failures); at-risk stores
of programs failing for another cause are left out. A program is failing when any of its stores is.
The script searches for the simplest rule (one predicate, two joined by and / or, a depth-3 tree),
evaluates DEFAULT_RULES and ``--rule``s on the campaign and on ``--held-out``, tallies what goes with
tileiras choosing a TMA store over every store_view (``tma_triggers``), and writes the device
experiment's pair programs (``pairs``).

Found (campaigns 3 and 2): failing <=> tileiras selected a TMA store for the store_view AND the model
changes memory outside the tensor -- 104 / 104 failing, 0 of 559 right (campaign 3); 106 / 106, 0 of
550 (campaign 2, held out).

    PYTHONPATH=src python bench/view_store_tail_trigger.py \
        --campaign bench/results/fuzz_campaign3_h200.json \
        --held-out bench/results/fuzz_h200.json \
        --out bench/results/view_store_tail_trigger_cpu.json
    PYTHONPATH=src python bench/view_store_tail_trigger.py --pairs DIR   # the device experiment's programs

(``--gen-version`` overrides the report's generator; ``--held-out-gen-version`` the held-out
report's; ``--limit N`` the first N seeds only; ``--workers`` processes; ~4 minutes a campaign on 2
cores, most of it tileiras.)
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import fields

import numpy as np

CONTROL = ("if", "for", "while")
TRIVIAL = ("reshape", "broadcast", "spread", "convert", "ftof", "bitcast", "select")


# ---- one program ------------------------------------------------------------------------------------------


def _handles(prog, op) -> list:
    """The value handles ``op`` reads (its attribute fields holding handles, in order)."""
    out = []
    for f in fields(op.a):
        v = getattr(op.a, f.name)
        if isinstance(v, int) and not isinstance(v, bool) and v in prog.info and "Handle" in str(f.type):
            out.append(v)
        elif isinstance(v, tuple) and ("Handle" in str(f.type) or str(f.type) == "tuple"):
            out += [h for h in v if isinstance(h, int) and not isinstance(h, bool) and h in prog.info]
    return out


class Static:
    """What the recorded program says about each store_view: producer, users, nesting, position."""

    def __init__(self, prog):
        self.prog = prog
        self.defs: dict = {}  # handle -> op that defines it
        self.param_of: dict = {}  # handle -> (op, region index) whose region binds it
        self.users = collections.defaultdict(list)  # handle -> ops reading it
        self.parents: dict = {}  # op.num -> the kinds of the enclosing region ops, outermost first
        self.top_index: dict = {}  # op.num -> index of its top-level ancestor
        self.yielded_by: dict = {}  # handle -> op whose region yields it

        def go(ops, stack, top):
            for i, op in enumerate(ops):
                t = i if top is None else top
                self.parents[op.num] = [p.kind for p in stack]
                self.top_index[op.num] = t
                for h in op.res:
                    self.defs[h] = op
                for h in _handles(prog, op):
                    self.users[h].append(op)
                for ri, r in enumerate(op.regions):
                    for h in r.params:
                        self.param_of[h] = (op, ri)
                    for h in r.yields:
                        self.yielded_by.setdefault(h, op)
                    go(r.ops, stack + [op], t)

        go(prog.ops, [], None)
        self.n_top = len(prog.ops)

    def producer(self, h) -> str:
        if h in self.defs:
            return self.defs[h].kind
        if h in self.param_of:
            return self.param_of[h][0].kind + "-param"
        if h in self.prog.consts:
            return "const"
        return "arg"

    def chain(self, h, depth=4) -> list:
        """The producers of ``h``, then of its first value operand, and so on (``depth`` of them)."""
        out = []
        for _ in range(depth):
            k = self.producer(h)
            out.append(k)
            op = self.defs.get(h)
            if op is None or not _handles(self.prog, op):
                break
            vals = [x for x in _handles(self.prog, op) if self.prog.info[x].kind == "val"]
            if not vals:
                break
            h = vals[0]
        return out

    def through_control(self, h, depth=8) -> bool:
        """Whether ``h`` or an ancestor of it (first operand chain, ``depth`` deep) is an if / loop result
        or a region parameter (a carry)."""
        for _ in range(depth):
            if h in self.param_of:
                return True
            op = self.defs.get(h)
            if op is None:
                return False
            if op.kind in CONTROL:
                return True
            vals = [x for x in _handles(self.prog, op) if self.prog.info[x].kind == "val"]
            if not vals:
                return False
            h = vals[0]
        return False

    def nontrivial(self, h, depth=8) -> str:
        """The first producer along the first-operand chain that is not a reshape / broadcast / convert."""
        for _ in range(depth):
            k = self.producer(h)
            op = self.defs.get(h)
            if k not in TRIVIAL or op is None:
                return k
            vals = [x for x in _handles(self.prog, op) if self.prog.info[x].kind == "val"]
            if not vals:
                return k
            h = vals[0]
        return self.producer(h)


def _writes_param(prog, op):
    """The buffer parameter ``op`` writes, or None."""
    a = op.a
    if op.kind in ("store_view", "store_gather", "atomic_red_view"):
        v = prog.views.get(getattr(a, "view", None))
        return v and v.get("param")
    if op.kind in ("store", "store_ptrs", "scatter", "atomic_rmw", "atomic_cas"):
        return getattr(a, "param", None)
    return None


def tileiras_remarks(prog, while_o0: bool) -> dict:
    """tileiras' memory remarks for ``prog`` as the campaign assembled it (sm_90; -O0 for a kernel that keeps a
    while loop where the campaign ran with while-O0): {"stores": [shape, ...] of each "TMA Store instruction"
    remark (tileiras writes two a store), "other": [(name, instruction, shape)], "args": [...]}. The remarks
    name no location: a store is matched to them by its tile shape."""
    import re
    import subprocess
    import tempfile

    from tileir import lower
    from tileir.assemble import find_tileiras, holds_while_loop
    from tileir.bytecode import encode_kernel

    k = lower(prog)
    data = encode_kernel(k)
    args = ["--gpu-name", "sm_90"] + (["--opt-level", "0"] if while_o0 and holds_while_loop(k) else [])
    with tempfile.TemporaryDirectory() as d:
        bc, yml = os.path.join(d, "k.tilebc"), os.path.join(d, "r.yaml")
        with open(bc, "wb") as f:
            f.write(data)
        r = subprocess.run([find_tileiras(), *args, "--remarks=memory", "--remark-format=yaml",
                            f"--remarks-output-file={yml}", "-o", os.path.join(d, "k.cubin"), bc],
                           capture_output=True, text=True, timeout=120)
        text = open(yml).read() if os.path.exists(yml) else ""
    stores, failed, other = [], [], []
    for doc in text.split("--- ")[1:]:
        name = re.search(r"Name:\s+(\S+)", doc)
        ins = re.search(r"Instruction:\s+(.+)", doc)
        why = re.search(r"Reason:\s+(.+)", doc)
        shp = re.search(r"Shape:\s+'?\[([^\]]*)\]", doc)
        shape = [int(x) for x in shp.group(1).split(",") if x.strip()] if shp else None
        name = name and name.group(1)
        if name == "RemarkMemoryStoreInstructionSelected" and ins and "TMA" in ins.group(1):
            stores.append(shape)
        elif name == "RemarkMemoryTmaStoreFailed":
            failed.append(why.group(1).strip() if why else None)
        else:
            other.append([name, ins and ins.group(1).strip(), why and why.group(1).strip(), shape])
    return {"stores": stores, "failed": failed, "other": other, "args": args, "rc": r.returncode}


def box_matches(tile, shape) -> bool:
    """Whether a TMA remark's box ``shape`` (tileiras lists it innermost dimension first, dimensions of
    extent 1 dropped, contiguous ones merged) can be the store of ``tile``."""
    if int(np.prod(tile)) != int(np.prod(shape)):
        return False
    return sorted(t for t in tile if t != 1) == sorted(t for t in shape if t != 1) or len(shape) == 1


def footprint(shape, strides) -> set:
    """The element offsets (from the tensor's base) of every element of a tensor."""
    offs = np.zeros([1] * len(shape), dtype=np.int64)
    for k, (n, x) in enumerate(zip(shape, strides)):
        offs = offs + (np.arange(n, dtype=np.int64) * x).reshape([n if j == k else 1 for j in range(len(shape))])
    return set(offs.reshape(-1).tolist())


def analyse(task: dict) -> dict:
    try:
        return _analyse(task)
    except Exception as e:  # a record of its own, not the end of the campaign
        return {"seed": task["seed"], "status": "script_error", "detail": f"{type(e).__name__}: {e}"[:300]}


def _int(x) -> int:
    """A scalar the interpreter holds (a 0-d or one-element array, or a Python int) as an int."""
    return int(np.asarray(x).reshape(-1)[0])


def _analyse(task: dict) -> dict:
    """Draw ``task["seed"]`` (generator ``task["version"]``), run the host and the model; answer the
    program's record: status, whether the model's verdict differs, and per store_view its features."""
    warnings.filterwarnings("ignore")
    from tileir.diff.fuzzbuild import build
    from tileir.diff.fuzzgen import generate, walk
    from tileir.diff.fuzzjudge import judge
    from tileir.diff.fuzzknown import tail_written
    from tileir.diff.fuzzrun import compile_task, fake_answer
    from tileir.diff.fuzzspec import Profile
    from tileir.families import views as V
    from tileir.families.views import StoreView

    seed, version = task["seed"], task["version"]
    from tileir.diff.fuzzmodel import WORKAROUNDS, lower_as_run

    lower_as_run(task.get("workarounds", WORKAROUNDS))  # the TMA hints as the campaign's lowering wrote them
    if not task.get("first_exit", True):  # the run predates the first-exit workaround: keep every while loop
        import tileir.families.loops as loops

        loops.stops_on_first_iteration = lambda prog, op: False
    # a focused campaign's profile: the report's {"ops", "focus"} (python -m tileir.diff fuzz --ops / --focus)
    prof = {("only" if k == "ops" else k): v for k, v in (task.get("profile") or {}).items() if v is not None}
    prof["version"] = version
    for k in ("steps", "focus", "only", "prefer"):
        if isinstance(prof.get(k), list):
            prof[k] = tuple(tuple(x) if isinstance(x, list) else x for x in prof[k])
    desc = generate(seed, Profile(**prof))
    steps = {s["id"]: s for s in walk(desc["body"]) if "id" in s}
    if not any(s["op"] == "vstore" for s in steps.values()):
        return {"seed": seed, "status": "no-vstore"}
    job = compile_task({"desc": desc, "seed": seed, "assemble": False})
    if job.get("status") != "ready":
        return {"seed": seed, "status": job.get("status")}
    lay = job["layout"]
    names = [n for n, _ in lay.params]
    prog = build(desc).prog
    st = Static(prog)
    dyn: dict = collections.defaultdict(list)  # op.num -> per block geometry

    def rule(it, op):
        a = StoreView.of(op)
        view = it.val(a.view)
        tv = view["tv"]
        buf = tv["buf"]
        offs, inb = V._tile_geometry(it, view, a.indices)
        v = np.broadcast_to(np.asarray(it.val(a.value)), offs.shape)
        w = tail_written(offs, inb, buf)
        extra = w & ~inb
        before = buf[offs[extra]].copy()
        changed = 0
        if len(before):
            nb = np.ascontiguousarray(v[extra]).astype(buf.dtype)
            changed = int((before.view(np.uint8).reshape(len(before), -1) !=
                           nb.view(np.uint8).reshape(len(before), -1)).any(1).sum())
        foot = footprint(tv["shape"], tv["strides"])
        rel = offs[extra] - _int(tv["base"])
        outside_mask = np.array([int(o) not in foot for o in rel.tolist()], dtype=bool)
        outside = 0
        if len(before) and outside_mask.any():
            nb = np.ascontiguousarray(v[extra]).astype(buf.dtype)
            outside = int(((before.view(np.uint8).reshape(len(before), -1) !=
                            nb.view(np.uint8).reshape(len(before), -1)).any(1) & outside_mask).sum())
        idx = [_int(it.val(h)) for h in a.indices]
        tile = list(view["tile"])
        cross = [bool((i + 1) * t > tv["shape"][d]) for i, t, d in zip(idx, tile, view["dim_map"])]
        dyn[op.num].append({"block": it.block[0], "base": _int(tv["base"]), "idx": idx, "inb": int(inb.sum()),
                            "extra": int(extra.sum()), "changed": changed, "outside": outside,
                            "cross": cross})
        buf[offs[w]] = v[w]

    ans = fake_answer(job, {"store_view": rule})
    verdict = judge(lay, job["host"], ans)
    risky = {(r["buf"], r["step"]) for r in verdict.get("regions") or [] if r.get("op") == "vstore"}
    rem = tileiras_remarks(prog, task.get("while_o0", True)) if task.get("remarks") else None
    stores = []
    sv = [op for op in prog.walk() if op.kind == "store_view" and
          getattr(st.defs.get(op.a.view), "kind", None) == "partition_view"]  # not a gather view's (gstore)
    writes = collections.Counter(p for p in (_writes_param(prog, o) for o in prog.walk()) if p is not None)
    for op in sv:
        a = op.a
        vinfo = prog.views[a.view]
        param = vinfo["param"]
        name = names[param]
        pv_op = st.defs.get(a.view)
        tv_op = st.defs.get(pv_op.a.src) if pv_op is not None else None
        tshape = list(tv_op.a.shape) if tv_op is not None else None
        strides = list(tv_op.a.strides) if tv_op is not None else None
        tile = list(pv_op.a.tile_shape) if pv_op is not None else None
        dim_map = list(pv_op.a.dim_map) if pv_op is not None else None
        d = dyn.get(op.num, [])
        base0 = d[0]["base"] if d else None
        reg = next((g for g in lay.regions if g.buf == name and base0 is not None and
                    g.offset <= base0 < g.offset + g.size), None)
        step = reg.step if reg else None
        s = steps.get(step, {})
        isz = int(np.dtype(job["args"][param].dtype).itemsize)
        vals = st.users.get(a.value, [])
        others = [u.kind for u in vals if u is not op]
        rank = len(tile)
        cdim = next((j for j, x in enumerate(strides) if x == 1), None)  # the tensor's contiguous dimension
        ck = dim_map.index(cdim) if cdim is not None and cdim in dim_map else None  # its tile dimension
        extent = 1 + sum((n - 1) * x for n, x in zip(tshape, strides))
        other_stride = [x for j, x in enumerate(strides) if j != cdim]
        vdesc = steps.get(s.get("a"), {}) if s else {}
        stores.append({
            "num": op.num, "step": step, "buf": name, "risky": (name, step) in risky,
            "fmt": a.dtype, "bytes": isz, "rank": rank, "tile": tile, "tshape": tshape, "strides": strides,
            "dim_map": dim_map, "order": s.get("order"), "pitch": s.get("pitch"),
            "idx_by": [x.get("by") for x in s.get("idx", [])],
            "tile_elems": int(np.prod(tile)), "tile_bytes": int(np.prod(tile)) * isz,
            "contig_tile_dim": ck, "contig_is_last": ck == rank - 1,
            "tile_contig": tile[ck] if ck is not None else None,
            "tile_contig_bytes": tile[ck] * isz if ck is not None else None,
            "tile_other": int(np.prod(tile)) // tile[ck] if ck is not None else None,
            "row_bytes_mod16": (tshape[cdim] * isz) % 16 if cdim is not None else None,
            "pitch_bytes_mod16": (other_stride[0] * isz) % 16 if other_stride else None,
            "end_bytes_mod16": (extent * isz) % 16, "extent": extent,
            "shape_mod_tile": [tshape[dd] % t for t, dd in zip(tile, dim_map)],
            "blocks": len(d), "extra": sum(x["extra"] for x in d), "changed": sum(x["changed"] for x in d),
            "outside": sum(x["outside"] for x in d),
            "cross_any": [any(x["cross"][k] for x in d) for k in range(rank)],
            "cross_contig": any(x["cross"][ck] for x in d) if ck is not None else None,
            "cross_other": any(any(c for k, c in enumerate(x["cross"]) if k != ck) for x in d),
            "inb_min": min((x["inb"] for x in d), default=None),
            "producer": st.producer(a.value), "chain": st.chain(a.value), "source": st.nontrivial(a.value),
            "through_control": st.through_control(a.value), "users_other": sorted(others),
            "n_users_other": len(others), "parents": st.parents[op.num],
            "top_index": st.top_index[op.num], "n_top": st.n_top,
            "writes_same_buf": writes[param] - 1, "n_store_view": len(sv),
            "desc_src": vdesc.get("op"), "value_exact": s and lay.regions and reg.taint == "exact",
        })
    if rem is not None:
        for x in stores:
            x["tma"], x["tma_ambiguous"] = False, False
        for shape in {tuple(t) for t in rem["stores"]}:
            cands = [x for x in stores if box_matches(x["tile"], shape)]
            aligned = [x for x in cands if x["pitch_bytes_mod16"] in (None, 0)]
            cands = aligned or cands
            for x in cands:
                x["tma"] = True
                x["tma_ambiguous"] = x["tma_ambiguous"] or len(cands) > 1
        # a store whose tile shape another store shares, where not every such store got a TMA remark
        boxes = collections.Counter(tuple(sorted(t for t in x["tile"] if t != 1)) for x in stores)
        n_tma = len(rem["stores"]) // 2
        for x in stores:
            if boxes[tuple(sorted(t for t in x["tile"] if t != 1))] > 1 and n_tma < len(stores):
                x["tma_ambiguous"] = True
    return {"seed": seed, "status": "ok", "at_risk": bool(risky), "verdict": verdict["status"],
            "model_error": ans.error,
            "op_kinds": sorted({o.kind for o in prog.walk()}),
            "if_on_data": any(o.kind == "if" for o in prog.walk()) and any(s_["op"] == "if" and "a" in
                                                                          (s_.get("cond") or {}) for s_ in
                                                                          steps.values()),
            "warps": desc.get("warps", 0), "grid": desc["grid"][0], "kinds": sorted({x["op"] for x in steps.values()}),
            "stores": stores, "remarks": rem}


# ---- labels ---------------------------------------------------------------------------------------------------


def failures(report: dict) -> dict:
    """seed -> (cause or None, {(buf, step)} of its vstore regions) for every failure the report lists."""
    out = {}
    for d in report.get("differences") or []:
        cause = (d.get("classification") or {}).get("cause")
        out[d["seed"]] = (cause, {(r["buf"], r["step"]) for r in d.get("regions") or [] if r.get("op") == "vstore"})
    return out


def label(rows: list, fails: dict) -> list:
    """At-risk stores with their label (1 failing, 0 right); the program's label and its other causes."""
    out = []
    for p in rows:
        if p.get("status") != "ok":
            continue
        f = fails.get(p["seed"])
        for s in p["stores"]:
            if not s["risky"]:
                continue
            if f is None:
                y = 0
            elif f[0] == "view-store-tail":
                y = int((s["buf"], s["step"]) in f[1])
            else:
                continue  # failing for another cause: neither
            out.append(dict(s, seed=p["seed"], y=y, warps=p["warps"], grid=p["grid"],
                            prog_kinds=p["kinds"], op_kinds=p.get("op_kinds", []),
                            if_on_data=p.get("if_on_data")))
    return out


# ---- predicates and rules ---------------------------------------------------------------------------------------

SCALARS = ("fmt", "bytes", "rank", "tile_elems", "tile_bytes", "contig_tile_dim", "contig_is_last", "tile_contig",
           "tile_contig_bytes", "tile_other", "row_bytes_mod16", "pitch_bytes_mod16", "end_bytes_mod16", "order",
           "pitch", "extra", "changed", "cross_contig", "cross_other", "inb_min", "producer", "source",
           "through_control", "n_users_other", "top_index", "writes_same_buf", "n_store_view", "desc_src",
           "warps", "grid", "value_exact", "blocks", "n_top")


def derived(s: dict) -> dict:
    """The features a predicate may test, flat."""
    f = {k: s.get(k) for k in SCALARS}
    f["dim_map"] = tuple(s["dim_map"])
    f["tile_shape"] = tuple(s["tile"])
    f["idx_by"] = tuple(s["idx_by"])
    f["chain2"] = tuple(s["chain"][:2])
    f["chain3"] = tuple(s["chain"][:3])
    f["in_loop"] = any(k in ("for", "while") for k in s["parents"])
    f["users_kinds"] = tuple(sorted(set(s["users_other"])))
    f["used_elsewhere"] = bool(s["users_other"])
    f["chain_has_" + "control"] = any(k in CONTROL or k.endswith("-param") for k in s["chain"])
    for k in ("repack", "atomic_rmw", "atomic_cas", "if", "for", "while", "reduce", "scan", "load", "load_view",
              "unaryf", "binaryf", "convert", "mmaf", "permute", "cat", "extract", "iota", "load_ptrs", "gather"):
        f["chain_has_" + k] = k in s["chain"]
    for k in ("atomic_rmw", "atomic_cas", "store", "store_view", "scatter", "reduce", "scan", "repack", "if",
              "permute", "broadcast", "reshape", "extract", "cat", "print"):
        f["user_" + k] = k in s["users_other"]
    for k in ("pack", "atomic", "cas", "if", "for", "while", "reduce", "scan", "un", "bin", "mma", "softmax",
              "print", "assert"):
        f["prog_has_" + k] = k in s["prog_kinds"]
    f["last_top"] = s["top_index"] == s["n_top"] - 2  # the op before the final return
    f["tma"] = s.get("tma")  # tileiras' remark: a TMA store of this tile's box
    f["tma_ambiguous"] = s.get("tma_ambiguous")
    f["outside"] = s.get("outside", 0) > 0  # the model changes memory outside the tensor's elements
    f["eligible"] = eligible(s)
    for k in TRIGGER_KINDS:
        f["k_" + k] = k in s.get("op_kinds", ())
    f["k_if_on_data"] = bool(s.get("if_on_data"))
    f["contig_elems_per16"] = 16 // s["bytes"]
    f["tile_contig_mod_vec"] = (s["tile_contig"] or 0) % max(1, 16 // s["bytes"])
    f["row_elems_mod_vec"] = None if s["row_bytes_mod16"] is None else (s["row_bytes_mod16"] // s["bytes"])
    return f


TRIGGER_KINDS = ("if", "for", "while", "mmaf", "mmai", "atomic_rmw", "atomic_cas", "atomic_red_view", "print",
                 "assert", "reduce", "scan", "repack", "unaryf", "alloca", "load_view", "gather", "scatter",
                 "return_if", "cat", "permute", "extract", "load_ptrs", "store_ptrs", "get_global")


def eligible(s: dict) -> bool:
    """A store_view TMA could do, by the constraints tileiras' remarks name: every stride but the contiguous
    one a multiple of 16 bytes, the tile's extent along the contiguous dimension a multiple of 16 bytes."""
    return s["pitch_bytes_mod16"] in (None, 0) and s["tile_contig_bytes"] is not None and \
        s["tile_contig_bytes"] % 16 == 0


def tma_triggers(rows: list) -> dict:
    """What makes tileiras pick a TMA store, over every store_view of every program (at risk or not): the
    reasons its 'TMA store failed' remarks give, and, among eligible stores (``eligible``) with an
    unambiguous remark match, how often each recorded op kind in the kernel goes with a TMA store; then the
    smallest set of kernel op kinds whose presence predicts it (greedy on F1)."""
    reasons = collections.Counter(w for r in rows if r.get("status") == "ok" and r.get("remarks")
                                  for w in r["remarks"]["failed"])
    pts = []
    for r in rows:
        if r.get("status") != "ok" or not r.get("remarks"):
            continue
        kinds = set(r["op_kinds"]) | ({"if_on_data"} if r.get("if_on_data") else set())
        for x in r["stores"]:
            if x.get("tma_ambiguous"):
                continue
            pts.append((eligible(x), bool(x.get("tma")), kinds, r["seed"]))
    inel = collections.Counter(t for e, t, _, _ in pts if not e)
    el = [(t, k) for e, t, k, _ in pts if e]
    table = {}
    for k in sorted({k for _, ks in el for k in ks}):
        a = [t for t, ks in el if k in ks]
        b = [t for t, ks in el if k not in ks]
        table[k] = {"with": len(a), "tma_with": sum(a), "without": len(b), "tma_without": sum(b)}
    chosen: list = []
    best = confusion([t for t, _ in el], [False] * len(el))
    while True:
        cand = None
        for k in table:
            if k in chosen:
                continue
            ks = set(chosen) | {k}
            c = confusion([t for t, _ in el], [bool(ks & kk) for _, kk in el])
            if cand is None or c["f1"] > cand[1]["f1"]:
                cand = (k, c)
        if cand is None or cand[1]["f1"] <= best["f1"] + 1e-9:
            break
        chosen.append(cand[0])
        best = cand[1]
    misses = [{"seed": sd, "tma": t, "kinds": sorted(set(k) & set(TRIGGER_KINDS + ("if_on_data",)))}
              for e, t, k, sd in pts if e and t != bool(set(chosen) & k)][:40]
    return {"tma_store_failed_reasons": dict(reasons), "stores_unambiguous": len(pts),
            "ineligible_tma": dict((str(k), v) for k, v in inel.items()), "eligible": len(el),
            "eligible_tma": sum(t for t, _ in el), "by_kind": table, "greedy_kinds": chosen,
            "greedy_confusion": best, "greedy_misses": misses}


def predicates(feats: list) -> list:
    """Candidate predicates (name, function) over the features' observed values: equality for every value of a
    feature with few values, thresholds for numeric ones."""
    out = []
    keys = sorted(feats[0])
    for k in keys:
        vals = collections.Counter(f[k] for f in feats)
        if len(vals) <= 1:
            continue
        if len(vals) <= 24:
            for v in vals:
                out.append((f"{k} == {v!r}", lambda f, k=k, v=v: f[k] == v))
        nums = sorted({v for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)})
        if len(nums) > 2:
            cuts = nums if len(nums) <= 40 else [nums[int(i * (len(nums) - 1) / 39)] for i in range(40)]
            for c in cuts[1:]:
                out.append((f"{k} >= {c!r}", lambda f, k=k, c=c: isinstance(f[k], (int, float)) and f[k] >= c))
    return out


def confusion(ys, ps) -> dict:
    tp = sum(1 for y, p in zip(ys, ps) if y and p)
    fp = sum(1 for y, p in zip(ys, ps) if not y and p)
    fn = sum(1 for y, p in zip(ys, ps) if y and not p)
    tn = sum(1 for y, p in zip(ys, ps) if not y and not p)
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": round(prec, 4), "recall": round(rec, 4),
            "f1": round(f1, 4)}


def search(feats: list, ys: list, top: int = 25) -> dict:
    preds = predicates(feats)
    table = []
    for name, fn in preds:
        ps = [bool(fn(f)) for f in feats]
        c = confusion(ys, ps)
        table.append((c["f1"], name, fn, ps, c))
    table.sort(key=lambda t: (-t[0], len(t[1])))
    singles = [{"rule": n, **c} for _, n, _, _, c in table[:top]]
    # pairs among the best 60 singles and their negations
    pool = table[:60]
    lits = [(n, ps) for _, n, _, ps, _ in pool] + [(f"not ({n})", [not p for p in ps]) for _, n, _, ps, _ in table[:60]]
    best = []
    for i in range(len(lits)):
        for j in range(i + 1, len(lits)):
            for op in ("and", "or"):
                ps = [(a and b) if op == "and" else (a or b) for a, b in zip(lits[i][1], lits[j][1])]
                c = confusion(ys, ps)
                best.append((c["f1"], f"({lits[i][0]}) {op} ({lits[j][0]})", c))
    best.sort(key=lambda t: -t[0])
    pairs = [{"rule": n, **c} for _, n, c in best[:top]]
    return {"singles": singles, "pairs": pairs, "preds": {n: fn for _, n, fn, _, _ in table}}


def gini(ys) -> float:
    if not ys:
        return 0.0
    p = sum(ys) / len(ys)
    return 2 * p * (1 - p)


def tree(feats, ys, preds, depth=3, min_leaf=5):
    """A greedy decision tree over the predicates (Gini): {"split", "yes", "no"} or {"leaf", "n", "pos"}."""
    n, pos = len(ys), sum(ys)
    if depth == 0 or pos in (0, n) or n < 2 * min_leaf:
        return {"leaf": int(pos * 2 >= n), "n": n, "pos": pos}
    base = gini(ys)
    best = None
    for name, fn in preds.items():
        m = [bool(fn(f)) for f in feats]
        a = [y for y, x in zip(ys, m) if x]
        b = [y for y, x in zip(ys, m) if not x]
        if len(a) < min_leaf or len(b) < min_leaf:
            continue
        g = base - (len(a) * gini(a) + len(b) * gini(b)) / n
        if best is None or g > best[0] + 1e-12:
            best = (g, name, m)
    if best is None or best[0] <= 1e-9:
        return {"leaf": int(pos * 2 >= n), "n": n, "pos": pos}
    _, name, m = best
    fa = [f for f, x in zip(feats, m) if x]
    ya = [y for y, x in zip(ys, m) if x]
    fb = [f for f, x in zip(feats, m) if not x]
    yb = [y for y, x in zip(ys, m) if not x]
    return {"split": name, "n": n, "pos": pos, "yes": tree(fa, ya, preds, depth - 1, min_leaf),
            "no": tree(fb, yb, preds, depth - 1, min_leaf)}


def tree_predict(t, f, preds) -> int:
    while "split" in t:
        t = t["yes"] if preds[t["split"]](f) else t["no"]
    return t["leaf"]


def compile_rule(text: str):
    """A rule's text (as ``search`` writes it: predicates, ``not``, ``and``, ``or``) as a function of the
    features."""
    import re

    expr = re.sub(r"(\w+) (==|>=) ", r"f[\1!r] \2 ", text)
    expr = re.sub(r"f\[(\w+)!r\]", lambda m: f"f[{m.group(1)!r}]", expr)
    code = compile(expr, "<rule>", "eval")
    return lambda f: bool(eval(code, {"__builtins__": {}}, {"f": f}))


def by_program(labelled: list, ps: list) -> tuple:
    """Program-level labels and predictions: failing if any store is; predicted if any store is."""
    y, p = {}, {}
    for s, q in zip(labelled, ps):
        y[s["seed"]] = y.get(s["seed"], 0) | s["y"]
        p[s["seed"]] = p.get(s["seed"], 0) | int(q)
    seeds = sorted(y)
    return [y[k] for k in seeds], [p[k] for k in seeds]


# ---- the campaign ---------------------------------------------------------------------------------------------------


def run_campaign(path: str, version, limit, workers, remarks: bool = True, as_today: bool = False) -> tuple:
    from tileir.diff.fuzzmodel import WORKAROUNDS

    with open(path) as f:
        rep = json.load(f)
    version = int(version or rep.get("generator") or 1)
    seed0, n = int(rep.get("seed") or 1), int(rep.get("programs") or 0)
    if limit:
        n = min(n, limit)
    # the campaign's assembly: -O0 for a kernel keeping a while loop only where it ran with while-O0
    while_o0 = "while-O0" in (rep.get("workarounds") or ())
    first_exit = "while-first-exit" in (rep.get("workarounds") or ())
    tasks = [{"seed": seed0 + i, "version": version, "remarks": remarks, "while_o0": while_o0,
              "first_exit": first_exit, "profile": rep.get("profile"),
              "workarounds": list(WORKAROUNDS if as_today else rep.get("workarounds") or ())} for i in range(n)]
    t0 = time.time()
    with ProcessPoolExecutor(workers) as ex:
        rows = list(ex.map(analyse, tasks, chunksize=8))
    secs = time.time() - t0
    return rep, version, rows, secs


def summarise(rep, version, rows, secs, path) -> dict:
    fails = failures(rep)
    labelled = label(rows, fails)
    status = collections.Counter(r["status"] for r in rows)
    atrisk = [r for r in rows if r.get("status") == "ok" and r["at_risk"]]
    vst = {s for s, (c, _) in fails.items() if c == "view-store-tail"}
    seen = {r["seed"] for r in rows}
    missed = sorted(s for s in vst if s in seen and not any(r["seed"] == s and r.get("at_risk") for r in rows))
    return {"campaign": path, "generator": version, "programs": len(rows), "seconds": round(secs, 1),
            "status": dict(status),
            "script_errors": [[r["seed"], r["detail"]] for r in rows if r["status"] == "script_error"][:5],
            "with_vstore": sum(1 for r in rows if r.get("status") == "ok"),
            "model_errors": sorted(r["seed"] for r in rows if r.get("model_error")),
            "at_risk_programs": len(atrisk),
            "view_store_tail_failures": len([s for s in vst if s in seen]),
            "failures_not_at_risk": missed,
            "at_risk_other_cause": sorted(r["seed"] for r in atrisk if r["seed"] in fails and
                                          fails[r["seed"]][0] != "view-store-tail"),
            "stores_labelled": len(labelled), "stores_failing": sum(s["y"] for s in labelled),
            "programs_failing": len({s["seed"] for s in labelled if s["y"]}),
            "programs_right": len({s["seed"] for s in labelled} - {s["seed"] for s in labelled if s["y"]})}, labelled


COMPACT = ("seed", "y", "step", "tma", "tma_ambiguous", "fmt", "tile", "tshape", "strides", "dim_map", "idx_by",
           "extra", "changed", "outside", "end_bytes_mod16", "producer", "chain", "warps", "grid", "triggers")


def compact(labelled: list) -> dict:
    """The at-risk stores as rows under one header (``triggers``: the kernel's op kinds of TRIGGER_KINDS)."""
    rows = []
    for s in labelled:
        t = dict(s, triggers=[k for k in TRIGGER_KINDS if k in s.get("op_kinds", ())] +
                 (["if_on_data"] if s.get("if_on_data") else []), chain=s["chain"][:3])
        rows.append([t.get(k) for k in COMPACT])
    return {"header": list(COMPACT), "rows": rows}


def evaluate(labelled, rule_fns: dict) -> dict:
    feats = [derived(s) for s in labelled]
    ys = [s["y"] for s in labelled]
    out = {}
    for name, fn in rule_fns.items():
        ps = [fn(f) for f in feats]
        yp, pp = by_program(labelled, ps)
        out[name] = {"stores": confusion(ys, ps), "programs": confusion(yp, pp)}
    return out


# ---- the device experiment: pairs of programs differing only in the trigger --------------------------------------


def _ld(i, fmt="f32", shape=(32,)):
    return {"op": "load", "id": i, "fmt": fmt, "shape": list(shape), "dist": "small", "moving": False, "mask": False}


def _vs(i, a, tshape, pitch=0, order="row", dim_map=None):
    return {"op": "vstore", "id": i, "a": a, "tshape": list(tshape), "dim_map": dim_map or list(range(len(tshape))),
            "order": order, "pitch": pitch, "idx": [{"c": 0, "by": "const"} for _ in tshape]}


TRIGGERS = {  # unrelated to the stored value: other loads, other buffers
    "none": [],
    "atomic_rmw": [{"op": "atomic", "id": 90, "mode": "xchg", "a": 3, "collide": False, "mul": 5, "add": 9}],
    "if_on_data": [{"op": "if", "id": 50, "carries": [2], "cond": {"a": 2, "at": 2},
                    "then": [{"op": "bin", "id": 53, "f": "subf", "a": 51, "b": 51, "rnd": "nearest_even"}],
                    "cid": 51, "sets_then": [53], "else": [], "cid_else": 54, "sets_else": [None]},
                   {"op": "store", "id": 60, "a": 50, "mask": False}],
    "mmaf": [_ld(96, "f32", (8, 4)), _ld(97, "f32", (4, 4)),
             {"op": "mma", "id": 98, "fmt": "f16", "acc": "f32", "a": 96, "b": 97, "c": None, "split": False},
             {"op": "store", "id": 99, "a": 98, "mask": False}],
    "print": [{"op": "print", "id": 90, "args": [2], "conv": ["%f"]}],
    # controls: kernel-level ops that did not bring a TMA store in the probes
    "if_on_block": [{"op": "if", "id": 50, "carries": [2], "cond": {"block": 0},
                     "then": [{"op": "bin", "id": 53, "f": "addf", "a": 51, "b": 51, "rnd": "nearest_even"}],
                     "cid": 51, "sets_then": [53], "else": [], "cid_else": 54, "sets_else": [None]},
                    {"op": "store", "id": 60, "a": 50, "mask": False}],
    "atomic_cas": [{"op": "cas", "id": 90, "a": 3, "mul": 1, "add": 5},
                   {"op": "store", "id": 95, "a": 90, "mask": False}],
    "tanh": [{"op": "un", "id": 90, "f": "tanh", "a": 2}, {"op": "store", "id": 95, "a": 90, "mask": False}],
}
GEOMETRIES = {  # (the stored tile's load shape, the tensor's shape, pitch, what the end does)
    "f32 [32] into [26]": ((32,), (26,), 0),  # the end 8 bytes into a 16-byte group: 2 lanes at risk per block
    "f32 [32] into [28]": ((32,), (28,), 0),  # the end on a 16-byte boundary: nothing to write
    "f32 [2] into [1]": ((2,), (1,), 0),  # an 8-byte box: not one TMA takes
    "f32 [4,8] into [4,6] pitch 2": ((4, 8), (4, 6), 2),  # rows of 32 bytes: TMA, the pitch gap at risk
    "f32 [4,8] into [4,7] pitch 2": ((4, 8), (4, 7), 2),  # rows of 36 bytes: 'stride not 16-byte aligned'
}


def pair_descs() -> list:
    """(name, desc): every geometry with every trigger; one block, no warps hint."""
    out = []
    for g, (tile, tsh, pitch) in GEOMETRIES.items():
        for t, extra in TRIGGERS.items():
            body = [_ld(1, "f32", tile), _ld(2, "f32", (32,)), _ld(3, "i32", (32,)), _vs(40, 1, tsh, pitch)] + extra
            out.append((f"{g} + {t}", {"v": 1, "seed": 1, "grid": [1], "warps": 0, "fmts": ["f32", "i32"],
                                       "globals": [], "body": body}))
    return out


def pairs(where: str | None) -> list:
    """The pair programs, each with tileiras' remark (a TMA store or not), whether the model changes
    memory outside the tensor, and the prediction (differ exactly where both); with ``where`` a reproducer
    file each there (``python -m tileir.diff fuzz-repro DIR/*.json``)."""
    from tileir.diff.fuzzbuild import build
    from tileir.diff.fuzzjudge import judge
    from tileir.diff.fuzzknown import vector_tail_store
    from tileir.diff.fuzzrun import compile_task, fake_answer

    rows = []
    for name, desc in pair_descs():
        prog = build(desc).prog
        rem = tileiras_remarks(prog, True)
        job = compile_task({"desc": desc, "seed": 1, "assemble": False})
        v = judge(job["layout"], job["host"], fake_answer(job, {"store_view": vector_tail_store}))
        bad = sum(r["bad"] for r in v.get("regions") or [] if r.get("op") == "vstore")
        tma = bool(rem["stores"])
        rows.append({"name": name, "tma_remark": tma, "tma_failed": sorted(set(w for w in rem["failed"] if w)),
                     "model_bad_lanes": bad, "predicted": "differ" if tma and bad else "equal",
                     "file": None})
        if where:
            os.makedirs(where, exist_ok=True)
            path = os.path.join(where, "vst_" + "".join(c if c.isalnum() else "_" for c in name).strip("_") + ".json")
            with open(path, "w") as f:
                json.dump({"tool": "bench/view_store_tail_trigger.py --pairs", "desc": desc, "arch": "sm_90",
                           "opt_level": None, "status": rows[-1]["predicted"] + " (predicted)",
                           "classification": {"cause": "view-store-tail" if rows[-1]["predicted"] == "differ"
                                              else None}}, f, indent=1)
            rows[-1]["file"] = path
    return rows


# the rules this study found (tileiras' own remark; its kernel-level triggers), evaluated on every run
DEFAULT_RULES = ["tma == True", "(tma == True) and (outside == True)",
                 "(eligible == True) and ((k_mmaf == True) or (k_mmai == True) or (k_atomic_rmw == True) or "
                 "(k_print == True) or (k_if_on_data == True))"]


def main(argv=None) -> int:
    warnings.filterwarnings("ignore")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--campaign", default="bench/results/fuzz_campaign3_h200.json")
    p.add_argument("--gen-version", type=int, default=None, help="the generator (default: the report's)")
    p.add_argument("--held-out", default=None, help="a second campaign report to check the rules on")
    p.add_argument("--held-out-gen-version", type=int, default=None)
    p.add_argument("--limit", type=int, default=None, help="the first N seeds of each campaign only")
    p.add_argument("--workers", type=int, default=os.cpu_count())
    p.add_argument("--rule", action="append", default=[], help="also evaluate this rule (search's syntax)")
    p.add_argument("--out", default=None)
    p.add_argument("--pairs", default=None, metavar="DIR", help="only write the device experiment's pair "
                   "programs as reproducers into DIR (then: python -m tileir.diff fuzz-repro DIR/*.json)")
    p.add_argument("--no-pairs", action="store_true", help="leave the pair programs out of --out")
    p.add_argument("--as-today", action="store_true", help="lower with today's TMA workarounds, not the "
                   "campaign's (does a failing store still get a TMA store?)")
    a = p.parse_args(argv)
    if a.pairs:
        for r in pairs(a.pairs):
            print(f"{r['name']:45s} tma={r['tma_remark']!s:5s} model_bad={r['model_bad_lanes']:3d} "
                  f"predicted={r['predicted']} {r['tma_failed']}", file=sys.stderr)
        return 0

    rep, version, rows, secs = run_campaign(a.campaign, a.gen_version, a.limit, a.workers, as_today=a.as_today)
    summ, labelled = summarise(rep, version, rows, secs, a.campaign)
    print(json.dumps(summ), file=sys.stderr)
    feats = [derived(s) for s in labelled]
    ys = [s["y"] for s in labelled]
    found = search(feats, ys)
    t = tree(feats, ys, found["preds"])
    rules = {"best single: " + found["singles"][0]["rule"]: found["preds"][found["singles"][0]["rule"]],
             "best pair: " + found["pairs"][0]["rule"]: compile_rule(found["pairs"][0]["rule"]),
             "tree (depth 3)": lambda f, t=t, pr=found["preds"]: bool(tree_predict(t, f, pr))}
    for r in DEFAULT_RULES + a.rule:
        rules["given: " + r] = compile_rule(r)
    doc = {"tool": "bench/view_store_tail_trigger.py", "model": "diff.fuzzknown.vector_tail_store",
           "train": summ, "singles": found["singles"], "pairs": found["pairs"], "tree": t,
           "train_confusion": evaluate(labelled, rules)}
    if a.held_out:
        rep2, v2, rows2, secs2 = run_campaign(a.held_out, a.held_out_gen_version, a.limit, a.workers)
        summ2, lab2 = summarise(rep2, v2, rows2, secs2, a.held_out)
        print(json.dumps(summ2), file=sys.stderr)
        doc["held_out"] = summ2
        doc["held_out_confusion"] = evaluate(lab2, rules)
        f2 = search([derived(s) for s in lab2], [s["y"] for s in lab2], top=10)
        doc["held_out_singles"] = f2["singles"]
        doc["held_out_pairs"] = f2["pairs"]
        doc["held_out_tma_triggers"] = tma_triggers(rows2)
        doc["held_out_stores"] = compact(lab2)
    doc["tma_triggers"] = tma_triggers(rows)
    if not a.no_pairs:
        doc["device_pairs"] = pairs(None)
    doc["stores"] = compact(labelled)
    text = json.dumps(doc, default=str, separators=(",", ":"))
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    for k, v in doc["train_confusion"].items():
        print("train", k, v, file=sys.stderr)
    for k, v in doc.get("held_out_confusion", {}).items():
        print("held-out", k, v, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
