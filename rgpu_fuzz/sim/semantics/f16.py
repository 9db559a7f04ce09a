"""Half-precision (IEEE 754 binary16) VALU semantics: the f16 rows of VOP1/VOP2/VOP3 (their
SDWA forms on GFX9 and true16 `.l`/`.h` halves on gfx1100 come from the operand layer, as
for every 16-bit row), and the f16 halves of the packed operations (`semantics.packed`).

Rounding: binary16 arithmetic is computed in a wider format and rounded once to binary16.
numpy's float16 add, subtract, multiply, divide and square root run in binary32 and round
the result to binary16; that double rounding is innocuous because 24 >= 2*11 + 2 (Figueroa,
"When is double rounding innocuous?", SIGNUM 1995: for p' >= 2p + 2 the four operations and
sqrt rounded to p' then p equal one rounding to p). The fused multiply-add is computed in
binary64: the product of two binary16 values has at most 22 significant bits and is exact,
and the sum with a binary16 addend whose result is finite in binary16 spans at most 41 bits
(product below 2**17, addend's lowest bit at least 2**-24) or has an addend far enough below
the other that binary64's rounding cannot move it across a binary16 rounding boundary, so
the one rounding to binary16 (numpy's float64 → float16 cast, round to nearest even) is the
IEEE 754 §5.4.1 fusedMultiplyAdd result.

Pseudocode quoted from AMD's ISA XML as tinygrad 0.14.0 carries it
(`runtime/autogen/amd/{cdna,rdna3}/str_pcode.py`; the CDNA3 and RDNA3 ISA guides' VOP1/VOP2/
VOP3 chapters): V_LDEXP_F16 `D0.f16 = S0.f16 * 16'F(2.0F ** 32'I(S1.i16))`; V_FREXP_EXP_I16_F16
`exponent(S0.f16) - 15 + 1`, 0 for infinities and NaN; V_MAX_F16/V_MIN_F16 the NaN rules of
`valu_fp.fmin` (IEEE mode: a signalling NaN gives itself quieted, S0's first; else a NaN
operand gives the other); V_DIV_FIXUP_F16 (below); V_PACK_B32_F16
`D0[31 : 16].f16 = S1.f16; D0[15 : 0].f16 = S0.f16`.

Not modelled (as for f32, docs/simulator.md §7): the hardware's approximations of V_RCP,
V_RSQ, V_EXP, V_LOG (IEEE results here), NaN payloads other than numpy's (an operand's NaN
quieted), and f16 denormal flushing: a code object whose FLOAT_DENORM_MODE_16_64 flushes
gets `unsupported-instruction` on its first f16 instruction (`bound.alu.bind_valu`,
`bound.packed`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

F16 = np.float16
F64 = np.float64
U16 = np.uint16
U32 = np.uint32

_BELOW_ONE = np.nextafter(F16(1), F16(0))
_QUIET = U16(0x0200)
"""The quiet bit of binary16 (the fraction's top bit, IEEE 754 §6.2.1)."""


def quiet16(x: np.ndarray) -> np.ndarray:
    """`x` with the quiet bit set (cvtToQuietNAN of a binary16 NaN)."""
    return (np.asarray(x, F16).view(U16) | _QUIET).view(F16)


def _signalling(x: np.ndarray) -> np.ndarray:
    return np.isnan(x) & ((x.view(U16) & _QUIET) == 0)


def _arr(*xs: Any) -> list[np.ndarray]:
    return [np.asarray(x, F16) for x in np.broadcast_arrays(*(np.atleast_1d(
        np.asarray(x, F16)) for x in xs))]


def _nan_rules(r: np.ndarray, a: np.ndarray, b: np.ndarray, ieee: bool) -> np.ndarray:
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if not (nan_a.any() or nan_b.any()):
        return r
    r = np.where(nan_b, a, r)
    r = np.where(nan_a, b, r)
    if ieee:
        r = np.where(_signalling(b), quiet16(b), r)
        r = np.where(_signalling(a), quiet16(a), r)
    return r


def fmin16(ieee: bool, a: Any, b: Any) -> np.ndarray:
    """V_MIN_F16: the smaller, -0 below +0, NaNs as V_MIN_F32 (pseudocode above)."""
    a, b = _arr(a, b)
    r = np.where((a < b) | ((a == b) & np.signbit(a)), a, b)
    return _nan_rules(r, a, b, ieee)


def fmax16(ieee: bool, a: Any, b: Any) -> np.ndarray:
    """V_MAX_F16: the larger, +0 above -0, NaNs as V_MAX_F32."""
    a, b = _arr(a, b)
    r = np.where((a > b) | ((a == b) & ~np.signbit(a)), a, b)
    return _nan_rules(r, a, b, ieee)


def fma16(a: Any, b: Any, c: Any) -> np.ndarray:
    """binary16 fusedMultiplyAdd: exact product and sum in binary64, one rounding (module
    docstring)."""
    return (np.asarray(a, F64) * np.asarray(b, F64) + np.asarray(c, F64)).astype(F16)


def ldexp16(x: Any, e: Any) -> np.ndarray:
    """V_LDEXP_F16: x * 2**e rounded once. x * 2**e is exact in binary64 for |e| <= 64, and
    any nonzero binary16 value scaled by 2**±64 overflows or underflows binary16, so the
    exponent is clamped there first."""
    e = np.clip(np.asarray(e).astype(np.int64), -64, 64)
    return np.ldexp(np.asarray(x, F64), e).astype(F16)


def fract16(x: Any) -> np.ndarray:
    """V_FRACT_F16: x - floor(x), at most the largest binary16 below 1 (as V_FRACT_F32);
    ±inf gives NaN."""
    x = np.asarray(x, F16)
    r = np.minimum(x - np.floor(x), _BELOW_ONE)
    return np.where(np.isinf(x), F16(np.nan), r).astype(F16)


def frexp_exp16(x: Any) -> np.ndarray:
    """V_FREXP_EXP_I16_F16: numpy's frexp exponent (0 for zero, infinities and NaN)."""
    return np.frexp(np.asarray(x, np.float32))[1].astype(np.int16)


def frexp_mant16(x: Any) -> np.ndarray:
    return np.frexp(np.asarray(x, F16))[0].astype(F16)


def div_fixup16(q: Any, d: Any, n: Any) -> np.ndarray:
    """V_DIV_FIXUP_F16 (S0 = q, S1 = d, S2 = n; pseudocode): NaN n → quiet(n); NaN d →
    quiet(d); 0/0 and inf/inf → 0xFE00; x/0 or inf/y → ±inf; x/inf or 0/y → ±0; else |q|
    with the sign sign(d) ^ sign(n). Unlike V_DIV_FIXUP_F32 it has no exponent tests."""
    q, d, n = _arr(q, d, n)
    neg = np.signbit(d) ^ np.signbit(n)
    one = np.where(neg, F16(-1), F16(1))
    out = np.where(neg, -np.abs(q), np.abs(q))
    out = np.where(np.isinf(d) | (n == 0), one * F16(0), out)
    out = np.where((d == 0) | np.isinf(n), one * F16(np.inf), out)
    out = np.where(np.isinf(d) & np.isinf(n), np.array(0xFE00, U16).view(F16), out)
    out = np.where((d == 0) & (n == 0), np.array(0xFE00, U16).view(F16), out)
    out = np.where(np.isnan(d), quiet16(d), out)
    return np.where(np.isnan(n), quiet16(n), out).astype(F16)


def _pack(a: Any, b: Any) -> np.ndarray:
    """V_PACK_B32_F16: S0's bits low, S1's high (neg/abs already applied)."""
    lo = np.asarray(a, F16).view(U16).astype(U32)
    return lo | (np.asarray(b, F16).view(U16).astype(U32) << U32(16))


def _minmax3(f: Callable[..., Any]) -> Callable[..., Any]:
    return lambda ieee, a, b, c: f(ieee, f(ieee, a, b), c)


def _med3(ieee: bool, a: Any, b: Any, c: Any) -> np.ndarray:
    return fmax16(ieee, fmin16(ieee, a, b), fmin16(ieee, fmax16(ieee, a, b), c))


Row = tuple[str, str, tuple[str, ...], Callable[..., Any], bool]

F16_OPS: dict[str, Row] = {
    "V_ADD_F16": ("plain", "f16", ("f16", "f16"), lambda a, b: a + b, False),
    "V_SUB_F16": ("plain", "f16", ("f16", "f16"), lambda a, b: a - b, False),
    "V_SUBREV_F16": ("plain", "f16", ("f16", "f16"), lambda a, b: b - a, False),
    "V_MUL_F16": ("plain", "f16", ("f16", "f16"), lambda a, b: a * b, False),
    "V_FMA_F16": ("plain", "f16", ("f16", "f16", "f16"), fma16, False),
    "V_FMAC_F16": ("fmac", "f16", ("f16", "f16", "f16"), fma16, False),
    "V_FMAMK_F16": ("plain", "f16", ("f16", "f16", "f16"),
                    lambda a, k, b: fma16(a, k, b), False),
    "V_FMAAK_F16": ("plain", "f16", ("f16", "f16", "f16"), fma16, False),
    "V_MIN_F16": ("plain", "f16", ("f16", "f16"), fmin16, True),
    "V_MAX_F16": ("plain", "f16", ("f16", "f16"), fmax16, True),
    "V_MIN3_F16": ("plain", "f16", ("f16", "f16", "f16"), _minmax3(fmin16), True),
    "V_MAX3_F16": ("plain", "f16", ("f16", "f16", "f16"), _minmax3(fmax16), True),
    "V_MED3_F16": ("plain", "f16", ("f16", "f16", "f16"), _med3, True),
    # RDNA3 `V_MAXMIN_F16: D0.f16 = v_min_f16(v_max_f16(S0.f16, S1.f16), S2.f16)`,
    # V_MINMAX_F16 the other way round
    "V_MAXMIN_F16": ("plain", "f16", ("f16", "f16", "f16"),
                     lambda ieee, a, b, c: fmin16(ieee, fmax16(ieee, a, b), c), True),
    "V_MINMAX_F16": ("plain", "f16", ("f16", "f16", "f16"),
                     lambda ieee, a, b, c: fmax16(ieee, fmin16(ieee, a, b), c), True),
    "V_SQRT_F16": ("plain", "f16", ("f16",), np.sqrt, False),
    "V_RCP_F16": ("plain", "f16", ("f16",), lambda a: F16(1) / a, False),
    "V_RSQ_F16": ("plain", "f16", ("f16",),
                  lambda a: (1.0 / np.sqrt(np.asarray(a, F64))).astype(F16), False),
    "V_EXP_F16": ("plain", "f16", ("f16",), np.exp2, False),
    "V_LOG_F16": ("plain", "f16", ("f16",), np.log2, False),
    "V_FLOOR_F16": ("plain", "f16", ("f16",), np.floor, False),
    "V_CEIL_F16": ("plain", "f16", ("f16",), np.ceil, False),
    "V_TRUNC_F16": ("plain", "f16", ("f16",), np.trunc, False),
    "V_RNDNE_F16": ("plain", "f16", ("f16",), np.rint, False),
    "V_FRACT_F16": ("plain", "f16", ("f16",), fract16, False),
    "V_LDEXP_F16": ("plain", "f16", ("f16", "i16"), ldexp16, False),
    "V_FREXP_MANT_F16": ("plain", "f16", ("f16",), frexp_mant16, False),
    "V_FREXP_EXP_I16_F16": ("plain", "i16", ("f16",), frexp_exp16, False),
    "V_CVT_F16_I16": ("plain", "f16", ("i16",), lambda a: np.asarray(a).astype(F16), False),
    "V_CVT_F16_U16": ("plain", "f16", ("u16",), lambda a: np.asarray(a).astype(F16), False),
    "V_DIV_FIXUP_F16": ("plain", "f16", ("f16", "f16", "f16"), div_fixup16, False),
    "V_PACK_B32_F16": ("plain", "b32", ("f16", "f16"), _pack, False),
}
"""AMD name → (shape, destination type, source types, function, takes the IEEE mode)."""

__all__ = ["F16_OPS", "div_fixup16", "fma16", "fmax16", "fmin16", "ldexp16",
           "quiet16"]
