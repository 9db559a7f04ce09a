"""V_PERMLANE16_SWAP_B32 / V_PERMLANE32_SWAP_B32 (CDNA4, gfx950): the VOP3 form keeps FI
and BOUND_CTRL in VOP3's OP_SEL field, not an operand's half select.

LLVM's VOP1Instructions.td (`VOP_PERMLANE_SWAP`) gives the `_e64` form the operands
`Dpp16FI:$fi, DppBoundCtrl:$bound_ctrl` and the syntax `$vdst, $src0$bound_ctrl$fi`; the
encoding puts FI in OP_SEL[0] (bit 11) and BOUND_CTRL in OP_SEL[1] (bit 12), checked against
`llvm-mc-22 -mcpu=gfx950 -show-encoding` (`bound_ctrl:1` → 0x10 in byte 1, `fi:1` → 0x08).
The `_e32` (VOP1) form has neither: both are 0. The decoder records them as the `fi` and
`bound_ctrl` modifiers (never as SRC0's `hi`), and the renderer prints them as LLVM does.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["is_permlane_swap", "render_swap_controls", "swap_controls"]

_NAMES = frozenset({"V_PERMLANE16_SWAP_B32", "V_PERMLANE32_SWAP_B32"})


def is_permlane_swap(name: str) -> bool:
    """Whether AMD's opcode name is one of the permlane swaps."""
    return name in _NAMES


def swap_controls(fields: Mapping[str, int]) -> dict[str, int]:
    """`fi` and `bound_ctrl` of a decoded VOP3 form's fields (OP_SEL[0], OP_SEL[1])."""
    opsel = fields.get("opsel", 0)
    return {"fi": opsel & 1, "bound_ctrl": opsel >> 1 & 1}


def render_swap_controls(fields: Mapping[str, int]) -> str:
    """LLVM's suffix: ` bound_ctrl:1` then ` fi:1`, each only when set."""
    c = swap_controls(fields)
    return (" bound_ctrl:1" if c["bound_ctrl"] else "") + (" fi:1" if c["fi"] else "")
