"""`rgpu-fuzz bench buckets`: one bug → one bucket, measured on seeded bugs.

For each scenario (seeded-bug plugins from `rgpu_fuzz/bench/seeded/` and the pipelines
they define), campaigns run one after the other in this process's code, one per mode
(`--bucket-modes`):
`ops` buckets wrong code by the `ops=` signature alone (`bug_keys=False`, the behaviour
before bug keys), `bug-key` by bug key (`triage/bugkey.py`), both reducing; `ops-unreduced`
and `bug-key-unreduced` are the same without reduction (`campaign --no-reduce`: before bug
keys applied there, each finding kept its own signature, which `ops-unreduced` is). The first
mode runs for `--bucket-time` seconds, the others on exactly the seeds it ran (its case
count, with ten times the time as a cap), so all judge the same findings. Every
finding is recorded with the bucket it was counted in; afterwards each finding's case is run
again on `ref` and on each single-bug pipeline of the scenario (and on the plain
`llvm-cpu:O0`, the "baseline" bug): the bugs whose pipeline alone reproduces a finding are its
ground truth.

Per scenario and mode: cases, findings, buckets, and
* purity — the fraction of findings whose bucket holds findings of one bug only (merging): a
  bucket is pure when one bug reproduces every finding in it (a finding both bugs reproduce
  fits a bucket of either);
* per bug: its findings, the buckets they fall in, and the share of them in its largest
  bucket (splitting; with one bug per campaign that is about 1/buckets).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from campaigns.jobs import Found, Setup
from campaigns.orchestrate import Campaign, CampaignConfig
from oracles import Finding, Signature, load_policy
from rgpu_fuzz.bench.seeded import SEEDED
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.pipelines.registry import Registry
from triage.rerun import rerun


def _plugins() -> Path:
    """The seeded-bug plugins (`rgpu_fuzz/bench/seeded`), part of the package."""
    return SEEDED
BASELINE = "llvm-cpu:O0"


@dataclass(frozen=True, slots=True)
class Scenario:
    """Pipelines to fuzz (besides `ref`), their plugin files, and for each fuzzed pipeline
    label the single-bug pipelines whose findings are its ground truth."""

    name: str
    plugins: tuple[str, ...]
    pipelines: tuple[str, ...]
    bugs: dict[str, dict[str, str]] = field(default_factory=dict)


def _single(name: str, plugin: str, spec: str) -> Scenario:
    return Scenario(name, (plugin,), (spec,), {spec: {name: spec}})


SCENARIOS: tuple[Scenario, ...] = (
    _single("fptosi", "fptosi_plain.py", "llvm-cpu-fptosi:O0"),
    _single("shl-mask", "shl_nomask.py", "llvm-cpu-shlmask:O0"),
    _single("min-nan", "minnum_nan.py", "llvm-cpu-minnan:O0"),
    _single("xor2or", "miscompile.py", "llvm-cpu-xor2or:O0"),
    _single("srem-crash", "srem_crash.py", "llvm-cpu-sremcrash:O0"),
    Scenario("two-plugins", ("fptosi_plain.py", "shl_nomask.py"),
             ("llvm-cpu-fptosi:O0", "llvm-cpu-shlmask:O0"),
             {"llvm-cpu-fptosi:O0": {"fptosi": "llvm-cpu-fptosi:O0"},
              "llvm-cpu-shlmask:O0": {"shl-mask": "llvm-cpu-shlmask:O0"}}),
    Scenario("two-bugs-one-pipeline", ("fptosi_and_shl.py", "fptosi_plain.py", "shl_nomask.py"),
             ("llvm-cpu-fptosi-shl:O0",),
             {"llvm-cpu-fptosi-shl:O0": {"fptosi": "llvm-cpu-fptosi:O0",
                                         "shl-mask": "llvm-cpu-shlmask:O0"}}),
)


MODES: dict[str, tuple[bool, bool]] = {
    "ops": (False, True), "bug-key": (True, True),
    "ops-unreduced": (False, False), "bug-key-unreduced": (True, False)}
"""Mode -> (bucket by bug key, reduce)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bucket-time", type=float, default=60.0,
                   help="`buckets`: seconds per campaign (two per scenario)")
    p.add_argument("--bucket-cases", type=int, default=None,
                   help="`buckets`: cases per campaign instead of --bucket-time (which then "
                        "only caps each campaign at ten times its value)")
    p.add_argument("--bucket-scenarios", default=",".join(s.name for s in SCENARIOS),
                   help="`buckets`: comma-separated scenario names")
    p.add_argument("--bucket-modes", default=",".join(MODES),
                   help="`buckets`: comma-separated modes, of " + ", ".join(MODES))


class _Recording(Campaign):
    """A campaign that remembers which bucket each finding was counted in."""

    def __init__(self, config: CampaignConfig) -> None:
        super().__init__(config)
        # (case id, finding's signature) -> its bucket's
        self.assigned: dict[tuple[str, Signature], Signature] = {}
        self.cases: dict[str, Case] = {}

    def _record(self, case: Case, found: Found, finding: Finding, signature: Signature) -> bool:
        self.assigned.setdefault((case.id, finding.signature), signature)
        self.cases[case.id] = case
        return super()._record(case, found, finding, signature)


