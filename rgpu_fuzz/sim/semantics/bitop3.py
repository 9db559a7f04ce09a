"""V_BITOP3_B32 / V_BITOP3_B16 (CDNA4, gfx950): any bitwise function of three sources,
given as an 8-entry truth table in the instruction.

Semantics from AMD's CDNA4 ISA pseudocode (as tinygrad 0.14's
`autogen/amd/cdna/str_pcode.py` carries it from the ISA XML):
`TTBL = { INST.OMOD[1:0], INST.ABS[2:0], INST.NEG[2:0] }`, then for each table bit k set
the result ORs in the minterm whose S0, S1, S2 bits are bits 2, 1, 0 of k
(`TTBL & 0x1` selects `~S0 & ~S1 & ~S2`, ..., `TTBL & 0x80` selects `S0 & S1 & S2`).
The decoder hands the table over as the `bitop3` modifier (`sim.isa.bitop3`).

The rows have shape "bitop3": their function takes the table first, and the binder
(`bound.alu`) fixes it from the instruction before binding the row as a plain operation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["CDNA4_OPS", "bitop3"]


def bitop3(table: int, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The CDNA4 pseudocode's OR of the selected minterms, over whole waves (any unsigned
    integer dtype: the b32 and b16 forms differ only in width)."""
    a, b, c = np.broadcast_arrays(a, b, c)
    out = np.zeros_like(a)
    for k in range(8):
        if table >> k & 1:
            out |= ((a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c))
    return out


CDNA4_OPS: dict[str, tuple[str, str, tuple[str, ...], Callable[..., Any]]] = {
    "V_BITOP3_B32": ("bitop3", "b32", ("b32", "b32", "b32"), bitop3),
    "V_BITOP3_B16": ("bitop3", "b16", ("b16", "b16", "b16"), bitop3),
}
"""The rows, by AMD name; `valu` turns each into a `VOp`."""
