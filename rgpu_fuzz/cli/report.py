"""Write a Markdown report of a filed case, ready to paste into an issue tracker: the
reduced kernel, inputs, launch, what each pipeline produced, the first differing elements
with their bit patterns, the commands to reproduce, versions, and the case file.

The case is found like `reproduce` finds it (corpus or findings store, unique id prefix) and
its recorded pipelines are rerun, so the report shows what happens today, not last night.

`rgpu-fuzz report <id> --upstream DIR` writes an LLVM issue instead
(`triage.upstream_report`): the IR of the case's divergent amdgpu pipeline reduced
by llvm-reduce-22 with the FileCheck predicate of a reproducer (`--check FILE.ll`, default:
the `.ll` its `[expect] issue` names, or the `reproducer` of the known bug whose finding note
it names, `triage/known_bugs.toml`), an upstream test with RUN/CHECK lines, its version
matrix (llvmlite, llc-22, llc-19, GlobalISel) and `issue.md`.

`rgpu-fuzz report campaign DIR --html OUT.html [--md OUT.md]` reports a whole campaign
instead: one self-contained HTML file (throughput, cases, findings and new buckets over time,
time share and status mix per pipeline, language feature and simulator opcode coverage,
the top buckets with their reduced kernels and first differing elements), and a Markdown
report per top bucket in `buckets/` beside it (a report there that `rgpu-fuzz report <bucket>`
wrote is kept and linked). Nothing is rerun; it reads DIR only. For shards, DIR may hold one
campaign directory per shard, with their merged store given by `--store`.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rgpu_fuzz.checkout import checkout
from rgpu_fuzz.cli.reproduce import add_locate_arguments, locate, replay_options, rerun
from triage.lookup import Where

EXAMPLE = ("rgpu-fuzz report 3fa2c1 --out issue.md; "
           "rgpu-fuzz report campaign runs/nightly --html report.html")
CAMPAIGN = "campaign"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_locate_arguments(p)
    p.add_argument("dir", nargs="?", type=Path, default=None, metavar="DIR",
                   help="with `report campaign DIR`: the campaign directory (its --out)")
    p.add_argument("--out", type=Path, default=None, metavar="FILE",
                   help="write the Markdown here (default: stdout)")
    p.add_argument("--html", type=Path, default=None, metavar="FILE",
                   help="report campaign: write the self-contained HTML report here")
    p.add_argument("--md", type=Path, default=None, metavar="FILE",
                   help="report campaign: write the Markdown report here (plots as SVG files "
                        "in plots/ beside it; default without --html: stdout, no plots)")
    p.add_argument("--upstream", type=Path, default=None, metavar="DIR",
                   help="write an LLVM issue in DIR: reduced .ll with RUN/CHECK lines, "
                        "version matrix, issue.md")
    p.add_argument("--check", type=Path, default=None, metavar="FILE.ll",
                   help="--upstream: the reproducer whose RUN/CHECK lines are the reduction "
                        "predicate (default: the case's [expect] issue, when a .ll, or "
                        "its known bug's reproducer)")
    p.add_argument("--check-run", type=int, default=None, metavar="N",
                   help="--upstream: which RUN line of the reproducer (default: its "
                        "`; Reduce: RUN N` line, else 1)")
    p.add_argument("--no-evidence", action="store_true",
                   help="skip the evidence line, culprit pass and duplicate search (they "
                        "rerun the case on a dozen variants of its pipeline)")
    p.add_argument("--top", type=int, default=None, metavar="N",
                   help="report campaign: buckets shown in full, most counted first "
                        "(default: 10)")


def execute(args: argparse.Namespace) -> int:
    from rgpu_fuzz.cli import UserError

    if args.id == CAMPAIGN:
        return _campaign(args)
    if args.upstream is not None:
        return _upstream(args)
    for name in ("dir", "html", "md", "top"):
        if getattr(args, name) is not None:
            shown = "DIR" if name == "dir" else f"--{name}"
            raise UserError(f"{shown} belongs to `rgpu-fuzz report campaign DIR` (got a case "
                            f"id {args.id!r})")
    return _case(args)


def _case(args: argparse.Namespace) -> int:
    from rgpu_fuzz.cli import UserError
    from triage.report import collect_versions, render_report

    case, where = locate(args)
    pipelines, outcomes, verdict, _policy = rerun(args, case, where)
    sections = []
    for p in pipelines:
        hook = getattr(p, "report_section", None)
        section = hook(case, outcomes, verdict, pipelines) if callable(hook) else None
        if section:
            sections.append(section)
    if not verdict.agree and not args.no_evidence:
        sections.append(_facts(args, case, where, verdict, outcomes).markdown)
    plugins = [*args.plugin, *args.recorded_plugins]
    text = render_report(case, outcomes, verdict, versions=collect_versions(),
                         sections=sections, reproduce_options=replay_options(where, plugins),
                         run_options=replay_options(Where(), plugins))
    if verdict.agree:
        print(f"rgpu-fuzz report: note: case {case.id} no longer diverges on "
              f"{', '.join(outcomes)}", file=sys.stderr)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    try:
        args.out.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UserError(f"{args.out}: cannot write: {e.strerror}") from None
    print(f"wrote {args.out} (case {case.id})", file=sys.stderr)
    return 0


def _gpu_pipeline(args: argparse.Namespace, case: Any, where: Where) -> tuple[str, str, int]:
    """The amdgpu pipeline to reduce for, as (spec, cpu, opt level): the first of
    --pipelines, the known divergence's, the bucket's, the case's recorded ones."""
    from rgpu_fuzz.cli import UserError
    from rgpu_fuzz.pipelines.base import PipelineSpec

    specs = [s.strip() for s in (args.pipelines or "").split(",") if s.strip()]
    specs += list(case.expect.pipelines) if case.expect is not None else []
    specs += list(where.bucket.pipelines) if where.bucket is not None else []
    specs += list(case.pipelines)
    for text in specs:
        spec = PipelineSpec.parse(text)
        cpu = next((o for o in spec.options if o.startswith("gfx")), None)
        level = next((int(o[1]) for o in spec.options if re.fullmatch(r"O[0-3]", o)), None)
        if spec.name.startswith("amdgpu") and cpu is not None and level is not None:
            return text, cpu, level
    raise UserError(f"case {case.id}: no amdgpu pipeline with a gfx target and O level "
                    "among its pipelines; give one with --pipelines amdgpu-sim:gfx942:O3")


