"""Rerun a case on named pipelines and judge it: the one way every part of triage does.

`reproduce`, `run`, the nightly `recheck` (and its corpus update), a campaign's jobs and
reductions, reduction predicates, bug-key probes and known-bug rechecks all ask the same
question of a case — "run these pipelines on it and judge what they computed" — so they
ask it here:

* `make_pipelines` creates pipeline specs, loading the plugin files a store recorded for
  names the registry lacks by the one plugin rule (`triage/plugins.py`: a recorded file
  loads only if its sha256 is the one recorded; otherwise one line naming `--plugin`);
* `rerun` runs the case on the pipelines (those whose outcome the caller already has, say
  the arbiter's of a probe, are not run again) and judges the outcomes with the policy,
  the kernel parsed once (`case_module`). Its result is a plain frozen value, `Rerun`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from oracles import Finding, Policy, Signature, Verdict, judge
from rgpu_fuzz.lang.features import case_features, case_module
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.errors import RgpuError
from rgpu_fuzz.model.outcome import Outcome, Unavailable, Unsupported, detail
from rgpu_fuzz.pipelines.base import Pipeline, PipelineSpec
from rgpu_fuzz.pipelines.options import PipelineError
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.runner import wave_references
from triage.plugins import load_recorded


class RerunError(RgpuError):
    """A pipeline of a rerun cannot be made here; `str()` is the one line to print."""


@dataclass(frozen=True, slots=True)
class Rerun:
    """What one rerun saw: every pipeline's outcome by label (in run order, those given
    first) and the oracle's verdict on them."""

    outcomes: Mapping[str, Outcome]
    verdict: Verdict

    @property
    def not_run(self) -> str:
        """Why some pipeline gave no verdict here (unavailable, unsupported), or ""."""
        for label, o in self.outcomes.items():
            if isinstance(o, Unavailable | Unsupported):
                return f"{label}: {o.status}: {detail(o)}"
        return ""

    def finding(self, signature: Signature) -> Finding | None:
        """The finding with exactly this signature, if the rerun has one."""
        return next((f for f in self.verdict.findings if f.signature == signature), None)


def rerun(case: Case, pipelines: Sequence[Pipeline], policy: Policy, *,
          given: Mapping[str, Outcome] | None = None) -> Rerun:
    """Run `case` on `pipelines` and judge. `given`: outcomes already known by label (an
    arbiter run once for several probes); a pipeline with one is not run again. A kernel
    with wave functions also runs the list's reference at every wave size another pipeline
    of the list declares (`runner.wave_references`), so no pipeline goes unjudged."""
    outcomes: dict[str, Outcome] = dict(given or {})
    features = case_features(case)
    run = list(pipelines)
    if "wave" in features:  # a reference at each wave size the list needs (`oracles.waves`)
        run += wave_references(run)
    for p in run:
        if p.label not in outcomes:
            outcomes[p.label] = p.run(case, features)
    return Rerun(outcomes, judge(case, outcomes, policy, case_module(case)))


def make_pipelines(registry: Registry, specs: Sequence[str],
                   recorded: Mapping[str, tuple[Path, str]] | None = None) -> list[Pipeline]:
    """The pipelines of `specs`, in order. A name the registry lacks is loaded from the
    plugin file `recorded` names for it (name -> (path, sha256), `FindingStore.plugins`),
    only when the file is the one recorded; a `RerunError` (one line) otherwise."""
    load_plugins_for(registry, specs, recorded or {})
    try:
        return registry.create_all(list(specs))
    except PipelineError as e:
        raise RerunError(str(e).splitlines()[0]) from None


def load_plugins_for(registry: Registry, specs: Sequence[str],
                     recorded: Mapping[str, tuple[Path, str]]) -> list[str]:
    """Load the recorded plugin files of the pipelines of `specs` that no `--plugin`
    defined (`triage.plugins.load_recorded`); the files loaded. A pipeline whose recorded
    file is gone or changed is a `RerunError` that says what to pass."""
    names = {n for n in (PipelineSpec.parse(s).name for s in specs)
             if n not in registry.names() and n in recorded}
    if not names:
        return []
    loaded, missing = load_recorded(registry, names, recorded)
    if missing:
        raise RerunError(next(iter(missing.values())))
    return loaded


__all__ = ["Rerun", "RerunError", "load_plugins_for", "make_pipelines", "rerun"]
