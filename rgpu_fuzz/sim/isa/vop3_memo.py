"""An operand-level memo for the decoder's commonest misses: two-dword VOP3 instructions
(VOP3, VOP3SD, VOP3P) that differ from one decoded before only in their register and
inline-constant fields.

`rgpu_fuzz.sim.isa.code` memoises instructions by their dwords, and at O0 half of what it still
decodes is `v_writelane_b32`/`v_readlane_b32` (SGPR spills): one dword fixes the opcode
and modifiers, the other names an SGPR and a lane, and their combinations are new in every
case (7,069 writelanes of 467 (first dword, SGPR) and 1,363 (first dword, lane) pairs in 64
O0 cases). What the fields of such an instruction decode to does not depend on each other:
in all three formats `vdst` is bits 7:0 of the first dword and `src0`/`src1`/`src2` are
9-bit fields at bits 8:0, 17:9, 26:18 of the second (CDNA3 ISA §12.3 "VOP3A", §12.4
"VOP3P"; RDNA3 ISA §15.3.3); the other bits (opcode, clamp, abs, op_sel, neg, omod) are
the instruction's `shape`. So the memo keeps, per shape, one decoded instruction and the
operand each (field, value) decoded to, and builds a new combination from them.

Which operand a field fills is found by decoding, not assumed: when a shape is met the
second time, each field of the first instruction is changed alone (a probe, decoded in
full) and the operand that changed is that field's. A field that changes several operands,
or the opcode, encoding or modifiers, is never substituted. Values that can change an
instruction's size or format (a literal, 255; the DPP/SDWA selectors 233, 234, 249, 250)
are never substituted either. Only what the decoder produced is reused: an (field, value)
pair not seen in a full decoding of the shape sends the instruction to the decoder."""

from __future__ import annotations

from dataclasses import dataclass, field

from rgpu_fuzz.sim.isa.decode import decode_at
from rgpu_fuzz.sim.isa.inst import Inst, Opnd, from_decoded

FAMILY = frozenset({"VOP3", "VOP3SD", "VOP3P"})
SELECTORS = frozenset({233, 234, 249, 250, 255})
"""Source values that add a dword or change the format (literal, DPP8, DPP16, SDWA)."""
INERT = -1
"""A field that changes no operand (the unused `src2` of a two-source opcode)."""
FIXED = -2
"""A field that cannot be substituted: composed only when it keeps the shape's value."""

_VOP3_SOURCES = (False, True, True, True)
"""Which of `fields` are sources (vdst is not)."""


def fields(w0: int, w1: int) -> tuple[int, int, int, int]:
    """(vdst, src0, src1, src2) of a two-dword VOP3-family instruction."""
    return w0 & 0xFF, w1 & 0x1FF, (w1 >> 9) & 0x1FF, (w1 >> 18) & 0x1FF


def shape_of(w0: int, w1: int) -> tuple[int, int]:
    """The bits that are not `fields`: the opcode, its format and the modifiers."""
    return w0 >> 8, w1 >> 27


@dataclass(slots=True)
class Shape:
    base: Inst
    values: tuple[int, ...]
    slots: tuple[int, ...]
    """Per field: the index in `Inst.operands` it decodes to, `INERT` or `FIXED`."""
    operands: dict[tuple[int, int], Opnd] = field(default_factory=dict)
    """(field, value) → the operand a full decoding gave for it."""

    def same_kind(self, inst: Inst) -> bool:
        b = self.base
        return (inst.opcode == b.opcode and inst.encoding == b.encoding
                and inst.size == b.size and inst.mods == b.mods
                and inst.mnemonic == b.mnemonic and len(inst.operands) == len(b.operands)
                and not inst.halves and bool(inst.share_key))

    def substituted(self, values: tuple[int, ...],
                    sources: tuple[bool, ...]) -> tuple[Opnd, ...] | None:
        """The base's operands with each field's value in its slot, or None where a field
        is `FIXED`, a source selects another dword or format, or a (field, value) pair was
        never decoded in this shape (both memos compose through this one loop)."""
        ops: list[Opnd] | None = None
        for n, value in enumerate(values):
            if value == self.values[n]:
                continue
            slot = self.slots[n]
            if slot == FIXED or (sources[n] and value in SELECTORS):
                return None
            if slot == INERT:
                continue
            op = self.operands.get((n, value))
            if op is None:
                return None
            if ops is None:
                ops = list(self.base.operands)
            ops[slot] = op
        return self.base.operands if ops is None else tuple(ops)

    def probe(self, n: int, other: int, words: tuple[int, ...], target: str,
              address: int) -> int:
        """The slot of field `n`, from decoding `words` (the base's, with field `n` set to
        `other`): the one operand that changed, `INERT` when none did, else `FIXED`; the
        operand (n, other) decoded to is recorded. Both memos probe through this."""
        try:
            got = from_decoded(decode_at(words, 0, target, address))
        except KeyError:
            return FIXED        # a value the executor has no register for (lds_direct)
        if not self.same_kind(got):
            return FIXED
        changed = [k for k, (a, b) in enumerate(zip(got.operands, self.base.operands,
                                                    strict=True)) if a != b]
        slot = INERT if not changed else changed[0] if len(changed) == 1 else FIXED
        if slot >= 0:
            self.operands[(n, other)] = got.operands[slot]
        return slot

    def learn(self, inst: Inst, values: tuple[int, ...]) -> None:
        if not self.same_kind(inst):
            return
        for n, slot in enumerate(self.slots):
            if slot >= 0:
                self.operands[(n, values[n])] = inst.operands[slot]


