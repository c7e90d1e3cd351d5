"""Layer-2 families of control flow, tile shapes and the matrix products."""

from __future__ import annotations

import numpy as np

import tileir as ti
from tileir import BF16, F16, F32, I8, I32

from . import corpora as C
from .model import *  # noqa: F401,F403


def _control():
    def args():
        return [C.int32_spread(64, 260) >> 8, np.zeros(4 * 8, np.int32), np.zeros(8, np.int32),
                np.zeros(8, np.int32), np.full(8, -1, np.int32)]

    def body():
        x, o, a, b, rr = (ti.param(I32, k) for k in range(5))
        bid = ti.block_id(0)
        base = ti.tile_at(bid, 8)
        acc = ti.carry(ti.load(x, base, [8]))
        for j in ti.d_range(0, 3):  # acc += x shifted by j * 8 (mod 64)
            off = ti.idx_rem(ti.idx_add(base, ti.idx_mul(j, ti.idx_const(8))), ti.idx_const(64))
            ti.set(acc, ti.add_i(ti.get(acc), ti.load(x, off, [8])))
        even = ti.idx_eq(ti.idx_rem(bid, ti.idx_const(2)), ti.idx_const(0))
        ti.d_if(even, lambda: ti.set(acc, ti.mul_i(ti.get(acc), ti.i_const(3))),
                lambda: ti.set(acc, ti.neg_i(ti.get(acc))))
        ti.store(o, base, ti.get(acc))
        steps = ti.carry(ti.i_const(0))
        v = ti.carry(ti.add_i(ti.idx_as_tile(bid), ti.i_const(27)))

        def collatz():
            cur = ti.get(v)
            odd = ti.eq_i(ti.and_i(cur, ti.i_const(1)), ti.i_const(1))
            up = ti.add_i(ti.mul_i(cur, ti.i_const(3)), ti.i_const(1))
            ti.set(v, ti.select(odd, up, ti.shr_i(cur, ti.i_const(1))))
            ti.set(steps, ti.add_i(ti.get(steps), ti.i_const(1)))
            return ti.eq_i(cur, ti.i_const(1))

        ti.d_loop(collatz)
        one = ti.tile_at(bid, 1)
        ti.d_fork2(lambda: ti.store(a, one, ti.broadcast(ti.get(steps), [1])),
                   lambda: ti.store(b, one, ti.broadcast(ti.idx_as_tile(ti.num_blocks(0)), [1])))
        ti.d_return_if(ti.idx_eq(bid, ti.idx_const(2)))
        ti.store(rr, one, ti.broadcast(ti.idx_as_tile(bid), [1]))

    def expect(args, launch=0):
        x = args[0].astype(np.int64)
        o = np.zeros(32, np.int64)
        steps = np.zeros(8, np.int64)
        for blk in range(4):
            acc = x[8 * blk: 8 * blk + 8].copy()
            for j in range(3):
                off = (8 * blk + 8 * j) % 64
                acc = acc + x[off: off + 8]
            acc = acc * 3 if blk % 2 == 0 else -acc
            o[8 * blk: 8 * blk + 8] = acc
            v, k = blk + 27, 0
            while True:  # the loop answers what entered the iteration that stopped it
                k += 1
                if v == 1:
                    k -= 1
                    break
                v = 3 * v + 1 if v % 2 else v // 2
            steps[blk] = k
        rr = np.full(8, -1)
        rr[[0, 1, 3]] = [0, 1, 3]
        nb = np.zeros(8)
        nb[:4] = 4
        return {1: ((o + 2**31) % 2**32 - 2**31).astype(np.int32), 2: steps.astype(np.int32),
                3: nb.astype(np.int32), 4: rr.astype(np.int32)}

    case = Case("control", (ti.ByPtr(I32),) * 5, body, args, (Out(1, EXACT), Out(2, EXACT), Out(3, EXACT),
                                                             Out(4, EXACT)),
                grid=(4,), expect=expect, inputs=(0,))
    return Family("control", "exact", "exact: a d_range loop carrying a tile, an if on the block's parity, a "
                  "d_loop whose exit the data decides (Collatz steps), two forked store chains, the grid's "
                  "extent, and a block that returns early", ("for", "if", "loop", "break", "continue", "yield",
                                                              "return", "join_tokens", "get_num_tile_blocks"),
                  [case])


# ---- tile shapes ---------------------------------------------------------------------------------


