"""Decodes a `.text` section into `Instruction`s, driven by the target's tables.

The steps per instruction: find the format whose identifying bits match dword 0 and
whose opcode table has the opcode (here); then (`isa.decoder._Decoder`) gather its dwords
(plus an SDWA/DPP extension dword and a literal dword where the operands ask for one) and
turn each operand field into an `Operand` using the opcode's operand types. An undecodable
dword becomes an `UNKNOWN` instruction of 4 bytes, so one bad word never hides the rest of
the section.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any

from rgpu_fuzz.codeobj import CodeObject
from rgpu_fuzz.sim.isa.decode_plan import Plan, plan
from rgpu_fuzz.sim.isa.decode_plan import forget as forget_decode_plans
from rgpu_fuzz.sim.isa.decoder import K_CONSTANT, _Decoder, _Ended
from rgpu_fuzz.sim.isa.formats import (
    Format,
)
from rgpu_fuzz.sim.isa.instruction import Encoding, Instruction
from rgpu_fuzz.sim.isa.operands import (
    Undecodable,
)
from rgpu_fuzz.sim.isa.tables import OpInfo, TargetTables, tables

__all__ = ["K_CONSTANT", "clear_memo", "decode", "decode_at", "decode_at_ended",
           "decode_code_object", "forget_plans", "trie_store"]


def decode(text: bytes, target: str, base_address: int = 0) -> tuple[Instruction, ...]:
    """Decodes every instruction of `text` (a `.text` section) for `target`.

    Decoded instructions are memoised per process by their words (compiled code repeats
    instructions within and across code objects); a hit is the cached instruction moved to
    its address. Instructions whose decoding depends on their address (branches) or on
    where the section ends (`decode_at_ended`) are not memoised. The memo is a trie of
    dwords, as `rgpu_fuzz.sim.isa.code._Memo.known` is: the first dword maps to the
    instruction when it takes one dword (a literal or extension dword follows only for a
    field of the first), else to a dict of the second dword, and so on.
    """
    t = tables(target)
    n = len(text) // 4
    words = struct.unpack_from(f"<{n}I", text) if n else ()
    memo = _MEMO.get(target)
    if memo is None or memo.stored > _MEMO_LIMIT:
        memo = _MEMO[target] = _Trie()
    get = memo.root.get
    out: list[Instruction] = []
    append = out.append
    i = 0
    while i < n:
        inst = get(words[i])
        j = i + 1
        while inst.__class__ is dict and j < n:
            inst = inst.get(words[j])
            j += 1
        address = base_address + 4 * i
        if inst is None or inst.__class__ is dict:
            inst, ended = _decode_ended(t, words, i, address)
            if "target" not in inst.modifiers and not ended:
                memo.store(inst)
        elif inst.address != address:
            inst = _moved(inst, address)
        append(inst)
        i += inst.size >> 2
    return tuple(out)


def decode_at(words: tuple[int, ...], i: int, target: str, address: int) -> Instruction:
    """Decodes the one instruction that starts at `words[i]` (no memo: callers that scan a
    section keep their own, see `rgpu_fuzz.sim.isa.code`)."""
    return _decode_ended(tables(target), words, i, address)[0]


def decode_at_ended(words: tuple[int, ...], i: int, target: str,
                    address: int) -> tuple[Instruction, bool]:
    """`decode_at`, and whether the decoding depends on where `words` end: a format that
    matched needed dwords past the end (its literal, its extension, its own dwords). Such a
    decoding (most often UNKNOWN) holds only for these words at the end of a section, so
    a memo must not keep it by its own dwords: the same first dword followed by a literal
    in another section is another instruction."""
    return _decode_ended(tables(target), words, i, address)


class _Trie:
    """`decode`'s memo of one target: instructions by their dwords (see `decode`)."""

    __slots__ = ("root", "stored")

    def __init__(self) -> None:
        self.root: dict[int, Any] = {}
        self.stored = 0

    def store(self, inst: Instruction) -> None:
        if trie_store(self.root, inst.words, inst):
            self.stored += 1


def trie_store(root: dict[int, Any], words: Sequence[int], value: Any) -> bool:
    """Put `value` at `words` in a dword trie (nested dicts by dword, an instruction at the
    leaf: the decoder's memo here and the scan's in `code`); False, storing nothing, where a
    prefix of `words` is a whole instruction already or `words` is a prefix of stored ones."""
    node = root
    for w in words[:-1]:
        nxt = node.get(w)
        if nxt is None:
            nxt = node[w] = {}
        elif nxt.__class__ is not dict:
            return False    # a prefix is a whole instruction
        node = nxt
    if node.get(words[-1]).__class__ is dict:
        return False
    node[words[-1]] = value
    return True