class Vop3Memo:
    """The operand-level memo of one target."""

    __slots__ = ("first", "shapes", "target")

    def __init__(self, target: str) -> None:
        self.target = target
        self.first: dict[tuple[int, int], Inst] = {}
        """Shapes met once: their instruction (probing a shape met once costs more than it
        saves)."""
        self.shapes: dict[tuple[int, int], Shape | None] = {}

    def __len__(self) -> int:
        return len(self.first) + sum(len(s.operands) for s in self.shapes.values() if s)

    def compose(self, w0: int, w1: int, address: int) -> Inst | None:
        """The instruction (w0, w1) at `address` built from operands decoded before, or
        None when some field's value was not decoded in this shape."""
        shape = self.shapes.get(shape_of(w0, w1))
        if shape is None:
            return None
        ops = shape.substituted(fields(w0, w1), _VOP3_SOURCES)
        if ops is None:
            return None
        return shape.base.derived(address, ops, (self.target, (w0, w1)))

    def learn(self, inst: Inst, w0: int, w1: int, address: int) -> None:
        """Record `inst`, the full decoding of (w0, w1) at `address`."""
        if inst.encoding not in FAMILY or inst.size != 8 or inst.halves or not inst.share_key:
            return
        key = shape_of(w0, w1)
        shape = self.shapes.get(key)
        if shape is None:
            if key in self.shapes:
                return
            first = self.first.pop(key, None)
            if first is None:
                self.first[key] = inst
                return
            shape = self.shapes[key] = _probe(first, self.target, address)
            if shape is None:
                return
        shape.learn(inst, fields(w0, w1))


def _probe(base: Inst, target: str, address: int) -> Shape | None:
    """The shape of `base` with the operand index of each field, found by decoding `base`
    with that field changed alone (at `address`: VOP3 decodes alike anywhere)."""
    w0, w1 = base.share_key[1]
    values = fields(w0, w1)
    if any(v in SELECTORS for v in values[1:]):
        return None
    shape = Shape(base, values, (FIXED,) * 4)
    slots = []
    for n, value in enumerate(values):
        other = value ^ 1
        if n and other in SELECTORS:
            other = value ^ 2
        if n == 0:
            words = ((w0 & ~0xFF) | other, w1)
        else:
            shift = 9 * (n - 1)
            words = (w0, (w1 & ~(0x1FF << shift)) | (other << shift))
        slots.append(shape.probe(n, other, words, target, address))
    shape.slots = (slots[0], slots[1], slots[2], slots[3])
    shape.learn(base, values)
    return shape


