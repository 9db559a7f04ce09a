"""Operand decoding: a field's raw value plus the opcode's operand type → an `Operand`.

The scalar operand code space (0-255) and the 9-bit vector-ALU source space (256-511 are
VGPRs) are described in the CDNA3 ISA guide §3.2 "Scalar Operands"/§6.1 and the RDNA3
guide §3.3/§7.2: SGPRs, TTMPs and named registers, inline integers 0..64 and -1..-16
(codes 128-208), inline floats (240-248), and 255 for a literal dword that follows the
instruction.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from rgpu_fuzz.sim.isa.instruction import Operand, OperandKind, Special
from rgpu_fuzz.sim.isa.tables import OperandType, TargetSpec

__all__ = ["LITERAL_CODE", "Undecodable", "inline_float_bits", "operand_count", "scalar",
           "vgpr"]

LITERAL_CODE = 255
_TTMP = range(108, 124)
_INT_POS = range(128, 193)        # 0 .. 64
_INT_NEG = range(193, 209)        # -1 .. -16

# Inline float constants (codes 240-248) as bits at 16, 32 and 64 bits; code 248 is
# 1/(2*pi), which gfx8+ has (CDNA3 ISA §3.2 table "Scalar Operands", RDNA3 §3.3).
_FLOATS: Mapping[int, tuple[int, int, int]] = MappingProxyType({
    240: (0x3800, 0x3F000000, 0x3FE0000000000000),   # 0.5
    241: (0xB800, 0xBF000000, 0xBFE0000000000000),   # -0.5
    242: (0x3C00, 0x3F800000, 0x3FF0000000000000),   # 1.0
    243: (0xBC00, 0xBF800000, 0xBFF0000000000000),   # -1.0
    244: (0x4000, 0x40000000, 0x4000000000000000),   # 2.0
    245: (0xC000, 0xC0000000, 0xC000000000000000),   # -2.0
    246: (0x4400, 0x40800000, 0x4010000000000000),   # 4.0
    247: (0xC400, 0xC0800000, 0xC010000000000000),   # -4.0
    248: (0x3118, 0x3E22F983, 0x3FC45F306DC9C882),   # 1/(2*pi)
})


class Undecodable(Exception):
    """A field names nothing on this target; the decoder turns it into UNKNOWN."""


def operand_count(optype: OperandType | None, spec: TargetSpec) -> int:
    """Dwords an operand of this type occupies (a lane mask is one per 32 lanes)."""
    if optype is None:
        return 1
    if optype.fmt == "FMT_NUM_M64":
        return spec.wave_size // 32
    return max(1, optype.bits // 32)


def inline_float_bits(code: int, width: int) -> int:
    """The bits an inline float constant reads as at `width` (16, 32, 64)."""
    f16, f32, f64 = _FLOATS[code]
    return f64 if width == 64 else f16 if width == 16 else f32


def _width(optype: OperandType | None) -> int:
    if optype is None:
        return 32
    return 16 if optype.bits == 16 else 64 if optype.bits == 64 else 32


_MEMO_LIMIT = 50_000
_SCALARS: dict[tuple[int, OperandType | None, str, int | None], Operand] = {}
_VGPRS: dict[tuple[int, OperandType | None, int, bool, bool], Operand] = {}


def scalar(code: int, optype: OperandType | None, spec: TargetSpec,
           literal: int | None = None) -> Operand:
    """A scalar operand code (0-255): register, named register or constant.

    Memoised: an operand is a frozen value, and a campaign's new instructions mostly
    name operands seen before (only a literal's value is part of the key when the code
    is the literal's)."""
    key = (code, optype, spec.name, literal if code == LITERAL_CODE else None)
    got = _SCALARS.get(key)
    if got is None:
        if len(_SCALARS) > _MEMO_LIMIT:
            _SCALARS.clear()
        got = _SCALARS[key] = _scalar(code, optype, spec, literal)
    return got


def _scalar(code: int, optype: OperandType | None, spec: TargetSpec,
            literal: int | None) -> Operand:
    count = operand_count(optype, spec)
    width = _width(optype)
    mask = (1 << width) - 1
    if code < spec.sgprs:
        return Operand(kind=OperandKind.SGPR, index=code, count=count)
    if code in _TTMP:
        return Operand(kind=OperandKind.TTMP, index=code - _TTMP.start, count=count)
    special = spec.specials.get(code)
    if special is not None:
        return Operand(kind=OperandKind.SPECIAL, index=special, count=count)
    if code in _INT_POS:
        return Operand(kind=OperandKind.INLINE_INT, value=code - 128, width=width, count=count)
    if code in _INT_NEG:
        return Operand(kind=OperandKind.INLINE_INT, value=(192 - code) & mask, width=width,
                       count=count)
    if code in _FLOATS:
        return Operand(kind=OperandKind.INLINE_FLOAT, value=inline_float_bits(code, width),
                       width=width, count=count)
    if code == LITERAL_CODE and literal is not None:
        value = literal
        if width == 64 and optype is not None and _is_float(optype):
            value = literal << 32     # an f64 literal gives the high dword (CDNA3 ISA §6.1.2)
        elif width == 16:
            value = literal & 0xFFFF  # a 16-bit operand reads the literal's low half
        return Operand(kind=OperandKind.LITERAL, value=value, width=width, count=count)
    raise Undecodable(f"scalar operand code {code}")


def _is_float(optype: OperandType) -> bool:
    return optype.fmt.startswith(("FMT_NUM_F", "FMT_NUM_BF"))


def vgpr(index: int, optype: OperandType | None, spec: TargetSpec, *, acc: bool = False,
         packed_half: bool = False) -> Operand:
    """A VGPR (or, with the format's acc bit or an AGPR operand type, AGPR) range.

    `packed_half`: the field is a true16 16-bit operand of a 32-bit encoding, whose bit 7
    selects the high half of VGPR `index & 127` (RDNA3 ISA §7.3 "16-bit VGPRs").
    Memoised as `scalar` is.
    """
    key = (index, optype, spec.wave_size, acc, packed_half)
    got = _VGPRS.get(key)
    if got is None:
        if len(_VGPRS) > _MEMO_LIMIT:
            _VGPRS.clear()
        got = _VGPRS[key] = _vgpr(index, optype, spec, acc, packed_half)
    return got


def _vgpr(index: int, optype: OperandType | None, spec: TargetSpec, acc: bool,
          packed_half: bool) -> Operand:
    if optype is not None and optype.type in ("OPR_ACCVGPR", "OPR_SRC_ACCVGPR"):
        acc = True
    kind = OperandKind.AGPR if acc else OperandKind.VGPR
    width = _width(optype)
    hi = False
    if packed_half and width == 16:
        index, hi = index & 0x7F, bool(index >> 7)
    return Operand(kind=kind, index=index, count=operand_count(optype, spec), width=width, hi=hi)


def special(which: Special, count: int = 1) -> Operand:
    """A named register operand."""
    return Operand(kind=OperandKind.SPECIAL, index=which, count=count)
