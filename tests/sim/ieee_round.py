"""Exact IEEE 754 rounding for test references: a rational value (`fractions.Fraction`)
rounded to nearest, ties to even, into binary16 or binary32 (IEEE 754 §4.3.1, §7.4
overflow to ±inf), returned as the format's bits. Independent of numpy and of the simulator:
the references of fused multiply-add, division and ldexp, whose one rounding a chain of
float operations would not reproduce."""

from __future__ import annotations

import math
from fractions import Fraction

FORMATS = {16: (10, 5), 32: (23, 8)}
"""bits → (fraction bits, exponent bits)."""


def round_bits(x: Fraction, bits: int, negative_zero: bool = False) -> int:
    """The binary`bits` encoding of `x` rounded to nearest even; `negative_zero` gives the
    sign of a zero result (an exact zero's sign is the caller's to decide)."""
    frac_bits, exp_bits = FORMATS[bits]
    bias = (1 << (exp_bits - 1)) - 1
    sign = 1 << (bits - 1)
    if x == 0:
        return sign if negative_zero else 0
    s = sign if x < 0 else 0
    a = abs(x)
    e = math.floor(math.log2(a.numerator) - math.log2(a.denominator))
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    e = max(e, 1 - bias)  # subnormals share the smallest normal exponent's quantum
    quantum = Fraction(2) ** (e - frac_bits)
    q, r = divmod(a, quantum)
    q = int(q)
    if r > quantum / 2 or (r == quantum / 2 and q & 1):
        q += 1
    # q counts quanta of 2**(e - frac_bits); q may have carried to 2**(frac_bits + 1)
    if q == 0:
        return s
    field_e = e + bias if q >= (1 << frac_bits) else 0
    if q >= (1 << (frac_bits + 1)):
        q >>= 1
        field_e += 1
    if field_e >= (1 << exp_bits) - 1:
        return s | (((1 << exp_bits) - 1) << frac_bits)  # overflow: ±inf
    return s | (field_e << frac_bits) | (q & ((1 << frac_bits) - 1))


def exact(bits_value: int, bits: int) -> Fraction:
    """The rational value of a finite binary`bits` encoding."""
    frac_bits, exp_bits = FORMATS[bits]
    bias = (1 << (exp_bits - 1)) - 1
    e = (bits_value >> frac_bits) & ((1 << exp_bits) - 1)
    f = bits_value & ((1 << frac_bits) - 1)
    v = Fraction(f, 1 << frac_bits) * Fraction(2) ** (1 - bias) if e == 0 else \
        (1 + Fraction(f, 1 << frac_bits)) * Fraction(2) ** (e - bias)
    return -v if bits_value >> (bits - 1) & 1 else v
