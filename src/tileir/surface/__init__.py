"""The typed public functions of tileir, by family. Every name here is the spec's."""

from .arith import *  # noqa: F401,F403
from .arith import (abs, add, add_i, add_i64, addi, atan2, bool_const, ceil, consti, cos, cosh, div, div_i, eq,  # noqa: F401
                    eq_i, eq_u, exp, exp2, f_const, floor, fma, full, ge, ge_i, ge_u, gt, gt_i, gt_u, i8_const,
                    i64_const, i_const, le, le_i, le_u, lit, log, log2, lt, lt_i, lt_u, max, max_i, min, min_i,
                    mul, mul_i, mulhi_i, muli, ne, ne_i, ne_u, neg, neg_i, abs_i, and_i, or_i, xor_i, overflow_name,
                    pow, rem_i, remf, rounding_name, rsqrt, select, shl_i, shli, shr_i, shr_u, shri, sin, sinh,
                    sqrt, sqrt_approx, sub, sub_i, subi, tan, tanh)
from .control import By, DRange, One, carry, d_if, d_range, get, set  # noqa: F401
from .convert import (bits_to_float, bits_to_int, ext_i4, ext_u4, ext_u8, float_to_float, float_to_int,  # noqa: F401
                      int_to_float, int_to_mask, mask_to_int, to, trunc_i4, trunc_u8)
from .index import (and_mask, arange, as_idx, axis_mask, axis_strides, block_id, coord, idx_add, idx_as_tile,  # noqa: F401
                    idx_const, idx_div, idx_mul, idx_of, idx_rem, idx_sub, in_range, lanes, lanes_strided,
                    num_blocks, or_mask, permute, row_major, tail_mask, tile_at)
from .memory import load, param, param_dtype, position, scalar, store  # noqa: F401
from .mma import mma  # noqa: F401
from .operators import matmul_operator, operator, operator_un  # noqa: F401
from .reduce import d_reduce, d_scan, reduce_max, reduce_min, reduce_sum, scan_sum  # noqa: F401
from .shape import broadcast, permute_tile, reshape, transpose  # noqa: F401
