"""A code object's `.text` decoded for the executor: the project decoder
(`rgpu_fuzz.sim.isa`) over the whole section, each instruction converted once to the
executor's `Inst`, cached per code-object hash."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any

from rgpu_fuzz.sim.inst import Inst, from_decoded

_CACHE: OrderedDict[str, list[Inst]] = OrderedDict()
_CACHE_SIZE = 64


def decode_text(co: Any, kernel: Any = None) -> list[Inst]:
    """Every instruction of `co.text` (a `rgpu_fuzz.codeobj.reader.CodeObject`); its
    LLVM-syntax text is rendered when asked for (`Inst.text`)."""
    from rgpu_fuzz.sim.isa.decode import decode

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
    decoded = decode(data, co.target.name, address)
    got = [from_decoded(d) for d in decoded]
    _CACHE[key] = got
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return got
