"""Run one case through a list of pipelines: the step every command and campaign shares.

A kernel with wave functions computes different things at different wave sizes, and the
oracle compares each pipeline with the reference at that pipeline's wave size
(`oracles.waves`). So for such a kernel every reference-like pipeline of the list
(`Pipeline.with_wave_size`) runs once more per other wave size the list's pipelines declare,
its outcome labelled with that size (`ref:wave=32`); other kernels run as given.
"""

from __future__ import annotations

from collections.abc import Sequence

from rgpu_fuzz.lang.features import case_features
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import Outcome
from rgpu_fuzz.pipelines.base import Pipeline


def run_case(case: Case, pipelines: Sequence[Pipeline]) -> dict[str, Outcome]:
    """Every pipeline's outcome, keyed by its spec label, in the order given, then the
    references at the other wave sizes (module docstring)."""
    return run_cases([case], pipelines)[0]


def run_cases(cases: Sequence[Case], pipelines: Sequence[Pipeline]) -> list[dict[str, Outcome]]:
    """`run_case` for several cases at once, so pipelines that batch (rustc) can."""
    feats = [case_features(c) for c in cases]
    out: list[dict[str, Outcome]] = [{} for _ in cases]
    for p in pipelines:
        if len(cases) == 1:  # `run` directly: a single case needs no batch machinery
            out[0][p.label] = p.run(cases[0], feats[0])
            continue
        for row, outcome in zip(out, p.run_many(cases, feats), strict=True):
            row[p.label] = outcome
    wave = [i for i, f in enumerate(feats) if "wave" in f]
    if wave:
        for extra in wave_references(pipelines):
            got = extra.run_many([cases[i] for i in wave], [feats[i] for i in wave])
            for i, outcome in zip(wave, got, strict=True):
                out[i].setdefault(extra.label, outcome)
    return out


def wave_references(pipelines: Sequence[Pipeline]) -> list[Pipeline]:
    """The reference-like pipelines of the list at each wave size some other pipeline of
    the list declares and they do not run at."""
    sizes = sorted({p.wave_size for p in pipelines if p.with_wave_size(p.wave_size) is None})
    extra: list[Pipeline] = []
    labels = {p.label for p in pipelines}
    for ref in pipelines:
        for w in sizes:
            again = ref.with_wave_size(w)
            if again is not None and again.label not in labels:
                labels.add(again.label)
                extra.append(again)
    return extra
