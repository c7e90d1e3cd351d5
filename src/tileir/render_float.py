"""Float constants as MLIR prints them: an exact emulation of ``llvm::APFloat::toString`` and of
the printer's choice between the short ``%e``-like form, the longer form and the hex bit pattern.

MLIR prints a float attribute with 6 digits in exponent form when that text reads back to the
same value, else APFloat's "natural precision" text when it has a '.', else the bit pattern as a
C hex literal (inf, NaN, and integral values too long for the short form: f64 16777217 is
``0x4170000001000000``). APFloat's digits are not Python's: it first truncates the exact decimal
expansion to about the digits it needs (dropping, not rounding), then rounds half up on the next
digit -- tf32 0.0999755859375 prints ``9.997550e-02``. Everything here works on the bit pattern the
writer stores, so the text and the bytes always describe the same number.
"""

from __future__ import annotations

from fractions import Fraction

# name -> (precision incl. the hidden bit, exponent bits, special-value kind)
#   ieee: inf and NaN as IEEE 754; fn: no inf, NaN is all ones (f8E4M3FN); fnu: unsigned, no zero,
#   NaN 0xFF (f8E8M0FNU); finite: no inf, no NaN (f4E2M1FN).
FORMATS = {
    "f64": (53, 11, "ieee"), "f32": (24, 8, "ieee"), "tf32": (11, 8, "ieee"),
    "f16": (11, 5, "ieee"), "bf16": (8, 8, "ieee"), "f8E4M3FN": (4, 4, "fn"),
    "f8E5M2": (3, 5, "ieee"), "f8E8M0FNU": (1, 8, "fnu"), "f4E2M1FN": (2, 2, "finite"),
}


def width(dtype: str) -> int:
    p, e, kind = FORMATS[dtype]
    return (p - 1) + e + (0 if kind == "fnu" else 1)


def decode(dtype: str, bits: int):
    """The value of a pattern: ``("nan"|"inf", neg)`` or ``("num", neg, m, e)`` with value
    ``(-1)**neg * m * 2**e``."""
    p, ebits, kind = FORMATS[dtype]
    fbits = p - 1
    neg = 0 if kind == "fnu" else (bits >> (fbits + ebits)) & 1
    exp_field = (bits >> fbits) & ((1 << ebits) - 1)
    frac = bits & ((1 << fbits) - 1)
    all_ones = (1 << ebits) - 1
    if kind == "fnu":
        if exp_field == all_ones:
            return ("nan", 0)
        return ("num", 0, 1, exp_field - 127)
    bias = (1 << (ebits - 1)) - 1
    if kind == "ieee" and exp_field == all_ones:
        return ("inf", neg) if frac == 0 else ("nan", neg)
    if kind == "fn" and exp_field == all_ones and frac == (1 << fbits) - 1:
        return ("nan", neg)
    if exp_field == 0:
        return ("num", neg, frac, 1 - bias - fbits)
    return ("num", neg, frac | (1 << fbits), exp_field - bias - fbits)


def round_to_bits(dtype: str, q: Fraction, neg: bool):
    """``q`` (>= 0) rounded to the format, nearest even, as a pattern (None where the format
    cannot hold it: overflow in a format without infinity, a zero or a negative in
    f8E8M0FNU)."""
    p, ebits, kind = FORMATS[dtype]
    fbits = p - 1
    if kind == "fnu":
        if q == 0 or neg:
            return None
        e = q.numerator.bit_length() - q.denominator.bit_length()
        best = None
        for k in (e - 1, e, e + 1):
            if -127 <= k <= 127:
                d = abs(q - Fraction(2) ** k)
                if best is None or d < best[0] or (d == best[0] and k % 2 == 0):
                    best = (d, k)
        return None if best is None else best[1] + 127
    bias = (1 << (ebits - 1)) - 1
    emin = 1 - bias
    sign = (1 << (fbits + ebits)) if neg else 0
    if q == 0:
        return sign
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    e = max(e, emin)
    scaled = q / Fraction(2) ** (e - fbits)  # the significand in units of the last place
    m = scaled.numerator // scaled.denominator
    rem = scaled - m
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and m & 1):
        m += 1
    if m >> (fbits + 1):
        m >>= 1
        e += 1
    exp_field = 0 if m < (1 << fbits) else e + bias
    max_field = (1 << ebits) - (2 if kind == "ieee" else 1)
    if exp_field > max_field or (kind == "fn" and exp_field == max_field and (m & ((1 << fbits) - 1)) ==
                                 (1 << fbits) - 1):
        if kind == "ieee":
            return sign | (((1 << ebits) - 1) << fbits)
        return None
    return sign | (exp_field << fbits) | (m & ((1 << fbits) - 1))