_MEMO: dict[str, _Trie] = {}
_MEMO_LIMIT = 200_000


def clear_memo() -> None:
    """Forgets every memoised instruction (benchmarks measure cold decoding with it)."""
    _MEMO.clear()


def _copier() -> Any:
    """A field-by-field copy of an `Instruction`, unrolled, through each slot's own
    descriptor (a frozen dataclass's `replace` re-runs `__init__`, and a loop of
    `object.__setattr__` over the field names costs twice as much on this hot path)."""
    names = [f.name for f in fields(Instruction)]
    body = "".join(f"    set_{name}(n, i.{name})\n" for name in names)
    scope: dict[str, Any] = {}
    exec(f"def copy(i):\n    n = new(cls)\n{body}    return n\n",
         {**{f"set_{name}": Instruction.__dict__[name].__set__ for name in names},
          "new": object.__new__, "cls": Instruction}, scope)
    return scope["copy"]


_copy = _copier()
_SET_ADDRESS = Instruction.__dict__["address"].__set__
_SET_HALVES = Instruction.__dict__["halves"].__set__


def _moved(inst: Instruction, address: int) -> Instruction:
    """A copy of a memoised instruction at another address."""
    if inst.address == address:
        return inst
    new = _copy(inst)
    _SET_ADDRESS(new, address)
    if inst.halves:
        _SET_HALVES(new, tuple(_moved(h, address) for h in inst.halves))
    return new


def decode_code_object(code_object: CodeObject) -> tuple[Instruction, ...]:
    """Decodes the `.text` of a read code object at its load addresses."""
    text = code_object.text
    if text is None:
        return ()
    return decode(code_object.text_bytes, code_object.target.name, text.addr)


def _unknown(words: tuple[int, ...], i: int, address: int, target: str) -> Instruction:
    return Instruction(address=address, size=4, encoding=Encoding.UNKNOWN, opcode="", target=target,
                       mnemonic="", words=(words[i],))


_Candidate = tuple[type[Format], int, int, Mapping[int, OpInfo], dict[int, Plan]]
_CANDIDATES: dict[str, tuple[int, dict[int, tuple[_Candidate, ...]]]] = {}


def _candidates(t: TargetTables, w0: int) -> tuple[_Candidate, ...]:
    """The formats whose identifying bits match `w0`, in the target's order, each with its
    opcode field (lowest bit, mask), its opcode table and its opcodes' plans by value
    (`decode_plan.plan`, filled in as met). Which formats match depends only on the bits
    some format identifies itself by (their union), so the list is kept per value of
    those bits."""
    index = _CANDIDATES.get(t.spec.name)
    if index is None:
        union = 0
        for fmt in t.spec.formats:
            union |= fmt.mask
        plans: dict[type[Format], dict[int, Plan]] = {fmt: {} for fmt in t.spec.formats}
        index = _CANDIDATES[t.spec.name] = (union, {})
        _PLANS_BY_OP[t.spec.name] = plans
    key = w0 & index[0]
    got = index[1].get(key)
    if got is None:
        plans = _PLANS_BY_OP[t.spec.name]
        got = index[1][key] = tuple(
            (fmt, fmt.op.lo, (1 << fmt.op.width) - 1, t.ops.get(fmt.op_table, _NO_OPS),
             plans[fmt])
            for fmt in t.spec.formats if key & fmt.mask == fmt.match)
    return got


_NO_OPS: Mapping[int, OpInfo] = {}
_PLANS_BY_OP: dict[str, dict[type[Format], dict[int, Plan]]] = {}


def forget_plans() -> None:
    """Forgets every plan and the operands memoised in them (tests compare the decoder
    with and without them)."""
    _CANDIDATES.clear()
    _PLANS_BY_OP.clear()
    forget_decode_plans()


def _decode_ended(t: TargetTables, words: tuple[int, ...], i: int,
                  address: int) -> tuple[Instruction, bool]:
    w0 = words[i]
    ended = False
    for fmt, lo, mask, ops, plans in _candidates(t, w0):
        op = w0 >> lo & mask
        p = plans.get(op)
        if p is None:
            info = ops.get(op)
            if info is None:
                continue
            p = plans[op] = plan(fmt, info, t.spec)
        try:
            return _Decoder(t, fmt, p, words, i, address).run(), ended
        except _Ended:
            ended = True
        except Undecodable:
            continue
    return _unknown(words, i, address, t.spec.name), ended
