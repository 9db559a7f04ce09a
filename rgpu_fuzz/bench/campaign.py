"""`rgpu-fuzz bench campaign`: campaign throughput, cases per second per core, of this tree
and, side by side in the same run, of a recorded git revision (`--baseline REV`), on one or
more pipeline mixes (`--mix`, repeatable; default: the CPU mix and the campaign's
default mix).

Both trees run the campaign's own chunk job (`campaigns.jobs.run_chunk`: generate,
run every pipeline, judge) in a driver process of their own, on the same seeds cut into
campaign-sized chunks (`CampaignConfig.chunk`, so batching pipelines see the batches a
campaign gives them), in alternating rounds, so both see the same machine load. A round's
cost is the CPU time of the driver and of its worker processes (read from /proc), so "per
core" holds on a loaded machine too; wall-clock rates are reported beside it, and the CPU
split between the driver and its workers. Per pipeline, the median of each case's `total`
seconds (wall clock, so inflated by load) and of each stage it reports (the profile of what
is left), and for `ref` also its CPU seconds per new case alone (caches cleared, the case's
features computed first, as a campaign does); the ratio of this tree to the baseline is
computed per round and the median taken. `--baseline-env NAME=VALUE` sets variables in the
baseline's processes only (`RGPU_LOWER_IR=llvmlite`: the same tree lowering through
llvmlite's IR builder, `rgpu_fuzz.lower.irapi`).

For mixes with `amdgpu-sim`, `amdgpu_sim_adds_per_case` is the campaign figure (what
the simulator pipelines add per case; `SIM_ADDS` says exactly how it is measured), with the
baseline's beside it and their ratio (`amdgpu_sim_adds_speed_up`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

from rgpu_fuzz.checkout import in_checkout

CPU_MIX = "ref,llvm-cpu:O0,llvm-cpu:O3:det"
"""The mix (its goal: 20 cases per second per core)."""
FIRST_SEED = 5_550_000
"""The seeds the mix was first measured from."""

DRIVER = r'''
import importlib, json, os, statistics, sys, time
from rgpu_fuzz.pipelines.base import Pipeline

def first_module(*names):
    """The first of `names` this tree (the working directory) has: the chunk job moved
    between packages
    (`campaigns.jobs` now; `triage.campaign_jobs` and `rgpu_fuzz.triage.campaign_jobs` in
    older revisions a baseline may name)."""
    import importlib.util
    root = os.path.realpath(os.getcwd()) + os.sep
    for name in names:
        # the tree's own package only: an editable install of another checkout would
        # answer for a package this tree lacks
        spec = importlib.util.find_spec(name.split(".")[0])
        if spec is not None and os.path.realpath(spec.origin or "").startswith(root):
            return importlib.import_module(name)
    raise ModuleNotFoundError(f"none of {names} in {root}")

jobs = first_module("campaigns.jobs", "triage.campaign_jobs",
                    "rgpu_fuzz.triage.campaign_jobs")
ChunkJob, Setup, run_chunk = jobs.ChunkJob, jobs.Setup, jobs.run_chunk

try:
    CampaignConfig = first_module("campaigns.orchestrate", "triage.campaign",
                                  "rgpu_fuzz.triage.campaign").CampaignConfig
    CHUNK = CampaignConfig.__dataclass_fields__["chunk"].default
except (ImportError, KeyError, AttributeError):
    CHUNK = 8

STAGES = {}
_run_cases = jobs.run_cases

SIM_CASES = []
"""Per case: the seconds of every stage the amdgpu-sim pipelines report (a batch's stages
shared out), summed over those pipelines."""

def run_cases(cases, pipelines):
    """The campaign's `run_cases`, recording each outcome's stage seconds."""
    rows = _run_cases(cases, pipelines)
    for row in rows:
        sim = []
        for label, o in row.items():
            for stage, s in o.stats.seconds.items():
                STAGES.setdefault(label, {}).setdefault(stage, []).append(s)
            if label.startswith("amdgpu-sim"):
                sim.append(sum(s for k, s in o.stats.seconds.items() if k != "total"))
        if sim:
            SIM_CASES.append(sum(sim))
    return rows

jobs.run_cases = run_cases

def children_cpu():
    """CPU seconds of this process's children (the worker processes) and of the children
    they waited for (`ld.lld`), from /proc (utime, stime, cutime, cstime)."""
    me, total, tick = os.getpid(), 0.0, os.sysconf("SC_CLK_TCK")
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            total += sum(int(x) for x in fields[11:15]) / tick
    return total

SIM = {}
"""Per `amdgpu-sim` pipeline: [cpu_s, wall_s, cases] of each chunk (`run_many` call)."""
PROBE_CPU = [0.0]
"""This process's CPU spent reading /proc for SIM, left out of the round's cost."""
_run_many = Pipeline.run_many

def run_many(self, cases, case_features=None):
    """`Pipeline.run_many`, with the CPU and wall time of an `amdgpu-sim` pipeline's chunk."""
    if not self.spec.name.startswith("amdgpu-sim") or not cases:
        return _run_many(self, cases, case_features)
    p0 = time.process_time()
    w0, k0 = time.perf_counter(), children_cpu()
    c0 = time.process_time()
    out = _run_many(self, cases, case_features)
    c1 = time.process_time()
    w1, k1 = time.perf_counter(), children_cpu()
    PROBE_CPU[0] += (c0 - p0) + (time.process_time() - c1)
    SIM.setdefault(self.label, []).append([(c1 - c0) + (k1 - k0), w1 - w0, len(cases)])
    return out