def _bugs_of(case: Case, label: str, scenario: Scenario, reg: Registry,
             cache: dict[tuple[str, str], bool]) -> frozenset[str]:
    """The bugs (of those behind pipeline `label`) whose pipeline alone has a finding on
    `case`; `baseline` when the unmodified pipeline has one too."""
    policy = load_policy("default")
    ref = reg.create("ref")
    candidates = {**scenario.bugs.get(label, {}), "baseline": BASELINE}

    def has_finding(spec: str) -> bool:
        key = (case.id, spec)
        if key not in cache:
            p = reg.create(spec)
            cache[key] = any(p.label in f.pipelines for f in
                             rerun(case, [ref, p], policy).verdict.findings)
        return cache[key]

    if has_finding(BASELINE):
        return frozenset({"baseline"})
    return frozenset(b for b, spec in candidates.items() if b != "baseline" and has_finding(spec))


def _measure(scenario: Scenario, mode: str, seconds: float, jobs: int,
             root: Path, cases: int | None) -> tuple[dict[str, Any], _Recording]:
    plugins = tuple(str(_plugins() / p) for p in scenario.plugins)
    bug_keys, reduce = MODES[mode]
    config = CampaignConfig(out=root / f"{scenario.name}-{mode}",
                            setup=Setup(("ref", *scenario.pipelines), "default", "default",
                                        plugins),
                            time_s=seconds if cases is None else 10 * seconds,
                            max_cases=cases, jobs=jobs, bug_keys=bug_keys, reduce=reduce)
    campaign = _Recording(config)
    try:
        summary = campaign.run().data
    finally:
        campaign.close()
    return {"cases": summary["cases"], "seconds": summary["seconds"],
            "findings": len(campaign.assigned), "buckets": len(summary["buckets"]),
            "probes": summary["probes"], "probe_seconds": summary["probe_seconds"]}, campaign


def _score(campaign: _Recording, scenario: Scenario, reg: Registry,
           cache: dict[tuple[str, str], bool]) -> dict[str, Any]:
    """Purity and per-bug splitting of one campaign's assignment."""
    truth: dict[tuple[str, Signature], str] = {}
    sets: dict[tuple[str, Signature], frozenset[str]] = {}
    for (case_id, sig), _bucket in campaign.assigned.items():
        label = sig.pipeline
        bugs = _bugs_of(campaign.cases[case_id], label, scenario, reg, cache)
        sets[(case_id, sig)] = bugs or frozenset({"unexplained"})
        truth[(case_id, sig)] = "+".join(sorted(bugs)) or "unexplained"
    common: dict[Signature, frozenset[str] | None] = {}
    for k, bucket in campaign.assigned.items():
        have = common.get(bucket)
        common[bucket] = sets[k] if have is None else have & sets[k]
    pure = sum(1 for b in campaign.assigned.values() if common[b])
    per_bug: dict[str, Counter[Signature]] = defaultdict(Counter)
    for k, bucket in campaign.assigned.items():
        per_bug[truth[k]][bucket] += 1
    n = len(campaign.assigned)
    return {
        "purity": round(pure / n, 3) if n else None,
        "bugs": {bug: {"findings": sum(c.values()), "buckets": len(c),
                       "largest_bucket_share": round(max(c.values()) / sum(c.values()), 3),
                       "keys": sorted(str(k) for k in c)}
                 for bug, c in sorted(per_bug.items())},
    }


def bench_buckets(args: argparse.Namespace) -> dict[str, Any]:
    """Both bucketings of every chosen scenario, same seeds and budget (module doc)."""
    chosen = set(args.bucket_scenarios.split(","))
    unknown = chosen - {s.name for s in SCENARIOS}
    if unknown:
        raise SystemExit(f"bench buckets: unknown scenario(s) {', '.join(sorted(unknown))}")
    modes = [m for m in args.bucket_modes.split(",") if m]
    if not modes or set(modes) - set(MODES):
        raise SystemExit(f"bench buckets: --bucket-modes: expected some of {', '.join(MODES)}")
    jobs = getattr(args, "jobs", None) or 1
    out: dict[str, Any] = {"time_s": args.bucket_time, "cases": args.bucket_cases, "jobs": jobs,
                           "load_before": os.getloadavg(), "scenarios": {}}
    with tempfile.TemporaryDirectory(prefix="rgpu-bench-buckets-") as tmp:
        for scenario in SCENARIOS:
            if scenario.name not in chosen:
                continue
            reg = Registry()
            for p in scenario.plugins:
                reg.load_plugin(_plugins() / p)
            cache: dict[tuple[str, str], bool] = {}
            result: dict[str, Any] = {"pipelines": ["ref", *scenario.pipelines]}
            cases: int | None = args.bucket_cases
            for mode in modes:
                started = time.monotonic()
                figures, campaign = _measure(scenario, mode, args.bucket_time, jobs, Path(tmp),
                                             cases)
                cases = figures["cases"]
                figures.update(_score(campaign, scenario, reg, cache))
                figures["wall_s"] = round(time.monotonic() - started, 1)
                result[mode] = figures
            out["scenarios"][scenario.name] = result
    out["load_after"] = os.getloadavg()
    return out
