"""V_BITOP3_B32 / V_BITOP3_B16 (CDNA4, gfx950): the 8-bit truth table lives in VOP3's
modifier bits, not in an operand.

The CDNA4 ISA guide's VOP3 description of V_BITOP3 gives the table the ABS, OMOD and NEG
fields: bits 10:8 hold table bits 5:3, bits 60:59 table bits 7:6 and bits 63:61 table bits
2:0 (checked against `llvm-mc-22 -mcpu=gfx950 -show-encoding`: `bitop3:0x96` encodes ABS=2,
OMOD=2, NEG=6). The sources therefore take no abs/neg modifiers and the result no omod;
op_sel (the 16-bit form's halves) stays where VOP3 has it.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["is_bitop3", "render_bitop3", "truth_table"]


def is_bitop3(name: str) -> bool:
    """Whether AMD's opcode name is one of the V_BITOP3 forms."""
    return name.startswith("V_BITOP3_")


def truth_table(fields: Mapping[str, int]) -> int:
    """The 8-bit table of a V_BITOP3's decoded VOP3 fields (`abs`, `omod`, `neg`)."""
    return (fields["neg"] & 7) | (fields["abs"] & 7) << 3 | (fields["omod"] & 3) << 6


def render_bitop3(table: int) -> str:
    """LLVM's ` bitop3:N` suffix: absent for 0, decimal up to 10, hex above (as
    llvm-objdump-22 prints it)."""
    if table == 0:
        return ""
    return f" bitop3:{table}" if table <= 10 else f" bitop3:{table:#x}"
