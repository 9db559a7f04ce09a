"""RDNA3 (gfx1100) VALU operations CDNA has no counterpart of — the true16 select and the
fused three-operand integer forms LLVM 22 emits — as operation table rows registered into
`valu.VALU`: (shape, destination type, source types, function).

Semantics from AMD's RDNA3 ISA pseudocode as tinygrad 0.14's `autogen/amd/rdna3/str_pcode.py`
carries it: V_CNDMASK_B16 `D0.u16 = VCC.u64[laneId] ? S1.u16 : S0.u16` (a 16-bit result:
with true16 it writes `vdst.l` or `vdst.h` and keeps the other half); V_XOR3_B32
`S0 ^ S1 ^ S2`; V_MAXMIN_* `min(max(S0, S1), S2)` and V_MINMAX_* `max(min(S0, S1), S2)`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

RDNA3_OPS: dict[str, tuple[str, str, tuple[str, ...], Callable[..., Any]]] = {
    "V_CNDMASK_B16": ("cndmask", "b16", ("b16", "b16"), lambda a: a),
    "V_XOR3_B32": ("plain", "b32", ("b32", "b32", "b32"), lambda a, b, c: a ^ b ^ c),
    **{f"V_MAXMIN_{t.upper()}": ("plain", t, (t, t, t),
                                 lambda a, b, c: np.minimum(np.maximum(a, b), c))
       for t in ("u32", "i32")},
    **{f"V_MINMAX_{t.upper()}": ("plain", t, (t, t, t),
                                 lambda a, b, c: np.maximum(np.minimum(a, b), c))
       for t in ("u32", "i32")},
}
"""The rows, by AMD name; `valu` turns each into a `VOp`."""
