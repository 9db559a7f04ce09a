"""Write a Markdown report of a filed case, ready to paste into an issue tracker: the
reduced kernel, inputs, launch, what each pipeline produced, the first differing elements
with their bit patterns, the commands to reproduce, versions, and the case file.

The case is found like `reproduce` finds it (corpus or findings store, unique id prefix) and
its recorded pipelines are rerun, so the report shows what happens today, not last night.

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
import sys
from pathlib import Path

from rgpu_fuzz.cli.reproduce import add_locate_arguments, locate, replay_options, rerun
from rgpu_fuzz.triage.lookup import Where

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
    p.add_argument("--top", type=int, default=None, metavar="N",
                   help="report campaign: buckets shown in full, most counted first "
                        "(default: 10)")


def execute(args: argparse.Namespace) -> int:
    from rgpu_fuzz.cli import UserError

    if args.id == CAMPAIGN:
        return _campaign(args)
    for name in ("dir", "html", "md", "top"):
        if getattr(args, name) is not None:
            shown = "DIR" if name == "dir" else f"--{name}"
            raise UserError(f"{shown} belongs to `rgpu-fuzz report campaign DIR` (got a case "
                            f"id {args.id!r})")
    return _case(args)


def _case(args: argparse.Namespace) -> int:
    from rgpu_fuzz.cli import UserError
    from rgpu_fuzz.triage.report import collect_versions, render_report

    case, where = locate(args)
    pipelines, outcomes, verdict, _policy = rerun(args, case, where)
    sections = []
    for p in pipelines:
        hook = getattr(p, "report_section", None)
        section = hook(case, outcomes, verdict, pipelines) if callable(hook) else None
        if section:
            sections.append(section)
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


def _write(path: Path, text: str) -> None:
    from rgpu_fuzz.cli import UserError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UserError(f"{path}: cannot write: {e.strerror or e}") from None


def _campaign(args: argparse.Namespace) -> int:
    from rgpu_fuzz.cli import UserError
    from rgpu_fuzz.triage.campaign_report import DEFAULT_TOP, collect
    from rgpu_fuzz.triage.campaign_report_md import (
        PLOTS_DIR,
        is_bucket_report,
        render_bucket,
        render_markdown,
    )
    from rgpu_fuzz.triage.report import collect_versions

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
        from rgpu_fuzz.triage.campaign_report_plots import all_plots

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
        from rgpu_fuzz.triage.campaign_report_html import render_html

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
