"""Measure the harness and write JSON, so a change can be compared with the last run.

Benchmarks: `interp` (reference interpreter: seconds per case over a fixed kernel set: the
corpus plus a fixed range of generated seeds), `gen` (generator: cases per second, kernel
size). Figures are medians over repeats, measured in one process.

`compile` (not run by default: minutes) times AMDGPU code objects per target and level:
compile, link, read and verify (`bench_compile.py`).

`reduce` (not run by default: minutes) compares our reducer with C-Vise (apt package
`cvise`) on the first `--findings` generated cases that the seeded-bug pipeline
`llvm-cpu-xor2or` (rgpu_fuzz/bench/seeded/miscompile.py) miscompiles: same predicate, same
`--budget` each, kernel-only lines and tokens, per finding and median.

`campaign` (not run by default: minutes) measures campaign throughput per core on a pipeline
mix, side by side with a git revision (`--baseline REV`); see `rgpu_fuzz.bench.campaign`.

`buckets` (not run by default: minutes) measures findings, buckets and bucket purity of
seeded-bug campaigns, bucketed by `ops=` and by bug key; see `rgpu_fuzz.bench.buckets`.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from rgpu_fuzz import __version__, casefile
from rgpu_fuzz.bench import buckets as bench_buckets
from rgpu_fuzz.bench import campaign as bench_campaign
from rgpu_fuzz.bench.seeded import plugin

EXAMPLE = "rgpu-fuzz bench interp --repeat 5 --out bench.json"
BENCHES = ("interp", "gen", "pipelines", "rustc", "compile", "reduce", "sim", "campaign",
           "buckets")
SLOW_BENCHES = ("compile", "reduce", "sim", "campaign", "buckets")
"""Run only when named: they take minutes."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("which", nargs="*", choices=BENCHES,
                   default=[b for b in BENCHES if b not in SLOW_BENCHES],
                   help=f"which benchmarks (default: all but {', '.join(SLOW_BENCHES)})")
    p.add_argument("--repeat", type=int, default=5, help="runs per case (median taken)")
    p.add_argument("--seeds", type=int, default=50,
                   help="generated seeds: in the kernel set, and the cases `gen` times")
    p.add_argument("--corpus", type=Path, default=Path("corpus"), help="corpus directory")
    p.add_argument("--conformance", type=Path, default=Path("tests/semantics/cases"),
                   metavar="DIR", help="`sim`, `rustc`: the rustc-derived conformance cases "
                   "(default: the checkout's, from its root)")
    p.add_argument("--pipelines", default="ref,llvm-cpu:O0,llvm-cpu:O3,rustc-cpu:O2",
                   help="pipelines measured by the `pipelines` benchmark")
    p.add_argument("--findings", type=int, default=3,
                   help="`reduce`: seeded-bug findings to reduce")
    p.add_argument("--budget", type=_seconds, default=120.0,
                   help="`reduce`: wall-clock budget per reducer per finding (e.g. 120s)")
    p.add_argument("--sim-specs", default="amdgpu-sim:gfx942:O0,amdgpu-sim:gfx942:O3",
                   help="`sim`: the amdgpu-sim specs whose code objects are simulated")
    p.add_argument("--sim-baseline", help="`sim`: a git revision (or checkout) whose simulator "
                   "is measured side by side with this one")
    p.add_argument("--sim-rounds", type=int, default=1,
                   help="`sim`: alternations of this simulator and the baseline")
    p.add_argument("--sim-warmup", type=int, default=10,
                   help="`sim`: unmeasured launches of each case before the warm ones")
    p.add_argument("--sim-hot", type=int, default=8,
                   help="`sim`: tier-up threshold for the warm launches (below --sim-warmup: "
                   "the warm figure is the fused steady state; 0: as shipped)")
    p.add_argument("--out", type=Path, help="write the JSON here as well as to stdout")
    bench_campaign.add_arguments(p)
    bench_buckets.add_arguments(p)


def _seconds(text: str) -> float:
    """`120`, `120s` or `2m` as seconds."""
    scale = {"s": 1.0, "m": 60.0}.get(text[-1:], None)
    try:
        return float(text[:-1]) * scale if scale else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r}") from None


def _kernel_set(corpus: Path, seeds: int) -> list[tuple[str, Any]]:
    from generators import SeededChoices, generate, load_profile

    cases = [(p.stem, casefile.load(p)) for p in sorted(corpus.glob("*.toml"))]
    profile = load_profile("default")
    cases += [(f"seed-{s}", generate(SeededChoices(s), profile, seed=s)) for s in range(seeds)]
    return cases


