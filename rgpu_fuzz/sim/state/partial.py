"""Which bits of a 32-bit VALU source an instruction can observe, where that is fixed by the
instruction itself: `v_cvt_f32_ubyte1 v0, v1` reads byte 1 of v1 only, `v_and_b32 v0, 0xff,
v1` the low byte, `v_lshlrev_b32 v0, 16, v1` the low half. A source counts as defined when
those bits are (`halves.bits_defined`), not the whole register.

Why: with true16 (GFX11) LLVM leaves the other half of a VGPR undefined after 16-bit
operations and then uses such 32-bit instructions on it (CDNA3/RDNA3 ISA pseudocode:
V_CVT_F32_UBYTE1 D = S0[15:8]; V_BFE_U32 D = (S0 >> S1[4:0]) & ((1 << S2[4:0]) - 1);
V_BFE_I32 the same bits, sign-extended; V_LSHLREV_B64 D = S1 << S0[5:0])."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rgpu_fuzz.sim.isa.inst import Inst, OpKind
from rgpu_fuzz.sim.state.halves import FULL, bits_defined
from rgpu_fuzz.sim.state.wave import AGPR_BASE, Wave

Getter = Callable[[Wave], Any]


def _const(op: Any) -> int | None:
    if op.kind in (OpKind.INT, OpKind.BITS) and not op.neg and not op.abs:
        return int(op.value) & FULL
    return None


def _ubyte(k: int) -> Callable[[Sequence[Any]], list[int | None]]:
    return lambda srcs: [0xFF << (8 * k)]


def _and(srcs: Sequence[Any]) -> list[int | None]:
    a, b = (_const(s) for s in srcs)
    return [b, a]  # each source: the other's constant bits, where it is a constant


def _shl(srcs: Sequence[Any]) -> list[int | None]:
    s = _const(srcs[0])
    return [None, None if s is None else FULL >> (s & 31)]


def _shr(srcs: Sequence[Any]) -> list[int | None]:
    s = _const(srcs[0])
    return [None, None if s is None else (FULL << (s & 31)) & FULL]


def _bfe(srcs: Sequence[Any]) -> list[int | None]:
    off, width = _const(srcs[1]), _const(srcs[2])
    if off is None or width is None:
        return [None, None, None]
    off, width = off & 31, width & 31
    return [((1 << width) - 1) << off & FULL, None, None]


READS: dict[str, Callable[[Sequence[Any]], list[int | None]]] = {
    **{f"V_CVT_F32_UBYTE{k}": _ubyte(k) for k in range(4)},
    "V_AND_B32": _and,
    "V_LSHLREV_B32": _shl,
    "V_LSHRREV_B32": _shr,
    "V_BFE_U32": _bfe,
    "V_BFE_I32": _bfe,
    # 64-bit shifts read S0[5:0] of the amount (`D = S1 << S0[5:0]`): true16 code leaves the
    # amount's high half undefined (`v_mov_b16 v3.h, s2` then `v_lshlrev_b64 v[3:4], v3,
    # s[2:3]`, gfx1100 O0)
    **{op: (lambda srcs: [0x3F, None])
       for op in ("V_LSHLREV_B64", "V_LSHRREV_B64", "V_ASHRREV_I64")},
}
"""Opcode → per-source mask of the bits read (None: all, or not known statically)."""


def narrowed(inst: Inst, srcs: list[tuple[Getter, Getter]]) -> list[tuple[Getter, Getter]]:
    """`srcs` (value, defined) of `inst`'s sources with the defined getter of each VGPR source
    narrowed to the bits the instruction reads."""
    rule = READS.get(inst.opcode)
    if rule is None:
        return srcs
    ops = inst.operands[1:1 + len(srcs)]
    masks = rule(ops)
    out = list(srcs)
    for k, (op, mask) in enumerate(zip(ops, masks, strict=False)):
        if mask is None or mask == FULL or op.kind not in (OpKind.VGPR, OpKind.AGPR) \
                or bool(getattr(op, "sel", "")) or op.count != 1:
            continue
        col = op.index + (AGPR_BASE if op.kind is OpKind.AGPR else 0)
        out[k] = (srcs[k][0], (lambda c, m: lambda w: bits_defined(w, c, m))(col, mask))
    return out
