"""The atomics of an LLVM IR module in program order, with the ordering, sync scope and
address space a code object no longer says (LangRef "atomicrmw", "cmpxchg", "load",
"store", "fence"; AMDGPUUsage "Memory Scopes")."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SCOPE = r'(?:syncscope\("(?P<scope>[\w-]+)"\)\s+)?'
_ORD = r"(?P<ord>monotonic|acquire|release|acq_rel|seq_cst)"
_PTR = r"ptr(?:\s+addrspace\((?P<as>\d+)\))?\s+"
_PATTERNS = (
    ("rmw", re.compile(rf"=\s*atomicrmw\s+(?:volatile\s+)?\w+\s+{_PTR}[^,]+,[^,]+?\s+"
                       rf"{_SCOPE}{_ORD}")),
    ("rmw", re.compile(rf"=\s*cmpxchg\s+(?:weak\s+)?(?:volatile\s+)?{_PTR}[^,]+,[^,]+,"
                       rf"[^,]+?\s+{_SCOPE}{_ORD}\s+(?P<fail>\w+)")),
    ("load", re.compile(rf"=\s*load\s+atomic\s+(?:volatile\s+)?[^,]+,\s*{_PTR}[^,\s]+\s+"
                        rf"{_SCOPE}{_ORD}")),
    ("store", re.compile(rf"^\s*store\s+atomic\s+(?:volatile\s+)?[^,]+,\s*{_PTR}[^,\s]+\s+"
                         rf"{_SCOPE}{_ORD}")),
    ("fence", re.compile(rf"^\s*fence\s+{_SCOPE}{_ORD}")),
)
_RANK = {"monotonic": 0, "acquire": 1, "release": 1, "acq_rel": 2, "seq_cst": 3}


@dataclass(frozen=True, slots=True)
class IrAtomic:
    """One atomic operation: `scope` is the AMDGPU scope without `-one-as` (`system` when
    the IR writes none), `one_as` whether it orders its own address space only."""

    op: str
    ordering: str
    scope: str
    one_as: bool
    space: str
    line: str

    @property
    def acquire(self) -> bool:
        return self.ordering in ("acquire", "acq_rel", "seq_cst") and self.op != "store"

    @property
    def release(self) -> bool:
        return self.ordering in ("release", "acq_rel", "seq_cst") and \
            (self.op != "load" or self.ordering == "seq_cst")


def _merge(success: str, failure: str) -> str:
    """cmpxchg's ordering as the legalizer sees it: the stronger of the two, where
    acquire failure with release success is acq_rel."""
    if {success, failure} == {"release", "acquire"}:
        return "acq_rel"
    return max(success, failure, key=lambda o: _RANK.get(o, 0))


def atomics(ir_text: str) -> list[IrAtomic]:
    """The module's atomics in text order (non-atomic and `unordered` ones skipped)."""
    out = []
    for line in ir_text.splitlines():
        for op, pattern in _PATTERNS:
            m = pattern.search(line)
            if m is None:
                continue
            groups = m.groupdict()
            ordering = m["ord"]
            if groups.get("fail"):
                ordering = _merge(ordering, groups["fail"])
            raw = groups.get("scope") or "system"
            scope = raw.removesuffix("-one-as").replace("one-as", "system") or "system"
            if scope == "singlethread":
                scope = "wavefront"
            space = "lds" if groups.get("as") == "3" else "global"
            out.append(IrAtomic(op, ordering, scope, "one-as" in raw, space, line.strip()))
            break
    return out
