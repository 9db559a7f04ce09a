"""The atomics of an LLVM IR module in program order, with the ordering, sync scope and
address space a code object no longer says (LangRef "atomicrmw", "cmpxchg", "load",
"store", "fence"; AMDGPUUsage "Memory Scopes")."""

from __future__ import annotations

import re
from dataclasses import dataclass

_ORDS = "monotonic|acquire|release|acq_rel|seq_cst"
_TAIL = re.compile(rf'(?:syncscope\("(?P<scope>[^"]+)"\)\s+)?(?P<ord>{_ORDS})'
                   rf'(?:\s+(?P<fail>{_ORDS}))?(?:,\s*align\s+\d+)?(?:,\s*!.*)?\s*$')
_OP = re.compile(r"(?:=\s*(?P<rmw>atomicrmw|cmpxchg)\s+(?:weak\s+)?(?:volatile\s+)?"
                 r"(?P<kind>\w+)?|=\s*load\s+atomic\b|^\s*store\s+atomic\b|^\s*fence\b)")
_PTR = re.compile(r"\bptr(?:\s+addrspace\((?P<as>\d+)\))?\s+[%@(]|\bptr(?:\s+addrspace"
                  r"\((?P<as2>\d+)\))?\s+getelementptr")
_TRAP_RECORD = re.compile(r'@"?rgpu\.trap"?\(')
_RANK = {"monotonic": 0, "acquire": 1, "release": 1, "acq_rel": 2, "seq_cst": 3}


@dataclass(frozen=True, slots=True)
class IrAtomic:
    """One atomic operation: `scope` is the AMDGPU scope without `-one-as` (`system` when
    the IR writes none), `one_as` whether it orders its own address space only."""

    op: str
    kind: str
    """The operation of a read-modify-write (`add`, `xchg`, `cmpxchg`, `min` for umin and
    min alike, ...), `op` otherwise."""
    ordering: str
    scope: str
    one_as: bool
    space: str
    line: str
    harness: bool = False
    """Part of the harness's trap record (`rgpu.trap`), not of the code under test."""

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


def _space(line: str, op: str) -> str:
    """The address space of the pointer operand: the first `ptr` of the instruction, or
    for a store the last (the value stored may itself be a pointer)."""
    found = [m["as"] or m["as2"] or "0" for m in _PTR.finditer(line)]
    if not found or op == "fence":
        return "global"
    return "lds" if (found[-1] if op == "store" else found[0]) == "3" else "global"


def atomics(ir_text: str) -> list[IrAtomic]:
    """The module's atomics in text order (non-atomic and `unordered` ones skipped). Those
    of the harness's trap record (`rgpu.trap`: a cmpxchg and a `fence release` that publish
    a trap's location) are marked `harness`: the linker drops the record from a kernel that
    never traps (its fence then has no instructions at all), so nothing may be required of
    them, but a kernel that may trap keeps its cmpxchg, a machine atomic that implements
    it and nothing else."""
    out = []
    in_trap_record = False
    for line in ir_text.splitlines():
        if line.startswith("define "):
            in_trap_record = _TRAP_RECORD.search(line) is not None
        elif line.startswith("}"):
            in_trap_record = False
        if "atomic" not in line and "cmpxchg" not in line and "fence" not in line:
            continue        # what `_OP` needs, found without the regex (most lines)
        head = _OP.search(line)
        tail = _TAIL.search(line) if head is not None else None
        if head is None or tail is None:
            continue
        op = "rmw" if head["rmw"] else next(w for w in ("load", "store", "fence")
                                            if w in head.group(0))
        ordering = tail["ord"]
        if tail["fail"]:
            ordering = _merge(ordering, tail["fail"])
        raw = tail["scope"] or "system"
        scope = raw.removesuffix("-one-as").replace("one-as", "system") or "system"
        if scope == "singlethread":
            scope = "wavefront"
        kind = "cmpxchg" if head["rmw"] == "cmpxchg" else (head["kind"] or op)
        kind = {"umin": "min", "umax": "max"}.get(kind, kind)
        out.append(IrAtomic(op, kind, ordering, scope, "one-as" in raw, _space(line, op),
                            line.strip(), in_trap_record))
    return out