def _observed(args: argparse.Namespace, case: Any, where: Where,
              spec: str) -> tuple[tuple[str, ...], Any, dict[str, Any]]:
    """The case rerun on the arbiter and `spec`: one line per differing element (at most 8),
    or what the finding says when no element differs (a crash, a trap); the verdict and
    outcomes too."""
    from oracles import PolicyError, load_policy
    from rgpu_fuzz.cli import UserError

    try:
        arbiter = load_policy(args.policy).arbiter
    except PolicyError as e:
        raise UserError(str(e)) from None
    rerun_args = argparse.Namespace(**{**vars(args), "pipelines": f"{arbiter},{spec}"})
    _pipelines, outcomes, verdict, _policy = rerun(rerun_args, case, where)
    lines: list[str] = []
    for f in verdict.findings:
        lines += [f"`{d.buffer}[{d.index}]`: {arbiter} {d.expected} ({d.expected_bits:#x}), "
                  f"{spec} {d.actual} ({d.actual_bits:#x})" for d in f.diffs[:8]]
        if not f.diffs:
            lines.append(f"{f.signature}: {f.detail}")
    return (tuple(lines) or (f"{spec} agrees with {arbiter} today",)), verdict, outcomes


@dataclass(frozen=True)
class _FactsText:
    markdown: str
    culprit: str


def _facts(args: argparse.Namespace, case: Any, where: Where, verdict: Any,
           outcomes: dict[str, Any], spec: str | None = None) -> _FactsText:
    """Evidence, culprit and duplicates of `spec`'s finding (default: the bucket's pipeline,
    else the case's first finding), kept in the store the case came from
    (`triage.finding_facts`)."""
    from oracles import load_policy
    from rgpu_fuzz.cli.pipelines import registry_from
    from triage.finding_facts import facts_section, gather_facts

    finding = verdict.findings[0] if verdict.findings else None
    if spec is None and where.bucket is not None:  # the bucket's pipeline, not the first found
        spec = where.bucket.signature.pipeline or None
    spec = spec or (finding.pipelines[-1] if finding is not None else None)
    if spec is None:
        return _FactsText("", "")
    signature = str(where.bucket.signature) if where.bucket is not None else (
        str(finding.signature) if finding is not None else None)
    facts = gather_facts(case, spec, load_policy(args.policy), outcome=outcomes.get(spec),
                         signature=signature, store=where.store,
                         bucket=where.bucket.id if where.bucket is not None else None,
                         registry=registry_from(args))
    culprit = facts.culprit.line() if facts.culprit is not None else ""
    for line in (f"evidence: {facts.evidence.line()}" if facts.evidence else facts.note,
                 culprit):
        if line:
            print(f"rgpu-fuzz report: {line}", file=sys.stderr)
    return _FactsText(facts_section(facts), culprit)


