"""The device facts the loops / tile-shape / view families rest on, measured against the
host reference. Two steps, because tileiras runs here and the GPU is elsewhere:

    .venv/bin/python tools/probe_families.py build .devcheck     # here: cubins + inputs + host answers
    python3 tools/probe_families.py run .devcheck                # on the GPU machine (PYTHONPATH=src)

``run`` launches every case with numpy arrays and prints one line a case: OK (bit for bit equal to
the host reference, or within the case's tolerance) or DIFF with the first lanes of both. What it
answered on an H200 (tileiras 13.4.92, sm_90, 2026-11-29) is in the docstrings of ops/loops.py,
ops/moreviews.py and ref/second.py: a return inside a loop is right unless the kernel returned at
its top level before the loop (-O0 and -O3 alike); a gather/scatter view's At index is an element
offset; fpowi over f16/bf16 runs the f32 sequence; everything else equal to the host.
"""

from __future__ import annotations

import copy
import os
import pickle
import sys

import numpy as np


def _cases():
    import tileir as ti
    from tileir import BF16, F16, F32, F64, I4, I8, I32
    from tileir.assemble import assemble
    from tileir.ref import run_host

    sys.path.insert(0, "tests")
    import test_family_folds as fo
    import test_family_loops as lo
    import test_family_strided_gather_atomic_views as mv

    z = ti.idx_const
    out = []
    rng = np.random.default_rng(5)

    def add(name, params, body, args, grid=(1,), tol=None, opt=None):
        prog = ti.trace_kernel(name, params, body)
        host = [copy.deepcopy(a) for a in args]
        run_host(prog, host, grid)
        k = ti.lower(prog)
        cubin = assemble(ti.encode_kernel(k), "sm_90", kernel=name, program=k, opt_level=opt)
        out.append(dict(name=f"{name}@O{'default' if opt is None else opt}", kname=name, cubin=cubin,
                        params=[(p.dtype, p.by_ptr) for p in prog.params], grid=grid, args=args, host=host, tol=tol))

    # -- loops and returns --
    add("doubling", (ti.ByPtr(F32), ti.ByPtr(I32)), lo._doubling, [np.zeros(2, np.float32), np.zeros(1, np.int32)])
    add("fork", (ti.ByPtr(F32),) * 3, lo._fork_disjoint,
        [np.zeros(16, np.float32), np.zeros(8, np.float32), np.arange(8, dtype=np.float32)])

    def ret_kernel(top=False, after_if=False, after_top=False):
        def body():
            p, b = ti.param(I32, 0), ti.block_id(0)
            if top:
                ti.d_return_if(ti.idx_eq(b, 3))
            c = ti.carry(ti.i_const(0))

            def step():
                i = ti.get(c)
                ti.d_return_if(ti.idx_eq(ti.idx_of(i), b))
                ti.set(c, ti.add_i(i, ti.i_const(1)))
                return ti.ge_i(i, ti.i_const(5))

            ti.d_loop(step)
            if after_if:
                ti.d_if(ti.idx_eq(b, 6), lambda: ti.d_return_if(ti.bool_const(True)))
            if after_top:
                ti.d_return_if(ti.idx_eq(b, 8))
            ti.store(p, ti.tile_at(b, 1), ti.broadcast(ti.get(c), [1]))
        return body

    from tileir.record import Recorder

    for opt in (None, 0):
        for label, kw in (("ret_loop", {}), ("ret_loop_if_top", dict(after_if=True, after_top=True)),
                          ("ret_top_then_loop", dict(top=True))):
            saved = Recorder.t_return_if
            if kw.get("top"):  # the shape the recording refuses: record it past the refusal to measure it
                def unchecked(self, cond):
                    self.emit("return_if", (), cond=cond)
                Recorder.t_return_if = unchecked
            try:
                add(label, (ti.ByPtr(I32),), ret_kernel(**kw), [np.full(10, -1, np.int32)], grid=(10,), opt=opt)
            finally:
                Recorder.t_return_if = saved

    # -- views --
    for sd in (0, 1):
        x = np.arange(128, dtype=np.float32).reshape(16, 8)
        rows = np.array([5, 0, 17, 3] if sd == 0 else [7, 1, 9, 2], np.int32)
        add(f"gather{sd}", (ti.ByPtr(F32), ti.ByPtr(I32), ti.ByPtr(F32), ti.ByPtr(F32)), mv._gather_body(sd),
            [x, rows, np.full((16, 8), -1.0, np.float32), np.zeros(16, np.float32)])

    def strided():
        sv = ti.strided_view(mv._tv(), [4, 4], [2, 4], padding=ti.PadNan)
        o = ti.param(F32, 1)
        for n, (i, j) in enumerate(((0, 0), (1, 1), (7, 0), (3, 1))):
            ti.store(o, z(16 * n), ti.reshape(ti.load_view(sv, [i, j]), [16]))
        g = ti.param(I32, 2)
        ti.store(g, z(0), ti.broadcast(ti.idx_as_tile(ti.index_space_dim(sv, 0)), [1]))
        ti.store(g, z(1), ti.broadcast(ti.idx_as_tile(ti.index_space_dim(sv, 1)), [1]))
        sv2 = ti.strided_view(mv._tv(), [4, 2], [2, 8], dim_map=[1, 0])
        ov = ti.strided_view(mv._tv(3), [4, 2], [2, 8], dim_map=[1, 0])
        ti.store_view(ov, [1, 1], ti.load_view(sv2, [1, 1]))

    add("strided", (ti.ByPtr(F32), ti.ByPtr(F32), ti.ByPtr(I32), ti.ByPtr(F32)), strided,
        [np.arange(128, dtype=np.float32).reshape(16, 8), np.zeros(64, np.float32), np.zeros(2, np.int32),
         np.full((16, 8), -1.0, np.float32)])
    for mode in ("add", "max", "min", "umax", "umin", "and", "or", "xor"):
        def red(mode=mode):
            t = ti.load(ti.param(I32, 1), ti.tile_at(ti.block_id(0), 16), [4, 4])
            ti.atomic_red_view(ti.partition_view(mv._tv(0, I32, (8, 8)), [4, 4]), [1, 0], mode, "device", t)
        add(f"red_{mode}", (ti.ByPtr(I32), ti.ByPtr(I32)), red,
            [rng.integers(-50, 50, size=(8, 8)).astype(np.int32),
             rng.integers(-(2**31), 2**31 - 1, size=(4, 4, 4)).astype(np.int32)], grid=(4,))

    # -- tile shapes, powers, bytes --
    for fmt, edt in ((F64, I32), (F32, ti.I8), (F32, ti.I16), (F16, I32), (BF16, I32)):
        a = np.concatenate([[1.5, -2.0, 0.5, 3.0, np.nan, 1.1, -0.0, 2.0], rng.uniform(0.3, 3.0, 1016)]).astype(fmt.np)
        n = np.concatenate([[3, -2, 10, 0, 0, 17, -1, -127], rng.integers(-100, 100, 1016)]).astype(edt.np)

        def pw(fmt=fmt, edt=edt):
            t = ti.load(ti.param(fmt, 0), z(0), [1024])
            ti.store(ti.param(fmt, 2), z(0), ti.powi(t, ti.load(ti.param(edt, 1), z(0), [1024])))
        add(f"powi_{fmt.name}_{edt.name}", (ti.ByPtr(fmt), ti.ByPtr(edt), ti.ByPtr(fmt)), pw,
            [a, n, np.zeros(1024, fmt.np)])
    for fmt in (F32, F64):
        def er(fmt=fmt):
            ti.store(ti.param(fmt, 1), z(0), ti.erf(ti.load(ti.param(fmt, 0), z(0), [256])))
        add(f"erf_{fmt.name}", (ti.ByPtr(fmt), ti.ByPtr(fmt)), er,
            [np.linspace(-4, 4, 256).astype(fmt.np), np.zeros(256, fmt.np)], tol=4e-7)

    def packs():
        b = ti.pack_bytes(ti.load(ti.param(F32, 0), z(0), [4]))
        ti.store(ti.param(I8, 1), z(0), b)
        ti.store(ti.param(F16, 2), z(0), ti.unpack_bytes(b, F16))
        n = ti.unpack_bytes(ti.load(ti.param(I8, 3), z(0), [8]), I4)
        ti.store(ti.param(I32, 4), z(0), ti.ext_i4(n))
        ti.store(ti.param(I8, 5), z(0), ti.pack_bytes(n))

    add("packs", (ti.ByPtr(F32), ti.ByPtr(I8), ti.ByPtr(F16), ti.ByPtr(I8), ti.ByPtr(I32), ti.ByPtr(I8)), packs,
        [np.array([1.0, -2.5, np.inf, 3.25], np.float32), np.zeros(16, np.int8), np.zeros(8, np.float16),
         np.array([0x21, 0x8F, 0x7A, 0x00, 0xFF, 0x5C, 0x10, 0x09], np.uint8).view(np.int8),
         np.zeros(16, np.int32), np.zeros(8, np.int8)])

    # -- two-operand folds --
    def argmax():
        t = ti.load(ti.param(F32, 0), z(0), [8, 16])
        lanes = ti.broadcast(ti.reshape(ti.arange(16), [1, 16]), [8, 16])
        v, i = ti.d_reduce2(t, lanes, -np.inf, 2**31 - 1, fo._argmax, dim=1)
        ti.store(ti.param(F32, 1), z(0), v)
        ti.store(ti.param(I32, 2), z(0), i)

    add("argmax", (ti.ByPtr(F32), ti.ByPtr(F32), ti.ByPtr(I32)), argmax,
        [rng.integers(-4, 4, size=(8, 16)).astype(np.float32), np.zeros(8, np.float32), np.zeros(8, np.int32)])
    for rev in (False, True):
        def sc(rev=rev):
            ta, tx = ti.load(ti.param(F32, 0), z(0), [16]), ti.load(ti.param(F32, 1), z(0), [16])
            c, h = ti.d_scan2(ta, tx, 1.0, 0.0, fo._affine, reverse=rev)
            ti.store(ti.param(F32, 2), z(0), c)
            ti.store(ti.param(F32, 2), z(16), h)
        add(f"scan2_reverse_{rev}", (ti.ByPtr(F32),) * 3, sc,
            [np.array([1, 2, 0.5, 1, -1, 2, 0.5, 0.25] * 2, np.float32),
             np.array([1, -2, 4, 0.5, 1, 2, -1, 8] * 2, np.float32), np.zeros(32, np.float32)])
    return out


