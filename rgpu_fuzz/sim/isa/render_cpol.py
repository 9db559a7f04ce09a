"""RDNA4's cache policy in LLVM's syntax: ` th:TH_<kind>_<hint>` and ` scope:SCOPE_<s>`.

RDNA4 replaces GLC/SLC/DLC with a 3-bit temporal hint (TH) and a 2-bit scope (RDNA4 ISA,
"Memory Scope and Temporal Hints"); the hint's names depend on the operation (loads, stores,
atomics), as LLVM's AMDGPUInstPrinter::printTH prints them. The names below were read off
llvm-mc-22 disassembling every TH value of `global_load_b32`, `global_store_b32` and
`global_atomic_add_u32` for gfx1200 (tests/sim/data/asm/gfx1200.s keeps the lines).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["gfx12_cache_policy"]

_LOAD = ("RT", "NT", "HT", "LU", "NT_RT", "RT_NT", "NT_HT", None)
_STORE = ("RT", "NT", "HT", "WB", "NT_RT", "RT_NT", "NT_HT", "NT_WB")
_ATOMIC: Mapping[int, str] = MappingProxyType({1: "RETURN", 2: "NT", 3: "NT_RETURN"})
_SCOPES = ("CU", "SE", "DEV", "SYS")


def _kind(opcode: str) -> str:
    if "_ATOMIC_" in opcode:
        return "ATOMIC"
    if "_STORE" in opcode or opcode in ("GLOBAL_WB", "GLOBAL_WBINV"):
        return "STORE"
    return "LOAD"


def gfx12_cache_policy(opcode: str, mods: Mapping[str, int]) -> str:
    """The ` th:...` and ` scope:...` suffixes of an RDNA4 memory instruction ("" for the
    defaults, TH 0 and SCOPE_CU)."""
    th, scope = mods.get("th", 0), mods.get("scope", 0)
    out = ""
    if th:
        kind = _kind(opcode)
        if kind == "ATOMIC":
            name = _ATOMIC.get(th)
            out += f" th:TH_ATOMIC_{name}" if name else f" th:TH_ATOMIC_{th:#x}"
        else:
            name = (_LOAD if kind == "LOAD" else _STORE)[th]
            out += f" th:TH_{kind}_{name}" if name else f" th:{th:#x}"
    if scope:
        out += f" scope:SCOPE_{_SCOPES[scope]}"
    return out
