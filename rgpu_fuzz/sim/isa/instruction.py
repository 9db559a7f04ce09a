"""The decoded instruction: frozen values the executor codes against.

One `Instruction` per machine instruction of a `.text` section. Its operands are
`Operand` values in LLVM's assembly order (see `Instruction`), each naming a register
range, a constant or an immediate. Nothing here depends on a target: the per-target
tables live in `rgpu_fuzz.sim.isa.tables` and the decoding in `rgpu_fuzz.sim.isa.decode`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import IntEnum, StrEnum
from types import MappingProxyType

__all__ = ["Encoding", "Instruction", "Operand", "OperandKind", "Special"]


class OperandKind(StrEnum):
    """What an operand names."""

    SGPR = "sgpr"                  # s[index : index+count]
    VGPR = "vgpr"                  # v[index : index+count]
    AGPR = "agpr"                  # a[index : index+count] (accumulation VGPRs, CDNA)
    TTMP = "ttmp"                  # ttmp[index : index+count] (trap-handler SGPRs)
    SPECIAL = "special"            # index is a `Special`; count 2 = the 64-bit pair (vcc, exec)
    INLINE_INT = "inline-int"      # value: the constant's bits at the operand's width
    INLINE_FLOAT = "inline-float"  # value: the constant's bits at the operand's width
    LITERAL = "literal"            # value: the constant's bits at the operand's width
    IMM = "imm"                    # an immediate field: SOPP/SOPK simm16, offsets (value)


class Special(IntEnum):
    """Named scalar operands, numbered independently of any target's encoding.

    A 64-bit use of a pair (`vcc`, `exec`, `flat_scratch`, `xnack_mask`) is its `_LO`
    member with `Operand.count == 2`.
    """

    VCC_LO = 1
    VCC_HI = 2
    EXEC_LO = 3
    EXEC_HI = 4
    M0 = 5
    SCC = 6
    FLAT_SCRATCH_LO = 7
    FLAT_SCRATCH_HI = 8
    XNACK_MASK_LO = 9
    XNACK_MASK_HI = 10
    NULL = 11                      # gfx11 `null` (reads 0, writes dropped)
    OFF = 12                       # an absent address operand (`off` in LLVM syntax)
    VCCZ = 13
    EXECZ = 14
    SRC_SHARED_BASE = 15
    SRC_SHARED_LIMIT = 16
    SRC_PRIVATE_BASE = 17
    SRC_PRIVATE_LIMIT = 18
    SRC_POPS_EXITING_WAVE_ID = 19
    LDS_DIRECT = 20
    SRC_SCC = 21                   # `src_scc`: SCC read as a 0/1 source operand
    SRC_EXECZ = 22
    SRC_VCCZ = 23


class Encoding(StrEnum):
    """Microcode format of an instruction (AMD's names; the 64-bit VOP forms split)."""

    SOP1 = "SOP1"
    SOP2 = "SOP2"
    SOPC = "SOPC"
    SOPK = "SOPK"
    SOPP = "SOPP"
    SMEM = "SMEM"
    VOP1 = "VOP1"
    VOP2 = "VOP2"
    VOPC = "VOPC"
    VOP3 = "VOP3"
    VOP3SD = "VOP3SD"              # VOP3 with a scalar carry/condition destination (VOP3B)
    VOP3P = "VOP3P"
    VOPD = "VOPD"                  # gfx11 dual issue: two VOP ops in one instruction
    SDWA = "SDWA"                  # VOP1/VOP2/VOPC with an SDWA extension dword
    DPP = "DPP"                    # VOP1/VOP2/VOPC with a DPP16 extension dword
    DPP8 = "DPP8"
    DS = "DS"
    FLAT = "FLAT"
    GLOBAL = "GLOBAL"
    SCRATCH = "SCRATCH"
    MUBUF = "MUBUF"
    MTBUF = "MTBUF"
    MIMG = "MIMG"
    EXP = "EXP"
    LDSDIR = "LDSDIR"
    VINTERP = "VINTERP"
    UNKNOWN = "UNKNOWN"            # an undecodable dword: size 4, opcode ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Operand:
    """One operand: a register range, a constant or an immediate.

    `count` is in dwords for registers (from the opcode's operand width: a 64-bit source
    is `count=2`; 16-bit operands are `count=1` with `hi` telling which half on targets
    that name halves). Constants carry `value`, the bits the operand reads at its width
    (`width` bits), so an f64 inline `0.5` is 0x3FE0000000000000.
    """

    kind: OperandKind
    index: int = 0
    count: int = 1
    value: int = 0
    width: int = 32
    neg: bool = False
    abs: bool = False
    sext: bool = False             # SDWA integer sign extension
    hi: bool = False               # op_sel / true16 `.h`: the high 16 bits
    neg_hi: bool = False           # VOP3P: negate the high half
    hi_hi: bool = True             # VOP3P op_sel_hi: the high lane reads the high half
    sel: str = ""                  # SDWA selector: BYTE_0..3, WORD_0/1, DWORD (empty: none)

    @property
    def is_register(self) -> bool:
        """True for SGPR/VGPR/AGPR/TTMP ranges and named special registers."""
        return self.kind in _REGISTER_KINDS


_REGISTER_KINDS = frozenset(
    {OperandKind.SGPR, OperandKind.VGPR, OperandKind.AGPR, OperandKind.TTMP, OperandKind.SPECIAL}
)

_EMPTY: Mapping[str, int] = MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class Instruction:
    """One decoded machine instruction.

    Operand order: `defs` then `uses` are the operands in the order LLVM's assembly
    prints them, split at the written destinations. Operands LLVM prints although the
    hardware implies them (`vcc` of VOPC/carry VOP2 in the 32-bit form) are included;
    implicit state LLVM does not print (SCC written by SALU, EXEC read by VALU, M0 of DS
    on gfx9) is not. Per encoding:

    * SOP1/SOP2: defs (sdst,); uses (ssrc0[, ssrc1]). SOPK: defs (sdst,), uses (imm,);
      `s_cmpk_*` and `s_setreg_b32` only read sdst: uses (sdst, imm); the read-modify-write
      ones (`s_addk_i32`, `s_mulk_i32`, `s_cmovk_i32`) read their def too (not repeated in
      uses). SOPC: uses (ssrc0, ssrc1). SOPP: uses (imm,) or ().
    * SMEM: loads defs (sdata,), uses (sbase[, soffset SGPR][, offset IMM]); stores and
      `s_atc_probe` have sdata (an IMM for the probe) first in uses.
    * VOP1/VOP2/VOPC/VOP3/VOP3SD/VOP3P/SDWA/DPP: defs (vdst[, sdst]); uses (src0, src1, src2).
    * DS: defs (vdst,) when it returns data; uses (addr, data0, data1) as present.
    * FLAT/GLOBAL/SCRATCH: defs (vdst,) for loads and returning atomics; uses (vaddr-or-off,
      vdata, saddr-or-off) as present.
    * MUBUF/MTBUF: defs (vdata,) for loads and returning atomics (whose vdata is also the
      data read), else vdata first in uses; uses (vaddr-or-off, srsrc, soffset).
    * VOPD: defs (vdstx, vdsty); uses the X sources then the Y sources; `halves` holds
      the two operations as instructions of their own (opcode `V_DUAL_*`).

    `modifiers` holds instruction-wide modifiers by LLVM's name (`clamp`, `omod`,
    `offset`, `offset0`, `offset1`, `glc`, `slc`, `dlc`, `sc0`, `sc1`, `nt`, `gds`,
    `dpp_ctrl`, `row_mask`, `bank_mask`, `bound_ctrl`, `dst_sel`, `dst_unused`,
    `target` (a branch's absolute byte address) …) — only the ones the encoding has.
    `fields` are the raw bit fields of the format.
    """

    address: int
    size: int
    encoding: Encoding
    target: str = ""               # the target it was decoded for, e.g. "gfx942"
    opcode: str                    # AMD's name from the ISA tables, e.g. "V_ADD_U32"
    mnemonic: str                  # LLVM's spelling with its encoding suffix, e.g. "v_add_u32_e32"
    defs: tuple[Operand, ...] = ()
    uses: tuple[Operand, ...] = ()
    modifiers: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    fields: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    words: tuple[int, ...] = ()    # the instruction's dwords, little-endian as in memory
    halves: tuple[Instruction, ...] = ()  # VOPD: the X and Y operations (same address)

    @property
    def next_address(self) -> int:
        """Byte address of the following instruction."""
        return self.address + self.size


_SET = object.__setattr__
_INSTRUCTION_FIELDS = ("address", "size", "encoding", "target", "opcode", "mnemonic", "defs",
                       "uses", "modifiers", "fields", "words", "halves")



def make_instruction(address: int, size: int, encoding: Encoding, target: str, opcode: str,
                 mnemonic: str, defs: tuple[Operand, ...], uses: tuple[Operand, ...],
                 modifiers: MappingProxyType[str, int], fields: MappingProxyType[str, int],
                 words: tuple[int, ...], halves: tuple[Instruction, ...]) -> Instruction:
    """An `Instruction` set field by field (the frozen dataclass's `__init__` goes
    through `object.__setattr__` per keyword: slower on the decoder's hot path)."""
    new = object.__new__(Instruction)
    _SET(new, "address", address)
    _SET(new, "size", size)
    _SET(new, "encoding", encoding)
    _SET(new, "target", target)
    _SET(new, "opcode", opcode)
    _SET(new, "mnemonic", mnemonic)
    _SET(new, "defs", defs)
    _SET(new, "uses", uses)
    _SET(new, "modifiers", modifiers)
    _SET(new, "fields", fields)
    _SET(new, "words", words)
    _SET(new, "halves", halves)
    return new


assert _INSTRUCTION_FIELDS == tuple(f.name for f in fields(Instruction))