def _adjust_int(sig: int, exp: int, precision: int):
    """APFloat's first cut: drop (truncating) the tens it can spare."""
    bits = sig.bit_length()
    required = (precision * 196 + 58) // 59
    if bits <= required:
        return sig, exp
    removable = (bits - required) * 59 // 196
    if not removable:
        return sig, exp
    return sig // 10 ** removable, exp + removable


def _adjust_digits(buf: list, exp: int, precision: int):
    """APFloat's second cut on the digit buffer (least significant digit first): round half up."""
    n = len(buf)
    if n <= precision:
        return buf, exp
    first = n - precision
    if buf[first - 1] < 5:
        while first < n and buf[first] == 0:
            first += 1
        return buf[first:], exp + first
    for i in range(first, n):
        if buf[i] == 9:
            first += 1
        else:
            buf[i] += 1
            break
    if first == n:
        return [1], exp + first
    return buf[first:], exp + first


def to_string(neg: bool, m: int, e: int, sem_precision: int, precision: int = 0, max_padding: int = 3,
              truncate_zero: bool = True) -> str:
    """``llvm::APFloat::toString`` of the value ``(-1)**neg * m * 2**e``."""
    out = "-" if neg else ""
    if m == 0:
        if not max_padding:
            if truncate_zero:
                return out + "0.0E+0"
            return out + "0." + "0" * max(precision, 1) + "e+00"
        return out + "0"
    if not precision:
        precision = 2 + sem_precision * 59 // 196
    tz = (m & -m).bit_length() - 1
    m >>= tz
    e += tz
    if e >= 0:
        sig, exp = m << e, 0
    else:
        sig, exp = m * 5 ** (-e), e
    sig, exp = _adjust_int(sig, exp, precision)
    buf = []
    in_trail = True
    while sig:
        sig, d = divmod(sig, 10)
        if in_trail and not d:
            exp += 1
        else:
            buf.append(d)
            in_trail = False
    buf, exp = _adjust_digits(buf, exp, precision)
    nd = len(buf)
    if not max_padding:
        scientific = True
    elif exp >= 0:
        scientific = exp > max_padding or nd + exp > precision
    else:
        msd = exp + nd - 1
        scientific = False if msd >= 0 else -msd > max_padding
    digits = [str(d) for d in reversed(buf)]  # most significant first
    if scientific:
        exp += nd - 1
        s = digits[0] + "."
        if nd == 1 and truncate_zero:
            s += "0"
        else:
            s += "".join(digits[1:])
        if not truncate_zero and precision > nd - 1:
            s += "0" * (precision - nd + 1)
        s += "E" if truncate_zero else "e"
        s += "+" if exp >= 0 else "-"
        ex = str(abs(exp))
        if not truncate_zero and len(ex) < 2:
            ex = "0" + ex
        return out + s + ex
    if exp >= 0:
        return out + "".join(digits) + "0" * exp
    whole = exp + nd
    if whole > 0:
        return out + "".join(digits[:whole]) + "." + "".join(digits[whole:])
    return out + "0." + "0" * (-whole) + "".join(digits)


def _parse_decimal(s: str):
    neg = s.startswith("-")
    return Fraction(s.lstrip("+-")), neg


def print_float(dtype: str, bits: int) -> str:
    """MLIR's ``printFloatValue`` of the pattern ``bits`` of format ``dtype``."""
    p = FORMATS[dtype][0]
    v = decode(dtype, bits)
    if v[0] == "num":
        _, neg, m, e = v
        short = to_string(bool(neg), m, e, p, 6, 0, False)
        q, qneg = _parse_decimal(short)
        if round_to_bits(dtype, q, qneg) == bits:
            return short
        long = to_string(bool(neg), m, e, p)
        if "." in long:
            return long
    return "0x" + format(bits, "X")