Pipeline.run_many = run_many

def ref_cpu(seeds):
    """CPU seconds of `ref` alone per new case, as a campaign runs it: every cache
    cleared, the case's features computed first (untimed), then `ref`."""
    import importlib
    from generators import SeededChoices, generate, load_profile
    from rgpu_fuzz.lang.features import case_features
    from rgpu_fuzz.pipelines.registry import Registry
    ref, profile, out = Registry().create("ref"), load_profile("default"), []
    for seed in seeds:
        case = generate(SeededChoices(seed), profile, seed=seed)
        for mod, fn in (("rgpu_fuzz.interp.program", "clear_cache"),
                        ("rgpu_fuzz.pipelines.frontend", "clear_cache"),
                        ("rgpu_fuzz.lang.features", "_module_of"),
                        ("rgpu_fuzz.lang.features", "_kernel_features")):
            f = getattr(importlib.import_module(mod), fn, None)
            f = getattr(f, "cache_clear", f)
            if f is not None:
                f()
        feats = case_features(case)
        t = time.process_time()
        ref.run(case, feats)
        out.append(time.process_time() - t)
    return out

setup = Setup(tuple(sys.argv[1].split(",")), "default", "default")
run_chunk(ChunkJob(setup, 0, tuple(range(int(sys.argv[2]), int(sys.argv[2]) + 3))))
try:  # collect garbage as the tree's campaign job processes do (a tree without it: defaults)
    from rgpu_fuzz.pipelines.workers import tune_worker_gc
    tune_worker_gc()
except ImportError:
    pass
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    first, n = json.loads(line)
    STAGES.clear()
    SIM.clear()
    SIM_CASES.clear()
    PROBE_CPU[0] = 0.0
    w0, c0, k0 = time.perf_counter(), time.process_time(), children_cpu()
    results = [run_chunk(ChunkJob(setup, 1 + i, tuple(range(s, min(first + n, s + CHUNK)))))
               for i, s in enumerate(range(first, first + n, CHUNK))]
    w1, c1, k1 = time.perf_counter(), time.process_time(), children_cpu()
    seconds, statuses = {}, {}
    for r in results:
        for k, v in r.seconds.items():
            seconds.setdefault(k, []).extend(v)
        for k, v in r.statuses.items():
            for s, c in v.items():
                statuses.setdefault(k, {})[s] = statuses.get(k, {}).get(s, 0) + c
    c1 -= PROBE_CPU[0]
    print(json.dumps({"wall_s": w1 - w0, "cpu_s": (c1 - c0) + (k1 - k0),
                      "driver_cpu_s": c1 - c0, "workers_cpu_s": k1 - k0,
                      "sim_chunks": SIM, "sim_case_stage_s": SIM_CASES,
                      "cases": sum(r.cases for r in results), "chunk": CHUNK,
                      "seconds": seconds, "stages": STAGES,
                      "ref_cpu_s": ref_cpu(range(first, first + n)),
                      "statuses": statuses,
                      "findings": sorted(str(f.verdict.findings[0].signature)
                                         for r in results for f in r.found
                                         if f.verdict.findings),
                      "errors": sum(len(r.harness_errors) for r in results),
                      "error_heads": [e[1].splitlines()[0][:200] for r in results
                                      for e in r.harness_errors]}), flush=True)
