"""Run one case through a list of pipelines: the step every command and campaign shares."""

from __future__ import annotations

from collections.abc import Sequence

from rgpu_fuzz.lang.features import case_features
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import Outcome
from rgpu_fuzz.pipelines.base import Pipeline


def run_case(case: Case, pipelines: Sequence[Pipeline]) -> dict[str, Outcome]:
    """Every pipeline's outcome, keyed by its spec label, in the order given."""
    feats = case_features(case)
    return {p.label: p.run(case, feats) for p in pipelines}


def run_cases(cases: Sequence[Case], pipelines: Sequence[Pipeline]) -> list[dict[str, Outcome]]:
    """`run_case` for several cases at once, so pipelines that batch (rustc) can."""
    feats = [case_features(c) for c in cases]
    out: list[dict[str, Outcome]] = [{} for _ in cases]
    for p in pipelines:
        for row, outcome in zip(out, p.run_many(cases, feats), strict=True):
            row[p.label] = outcome
    return out
