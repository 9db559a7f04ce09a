"""Memory instructions as data: what each opcode moves, parsed from AMD's names so the
CDNA (`GLOBAL_LOAD_DWORDX2`, `DS_READ_B64`) and RDNA3 (`GLOBAL_LOAD_B64`, `DS_LOAD_B64`)
spellings share one table of widths (CDNA3 ISA ch. 9-11, RDNA3 ISA ch. 10-12)."""

from __future__ import annotations

import re
from dataclasses import dataclass

SEGMENTS = {"S": "smem", "GLOBAL": "global", "FLAT": "flat", "SCRATCH": "scratch",
            "DS": "ds", "BUFFER": "buffer"}

_WIDTH = {"BYTE": 1, "UBYTE": 1, "SBYTE": 1, "SHORT": 2, "USHORT": 2, "SSHORT": 2,
          "DWORD": 4, "DWORDX2": 8, "DWORDX3": 12, "DWORDX4": 16, "DWORDX8": 32,
          "DWORDX16": 64, "B8": 1, "U8": 1, "I8": 1, "B16": 2, "U16": 2, "I16": 2, "B32": 4,
          "B64": 8, "B96": 12, "B128": 16, "B256": 32, "B512": 64}
_SIGNED = {"SBYTE", "SSHORT", "I8", "I16"}


@dataclass(frozen=True, slots=True)
class MemOp:
    segment: str
    store: bool
    width: int
    """Bytes per element (per lane for vector memory, per instruction for SMEM)."""
    signed: bool = False
    d16: str = ""
    """"lo" or "hi": a 16-bit (or 8-bit) load into one half of the register, the other kept."""
    pair: bool = False
    """DS read2/write2: two elements at offset0 and offset1 (in element units)."""
    stride64: bool = False


_NAME = re.compile(r"^(S|GLOBAL|FLAT|SCRATCH|DS|BUFFER)_(LOAD|STORE|READ|WRITE)"
                   r"(2ST64|2|_2ADDR_STRIDE64|_2ADDR)?_(D16_HI_|D16_)?"
                   r"(DWORDX16|DWORDX8|DWORDX4|DWORDX3|DWORDX2|DWORD|UBYTE|SBYTE|"
                   r"USHORT|SSHORT|SHORT|BYTE|B512|B256|B128|B96|B64|B32|B16|B8|U8|I8|U16|"
                   r"I16)(_D16(?:_HI)?)?$")
"""CDNA (`DS_READ2ST64_B32`, `GLOBAL_LOAD_SHORT_D16_HI`) and RDNA3 (`DS_LOAD_2ADDR_B64`,
`SCRATCH_LOAD_D16_HI_U8`) spellings of the same operations."""


def memop(opcode: str) -> MemOp | None:
    m = _NAME.match(opcode)
    if not m:
        return None
    seg, kind, two, d16_pre, width, d16_post = m.groups()
    store = kind in ("STORE", "WRITE")
    d16 = d16_pre or (d16_post[1:] + "_" if d16_post else "")
    return MemOp(SEGMENTS[seg], store, _WIDTH[width], width in _SIGNED,
                 ("hi" if "HI" in d16 else "lo") if d16 else "", bool(two),
                 bool(two) and "64" in two)


def _signed(v: int, bits: int) -> int:
    return v - ((v >> (bits - 1)) << bits)


ATOMIC_OPS = {
    "SWAP": lambda old, src, cmp, bits: src,
    "CMPSWAP": lambda old, src, cmp, bits: src if old == cmp else old,
    "ADD": lambda old, src, cmp, bits: (old + src) % (1 << bits),
    "SUB": lambda old, src, cmp, bits: (old - src) % (1 << bits),
    "AND": lambda old, src, cmp, bits: old & src,
    "OR": lambda old, src, cmp, bits: old | src,
    "XOR": lambda old, src, cmp, bits: old ^ src,
    "UMIN": lambda old, src, cmp, bits: min(old, src),
    "UMAX": lambda old, src, cmp, bits: max(old, src),
    "SMIN": lambda old, src, cmp, bits: min(old, src, key=lambda v: _signed(v, bits)),
    "SMAX": lambda old, src, cmp, bits: max(old, src, key=lambda v: _signed(v, bits)),
    "INC": lambda old, src, cmp, bits: 0 if old >= src else old + 1,
    "DEC": lambda old, src, cmp, bits: src if old == 0 or old > src else old - 1,
}
"""Read-modify-write of one lane's element (CDNA3 ISA §10.3 "Global atomics" pseudocode):
`old` the memory value, `src` DATA[0], `cmp` DATA[1] of CMPSWAP."""


@dataclass(frozen=True, slots=True)
class AtomicOp:
    segment: str
    op: str
    bits: int


_ATOMIC = re.compile(r"^(GLOBAL|FLAT)_ATOMIC_([A-Z]+?)(_X2|_B64|_U64|_I64|_B32|_U32|_I32)?$")


def atomicop(opcode: str) -> AtomicOp | None:
    m = _ATOMIC.match(opcode)
    if not m or m.group(2) not in ATOMIC_OPS:
        return None
    bits = 64 if m.group(3) in ("_X2", "_B64", "_U64", "_I64") else 32
    return AtomicOp(SEGMENTS[m.group(1)], m.group(2), bits)
