"""The executor's view of one decoded instruction: the AMD opcode name, its operands in
assembler order (definitions first, then uses) and its modifiers.

The decoder (`rgpu_fuzz.sim.isa`) describes an instruction as it is encoded; the binder
(`rgpu_fuzz.sim.bind`) needs less: which register or constant each operand is, and the
modifier values. `from_decoded` is the one place that reads the decoder's type, so a
change there touches one function.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class OpKind(StrEnum):
    SGPR = "s"      # scalar register file, indexed by the operand encoding (vcc_lo = 106 ...)
    VGPR = "v"
    AGPR = "a"
    INT = "int"     # an inline integer constant, a literal, or an immediate field
    FLOAT = "float"  # an inline floating-point constant (its bits depend on the operand type)
    OFF = "off"     # an absent address operand (`off`)


@dataclass(frozen=True, slots=True)
class Opnd:
    kind: OpKind
    index: int
    count: int
    value: int = 0
    fvalue: float = 0.0
    neg: bool = False
    abs: bool = False
    literal: bool = False


@dataclass(frozen=True, slots=True)
class Inst:
    address: int
    size: int
    opcode: str
    """The AMD name of the operation, upper case, without the encoding suffix (`V_ADD_U32`)."""
    encoding: str
    """`VOP1`, `VOP2`, `VOP3`, `VOPC`, `VOP3P`, `SOP1`, `SOP2`, `SOPC`, `SOPK`, `SOPP`, `SMEM`,
    `FLAT`, `GLOBAL`, `SCRATCH`, `DS`, `MUBUF`; `SDWA` and `DPP` variants keep their base."""
    mnemonic: str
    """LLVM's spelling, for traces and `unsupported-instruction:<mnemonic>`."""
    operands: tuple[Opnd, ...]
    mods: Mapping[str, Any] = field(default_factory=dict)
    text: str = ""
    """The instruction in LLVM syntax, for traces."""


def from_decoded(decoded: Any) -> Inst:
    """The executor's view of one instruction of the project decoder."""
    raise NotImplementedError  # filled in once rgpu_fuzz.sim.isa lands