ONE_DWORD: dict[str, tuple[tuple[int, int, bool], ...]] = {
    "SOP2": ((16, 0x7F, False), (0, 0xFF, True), (8, 0xFF, True)),
    "SOP1": ((16, 0x7F, False), (0, 0xFF, True)),
    "SOPC": ((0, 0xFF, True), (8, 0xFF, True)),
    "VOP2": ((17, 0xFF, False), (0, 0x1FF, True), (9, 0xFF, False)),
    "VOP1": ((17, 0xFF, False), (0, 0x1FF, True)),
    "VOPC": ((0, 0x1FF, True), (9, 0xFF, False)),
}
"""The register and constant fields of the one-dword ALU formats as (shift, mask, whether a
source: its `SELECTORS` values add a literal or an SDWA/DPP dword): SOP2 sdst 22:16, ssrc1
15:8, ssrc0 7:0; SOP1 sdst 22:16, ssrc0 7:0; SOPC ssrc1 15:8, ssrc0 7:0 (CDNA3 ISA §12.1,
RDNA3 ISA §15.1); VOP2 vdst 24:17, vsrc1 16:9, src0 8:0; VOP1 vdst 24:17, src0 8:0; VOPC
vsrc1 16:9, src0 8:0 (CDNA3 §12.2, RDNA3 §15.3). The other bits (encoding, opcode) are the
shape."""
_SOURCES = {enc: tuple(source for _, _, source in fs) for enc, fs in ONE_DWORD.items()}
_KEEP = {enc: 0xFFFFFFFF & ~sum(mask << shift for shift, mask, _ in fs)
         for enc, fs in ONE_DWORD.items()}


class AluMemo:
    """The operand-level memo of the one-dword ALU instructions of one target (SOP1, SOP2,
    SOPC, VOP1, VOP2, VOPC): at O0 most of what the scan still decoded after `Vop3Memo`
    were these with a new combination of registers (`s_mul_i32`, `s_mov_b32`,
    `v_mov_b32`, `s_addc_u32` ...). Same method as `Vop3Memo`: per shape (the bits
    outside the fields), one decoded instruction, which operand each field fills (found
    by probes when a shape is met the second time) and the operand each (field, value)
    decoded to; a pair not seen in a full decoding sends the instruction to the decoder.
    A word is looked up under each format's shape: a shape holds its encoding's bits, so
    it only matches a word of that format and opcode."""

    __slots__ = ("first", "shapes", "target")

    def __init__(self, target: str) -> None:
        self.target = target
        self.first: dict[tuple[str, int], Inst] = {}
        self.shapes: dict[tuple[str, int], Shape | None] = {}

    def __len__(self) -> int:
        return len(self.first) + sum(len(s.operands) for s in self.shapes.values() if s)

    def compose(self, w0: int, address: int) -> Inst | None:
        """The one-dword instruction `w0` at `address` built from operands decoded before,
        or None."""
        shapes = self.shapes
        for enc, keep in _KEEP.items():
            shape = shapes.get((enc, w0 & keep))
            if shape is not None:
                break
        else:
            return None
        ops = shape.substituted(tuple(w0 >> shift & mask for shift, mask, _ in ONE_DWORD[enc]),
                                _SOURCES[enc])
        if ops is None:
            return None
        return shape.base.derived(address, ops, (self.target, (w0,)))

    def learn(self, inst: Inst, w0: int, address: int) -> None:
        """Record `inst`, the full decoding of the one-dword `w0` at `address`."""
        enc = inst.encoding
        fs = ONE_DWORD.get(enc)
        if fs is None or inst.size != 4 or inst.halves or not inst.share_key:
            return
        key = (enc, w0 & _KEEP[enc])
        shape = self.shapes.get(key)
        if shape is None:
            if key in self.shapes:
                return
            first = self.first.pop(key, None)
            if first is None:
                self.first[key] = inst
                return
            shape = self.shapes[key] = _probe_one(first, fs, self.target, address)
            if shape is None:
                return
        shape.learn(inst, tuple(w0 >> shift & mask for shift, mask, _ in fs))


def _probe_one(base: Inst, fs: tuple[tuple[int, int, bool], ...], target: str,
               address: int) -> Shape | None:
    """`_probe` for a one-dword instruction of the format whose fields are `fs`."""
    (w0,) = base.share_key[1]
    values = tuple(w0 >> shift & mask for shift, mask, _ in fs)
    if any(v in SELECTORS for v, (_, _, source) in zip(values, fs, strict=True) if source):
        return None
    shape = Shape(base, values, (FIXED,) * len(fs))
    slots = []
    for n, (value, (shift, mask, source)) in enumerate(zip(values, fs, strict=True)):
        other = value ^ 1
        if source and other in SELECTORS:
            other = value ^ 2
        slots.append(shape.probe(n, other, ((w0 & ~(mask << shift)) | other << shift,),
                                 target, address))
    shape.slots = tuple(slots)
    shape.learn(base, values)
    return shape


__all__ = ["FAMILY", "ONE_DWORD", "SELECTORS", "AluMemo", "Shape", "Vop3Memo", "fields",
           "shape_of"]
