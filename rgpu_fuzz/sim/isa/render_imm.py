"""The special immediate operands of the scalar program-control instructions, as LLVM's
AMDGPUInstPrinter prints them: `s_waitcnt` counters, `s_delay_alu`, `s_waitcnt_depctr`,
`sendmsg`, `hwreg`, `gpr_idx` and `ds_swizzle_b32`'s `swizzle()`, each from its bit layout, which
is per family data (CDNA3 ISA §4.4 "S_WAITCNT", RDNA3 §4.5). `isa.render` places them in an
instruction's text."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from types import MappingProxyType

from rgpu_fuzz.sim.isa.instruction import Instruction
from rgpu_fuzz.sim.isa.tables import tables

# s_waitcnt counter fields per family: (name, ((hi, lo), ...)) low part first.
_WAITCNT: Mapping[str, tuple[tuple[str, tuple[tuple[int, int], ...]], ...]] = MappingProxyType({
    "cdna": (("vmcnt", ((3, 0), (15, 14))), ("expcnt", ((6, 4),)), ("lgkmcnt", ((11, 8),))),
    "rdna3": (("vmcnt", ((15, 10),)), ("expcnt", ((2, 0),)), ("lgkmcnt", ((9, 4),))),
    "rdna4": (("vmcnt", ((15, 10),)), ("expcnt", ((2, 0),)), ("lgkmcnt", ((9, 4),))),
})


# s_delay_alu (RDNA3 ISA §4.5): instid0 3:0, instskip 6:4, instid1 10:7.
_DELAY_ID = ("NO_DEP", "VALU_DEP_1", "VALU_DEP_2", "VALU_DEP_3", "VALU_DEP_4", "TRANS32_DEP_1",
             "TRANS32_DEP_2", "TRANS32_DEP_3", "FMA_ACCUM_CYCLE_1", "SALU_CYCLE_1",
             "SALU_CYCLE_2", "SALU_CYCLE_3")


_DELAY_SKIP = ("SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4")


# s_waitcnt_depctr fields (name, hi, lo), in LLVM's printing order; default = all ones.
_DEPCTR = (("depctr_hold_cnt", 7, 7), ("depctr_sa_sdst", 0, 0), ("depctr_va_vdst", 15, 12),
           ("depctr_va_sdst", 11, 9), ("depctr_va_ssrc", 8, 8), ("depctr_va_vcc", 1, 1),
           ("depctr_vm_vsrc", 4, 2))


_GPR_IDX = ("SRC0", "SRC1", "SRC2", "DST")


def _gpr_idx(mode: int) -> str:
    """s_set_gpr_idx_on/_mode's 4-bit mode as LLVM's `gpr_idx(SRC0,DST)`."""
    return f"gpr_idx({','.join(n for i, n in enumerate(_GPR_IDX) if mode >> i & 1)})"


@functools.cache
def _rtn_messages(family: str) -> Mapping[int, str]:
    """Returning messages by id, from the ISA tables' MSG enum (RDNA3 §4.9)."""
    enum = importlib.import_module(f"tinygrad.runtime.autogen.amd.{family}.enum")
    msg = getattr(enum, "MSG", None)
    return MappingProxyType({m.value: m.name for m in msg} if msg is not None else {})


def _field(value: int, hi: int, lo: int) -> int:
    return (value >> lo) & ((1 << (hi - lo + 1)) - 1)


def _waitcnt(imm: int, family: str) -> str:
    parts = []
    counters = []
    for name, ranges in _WAITCNT[family]:
        value = shift = full = 0
        for hi, lo in ranges:
            value |= _field(imm, hi, lo) << shift
            full |= ((1 << (hi - lo + 1)) - 1) << shift
            shift += hi - lo + 1
        counters.append((name, value, full))
    print_all = all(v == full for _, v, full in counters)
    for name, value, full in counters:
        if value != full or print_all:
            parts.append(f"{name}({value})")
    return " ".join(parts)


def _delay_alu(imm: int) -> str:
    parts = []
    id0, skip, id1 = _field(imm, 3, 0), _field(imm, 6, 4), _field(imm, 10, 7)
    if id0:
        parts.append(f"instid0({_name(_DELAY_ID, id0)})")
    if skip:
        parts.append(f"instskip({_name(_DELAY_SKIP, skip)})")
    if id1:
        parts.append(f"instid1({_name(_DELAY_ID, id1)})")
    return " | ".join(parts) if parts else "0"


