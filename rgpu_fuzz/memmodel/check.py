"""The check itself: each atomic of the code object, given the ordering and scope its IR
atomic had, against the rows of its target's table (`rows`).

How a machine atomic learns its ordering and scope (a code object has no IR): from the IR
the pipeline compiled (`ir.atomics`). Matching by position is not sound — code generation
lays blocks out in its own order (a trap path's atomic moves to the end of the kernel), the
atomic optimizer and flat-address expansion add branches — so a machine read-modify-write
is compared with every IR atomic of its address space (global/generic or LDS) and
operation (`add`, `cmpxchg`, ...) and is a finding only when it matches none of their rows:
a check by the weakest candidate, never a guess. With the pipeline's single `scope=` per
kernel the candidates differ only in ordering. A machine atomic with no candidate is
counted as unchecked. Atomic loads and stores are ordinary load and store
instructions in machine code, so they are checked by count: at least as many loads (stores)
carry the scope bits their rows ask for as the IR has atomic loads (stores) asking for them.
Fences leave no instruction of their own: the invalidates and write-backs their rows ask
for must be in the kernel.

The sequence around an atomic is read along the path the code object lays out, through
conditional branches (their fall-through is a path) and labels: backwards from a release
to the previous unconditional jump or the start (a counter is not drained when an
instruction counted by it comes before any wait that zeroes it), forwards from an acquire
to the next memory access or the end. A window that meets an unconditional jump forwards
is not judged: a finding is a sequence the table forbids on a path that exists, never a
guess about another path."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rgpu_fuzz.memmodel.ir import IrAtomic, atomics
from rgpu_fuzz.memmodel.machine import COUNTERS, LDS_COUNTERS, MachineInst, parse_all, wait_text
from rgpu_fuzz.memmodel.rows import Row, family_of, row

SIGNATURE = "memory-model-sequence"


@dataclass(frozen=True, slots=True)
class Finding:
    """One mismatch: what is missing, at which instruction, against which row."""

    row: Row
    missing: str
    instruction: str
    ir: str

    @property
    def detail(self) -> str:
        return (f"{self.instruction or '(kernel)'}: missing {self.missing}, as {self.row.source}"
                f" asks for `{self.ir}`")


@dataclass(frozen=True, slots=True)
class Report:
    findings: tuple[Finding, ...]
    checked: int
    unchecked: int = 0
    rows: frozenset[str] = field(default_factory=frozenset)
    """The rows the check compared with (coverage)."""


def _before(code: list[MachineInst], i: int, items: tuple[str, ...]) -> list[str]:
    """The release items not met between the previous branch and instruction `i`."""
    waits = {x for x in items if x in COUNTERS}
    cache = [x for x in items if x not in waits]
    missing: list[str] = []
    done: set[str] = set()
    found: set[str] = set()
    for inst in reversed(code[:i]):
        if inst.jump or inst.end:
            break
        done |= inst.waits & waits
        found |= {c for c in cache if inst.has(c)}
        late = (inst.adds & waits) - done
        missing += [f"{wait_text(c)} after `{inst.text}`" for c in sorted(late)]
        done |= late    # one report per counter
    return missing + [f"`{c}`" for c in cache if c not in found]


def _after(code: list[MachineInst], i: int, items: tuple[str, ...]) -> list[str]:
    """The acquire items not met between instruction `i` and the next access or branch."""
    own = set(code[i].adds) if "own" in items else set()
    if code[i].space == "global":
        own -= LDS_COUNTERS     # a flat atomic's LDS side: the vector counter orders the inv
    cache = [x for x in items if x != "own"]
    found: set[str] = set()
    waited: set[str] = set()
    for inst in code[i + 1:]:
        if inst.jump:
            return []       # the rest of this path is elsewhere: not judged
        if inst.memory or inst.end:
            break
        waited |= inst.waits & own
        if own <= waited:
            found |= {c for c in cache if inst.has(c)}
    return ([wait_text(c) for c in sorted(own - waited)]
            + [f"`{c}` after the wait" for c in cache if c not in found])


def _sequence(family: str, a: IrAtomic, inst: MachineInst, code: list[MachineInst],
              used: set[str]) -> list[Finding]:
    out = []
    sides = [("monotonic", None)] + [(s, None) for s, on in
                                     (("release", a.release), ("acquire", a.acquire)) if on]
    for side, _ in sides:
        r = row(family, a.op, side, a.scope, a.space)
        if r is None:
            continue
        used.add(r.source)
        if side == "monotonic":
            missing = [f"cache bit {b}" for b in r.bits if b not in inst.bits]
        elif side == "release":
            missing = _before(code, inst.index, _one_as(r.before, a))
        else:
            missing = _after(code, inst.index, _one_as(r.after, a))
        out += [Finding(r, m, inst.text, a.line) for m in missing]
    return out


def _one_as(items: tuple[str, ...], a: IrAtomic) -> tuple[str, ...]:
    """A `-one-as` scope orders only its own address space (AMDGPUUsage "Memory Scopes"):
    a global atomic's release need not drain LDS, an LDS one need not drain global, nor
    wait for LDS, whose operations complete in one global order (AMDGPUUsage "Memory Model
    GFX942": "All LDS operations of a CU are performed as wavefront wide operations in a
    global order and involve no caching")."""
    if not a.one_as:
        return items
    if a.space == "global":
        return tuple(x for x in items if x not in LDS_COUNTERS)
    return tuple(x for x in items if x not in COUNTERS and x != "own"
                 and not x.startswith(("buffer_gl0_inv", "global_inv")))


def _candidates(irs: list[IrAtomic], inst: MachineInst) -> list[IrAtomic]:
    """The IR read-modify-writes `inst` may implement: those of its address space and
    operation, or of its address space alone when none has its operation (an optimiser's
    rewrite); one of each distinct ordering and scope."""
    same = [a for a in irs if a.op == "rmw" and a.space == inst.space]
    kind = [a for a in same if a.kind == inst.kind] or same
    distinct = {(a.ordering, a.scope, a.one_as): a for a in kind}
    return list(distinct.values())


def _judged(family: str, irs: list[IrAtomic], code: list[MachineInst], used: set[str]
            ) -> tuple[list[Finding], int, int]:
    """Each machine read-modify-write against the rows of every IR atomic it may
    implement: a finding only when it fails them all (reported against the one it misses
    least), so a guess never makes one. The trap record's cmpxchg is a candidate beside the
    kernel's own atomics (a kernel that may trap keeps it), but a machine atomic that only
    it can be is the harness's, not judged. Returns findings, checked and unchecked
    counts."""
    findings: list[Finding] = []
    checked = unchecked = 0
    for inst in code:
        if not inst.rmw:
            continue
        candidates = _candidates(irs, inst)
        if all(a.harness for a in candidates):
            # none, or only the trap record's (`IrAtomic.harness`): not code under test
            unchecked += 1
            continue
        checked += 1
        verdicts = [_sequence(family, a, inst, code, used) for a in candidates]
        if all(verdicts):
            least: list[Finding] = min(verdicts, key=len)
            findings += least
    return findings, checked, unchecked


def _counted(family: str, irs: list[IrAtomic], code: list[MachineInst],
             used: set[str]) -> list[Finding]:
    """Atomic loads and stores by their bits; fences and the cache operations of loads and
    stores by presence in the kernel. The trap record's atomics (`IrAtomic.harness`) ask
    for nothing here: the linker drops them from a kernel that never traps."""
    out = []
    irs = [a for a in irs if not a.harness]
    for op, kind in (("load", "_load"), ("store", "_store")):
        need: Counter[tuple[str, ...]] = Counter()
        first: dict[tuple[str, ...], tuple[Row, IrAtomic]] = {}
        for a in irs:
            r = row(family, a.op, "monotonic", a.scope, a.space) if a.op == op else None
            if r is not None and r.bits:
                used.add(r.source)
                need[r.bits] += 1
                first.setdefault(r.bits, (r, a))
        for bits, n in need.items():
            have = sum(1 for m in code if kind in m.mnemonic and m.memory
                       and set(bits) <= m.bits)
            if have < n:
                r, a = first[bits]
                out.append(Finding(r, f"cache bits {' '.join(bits)} on {n - have} of {n} "
                                      f"atomic {op}s", "", a.line))
    for a in irs:
        if a.op == "rmw":
            continue
        for side, on in (("release", a.release), ("acquire", a.acquire)):
            r = row(family, a.op, side, a.scope, a.space) if on else None
            if r is None:
                continue
            used.add(r.source)
            for c in _one_as(r.before + r.after, a):
                if c not in COUNTERS and c != "own":
                    if not any(m.has(c) for m in code):
                        out.append(Finding(r, f"`{c}` anywhere in the kernel", "", a.line))
    return out


def check_text(ir_text: str, lines: list[str], target: str) -> Report:
    """The check of the assembly `lines` (one instruction each) compiled from `ir_text` for
    `target` (a processor with a table, `rows.family_of`; an empty report for another)."""
    family = family_of(target)
    if family is None:
        return Report((), 0)
    irs = atomics(ir_text)
    code = parse_all(lines, family)
    used: set[str] = set()
    findings, checked, unchecked = _judged(family, irs, code, used)
    findings += _counted(family, irs, code, used)
    return Report(tuple(findings), checked, unchecked, frozenset(used))
