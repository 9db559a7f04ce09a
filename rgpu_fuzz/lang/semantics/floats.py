"""Float operators and methods: IEEE 754 binary32/binary64, round to nearest even.

numpy computes `+ - * / sqrt` in the array's own precision with hardware IEEE arithmetic and
does not flush subnormals, which is exactly Rust's semantics (no contraction, docs/language.md).
Floating-point exceptions never raise or warn: IEEE 754 §7 default results (inf, NaN) are the
values Rust gives.

`mul_add` is the one operation numpy does not have: it must round once (IEEE 754 §5.4.1
fusedMultiplyAdd); `model.fma` builds it from exact pieces.

Every result goes through `nan.chosen`: the sign and payload of a NaN result are not one value
but a set (docs/language.md "NaN bits"), which an exploring run walks.
"""

from __future__ import annotations

import numpy as np

from rgpu_fuzz.lang.semantics.nan import EXPLORER, chosen
from rgpu_fuzz.model.fma import fma16, fma32, fma64
from rgpu_fuzz.model.scalars import Scalar

_exploring = EXPLORER.get
"""The exploring run in force, if any: checked inline, the common case costs no call."""


def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        r = np.add(a, b)
    return r if _exploring() is None else chosen(r, a, b)


def sub(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        r = np.subtract(a, b)
    return r if _exploring() is None else chosen(r, a, b)


def mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        r = np.multiply(a, b)
    return r if _exploring() is None else chosen(r, a, b)


def div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        r = np.divide(a, b)
    return r if _exploring() is None else chosen(r, a, b)


def rem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rust float `%` is C `fmod`: exact, sign of the dividend; NaN for `x % 0` and `inf % y`."""
    with np.errstate(all="ignore"):
        r = np.fmod(a, b)
    return r if _exploring() is None else chosen(r, a, b)


def sqrt(a: np.ndarray) -> np.ndarray:
    """Correctly rounded (IEEE 754 §5.4.1 squareRoot); NaN below zero, `sqrt(-0) == -0`."""
    with np.errstate(all="ignore"):
        r = np.sqrt(a)
    return r if _exploring() is None else chosen(r, a)


def fmin(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rust `f32::min`: if one operand is NaN, quiet *or signalling*, the other is returned
    (Rust docs: "handles all NaNs the same way"). Not numpy's `fmin` alone: it follows
    IEEE 754-2008 minNum, which turns a signalling NaN into a quiet NaN result (found by a
    campaign: rustc and llvm-cpu returned 2.0 for `2.0f32.max(sNaN)`, we returned NaN)."""
    with np.errstate(all="ignore"):
        r = np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.fmin(a, b)))
    return r if _exploring() is None else chosen(r, a, b)


def fmax(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rust `f32::max`: as `fmin`, the non-NaN operand wins for every kind of NaN."""
    with np.errstate(all="ignore"):
        r = np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.fmax(a, b)))
    return r if _exploring() is None else chosen(r, a, b)


def mul_add(ty: Scalar, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """`a * b + c` with one rounding (IEEE 754 fusedMultiplyAdd), shared with the simulator's
    `V_FMA_*` (`model.fma`)."""
    fma = {Scalar.F16: fma16, Scalar.F32: fma32, Scalar.F64: fma64}[ty]
    r = fma(a, b, c)
    return r if _exploring() is None else chosen(r, a, b, c)


def copysign(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rust `copysign`: `a`'s bits with `b`'s sign bit; a sign operation, so a NaN `a`
    keeps its payload (not arithmetic: docs/language.md "NaN bits")."""
    return np.copysign(a, b)


def signum(a: np.ndarray) -> np.ndarray:
    """Rust `signum`: `1.0.copysign(a)` (so `-0.0` gives `-1.0`), NaN for NaN. core returns
    its `NAN` constant, whose bits Rust does not promise: an arithmetic NaN here."""
    with np.errstate(all="ignore"):
        one = np.ones_like(np.asarray(a))
        r = np.where(np.isnan(a), a, np.copysign(one, a))
    return r if _exploring() is None else chosen(r, a)


def _rounded(fn: np.ufunc, a: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        r = fn(a)
    return r if _exploring() is None else chosen(r, a)


def floor(a: np.ndarray) -> np.ndarray:
    return _rounded(np.floor, a)


def ceil(a: np.ndarray) -> np.ndarray:
    return _rounded(np.ceil, a)


def trunc(a: np.ndarray) -> np.ndarray:
    return _rounded(np.trunc, a)


def round_away(a: np.ndarray) -> np.ndarray:
    """Rust `round` (C `round`, LLVM `llvm.round`): to nearest, ties away from zero (not
    numpy's ties-to-even `round`). `a - trunc(a)` is exact in any binary format (Sterbenz),
    so the tie test is exact; `t ± 1` is exact where a fraction exists."""
    with np.errstate(all="ignore"):
        t = np.trunc(a)
        up = np.abs(a - t) >= 0.5
        r = np.where(up, t + np.copysign(np.ones_like(t), a), t)
    return r if _exploring() is None else chosen(r, a)


def clamp(a: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Rust `clamp` once its bounds passed the assertion (`clamp_trap`): `lo` below `lo`,
    `hi` above `hi`, else `a` itself, every bit (a NaN `a` compares false both ways and is
    returned unchanged: core's body is two comparisons and moves)."""
    return np.where(a < lo, lo, np.where(a > hi, hi, a))


def clamp_trap(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The lanes where Rust's `clamp` panics: `assert!(min <= max, "min > max, or either
    was NaN ...")`, false exactly when `min > max` or either bound is NaN."""
    return ~(np.asarray(lo) <= np.asarray(hi))
