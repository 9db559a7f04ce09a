"""Judge the outcomes of one case (DESIGN.md §6).

Outputs are grouped into classes of equal results: integers and bools bitwise, floats bitwise
except that every NaN equals every NaN (payloads are unspecified) and, where the policy
allows, +0.0 equals -0.0. The arbiter (`ref`) decides: every pipeline outside its class is a
wrong-code finding; crashes, timeouts and trap disagreements are findings of their own. When
the arbiter itself traps, pipelines must trap the same way; when it rejects the case, the case
is outside the language and nothing is compared.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from rgpu_fuzz.lang.ast import Binary, Cast, MethodCall, Module, Unary
from rgpu_fuzz.lang.features import walk
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import (
    Buffer,
    CompileCrash,
    Ok,
    Outcome,
    PipelineFailure,
    Rejected,
    RunCrash,
    Timeout,
    Trap,
    Unavailable,
    Unsupported,
    detail,
)
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.oracles.policy import Policy, ZeroSign
from rgpu_fuzz.oracles.verdict import ElementDiff, Finding, FindingKind, Verdict


def kernel_operations(module: Module) -> tuple[str, ...]:
    """The operations left in a kernel, for wrong-code signatures: binary and unary operators
    by name (`xor`, `shl`, `lor`, `neg`: symbols such as `|` would collide with the
    signature's field separator), methods, and cast targets (`as:u8`)."""
    ops: set[str] = set()
    for n in walk(module):
        match n:
            case Binary(op=op):
                ops.add(op.name.lower())
            case Unary(op=op):
                ops.add(op.name.lower())
            case MethodCall(method=m):
                ops.add(m)
            case Cast(to=t):
                ops.add(f"as:{t}")
    return tuple(sorted(ops))


_NOISE = [(re.compile(r"0x[0-9a-fA-F]+"), "0x_"), (re.compile(r"\bt\d+\b"), "tN"),
          (re.compile(r"%[\w.]*\d+\b"), "%N"), (re.compile(r"/[^\s:]+/"), "/…/")]


def normalise_crash_line(text: str) -> str:
    """The first error line of a crash log with addresses, node and value numbers and paths
    blanked, so the same bug hit by different kernels has one signature."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    pick = next((ln for ln in lines if "LLVM ERROR" in ln or ln.startswith("error")
                 or "panicked" in ln or "Assertion" in ln), lines[0] if lines else "")
    for pattern, repl in _NOISE:
        pick = pattern.sub(repl, pick)
    return pick[:200]


def _uses_float_min_max(module: Module | None) -> bool:
    if module is None:
        return True
    return any(isinstance(n, MethodCall) and n.method in ("min", "max") for n in walk(module))


def _canonical_bits(buf: Buffer, loose_zero: bool) -> np.ndarray:
    """Bit patterns with every NaN mapped to one pattern (and -0.0 to +0.0 when loose)."""
    values = np.ascontiguousarray(buf.values, dtype=buf.ty.dtype)
    if buf.ty is Scalar.BOOL:
        return values.astype(np.uint8)
    bits = values.view(buf.ty.bits_dtype).copy()
    if buf.ty.is_float:
        bits[np.isnan(values)] = np.array(-1).astype(buf.ty.bits_dtype)
        if loose_zero:
            bits[values == 0] = 0
    return bits


def _fmt_value(buf: Buffer, i: int) -> str:
    v = buf.values[i]
    if buf.ty is Scalar.BOOL:
        return "true" if v else "false"
    return repr(float(v)) if buf.ty.is_float else str(int(v))


def compare_outputs(expected: Mapping[str, Buffer], actual: Mapping[str, Buffer], *,
                    loose_zero: bool, max_diffs: int) -> tuple[list[ElementDiff], int]:
    """The first differing elements (up to `max_diffs`) and how many differ in all."""
    diffs: list[ElementDiff] = []
    total = 0
    for name in sorted(set(expected) | set(actual)):
        e, a = expected.get(name), actual.get(name)
        if e is None or a is None or e.ty is not a.ty or len(e.values) != len(a.values):
            total += 1
            diffs.append(ElementDiff(name, -1, "present" if e else "missing", 0,
                                     "present" if a else "missing", 0))
            continue
        eb, ab = _canonical_bits(e, loose_zero), _canonical_bits(a, loose_zero)
        idx = np.flatnonzero(eb != ab)
        total += len(idx)
        raw_e, raw_a = e.bits(), a.bits()
        for i in idx[: max(0, max_diffs - len(diffs))]:
            i = int(i)
            diffs.append(ElementDiff(name, i, _fmt_value(e, i), raw_e[i], _fmt_value(a, i),
                                     raw_a[i]))
    return diffs, total


def judge(case: Case, outcomes: Mapping[str, Outcome], policy: Policy,
          module: Module | None = None) -> Verdict:
    """Read all outcomes of one case. `module` is the parsed kernel (for signatures)."""
    loose = policy.zero_sign is ZeroSign.LOOSE or (
        policy.zero_sign is ZeroSign.LOOSE_IF_MIN_MAX and _uses_float_min_max(module))
    ops = ",".join(kernel_operations(module)) if module is not None else ""
    arbiter = outcomes.get(policy.arbiter)
    findings: list[Finding] = []
    compared = tuple(k for k, o in outcomes.items()
                     if not isinstance(o, Unsupported | Unavailable))

    if arbiter is None or isinstance(arbiter, Unsupported | Unavailable):
        return Verdict(compared=compared)
    if isinstance(arbiter, Rejected):
        return Verdict(compared=compared, findings=(Finding(
            kind=FindingKind.INVALID_CASE, pipelines=(policy.arbiter,),
            signature=f"invalid-case|{arbiter.reason}", detail=detail(arbiter)),))

    classes: list[tuple[str, Ok]] = []
    members: dict[str, list[str]] = {}
    for label, o in outcomes.items():
        if isinstance(o, Ok):
            for rep, rep_o in classes:
                if not compare_outputs(rep_o.outputs, o.outputs, loose_zero=loose,
                                       max_diffs=1)[1]:
                    members[rep].append(label)
                    break
            else:
                classes.append((label, o))
                members[label] = [label]

    outvoted = _arbiter_outvoted(outcomes, members, policy)
    for label, o in outcomes.items():
        findings.extend(_nondeterminism(label, o))
        if label == policy.arbiter:
            if isinstance(o, CompileCrash | RunCrash | Timeout):
                findings.append(_crash_finding(label, o))
            continue
        if label in outvoted:
            continue
        finding = _judge_one(label, o, arbiter, loose, policy, ops)
        if finding is not None:
            findings.append(finding)
    if outvoted:
        assert isinstance(arbiter, Ok)
        other = outcomes[outvoted[0]]
        assert isinstance(other, Ok)
        diffs, total = compare_outputs(arbiter.outputs, other.outputs, loose_zero=loose,
                                       max_diffs=policy.max_diffs)
        findings.append(Finding(
            kind=FindingKind.WRONG_CODE, pipelines=(policy.arbiter, *outvoted),
            signature=f"wrong-code|{policy.arbiter}-outvoted|ops={ops}",
            detail=(f"{len(outvoted)} independent pipelines agree with each other against "
                    f"{policy.arbiter} ({total} element{'s' if total != 1 else ''}): "
                    f"suspect {policy.arbiter} first"),
            diffs=tuple(diffs), differing_elements=total))
    findings = [_mark_known(f, policy) for f in findings]
    return Verdict(findings=tuple(findings), compared=compared,
                   classes=tuple(tuple(m) for m in members.values()))


AGAIN = "-again"
"""Suffix of an artefact hash from a second compilation that differed from the first."""


def _nondeterminism(label: str, o: Outcome) -> list[Finding]:
    """DESIGN.md §4: the same case compiled twice must give the same bytes."""
    found = []
    for key, value in sorted(o.stats.artefacts.items()):
        if key.endswith(AGAIN):
            base = key[: -len(AGAIN)]
            found.append(Finding(
                kind=FindingKind.NONDETERMINISM, pipelines=(label,),
                signature=f"nondeterminism|{label}|{base}",
                detail=f"{base} differs between two compilations: "
                       f"{o.stats.artefacts.get(base, '?')[:12]} vs {value[:12]}"))
    return found


def _arbiter_outvoted(outcomes: Mapping[str, Outcome], members: Mapping[str, list[str]],
                      policy: Policy) -> list[str]:
    """The pipelines that outvote the arbiter: when every other pipeline finished, at least
    two from different compilers (`llvm-cpu:O0` and `llvm-cpu:O3` count as one) agree with
    each other and differ from the arbiter, the likely bug is in the arbiter — reported once,
    not once per pipeline."""
    others = [k for k, o in outcomes.items() if k != policy.arbiter
              and not isinstance(o, Unsupported | Unavailable)]
    if not others or any(not isinstance(outcomes[k], Ok) for k in others):
        return []
    for group in members.values():
        if policy.arbiter in group:
            continue
        if set(others) <= set(group) and len({k.split(":")[0] for k in others}) >= 2:
            return others
    return []


def _mark_known(f: Finding, policy: Policy) -> Finding:
    for k in policy.known:
        if any(k.matches(p, f.signature) for p in f.pipelines if p != policy.arbiter):
            return replace(f, known_issue=k.issue or "known")
    return f


def _crash_finding(label: str, o: CompileCrash | RunCrash | Timeout) -> Finding:
    match o:
        case CompileCrash(stage=stage, signature=sig, log=log):
            line = normalise_crash_line(sig or log)
            return Finding(kind=FindingKind.COMPILE_CRASH, pipelines=(label,),
                           signature=f"compile-crash|{label}|{stage}|{line}", detail=detail(o))
        case RunCrash(signal=sig):
            return Finding(kind=FindingKind.RUN_CRASH, pipelines=(label,),
                           signature=f"run-crash|{label}|{sig}", detail=detail(o))
        case Timeout(stage=stage):
            return Finding(kind=FindingKind.TIMEOUT, pipelines=(label,),
                           signature=f"timeout|{label}|{stage}", detail=detail(o))


def _judge_one(label: str, o: Outcome, arbiter: Outcome, loose: bool, policy: Policy,
               ops: str) -> Finding | None:
    if isinstance(o, Unsupported | Unavailable):
        return None
    if isinstance(o, PipelineFailure):
        return Finding(kind=FindingKind.PIPELINE_ERROR, pipelines=(label,),
                       signature=f"pipeline-error|{label}|{normalise_crash_line(o.error)}",
                       detail=o.error)
    if isinstance(o, CompileCrash | RunCrash | Timeout):
        return _crash_finding(label, o)
    if isinstance(o, Rejected):
        return Finding(kind=FindingKind.REJECTED, pipelines=(label,),
                       signature=f"rejected|{label}|{o.reason}", detail=detail(o))
    if isinstance(arbiter, Trap):
        if isinstance(o, Trap) and o.kind == arbiter.kind:
            return None
        got = f"trap {o.kind}" if isinstance(o, Trap) else "no trap"
        return Finding(kind=FindingKind.TRAP_MISMATCH, pipelines=(label,),
                       signature=f"trap-mismatch|{label}|expected {arbiter.kind}, got {got}",
                       detail=f"{policy.arbiter}: {detail(arbiter)}; {label}: {got}")
    assert isinstance(arbiter, Ok), arbiter
    if isinstance(o, Trap):
        return Finding(kind=FindingKind.TRAP_MISMATCH, pipelines=(label,),
                       signature=f"trap-mismatch|{label}|unexpected {o.kind}",
                       detail=f"{label}: {detail(o)}; {policy.arbiter} finished")
    assert isinstance(o, Ok), o
    diffs, total = compare_outputs(arbiter.outputs, o.outputs, loose_zero=loose,
                                   max_diffs=policy.max_diffs)
    if not total:
        return None
    return Finding(kind=FindingKind.WRONG_CODE, pipelines=(policy.arbiter, label),
                   signature=f"wrong-code|{label}|ops={ops}",
                   detail=f"{total} element{'s differ' if total != 1 else ' differs'}",
                   diffs=tuple(diffs), differing_elements=total)
