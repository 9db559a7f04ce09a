"""Judge the outcomes of one case (docs/design.md §5).

Outputs are grouped into classes of equal results: integers and bools bitwise, floats bitwise
except that every NaN equals every NaN and, where the policy allows, +0.0 equals -0.0. When
the reference explored the NaN bits a kernel can observe (`Buffer.latitude`), it is precise
instead: an element equals the reference's when it holds a value some allowed choice of NaN
sign and payload gives, and only then (docs/language.md "NaN bits"). The arbiter (`ref`)
decides: every pipeline outside its class is a wrong-code finding; crashes, timeouts and trap
disagreements are findings of their own. When the arbiter itself traps, pipelines must trap
the same way; when it rejects the case, the case is outside the language and nothing is
compared.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from oracles.policy import Policy, ZeroSign
from oracles.signature import Signature
from oracles.verdict import ElementDiff, Finding, FindingKind, Verdict
from oracles.waves import join_verdicts, wave_groups
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
from rgpu_fuzz.pipelines.base import spec_name


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


_NUMBER = re.compile(r"\b\d+\b")


def pipeline_error_line(error: str) -> str:
    """The bug a `PipelineFailure` names: what was wrong with a returned value (the text
    before its first `:`, without the buffer, sizes and types of this case), or the
    exception line with numbers blanked."""
    line = error.split(":", 1)[0] if error.startswith("returned") else error
    return _NUMBER.sub("N", normalise_crash_line(line))


def _uses_float_min_max(module: Module | None) -> bool:
    if module is None:
        return True
    return any(isinstance(n, MethodCall) and n.method in ("min", "max") for n in walk(module))


def _canonical_bits(buf: Buffer, loose_zero: bool, any_nan: bool = True) -> np.ndarray:
    """Bit patterns with every NaN mapped to one pattern when `any_nan` (and -0.0 to +0.0
    when loose)."""
    values = np.ascontiguousarray(buf.values, dtype=buf.ty.dtype)
    if buf.ty is Scalar.BOOL:
        return values.astype(np.uint8)
    bits = values.view(buf.ty.bits_dtype).copy()
    if buf.ty.is_float:
        if any_nan:
            bits[np.isnan(values)] = np.array(-1).astype(buf.ty.bits_dtype)
        if loose_zero:
            bits[values == 0] = 0
    return bits


def _differing(e: Buffer, a: Buffer, loose_zero: bool) -> np.ndarray:
    """Indices where `a` differs from the expected `e`. Without a latitude every NaN equals
    every NaN; with one (the reference knows which NaN bits are unspecified,
    docs/language.md "NaN bits") a NaN's bits are compared, and an element differs only
    when it holds none of the values the latitude allows."""
    lat = e.latitude
    eb = _canonical_bits(e, loose_zero, any_nan=lat is None)
    ab = _canonical_bits(a, loose_zero, any_nan=lat is None)
    idx = np.flatnonzero(eb != ab)
    if lat is None or not len(idx) or e.ty is Scalar.BOOL:
        return idx
    raw_e = np.ascontiguousarray(e.values, dtype=e.ty.dtype).view(e.ty.bits_dtype)
    raw_a = np.ascontiguousarray(a.values, dtype=a.ty.dtype).view(a.ty.bits_dtype)
    return idx[~lat.allows(idx, raw_e[idx], raw_a[idx])]


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
        idx = _differing(e, a, loose_zero)
        total += len(idx)
        raw_e, raw_a = e.bits(), a.bits()
        for i in idx[: max(0, max_diffs - len(diffs))]:
            i = int(i)
            diffs.append(ElementDiff(name, i, _fmt_value(e, i), raw_e[i], _fmt_value(a, i),
                                     raw_a[i]))
    return diffs, total


def judge(case: Case, outcomes: Mapping[str, Outcome], policy: Policy,
          module: Module | None = None) -> Verdict:
    """Read all outcomes of one case. `module` is the parsed kernel (for signatures).

    Outcomes of a kernel with wave functions carry the wave size they ran at
    (`Stats.wave_size`); each wave size is judged on its own, against the arbiter's outcome
    at that size (the runner runs the reference once per size, `pipelines.runner`), and the
    verdicts are joined (`oracles.waves`).
    """
    groups = wave_groups(outcomes, spec_name(policy.arbiter))
    if len(groups) == 1:
        return _judge_group(case, groups[0], policy, module)
    return join_verdicts([_judge_group(case, g, policy, module) for g in groups])


def _judge_group(case: Case, outcomes: Mapping[str, Outcome], policy: Policy,
                 module: Module | None = None) -> Verdict:
    """Judge outcomes that ran at one wave size (or of a kernel without wave functions).

    The arbiter is the first outcome whose pipeline *name* is the policy's arbiter
    (`ref:steps=100000` is `ref`). Without an arbiter that finished or trapped, the
    pipelines are still compared with each other: any two that disagree are a finding, and
    the finding names the suspect — the pipelines outside a strict majority, or none."""
    loose = policy.zero_sign is ZeroSign.LOOSE or (
        policy.zero_sign is ZeroSign.LOOSE_IF_MIN_MAX and _uses_float_min_max(module))
    ops = ",".join(kernel_operations(module)) if module is not None else ""
    compared = tuple(k for k, o in outcomes.items()
                     if not isinstance(o, Unsupported | Unavailable))
    arbiter_label = arbiter_of(outcomes, policy)
    arbiter = outcomes.get(arbiter_label) if arbiter_label is not None else None
    if isinstance(arbiter, Rejected):
        assert arbiter_label is not None
        return Verdict(compared=compared, findings=(Finding(
            kind=FindingKind.INVALID_CASE, pipelines=(arbiter_label,),
            signature=str(Signature(kind=FindingKind.INVALID_CASE, detail=arbiter.reason)),
            detail=detail(arbiter)),))

    members = _classes(outcomes, loose)
    findings: list[Finding] = []
    for label, o in outcomes.items():
        findings.extend(_nondeterminism(label, o))
    if arbiter_label is None or not isinstance(arbiter, Ok | Trap):
        findings.extend(_judge_without_arbiter(outcomes, members, loose, policy, ops,
                                               arbiter_label))
    else:
        findings.extend(_judge_with_arbiter(outcomes, members, arbiter_label, loose, policy,
                                            ops))
    findings = [_mark_known(f, policy, arbiter_label) for f in findings]
    return Verdict(findings=tuple(findings), compared=compared,
                   classes=tuple(tuple(m) for m in members.values() if m))


def arbiter_of(outcomes: Mapping[str, Outcome], policy: Policy) -> str | None:
    """The label of the arbiter's outcome: the first whose pipeline name is the policy's
    arbiter name (never a label match: options do not make `ref` another pipeline)."""
    want = spec_name(policy.arbiter)
    return next((k for k in outcomes if spec_name(k) == want), None)


def _result_key(o: Outcome) -> str | None:
    """Traps compare by kind; None for outcomes that are not results (crashes, skips)."""
    return f"trap {o.kind}" if isinstance(o, Trap) else None


def _classes(outcomes: Mapping[str, Outcome], loose: bool) -> dict[str, list[str]]:
    """Pipelines that finished or trapped, grouped by equal result (first member first)."""
    reps: list[tuple[str, Outcome]] = []
    members: dict[str, list[str]] = {}
    for label, o in outcomes.items():
        if not isinstance(o, Ok | Trap):
            continue
        for rep, rep_o in reps:
            if _same_result(rep_o, o, loose):
                members[rep].append(label)
                break
        else:
            reps.append((label, o))
            members[label] = [label]
    return members


def _same_result(a: Outcome, b: Outcome, loose: bool) -> bool:
    if isinstance(a, Ok) and isinstance(b, Ok):
        if any(buf.latitude is not None for buf in b.outputs.values()):
            a, b = b, a  # the side that knows which NaN bits are unspecified judges
        return not compare_outputs(a.outputs, b.outputs, loose_zero=loose, max_diffs=1)[1]
    return _result_key(a) is not None and _result_key(a) == _result_key(b)


def _judge_with_arbiter(outcomes: Mapping[str, Outcome], members: Mapping[str, list[str]],
                        arbiter_label: str, loose: bool, policy: Policy,
                        ops: str) -> list[Finding]:
    arbiter = outcomes[arbiter_label]
    findings: list[Finding] = []
    outvoted = _arbiter_outvoted(outcomes, members, arbiter_label)
    for label, o in outcomes.items():
        if label == arbiter_label or label in outvoted:
            continue
        finding = _judge_one(label, o, arbiter, arbiter_label, loose, policy, ops)
        if finding is not None:
            findings.append(finding)
    if outvoted:
        assert isinstance(arbiter, Ok)
        other = outcomes[outvoted[0]]
        assert isinstance(other, Ok)
        diffs, total = compare_outputs(arbiter.outputs, other.outputs, loose_zero=loose,
                                       max_diffs=policy.max_diffs)
        findings.append(Finding(
            kind=FindingKind.WRONG_CODE, pipelines=(arbiter_label, *outvoted),
            signature=str(Signature(kind=FindingKind.WRONG_CODE,
                                    pipeline=f"{spec_name(arbiter_label)}-outvoted",
                                    detail=f"ops={ops}")),
            detail=(f"{len(outvoted)} independent pipelines agree with each other against "
                    f"{arbiter_label} ({total} element{'s' if total != 1 else ''}): "
                    f"suspect {arbiter_label} first"),
            diffs=tuple(diffs), differing_elements=total, suspects=(arbiter_label,)))
    return findings


def _judge_without_arbiter(outcomes: Mapping[str, Outcome], members: Mapping[str, list[str]],
                           loose: bool, policy: Policy, ops: str,
                           arbiter_label: str | None) -> list[Finding]:
    """No arbiter result (none ran, it is unavailable, or it crashed): crashes are still
    findings, and pipelines that disagree with each other are compared among themselves.
    A strict majority class is taken as the reference and every pipeline outside it is
    suspect; with no strict majority, one finding names every class and no suspect."""
    findings: list[Finding] = []
    for label, o in outcomes.items():
        finding = _failure_finding(label, o)
        if finding is not None:
            findings.append(finding)
    groups = sorted(members.values(), key=len, reverse=True)
    if len(groups) < 2:
        return findings
    why = ("no arbiter ran" if arbiter_label is None
           else f"the arbiter {arbiter_label} gave no result ({outcomes[arbiter_label].status})")
    if len(groups[0]) > len(groups[1]):
        majority = groups[0]
        reference = outcomes[majority[0]]
        ref_name = "majority " + ",".join(majority)
        for group in groups[1:]:
            for label in group:
                f = _judge_one(label, outcomes[label], reference, ref_name, loose, policy, ops)
                assert f is not None, (label, majority)
                findings.append(replace(
                    f, pipelines=(*majority, label),
                    detail=f"{f.detail}; {why}: {label} differs from the {ref_name}, "
                           f"suspect {label}", suspects=(label,)))
        return findings
    labels = [m for g in groups for m in g]
    first, second = outcomes[groups[0][0]], outcomes[groups[1][0]]
    kind = FindingKind.WRONG_CODE if isinstance(first, Ok) and isinstance(second, Ok) \
        else FindingKind.TRAP_MISMATCH
    diffs: tuple[ElementDiff, ...] = ()
    total = 0
    if isinstance(first, Ok) and isinstance(second, Ok):
        d, total = compare_outputs(first.outputs, second.outputs, loose_zero=loose,
                                   max_diffs=policy.max_diffs)
        diffs = tuple(d)
    shown = " vs ".join("{" + ",".join(g) + "}" for g in groups)
    detail_text = (f"{why} and no majority: {shown} disagree; suspect none "
                   f"(add the arbiter {spec_name(policy.arbiter)} to decide)")
    pipeline = "/".join(sorted(labels))
    signature = Signature(kind=kind, pipeline=pipeline,
                          detail=f"ops={ops}" if kind is FindingKind.WRONG_CODE else
                          "no majority: " + " vs ".join(sorted(
                              _result_key(outcomes[g[0]]) or "no trap" for g in groups)))
    findings.append(Finding(kind=kind, pipelines=tuple(labels), signature=str(signature),
                            detail=detail_text, diffs=diffs, differing_elements=total))
    return findings


AGAIN = "-again"
"""Suffix of an artefact hash from a second compilation that differed from the first."""


def _nondeterminism(label: str, o: Outcome) -> list[Finding]:
    """docs/design.md §3: the same case compiled twice must give the same bytes."""
    found = []
    for key, value in sorted(o.stats.artefacts.items()):
        if key.endswith(AGAIN):
            base = key[: -len(AGAIN)]
            found.append(Finding(
                kind=FindingKind.NONDETERMINISM, pipelines=(label,),
                signature=str(Signature(kind=FindingKind.NONDETERMINISM, pipeline=label,
                                        stage=base)),
                detail=f"{base} differs between two compilations: "
                       f"{o.stats.artefacts.get(base, '?')[:12]} vs {value[:12]}"))
    return found


def _arbiter_outvoted(outcomes: Mapping[str, Outcome], members: Mapping[str, list[str]],
                      arbiter_label: str) -> list[str]:
    """The pipelines that outvote the arbiter: when every other pipeline finished, at least
    two from different compilers (`llvm-cpu:O0` and `llvm-cpu:O3` count as one) agree with
    each other and differ from the arbiter, the likely bug is in the arbiter — reported once,
    not once per pipeline."""
    if not isinstance(outcomes[arbiter_label], Ok):
        return []
    others = [k for k, o in outcomes.items() if k != arbiter_label
              and not isinstance(o, Unsupported | Unavailable)]
    if not others or any(not isinstance(outcomes[k], Ok) for k in others):
        return []
    for group in members.values():
        if arbiter_label in group:
            continue
        if set(others) <= set(group) and len({spec_name(k) for k in others}) >= 2:
            return others
    return []


def _mark_known(f: Finding, policy: Policy, arbiter_label: str | None) -> Finding:
    for k in policy.known:
        if any(k.matches(p, f.signature) for p in f.pipelines if p != arbiter_label):
            return replace(f, known_issue=k.issue or "known")
    return f


def _crash_finding(label: str, o: CompileCrash | RunCrash | Timeout) -> Finding:
    match o:
        case CompileCrash(stage=stage, signature=sig, log=log):
            line = normalise_crash_line(sig or log)
            return Finding(kind=FindingKind.COMPILE_CRASH, pipelines=(label,),
                           signature=str(Signature(kind=FindingKind.COMPILE_CRASH,
                                                   pipeline=label, stage=stage,
                                                   detail=line)),
                           detail=detail(o))
        case RunCrash(signal=sig):
            return Finding(kind=FindingKind.RUN_CRASH, pipelines=(label,),
                           signature=str(Signature(kind=FindingKind.RUN_CRASH, pipeline=label,
                                                   detail=sig)), detail=detail(o))
        case Timeout(stage=stage):
            return Finding(kind=FindingKind.TIMEOUT, pipelines=(label,),
                           signature=str(Signature(kind=FindingKind.TIMEOUT, pipeline=label,
                                                   stage=stage)), detail=detail(o))


def _failure_finding(label: str, o: Outcome) -> Finding | None:
    """The finding an outcome is on its own, whatever the others did: a crash, a timeout,
    a compiler rejecting a case, a broken pipeline. None for results and skips."""
    if isinstance(o, CompileCrash | RunCrash | Timeout):
        return _crash_finding(label, o)
    if isinstance(o, Rejected):
        return Finding(kind=FindingKind.REJECTED, pipelines=(label,),
                       signature=str(Signature(kind=FindingKind.REJECTED, pipeline=label,
                                               detail=o.reason)), detail=detail(o))
    if isinstance(o, PipelineFailure):
        return Finding(kind=FindingKind.PIPELINE_ERROR, pipelines=(label,),
                       signature=str(Signature(kind=FindingKind.PIPELINE_ERROR, pipeline=label,
                                               detail=pipeline_error_line(o.error))),
                       detail=o.error + (f"\n{o.traceback}" if o.traceback else ""))
    return None


def _judge_one(label: str, o: Outcome, arbiter: Outcome, arbiter_name: str, loose: bool,
               policy: Policy, ops: str) -> Finding | None:
    """One pipeline's outcome against the reference result `arbiter` (Ok or Trap), named
    `arbiter_name` in details and diffs."""
    if isinstance(o, Unsupported | Unavailable):
        return None
    failure = _failure_finding(label, o)
    if failure is not None:
        return failure
    if isinstance(arbiter, Trap):
        if isinstance(o, Trap) and o.kind == arbiter.kind:
            return None
        got = f"trap {o.kind}" if isinstance(o, Trap) else "no trap"
        return Finding(kind=FindingKind.TRAP_MISMATCH, pipelines=(label,),
                       signature=str(Signature(kind=FindingKind.TRAP_MISMATCH, pipeline=label,
                                               detail=f"expected {arbiter.kind}, got {got}")),
                       detail=f"{arbiter_name}: {detail(arbiter)}; {label}: {got}")
    assert isinstance(arbiter, Ok), arbiter
    if isinstance(o, Trap):
        return Finding(kind=FindingKind.TRAP_MISMATCH, pipelines=(label,),
                       signature=str(Signature(kind=FindingKind.TRAP_MISMATCH, pipeline=label,
                                               detail=f"unexpected {o.kind}")),
                       detail=f"{label}: {detail(o)}; {arbiter_name} finished")
    assert isinstance(o, Ok), o
    diffs, total = compare_outputs(arbiter.outputs, o.outputs, loose_zero=loose,
                                   max_diffs=policy.max_diffs)
    if not total:
        return None
    return Finding(kind=FindingKind.WRONG_CODE, pipelines=(arbiter_name, label),
                   signature=str(Signature(kind=FindingKind.WRONG_CODE, pipeline=label,
                                           detail=f"ops={ops}")),
                   detail=f"{total} element{'s differ' if total != 1 else ' differs'}",
                   diffs=tuple(diffs), differing_elements=total)
