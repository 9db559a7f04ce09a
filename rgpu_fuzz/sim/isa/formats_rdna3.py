"""Microcode formats of RDNA3 (gfx1100), as bitfield declarations.

Layouts: "RDNA3 Instruction Set Architecture Reference Guide" §15 "Microcode Formats".
Where a layout equals CDNA's (SOP*, VOP1/VOP2/VOPC) the CDNA declaration is reused.
"""

from __future__ import annotations

from rgpu_fuzz.sim.isa.formats import Field, Fixed, Format
from rgpu_fuzz.sim.isa.formats import FieldKind as K
from rgpu_fuzz.sim.isa.formats_cdna import SOP1, SOP2, SOPC, SOPK, SOPP, VOP1, VOP2, VOPC
from rgpu_fuzz.sim.isa.instruction import Encoding as E

__all__ = ["GFX1100"]


class SMEM(Format):
    encoding, op_table = E.SMEM, "SMEMOp"
    ident = Fixed(31, 26, 0b111101)
    op = Field(25, 18)
    glc = Field(14, 14)
    dlc = Field(13, 13)
    sdata = Field(12, 6, K.SDST)
    sbase = Field(5, 0, K.SBASE)
    offset = Field(52, 32)
    soffset = Field(63, 57, K.SDST)
    asm_order = ("sdata", "sbase", "soffset")


class VOP3(Format):
    encoding, op_table = E.VOP3, "VOP3Op"
    ident = Fixed(31, 26, 0b110101)
    op = Field(25, 16)
    clamp = Field(15, 15)
    opsel = Field(14, 11)
    abs = Field(10, 8)
    vdst = Field(7, 0, K.VGPR)
    src0 = Field(40, 32, K.SRC)
    src1 = Field(49, 41, K.SRC)
    src2 = Field(58, 50, K.SRC)
    omod = Field(60, 59)
    neg = Field(63, 61)
    asm_order = ("vdst", "src0", "src1", "src2")


class VOP3SD(Format):
    encoding, op_table = E.VOP3SD, "VOP3SDOp"
    ident = Fixed(31, 26, 0b110101)
    op = Field(25, 16)
    clamp = Field(15, 15)
    sdst = Field(14, 8, K.SDST)
    vdst = Field(7, 0, K.VGPR)
    src0 = Field(40, 32, K.SRC)
    src1 = Field(49, 41, K.SRC)
    src2 = Field(58, 50, K.SRC)
    omod = Field(60, 59)
    neg = Field(63, 61)
    asm_order = ("vdst", "sdst", "src0", "src1", "src2")


class VOP3P(Format):
    encoding, op_table = E.VOP3P, "VOP3POp"
    ident = Fixed(31, 24, 0b11001100)
    op = Field(22, 16)
    clamp = Field(15, 15)
    opsel_hi2 = Field(14, 14)
    opsel = Field(13, 11)
    neg_hi = Field(10, 8)
    vdst = Field(7, 0, K.VGPR)
    src0 = Field(40, 32, K.SRC)
    src1 = Field(49, 41, K.SRC)
    src2 = Field(58, 50, K.SRC)
    opsel_hi = Field(60, 59)
    neg = Field(63, 61)
    asm_order = ("vdst", "src0", "src1", "src2")


class VOPD(Format):
    """Dual issue: an X and a Y operation (RDNA3 §7.6); both opcodes index `VOPDOp`."""

    encoding, op_table = E.VOPD, "VOPDOp"
    ident = Fixed(31, 26, 0b110010)
    op = Field(25, 22)           # opx
    opy = Field(21, 17)
    vsrcx1 = Field(16, 9, K.VGPR)
    srcx0 = Field(8, 0, K.SRC)
    srcy0 = Field(40, 32, K.SRC)
    vsrcy1 = Field(48, 41, K.VGPR)
    vdsty = Field(55, 49)        # bits 7:1 of vdsty; bit 0 is the inverse of vdstx's bit 0
    vdstx = Field(63, 56, K.VGPR)
    asm_order = ("vdstx", "srcx0", "vsrcx1", "vdsty", "srcy0", "vsrcy1")


