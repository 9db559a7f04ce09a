"""GFX9's unfused f32 multiply-add family, which gfx90a still has and CDNA3/4 dropped
(`V_MAD_F32`, `V_MAC_F32`, `V_MADMK_F32`, `V_MADAK_F32`, `V_MAD_LEGACY_F32`): operation
table rows registered into `valu.VALU`, as (shape, destination type, source types, function).

Semantics (Vega / CDNA2 ISA "V_MAD_F32": D = S0 * S1 + S2, not fused): the product is
rounded to f32, then the sum. These instructions never support f32 denormals — inputs, the
rounded product and the result are flushed to a zero of the same sign whatever the float
mode says; that is why LLVM selects them only when the kernel's f32 denormal mode flushes
(`FMAD_FTZ`, `llvm.amdgcn.fmad.ftz`; AMDGPUUsage "FLOAT_DENORM_MODE_32"). The legacy form
takes 0 * anything (inf and NaN included) as +0 (DX9 rules, "V_MUL_LEGACY_F32")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

F32 = np.float32
_TINY = np.finfo(F32).tiny


def _flush(x: Any) -> Any:
    """Subnormals to a zero of their sign (x * 0), every other value as it is (x * 1): two
    ufuncs and a multiply instead of `fp.flush`'s where/copysign (these run on every lane,
    and lanes outside EXEC often hold integers that read as subnormals). A signalling NaN
    comes back quieted, which changes nothing here: each flushed value is an operand of
    the arithmetic that follows, which would quiet it, and x86 picks the NaN to return by
    operand position, not by quietness (Intel SDM Vol. 1 Table 4-7)."""
    return np.multiply(x, np.abs(x) >= _TINY)  # ufuncs: numpy's scalar math differs on NaNs


def _product(a: Any, b: Any, legacy: bool) -> Any:
    a, b = _flush(np.asarray(a, F32)), _flush(np.asarray(b, F32))
    if not legacy:
        return _flush(np.multiply(a, b))
    with np.errstate(all="ignore"):  # 0 * inf, whose NaN the legacy rule replaces
        p = _flush(np.multiply(a, b))
    return np.where((a == 0) | (b == 0), F32(0.0), p)


def mad_f32(a: Any, b: Any, c: Any) -> Any:
    """round(round(a * b) + c) with f32 denormals flushed at every step. Floating-point
    exceptions: the simulator's `np.seterr(all="ignore")` (as `valu_fp`)."""
    return _flush(np.add(_product(a, b, False), _flush(np.asarray(c, F32))))


def mad_legacy_f32(a: Any, b: Any, c: Any) -> Any:
    return _flush(np.add(_product(a, b, True), _flush(np.asarray(c, F32))))


F3 = ("f32", "f32", "f32")
MAD_OPS: dict[str, tuple[str, str, tuple[str, ...], Callable[..., Any]]] = {
    "V_MAD_F32": ("plain", "f32", F3, mad_f32),
    "V_MAD_LEGACY_F32": ("plain", "f32", F3, mad_legacy_f32),
    # D = S0 * S1 + D: the destination is the addend (bound like V_FMAC_F32)
    "V_MAC_F32": ("fmac", "f32", F3, mad_f32),
    # v_madmk_f32 vdst, src0, K, vsrc1: D = S0 * K + S1; v_madak_f32: D = S0 * S1 + K
    "V_MADMK_F32": ("plain", "f32", F3, mad_f32),
    "V_MADAK_F32": ("plain", "f32", F3, mad_f32),
}
"""The rows, by AMD name; `valu` turns each into a `VOp`."""
