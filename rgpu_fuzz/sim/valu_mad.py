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

from rgpu_fuzz.sim.fp import flush

F32 = np.float32


def _product(a: Any, b: Any, legacy: bool) -> np.ndarray:
    a, b = flush(np.asarray(a, F32)), flush(np.asarray(b, F32))
    with np.errstate(all="ignore"):  # IEEE results; underflow and overflow are values
        p = flush(np.multiply(a, b, dtype=F32))
    if legacy:
        p = np.where((a == 0) | (b == 0), F32(0.0), p)
    return p


def mad_f32(a: Any, b: Any, c: Any) -> np.ndarray:
    """round(round(a * b) + c) with f32 denormals flushed at every step."""
    return flush(np.add(_product(a, b, False), flush(np.asarray(c, F32)), dtype=F32))


def mad_legacy_f32(a: Any, b: Any, c: Any) -> np.ndarray:
    return flush(np.add(_product(a, b, True), flush(np.asarray(c, F32)), dtype=F32))


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
