"""Run a fuzzing campaign: generate → run → judge → reduce new buckets → store.

Everything goes into --out: `findings.sqlite` (the store), `cases/` (every case with a
finding, as soon as it is found), `reduced/` (best reproducer per bucket), `checkpoint.json`
(finished seed chunks: run the same command again to continue after Ctrl-C or a crash).
Shards (`--shard i/N`) split the seed space deterministically across machines; combine their
stores with `rgpu-fuzz triage merge`. `--executor ray` runs the jobs on a Ray cluster instead
of local processes (the bookkeeping stays here: only this process writes --out).
While it runs, a progress line on stderr: redrawn in place on a terminal, a plain line every
`--progress-every` otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rich.console import Console

from rgpu_fuzz.cli.console import make_console
from rgpu_fuzz.cli.pipelines import add_plugin_argument
from rgpu_fuzz.cli.progress import ProgressLine
from triage.store import DEFAULT_CAMPAIGN_DIR

EXAMPLE = ("rgpu-fuzz campaign --time 10m --jobs 8 "
           "--pipelines ref,llvm-cpu:O0,llvm-cpu:O3 --out runs/nightly")
DEFAULT_PIPELINES = ("ref,llvm-cpu:O0,llvm-cpu:O3:det:detsample=4,"
                     "amdgpu-sim:gfx942:O0,amdgpu-sim:gfx942:O3")
"""`det` on one case in four (by case id): the second compilation was half of all the
time, and a nondeterministic pass shows on many kernels."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--time", default="60s",
                   help="wall-clock budget (90s, 10m, 2h; default: %(default)s)")
    p.add_argument("--cases", type=int,
                   help="stop after this many cases in all (earlier runs of a resumed "
                        "campaign count; rounded up to whole chunks)")
    p.add_argument("--jobs", type=int,
                   help=f"jobs at once: local worker processes (default: all cores, here "
                        f"{os.cpu_count() or 1}); Ray actors (default: one per CPU of the "
                        "cluster)")
    p.add_argument("--executor", default="local",
                   help="where jobs run: local (a process pool), ray (a Ray instance started "
                        "on this machine, or the cluster in $RAY_ADDRESS) or ray://HOST:PORT "
                        "(Ray Client; needs rgpu-fuzz[ray]; default: %(default)s)")
    p.add_argument("--progress-every", default="30s",
                   help="time between progress lines when stderr is not a terminal "
                        "(default: %(default)s)")
    p.add_argument("--pipelines", default=DEFAULT_PIPELINES,
                   help="comma-separated specs (default: %(default)s)")
    p.add_argument("--profile", default="default",
                   help="generator profile name or file (default: %(default)s)")
    p.add_argument("--policy", default="default",
                   help="oracle policy name or file (default: %(default)s)")
    p.add_argument("--out", type=Path, default=DEFAULT_CAMPAIGN_DIR,
                   help="campaign directory (store, cases, checkpoint; default: %(default)s); its "
                        "findings.sqlite is the store `triage`, `report` and `reproduce` read "
                        "by default")
    p.add_argument("--seed-start", type=int, default=0, help="first seed (default: %(default)s)")
    p.add_argument("--chunk", type=int, default=8,
                   help="seeds per checkpointed chunk (default: %(default)s)")
    p.add_argument("--shard", default="0/1",
                   help="i/N: run chunk c when c %% N == i (default: %(default)s)")
    p.add_argument("--no-reduce", action="store_true", help="store findings unreduced")
    p.add_argument("--reduce-budget", default="60s",
                   help="time budget per reduction (default: %(default)s)")
    p.add_argument("--probes-from", type=Path, metavar="STORE",
                   help="take the bug-key probe answers another store (a nightly's history) "
                        "holds for this run's toolchain as known")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_plugin_argument(p)


def _shard(text: str) -> tuple[int, int]:
    from rgpu_fuzz.cli import UserError

    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise UserError(f"--shard: expected i/N, e.g. 0/4, got \"{text}\"") from None
    if not (n >= 1 and 0 <= i < n):
        raise UserError(f"--shard: need 0 <= i < N, got {i}/{n}")
    return i, n