'''


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of the `campaign` benchmark (the rest of `bench` ignores them)."""
    g = p.add_argument_group("campaign benchmark")
    g.add_argument("--mix", action="append",
                   help=f"pipelines; repeat for several mixes (default: {CPU_MIX} and the "
                        "campaign's default mix)")
    g.add_argument("--rounds", type=int, default=4, help="rounds per tree (default 4)")
    g.add_argument("--round-seeds", type=int, default=25,
                   help="seeds per round (default 25, from 5550000 on)")
    g.add_argument("--baseline", metavar="REV",
                   help="git revision measured side by side (e.g. the commit before a change)")
    g.add_argument("--baseline-env", action="append", metavar="NAME=VALUE",
                   help="set in the baseline's driver and workers; repeatable (e.g. "
                        "RGPU_LOWER_IR=llvmlite with --baseline HEAD: the lowering's text "
                        "emitter against llvmlite's IR builder on one tree)")
    g.add_argument("--baseline-mix", action="append",
                   help="the baseline's pipelines when they are written otherwise there, one "
                        "per --mix (default: the --mix)")


class _Driver:
    """One tree's driver process: answers one JSON line per round of seeds."""

    def __init__(self, root: Path, mix: str, extra_env: dict[str, str]) -> None:
        env = dict(os.environ, **extra_env, PYTHONPATH=str(root), PYTHONHASHSEED="0")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", DRIVER, mix, str(FIRST_SEED - 10)], cwd=root, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self._read()

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"benchmark driver exited with {self.proc.wait()}")
        return json.loads(line)  # type: ignore[no-any-return]

    def round(self, first: int, n: int) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps([first, n]) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def _checkout(rev: str, into: Path) -> str:
    """The tree of `rev` extracted into `into` (symlinks kept); returns the full hash."""
    full = subprocess.run(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"],
                          capture_output=True, text=True, check=False)
    if full.returncode != 0:
        from rgpu_fuzz.cli import UserError

        raise UserError(f"--baseline {rev}: not a git revision here")
    data = subprocess.run(["git", "archive", "--format=tar", full.stdout.strip()],
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="fully_trusted")
    return full.stdout.strip()


SIM_ADDS = ("what the amdgpu-sim pipelines add per case in a campaign (<= 100 ms "
            "median): per campaign chunk, the CPU seconds of the driver, its workers and their "
            "children (ld.lld) while the chunk's amdgpu-sim pipelines run (Pipeline.run_many), "
            "divided by the chunk's cases; the median over chunks (wall clock likewise). A "
            "finding's rerun alone is not in it")


SIM_STAGE_SUM = ("per case, the seconds (wall, in the worker) of every stage the amdgpu-sim "
                 "pipelines report for it, a batch's stages shared out evenly; the median over "
                 "cases: close to CPU on an idle machine, inflated by load")


def _sim_adds(rounds: list[dict[str, Any]]) -> dict[str, Any] | None:
    """`SIM_ADDS` from each round's `sim_chunks`: together and per pipeline."""
    chunks = [r.get("sim_chunks", {}) for r in rounds]
    labels = sorted({label for c in chunks for label in c})
    if not labels:
        return None

    def figures(rows: list[list[float]]) -> dict[str, float]:
        return {"cpu_median_s": statistics.median(c / n for c, _, n in rows),
                "wall_median_s": statistics.median(w / n for _, w, n in rows),
                "cpu_mean_s": sum(c for c, _, _ in rows) / sum(n for _, _, n in rows)}

    together = [[sum(c[label][i][0] for label in labels),
                 sum(c[label][i][1] for label in labels), c[labels[0]][i][2]]
                for c in chunks if all(label in c for label in labels)
                for i in range(min(len(c[label]) for label in labels))]
    stage_sums = [s for r in rounds for s in r.get("sim_case_stage_s", [])]
    return {"definition": SIM_ADDS, "chunks": len(together), **figures(together),
            "stage_sum_median_s": statistics.median(stage_sums) if stage_sums else None,
            "stage_sum_definition": SIM_STAGE_SUM,
            "pipelines": {label: figures([row for c in chunks for row in c.get(label, [])])
                          for label in labels}}


def _summary(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    cases = sum(r["cases"] for r in rounds)
    cpu = sum(r["cpu_s"] for r in rounds)
    wall = sum(r["wall_s"] for r in rounds)
    labels = rounds[0]["seconds"].keys()
    per_pipeline = {
        label: {"median_s_per_case": statistics.median(
            s for r in rounds for s in r["seconds"][label]),
            "median_stage_s": {
                stage: statistics.median(s for r in rounds
                                         for s in r.get("stages", {}).get(label, {})
                                         .get(stage, []))
                for stage in sorted({st for r in rounds
                                     for st in r.get("stages", {}).get(label, {})})},
            "statuses": _merge(r["statuses"][label] for r in rounds)}
        for label in labels}
    return {"cases": cases, "cpu_s": cpu, "wall_s": wall,
            "driver_cpu_s": sum(r.get("driver_cpu_s", 0.0) for r in rounds),
            "workers_cpu_s": sum(r.get("workers_cpu_s", 0.0) for r in rounds),
            "chunk": rounds[0].get("chunk"),
            "cases_per_cpu_s": cases / cpu, "cases_per_wall_s": cases / wall,
            "ref_alone_cpu_median_s_per_case": statistics.median(
                s for r in rounds for s in r["ref_cpu_s"]),
            "pipelines": per_pipeline,
            "amdgpu_sim_adds_per_case": _sim_adds(rounds),
            "findings": sorted(f for r in rounds for f in r["findings"]),
            "harness_errors": sum(r["errors"] for r in rounds),
            "harness_error_heads": [h for r in rounds for h in r.get("error_heads", [])]}


def _merge(counts: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            out[k] = out.get(k, 0) + v
    return out


def _mixes(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(this tree's mix, the baseline's) for each mix measured."""
    from rgpu_fuzz.cli import UserError
    from rgpu_fuzz.cli.campaign import DEFAULT_PIPELINES

    mixes = args.mix or [CPU_MIX, DEFAULT_PIPELINES]
    base = args.baseline_mix or []
    if base and len(base) != len(mixes):
        raise UserError(f"{len(base)} --baseline-mix for {len(mixes)} --mix: give one each")
    return list(zip(mixes, base or mixes, strict=True))


def _baseline_env(args: argparse.Namespace) -> dict[str, str]:
    """`--baseline-env NAME=VALUE` options as a dict."""
    from rgpu_fuzz.cli import UserError

    out: dict[str, str] = {}
    for item in args.baseline_env or []:
        name, eq, value = item.partition("=")
        if not eq or not name:
            raise UserError(f"--baseline-env {item}: expected NAME=VALUE")
        out[name] = value
    return out


def _bench_mix(trees: dict[str, tuple[Path, str]], mix: str, baseline_mix: str,
               args: argparse.Namespace) -> dict[str, Any]:
    """Rounds of `--round-seeds` seeds on one mix, this tree and the baseline alternating."""
    load_before = os.getloadavg()
    mixes = {"current": mix, "baseline": baseline_mix}
    envs = {"current": {}, "baseline": _baseline_env(args)}
    drivers = {name: _Driver(path, mixes[name], envs[name])
               for name, (path, _) in trees.items()}
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for i in range(args.rounds):
        first = FIRST_SEED + i * args.round_seeds
        order = list(drivers) if i % 2 == 0 else list(reversed(drivers))
        for name in order:
            print(f"  {mix}: round {i + 1}/{args.rounds}: {name}", file=sys.stderr)
            rounds[name].append(drivers[name].round(first, args.round_seeds))
    for d in drivers.values():
        d.close()
    out: dict[str, Any] = {
        "mix": mix.split(","), "baseline_mix": baseline_mix.split(","),
        "baseline_env": envs["baseline"],
        "load_average_before": load_before, "load_average_after": os.getloadavg(),
        "trees": {name: {"revision": rev, **_summary(rounds[name])}
                  for name, (_, rev) in trees.items()},
    }
    if "baseline" in rounds:
        ratios = [c["cases"] / c["cpu_s"] / (b["cases"] / b["cpu_s"])
                  for c, b in zip(rounds["current"], rounds["baseline"], strict=True)]
        out["speed_up_per_core"] = {"median": statistics.median(ratios), "per_round": ratios}
        cur, base = out["trees"]["current"], out["trees"]["baseline"]
        out["speed_up_per_pipeline"] = {
            label: base["pipelines"][label]["median_s_per_case"]
            / cur["pipelines"][label]["median_s_per_case"]
            for label in cur["pipelines"] if label in base["pipelines"]}
        out["same_findings"] = cur["findings"] == base["findings"]
        adds = cur["amdgpu_sim_adds_per_case"], base["amdgpu_sim_adds_per_case"]
        if adds[0] and adds[1]:
            out["amdgpu_sim_adds_speed_up"] = {
                k: adds[1][k] / adds[0][k] for k in ("cpu_median_s", "wall_median_s",
                                                     "cpu_mean_s")}
    return out


def bench_campaign(args: argparse.Namespace) -> dict[str, Any]:
    """Every mix in turn, each with this tree and the baseline side by side."""
    root = in_checkout()
    tmp = Path(tempfile.mkdtemp(prefix="rgpu-bench-"))
    trees: dict[str, tuple[Path, str]] = {"current": (root, "working tree")}
    try:
        if args.baseline:
            trees["baseline"] = (tmp, _checkout(args.baseline, tmp))
        mixes = [_bench_mix(trees, mix, base, args) for mix, base in _mixes(args)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {
        "first_seed": FIRST_SEED, "rounds": args.rounds, "round_seeds": args.round_seeds,
        "cpus": os.cpu_count(),
        "how": "cases per CPU second of the driver process and its workers (one core's "
               "work: the driver waits for its worker), medians of per-case `total` seconds "
               "and of each stage a pipeline reports",
        "mixes": mixes,
    }


__all__ = ["CPU_MIX", "add_arguments", "bench_campaign"]