def _tileshape():
    def args():
        return [np.arange(64, dtype=np.int32) * 3 - 50, np.zeros(6 * 64, np.int32)]

    def body():
        x = ti.load(ti.param(I32, 0), _z(), [8, 8])
        o = ti.param(I32, 1)
        lo = ti.extract(x, [4, 8], [ti.idx_const(0), ti.idx_const(0)])
        hi = ti.extract(x, [4, 8], [ti.idx_const(1), ti.idx_const(0)])
        outs = [ti.cat(hi, lo, 0), ti.transpose(x), ti.insert(ti.extract(x, [2, 4], [ti.idx_const(3), ti.idx_const(1)]),
                                                               ti.broadcast(ti.i_const(9), [8, 8]),
                                                               [ti.idx_const(0), ti.idx_const(0)]),
                ti.reshape(ti.permute_tile(ti.reshape(x, [2, 4, 8]), [2, 0, 1]), [8, 8]),
                ti.cat(ti.extract(x, [8, 4], [ti.idx_const(0), ti.idx_const(1)]),
                       ti.extract(x, [8, 4], [ti.idx_const(0), ti.idx_const(0)]), 1),
                ti.broadcast(ti.reshape(ti.arange(8), [1, 8]), [8, 8])]
        for k, t in enumerate(outs):
            ti.store(o, ti.idx_const(64 * k), ti.reshape(t, [64]))

    def expect(args, launch=0):
        x = args[0].reshape(8, 8)
        ins = np.full((8, 8), 9)
        ins[0:2, 0:4] = x[6:8, 4:8]
        outs = [np.concatenate([x[4:], x[:4]], 0), x.T, ins, np.transpose(x.reshape(2, 4, 8), (2, 0, 1)).reshape(8, 8),
                np.concatenate([x[:, 4:], x[:, :4]], 1), np.broadcast_to(np.arange(8), (8, 8))]
        return {1: np.concatenate([np.ravel(v) for v in outs]).astype(np.int32)}

    case = Case("tileshape", (ti.ByPtr(I32), ti.ByPtr(I32)), body, args,
                (Out(1, EXACT, labels=("cat0", "transpose", "insert", "permute", "cat1", "iota_bcast"), block=64),),
                expect=expect)
    return Family("tileshape", "exact", "exact: extract and insert by slice number, cat along either dimension, "
                  "permute and transpose, reshape, broadcast and iota", ("extract", "insert", "cat", "permute",
                                                                         "reshape", "broadcast", "iota"), [case])


# ---- mma -----------------------------------------------------------------------------------------


def _mma():
    cases = []

    def iargs():
        r = C.rng(270)
        a = r.integers(-128, 128, (16, 32)).astype(np.int8)
        a[0, :] = -128
        b = r.integers(-128, 128, (32, 16)).astype(np.int8)
        return [a, b, C.int32_spread(256, 271).reshape(16, 16), np.zeros((16, 16), np.int32)]

    def ibody():
        z = _z()
        a = ti.load(ti.param(I8, 0), z, [16, 32])
        b = ti.load(ti.param(I8, 1), z, [32, 16])
        c = ti.load(ti.param(I32, 2), z, [16, 16])
        ti.store(ti.param(I32, 3), z, ti.mmai(a, b, c))

    def iexpect(args, launch=0):
        a, b, c = (x.astype(np.int64) for x in args[:3])
        return {3: ((a @ b + c + 2**31) % 2**32 - 2**31).astype(np.int32)}

    cases.append(Case("mmai", (ti.ByPtr(I8), ti.ByPtr(I8), ti.ByPtr(I32), ti.ByPtr(I32)), ibody, iargs,
                      (Out(3, EXACT),), expect=iexpect))
    for fmt in (F16, BF16, ti.TF32):
        store = F32 if fmt is ti.TF32 else fmt

        def fargs(fmt=fmt, store=store):
            r = C.rng(272)
            a = ti.dtypes.to_format(fmt, r.uniform(-2, 2, (32, 16)))
            b = ti.dtypes.to_format(fmt, r.uniform(-2, 2, (16, 32)))
            return [a.astype(_np(store)), b.astype(_np(store)), r.uniform(-1, 1, (32, 32)).astype(np.float32),
                    np.zeros((32, 32), np.float32)]

        def fbody(fmt=fmt, store=store):
            z = _z()
            a = ti.load(ti.param(store, 0), z, [32, 16])
            b = ti.load(ti.param(store, 1), z, [16, 32])
            if fmt is ti.TF32:
                a, b = ti.float_to_float(a, ti.TF32), ti.float_to_float(b, ti.TF32)
            c = ti.load(ti.param(F32, 2), z, [32, 32])
            ti.store(ti.param(F32, 3), z, ti.mma(a, b, c))

        def fexpect(args, launch=0):
            a, b, c = (_f64(x) for x in args[:3])
            return {3: (a @ b + c).astype(np.float32)}

        def fbound(args):
            a, b, c = (np.abs(_f64(x)) for x in args[:3])
            return (2 * 17 * U32 * (a @ b + c)).ravel() + 1e-30

        cases.append(Case(f"mma_{fmt.name}", (ti.ByPtr(store), ti.ByPtr(store), ti.ByPtr(F32), ti.ByPtr(F32)), fbody,
                          fargs, (Out(3, Judge("tol"), bound=fbound),), expect=fexpect))
    return Family("mma", "mixed", "mmai exact (i8 x i8 into i32, both SIGNED, -128 rows included); mma over "
                  "f16, bf16 and tf32 operands into f32 within 2 (k + 1) u sum|a||b| + |c| (u = 2^-24): products "
                  "of the operands are exact in f32, the sum's order is not specified", ("mmaf", "mmai"), cases)


# ---- the registry --------------------------------------------------------------------------------
