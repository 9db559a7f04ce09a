"""AMDGPU instruction decoding for the simulator: table-driven, per target.

`decode(text, target)` turns a `.text` section into `Instruction`s; `render(inst)` prints
one in LLVM's syntax. Formats are bitfield declarations (`formats_cdna`, `formats_rdna3`),
opcodes and operand types come from AMD's ISA XML via the pinned `tinygrad` tables, and
the target's differences from them are the rows of `corrections.toml`.
"""

from rgpu_fuzz.sim.isa.decode import decode, decode_code_object
from rgpu_fuzz.sim.isa.instruction import Encoding, Instruction, Operand, OperandKind, Special
from rgpu_fuzz.sim.isa.render import render, render_operand
from rgpu_fuzz.sim.isa.tables import TARGETS, UnknownTarget

__all__ = ["TARGETS", "Encoding", "Instruction", "Operand", "OperandKind", "Special",
           "UnknownTarget", "decode", "decode_code_object", "render", "render_operand"]
