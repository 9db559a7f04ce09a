"""Exact IEEE helpers numpy lacks: fused multiply-add in binary32 and binary64 (the host's
FMA instruction, `hostfma`; `model.fma`, shared with the language's `mul_add`, when a scale
is asked for or the host path is unavailable), and flushing of subnormals when the float
mode asks for it (AMD's min/max NaN rules: `valu_fp`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rgpu_fuzz.model import fma as exact
from rgpu_fuzz.sim import hostfma

F32_TINY = np.float32(np.finfo(np.float32).tiny)
F64_TINY = np.float64(np.finfo(np.float64).tiny)


def fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray,
          scale: np.ndarray | int = 0) -> np.ndarray:
    """Correctly rounded binary32 `(a*b + c) * 2**scale`: V_DIV_FMAS's scale must apply
    before the one rounding, which the host instruction cannot do (`model.fma`'s binary32
    costs about what `_scaled`'s split would: it is not split)."""
    if (isinstance(scale, int) and not scale) or not np.any(scale):
        return hostfma.fma32(a, b, c)
    return exact.fma32(a, b, c, scale)


def fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray,
          scale: np.ndarray | int = 0) -> np.ndarray:
    """Correctly rounded binary64 `(a*b + c) * 2**scale` (with a scale: `_scaled`)."""
    if (isinstance(scale, int) and not scale) or not np.any(scale):
        return hostfma.fma64(a, b, c)
    return _scaled(np.float64, hostfma.fma64, exact.fma64, a, b, c, scale)


def _scaled(dtype: Any, host: Any, model: Any, a: Any, b: Any, c: Any, scale: Any) -> Any:
    """A call with a scale in some lanes (V_DIV_FMAS: the lanes whose VCC is set): the
    host instruction for the others and `model.fma` (~40 µs a wave) only for those, when
    every operand is a lane vector and the scaled lanes' operands are finite. A correctly
    rounded finite result depends on its own lane alone; a NaN does not (`model.fma` takes
    it from numpy's unfused expression, whose NaN operand order depends on the layout of
    the whole call: `hostfma`), so any other call stays whole on `model.fma`."""
    a, b, c = np.asarray(a, dtype), np.asarray(b, dtype), np.asarray(c, dtype)
    k = np.asarray(scale, np.int64)
    lanes = k != 0
    if lanes.ndim != 1 or lanes.all() or not a.shape == b.shape == c.shape == k.shape:
        return model(a, b, c, scale)
    sa, sb, sc = a[lanes], b[lanes], c[lanes]
    if not (np.isfinite(sa).all() and np.isfinite(sb).all() and np.isfinite(sc).all()):
        return model(a, b, c, scale)
    out = host(a, b, c)
    out[lanes] = model(sa, sb, sc, k[lanes])
    return out


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