def _upstream(args: argparse.Namespace) -> int:
    from rgpu_fuzz import casefile
    from rgpu_fuzz.cli import UserError
    from rgpu_fuzz.cli.inspect import BuildJob
    from rgpu_fuzz.model.outcome import detail
    from rgpu_fuzz.pipelines.gpu_build import GpuBuild
    from rgpu_fuzz.pipelines.stages import describe_failure
    from rgpu_fuzz.pipelines.workers import Done, call_in_worker
    from triage.upstream_report import UpstreamError, make_upstream_report

    case, where = locate(args)
    spec, cpu, level = _gpu_pipeline(args, case, where)
    check = args.check
    issue = case.expect.issue if case.expect is not None else ""
    if check is None and not issue.endswith(".ll"):
        from triage.known_bugs import reproducer_of

        issue = reproducer_of(issue) or issue  # a known bug's finding note names its test
    if check is None and issue.endswith(".ll"):
        root = checkout()
        places = [Path(issue)] + ([root / issue] if root is not None else [])
        check = next((p for p in places if p.is_file()), None)
    if check is None or not check.is_file():
        raise UserError(f"case {case.id}: which reproducer's CHECK lines pin the bug? give "
                        "--check FILE.ll (e.g. one of docs/llvm-bugs)")
    result = call_in_worker("rgpu_fuzz.cli.inspect:build",
                            BuildJob(casefile.dumps(case), cpu, level, None), timeout=600)
    if not isinstance(result, Done):
        raise UserError(f"case {case.id}: {describe_failure(result, 'build')}")
    built = result.value
    if not isinstance(built, GpuBuild):
        raise UserError(f"case {case.id}: {built.status}: {detail(built)}")
    observed, verdict, outcomes = _observed(args, case, where, spec)
    facts = (_FactsText("", "") if args.no_evidence
             else _facts(args, case, where, verdict, outcomes, spec))
    try:
        rep = make_upstream_report(case.id, spec, case.kernel, built.ir_opt, check,
                                   args.check_run, args.upstream, observed=observed,
                                   culprit=facts.culprit, facts=facts.markdown, cpu=cpu)
    except UpstreamError as e:
        raise UserError(str(e)) from None
    yes = [c.variant.name for c in rep.matrix.cells if c.result.value == "yes"]
    print(f"wrote {rep.reduced} ({rep.lines_before} -> {rep.lines_after} lines of IR) and "
          f"{rep.issue}; reproduces on: {', '.join(dict.fromkeys(yes)) or 'none'}",
          file=sys.stderr)
    return 0


def _write(path: Path, text: str) -> None:
    from rgpu_fuzz.cli import UserError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UserError(f"{path}: cannot write: {e.strerror or e}") from None


def _campaign(args: argparse.Namespace) -> int:
    from campaigns.report.gather import DEFAULT_TOP, collect
    from campaigns.report.md import (
        PLOTS_DIR,
        is_bucket_report,
        render_bucket,
        render_markdown,
    )
    from rgpu_fuzz.cli import UserError
    from triage.report import collect_versions

    if args.dir is None:
        raise UserError("report campaign: which campaign? e.g. "
                        "`rgpu-fuzz report campaign runs/nightly --html report.html`")
    if args.out is not None:
        raise UserError("report campaign: use --html FILE and/or --md FILE, not --out")
    top = DEFAULT_TOP if args.top is None else args.top
    if top < 0:
        raise UserError(f"--top must be >= 0, got {top}")
    data = collect(args.dir, store=args.store, top=top)
    plots = []
    if args.html is not None or args.md is not None:
        from campaigns.report.plots import all_plots

        plots = all_plots(data)
    versions = collect_versions()
    written = []
    kept = 0
    for target in {p.parent for p in (args.html, args.md) if p is not None}:
        for view in data.top:
            path = target / view.report_name
            if path.is_file() and not is_bucket_report(path):
                kept += 1  # e.g. `rgpu-fuzz report <bucket>`'s, with today's rerun: richer
                continue
            _write(path, render_bucket(view, str(data.store), versions))
    if args.html is not None:
        from campaigns.report.html import render_html

        _write(args.html, render_html(data, plots))
        written.append(str(args.html))
    if args.md is not None:
        for p in plots:
            _write(args.md.parent / PLOTS_DIR / f"{p.name}.svg", p.svg)
        _write(args.md, render_markdown(data, plots))
        written.append(str(args.md))
    if not written:
        sys.stdout.write(render_markdown(data, ()))
        return 0
    print(f"wrote {', '.join(written)} ({len(data.buckets)} buckets, {data.cases} cases, "
          f"{len(data.top) - kept} bucket reports in buckets/"
          + (f", {kept} kept as they were" if kept else "") + ")", file=sys.stderr)
    for line in data.missing:
        print(f"rgpu-fuzz report: note: {line}", file=sys.stderr)
    return 0
