"""Write a Markdown report of a filed case, ready to paste into an issue tracker: the
reduced kernel, inputs, launch, what each pipeline produced, the first differing elements
with their bit patterns, the commands to reproduce, versions, and the case file.

The case is found like `reproduce` finds it (corpus or findings store, unique id prefix) and
its recorded pipelines are rerun, so the report shows what happens today, not last night.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rgpu_fuzz.cli.reproduce import add_locate_arguments, locate, replay_options, rerun
from rgpu_fuzz.triage.lookup import Where

EXAMPLE = "rgpu-fuzz report 3fa2c1 --out issue.md"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_locate_arguments(p)
    p.add_argument("--out", type=Path, default=None, metavar="FILE",
                   help="write the Markdown here (default: stdout)")


def execute(args: argparse.Namespace) -> int:
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
