"""Microcode formats of the CDNA family (gfx90a, gfx942), as bitfield declarations.

Layouts: "AMD Instinct MI300 ISA Reference Guide" §13 "Microcode Formats" (gfx942); the
MI200 (CDNA2) guide §12 for gfx90a, whose only layout differences are the names of the
cache-policy bits (`glc`/`slc`/`scc` where gfx942 has `sc0`/`nt`/`sc1`): those formats
are redeclared at the bottom under `GFX90A`.
"""

from __future__ import annotations

from rgpu_fuzz.sim.isa.formats import Field, Fixed, Format
from rgpu_fuzz.sim.isa.formats import FieldKind as K
from rgpu_fuzz.sim.isa.instruction import Encoding as E

__all__ = ["GFX90A", "GFX942"]


class SOP2(Format):
    encoding, op_table = E.SOP2, "SOP2Op"
    ident = Fixed(31, 30, 0b10)
    op = Field(29, 23)
    sdst = Field(22, 16, K.SDST)
    ssrc1 = Field(15, 8, K.SSRC)
    ssrc0 = Field(7, 0, K.SSRC)
    asm_order = ("sdst", "ssrc0", "ssrc1")


class SOPK(Format):
    encoding, op_table = E.SOPK, "SOPKOp"
    ident = Fixed(31, 28, 0b1011)
    op = Field(27, 23)
    sdst = Field(22, 16, K.SDST)
    simm16 = Field(15, 0)
    asm_order = ("sdst", "simm16")


class SOP1(Format):
    encoding, op_table = E.SOP1, "SOP1Op"
    ident = Fixed(31, 23, 0b101111101)
    sdst = Field(22, 16, K.SDST)
    op = Field(15, 8)
    ssrc0 = Field(7, 0, K.SSRC)
    asm_order = ("sdst", "ssrc0")


class SOPC(Format):
    encoding, op_table = E.SOPC, "SOPCOp"
    ident = Fixed(31, 23, 0b101111110)
    op = Field(22, 16)
    ssrc1 = Field(15, 8, K.SSRC)
    ssrc0 = Field(7, 0, K.SSRC)
    asm_order = ("ssrc0", "ssrc1")


class SOPP(Format):
    encoding, op_table = E.SOPP, "SOPPOp"
    ident = Fixed(31, 23, 0b101111111)
    op = Field(22, 16)
    simm16 = Field(15, 0)
    asm_order = ("simm16",)


class SMEM(Format):
    encoding, op_table = E.SMEM, "SMEMOp"
    ident = Fixed(31, 26, 0b110000)
    op = Field(25, 18)
    imm = Field(17, 17)
    glc = Field(16, 16)
    nv = Field(15, 15)
    soffset_en = Field(14, 14)
    sdata = Field(12, 6, K.SDST)
    sbase = Field(5, 0, K.SBASE)
    offset = Field(52, 32)
    soffset = Field(63, 57, K.SDST)
    asm_order = ("sdata", "sbase", "soffset")


class VOP2(Format):
    encoding, op_table = E.VOP2, "VOP2Op"
    ident = Fixed(31, 31, 0b0)
    op = Field(30, 25)
    vdst = Field(24, 17, K.VGPR)
    vsrc1 = Field(16, 9, K.VGPR)
    src0 = Field(8, 0, K.SRC)
    asm_order = ("vdst", "src0", "vsrc1")


class VOP1(Format):
    encoding, op_table = E.VOP1, "VOP1Op"
    ident = Fixed(31, 25, 0b0111111)
    vdst = Field(24, 17, K.VGPR)
    op = Field(16, 9)
    src0 = Field(8, 0, K.SRC)
    asm_order = ("vdst", "src0")


class VOPC(Format):
    encoding, op_table = E.VOPC, "VOPCOp"
    ident = Fixed(31, 25, 0b0111110)
    op = Field(24, 17)
    vsrc1 = Field(16, 9, K.VGPR)
    src0 = Field(8, 0, K.SRC)
    asm_order = ("src0", "vsrc1")


class VOP3(Format):
    encoding, op_table = E.VOP3, "VOP3Op"
    ident = Fixed(31, 26, 0b110100)
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
    """VOP3B: VOP3 with a scalar carry-out/condition destination instead of abs/opsel."""

    encoding, op_table = E.VOP3SD, "VOP3SDOp"
    ident = Fixed(31, 26, 0b110100)
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
    ident = Fixed(31, 23, 0b110100111)
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


