"""The launch's fast path: one generated function that reads a call's torch tensors and numbers
straight into the launch's slot values, with every check the full path makes, in a few
comparisons -- or answers None, and the full path (``Launcher``'s, with its words) takes the call.

Why generated: a plain call of a three-tensor vadd spent 27 us on the H200 host through the
generic readers (sizes.values, the Launcher's per-argument checks, ctypes scalars), against 7 for
the bare cuLaunchKernel and 8.6 for torch's own add (bench/results/launch_overhead_h200.json,
2026-12-01); the text below is made once per call site from the plan and the parameter list.

The function answers ``(device, slots, values, claims)``: the GPU of the tensors, the 64-bit slot
value of every entry parameter (device pointers, integer and float scalars as their bit
patterns, then the hidden run-time sizes and strides), the hidden values, and the claims a launch
specialises on (``SizePlan.div16``).
"""

from __future__ import annotations

import struct
import sys

from ..sizes import ROW, SIZE_LIMIT, SPECIALISE_DIVISOR

_INT_BITS = {"i64": 64, "i32": 32, "i16": 16, "i8": 8}
# torch dtype names a pointer to each format may take (runtime/arrays.py's table, torch's spelling)
_TORCH_DTYPES = {
    "f64": ("float64",), "f32": ("float32",), "tf32": ("float32",), "f16": ("float16",), "bf16": ("bfloat16",),
    "f8E4M3FN": ("float8_e4m3fn",), "f8E5M2": ("float8_e5m2",), "i64": ("int64", "uint64"),
    "i32": ("int32", "uint32"), "i16": ("int16", "uint16"), "i8": ("int8", "uint8", "bool"),
    "i1": ("bool", "int8", "uint8"),
}


def _f32_bits(v: float) -> int:
    try:
        return struct.unpack("<I", struct.pack("<f", v))[0]
    except (OverflowError, struct.error):  # past f32's range: inf, as the full path's ctypes float packs it
        return 0x7F800000 if float(v) > 0 else 0xFF800000


