"""d_global, global_ptrs, visibility and alloca_ptrs: the host against numpy (globals kept across
runs of one program, allocas fresh each time), the bytes read back as render_kernel's text,
tileiras assembling them, and every recording refusal."""

import numpy as np
import pytest

import tileir as ti
from tests.kernelcheck import read_back, refused
from tileir import F16, F32, F64, I8, I32, TileirError, ir
from tileir.families.globals import host_globals
from tileir.ref import run_host

SM = ("sm_90", "sm_80")


def refusal(body, params=(ti.ByPtr(F32),)) -> TileirError:
    return refused(body, params)


def _counter():
    o = ti.param(F32, 0)
    ti.d_global("table", F32, [0.1, 2.5, -0.0, 7.0])
    ti.d_global("hits", I32, [0], align=16)
    ti.d_global("ro", F16, [1.0, 2.0], visibility=ti.Private, constant=True)
    t = ti.ptr_offset(ti.global_ptrs("table", F32, [4]), ti.arange(4))
    ti.store(o, ti.tile_at(ti.block_id(0), 4), ti.load_ptrs(t))
    h = ti.global_ptrs("hits", I32, [])
    ti.store_ptrs(h, ti.addi(ti.load_ptrs(h), ti.i_const(1)))  # blocks run in order on the host
    ro = ti.ptr_offset(ti.global_ptrs("ro", F16, [2]), ti.arange(2))
    ti.store_ptrs(t, ti.load_ptrs(t) + ti.reduce_sum(ti.to(ti.load_ptrs(ro), F32)))


def test_globals_live_across_blocks_and_runs(disasm):
    prog = ti.trace_kernel("counter", (ti.ByPtr(F32),), _counter)
    out = np.zeros(8, np.float32)
    k, _ = read_back(prog, [out], grid=(2,), disasm=disasm, targets=SM)
    table = np.array([0.1, 2.5, -0.0, 7.0], np.float32)
    assert np.array_equal(out, np.concatenate([table, table + 3]))
    g = host_globals(prog)
    assert g["hits"][0] == 2 and np.array_equal(g["table"], table + 6)
    run_host(prog, [out], (1,))  # a second launch of the same module reads what the first wrote
    assert g["hits"][0] == 3 and np.array_equal(out[:4], table + 6)
    assert [gl.sym for gl in k.globals] == ["table", "hits", "ro"]
    assert k.globals[1].align == 16 and k.globals[2].private and k.globals[2].constant
    assert k.globals[0].values[0] == float(np.float32(0.1))  # rounded to the format where it is made
    assert sum(isinstance(x, ir.GetGlobalPtr) for x in k.body) == 3
    assert ti.visibility_name(ti.Public) == "public" and ti.visibility_name(ti.Private) == "private"
    assert "global private constant @ro" in ti.render_kernel(k)
    with pytest.raises(TileirError, match="13.3"):
        ti.encode_kernel(k, "13.2")  # the Global record's visibility and constant fields came at 13.3


def test_alloca_is_fresh_scratch_each_time(disasm):
    src = np.arange(32, dtype=np.float32)
    out = np.zeros(64, np.float32)

    def body():
        s, o = ti.param(F32, 0), ti.param(F32, 1)
        base = ti.tile_at(ti.block_id(0), 32)
        a = ti.ptr_offset(ti.alloca_ptrs(F32, 32, 16, []), ti.arange(32))
        before = ti.load_ptrs(a)  # the host's scratch starts at zero (the device's is undefined)
        ti.store_ptrs(a, ti.load(s, ti.idx_const(0), [32]) + before)
        b2 = ti.alloca_ptrs(F32, 32, 16, [32], shared=True)
        ti.store_ptrs(ti.ptr_offset(b2, ti.subi(ti.i_const(31), ti.arange(32))), ti.load_ptrs(a))  # a region of its own
        ti.store(o, base, ti.load_ptrs(ti.ptr_offset(b2, ti.arange(32))))
        for _ in ti.d_range(0, 2):
            b = ti.alloca_ptrs(I8, 4, 1, [4])  # inside a loop: fresh each iteration
            ti.store_ptrs(ti.ptr_offset(b, ti.arange(4)), ti.consti(I8, 3))

    k, _ = read_back(ti.trace_kernel("k", (ti.ByPtr(F32), ti.ByPtr(F32)), body), [src, out], grid=(2,),
                     disasm=disasm, targets=SM)
    assert np.array_equal(out, np.concatenate([src[::-1], src[::-1]]))
    allocas = [x for x in k.body if isinstance(x, ir.AllocaPtr)]
    assert [(a.num_elem, a.align, a.shared) for a in allocas] == [(32, 16, False), (32, 16, True)]


