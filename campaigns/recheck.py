"""Fixed-verification: rerun every open bucket's best reproducer on today's
pipelines and move the bucket on what it sees.

Rules it keeps:
* a bucket is judged exactly as it was filed: its best reproducer, on the bucket's own
  pipelines (the specs its case was recorded with, so `det` and options come along) plus the
  policy's arbiter, judged by the oracle, and matched by signature — the same signature, or
  for wrong code the same coarse key and `classify.place` (what a campaign files by);
* **fixed** only when every one of those pipelines ran (none unavailable, none unsupported)
  and they all agree, `tries` times in a row; a reproducer that diverges with other
  signatures is **changed** and keeps its status (a bug that moved is not a fixed one);
* a fixed bucket that reproduces is **regressed**: reopened (status `new`), its regression
  count raised;
* every recheck is a run in the store, with the versions of every pipeline's tools, so
  "fixed" names the run (and versions) that fixed it; the versions that differ from the run
  that last saw the bucket reproduce are reported beside each bucket;
* a bucket that cannot be rerun here (a pipeline or plugin file missing, no stored case) is
  **skipped**, never taken for fixed.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

from oracles import Finding, Policy, Verdict, kernel_operations
from oracles.signature import Signature
from rgpu_fuzz import casefile
from rgpu_fuzz.lang.features import case_module
from rgpu_fuzz.model.case import Case, Expect, ExpectStatus
from rgpu_fuzz.pipelines.base import Pipeline, PipelineSpec
from rgpu_fuzz.pipelines.options import PipelineError
from rgpu_fuzz.pipelines.registry import Registry
from triage import toolchains
from triage.classify import same_bug
from triage.plugins import load_recorded
from triage.rerun import rerun
from triage.store import Bucket, BucketStatus, Event, FindingStore, Run

DEFAULT_STATUSES = (BucketStatus.NEW, BucketStatus.FILED, BucketStatus.FLAKY,
                    BucketStatus.FIXED)
"""What `recheck` looks at by default: every open bucket, and the fixed ones (to notice a
regression). `wontfix` buckets are left alone."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BucketRecheck:
    """What one recheck saw of one bucket."""

    bucket: Bucket
    """The bucket after the recheck."""
    before: BucketStatus
    event: Event
    detail: str
    versions_changed: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Versions of the bucket's tools that differ from the run that last saw it reproduce."""
    seconds: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class CorpusUpdate:
    """A corpus case of a fixed bucket that still expected a divergence."""

    path: Path
    bucket: str
    written: bool
    """False: still diverges when run itself, or only reported (`update=False`)."""
    detail: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RecheckReport:
    run: Run
    results: tuple[BucketRecheck, ...]
    corpus: tuple[CorpusUpdate, ...] = ()

    def counts(self) -> dict[str, int]:
        counts = {str(e): 0 for e in Event}
        for r in self.results:
            counts[str(r.event)] += 1
        return counts

    @property
    def regressions(self) -> int:
        return sum(1 for r in self.results if r.event is Event.REGRESSED)


def load_pipelines_for(store: FindingStore, registry: Registry,
                       buckets: Iterable[Bucket]) -> dict[str, str]:
    """Load the plugin files the store recorded for pipeline names the registry lacks, by
    the one rule every rerun follows (`triage.plugins.load_recorded`: only a file whose
    content is the one recorded). Returns name → why it cannot be loaded, for the names
    that stay unknown."""
    needed = {PipelineSpec.parse(p).name for b in buckets for p in b.pipelines}
    _, missing = load_recorded(registry, needed, store.plugins())
    return missing


