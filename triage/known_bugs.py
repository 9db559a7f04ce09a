"""Known LLVM bugs: a finding that one of them explains is bucketed under the bug's name,
not as a new bug (`known_bugs.toml`).

An amdgpu-sim O0 campaign (wave64 or wave32 target) keeps finding LLVM 22's lane-VGPR bug
(docs/findings/8081e0ac57.md), and its signature names only a trap kind or an operation, so
without this every such finding looks new, and any other O0 out-of-bounds trap mismatch
joins its bucket. The recheck is the finding note's causal test: the same pipeline, the
same case, code generation by an llc that undoes just this bug (one MIR edit). When that
run agrees with the arbiter, the bug explains the finding and its bucket signature's detail
becomes `known LLVM bug <upstream> (<name>)`; otherwise it is bucketed as before. Either
way the finding is stored. Cost: one extra compile and simulation per applicable finding.

A bug that code generation cannot undo (an IR optimisation's, such as LLVM 22.1's constant
fold of wave reductions, docs/findings/wave-reduce-fold.md) names a `recheck_pipeline`
instead: a pipeline class (`module:Class`) made with the finding pipeline's options, whose
`transform_ir` keeps the bug from happening. Such a recheck applies only to the plain
pipeline its `pipelines` name (a plugin subclass's own `transform_ir` would be lost).
"""

from __future__ import annotations

import atexit
import importlib
import os
import shutil
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources, util
from pathlib import Path

from oracles import Finding, Policy, Signature
from oracles.waves import arbiter_outcome
from rgpu_fuzz.lang.ast import Module
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import Outcome
from rgpu_fuzz.pipelines.base import Pipeline, spec_name
from rgpu_fuzz.pipelines.options import PipelineError
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.sim import target_config
from triage.rerun import rerun

KNOWN_PREFIX = "known LLVM bug "


@dataclass(frozen=True, slots=True)
class KnownBug:
    """One row of `known_bugs.toml`."""

    name: str
    upstream: str
    kinds: frozenset[str]
    pipelines: frozenset[str]
    opt: frozenset[int]
    wave_sizes: frozenset[int]
    recheck: str
    """Module of the llc wrapper (run as a script: `LLC LLC-ARGS...`); "" with a
    `recheck_pipeline`."""
    llc: tuple[str, ...]
    """Candidates for the real llc the wrapper drives; the first found is used."""
    recheck_pipeline: str = ""
    """`module:Class` of a pipeline that runs the finding's spec without the bug."""
    finding: str = ""
    """The finding note (`docs/findings/*.md`) that explains the bug."""
    reproducer: str = ""
    """The hand-written upstream test (`docs/llvm-bugs/*.ll`), for `report --upstream`."""

    @property
    def detail(self) -> str:
        return f"{KNOWN_PREFIX}{self.upstream} ({self.name})"


@cache
def known_bugs() -> tuple[KnownBug, ...]:
    data = tomllib.loads(resources.files("triage").joinpath("known_bugs.toml")
                         .read_text())
    return tuple(KnownBug(b["name"], b["upstream"], frozenset(b["kinds"]),
                          frozenset(b["pipelines"]), frozenset(b["opt"]),
                          frozenset(b["wave_sizes"]), b.get("recheck", ""),
                          tuple(b.get("llc", ())), b.get("recheck_pipeline", ""),
                          b.get("finding", ""), b.get("reproducer", ""))
                 for b in data["bug"])


def reproducer_of(issue: str) -> str | None:
    """The reproducer the known bug whose finding note is `issue` names (a case's
    `[expect] issue`), or None."""
    return next((b.reproducer for b in known_bugs()
                 if b.reproducer and issue and b.finding == issue), None)


def is_known_bug(signature: Signature | None) -> bool:
    """Whether `signature` is a known-bug bucket's."""
    return signature is not None and signature.detail.startswith(KNOWN_PREFIX)