class DS(Format):
    encoding, op_table = E.DS, "DSOp"
    ident = Fixed(31, 26, 0b110110)
    acc = Field(25, 25)
    op = Field(24, 17)
    gds = Field(16, 16)
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
    sc1 = Field(25, 25)
    nt = Field(17, 17)
    sc0 = Field(16, 16)
    sve = Field(13, 13)
    addr = Field(39, 32, K.VGPR)
    data = Field(47, 40, K.VGPR)
    saddr = Field(54, 48, K.SDST)
    acc = Field(55, 55)
    vdst = Field(63, 56, K.VGPR)
    asm_order = ("vdst", "addr", "data", "saddr")


class FLAT(_FlatBase):
    encoding, op_table = E.FLAT, "FLATOp"
    seg = Fixed(15, 14, 0)
    offset = Field(11, 0)


class GLOBAL(_FlatBase):
    encoding, op_table = E.GLOBAL, "GLOBALOp"
    seg = Fixed(15, 14, 2)
    offset = Field(12, 0)


class SCRATCH(_FlatBase):
    encoding, op_table = E.SCRATCH, "SCRATCHOp"
    seg = Fixed(15, 14, 1)
    offset = Field(12, 0)


class MUBUF(Format):
    encoding, op_table = E.MUBUF, "MUBUFOp"
    ident = Fixed(31, 26, 0b111000)
    op = Field(24, 18)
    nt = Field(17, 17)
    lds = Field(16, 16)
    sc1 = Field(15, 15)
    sc0 = Field(14, 14)
    idxen = Field(13, 13)
    offen = Field(12, 12)
    offset = Field(11, 0)
    vaddr = Field(39, 32, K.VGPR)
    vdata = Field(47, 40, K.VGPR)
    srsrc = Field(52, 48, K.SRSRC)
    acc = Field(55, 55)
    soffset = Field(63, 56, K.SSRC)
    asm_order = ("vdata", "vaddr", "srsrc", "soffset")


class MTBUF(Format):
    encoding, op_table = E.MTBUF, "MTBUFOp"
    ident = Fixed(31, 26, 0b111010)
    nfmt = Field(25, 23)
    dfmt = Field(22, 19)
    op = Field(18, 15)
    sc0 = Field(14, 14)
    idxen = Field(13, 13)
    offen = Field(12, 12)
    offset = Field(11, 0)
    vaddr = Field(39, 32, K.VGPR)
    vdata = Field(47, 40, K.VGPR)
    srsrc = Field(52, 48, K.SRSRC)
    sc1 = Field(53, 53)
    nt = Field(54, 54)
    acc = Field(55, 55)
    soffset = Field(63, 56, K.SSRC)
    asm_order = ("vdata", "vaddr", "srsrc", "soffset")


GFX942: tuple[type[Format], ...] = (
    SOP1, SOPC, SOPP, SOPK, SOP2, SMEM, VOP1, VOPC, VOP2, VOP3P, VOP3, VOP3SD,
    DS, FLAT, GLOBAL, SCRATCH, MUBUF, MTBUF,
)


# gfx90a: the same layouts; the cache-policy bits carry CDNA2's names.


class _Gfx90aFlatBase(_FlatBase):
    sc1 = sc0 = nt = sve = None  # type: ignore[assignment]
    scc = Field(25, 25)
    slc = Field(17, 17)
    glc = Field(16, 16)
    lds = Field(13, 13)


class FLAT_GFX90A(_Gfx90aFlatBase):
    encoding, op_table = E.FLAT, "FLATOp"
    seg = Fixed(15, 14, 0)
    offset = Field(11, 0)


class GLOBAL_GFX90A(_Gfx90aFlatBase):
    encoding, op_table = E.GLOBAL, "GLOBALOp"
    seg = Fixed(15, 14, 2)
    offset = Field(12, 0)


class SCRATCH_GFX90A(_Gfx90aFlatBase):
    encoding, op_table = E.SCRATCH, "SCRATCHOp"
    seg = Fixed(15, 14, 1)
    offset = Field(12, 0)


class MUBUF_GFX90A(MUBUF):
    sc1 = sc0 = nt = None  # type: ignore[assignment]
    slc = Field(17, 17)
    scc = Field(15, 15)
    glc = Field(14, 14)


GFX90A: tuple[type[Format], ...] = (
    SOP1, SOPC, SOPP, SOPK, SOP2, SMEM, VOP1, VOPC, VOP2, VOP3P, VOP3, VOP3SD,
    DS, FLAT_GFX90A, GLOBAL_GFX90A, SCRATCH_GFX90A, MUBUF_GFX90A, MTBUF,
)