class Rechecker:
    """Reruns buckets in one recheck run of one store; pipelines are created once and kept
    warm across buckets."""

    def __init__(self, store: FindingStore, registry: Registry, policy: Policy,
                 *, tries: int = 1, unknown: Mapping[str, str] | None = None) -> None:
        self.store = store
        self.registry = registry
        self.policy = policy
        self.tries = max(1, tries)
        self.unknown = dict(unknown or {})
        """Pipeline name → why it cannot be created here (`load_pipelines_for`)."""
        self._pipelines: dict[str, Pipeline | str] = {}  # spec -> pipeline or why not

    def _pipeline(self, spec: str) -> Pipeline | str:
        name = PipelineSpec.parse(spec).name
        if name in self.unknown:
            return self.unknown[name]
        if spec not in self._pipelines:
            try:
                self._pipelines[spec] = self.registry.create(spec)
            except PipelineError as e:
                self._pipelines[spec] = str(e).splitlines()[0]
        return self._pipelines[spec]

    def specs(self, bucket: Bucket, case: Case) -> list[str]:
        """The arbiter, then the case's recorded specs whose label is one of the bucket's
        pipelines (a label drops `det`, which a nondeterminism bucket needs), else the
        bucket's labels themselves."""
        wanted = set(bucket.pipelines)
        specs = []
        for spec in case.pipelines:
            p = self._pipeline(spec)
            label = p.label if isinstance(p, Pipeline) else spec
            if label in wanted:
                specs.append(spec)
                wanted.discard(label)
        specs += sorted(wanted)
        arbiter = [s for s in case.pipelines or bucket.pipelines
                   if PipelineSpec.parse(s).name == self.policy.arbiter][:1] or [
            self.policy.arbiter]
        return list(dict.fromkeys([*arbiter, *specs]))

    def matches(self, bucket: Bucket, finding: Finding, ops: tuple[str, ...]) -> bool:
        """The finding is the bucket's bug (see `_matches`)."""
        return same_bug(bucket.signature, finding, ops)

    def plan(self, bucket: Bucket) -> tuple[Case, list[Pipeline]] | tuple[Event, str]:
        """The reproducer and the pipelines to rerun it on, or (SKIPPED, why not)."""
        if bucket.best_case_id is None:
            return Event.SKIPPED, "no stored reproducer"
        case = self.store.case(bucket.best_case_id)
        pipelines: list[Pipeline] = []
        for spec in self.specs(bucket, case):
            p = self._pipeline(spec)
            if isinstance(p, str):
                return Event.SKIPPED, p
            pipelines.append(p)
        return case, pipelines

    def run_bucket(self, bucket: Bucket) -> tuple[Event, str]:
        """Rerun one bucket; what it saw, and a one-line detail. Changes nothing."""
        planned = self.plan(bucket)
        if isinstance(planned[0], Event):
            return cast(tuple[Event, str], planned)
        case, pipelines = cast(tuple[Case, list[Pipeline]], planned)
        return evaluate(case, pipelines, self.policy, self.tries, bucket.signature,
                        bucket.status is BucketStatus.FIXED)


def evaluate(case: Case, pipelines: list[Pipeline], policy: Policy, tries: int,
             signature: Signature, fixed: bool) -> tuple[Event, str]:
    """Run a bucket's reproducer `tries` times and say what that means for the bucket
    (`fixed`: the bucket is fixed now). Changes nothing; runs in any process."""
    module = case_module(case)
    ops = kernel_operations(module) if module is not None else ()
    verdict: Verdict | None = None
    for _ in range(tries):
        got = rerun(case, pipelines, policy)
        if got.not_run:
            return Event.SKIPPED, got.not_run
        verdict = got.verdict
        hit = next((f for f in verdict.findings if same_bug(signature, f, ops)), None)
        if hit is not None:
            return (Event.REGRESSED if fixed else Event.REPRODUCES,
                    f"case {case.id}: {hit.detail}"[:300])
        if not verdict.agree:
            break
    assert verdict is not None
    labels = ", ".join(p.label for p in pipelines)
    if verdict.agree:
        times = f" ({tries} times)" if tries > 1 else ""
        return Event.FIXED, f"case {case.id} agrees on {labels}{times}"
    others = "; ".join(dict.fromkeys(str(f.signature) for f in verdict.findings))
    return Event.CHANGED, f"case {case.id} diverges otherwise: {others}"[:300]


