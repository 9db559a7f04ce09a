"""A code object's `.text` decoded for the executor: the project decoder
(`rgpu_fuzz.sim.isa`) over the whole section, each instruction converted once to the
executor's `Inst`, cached per code-object hash.

A campaign decodes a new code object per case, but compiled code repeats itself: across the
conformance kernels at O0 one instruction in eleven is new (21,563 distinct of 240,936), so
the scan below memoises the executor's `Inst` per process by its dwords and decodes only
what it has not seen (`rgpu_fuzz.sim.isa.decode.decode_at`); a hit is the memoised
instruction itself (`Code` holds it with its address apart). What misses is, in order: an
address-bound instruction met at this address, or moved from another (`Inst.relocated`);
a branch with a new offset (`Branches`); an instruction composed from operands decoded
before (`rgpu_fuzz.sim.isa.vop3_memo`: VOP3 and one-dword ALU formats), with a new literal
(`Literals`) or a new memory offset (`Offsets`); only then a full decoding. Each composition
is learnt from full decodings and probes, never assumed from the ISA alone (see each
class), and tests compare every composed instruction with its decoding alone. The
LLVM-syntax text is rendered only when asked for (`Inst.text`: traces, faults, `--show
asm`), by decoding the instruction's words again at its address.

Measured (O0 batches of 8 cases): per case, ~2,700 instructions, of which a
worker past its first batches still misses ~300 (mostly branches at new addresses and spill
lanes, composed) and fully decodes ~20."""

from __future__ import annotations

import hashlib
import struct
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any, overload

from rgpu_fuzz.sim.isa.decode import clear_memo as clear_decoder_memo
from rgpu_fuzz.sim.isa.decode import decode_at, decode_at_ended, trie_store
from rgpu_fuzz.sim.isa.inst import Inst, Opnd, from_decoded
from rgpu_fuzz.sim.isa.regions import mark_regions
from rgpu_fuzz.sim.isa.tables import tables
from rgpu_fuzz.sim.isa.vop3_memo import AluMemo, Vop3Memo


class Code(Sequence[Inst]):
    """The instructions of a `.text` in address order. Held as the memoised instructions
    (`templates`, each at the address it was first decoded at) and their `addresses` here:
    the executor binds from the templates, and an `Inst` at its own address is made only
    when asked for (a trace, a fault, `--show asm`)."""

    __slots__ = ("addresses", "templates")

    def __init__(self, templates: list[Inst], addresses: list[int]) -> None:
        self.templates = templates
        self.addresses = addresses

    def __len__(self) -> int:
        return len(self.templates)

    @overload
    def __getitem__(self, i: int) -> Inst: ...

    @overload
    def __getitem__(self, i: slice) -> list[Inst]: ...

    def __getitem__(self, i: int | slice) -> Inst | list[Inst]:
        if isinstance(i, slice):
            return [t.at(a) for t, a in zip(self.templates[i], self.addresses[i],
                                            strict=True)]
        return self.templates[i].at(self.addresses[i])

    def __iter__(self) -> Iterator[Inst]:
        """Each instruction at its address, without `Sequence.__iter__`'s call of
        `__getitem__` per index."""
        return map(Inst.at, self.templates, self.addresses)


class Branches:
    """One-dword branches by their upper half (encoding and opcode): a branch whose offset
    was not met before is the branch of the same opcode with the new offset
    (`Inst.branched`), not a new decoding. At O0 a third of what the scan still decoded
    were branches with new offsets (1,815 `s_cbranch_execz` and 2,721 `s_branch` in 160
    cases).

    That an opcode's decoding is its simm16 as the operand and the target it implies is
    found by decoding, not assumed: the first branch of an opcode decoded in full is
    learnt only when `Inst.branched` gives exactly what the decoder gives for it and for
    three other offsets (forward, backward and the most negative); an opcode that fails
    is never composed."""

    __slots__ = ("shapes", "target")

    def __init__(self, target: str) -> None:
        self.target = target
        self.shapes: dict[int, Inst | None] = {}

    def __len__(self) -> int:
        return len(self.shapes)

    def compose(self, word: int, address: int) -> Inst | None:
        """The branch `word` at `address`, or None when its opcode is not learnt."""
        base = self.shapes.get(word >> 16)
        return None if base is None else base.branched(address, word)

    def learn(self, inst: Inst, word: int) -> None:
        """Record `inst`, the full decoding of the address-bound one-dword `word`."""
        key = word >> 16
        if key in self.shapes:
            return
        self.shapes[key] = None
        if ("target" not in inst.mods or len(inst.operands) != 1 or inst.halves
                or inst.origin != (self.target, (word,))):
            return
        for other in (word, word ^ 0x0001, word ^ 0x8001, (word & ~0xFFFF) | 0x8000):
            try:
                alone = from_decoded(decode_at((other,), 0, self.target, inst.address))
            except KeyError:
                return
            if alone != inst.branched(inst.address, other):
                return
        self.shapes[key] = inst


