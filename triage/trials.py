"""One case rerun on pipeline after pipeline, each judged against the arbiter's outcome: the
experiments of the culprit search (`triage/culprit.py`) and of the evidence line
(`triage/evidence.py`). The arbiter runs once; each trial is one compile and run of the
case on one spec, judged by the oracle policy as a campaign judges it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from oracles import Policy, judge
from rgpu_fuzz.lang.features import case_features
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import CompileCrash, Outcome, PipelineFailure, Unavailable, detail
from rgpu_fuzz.pipelines.options import PipelineError
from rgpu_fuzz.pipelines.registry import Registry


@dataclass(frozen=True)
class Trial:
    """What one spec made of the case. `agrees`: True or False by the oracle, None when the
    spec could not answer (not available here, not a valid spec, the compiler failed)."""

    spec: str
    agrees: bool | None
    outcome: Outcome | None
    why: str = ""


class Trials:
    """Runs `case` on specs against `policy`'s arbiter (run once, on first use)."""

    def __init__(self, case: Case, policy: Policy, registry: Registry | None = None) -> None:
        self.case = case
        self.policy = policy
        self.registry = registry or Registry()
        self._features = case_features(case)
        self._module = parse(case.kernel)
        self.runs = 0

    @cached_property
    def arbiter(self) -> Outcome:
        return self.registry.create(self.policy.arbiter).run(self.case, self._features)

    def run(self, spec: str) -> Trial:
        try:
            pipeline = self.registry.create(spec)
        except (PipelineError, KeyError) as e:
            return Trial(spec, None, None, f"not a pipeline here: {e}")
        self.runs += 1
        got = pipeline.run(self.case, self._features)
        if isinstance(got, Unavailable):
            return Trial(spec, None, got, f"not available here: {got.reason}")
        if isinstance(got, CompileCrash | PipelineFailure):
            return Trial(spec, None, got, detail(got))
        verdict = judge(self.case, {self.policy.arbiter: self.arbiter, pipeline.label: got},
                        self.policy, self._module)
        return Trial(spec, verdict.agree, got, "" if verdict.agree else "; ".join(
            str(f.signature) for f in verdict.findings))


__all__ = ["Trial", "Trials"]