@dataclass(frozen=True, slots=True)
class _RerunJob:
    """One bucket's rerun for a worker process: the case as TOML, pipeline specs, the plugin
    files that define them, and how to judge."""

    case_toml: str
    specs: tuple[str, ...]
    plugins: tuple[str, ...]
    policy: Policy
    tries: int
    signature: Signature
    fixed: bool


_worker_pipelines: dict[tuple[str, tuple[str, ...]], Pipeline] = {}


def _rerun(job: _RerunJob) -> tuple[str, str]:
    """Worker side of `recheck(jobs=N)`: pipelines are made once per process and kept."""
    registry = Registry()
    for path in job.plugins:
        registry.load_plugin(path)
    pipelines = []
    for spec in job.specs:
        key = (spec, job.plugins)
        if key not in _worker_pipelines:
            _worker_pipelines[key] = registry.create(spec)
        pipelines.append(_worker_pipelines[key])
    event, text = evaluate(casefile.loads(job.case_toml), pipelines, job.policy, job.tries,
                           job.signature, job.fixed)
    return str(event), text


def _submit(pool: Executor, checker: Rechecker,
            bucket: Bucket) -> Callable[[], tuple[Event, str]]:
    """Start one bucket's rerun in `pool`; the returned call waits for what it saw."""
    planned = checker.plan(bucket)
    if isinstance(planned[0], Event):
        skipped = cast(tuple[Event, str], planned)
        return lambda: skipped
    case, pipes = cast(tuple[Case, list[Pipeline]], planned)
    fut = pool.submit(_rerun, _RerunJob(
        casefile.dumps(case), tuple(str(p.spec) for p in pipes), _plugin_files(pipes),
        checker.policy, checker.tries, bucket.signature, bucket.status is BucketStatus.FIXED))

    def wait() -> tuple[Event, str]:
        event, text = fut.result()
        return Event(event), text
    return wait


def _plugin_files(pipelines: Iterable[Pipeline]) -> tuple[str, ...]:
    import sys

    files = {getattr(sys.modules.get(type(p).__module__), "__file__", None)
             for p in pipelines if p.is_plugin}
    return tuple(sorted(f for f in files if f))


def reference_run(store: FindingStore, bucket: Bucket) -> Run | None:
    """The latest run that saw the bucket reproduce (a campaign's sighting or a recheck)."""
    ids = [bucket.first_run, bucket.last_run] + [
        h.run for h in store.history(bucket.signature)
        if h.event in (Event.REPRODUCES, Event.REGRESSED)]
    runs = [r for r in (_run_or_none(store, i) for i in dict.fromkeys(ids)) if r is not None]
    return max(runs, key=lambda r: r.started, default=None)


def recheck(store: FindingStore, registry: Registry, policy: Policy, *,
            statuses: Iterable[BucketStatus] = DEFAULT_STATUSES, ids: Iterable[str] = (),
            tries: int = 1, jobs: int = 1,
            on_result: Callable[[BucketRecheck], None] | None = None) -> RecheckReport:
    """Recheck the buckets with one of `statuses` (or exactly those `ids` name) as one run
    of the store; each bucket's status moves as the module docstring says. With `jobs` > 1
    the reruns go to that many worker processes (spawned, dying with this one); this process
    alone writes the store, in bucket order, so the result is the same as with one."""
    wanted = [store.bucket(i) for i in ids] if ids else [
        b for s in statuses for b in store.buckets(order_by="count", status=s)]
    unknown = load_pipelines_for(store, registry, wanted)
    specs = sorted({p for b in wanted for p in b.pipelines} | {policy.arbiter})
    available = [s for s in specs if PipelineSpec.parse(s).name not in unknown]
    versions = toolchains.collect(available, registry)
    versions.update({f"pipeline {n}": f"unavailable: {why}" for n, why in unknown.items()})
    run = store.begin_run("recheck", specs, versions, toolchains.host(),
                          {"policy": policy.name, "tries": tries,
                           "statuses": sorted(str(s) for s in statuses), "ids": list(ids)})
    checker = Rechecker(store, registry, policy, tries=tries, unknown=unknown)
    results = []
    pool = None
    try:
        outcomes: list[Callable[[], tuple[Event, str]]]
        if jobs > 1 and len(wanted) > 1:
            from concurrent.futures import ProcessPoolExecutor
            from multiprocessing import get_context

            from rgpu_fuzz.pipelines.workers import die_with_parent

            pool = ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn"),
                                       initializer=die_with_parent, initargs=(os.getpid(),))
            outcomes = [_submit(pool, checker, b) for b in wanted]
        else:
            outcomes = [functools.partial(checker.run_bucket, b) for b in wanted]
        for b, outcome in zip(wanted, outcomes, strict=True):
            start = time.perf_counter()
            event, text = outcome()
            # a regression: what changed since the fix; else since it last reproduced
            before = (_run_or_none(store, b.fixed_run) if event is Event.REGRESSED
                      else reference_run(store, b))
            after = store.note_recheck(b.signature, event, text)
            result = BucketRecheck(bucket=after, before=b.status, event=event, detail=text,
                                   versions_changed=_versions_changed(b, checker, before, run),
                                   seconds=time.perf_counter() - start)
            results.append(result)
            if on_result:
                on_result(result)
    finally:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        store.end_run()
    return RecheckReport(run=store.run(run.id), results=tuple(results))