_CACHE: OrderedDict[str, Code] = OrderedDict()
_CACHE_SIZE = 64
class Literals:
    """Instructions whose last dword is a literal, by their first dword: one met with a
    literal not seen before is the instruction of the same first dword with the new value
    (`Inst.with_literal`), not a new decoding. At O0, a third of what the scan still
    decoded were `s_add_u32`, `s_mov_b32` and `v_mov_b32` with new literals (frame offsets,
    constants).

    Found by decoding, not assumed: the first instruction of a first dword decoded in full
    is learnt only when it has one operand marked as a literal, whose bits are the last
    dword, and `Inst.with_literal` gives exactly what the decoder gives for three other
    literal values; a first dword that fails is never composed. The other dwords (a
    gfx11 VOP3's second) must equal the learnt instruction's."""

    __slots__ = ("shapes", "target")

    def __init__(self, target: str) -> None:
        self.target = target
        self.shapes: dict[int, tuple[Inst, int] | None] = {}

    def __len__(self) -> int:
        return len(self.shapes)

    def compose(self, words: tuple[int, ...], i: int, address: int) -> Inst | None:
        """The instruction at `words[i]` and `address`, or None when its first dword is not
        learnt or its other dwords differ."""
        shape = self.shapes.get(words[i])
        if shape is None:
            return None
        base, slot = shape
        k = base.size >> 2
        own = words[i:i + k]
        if len(own) != k or own[:-1] != base.share_key[1][:-1]:
            return None
        return base.with_literal(slot, own, address)

    def learn(self, inst: Inst) -> None:
        """Record `inst`, a shared instruction decoded in full."""
        words = inst.share_key[1]
        if words[0] in self.shapes or len(words) < 2:
            return
        self.shapes[words[0]] = None
        slots = [k for k, op in enumerate(inst.operands) if op.literal]
        if len(slots) != 1 or inst.halves or type(inst.operands[slots[0]]) is not Opnd or \
                inst.operands[slots[0]].value != words[-1] or inst.size != 4 * len(words):
            return
        for flip in (0x00000001, 0x80000000, 0xFFFFFFFF):
            other = (*words[:-1], words[-1] ^ flip)
            try:
                alone = from_decoded(decode_at(other, 0, self.target, inst.address))
            except KeyError:
                return
            if alone != inst.with_literal(slots[0], other, inst.address):
                return
        self.shapes[words[0]] = (inst, slots[0])