def test_store_through_a_global_orders_on_its_own_token():
    def body():
        ti.d_global("g", F64, [1.0, 2.0])
        p = ti.ptr_offset(ti.global_ptrs("g", F64, [2]), ti.arange(2))
        ti.store_ptrs(p, ti.load_ptrs(p) * 2.0)
        ti.store_ptrs(p, ti.load_ptrs(p) + 1.0)

    prog = ti.trace_kernel("k", (), body)
    k, _ = read_back(prog, [])
    loads = [x for x in k.body if isinstance(x, ir.LoadPtr)]
    stores = [x for x in k.body if isinstance(x, ir.StorePtr)]
    assert loads[1].tok_in == ir.Val(stores[0].tok_out)
    assert np.array_equal(host_globals(prog)["g"], [3.0, 5.0])


def test_global_refusals():
    def in_loop():
        for _ in ti.d_range(0, 2):
            ti.d_global("g", F32, [1.0])

    cases = [
        (in_loop, "inside a region", "top of the kernel"),
        (lambda: ti.d_if(ti.bool_const(True), lambda: ti.d_global("g", F32, [1.0])), "inside a region", ""),
        (lambda: (ti.d_global("g", F32, [1.0]), ti.d_global("g", F32, [2.0])), "declared twice", ""),
        (lambda: ti.global_ptrs("nope", F32, [4]), "no d_global declared", "d_global('nope'"),
        (lambda: (ti.d_global("g", I32, [1]), ti.global_ptrs("g", F32, [4])), "holds i32", "ptr_to_ptr"),
        (lambda: ti.d_global("g", F32, []), "no values", ""),
        (lambda: ti.d_global("g", I32, [1.5]), "not a whole number", ""),
        (lambda: ti.d_global("1x", F32, [1.0]), "symbol", ""),
        (lambda: ti.d_global("k", F32, [1.0]), "kernel's own name", ""),
        (lambda: ti.d_global("g", F32, [1.0], align=3), "power of two", ""),
        (lambda: ti.d_global("g", ti.I4, [1]), "sub-byte", ""),
        (lambda: ti.d_global("g", F32, [1.0], visibility="private"), "Public or Private", ""),
        (lambda: (ti.d_global("g", F32, [1.0], constant=True),
                  ti.store_ptrs(ti.global_ptrs("g", F32, []), ti.f_const(F32, 2.0))), "constant global", ""),
        (lambda: ti.alloca_ptrs(F32, 16, 2, [4]), "at least the natural size of f32 (4 bytes)", "align=16"),
        (lambda: ti.alloca_ptrs(F64, 16, 4, [4]), "(8 bytes)", ""),
        (lambda: ti.alloca_ptrs(I8, 16, 3, [4]), "non-zero power of two", ""),
        (lambda: ti.alloca_ptrs(I8, 16, 0, [4]), "non-zero power of two", ""),
        (lambda: ti.alloca_ptrs(F32, 0, 16, [4]), "at least one", ""),
        (lambda: ti.alloca_ptrs(F32, 16, 16, [3]), "powers of two", ""),
    ]
    for body, phrase, fix in cases:
        e = refusal(body)
        assert phrase in str(e) and fix in e.fix, (phrase, str(e), e.fix)
    assert "(d_global)" in str(refusal(cases[2][0])) and "(alloca_ptrs)" in str(refusal(cases[13][0]))