def _name(names: tuple[str, ...], i: int) -> str:
    return names[i] if i < len(names) else str(i)


def _depctr(imm: int) -> str:
    parts = []
    for name, hi, lo in _DEPCTR:
        value = _field(imm, hi, lo)
        if value != (1 << (hi - lo + 1)) - 1:
            parts.append(f"{name}({value})")
    return " ".join(parts) if parts else f"0x{imm:x}"


def _sendmsg(imm: int, family: str) -> str:
    """LLVM's sendmsg syntax: a symbolic name for messages without an operation,
    else `sendmsg(id, op, stream)` (CDNA3 ISA §4.7, RDNA3 ISA §4.9 "Messages")."""
    msg, op = _field(imm, 7, 0), _field(imm, 6, 4)
    name = _MESSAGES[family].get(msg)
    if name is not None and imm == msg:
        return f"sendmsg({name})"
    msg = _field(imm, 3, 0) if family == "cdna" else msg
    stream = _field(imm, 9, 8)
    return f"sendmsg({msg}, {op}, {stream})"


_MESSAGES: Mapping[str, Mapping[int, str]] = MappingProxyType({
    "cdna": MappingProxyType({1: "MSG_INTERRUPT", 4: "MSG_SAVEWAVE", 5: "MSG_STALL_WAVE_GEN",
                              6: "MSG_HALT_WAVES", 7: "MSG_ORDERED_PS_DONE",
                              9: "MSG_GS_ALLOC_REQ", 10: "MSG_GET_DOORBELL"}),
    "rdna3": MappingProxyType({1: "MSG_INTERRUPT", 3: "MSG_DEALLOC_VGPRS",
                               6: "MSG_HALT_WAVES", 7: "MSG_ORDERED_PS_DONE",
                               9: "MSG_GS_ALLOC_REQ"}),
    "rdna4": MappingProxyType({1: "MSG_INTERRUPT", 3: "MSG_DEALLOC_VGPRS",
                               6: "MSG_HALT_WAVES", 7: "MSG_ORDERED_PS_DONE",
                               9: "MSG_GS_ALLOC_REQ"}),
})


def _hwreg(inst: Instruction, imm: int) -> str:
    reg, offset, size = _field(imm, 5, 0), _field(imm, 10, 6), _field(imm, 15, 11) + 1
    name = _HWREG_NAMES(inst.target).get(reg, str(reg))
    if offset == 0 and size == 32:
        return f"hwreg({name})"
    return f"hwreg({name}, {offset}, {size})"


def _HWREG_NAMES(target: str) -> Mapping[int, str]:
    import importlib

    family = tables(target).spec.family
    enum = importlib.import_module(f"tinygrad.runtime.autogen.amd.{family}.enum").HWREG
    return {m.value: m.name for m in enum}


def _swizzle(imm: int) -> str:
    """ds_swizzle_b32's offset as LLVM's swizzle() macro (CDNA3 ISA §11.4 DS_SWIZZLE_B32:
    bits 15:8 = 0x80 select QUAD_PERM, bit 15 = 0 the and/or/xor BITMASK_PERM mode)."""
    if imm >> 8 == 0x80:
        return f"swizzle(QUAD_PERM,{','.join(str(imm >> (2 * i) & 3) for i in range(4))})"
    if imm & 0x8000:
        return str(imm)
    and_mask, or_mask, xor_mask = imm & 0x1F, imm >> 5 & 0x1F, imm >> 10 & 0x1F
    if and_mask == 0x1F and or_mask == 0 and xor_mask.bit_count() == 1:
        return f"swizzle(SWAP,{xor_mask})"
    if and_mask == 0x1F and or_mask == 0 and xor_mask and not (xor_mask + 1) & xor_mask:
        return f"swizzle(REVERSE,{xor_mask + 1})"
    group = 0x1F - and_mask + 1
    if group > 1 and not group & (group - 1) and or_mask < group and xor_mask == 0:
        return f"swizzle(BROADCAST,{group},{or_mask})"
    chars = []
    for bit in range(4, -1, -1):
        if and_mask >> bit & 1:
            chars.append("i" if xor_mask >> bit & 1 else "p")
        else:
            chars.append("1" if or_mask >> bit & 1 else "0")
    return f'swizzle(BITMASK_PERM,"{"".join(chars)}")'
