"""What a report says about a finding before it goes upstream: the evidence line
(`triage.evidence`), the culprit pass (`triage.culprit`) and the possible duplicates
(`triage.duplicates`), gathered by rerunning the case, kept in the findings store
(`triage.facts_store`) when the case came from one, and rendered as a Markdown section.

`gather_facts` is what `rgpu-fuzz report <id>` and `report <id> --upstream DIR` call; `triage
show` prints the kept lines (`shown_lines`) without rerunning anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from oracles import Policy
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import Outcome
from rgpu_fuzz.pipelines.base import PipelineSpec
from rgpu_fuzz.pipelines.options import PipelineError
from rgpu_fuzz.pipelines.registry import Registry
from triage.culprit import Culprit, find_culprit
from triage.duplicates import Duplicate, find_duplicates
from triage.evidence import Evidence, gather
from triage.facts_store import facts_of, load_facts, record_facts
from triage.trials import Trials

LLVM_PIPELINES = frozenset({"amdgpu-sim", "llvm-cpu", "rustc-amdgpu", "rustc-cpu", "hip",
                            "nvptx-gpu"})
"""The pipelines (and their plugin subclasses) whose variants the evidence line knows."""


@dataclass(frozen=True)
class Facts:
    spec: str
    evidence: Evidence | None
    culprit: Culprit | None
    duplicates: tuple[Duplicate, ...]
    note: str = ""
    """Why there is no evidence or culprit (a pipeline the search does not know)."""


def gather_facts(case: Case, spec: str, policy: Policy, *, outcome: Outcome | None = None,
                 signature: str | None = None, store: Path | None = None,
                 bucket: str | None = None, registry: Registry | None = None) -> Facts:
    """Evidence, culprit and duplicates of the finding of `spec` on `case` (its bucket
    `bucket`, signature `signature`, in `store` when given: the facts are kept there)."""
    trials = Trials(case, policy, registry)
    name = PipelineSpec.parse(spec).name
    try:
        family = {getattr(c, "name", "") for c in trials.registry.cls(name).__mro__}
    except PipelineError:
        family = set()
    if not family & LLVM_PIPELINES:
        return Facts(spec, None, None, tuple(find_duplicates(case, "", signature, store,
                                                             bucket)),
                     f"no evidence or culprit search for {name}: not an LLVM pipeline")
    evidence = gather(trials, spec, outcome)
    culprit = find_culprit(trials, spec, outcome)
    dups = find_duplicates(case, culprit.passes[0] if len(culprit.passes) == 1 else "",
                           signature, store, bucket)
    if store is not None and signature is not None and store.is_file():
        record_facts(store, facts_of(signature, case.id, evidence, culprit))
    return Facts(spec, evidence, culprit, tuple(dups))


def facts_section(facts: Facts) -> str:
    """The Markdown section of a report: evidence, culprit, duplicates, one line each."""
    lines = ["## Evidence", ""]
    if facts.evidence is not None and facts.culprit is not None:
        lines += [f"- evidence: {facts.evidence.line()}", f"- {facts.culprit.line()}", ""]
    else:
        lines += [f"- {facts.note}", ""]
    lines += ["### Filed already?", ""]
    lines += [f"- `{d.where}`: {d.why}" for d in facts.duplicates] or [
        "- no known bug, corpus case or bucket with the same culprit pass, shape or bug key"]
    return "\n".join(lines) + "\n"


def shown_lines(store: Path, signature: str) -> list[tuple[str, str]]:
    """(label, text) rows for `triage show`: the kept evidence and culprit lines, or a row
    saying how to gather them."""
    kept = load_facts(store, signature)
    if kept is None:
        return [("evidence", "not gathered (rgpu-fuzz report <bucket> gathers and keeps it)")]
    return [("evidence", kept.evidence), ("culprit", kept.culprit.removeprefix("culprit pass: "))]


__all__ = ["Facts", "facts_section", "gather_facts", "shown_lines"]