class Offsets:
    """Memory instructions (FLAT, GLOBAL, SCRATCH, MUBUF) by their dwords less the offset
    field: one met with an offset not seen before is the instruction of the same other
    bits with the new `offset` modifier (`Inst.with_offset`). At O0, after the other memos,
    scratch spills and reloads at new frame offsets were the largest group the scan still
    decoded.

    The field's bits are the decoder's own (`Format.fields["offset"]` of the format, where
    it lies in dword 0); how its value becomes the modifier (as is, or sign-extended) is
    found by decoding: a shape is learnt the second time it is decoded in full, when one
    reading makes `Inst.with_offset` give exactly what the decoder gives for both
    instructions and for three probe offsets (the field's lowest bit, its top bit and all
    its bits flipped); a shape that fails is never composed."""

    __slots__ = ("fields", "first", "shapes", "target")

    def __init__(self, target: str) -> None:
        self.target = target
        self.fields: dict[str, tuple[int, int]] = {}
        """Per encoding: (lowest bit, width) of its offset field."""
        for fmt in tables(target).spec.formats:
            f = fmt.fields.get("offset")
            if fmt.encoding.value in _OFFSET_FORMATS and f is not None and f.hi < 32:
                self.fields[fmt.encoding.value] = (f.lo, f.width)
        self.first: dict[tuple[str, int, int], Inst] = {}
        self.shapes: dict[tuple[str, int, int], tuple[Inst, bool] | None] = {}

    def __len__(self) -> int:
        return len(self.first) + len(self.shapes)

    def compose(self, w0: int, w1: int, address: int) -> Inst | None:
        """The two-dword instruction (w0, w1) at `address`, or None when its shape is not
        learnt."""
        for enc, (lo, width) in self.fields.items():
            mask = ((1 << width) - 1) << lo
            shape = self.shapes.get((enc, w0 & ~mask, w1))
            if shape is not None:
                base, signed = shape
                return base.with_offset(address, (w0, w1),
                                        _offset(w0 >> lo & (mask >> lo), width, signed))
        return None

    def learn(self, inst: Inst, address: int) -> None:
        """Record `inst`, a shared two-dword instruction decoded in full at `address`."""
        field = self.fields.get(inst.encoding)
        if field is None or inst.halves or "offset" not in inst.mods:
            return
        w0, w1 = inst.share_key[1]
        lo, width = field
        mask = ((1 << width) - 1) << lo
        key = (inst.encoding, w0 & ~mask, w1)
        if key in self.shapes:
            return
        first = self.first.pop(key, None)
        if first is None:
            self.first[key] = inst
            return
        self.shapes[key] = None
        raw = w0 >> lo & (mask >> lo)
        probes = [(first, first.share_key[1][0]), (inst, w0)]
        for flip in (1, 1 << (width - 1), (1 << width) - 1):
            words = ((w0 & ~mask) | ((raw ^ flip) << lo), w1)
            try:
                probes.append((from_decoded(decode_at(words, 0, self.target, address)),
                               words[0]))
            except KeyError:
                return
        for signed in (False, True):
            if all(alone == inst.with_offset(alone.address, (word, w1), _offset(
                    word >> lo & (mask >> lo), width, signed)) for alone, word in probes):
                self.shapes[key] = (inst, signed)
                return


_OFFSET_FORMATS = frozenset({"FLAT", "GLOBAL", "SCRATCH", "MUBUF"})


def _offset(raw: int, width: int, signed: bool) -> int:
    """The field value `raw` of `width` bits, as is or sign-extended."""
    return raw - (raw >> (width - 1) << width) if signed else raw


class _Memo:
    """The scan's memo of one target.

    `known`: the shared instructions (`Inst.share_key`) as a trie of their dwords: the
    first dword maps to the instruction when it takes one dword (decided by the first:
    a literal or an extension dword follows only for a field of the first), else to a
    dict of the second dword, and so on. A hit costs one dict lookup per dword, where a
    dict by dword tuple cost a slice, a tuple hash and the sizes seen for the first dword.
    `at_address`: the address-bound instructions by (address, dword) and by dword;
    `vop3` and `alu`: the operand-level memos of VOP3 and one-dword ALU instructions
    (`rgpu_fuzz.sim.isa.vop3_memo`);
    `branches`: the branches by opcode (`Branches`); `literals`: instructions with a
    literal by their first dword (`Literals`); `offsets`: memory instructions by their
    bits other than the offset (`Offsets`). `stored` counts the instructions in
    `known`."""

    __slots__ = ("alu", "at_address", "branches", "known", "literals", "offsets", "stored",
                 "vop3")

    def __init__(self, target: str) -> None:
        self.known: dict[int, Any] = {}
        self.at_address: dict[tuple[int, int] | int, Inst] = {}
        self.vop3 = Vop3Memo(target)
        self.alu = AluMemo(target)
        self.branches = Branches(target)
        self.literals = Literals(target)
        self.offsets = Offsets(target)
        self.stored = 0

    def __len__(self) -> int:
        return (self.stored + len(self.at_address) + len(self.vop3) + len(self.alu)
                + len(self.branches) + len(self.literals) + len(self.offsets))

    def store(self, inst: Inst) -> None:
        """Memoise the shared `inst` by its dwords."""
        if trie_store(self.known, inst.share_key[1], inst):
            self.stored += 1


