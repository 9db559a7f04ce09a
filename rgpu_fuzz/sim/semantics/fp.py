"""Exact IEEE helpers numpy lacks: fused multiply-add in binary32 and binary64 (the host's
FMA instruction, `hostfma`; `model.fma`, shared with the language's `mul_add`, when a scale
is asked for or the host path is unavailable), and flushing of subnormals when the float
mode asks for it (AMD's min/max NaN rules: `valu_fp`)."""

from __future__ import annotations

import numpy as np

from rgpu_fuzz.model import fma as exact
from rgpu_fuzz.sim.semantics import hostfma

F32_TINY = np.float32(np.finfo(np.float32).tiny)
F64_TINY = np.float64(np.finfo(np.float64).tiny)


def fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray,
          scale: np.ndarray | int = 0) -> np.ndarray:
    """Correctly rounded binary32 `(a*b + c) * 2**scale`: V_DIV_FMAS's scale must apply
    before the one rounding, which the host instruction cannot do."""
    if (isinstance(scale, int) and not scale) or not np.any(scale):
        return hostfma.fma32(a, b, c)
    return exact.fma32(a, b, c, scale)


def fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray,
          scale: np.ndarray | int = 0) -> np.ndarray:
    """Correctly rounded binary64 `(a*b + c) * 2**scale` (as `fma32`)."""
    if (isinstance(scale, int) and not scale) or not np.any(scale):
        return hostfma.fma64(a, b, c)
    return exact.fma64(a, b, c, scale)


def is_snan(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.float32:
        bits = x.view(np.uint32)
        return np.isnan(x) & ((bits & 0x0040_0000) == 0)
    bits = x.view(np.uint64)
    return np.isnan(x) & ((bits & np.uint64(0x0008_0000_0000_0000)) == 0)


def quiet(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.float32:
        return (x.view(np.uint32) | np.uint32(0x0040_0000)).view(np.float32)
    return (x.view(np.uint64) | np.uint64(0x0008_0000_0000_0000)).view(np.float64)


def flush(x: np.ndarray) -> np.ndarray:
    """Subnormals to a zero of the same sign (a float mode that flushes)."""
    tiny = F32_TINY if x.dtype == np.float32 else F64_TINY
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros_like(x), x), x)


def exponent32(x: np.ndarray) -> np.ndarray:
    return ((x.view(np.uint32) >> 23) & 0xFF).astype(np.int64)


def exponent64(x: np.ndarray) -> np.ndarray:
    return ((x.view(np.uint64) >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