def print_summary(console: Console, data: dict[str, object]) -> None:
    console.print(f"[bold]campaign summary[/] ({data['out']})")
    console.print(f"  {data['cases']} cases in {data['seconds']}s on {data['jobs']} "
                  f"{data.get('executor', 'local')} jobs: "
                  f"{data['cases_per_s']} cases/s, {data['cases_per_s_per_core']} per core")
    for label, p in data["pipelines"].items():  # type: ignore[attr-defined]
        med = p["median_s"]
        console.print(f"  {label:<20} median {med if med is None else round(med, 4)} s/case, "
                      f"statuses {p['statuses']}", highlight=False)
    if data["harness_errors"]:
        console.print(f"  [red]harness errors[/] (bugs in rgpu-fuzz, tracebacks in "
                      f"{data['out']}/harness-errors/): {data['harness_errors']}")
    if data.get("pipeline_errors"):
        console.print(f"  [red]pipeline errors[/] (the pipeline broke, not the compiler under "
                      f"test; tracebacks in the findings): {data['pipeline_errors']}")
    if data.get("timeouts"):
        console.print(f"  timeouts: {data['timeouts']}", highlight=False)
    if data.get("lost_jobs"):
        console.print(f"  {data['lost_jobs']} jobs lost with their worker and run again "
                      f"(campaign.log)")
    if data.get("abandoned_jobs"):
        console.print(f"  stopped at the time limit with {data['abandoned_jobs']} jobs still "
                      "running (their seeds run again when the campaign resumes)")
    if data["invalid_cases"]:
        console.print(f"  rejected by ref (generator bugs): {data['invalid_cases']}")
    console.print(f"  findings: {data['findings']} in {data['cases_with_findings']} cases; "
                  f"buckets: {len(data['buckets'])} ({data['new_buckets']} new)")  # type: ignore[arg-type]
    for b in data["buckets"]:  # type: ignore[attr-defined]
        console.print(f"    {b['id']}  x{b['count']:<4} {b['signature'][:100]}",
                      highlight=False, markup=False)
    for r in data["reductions"]:  # type: ignore[attr-defined]
        console.print(f"  reduced {r['lines_before']} → {r['lines_after']} lines "
                      f"({r['tokens_before']} → {r['tokens_after']} tokens) in "
                      f"{r['seconds']}s: {r['signature'][:80]}", highlight=False, markup=False)


def execute(args: argparse.Namespace) -> int:
    from campaigns.executors import make_executor
    from campaigns.jobs import Setup
    from campaigns.orchestrate import (
        Campaign,
        CampaignConfig,
        CampaignError,
        parse_duration,
    )
    from rgpu_fuzz.cli import UserError
    from rgpu_fuzz.cli.pipelines import registry_from
    from rgpu_fuzz.pipelines.registry import PipelineError

    specs = tuple(s.strip() for s in args.pipelines.split(",") if s.strip())
    if not specs:
        raise UserError("--pipelines is empty (default: " + DEFAULT_PIPELINES + ")")
    reg = registry_from(args)
    try:
        reg.create_all(specs)
    except PipelineError as e:
        raise UserError(str(e)) from None
    if (args.jobs is not None and args.jobs < 1) or args.chunk < 1:
        raise UserError("--jobs and --chunk must be >= 1")
    try:
        config = CampaignConfig(
            out=args.out, setup=Setup(specs, args.profile, args.policy,
                                      tuple(str(Path(p).resolve()) for p in args.plugin)),
            seed_start=args.seed_start, chunk=args.chunk, shard=_shard(args.shard),
            time_s=parse_duration(args.time), max_cases=args.cases,
            jobs=args.jobs or os.cpu_count() or 1,
            reduce=not args.no_reduce, reduce_budget_s=parse_duration(args.reduce_budget),
            probes_from=args.probes_from)
        every = parse_duration(args.progress_every)
        executor = make_executor(args.executor, args.jobs)
        line = ProgressLine(sys.stderr, every_s=every)
        campaign = Campaign(config, on_progress=lambda c: line.update(c.progress()),
                            executor=executor)
        try:
            summary = campaign.run()
            line.close(campaign.progress())
        except KeyboardInterrupt:
            line.close(campaign.progress())
            summary = campaign.summary()
            make_console(stderr=True).print("interrupted: findings so far are stored; run "
                                            "the same command to continue")
        finally:
            campaign.close()
    except CampaignError as e:
        raise UserError(str(e)) from None
    if args.json:
        print(json.dumps(summary.data, indent=2))
    else:
        print_summary(make_console(), summary.data)
    return 0
