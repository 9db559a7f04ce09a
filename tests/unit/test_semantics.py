"""Operator, method and cast semantics (rgpu_fuzz.lang.semantics).

Every expected value is computed by hand from the Rust reference (release semantics: wrapping
arithmetic, masked shifts, saturating float→int casts) or from IEEE 754 rules, and the
derivation is written next to it; none is copied from the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.lang.ast import BinOp, UnOp
from rgpu_fuzz.lang.semantics import binary, cast, from_bits, method, to_bits, trap_lanes, unary
from rgpu_fuzz.model.scalars import Scalar as S


def arr(values: list, ty: S) -> np.ndarray:
    return np.array(values, dtype=ty.dtype)


def f32(x: float) -> np.float32:
    return np.float32(x)


def bits32(a: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(a, np.float32).view(np.uint32)]


def bits64(a: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(a, np.float64).view(np.uint64)]


# ---------------------------------------------------------------- integer arithmetic


def test_add_sub_mul_wrap_modulo_2_pow_bits() -> None:
    # i8: 127 + 1 = 128 ≡ -128 (mod 256); -128 - 1 ≡ 127; 16 * 16 = 256 ≡ 0; 100*3 = 300 ≡ 44
    a = arr([127, -128, 16, 100], S.I8)
    b = arr([1, 1, 16, 3], S.I8)
    assert binary(BinOp.ADD, S.I8, a, b).tolist() == [-128, -127, 32, 103]
    assert binary(BinOp.SUB, S.I8, a, b).tolist() == [126, 127, 0, 97]
    assert binary(BinOp.MUL, S.I8, a, b).tolist() == [127, -128, 0, 44]
    # u64: MAX + 1 = 0; 0 - 1 = MAX; 2**63 * 2 = 2**64 ≡ 0
    u = arr([2**64 - 1, 0, 2**63], S.U64)
    v = arr([1, 1, 2], S.U64)
    assert binary(BinOp.ADD, S.U64, u, v).tolist() == [0, 1, 2**63 + 2]
    assert binary(BinOp.SUB, S.U64, u, v).tolist() == [2**64 - 2, 2**64 - 1, 2**63 - 2]
    assert binary(BinOp.MUL, S.U64, u, v).tolist() == [2**64 - 1, 0, 0]


def test_i64_mul_wraps_signed() -> None:
    # i64::MAX * 2 = 2**64 - 2 ≡ -2; i64::MIN * -1 ≡ MIN
    a = arr([2**63 - 1, -(2**63)], S.I64)
    b = arr([2, -1], S.I64)
    assert binary(BinOp.MUL, S.I64, a, b).tolist() == [-2, -(2**63)]


def test_unary_neg_and_not() -> None:
    # Rust release: -i32::MIN == i32::MIN; !0i32 == -1; !0u8 == 255; !true == false
    assert unary(UnOp.NEG, S.I32, arr([-(2**31), 5, 0], S.I32)).tolist() == [-(2**31), -5, 0]
    assert unary(UnOp.NOT, S.I32, arr([0, -1, 5], S.I32)).tolist() == [-1, 0, -6]
    assert unary(UnOp.NOT, S.U8, arr([0, 0xF0], S.U8)).tolist() == [255, 0x0F]
    assert unary(UnOp.NOT, S.BOOL, arr([True, False], S.BOOL)).tolist() == [False, True]
    # IEEE negate flips the sign bit only: -(+0) is -0 (bits 0x80000000)
    assert bits32(unary(UnOp.NEG, S.F32, arr([0.0], S.F32))) == [0x8000_0000]


def test_div_rem_truncate_toward_zero() -> None:
    # Rust: -7 / 2 == -3 and -7 % 2 == -1 (remainder takes the dividend's sign)
    a = arr([-7, 7, -7, 7, -(2**31), 0], S.I32)
    b = arr([2, -2, -2, 2, 2, 5], S.I32)
    assert binary(BinOp.DIV, S.I32, a, b).tolist() == [-3, -3, 3, 3, -(2**30), 0]
    assert binary(BinOp.REM, S.I32, a, b).tolist() == [-1, 1, -1, 1, 0, 0]
    u = arr([2**64 - 1, 10], S.U64)
    w = arr([2, 3], S.U64)
    assert binary(BinOp.DIV, S.U64, u, w).tolist() == [2**63 - 1, 3]
    assert binary(BinOp.REM, S.U64, u, w).tolist() == [1, 1]


def test_trap_lanes_for_division() -> None:
    a = arr([1, -128, -128, 5], S.I8)
    b = arr([0, -1, 1, 0], S.I8)
    for op in ("/", "%"):
        zero, overflow = trap_lanes(op, S.I8, a, b)
        assert zero.tolist() == [True, False, False, True]
        assert overflow.tolist() == [False, True, False, False]
    for op in ("wrapping_div", "wrapping_rem"):
        zero, overflow = trap_lanes(op, S.I8, a, b)
        assert zero.tolist() == [True, False, False, True]
        assert overflow.tolist() == [False, False, False, False]
    # unsigned: no overflow case at all
    zero, overflow = trap_lanes("/", S.U8, arr([255], S.U8), arr([255], S.U8))
    assert zero.tolist() == [False] and overflow.tolist() == [False]
    # floats never trap (IEEE: 1/0 = inf)
    zero, overflow = trap_lanes("/", S.F32, arr([1.0], S.F32), arr([0.0], S.F32))
    assert not zero.any() and not overflow.any()


def test_trapping_lanes_do_not_raise_or_warn() -> None:
    # pytest runs with warnings as errors: a numpy divide warning would fail this test.
    a = arr([1, -128], S.I8)
    b = arr([0, -1], S.I8)
    binary(BinOp.DIV, S.I8, a, b)
    binary(BinOp.REM, S.I8, a, b)


def test_wrapping_div_rem_min_by_minus_one() -> None:
    # Rust docs: i8::MIN.wrapping_div(-1) == i8::MIN, i8::MIN.wrapping_rem(-1) == 0
    a, b = arr([-128, -7], S.I8), arr([-1, 2], S.I8)
    assert method("wrapping_div", S.I8, a, [b]).tolist() == [-128, -3]
    assert method("wrapping_rem", S.I8, a, [b]).tolist() == [0, -1]


# ---------------------------------------------------------------- shifts and bits


def test_shift_amount_is_masked_to_width() -> None:
    one = arr([1, 1, 1, 1, 1], S.U32)
    # 32 & 31 = 0, 33 & 31 = 1; -1i32 has bits 0xFFFF_FFFF, & 31 = 31
    amt = arr([0, 31, 32, 33, -1], S.I32)
    assert binary(BinOp.SHL, S.U32, one, amt).tolist() == [1, 2**31, 1, 2, 2**31]
    # a u8 amount on a u64 value: 200 & 63 = 8; on u8 value: 9 & 7 = 1
    assert binary(BinOp.SHL, S.U64, arr([1], S.U64), arr([200], S.U8)).tolist() == [256]
    assert binary(BinOp.SHL, S.U8, arr([0x81], S.U8), arr([9], S.U64)).tolist() == [0x02]
    # -1i8 amount on i16: bits 0xFF & 15 = 15
    assert binary(BinOp.SHL, S.I16, arr([1], S.I16), arr([-1], S.I8)).tolist() == [-32768]


def test_shr_is_arithmetic_on_signed_logical_on_unsigned() -> None:
    # -16 >> 2 == -4 (sign fill); -16 >> 33 masks to >> 1 == -8; MIN >> 31 == -1
    a = arr([-16, -16, -(2**31)], S.I32)
    assert binary(BinOp.SHR, S.I32, a, arr([2, 33, 31], S.U32)).tolist() == [-4, -8, -1]
    # 0x8000_0000u32 >> 31 == 1 (zero fill)
    assert binary(BinOp.SHR, S.U32, arr([2**31], S.U32), arr([31], S.U32)).tolist() == [1]
    assert method("wrapping_shr", S.I8, arr([-128], S.I8), [arr([15], S.U32)]).tolist() == [-1]
    assert method("wrapping_shl", S.U16, arr([3], S.U16), [arr([17], S.U32)]).tolist() == [6]


def test_rotate() -> None:
    # 0x81u8.rotate_left(1) = 0x03; rotate_right(1) = 0xC0; by 8 (≡ 0) unchanged; by 9 ≡ 1
    a = arr([0x81, 0x81, 0x81, 0x81], S.U8)
    n = arr([1, 0, 8, 9], S.U32)
    assert method("rotate_left", S.U8, a, [n]).tolist() == [0x03, 0x81, 0x81, 0x03]
    assert method("rotate_right", S.U8, a, [n]).tolist() == [0xC0, 0x81, 0x81, 0xC0]
    # i32: -2 = 0xFFFF_FFFE rotated left by 4 = 0xFFFF_FFEF = -17
    assert method("rotate_left", S.I32, arr([-2], S.I32), [arr([4], S.U32)]).tolist() == [-17]
    assert method("rotate_right", S.U64, arr([1], S.U64), [arr([1], S.U32)]).tolist() == [2**63]


def test_bit_counts() -> None:
    v = arr([0, 1, -1, -(2**31), 0x00F0_0000], S.I32)
    assert method("count_ones", S.I32, v, []).tolist() == [0, 1, 32, 1, 4]
    # leading_zeros(0) == trailing_zeros(0) == bits (Rust docs)
    assert method("leading_zeros", S.I32, v, []).tolist() == [32, 31, 0, 0, 8]
    assert method("trailing_zeros", S.I32, v, []).tolist() == [32, 0, 0, 31, 20]
    w = arr([0, 1, 2**63, 2**64 - 1], S.U64)
    assert method("leading_zeros", S.U64, w, []).tolist() == [64, 63, 0, 0]
    assert method("trailing_zeros", S.U64, w, []).tolist() == [64, 0, 63, 0]
    assert method("count_ones", S.U64, w, []).dtype == np.uint32
    assert method("leading_zeros", S.U8, arr([0, 0x10], S.U8), []).tolist() == [8, 3]


def test_int_min_max_abs() -> None:
    a, b = arr([-5, 3, -128], S.I8), arr([2, -7, 127], S.I8)
    assert method("min", S.I8, a, [b]).tolist() == [-5, -7, -128]
    assert method("max", S.I8, a, [b]).tolist() == [2, 3, 127]
    # MIN.abs() == MIN in release (wraps)
    assert method("abs", S.I8, arr([-128, -1, 5], S.I8), []).tolist() == [-128, 1, 5]
    assert method("wrapping_abs", S.I64, arr([-(2**63)], S.I64), []).tolist() == [-(2**63)]
    assert method("wrapping_neg", S.U32, arr([1, 0], S.U32), []).tolist() == [2**32 - 1, 0]
    assert method("wrapping_add", S.U8, arr([200], S.U8), [arr([100], S.U8)]).tolist() == [44]
    assert method("wrapping_sub", S.I16, arr([-32768], S.I16), [arr([1], S.I16)]).tolist() == [
        32767
    ]
    # 0x9e3779b9 * 3 = 0x1_DAA6_6D2B -> low 32 bits 0xDAA6_6D2B
    assert method("wrapping_mul", S.U32, arr([0x9E37_79B9], S.U32), [arr([3], S.U32)]).tolist() == [
        0xDAA6_6D2B
    ]


def test_bitwise_and_comparisons() -> None:
    a, b = arr([0b1100], S.U8), arr([0b1010], S.U8)
    assert binary(BinOp.AND, S.U8, a, b).tolist() == [0b1000]
    assert binary(BinOp.OR, S.U8, a, b).tolist() == [0b1110]
    assert binary(BinOp.XOR, S.U8, a, b).tolist() == [0b0110]
    t, f = arr([True, True, False], S.BOOL), arr([True, False, False], S.BOOL)
    assert binary(BinOp.LAND, S.BOOL, t, f).tolist() == [True, False, False]
    assert binary(BinOp.LOR, S.BOOL, t, f).tolist() == [True, True, False]
    assert binary(BinOp.XOR, S.BOOL, t, f).tolist() == [False, True, False]
    x, y = arr([-1, 2, 3], S.I32), arr([2, 2, -5], S.I32)
    assert binary(BinOp.LT, S.I32, x, y).tolist() == [True, False, False]
    assert binary(BinOp.GE, S.I32, x, y).tolist() == [False, True, True]
    # unsigned compare: 2**63 > 1 for u64 (not negative)
    assert binary(BinOp.GT, S.U64, arr([2**63], S.U64), arr([1], S.U64)).tolist() == [True]


def test_float_comparisons_follow_ieee() -> None:
    nan = arr([np.nan, 0.0], S.F64)
    other = arr([np.nan, -0.0], S.F64)
    # NaN is unordered: == false, != true; +0 == -0
    assert binary(BinOp.EQ, S.F64, nan, other).tolist() == [False, True]
    assert binary(BinOp.NE, S.F64, nan, other).tolist() == [True, False]
    assert binary(BinOp.LE, S.F64, nan, other).tolist() == [False, True]


# ---------------------------------------------------------------- floats


def test_float_arithmetic_ieee_special_values() -> None:
    a = arr([1.0, -1.0, 0.0, np.inf, 1e38], S.F32)
    b = arr([0.0, 0.0, 0.0, np.inf, 10.0], S.F32)
    q = binary(BinOp.DIV, S.F32, a, b)
    # 1/+0 = +inf, -1/+0 = -inf, 0/0 = NaN, inf/inf = NaN, 1e38/10 = 1e37 (rounded)
    assert q[0] == np.inf and q[1] == -np.inf and np.isnan(q[2]) and np.isnan(q[3])
    s = binary(BinOp.MUL, S.F32, a, b)
    # 1e38 * 10 overflows binary32 (max ≈ 3.4e38) to +inf; inf * inf = inf
    assert s[4] == np.inf and s[3] == np.inf
    assert np.isnan(binary(BinOp.SUB, S.F32, arr([np.inf], S.F32), arr([np.inf], S.F32))[0])


def test_float_add_rounds_in_its_own_precision() -> None:
    # binary32: 1 + 2**-24 is a tie between 1 and 1 + 2**-23: round to even gives 1.0
    r = binary(BinOp.ADD, S.F32, arr([1.0], S.F32), arr([2.0**-24], S.F32))
    assert r.dtype == np.float32 and r[0] == np.float32(1.0)
    # 1 + 3*2**-25 = 1 + 1.5 ulp/2... = 1 + 0.75 ulp -> rounds up to 1 + 2**-23
    r = binary(BinOp.ADD, S.F32, arr([1.0], S.F32), arr([3 * 2.0**-25], S.F32))
    assert r[0] == np.float32(1 + 2.0**-23)


def test_subnormals_are_kept() -> None:
    tiny = from_bits(arr([1], S.U32), S.F32)              # 2**-149, smallest subnormal
    twice = binary(BinOp.ADD, S.F32, tiny, tiny)
    assert bits32(twice) == [2]
    half = binary(BinOp.MUL, S.F64, arr([2.0**-1022], S.F64), arr([0.5], S.F64))
    assert bits64(half) == [1 << 51]                      # subnormal 2**-1023


def test_float_rem_is_fmod() -> None:
    a = arr([5.5, -5.5, 1.0, np.inf, 3.0], S.F64)
    b = arr([2.0, 2.0, 0.0, 1.0, np.inf], S.F64)
    r = binary(BinOp.REM, S.F64, a, b)
    # fmod(5.5, 2) = 1.5; fmod(-5.5, 2) = -1.5 (dividend's sign); x % 0 and inf % y are NaN;
    # fmod(x, inf) = x (C99 F.9.7.1)
    assert r[0] == 1.5 and r[1] == -1.5 and np.isnan(r[2]) and np.isnan(r[3]) and r[4] == 3.0


def test_float_min_max_ignore_nan() -> None:
    a = arr([np.nan, 1.0, 2.0, np.nan], S.F32)
    b = arr([3.0, np.nan, -1.0, np.nan], S.F32)
    mn = method("min", S.F32, a, [b])
    mx = method("max", S.F32, a, [b])
    assert mn[:3].tolist() == [3.0, 1.0, -1.0] and np.isnan(mn[3])
    assert mx[:3].tolist() == [3.0, 1.0, 2.0] and np.isnan(mx[3])


def test_float_abs_sqrt() -> None:
    assert bits32(method("abs", S.F32, arr([-0.0], S.F32), [])) == [0]
    s = method("sqrt", S.F64, arr([4.0, 2.0, -1.0, -0.0, np.inf], S.F64), [])
    # sqrt(2) correctly rounded is 0x3FF6A09E667F3BCD (IEEE 754 requires correct rounding)
    assert s[0] == 2.0 and bits64(s[1:2]) == [0x3FF6_A09E_667F_3BCD]
    assert np.isnan(s[2]) and bits64(s[3:4]) == [1 << 63] and s[4] == np.inf


def test_to_bits_from_bits() -> None:
    assert to_bits(arr([1.0, -2.0], S.F32), S.F32).tolist() == [0x3F80_0000, 0xC000_0000]
    assert to_bits(arr([1.0], S.F64), S.F64).tolist() == [0x3FF0_0000_0000_0000]
    assert method("to_bits", S.F32, arr([-0.0], S.F32), []).tolist() == [0x8000_0000]
    # a signalling NaN payload survives a bit round trip (views, no conversion)
    snan = from_bits(arr([0x7FA0_0001], S.U32), S.F32)
    assert to_bits(snan, S.F32).tolist() == [0x7FA0_0001]
    assert from_bits(arr([0x4000_0000_0000_0000], S.U64), S.F64).tolist() == [2.0]


# ---------------------------------------------------------------- mul_add


def test_mul_add_f32_fuses() -> None:
    # (1 + 2**-12)(1 - 2**-12) = 1 - 2**-24 exactly; minus 1 gives -2**-24 with one rounding.
    a, b, c = arr([1 + 2.0**-12], S.F32), arr([1 - 2.0**-12], S.F32), arr([-1.0], S.F32)
    fused = method("mul_add", S.F32, a, [b, c])
    assert fused.tolist() == [-(2.0**-24)]
    # 1 + 2**-12 and 1 - 2**-12 squared: (1+e)(1+e) = 1 + 2e + e^2 with e = 2**-12:
    # e^2 = 2**-24 is below binary32's ulp at 1 (2**-23): unfused gives 2e exactly,
    # fused keeps the 2**-24.
    sq = method("mul_add", S.F32, a, [a, c])
    assert sq.tolist() == [2.0**-11 + 2.0**-24]
    unfused = binary(BinOp.ADD, S.F32, binary(BinOp.MUL, S.F32, a, a), c)
    assert unfused.tolist() == [2.0**-11]


def test_mul_add_f32_round_to_odd_avoids_double_rounding() -> None:
    # a*b = (1 + 2**-23)**2 = 1 + 2**-22 + 2**-46 (exact in binary64); c = -2**-24:
    # exact = 1 + 3*2**-24 + 2**-46. The binary32 ulp at 1 is 2**-23, so this is 1.5 ulp plus
    # a little: above the midpoint, rounds to 1 + 2 ulp = 1 + 2**-22.
    a = arr([1 + 2.0**-23], S.F32)
    c = arr([-(2.0**-24)], S.F32)
    r = method("mul_add", S.F32, a, [a, c])
    assert r.tolist() == [1 + 2.0**-22]
    # Where rounding the sum to binary64 first would round twice: a = 2**-12 (1 + 2**-23),
    # b = 2**-12 (1 - 2**-23), a*b = 2**-24 - 2**-70; c = 1 + 2**-23 (odd binary32 mantissa).
    # Exact = 1 + 2**-23 + 2**-24 - 2**-70: just below the binary32 midpoint between
    # 1 + 2**-23 and 1 + 2**-22, so the answer is 1 + 2**-23. Binary64 RNE would give the
    # midpoint itself (2**-70 < half its ulp 2**-53) and then ties-to-even 1 + 2**-22.
    a = arr([2.0**-12 * (1 + 2.0**-23)], S.F32)
    b = arr([2.0**-12 * (1 - 2.0**-23)], S.F32)
    c = arr([1 + 2.0**-23], S.F32)
    assert method("mul_add", S.F32, a, [b, c]).tolist() == [1 + 2.0**-23]


def test_mul_add_f32_exact_midpoint_ties_to_even() -> None:
    # a*b + c = 1 + 2**-24 exactly (a tie at binary32 precision): round to even = 1.0
    a, b, c = arr([2.0**-12], S.F32), arr([2.0**-12], S.F32), arr([1.0], S.F32)
    assert method("mul_add", S.F32, a, [b, c]).tolist() == [1.0]


def test_mul_add_f64_fuses() -> None:
    # (1 + 2**-30)(1 - 2**-30) - 1 = -2**-60 exactly; unfused rounds the product to 1.0
    a, b, c = arr([1 + 2.0**-30], S.F64), arr([1 - 2.0**-30], S.F64), arr([-1.0], S.F64)
    assert method("mul_add", S.F64, a, [b, c]).tolist() == [-(2.0**-60)]
    assert binary(BinOp.ADD, S.F64, binary(BinOp.MUL, S.F64, a, b), c).tolist() == [0.0]


def test_mul_add_special_values() -> None:
    for ty in (S.F32, S.F64):
        a = arr([np.inf, 0.0, -0.0, 1.0, 1e300 if ty is S.F64 else 1e30, 2.0], ty)
        b = arr([0.0, 5.0, 5.0, 1.0, 1e300 if ty is S.F64 else 1e30, 3.0], ty)
        c = arr([1.0, -0.0, -0.0, -1.0, -np.inf, np.nan], ty)
        r = method("mul_add", ty, a, [b, c])
        # inf*0 + c: invalid -> NaN (IEEE 754 §7.2)
        assert np.isnan(r[0])
        # +0*5 + -0 = +0 + -0 = +0; -0*5 + -0 = -0 + -0 = -0 (IEEE 754 §6.3)
        assert np.signbit(r[1]) == np.False_ and r[1] == 0
        assert np.signbit(r[2]) == np.True_ and r[2] == 0
        # 1*1 - 1: exact zero sum of opposite signs is +0 in round-to-nearest
        assert r[3] == 0 and not np.signbit(r[3])
        # finite product (even one that overflows when rounded alone) plus -inf is -inf
        assert r[4] == -np.inf
        assert np.isnan(r[5])


def test_mul_add_f64_overflow_and_subnormal() -> None:
    big = arr([1.7976931348623157e308], S.F64)
    r = method("mul_add", S.F64, big, [arr([2.0], S.F64), arr([-1.0], S.F64)])
    assert r.tolist() == [np.inf]
    # 2**-1074 * 0.5 + 0: exact 2**-1075 is a tie between 0 and 2**-1074: even -> +0
    tiny = from_bits(arr([1], S.U64), S.F64)
    r = method("mul_add", S.F64, tiny, [arr([0.5], S.F64), arr([0.0], S.F64)])
    assert bits64(r) == [0]
    # 2**-1074 * 0.75 = 0.75 of the smallest subnormal -> rounds to 2**-1074
    r = method("mul_add", S.F64, tiny, [arr([0.75], S.F64), arr([0.0], S.F64)])
    assert bits64(r) == [1]


# ---------------------------------------------------------------- casts


def test_int_to_int_truncates_and_extends() -> None:
    assert cast(arr([300, -1, 255], S.I32), S.I32, S.U8).tolist() == [44, 255, 255]
    assert cast(arr([-1], S.I8), S.I8, S.U64).tolist() == [2**64 - 1]      # sign-extend
    assert cast(arr([255], S.U8), S.U8, S.I64).tolist() == [255]           # zero-extend
    assert cast(arr([2**63], S.U64), S.U64, S.I64).tolist() == [-(2**63)]
    assert cast(arr([0x1_0000_8000], S.I64), S.I64, S.I16).tolist() == [-32768]
    assert cast(arr([True, False], S.BOOL), S.BOOL, S.I32).tolist() == [1, 0]


def test_float_to_int_saturates_truncates_nan_zero() -> None:
    v = arr([np.nan, np.inf, -np.inf, 2.9, -2.9, 3e9, -3e9, -0.5, 2147483520.0], S.F32)
    # 2147483520 = 2**31 - 128 is the largest f32 below 2**31: it converts exactly
    assert cast(v, S.F32, S.I32).tolist() == [
        0, 2**31 - 1, -(2**31), 2, -2, 2**31 - 1, -(2**31), 0, 2147483520,
    ]
    assert cast(v, S.F32, S.U8).tolist() == [0, 255, 0, 2, 0, 255, 0, 0, 255]
    # f32 2**31 is exactly one above i32::MAX: saturates
    assert cast(arr([2.0**31], S.F32), S.F32, S.I32).tolist() == [2**31 - 1]
    w = arr([2.0**64, 2.0**64 - 2048, 2.0**63, -(2.0**63), 1e300], S.F64)
    assert cast(w, S.F64, S.U64).tolist() == [2**64 - 1, 2**64 - 2048, 2**63, 0, 2**64 - 1]
    assert cast(w, S.F64, S.I64).tolist() == [2**63 - 1, 2**63 - 1, 2**63 - 1, -(2**63),
                                               2**63 - 1]


def test_int_to_float_round_to_nearest_even() -> None:
    # 2**24 + 1 is a tie in binary32 between 2**24 and 2**24 + 2: even -> 2**24
    # 2**24 + 3 is a tie between 2**24 + 2 and 2**24 + 4: even mantissa -> 2**24 + 4
    v = arr([2**24 + 1, 2**24 + 3, -(2**31), 2**31 - 1], S.I32)
    assert cast(v, S.I32, S.F32).tolist() == [2.0**24, 2.0**24 + 4, -(2.0**31), 2.0**31]
    assert cast(arr([2**32 - 1], S.U32), S.U32, S.F32).tolist() == [2.0**32]


def test_u64_to_f32_does_not_double_round() -> None:
    # Exact: 2**60 + 2**36 + 1. binary32 keeps 24 bits: ulp at 2**60 is 2**37, so the value
    # is just above the midpoint 2**60 + 2**36 -> rounds UP to 2**60 + 2**37. Through binary64
    # (ulp 2**8) it would first become 2**60 + 2**36, an exact tie, which rounds to even 2**60.
    v = arr([2**60 + 2**36 + 1], S.U64)
    assert cast(v, S.U64, S.F32).astype(np.float64).tolist() == [2.0**60 + 2.0**37]
    assert cast(arr([2**60 + 2**36 + 1], S.I64), S.I64, S.F32).astype(np.float64).tolist() == [
        2.0**60 + 2.0**37
    ]
    assert cast(arr([-(2**60 + 2**36 + 1)], S.I64), S.I64, S.F32).astype(np.float64).tolist() == [
        -(2.0**60 + 2.0**37)
    ]
    # exact tie stays a tie: 2**60 + 2**36 -> even 2**60
    assert cast(arr([2**60 + 2**36], S.USIZE), S.USIZE, S.F32).astype(np.float64).tolist() == [
        2.0**60
    ]


def test_64_bit_to_f64() -> None:
    # binary64 ulp at 2**63 is 2**11. u64::MAX = 2**64 - 1 rounds up to 2**64;
    # 2**63 + 2**10 is a tie -> even 2**63; 2**63 + 2**10 + 1 is above it -> 2**63 + 2**11;
    # 2**63 + 3*2**10 ties between odd 2**63 + 2**11 and even 2**63 + 2**12 -> 2**63 + 2**12
    v = arr([2**64 - 1, 2**63 + 2**10, 2**63 + 2**10 + 1, 2**63 + 3 * 2**10], S.U64)
    assert cast(v, S.U64, S.F64).tolist() == [
        2.0**64, 2.0**63, 2.0**63 + 2.0**11, 2.0**63 + 2.0**12,
    ]
    assert cast(arr([-(2**63), 2**53 + 1], S.I64), S.I64, S.F64).tolist() == [
        -(2.0**63), 2.0**53,
    ]


def test_float_to_float() -> None:
    # f64 -> f32: 1 + 2**-24 ties -> 1.0; 1 + 2**-24 + 2**-40 -> 1 + 2**-23; 1e39 -> inf
    v = arr([1 + 2.0**-24, 1 + 2.0**-24 + 2.0**-40, 1e39, -1e39, 2.0**-149], S.F64)
    r = cast(v, S.F64, S.F32)
    assert r.dtype == np.float32
    assert r.tolist() == [1.0, 1 + 2.0**-23, np.inf, -np.inf, 2.0**-149]
    nan_bits = to_bits(cast(arr([np.nan], S.F32), S.F32, S.F64), S.F64)
    assert (int(nan_bits[0]) >> 52) & 0x7FF == 0x7FF
    assert cast(arr([0.1], S.F32), S.F32, S.F64).tolist() == [float(np.float32(0.1))]


def test_casts_reject_non_rust_casts() -> None:
    with pytest.raises(TypeError):
        cast(arr([1.0], S.F32), S.F32, S.BOOL)
    with pytest.raises(TypeError):
        cast(arr([True], S.BOOL), S.BOOL, S.F32)


@pytest.mark.parametrize("ty", [S.F32, S.F64])
def test_min_max_ignore_signalling_nans_too(ty: S) -> None:
    """Rust's `f32::max`/`min` return the other operand when one is NaN, "handling all NaNs
    the same way" (std docs), unlike IEEE 754-2008 maxNum, which answers qNaN for an sNaN
    operand. Checked with rustc 1.95 at -O0 and -O2 on `2.0.max(sNaN)` (and operands swapped):
    0x40000000. The signalling NaN bit patterns are IEEE 754 §6.2.1's (quiet bit clear)."""
    snan = 0x7F800001 if ty is S.F32 else 0x7FF0000000000001
    s = from_bits(np.array([snan], dtype=ty.bits_dtype), ty)
    two = np.array([2.0], dtype=ty.dtype)
    for name in ("max", "min"):
        assert method(name, ty, two, [s])[0] == 2.0
        assert method(name, ty, s, [two])[0] == 2.0
    assert np.isnan(method("max", ty, s, [s])[0])


