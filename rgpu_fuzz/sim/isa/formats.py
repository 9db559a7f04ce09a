"""Microcode formats as bitfield declarations, one class per format per ISA family.

Bit positions count over the instruction's dwords as one little-endian integer (dword 0
is bits 31:0, dword 1 bits 63:32). Layouts are from AMD's ISA reference guides: "AMD
Instinct MI300 (CDNA3) ISA", chapter 13 "Microcode Formats" (gfx942), "AMD Instinct MI200
(CDNA2) ISA", chapter 12 (gfx90a), and "RDNA3 ISA", chapter 15 (gfx1100). Opcode numbers
are never written here: a format names the table (`op_table`) its opcode field indexes.

A `FieldKind` says how a field's value names an operand (before the opcode's operand
table says how wide it is): a 9-bit vector-ALU source, an 8-bit scalar source, a 7-bit
scalar destination, an 8-bit VGPR number, an SGPR-pair base, a 4-SGPR resource base.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from rgpu_fuzz.sim.isa.instruction import Encoding

__all__ = ["DPP8_EXT", "DPP16_EXT", "SDWA_EXT", "Field", "FieldKind", "Fixed", "Format"]


class FieldKind(Enum):
    """How a field's raw value names an operand."""

    PLAIN = "plain"      # a number: offsets, modifier bits, immediates
    SRC = "src"          # 9 bits: 0-255 scalar source code, 256-511 VGPR n-256
    SSRC = "ssrc"        # 8 bits: scalar source code (SGPR, special, inline constant, literal)
    SDST = "sdst"        # 7 bits: SGPR / special scalar destination
    VGPR = "vgpr"        # 8 bits: VGPR number (or AGPR number with the format's acc bit)
    SBASE = "sbase"      # 6 bits: SGPR pair base, in units of 2 SGPRs
    SRSRC = "srsrc"      # 5 bits: SGPR quad base, in units of 4 SGPRs


@dataclass(frozen=True, slots=True)
class Field:
    """Bits hi..lo (inclusive) of the instruction."""

    hi: int
    lo: int
    kind: FieldKind = FieldKind.PLAIN

    @property
    def width(self) -> int:
        return self.hi - self.lo + 1

    def get(self, bits: int) -> int:
        return (bits >> self.lo) & ((1 << (self.hi - self.lo + 1)) - 1)


@dataclass(frozen=True, slots=True)
class Fixed:
    """Bits that identify the format (the encoding field, FLAT's segment)."""

    hi: int
    lo: int
    value: int


class Format:
    """A microcode format: fixed identifying bits, the opcode field and operand fields.

    Subclasses declare `Field`/`Fixed` class attributes; `__init_subclass__` collects them
    into `fields`, the dword-0 `mask`/`match` pair and `dwords` (the size without a
    literal or an extension dword).
    """

    encoding: ClassVar[Encoding]
    op_table: ClassVar[str]              # the opcode enum's name in the tables, e.g. "VOP2Op"
    op: ClassVar[Field]
    fields: ClassVar[dict[str, Field]]
    mask: ClassVar[int]
    match: ClassVar[int]
    dwords: ClassVar[int]
    _plan: ClassVar[tuple[tuple[str, int, int], ...]]
    #: Operand fields in LLVM's assembly order (present ones only are printed).
    asm_order: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        fields: dict[str, Field] = {}
        mask = match = 0
        top = 31
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, Field):
                    fields[name] = value
                elif value is None:
                    fields.pop(name, None)  # a subclass removes an inherited field
                elif isinstance(value, Fixed):
                    bits = ((1 << (value.hi - value.lo + 1)) - 1) << value.lo
                    assert value.hi < 32, "identifying bits live in dword 0"
                    mask = (mask & ~bits) | bits
                    match = (match & ~bits) | (value.value << value.lo)
        cls.fields = fields
        cls.mask, cls.match = mask, match
        cls.dwords = max((f.hi for f in fields.values()), default=top) // 32 + 1

    @classmethod
    def decode_fields(cls, bits: int) -> dict[str, int]:
        plan = cls.__dict__.get("_plan")
        if plan is None:
            plan = tuple((name, f.lo, (1 << f.width) - 1) for name, f in cls.fields.items())
            cls._plan = plan
        return {name: (bits >> lo) & mask for name, lo, mask in plan}


# ---------------------------------------------------------------------------------------
# Extension dwords that follow a VOP1/VOP2/VOPC word whose src0 is the SDWA or DPP code.
# Bits are relative to the whole instruction (the extension is dword 1).


class _Extension:
    """Fields of an extension dword; `fields` collected like a Format's."""

    fields: ClassVar[dict[str, Field]]

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls.fields = {n: v for n, v in vars(cls).items() if isinstance(v, Field)}


class SDWA_EXT(_Extension):
    """SDWA dword (GCN5/CDNA ISA, "VOP_SDWA"); VOPC uses sdst/sd instead of dst_sel..omod."""

    src0 = Field(39, 32)
    dst_sel = Field(42, 40)
    dst_unused = Field(44, 43)
    clamp = Field(45, 45)
    omod = Field(47, 46)
    sdst = Field(46, 40)
    sd = Field(47, 47)
    src0_sel = Field(50, 48)
    src0_sext = Field(51, 51)
    src0_neg = Field(52, 52)
    src0_abs = Field(53, 53)
    s0 = Field(55, 55)
    src1_sel = Field(58, 56)
    src1_sext = Field(59, 59)
    src1_neg = Field(60, 60)
    src1_abs = Field(61, 61)
    s1 = Field(63, 63)


class DPP16_EXT(_Extension):
    """DPP dword (GCN5/CDNA "VOP_DPP", RDNA3 "VOP_DPP16"; `fi` is RDNA only)."""

    src0 = Field(39, 32)
    dpp_ctrl = Field(48, 40)
    fi = Field(50, 50)
    bound_ctrl = Field(51, 51)
    src0_neg = Field(52, 52)
    src0_abs = Field(53, 53)
    src1_neg = Field(54, 54)
    src1_abs = Field(55, 55)
    bank_mask = Field(59, 56)
    row_mask = Field(63, 60)


class DPP8_EXT(_Extension):
    """DPP8 dword (RDNA3 "VOP_DPP8"): eight 3-bit lane selects."""

    src0 = Field(39, 32)
    lane_sel = Field(63, 40)
