"""Microcode formats of RDNA4 (gfx1200), as bitfield declarations.

Layouts: "AMD RDNA4 Instruction Set Architecture Reference Guide", chapter "Microcode
Formats" (cross-checked against AMD's machine-readable RDNA4 description as tinygrad 0.14
generates it, `tinygrad/runtime/autogen/amd/rdna4/ins.py`, and against llvm-mc-22's
`-mcpu=gfx1200 -show-encoding`). What changed from RDNA3:

* SMEM: the opcode is bits 18:13; a 24-bit signed IOFFSET (55:32); the cache policy is
  TH (24:23) and SCOPE (22:21) instead of GLC/DLC.
* VFLAT / VGLOBAL / VSCRATCH (one 96-bit layout, told apart by bits 31:24): SADDR in 6:0,
  VDST 39:32, SVE 49, SCOPE 51:50, TH 54:52, VSRC (the store data) 62:55, VADDR 71:64 and a
  24-bit signed IOFFSET 95:72.
* VBUFFER (MUBUF/MTBUF's successor, 96 bits): SOFFSET 6:0, VDATA 39:32, RSRC 49:41 (an SGPR
  number, no longer in units of four), TH/SCOPE, FORMAT 61:55, OFFEN 62, IDXEN 63, VADDR
  71:64, a 24-bit IOFFSET 95:72.
* SOP*, VOP1/2/C, VOP3, VOP3SD, VOP3P, VOPD and DS keep RDNA3's layouts.

The XML names the memory formats VFLAT/VGLOBAL/VSCRATCH/VBUFFER and their fields vaddr,
vsrc and rsrc; the decoder speaks RDNA3's vocabulary (GLOBAL, addr, data, srsrc), so those
names are mapped once where the tables are loaded (`sim.isa.tables`), and the fields here
carry RDNA3's names.
"""

from __future__ import annotations

from rgpu_fuzz.sim.isa.formats import Field, Fixed, Format
from rgpu_fuzz.sim.isa.formats import FieldKind as K
from rgpu_fuzz.sim.isa.formats_cdna import SOP1, SOP2, SOPC, SOPK, SOPP, VOP1, VOP2, VOPC
from rgpu_fuzz.sim.isa.formats_rdna3 import DS, VOP3, VOP3P, VOP3SD, VOPD
from rgpu_fuzz.sim.isa.instruction import Encoding as E

__all__ = ["GFX1200"]


class SMEM(Format):
    encoding, op_table = E.SMEM, "SMEMOp"
    ident = Fixed(31, 26, 0b111101)
    th = Field(24, 23)
    scope = Field(22, 21)
    nv = Field(20, 20)
    op = Field(18, 13)
    sdata = Field(12, 6, K.SDST)
    sbase = Field(5, 0, K.SBASE)
    offset = Field(55, 32)
    soffset = Field(63, 57, K.SDST)
    asm_order = ("sdata", "sbase", "soffset")


class _FlatBase(Format):
    op = Field(21, 14)
    nv = Field(7, 7)
    saddr = Field(6, 0, K.SDST)
    vdst = Field(39, 32, K.VGPR)
    sve = Field(49, 49)
    scope = Field(51, 50)
    th = Field(54, 52)
    data = Field(62, 55, K.VGPR)
    addr = Field(71, 64, K.VGPR)
    offset = Field(95, 72)
    asm_order = ("vdst", "addr", "data", "saddr")


class FLAT(_FlatBase):
    encoding, op_table = E.FLAT, "FLATOp"
    ident = Fixed(31, 24, 0b11101100)


class SCRATCH(_FlatBase):
    encoding, op_table = E.SCRATCH, "SCRATCHOp"
    ident = Fixed(31, 24, 0b11101101)


class GLOBAL(_FlatBase):
    encoding, op_table = E.GLOBAL, "GLOBALOp"
    ident = Fixed(31, 24, 0b11101110)


class MUBUF(Format):
    """VBUFFER: the buffer loads, stores and atomics (RDNA4 "VBUFFER")."""

    encoding, op_table = E.MUBUF, "MUBUFOp"
    ident = Fixed(31, 26, 0b110001)
    tfe = Field(22, 22)
    op = Field(21, 14)
    nv = Field(7, 7)
    soffset = Field(6, 0, K.SDST)
    vdata = Field(39, 32, K.VGPR)
    srsrc = Field(49, 41, K.SDST)
    scope = Field(51, 50)
    th = Field(54, 52)
    format = Field(61, 55)
    offen = Field(62, 62)
    idxen = Field(63, 63)
    vaddr = Field(71, 64, K.VGPR)
    offset = Field(95, 72)
    asm_order = ("vdata", "vaddr", "srsrc", "soffset")


GFX1200: tuple[type[Format], ...] = (
    SOP1, SOPC, SOPP, SOPK, SOP2, SMEM, VOP1, VOPC, VOP2, VOP3P, VOPD, VOP3, VOP3SD,
    DS, FLAT, GLOBAL, SCRATCH, MUBUF,
)
