"""Memory instructions as data: what each opcode moves, parsed from AMD's names so the
CDNA (`GLOBAL_LOAD_DWORDX2`, `DS_READ_B64`) and RDNA3 (`GLOBAL_LOAD_B64`, `DS_LOAD_B64`)
spellings share one table of widths (CDNA3 ISA ch. 9-11, RDNA3 ISA ch. 10-12)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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
    "RSUB": lambda old, src, cmp, bits: (src - old) % (1 << bits),
    "AND": lambda old, src, cmp, bits: old & src,
    "OR": lambda old, src, cmp, bits: old | src,
    "XOR": lambda old, src, cmp, bits: old ^ src,
    "UMIN": lambda old, src, cmp, bits: min(old, src),
    "UMAX": lambda old, src, cmp, bits: max(old, src),
    "SMIN": lambda old, src, cmp, bits: min(old, src, key=lambda v: _signed(v, bits)),
    "SMAX": lambda old, src, cmp, bits: max(old, src, key=lambda v: _signed(v, bits)),
    "INC": lambda old, src, cmp, bits: 0 if old >= src else old + 1,
    "DEC": lambda old, src, cmp, bits: src if old == 0 or old > src else old - 1,
    "MSKOR": lambda old, src, cmp, bits: (old & ~src) | cmp,
}
"""Read-modify-write of one lane's element (CDNA3 ISA §10.3 "Global atomics" pseudocode;
RSUB and MSKOR are LDS-only, CDNA3 ISA §11 "LDS instructions": DS_RSUB_U32 MEM = DATA - MEM,
DS_MSKOR_B32 MEM = (MEM & ~DATA) | DATA2): `old` the memory value, `src` DATA[0] (the new
value of CMPSWAP, the mask of MSKOR), `cmp` DATA[1] (CMPSWAP's compare value, MSKOR's
bits)."""


@dataclass(frozen=True, slots=True)
class AtomicOp:
    segment: str
    op: str
    bits: int


_ATOMIC = re.compile(r"^(GLOBAL|FLAT)_ATOMIC_([A-Z]+?)(_X2|_B64|_U64|_I64|_B32|_U32|_I32)?$")


def atomicop(opcode: str) -> AtomicOp | None:
    m = _ATOMIC.match(opcode)
    if not m:
        return None
    op = m.group(2)
    if op in ("MIN", "MAX") and m.group(3):  # RDNA3 `GLOBAL_ATOMIC_MIN_I32` = CDNA `_SMIN`
        op = ("S" if m.group(3)[1] == "I" else "U") + op
    if op not in ATOMIC_OPS or op in ("RSUB", "MSKOR"):
        return None
    bits = 64 if m.group(3) in ("_X2", "_B64", "_U64", "_I64") else 32
    return AtomicOp(SEGMENTS[m.group(1)], op, bits)


@dataclass(frozen=True, slots=True)
class DsAtomicOp:
    """An LDS read-modify-write: `op` an `ATOMIC_OPS` key, `returns` the `_RTN_` form (the
    pre-operation value to a destination), `swapped` a GFX9 `DS_CMPST` whose DATA is the
    compare value and DATA2 the new one (CDNA3 ISA §11 DS_CMPST_B32: MEM = (MEM == DATA) ?
    DATA2 : MEM), the reverse of GFX11's `DS_CMPSTORE` (RDNA3 ISA DS_CMPSTORE_B32: src =
    DATA, cmp = DATA2, MEM = (MEM == cmp) ? src : MEM) and of GLOBAL/FLAT CMPSWAP."""

    op: str
    bits: int
    returns: bool
    swapped: bool = False


_DS_NAMES = {"ADD": "ADD", "SUB": "SUB", "RSUB": "RSUB", "INC": "INC", "DEC": "DEC",
             "AND": "AND", "OR": "OR", "XOR": "XOR", "MSKOR": "MSKOR", "WRXCHG": "SWAP",
             "STOREXCHG": "SWAP", "CMPST": "CMPSWAP", "CMPSTORE": "CMPSWAP"}
_DS_ATOMIC = re.compile(r"^DS_(ADD|SUB|RSUB|INC|DEC|MIN|MAX|AND|OR|XOR|MSKOR|WRXCHG|"
                        r"STOREXCHG|CMPST|CMPSTORE)(_RTN)?_(U32|I32|B32|U64|I64|B64)$")
"""The integer LDS atomics, CDNA (`DS_CMPST_RTN_B32`, `DS_WRXCHG_RTN_B64`) and RDNA3
(`DS_CMPSTORE_RTN_B32`, `DS_STOREXCHG_RTN_B32`) spellings; the float, `2`-address and
`CONDXCHG` forms are not matched."""


def dsatomicop(opcode: str) -> DsAtomicOp | None:
    m = _DS_ATOMIC.match(opcode)
    if not m:
        return None
    name, rtn, ty = m.groups()
    if name in ("MIN", "MAX"):
        op = ("S" if ty[0] == "I" else "U") + name
    else:
        op = _DS_NAMES[name]
    return DsAtomicOp(op, 64 if ty.endswith("64") else 32, bool(rtn), name == "CMPST")


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """A memory instruction's cache-policy bits as decoded: GFX9/GFX11 `glc`/`slc`/`dlc`,
    CDNA3 `sc0`/`sc1`/`nt` (CDNA3 ISA §10.1 "Memory scope and temporal controls"; RDNA3 ISA
    §10.1). One wave runs at a time against one coherent memory, so none changes a result;
    only `glc`/`sc0` on an atomic means something here: return the pre-operation value."""

    glc: bool = False
    slc: bool = False
    dlc: bool = False
    sc0: bool = False
    sc1: bool = False
    nt: bool = False
    th: int = 0
    """RDNA4's temporal hint (RDNA4 ISA "Memory Scope and Temporal Hints")."""

    @property
    def returns(self) -> bool:
        """An atomic's "return pre-op value" bit (GLC on GFX9/GFX11, SC0 on CDNA3, TH bit 0
        `TH_ATOMIC_RETURN` on RDNA4)."""
        return self.glc or self.sc0 or bool(self.th & 1)


def cache_policy(mods: Mapping[str, Any]) -> CachePolicy:
    return CachePolicy(**{k: bool(mods.get(k, 0)) for k in ("glc", "slc", "dlc", "sc0", "sc1",
                                                             "nt")}, th=int(mods.get("th", 0)))