def _f64_bits(v: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", float(v)))[0]


def reader(plan, params, n_user: int):
    """The generated reader for a kernel with ``params`` ((format, by pointer) per entry
    parameter: its own ``n_user`` then the hidden ones) and size ``plan``; None where torch is not
    loaded or a parameter's format has no fast packing (the full path serves those calls)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    scope: dict = {"T": torch.Tensor, "f32_bits": _f32_bits, "f64_bits": _f64_bits, "ROW": ROW}
    lines = ["def read(arrays):", f"    if len(arrays) != {n_user}:", "        return None"]
    lines += [f"    a{i} = arrays[{i}]" for i in range(n_user)]
    tensors = [i for i in range(n_user) if params[i][1]]
    conds, slots = [], [""] * len(params)
    if tensors:
        conds.append(" and ".join(f"isinstance(a{i}, T)" for i in tensors))
    for i in range(n_user):
        fmt, by_ptr = params[i]
        if by_ptr:
            names = _TORCH_DTYPES.get(fmt)
            if names is None:
                return None
            scope[f"D{i}"] = frozenset(getattr(torch, n) for n in names if hasattr(torch, n))
            conds.append(f"a{i}.dtype in D{i}")
            slots[i] = f"p{i}"
        elif fmt in _INT_BITS:
            bits = _INT_BITS[fmt]
            conds.append(f"type(a{i}) is int and {-(1 << (bits - 1))} <= a{i} < {1 << bits}")
            slots[i] = f"(a{i} & {(1 << bits) - 1})"
        elif fmt == "f32":
            conds.append(f"(type(a{i}) is float or (type(a{i}) is int and -2**1000 < a{i} < 2**1000))")
            slots[i] = f"f32_bits(a{i})"
        elif fmt == "f64":
            conds.append(f"(type(a{i}) is float or (type(a{i}) is int and -2**1000 < a{i} < 2**1000))")
            slots[i] = f"f64_bits(a{i})"
        elif fmt == "i1":
            conds.append(f"type(a{i}) is bool")
            slots[i] = f"int(a{i})"
        else:
            return None
    lines.append("    if not (" + " and ".join(conds or ["True"]) + "):\n        return None")
    for i in tensors:
        lines.append(f"    g{i} = a{i}.get_device()")
        lines.append(f"    p{i} = a{i}.data_ptr()")
    dev_conds = [f"g{tensors[0]} >= 0"] + [f"g{i} == g{tensors[0]}" for i in tensors[1:]] if tensors else []
    for i in tensors:
        if i not in plan.ranks:  # a buffer the kernel reads dense from its first element
            dev_conds.append(f"a{i}.is_contiguous() and p{i} % {SPECIALISE_DIVISOR} == 0")
    if dev_conds:
        lines.append("    if not (" + " and ".join(dev_conds) + "):\n        return None")
    # the run-time sizes and strides, as SizePlan.values reads and checks them
    ps = sorted(plan.ranks)
    lines += [f"    s{p} = a{p}.shape\n    t{p} = a{p}.stride()" for p in ps]
    size_conds = [f"len(s{p}) == {plan.ranks[p]}" for p in ps]
    outs = [""] * len(plan.hidden)
    for p, d, e in plan._fixed:
        size_conds.append(f"s{p}[{d}] == {e}")
    for k, reads in plan._sizes:
        p0, d0 = reads[0]
        outs[k] = f"s{p0}[{d0}]"
        size_conds.append(f"0 < s{p0}[{d0}] <= {SIZE_LIMIT}")
        size_conds += [f"s{p}[{d}] == s{p0}[{d0}]" for p, d in reads[1:]]
    size_conds += [f"s{p}[{d}] <= {t}" for p, d, t in plan.limits]
    for p in ps:
        size_conds.append(f"(s{p}[-1] == 1 or t{p}[-1] == 1)")
        size_conds += [f"s{p}[{d}] > 0" for d in range(plan.ranks[p])]
    for k, (p, d) in plan._strides:
        dense = "*".join(f"s{p}[{e}]" for e in range(d + 1, plan.ranks[p]))
        outs[k] = f"(t{p}[{d}] if s{p}[{d}] != 1 else {dense})"
        size_conds.append(f"0 < {outs[k]} <= {SIZE_LIMIT}")
    if size_conds:
        lines.append("    if not (" + " and ".join(size_conds) + "):\n        return None")
    lines.append("    values = [" + ", ".join(outs) + "]")
    # sizes.claim_of, inline: True, 8, 4 or False
    claims = [f"(True if values[{k}] % {SPECIALISE_DIVISOR} == 0 else (values[{k}] & -values[{k}] if "
              f"values[{k}] % 4 == 0 else False))" for k in plan.claim_slots]
    for i, k in enumerate(plan.claim_slots):  # SizePlan.claim: a row stride equal to its row's extent
        row = plan.row_of.get(k)
        if row is not None:
            extent = str(row) if isinstance(row, int) else f"values[{row[1]}]"
            rows = plan.rows_of.get(k, 2)
            many = str(rows) if isinstance(rows, int) else f"values[{rows[1]}]"
            claims[i] = f"((ROW, {claims[i]}) if values[{k}] == {extent} and {many} > 1 else {claims[i]})"
    claims += [f"p{p} % {SPECIALISE_DIVISOR} == 0" for p in plan.array_params]
    claims += [f"values[{k}]" for k in plan.exact_slots]
    slots[n_user:] = [f"values[{k}]" for k in range(len(plan.hidden))]
    device = f"g{tensors[0]}" if tensors else "0"
    lines.append(f"    return {device}, (" + "".join(sl + ", " for sl in slots) + "), values, (" +
                 "".join(c + ", " for c in claims) + ")")
    exec("\n".join(lines), scope)  # noqa: S102 - our own text, made from the plan's numbers
    return scope["read"]


__all__ = ["reader"]
