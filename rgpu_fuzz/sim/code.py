"""A code object's `.text` decoded for the executor: the project decoder
(`rgpu_fuzz.sim.isa`) over the whole section, each instruction converted once to the
executor's `Inst`, cached per code-object hash.

A campaign decodes a new code object per case, but compiled code repeats itself: across the
conformance kernels at O0 one instruction in eleven is new (21,563 distinct of 240,936), so
the scan below memoises the executor's `Inst` per process by its dwords and decodes only
what it has not seen (`rgpu_fuzz.sim.isa.decode.decode_at`); a hit is the memoised
instruction moved to its address. Branches (whose decoding names an absolute target) are
decoded at every address."""

from __future__ import annotations

import hashlib
import struct
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, overload

from rgpu_fuzz.sim.inst import Inst, from_decoded
from rgpu_fuzz.sim.vop3_memo import Vop3Memo


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


_CACHE: OrderedDict[str, Code] = OrderedDict()
_CACHE_SIZE = 64
_MEMO: dict[str, tuple[dict[int, Inst], dict[int, tuple[int, ...]],
                       dict[tuple[int, ...], Inst], dict[tuple[int, int] | int, Inst],
                       Vop3Memo]] = {}
"""Per target: the one-dword instructions by their dword; the sizes (in dwords) seen for
each first dword of longer ones and the instruction of each dword sequence; the
address-bound instructions by (address, dword) and by dword; and the operand-level memo of
VOP3 instructions (`rgpu_fuzz.sim.vop3_memo`). Whether an instruction takes one dword is
decided by its first (a literal follows only for a source field of that dword)."""
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
    from rgpu_fuzz.sim.isa.decode import decode_at

    n = len(data) // 4
    words = struct.unpack_from(f"<{n}I", data) if n else ()
    memo = _MEMO.get(target)
    if memo is None or sum(len(m) for m in memo) > _MEMO_LIMIT:
        memo = _MEMO[target] = ({}, {}, {}, {}, Vop3Memo(target))
    one, sizes_of, by_words, at_address, vop3 = memo
    out: list[Inst] = []
    addresses: list[int] = []
    append = out.append
    append_address = addresses.append
    i = 0
    while i < n:
        w0 = words[i]
        inst = one.get(w0)
        if inst is None:
            for k in sizes_of.get(w0, ()):
                inst = by_words.get(words[i:i + k])
                if inst is not None:
                    break
        if inst is None:
            # branches and the like (one dword each) are memoised at their address: code
            # objects of a campaign load at the same addresses; at another address, the
            # instruction with the same dword is moved there (`Inst.relocated`)
            at = (base_address + 4 * i, w0)
            inst = at_address.get(at)
            if inst is None:
                inst = at_address.get(w0)
                if inst is not None:
                    inst = at_address[at] = inst.relocated(at[0])
        if inst is None:
            address = base_address + 4 * i
            inst = vop3.compose(w0, words[i + 1], address) if i + 1 < n else None
            if inst is None:
                inst = from_decoded(decode_at(words, i, target, address))
                if not inst.share_key and inst.size == 4:
                    at_address[at] = at_address[w0] = inst
                elif inst.size == 8:
                    vop3.learn(inst, w0, words[i + 1], address)
            if inst.share_key:
                w = inst.share_key[1]
                if len(w) == 1:
                    one[w0] = inst
                else:
                    by_words[w] = inst
                    sizes = sizes_of.get(w0, ())
                    if len(w) not in sizes:
                        sizes_of[w0] = (*sizes, len(w))
        append(inst)
        append_address(base_address + 4 * i)
        i += inst.size // 4
    return Code(out, addresses)


def clear_memo() -> None:
    """Forgets every memoised instruction (benchmarks measure cold decoding with it)."""
    from rgpu_fuzz.sim.isa.decode import clear_memo as clear_decoder_memo

    _MEMO.clear()
    _CACHE.clear()
    clear_decoder_memo()