def bench_interp(args: argparse.Namespace) -> dict[str, Any]:
    """The reference interpreter per case, two ways: `cold` is what a campaign pays for a new
    case (parse, check, closure compilation and the run; caches cleared first), `warm` re-runs
    an already compiled case (the interpreter's execution alone)."""
    from rgpu_fuzz.interp.program import clear_cache
    from rgpu_fuzz.lang.features import _module_of
    from rgpu_fuzz.pipelines.base import PipelineSpec
    from rgpu_fuzz.pipelines.frontend import clear_cache as clear_check_cache
    from rgpu_fuzz.pipelines.ref import RefPipeline

    ref = RefPipeline(PipelineSpec("ref"))
    per_case: dict[str, dict[str, Any]] = {}
    for name, case in _kernel_set(args.corpus, args.seeds):
        cold = []
        for _ in range(args.repeat):
            clear_cache()
            clear_check_cache()
            _module_of.cache_clear()
            t0 = time.perf_counter()
            ref.run(case)
            cold.append(time.perf_counter() - t0)
        warm = []
        status = ""
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            status = str(ref.run(case).status)
            warm.append(time.perf_counter() - t0)
        per_case[name] = {"cold_s": statistics.median(cold), "warm_s": statistics.median(warm),
                          "status": status,
                          "threads": case.launch.threads_per_block * case.launch.blocks}
    cold_m = [c["cold_s"] for c in per_case.values()]
    warm_m = [c["warm_s"] for c in per_case.values()]
    return {"cases": len(per_case), "repeat": args.repeat,
            "cold_median_s_per_case": statistics.median(cold_m),
            "warm_median_s_per_case": statistics.median(warm_m),
            "cold_max_s_per_case": max(cold_m), "warm_max_s_per_case": max(warm_m),
            "cold_cases_per_s": len(cold_m) / sum(cold_m), "per_case": per_case}


def bench_pipelines(args: argparse.Namespace) -> dict[str, Any]:
    """Median seconds per case of each pipeline over the fixed kernel set (each case run
    `--repeat` times; the first run of each case warms caches and worker processes)."""
    from rgpu_fuzz.lang.features import case_features
    from rgpu_fuzz.pipelines.registry import Registry

    reg = Registry()
    specs = [s for s in args.pipelines.split(",") if s.strip()]
    cases = _kernel_set(args.corpus, args.seeds)
    out: dict[str, Any] = {"cases": len(cases), "repeat": args.repeat, "pipelines": {}}
    for spec in specs:
        pipeline = reg.create(spec)
        reason = pipeline.unavailable_reason()
        if reason is not None:
            out["pipelines"][spec] = {"unavailable": reason}
            continue
        medians = []
        statuses: dict[str, int] = {}
        for _, case in cases:
            feats = case_features(case)
            pipeline.run(case, feats)
            runs = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                o = pipeline.run(case, feats)
                runs.append(time.perf_counter() - t0)
            statuses[str(o.status)] = statuses.get(str(o.status), 0) + 1
            medians.append(statistics.median(runs))
        out["pipelines"][spec] = {"median_s_per_case": statistics.median(medians),
                                  "mean_s_per_case": statistics.fmean(medians),
                                  "max_s_per_case": max(medians), "statuses": statuses}
    return out


def bench_gen(args: argparse.Namespace) -> dict[str, Any]:
    from generators import SeededChoices, generate, load_profile

    profile = load_profile("default")
    n = args.seeds
    t0 = time.perf_counter()
    lines = [generate(SeededChoices(s), profile, seed=s).kernel.count("\n") for s in range(n)]
    elapsed = time.perf_counter() - t0
    return {"cases": n, "cases_per_s": n / elapsed, "median_lines": statistics.median(lines),
            "max_lines": max(lines)}


RUSTC_BATCHES = (8, 16, 32)
RUSTC_UNBATCHED = 16


def bench_rustc(args: argparse.Namespace) -> dict[str, Any]:
    """`rustc-cpu:O2` wall seconds per case, one rustc per case against batches of 8, 16
    and 32 cases per program, over the semantics cases (the first 16 unbatched, the first
    32 batched); medians over `min(repeat, 3)` runs (each run compiles everything again)."""
    from rgpu_fuzz.pipelines.base import PipelineSpec
    from rgpu_fuzz.pipelines.rustc_cpu import RustcCpuPipeline

    pipeline = RustcCpuPipeline(PipelineSpec("rustc-cpu", ("O2",)))
    if (reason := pipeline.unavailable_reason()) is not None:
        return {"unavailable": reason}
    cases = [casefile.load(p) for p in sorted(args.conformance.glob("*.toml"))]
    repeat = max(1, min(args.repeat, 3))

    def per_case(batch: int) -> dict[str, Any]:
        chosen = cases[:RUSTC_UNBATCHED if batch == 1 else max(RUSTC_BATCHES)]
        runs, statuses = [], set()
        for _ in range(repeat):
            t0 = time.perf_counter()
            if batch == 1:
                outcomes = [pipeline.run(c) for c in chosen]
            else:
                outcomes = [o for s in range(0, len(chosen), batch)
                            for o in pipeline.run_batch(chosen[s:s + batch])]
            runs.append((time.perf_counter() - t0) / len(chosen))
            statuses |= {str(o.status) for o in outcomes}
        return {"cases": len(chosen), "median_s_per_case": statistics.median(runs),
                "runs_s_per_case": runs, "statuses": sorted(statuses)}

    figures = {"1": per_case(1)} | {str(n): per_case(n) for n in RUSTC_BATCHES}
    base = figures["1"]["median_s_per_case"]
    for f in figures.values():
        f["speed-up"] = base / f["median_s_per_case"]
    return {"pipeline": "rustc-cpu:O2", "repeat": repeat, "batch_size": figures}