def _applies(bug: KnownBug, finding: Finding, pipeline: Pipeline) -> bool:
    if finding.kind.value not in bug.kinds or "llc" in dict(_options(pipeline)):
        return False
    names = {getattr(c, "name", None) for c in type(pipeline).__mro__}
    if bug.recheck_pipeline:
        names = {type(pipeline).name}  # the plain pipeline only (module docstring)
    if not names & bug.pipelines:
        return False
    opts = dict(_options(pipeline))
    try:
        return (opts.get("opt") in bug.opt
                and target_config(str(opts.get("target"))).wave_size in bug.wave_sizes)
    except KeyError:
        return False


def _options(pipeline: Pipeline) -> list[tuple[str, object]]:
    return [(d.name, pipeline.option(d)) for d in getattr(pipeline, "options", ())
            if pipeline.option(d) is not None]


@cache
def _wrapper(bug: KnownBug) -> str | None:
    """An executable for the pipeline's `llc=` option running `bug.recheck` over the real
    llc; None when no such llc is installed (then no recheck)."""
    llc = next((p for p in (shutil.which(c) for c in bug.llc) if p), None)
    spec = util.find_spec(bug.recheck)
    if llc is None or spec is None or spec.origin is None:
        return None
    path = Path(tempfile.mkdtemp(prefix="rgpu-known-")) / f"llc-{bug.name}"
    atexit.register(shutil.rmtree, path.parent, True)
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{spec.origin}" "{llc}" "$@"\n')
    os.chmod(path, 0o755)
    return str(path)


class KnownBugs:
    """The known-bug recheck of one campaign's findings (rechecking pipelines cached)."""

    def __init__(self, registry: Registry, policy: Policy) -> None:
        self.registry = registry
        self.policy = policy
        self._made: dict[str, Pipeline | None] = {}
        self.rechecks = 0
        """Recheck runs so far (each one compile and simulation)."""

    def _recheck_pipeline(self, pipeline: Pipeline, wrapper: str) -> Pipeline | None:
        spec = f"{pipeline.spec}:llc={wrapper}"
        return self._make(spec)

    def _replacement(self, pipeline: Pipeline, ref: str) -> Pipeline | None:
        """`pipeline`'s spec run by the class `ref` (`module:Class`) instead."""
        module_name, _, attr = ref.partition(":")
        try:
            cls = getattr(importlib.import_module(module_name), attr)
            if cls.name not in self.registry.names():
                self.registry.register(cls)
        except (ImportError, AttributeError, PipelineError):
            return None
        return self._make(":".join((cls.name, *pipeline.spec.options)))

    def _make(self, spec: str) -> Pipeline | None:
        if spec not in self._made:
            try:
                self._made[spec] = self.registry.create(spec)
            except PipelineError:
                self._made[spec] = None
        return self._made[spec]

    def key(self, finding: Finding, case: Case, outcomes: dict[str, Outcome],
            pipelines: dict[str, Pipeline], module: Module | None) -> Signature | None:
        """The known-bug signature of `finding`, or None when no known bug explains it."""
        pipeline = pipelines.get(finding.signature.pipeline)
        if pipeline is None or outcomes.get(self.policy.arbiter) is None:
            return None
        for bug in known_bugs():
            if not _applies(bug, finding, pipeline):
                continue
            if bug.recheck_pipeline:
                again = self._replacement(pipeline, bug.recheck_pipeline)
            else:
                wrapper = _wrapper(bug)
                again = self._recheck_pipeline(pipeline, wrapper) if wrapper else None
            if again is None:
                continue
            self.rechecks += 1
            # the arbiter at the recheck's wave size (`oracles.waves`)
            ref = arbiter_outcome(outcomes, spec_name(self.policy.arbiter), again.wave_size)
            if ref is None:
                continue
            got = rerun(case, [again], self.policy, given={ref[0]: ref[1]})
            if got.verdict.agree:
                return Signature(kind=finding.kind, pipeline=pipeline.label,
                                 detail=bug.detail)
        return None


__all__ = ["KNOWN_PREFIX", "KnownBug", "KnownBugs", "is_known_bug", "known_bugs",
           "reproducer_of"]