class DS(Format):
    encoding, op_table = E.DS, "DSOp"
    ident = Fixed(31, 26, 0b110110)
    op = Field(25, 18)
    gds = Field(17, 17)
    offset1 = Field(15, 8)
    offset0 = Field(7, 0)
    addr = Field(39, 32, K.VGPR)
    data0 = Field(47, 40, K.VGPR)
    data1 = Field(55, 48, K.VGPR)
    vdst = Field(63, 56, K.VGPR)
    asm_order = ("vdst", "addr", "data0", "data1")


class _FlatBase(Format):
    ident = Fixed(31, 26, 0b110111)
    op = Field(24, 18)
    slc = Field(15, 15)
    glc = Field(14, 14)
    dlc = Field(13, 13)
    offset = Field(12, 0)
    addr = Field(39, 32, K.VGPR)
    data = Field(47, 40, K.VGPR)
    saddr = Field(54, 48, K.SDST)
    sve = Field(55, 55)
    vdst = Field(63, 56, K.VGPR)
    asm_order = ("vdst", "addr", "data", "saddr")


class FLAT(_FlatBase):
    encoding, op_table = E.FLAT, "FLATOp"
    seg = Fixed(17, 16, 0)


class GLOBAL(_FlatBase):
    encoding, op_table = E.GLOBAL, "GLOBALOp"
    seg = Fixed(17, 16, 2)


class SCRATCH(_FlatBase):
    encoding, op_table = E.SCRATCH, "SCRATCHOp"
    seg = Fixed(17, 16, 1)


class MUBUF(Format):
    encoding, op_table = E.MUBUF, "MUBUFOp"
    ident = Fixed(31, 26, 0b111000)
    op = Field(25, 18)
    glc = Field(14, 14)
    dlc = Field(13, 13)
    slc = Field(12, 12)
    offset = Field(11, 0)
    vaddr = Field(39, 32, K.VGPR)
    vdata = Field(47, 40, K.VGPR)
    srsrc = Field(52, 48, K.SRSRC)
    tfe = Field(53, 53)
    offen = Field(54, 54)
    idxen = Field(55, 55)
    soffset = Field(63, 56, K.SSRC)
    asm_order = ("vdata", "vaddr", "srsrc", "soffset")


class MTBUF(Format):
    encoding, op_table = E.MTBUF, "MTBUFOp"
    ident = Fixed(31, 26, 0b111010)
    format = Field(25, 19)
    op = Field(18, 15)
    glc = Field(14, 14)
    dlc = Field(13, 13)
    slc = Field(12, 12)
    offset = Field(11, 0)
    vaddr = Field(39, 32, K.VGPR)
    vdata = Field(47, 40, K.VGPR)
    srsrc = Field(52, 48, K.SRSRC)
    tfe = Field(53, 53)
    offen = Field(54, 54)
    idxen = Field(55, 55)
    soffset = Field(63, 56, K.SSRC)
    asm_order = ("vdata", "vaddr", "srsrc", "soffset")


class LDSDIR(Format):
    encoding, op_table = E.LDSDIR, "LDSDIROp"
    ident = Fixed(31, 24, 0b11001110)
    op = Field(21, 20)
    wait_vdst = Field(19, 16)
    attr = Field(15, 10)
    attr_chan = Field(9, 8)
    vdst = Field(7, 0, K.VGPR)
    asm_order = ("vdst",)


class VINTERP(Format):
    encoding, op_table = E.VINTERP, "VINTERPOp"
    ident = Fixed(31, 24, 0b11001101)
    op = Field(22, 16)
    clamp = Field(15, 15)
    opsel = Field(14, 11)
    waitexp = Field(10, 8)
    vdst = Field(7, 0, K.VGPR)
    src0 = Field(40, 32, K.SRC)
    src1 = Field(49, 41, K.SRC)
    src2 = Field(58, 50, K.SRC)
    neg = Field(63, 61)
    asm_order = ("vdst", "src0", "src1", "src2")


GFX1100: tuple[type[Format], ...] = (
    SOP1, SOPC, SOPP, SOPK, SOP2, SMEM, VOP1, VOPC, VOP2, VOP3P, VOPD, VOP3, VOP3SD,
    DS, FLAT, GLOBAL, SCRATCH, MUBUF, MTBUF, LDSDIR, VINTERP,
)