def bench_reduce(args: argparse.Namespace) -> dict[str, Any]:
    from oracles import load_policy
    from triage.cvise import (
        SEEDED_PIPELINE,
        compare_reducers,
        cvise_available,
        find_wrong_code,
    )

    seeded_plugin = str(plugin("miscompile.py"))  # defines SEEDED_PIPELINE
    pipelines, policy, plugins = ("ref", SEEDED_PIPELINE), load_policy("default"), [seeded_plugin]
    if not cvise_available():
        print("bench reduce: C-Vise is not installed (Debian/Ubuntu: apt-get install cvise); "
              "only our reducer is measured, and the C-Vise figures are null", file=sys.stderr)
    t0 = time.perf_counter()
    found = find_wrong_code(args.findings, pipelines, policy, plugins=plugins)
    search_s = time.perf_counter() - t0
    per_finding = []
    for f in found:
        print(f"  reduce seed {f.seed}...", file=sys.stderr)
        per_finding.append(compare_reducers(f, pipelines, policy, budget_s=args.budget,
                                            plugins=plugins))

    def median(who: str, key: str) -> float | None:
        values = [r[who][key] for r in per_finding
                  if who != "cvise" or r["cvise"]["available"]]
        return statistics.median(values) if values else None

    medians = {who: {key: median(who, key) for key in ("lines", "tokens", "seconds")
                     if who != "original" or key != "seconds"}
               for who in ("original", "ours", "cvise")}
    return {"pipelines": list(pipelines), "budget_s": args.budget,
            "cvise_available": cvise_available(),
            **({} if cvise_available() else {"cvise_missing": "C-Vise is not installed "
                                             "(apt-get install cvise)"}),
            "findings": len(found),
            "search_seconds": search_s, "median": medians, "per_finding": per_finding}


def bench_compile(args: argparse.Namespace) -> dict[str, Any]:
    """AMDGPU code objects: compile, link, read and verify per target and level
    (`bench_compile.py`)."""
    from rgpu_fuzz.bench.compile import bench_compile as run

    return run(args, _kernel_set(args.corpus, args.seeds))


def _bench_sim(args: argparse.Namespace) -> dict[str, Any]:
    from rgpu_fuzz.bench.sim import bench_sim

    return bench_sim(args)


def execute(args: argparse.Namespace) -> int:
    from rgpu_fuzz.cli import UserError

    if args.seeds < 1 or args.repeat < 1:
        raise UserError("--seeds and --repeat must be >= 1")
    if {"sim", "rustc"} & set(args.which) and not any(args.conformance.glob("*.toml")):
        raise UserError(f"--conformance {args.conformance}: no case files (*.toml) there")
    if "sim" in args.which:
        from rgpu_fuzz.bench.sim import check_sim_specs

        check_sim_specs(args.sim_specs)
    if args.out:  # before minutes of measuring, not after
        try:
            with args.out.open("a", encoding="utf-8"):
                pass
        except OSError as e:
            raise UserError(f"--out {args.out}: cannot write: {e.strerror or e}") from None
    result: dict[str, Any] = {"rgpu_fuzz": __version__, "python": platform.python_version(),
                              "machine": platform.machine(), "benchmarks": {}}
    for which in args.which:
        print(f"bench {which}...", file=sys.stderr)
        result["benchmarks"][which] = {"interp": bench_interp, "gen": bench_gen,
                                         "pipelines": bench_pipelines,
                                         "rustc": bench_rustc,
                                         "compile": bench_compile,
                                         "reduce": bench_reduce,
                                         "sim": _bench_sim,
                                         "campaign": bench_campaign.bench_campaign,
                                         "buckets": bench_buckets.bench_buckets}[which](args)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        try:
            args.out.write_text(text + "\n", encoding="utf-8")
        except OSError as e:
            raise UserError(f"--out {args.out}: cannot write: {e.strerror or e}") from None
    return 0