def test_new_methods_on_the_examples_of_rusts_documentation() -> None:
    """Expected values are the examples in core's docs (`i32::div_euclid`, `rem_euclid`,
    `saturating_*`, `abs_diff`, `unsigned_abs`, `reverse_bits`, `swap_bytes`, `f32::round`,
    `signum`, `clamp`), worked by hand, not computed by the code under test."""
    i32 = S.I32
    a = np.array([7, -7, 7, -7], dtype=np.int32)
    b = np.array([4, 4, -4, -4], dtype=np.int32)
    assert method("div_euclid", i32, a, [b]).tolist() == [1, -2, -1, 2]
    assert method("rem_euclid", i32, a, [b]).tolist() == [3, 1, 3, 1]
    assert method("saturating_add", S.I8, np.int8([100, -100]),
                      [np.int8([100, -100])]).tolist() == [127, -128]
    assert method("saturating_mul", S.U16, np.uint16([300]),
                      [np.uint16([300])]).tolist() == [65535]
    assert method("abs_diff", S.I8, np.int8([-128]), [np.int8([127])]).tolist() \
        == [255]
    assert method("unsigned_abs", S.I16, np.int16([-32768]), []).tolist() == [32768]
    assert method("reverse_bits", S.U16, np.uint16([0x1234]), []).tolist() \
        == [0x2C48]
    assert method("swap_bytes", S.U32, np.uint32([0x12345678]), []).tolist() \
        == [0x78563412]
    assert method("pow", S.U8, np.uint8([3]), [np.uint32([5])]).tolist() == [243]
    assert method("wrapping_pow", S.I8, np.int8([3]), [np.uint32([5])]).tolist() \
        == [-13]  # 243 - 256
    f = np.float32([3.3, -3.3, -3.7, 2.5, -2.5, -0.0])
    assert method("round", S.F32, f, []).tolist() == [3.0, -3.0, -4.0, 3.0, -3.0, -0.0]
    assert np.signbit(method("round", S.F32, f, []))[-1]
    assert method("signum", S.F16, np.float16([-0.0, 3.5]), []).tolist() == [-1.0, 1.0]
    lo, hi = np.float64([-2.0] * 3), np.float64([1.0] * 3)
    assert method("clamp", S.F64, np.float64([-3.0, 0.0, 2.0]), [lo, hi]).tolist() \
        == [-2.0, 0.0, 1.0]
