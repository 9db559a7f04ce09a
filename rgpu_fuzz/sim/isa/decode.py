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
from collections.abc import Iterator
from dataclasses import fields

from rgpu_fuzz.codeobj import CodeObject
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
           "decode_code_object"]


def decode(text: bytes, target: str, base_address: int = 0) -> tuple[Instruction, ...]:
    """Decodes every instruction of `text` (a `.text` section) for `target`.

    Decoded instructions are memoised per process by their words (compiled code repeats
    instructions within and across code objects); a hit is the cached instruction moved to
    its address. Instructions whose decoding depends on their address (branches) or on
    where the section ends (`decode_at_ended`) are not memoised.
    """
    t = tables(target)
    n = len(text) // 4
    words = struct.unpack_from(f"<{n}I", text) if n else ()
    memo = _MEMO.setdefault(target, {})
    if len(memo) > _MEMO_LIMIT:
        memo.clear()
    out: list[Instruction] = []
    i = 0
    while i < n:
        address = base_address + 4 * i
        inst = None
        for candidate in memo.get(words[i], ()):
            if words[i: i + len(candidate.words)] == candidate.words:
                inst = _moved(candidate, address)
                break
        if inst is None:
            inst, ended = _decode_ended(t, words, i, address)
            if "target" not in inst.modifiers and not ended:
                memo.setdefault(words[i], []).append(inst)
        out.append(inst)
        i += inst.size // 4
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


_MEMO: dict[str, dict[int, list[Instruction]]] = {}
_MEMO_LIMIT = 200_000


def clear_memo() -> None:
    """Forgets every memoised instruction (benchmarks measure cold decoding with it)."""
    _MEMO.clear()


_SLOTS = tuple(f.name for f in fields(Instruction))
_set = object.__setattr__


def _moved(inst: Instruction, address: int) -> Instruction:
    """A copy of a memoised instruction at another address (field by field: a frozen
    dataclass's `replace` re-runs `__init__`, five times slower on this hot path)."""
    if inst.address == address:
        return inst
    new = object.__new__(Instruction)
    for name in _SLOTS:
        _set(new, name, getattr(inst, name))
    _set(new, "address", address)
    if inst.halves:
        _set(new, "halves", tuple(_moved(h, address) for h in inst.halves))
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


def _candidates(t: TargetTables, w0: int) -> Iterator[tuple[type[Format], OpInfo]]:
    for fmt in t.spec.formats:
        if w0 & fmt.mask == fmt.match:
            info = t.ops.get(fmt.op_table, {}).get(fmt.op.get(w0))
            if info is not None:
                yield fmt, info


def _decode_ended(t: TargetTables, words: tuple[int, ...], i: int,
                  address: int) -> tuple[Instruction, bool]:
    w0 = words[i]
    ended = False
    for fmt, info in _candidates(t, w0):
        try:
            return _Decoder(t, fmt, info, words, i, address).run(), ended
        except _Ended:
            ended = True
        except Undecodable:
            continue
    return _unknown(words, i, address, t.spec.name), ended