def _run_or_none(store: FindingStore, run_id: str | None) -> Run | None:
    try:
        return store.run(run_id) if run_id else None
    except LookupError:
        return None


def _versions_changed(bucket: Bucket, checker: Rechecker, before: Run | None,
                      run: Run) -> dict[str, tuple[str, str]]:
    """The bucket's tool versions that differ between `before` and this run (rgpu-fuzz
    itself included: `ref` is its interpreter)."""
    if before is None or before.id == run.id:
        return {}
    keys = {"rgpu-fuzz"}
    for label in bucket.pipelines:
        p = checker._pipeline(label)
        if isinstance(p, Pipeline):
            keys |= set(toolchains.pipeline_versions(p))
    diff = toolchains.changed(before.versions, run.versions)
    return {k: v for k, v in diff.items() if k in keys}


def update_corpus(store: FindingStore, registry: Registry, policy: Policy,
                  corpus: Path, *, write: bool) -> list[CorpusUpdate]:
    """The corpus's strict xfails follow the store: a `known-divergence` case of a bucket
    that is fixed now (the case is the bucket's best reproducer or one of its examples)
    becomes `agree` — once the case itself, rerun on its expected pipelines, agrees. With
    `write=False` only says which would change."""
    updates = []
    checker = Rechecker(store, registry, policy)
    for path in sorted(corpus.glob("*.toml")):
        case = casefile.load(path)
        if case.expect is None or case.expect.status is not ExpectStatus.KNOWN_DIVERGENCE:
            continue
        fixed = [b for b in store.buckets_of_case(case.id) if b.status is BucketStatus.FIXED]
        if not fixed:
            continue
        bucket = fixed[0]
        specs = list(dict.fromkeys([policy.arbiter, *case.expect.pipelines]))
        pipelines = [checker._pipeline(s) for s in specs]
        why = next((p for p in pipelines if isinstance(p, str)), "")
        if not why:
            got = rerun(case, [p for p in pipelines if isinstance(p, Pipeline)], policy)
            why = got.not_run
            if not why:
                why = "" if got.verdict.agree else "still diverges: " + "; ".join(
                    str(f.signature) for f in got.verdict.findings)
        if why:
            updates.append(CorpusUpdate(path=path, bucket=bucket.id, written=False,
                                        detail=why[:300]))
            continue
        if write:
            issue = case.expect.issue
            casefile.save(replace(case, expect=Expect(status=ExpectStatus.AGREE,
                                                      issue=issue)), path)
        updates.append(CorpusUpdate(
            path=path, bucket=bucket.id, written=write,
            detail=f"agrees on {', '.join(specs)}: "
                   + ("expect agree now" if write else "would expect agree")))
    return updates


__all__ = ["DEFAULT_STATUSES", "BucketRecheck", "CorpusUpdate", "RecheckReport", "Rechecker",
           "load_pipelines_for", "recheck", "reference_run", "update_corpus"]