_MEMO: dict[str, _Memo] = {}
"""Per target, the scan's memo."""
_MEMO_LIMIT = 200_000


def decode_text(co: Any, kernel: Any = None) -> Code:
    """Every instruction of `co.text` (a `rgpu_fuzz.codeobj.reader.CodeObject`); its
    LLVM-syntax text is rendered when asked for (`Inst.text`)."""
    data = co.text_bytes
    section = co.text
    address = section.addr if section is not None else 0
    # The load address is part of the key: decoded instructions carry their addresses, and
    # two code objects can hold the same `.text` bytes at different addresses (an empty
    # kernel at O0 and at O3): without it, the second launch ran the first one's addresses
    # and faulted (`sim-oob-access`, found by `make fuzz`).
    key = hashlib.sha256(data + co.target.name.encode() + b"@%d" % address).hexdigest()
    got = _CACHE.get(key)
    if got is not None:
        _CACHE.move_to_end(key)
        return got
    got = scan(data, co.target.name, address)
    _CACHE[key] = got
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return got


def scan(data: bytes, target: str, base_address: int) -> Code:
    """The instructions of `data` (a `.text` section loaded at `base_address`), in order."""
    n = len(data) // 4
    words = struct.unpack_from(f"<{n}I", data) if n else ()
    memo = _MEMO.get(target)
    if memo is None or len(memo) > _MEMO_LIMIT:
        memo = _MEMO[target] = _Memo(target)
    get = memo.known.get
    out: list[Inst] = []
    addresses: list[int] = []
    append = out.append
    append_address = addresses.append
    i = 0
    while i < n:
        inst = get(words[i])
        if inst.__class__ is not Inst:
            j = i + 1
            while inst.__class__ is dict and j < n:
                inst = inst.get(words[j])
                j += 1
            if inst.__class__ is not Inst:
                inst = _miss(memo, words, i, target, base_address + 4 * i)
        append(inst)
        append_address(base_address + 4 * i)
        i += inst.size >> 2
    mark_regions(out, target)
    return Code(out, addresses)


def _miss(memo: _Memo, words: tuple[int, ...], i: int, target: str, address: int) -> Inst:
    """The instruction at `words[i]` (at `address`) that `memo.known` does not hold."""
    w0 = words[i]
    # branches and the like (one dword each) are memoised at their address: code objects of
    # a campaign load at the same addresses; at another address, the instruction with the
    # same dword is moved there (`Inst.relocated`), one with another offset is composed
    # (`Branches`)
    at_address = memo.at_address
    at = (address, w0)
    inst = at_address.get(at)
    if inst is not None:
        return inst
    inst = at_address.get(w0)
    if inst is not None:
        inst = at_address[at] = inst.relocated(address)
        return inst
    inst = memo.branches.compose(w0, address)
    if inst is not None:
        at_address[at] = at_address[w0] = inst
        return inst
    inst = memo.vop3.compose(w0, words[i + 1], address) if i + 1 < len(words) else None
    if inst is None:
        inst = memo.literals.compose(words, i, address)
    if inst is None:
        inst = memo.alu.compose(w0, address)
    if inst is None and i + 1 < len(words):
        inst = memo.offsets.compose(w0, words[i + 1], address)
    if inst is None:
        decoded, ended = decode_at_ended(words, i, target, address)
        inst = from_decoded(decoded)
        if ended:
            # cut off by the end of `words` (a literal past the section's end): this
            # decoding holds only here, so nothing learns or keeps it
            return inst
        if not inst.share_key:
            if inst.size == 4:
                at_address[at] = at_address[w0] = inst
                memo.branches.learn(inst, w0)
        elif inst.size == 4:
            memo.alu.learn(inst, w0, address)
        else:
            if inst.size == 8:
                memo.vop3.learn(inst, w0, words[i + 1], address)
                memo.offsets.learn(inst, address)
            memo.literals.learn(inst)
    if inst.share_key:
        memo.store(inst)
    return inst


def clear_memo() -> None:
    """Forgets every memoised instruction (benchmarks measure cold decoding with it)."""
    _MEMO.clear()
    _CACHE.clear()
    clear_decoder_memo()
