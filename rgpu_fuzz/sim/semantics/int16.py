"""Signed 16-bit add and subtract, which LLVM selects for `i16::saturating_add/sub` with the
VOP3 clamp bit: V_ADD_I16/V_SUB_I16 (GFX9 VOP3 only) and V_ADD_NC_I16/V_SUB_NC_I16
(RDNA3). Pseudocode (AMD's ISA XML as tinygrad 0.14.0 carries it): `D0.i16 = S0.i16 +
S1.i16` / `S0.i16 - S1.i16`, wrapping; with CLAMP the result saturates to [-32768, 32767]
(CDNA3 ISA §6.2 "clamp" for integer operations, as V_ADD_I32's). On GFX9 the high half of
the result is zeroed as for every 16-bit row (docs/simulator.md §12); on gfx1100 it is the
true16 half the destination names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

I16 = np.int16


def _sat(f: Callable[[Any, Any], Any]) -> Callable[[Any, Any], np.ndarray]:
    return lambda a, b: np.clip(f(np.asarray(a, np.int64), np.asarray(b, np.int64)),
                                -0x8000, 0x7FFF).astype(I16)


INT16_OPS: dict[str, tuple[str, str, tuple[str, ...], Callable[..., Any]]] = {
    name: ("plain", "i16", ("i16", "i16"), fn)
    for names, fn in ((("V_ADD_I16", "V_ADD_NC_I16"), lambda a, b: a + b),
                      (("V_SUB_I16", "V_SUB_NC_I16"), lambda a, b: a - b))
    for name in names
}
"""AMD name → (shape, destination type, source types, wrapping function)."""

INT16_CLAMP: dict[str, Callable[..., np.ndarray]] = {
    "V_ADD_I16": _sat(np.add), "V_ADD_NC_I16": _sat(np.add),
    "V_SUB_I16": _sat(np.subtract), "V_SUB_NC_I16": _sat(np.subtract),
}
"""The same rows with the CLAMP bit: saturating."""


__all__ = ["INT16_CLAMP", "INT16_OPS"]
