"""AMDGPU instruction decoding for the simulator: table-driven, per target (issue 10)."""

from rgpu_fuzz.sim.isa.instruction import Encoding, Instruction, Operand, OperandKind, Special

__all__ = ["Encoding", "Instruction", "Operand", "OperandKind", "Special"]