def build(folder: str) -> None:
    os.makedirs(folder, exist_ok=True)
    cases = _cases()
    with open(os.path.join(folder, "cases.pkl"), "wb") as f:
        pickle.dump(cases, f)
    print(f"{len(cases)} cases in {folder}/cases.pkl")


def run(folder: str) -> None:
    sys.path.insert(0, "src")
    from tileir.runtime import launch

    with open(os.path.join(folder, "cases.pkl"), "rb") as f:
        cases = pickle.load(f)
    for c in cases:
        args = [np.array(a, copy=True) for a in c["args"]]
        try:
            launch(c["cubin"], c["kname"], c["grid"], args, c["params"])
        except Exception as e:  # noqa: BLE001 - a probe reports every failure and goes on
            print(f"{c['name']}: LAUNCH FAILED {e}")
            continue
        bad = []
        for i, (d, h) in enumerate(zip(args, c["host"])):
            if c["tol"] is None and d.tobytes() != h.tobytes():
                bad.append(f"arg{i}: device {d.ravel()[:12].tolist()} host {h.ravel()[:12].tolist()}")
            elif c["tol"] is not None and np.max(np.abs(d.astype(np.float64) - h.astype(np.float64))) > c["tol"]:
                bad.append(f"arg{i}: beyond {c['tol']}")
        print(f"{c['name']}: {'OK' if not bad else 'DIFF ' + ' | '.join(bad)}")


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2] if len(sys.argv) > 2 else ".devcheck")
