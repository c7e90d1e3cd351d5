"""The device as an effect: the ``Dev`` operations a handler answers, and the handler stack.

A surface function never reaches the device directly: it calls ``dev().t_xxx(...)`` on the
handler in scope. The recorder (``record.Recorder``) answers by growing a TileProg; the call
tracer and test handlers answer other ways. Every ``t_*`` operation of the spec is a method here,
so a handler that does not answer one says so by name.

``called(name)`` brackets a public function with ``t_call_enter`` / ``t_call_exit`` and ``body()``
brackets a closure a public function runs (a loop's body, a reduction's) with ``t_body_enter`` /
``t_body_exit``: that is how a handler can tell the kernel's own calls from the library's calls
on its behalf.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from .errors import TileirError

_F = TypeVar("_F", bound=Callable[..., Any])  # a public tile operation, its signature kept

_HANDLER: ContextVar = ContextVar("tileir_handler", default=None)


class Dev:
    """Every operation of the spec's ``effect Dev``. A handler overrides what it answers; the
    call and body markers answer nothing unless a handler cares."""

    def _unhandled(self, name: str) -> TileirError:
        return TileirError(f"the handler {type(self).__name__} does not answer {name}")

    def t_call_enter(self, name):
        return None

    def t_call_exit(self):
        return None

    def t_body_enter(self):
        return None

    def t_body_exit(self):
        return None

    def t_block_id(self, axis):
        """t_block_id(axis: Int) -> Int"""
        raise self._unhandled("t_block_id")

    def t_load(self, param, dtype, base, shape, strides, mask, pad, hints=()):
        """t_load(param: Int, dtype: String, base: Int, shape: List[Int], strides: List[Int], mask: Option[Int], pad: Option[Int], hints: List[(String, List[(String, Int)])]) -> Int"""
        raise self._unhandled("t_load")

    def t_store(self, param, dtype, base, shape, strides, v, mask, hints=()):
        """t_store(param: Int, dtype: String, base: Int, shape: List[Int], strides: List[Int], v: Int, mask: Option[Int], hints: List[(String, List[(String, Int)])]) -> Unit"""
        raise self._unhandled("t_store")

    def t_gather(self, param, dtype, index, shape, mask=None, pad=None):
        """t_gather(param: Int, dtype: String, index: Int, shape: List[Int], mask: Option[Int], pad: Option[Int]) -> Int"""
        raise self._unhandled("t_gather")

    def t_scatter(self, param, dtype, index, shape, v, mask=None):
        """t_scatter(param: Int, dtype: String, index: Int, shape: List[Int], v: Int, mask: Option[Int]) -> Unit"""
        raise self._unhandled("t_scatter")

    def t_atomic_rmw(self, param, dtype, mode, index, shape, v, mask=None, order="relaxed"):
        """t_atomic_rmw(param: Int, dtype: String, mode: String, index: Int, shape: List[Int], v: Int, mask: Option[Int]) -> Int
        (order: the memory ordering, relaxed | acquire | release | acq_rel; an addition to the spec's signature)"""
        raise self._unhandled("t_atomic_rmw")

    def t_atomic_cas(self, param, dtype, index, shape, cmp, v, mask=None):
        """t_atomic_cas(param: Int, dtype: String, index: Int, shape: List[Int], cmp: Int, v: Int, mask: Option[Int]) -> Int"""
        raise self._unhandled("t_atomic_cas")

    def t_scalar(self, param, dtype):
        """t_scalar(param: Int, dtype: String) -> Int"""
        raise self._unhandled("t_scalar")

    def t_constf(self, dtype, shape, value):
        """t_constf(dtype: String, shape: List[Int], value: Float) -> Int"""
        raise self._unhandled("t_constf")

    def t_consti(self, dtype, shape, value):
        """t_consti(dtype: String, shape: List[Int], value: Int) -> Int"""
        raise self._unhandled("t_consti")

    def t_iota(self, n):
        """t_iota(n: Int) -> Int"""
        raise self._unhandled("t_iota")

    def t_lanes(self, base, shape, strides):
        """t_lanes(base: Int, shape: List[Int], strides: List[Int]) -> Int"""
        raise self._unhandled("t_lanes")

    def t_unaryf(self, op, dtype, shape, a, rounding="", ftz=False):
        """t_unaryf(op: String, dtype: String, shape: List[Int], a: Int) -> Int

        Beyond the spec, the op's attributes: ``rounding`` (the dialect's rounding mode by name,
        '' for the op's default) and ``ftz`` (flush_to_zero)."""
        raise self._unhandled("t_unaryf")

    def t_binaryf(self, op, dtype, shape, a, b, rounding="", ftz=False, propagate_nan=False):
        """t_binaryf(op: String, dtype: String, shape: List[Int], a: Int, b: Int) -> Int

        Beyond the spec, the op's attributes: ``rounding`` (the dialect's rounding mode by name,
        '' for the op's default), ``ftz`` (flush_to_zero) and ``propagate_nan`` (maxf / minf)."""
        raise self._unhandled("t_binaryf")

    def t_fma(self, dtype, shape, a, b, c, rounding="nearest_even", ftz=False):
        """t_fma(dtype: String, shape: List[Int], a: Int, b: Int, c: Int) -> Int

        Beyond the spec, the op's attributes: ``rounding`` (the dialect's rounding mode by name)
        and ``ftz`` (flush_to_zero)."""
        raise self._unhandled("t_fma")

    def t_mmaf(self, dtype, acc, m, k, n, a, b, c):
        """t_mmaf(dtype: String, acc: String, m: Int, k: Int, n: Int, a: Int, b: Int, c: Int) -> Int"""
        raise self._unhandled("t_mmaf")

    def t_mmaf_scaled(self, dtype, scale, dims, a, b, c, sa, sb):
        """t_mmaf_scaled(dtype: String, scale: String, dims: List[Int], a: Int, b: Int, c: Int, sa: Int, sb: Int) -> Int"""
        raise self._unhandled("t_mmaf_scaled")

    def t_mmai(self, m, k, n, a, b, c):
        """t_mmai(m: Int, k: Int, n: Int, a: Int, b: Int, c: Int) -> Int"""
        raise self._unhandled("t_mmai")

    def t_cmpf(self, pred, dtype, shape, a, b, ordered=True):
        """t_cmpf(pred: String, dtype: String, shape: List[Int], a: Int, b: Int) -> Int

        Beyond the spec: ``ordered`` (false: the unordered predicate, true on a NaN operand)."""
        raise self._unhandled("t_cmpf")

    def t_cmpi(self, pred, shape, a, b, signed=True, dtype="i32"):
        """t_cmpi(pred: String, shape: List[Int], a: Int, b: Int) -> Int

        Beyond the spec: ``signed`` (the comparison's signedness) and ``dtype`` (the operands'
        integer format; the spec's form compares i32)."""
        raise self._unhandled("t_cmpi")

    def t_unaryi(self, op, dtype, shape, a, overflow="none"):
        """t_unaryi(op: String, dtype: String, shape: List[Int], a: Int) -> Int

        Beyond the spec: ``overflow`` (the dialect's overflow attribute by name; "none" wraps)."""
        raise self._unhandled("t_unaryi")

    def t_binaryi(self, op, dtype, shape, a, b, overflow="none"):
        """t_binaryi(op: String, dtype: String, shape: List[Int], a: Int, b: Int) -> Int

        Beyond the spec: ``overflow`` (the dialect's overflow attribute by name; "none" wraps)."""
        raise self._unhandled("t_binaryi")

    def t_convert(self, op, from_, to, shape, a):
        """t_convert(op: String, from: String, to: String, shape: List[Int], a: Int) -> Int"""
        raise self._unhandled("t_convert")

    def t_repack(self, op, from_, to, shape, a):
        """t_repack(op: String, from: String, to: String, shape: List[Int], a: Int) -> Int"""
        raise self._unhandled("t_repack")

    def t_select(self, dtype, shape, cond, a, b):
        """t_select(dtype: String, shape: List[Int], cond: Int, a: Int, b: Int) -> Int"""
        raise self._unhandled("t_select")

    def t_idx_const(self, value):
        """t_idx_const(value: Int) -> Int"""
        raise self._unhandled("t_idx_const")

    def t_idx_add(self, a, b):
        """t_idx_add(a: Int, b: Int) -> Int"""
        raise self._unhandled("t_idx_add")

    def t_idx_mul(self, a, b):
        """t_idx_mul(a: Int, b: Int) -> Int"""
        raise self._unhandled("t_idx_mul")

    def t_loop_begin(self, lower, upper, step, unsigned, inits):
        """t_loop_begin(lower: Int, upper: Int, step: Int, unsigned: Bool, inits: List[Int]) -> (Int, List[Int])"""
        raise self._unhandled("t_loop_begin")

    def t_loop_end(self, outs):
        """t_loop_end(outs: List[Int]) -> List[Int]"""
        raise self._unhandled("t_loop_end")

    def t_while_begin(self, inits):
        """t_while_begin(inits: List[Int]) -> List[Int]"""
        raise self._unhandled("t_while_begin")

    def t_while_end(self, cond, outs):
        """t_while_end(cond: Int, outs: List[Int]) -> List[Int]"""
        raise self._unhandled("t_while_end")

    def t_return_if(self, cond):
        """t_return_if(cond: Int) -> Unit"""
        raise self._unhandled("t_return_if")

    def t_spread(self, dtype, shape, src):
        """t_spread(dtype: String, shape: List[Int], src: Int) -> Int"""
        raise self._unhandled("t_spread")

    def t_reduce_begin(self, dim, shape, identities, operands):
        """t_reduce_begin(dim: Int, shape: List[Int], identities: List[RedId], operands: List[Int]) -> List[Int]"""
        raise self._unhandled("t_reduce_begin")

    def t_reduce_end(self, yields):
        """t_reduce_end(yields: List[Int]) -> List[Int]"""
        raise self._unhandled("t_reduce_end")

    def t_scan_begin(self, dim, reverse, shape, identities, operands):
        """t_scan_begin(dim: Int, reverse: Bool, shape: List[Int], identities: List[RedId], operands: List[Int]) -> List[Int]"""
        raise self._unhandled("t_scan_begin")

    def t_scan_end(self, yields):
        """t_scan_end(yields: List[Int]) -> List[Int]"""
        raise self._unhandled("t_scan_end")

    def t_if_begin(self, cond):
        """t_if_begin(cond: Int) -> Unit"""
        raise self._unhandled("t_if_begin")

    def t_if_else(self, yields):
        """t_if_else(yields: List[Int]) -> Unit"""
        raise self._unhandled("t_if_else")

    def t_if_end(self, yields):
        """t_if_end(yields: List[Int]) -> List[Int]"""
        raise self._unhandled("t_if_end")

    def t_extract(self, dtype, from_, to, src, indices):
        """t_extract(dtype: String, from: List[Int], to: List[Int], src: Int, indices: List[Int]) -> Int"""
        raise self._unhandled("t_extract")

    def t_cat(self, dtype, dim, lhs_shape, rhs_shape, lhs, rhs):
        """t_cat(dtype: String, dim: Int, lhs_shape: List[Int], rhs_shape: List[Int], lhs: Int, rhs: Int) -> Int"""
        raise self._unhandled("t_cat")

    def t_permute(self, dtype, shape, perm, src):
        """t_permute(dtype: String, shape: List[Int], perm: List[Int], src: Int) -> Int"""
        raise self._unhandled("t_permute")

    def t_insert(self, dtype, sub, whole, src, dst, indices):
        """t_insert(dtype: String, sub: List[Int], whole: List[Int], src: Int, dst: Int, indices: List[Int]) -> Int"""
        raise self._unhandled("t_insert")

    def t_powi(self, dtype, exp_dtype, shape, a, n):
        """t_powi(dtype: String, exp_dtype: String, shape: List[Int], a: Int, n: Int) -> Int"""
        raise self._unhandled("t_powi")

    def t_num_blocks(self, axis):
        """t_num_blocks(axis: Int) -> Int"""
        raise self._unhandled("t_num_blocks")

    def t_extent_of(self, param, dim, blocks):
        """t_extent_of(param: Int, dim: Int, blocks: Bool) -> Int"""
        raise self._unhandled("t_extent_of")

    def t_carry_new(self, init):
        """t_carry_new(init: Int) -> Int"""
        raise self._unhandled("t_carry_new")

    def t_carry_get(self, c):
        """t_carry_get(c: Int) -> Int"""
        raise self._unhandled("t_carry_get")

    def t_carry_set(self, c, h):
        """t_carry_set(c: Int, h: Int) -> Unit"""
        raise self._unhandled("t_carry_set")

    def t_trial_begin(self):
        """t_trial_begin() -> Unit"""
        raise self._unhandled("t_trial_begin")

    def t_trial_end(self):
        """t_trial_end() -> List[Int]"""
        raise self._unhandled("t_trial_end")

    def t_tok_get(self):
        """t_tok_get() -> Int"""
        raise self._unhandled("t_tok_get")

    def t_tok_set(self, tok):
        """t_tok_set(tok: Int) -> Unit"""
        raise self._unhandled("t_tok_set")

    def t_tok_join(self, toks):
        """t_tok_join(toks: List[Int]) -> Int"""
        raise self._unhandled("t_tok_join")

    def t_shape_of(self, h):
        """t_shape_of(h: Int) -> (String, List[Int])"""
        raise self._unhandled("t_shape_of")

    def t_ptrs(self, param, dtype, shape):
        """t_ptrs(param: Int, dtype: String, shape: List[Int]) -> Int"""
        raise self._unhandled("t_ptrs")

    def t_ptr_offset(self, dtype, shape, ptrs, offs):
        """t_ptr_offset(dtype: String, shape: List[Int], ptrs: Int, offs: Int) -> Int"""
        raise self._unhandled("t_ptr_offset")

    def t_ptr_to_int(self, dtype, shape, ptrs):
        """t_ptr_to_int(dtype: String, shape: List[Int], ptrs: Int) -> Int"""
        raise self._unhandled("t_ptr_to_int")

    def t_int_to_ptr(self, dtype, shape, ints):
        """t_int_to_ptr(dtype: String, shape: List[Int], ints: Int) -> Int"""
        raise self._unhandled("t_int_to_ptr")

    def t_ptr_to_ptr(self, from_, to, shape, ptrs):
        """t_ptr_to_ptr(from: String, to: String, shape: List[Int], ptrs: Int) -> Int"""
        raise self._unhandled("t_ptr_to_ptr")

    def t_load_ptrs(self, dtype, shape, ptrs, mask=None, pad=None):
        """t_load_ptrs(dtype: String, shape: List[Int], ptrs: Int, mask: Option[Int], pad: Option[Int]) -> Int"""
        raise self._unhandled("t_load_ptrs")

    def t_assert(self, shape, cond, message):
        """t_assert(shape: List[Int], cond: Int, message: String) -> Unit"""
        raise self._unhandled("t_assert")

    def t_assume(self, pred, dtype, shape, src):
        """t_assume(pred: AssumePred, dtype: String, shape: List[Int], src: Int) -> Int"""
        raise self._unhandled("t_assume")

    def t_print(self, fmt, dtype, shape, args):
        """t_print(fmt: String, dtype: String, shape: List[Int], args: List[Int]) -> Unit"""
        raise self._unhandled("t_print")

    def t_token_only(self, op):
        """t_token_only(op: String) -> Unit"""
        raise self._unhandled("t_token_only")

    def t_store_ptrs(self, dtype, shape, ptrs, value, mask=None):
        """t_store_ptrs(dtype: String, shape: List[Int], ptrs: Int, value: Int, mask: Option[Int]) -> Unit"""
        raise self._unhandled("t_store_ptrs")

    def t_global(self, sym, dtype, values, align=0, is_private=False, constant=False):
        """t_global(sym: String, dtype: String, values: List[Float], align: Int, is_private: Bool, constant: Bool) -> Unit"""
        raise self._unhandled("t_global")

    def t_get_global(self, sym, dtype, shape):
        """t_get_global(sym: String, dtype: String, shape: List[Int]) -> Int"""
        raise self._unhandled("t_get_global")

    def t_alloca(self, dtype, num_elem, align, shared, shape):
        """t_alloca(dtype: String, num_elem: Int, align: Int, shared: Bool, shape: List[Int]) -> Int"""
        raise self._unhandled("t_alloca")

    def t_tensor_view(self, param, dtype, base, shape, strides, dyn_shape=(), dyn_strides=()):
        """t_tensor_view(param: Int, dtype: String, base: Int, shape: List[Int], strides: List[Int], dyn_shape: List[Int], dyn_strides: List[Int]) -> Int"""
        raise self._unhandled("t_tensor_view")

    def t_partition_view(self, dtype, view, tile_shape, dim_map, padding):
        """t_partition_view(dtype: String, view: Int, tile_shape: List[Int], dim_map: List[Int], padding: Padding) -> Int"""
        raise self._unhandled("t_partition_view")

    def t_strided_view(self, dtype, view, tile_shape, traversal, dim_map, padding):
        """t_strided_view(dtype: String, view: Int, tile_shape: List[Int], traversal: List[Int], dim_map: List[Int], padding: Padding) -> Int"""
        raise self._unhandled("t_strided_view")

    def t_gather_view(self, dtype, view, tile_shape, sparse_dim, padding):
        """t_gather_view(dtype: String, view: Int, tile_shape: List[Int], sparse_dim: Int, padding: Padding) -> Int"""
        raise self._unhandled("t_gather_view")

    def t_atomic_red_view(self, dtype, view, indices, mode, scope, value):
        """t_atomic_red_view(dtype: String, view: Int, indices: List[Int], mode: String, scope: String, value: Int) -> Unit"""
        raise self._unhandled("t_atomic_red_view")

    def t_load_view(self, dtype, view, indices, inbounds=()):
        """t_load_view(dtype: String, view: Int, indices: List[Int], inbounds: List[Bool]) -> Int"""
        raise self._unhandled("t_load_view")

    def t_store_view(self, dtype, view, indices, value, inbounds=()):
        """t_store_view(dtype: String, view: Int, indices: List[Int], value: Int, inbounds: List[Bool]) -> Unit"""
        raise self._unhandled("t_store_view")

    def t_tensor_shape(self, view, dim):
        """t_tensor_shape(view: Int, dim: Int) -> Int"""
        raise self._unhandled("t_tensor_shape")

    def t_index_space_shape(self, view, dim):
        """t_index_space_shape(view: Int, dim: Int) -> Int"""
        raise self._unhandled("t_index_space_shape")

    def t_cell_view(self, param, dtype, free):
        """t_cell_view(param: Int, dtype: String, free: List[Int]) -> (Int, List[Int])"""
        raise self._unhandled("t_cell_view")

    def t_cell_fill(self, param, value):
        """t_cell_fill(param: Int, value: Float) -> Int"""
        raise self._unhandled("t_cell_fill")

    def t_sub_view(self, param, dtype, sub, at):
        """t_sub_view(param: Int, dtype: String, sub: List[Int], at: List[Int]) -> (Int, List[Int])"""
        raise self._unhandled("t_sub_view")

    def t_retile(self, param, dtype, extent, tile, pad):
        """t_retile(param: Int, dtype: String, extent: List[Int], tile: List[Int], pad: Padding) -> Int"""
        raise self._unhandled("t_retile")

    def t_array_view(self, param, dtype):
        """t_array_view(param: Int, dtype: String) -> Int

        Not in the spec (tileir's own): the tensor view of a parameter's whole declared array,
        with the run-time extents and strides the launch passes (``array_view``)."""
        raise self._unhandled("t_array_view")

    def t_reshape(self, dtype, from_, to, src):
        """t_reshape(dtype: String, from: List[Int], to: List[Int], src: Int) -> Int"""
        raise self._unhandled("t_reshape")

    def t_broadcast(self, dtype, from_, to, src):
        """t_broadcast(dtype: String, from: List[Int], to: List[Int], src: Int) -> Int"""
        raise self._unhandled("t_broadcast")






def dev() -> Dev:
    """The handler in scope; a surface function called outside a kernel is refused."""
    h = _HANDLER.get()
    if h is None:
        raise TileirError("a tile operation was called outside a kernel; call it from a function "
                          "being recorded (a @tileir.kernel, or tileir.trace_kernel's body)")
    return h


def current():
    """The handler in scope, or None."""
    return _HANDLER.get()


@contextmanager
def handling(handler: Dev):
    """Run the enclosed code with ``handler`` answering every tile operation."""
    token = _HANDLER.set(handler)
    try:
        yield handler
    finally:
        _HANDLER.reset(token)


@contextmanager
def called(name: str):
    d = dev()
    d.t_call_enter(name)
    try:
        yield d
    finally:
        d.t_call_exit()


@contextmanager
def body():
    d = dev()
    d.t_body_enter()
    try:
        yield d
    finally:
        d.t_body_exit()


def public(fn: _F) -> _F:
    """Mark ``fn`` a public tile operation: its calls are bracketed by t_call_enter/exit (to a type
    checker, ``fn`` itself: its signature is what a user's editor shows)."""
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        d = _HANDLER.get()
        if d is None:
            raise TileirError(f"{name} was called outside a kernel; tile operations run while a kernel "
                              "is being recorded (inside a @tileir.kernel function)")
        d.t_call_enter(name)
        try:
            return fn(*args, **kwargs)
        finally:
            d.t_call_exit()

    return wrapper  # type: ignore[return-value]  # (functools.wraps: fn's signature)
