"""The campaign report as Markdown (`report campaign DIR --md OUT.md`), and the Markdown
report of each top bucket (`buckets/<id>.md`, linked from both the HTML and the Markdown).

The campaign report has the HTML report's tables; its plots are SVG files beside it
(`plots/<name>.svg`), linked as images. A bucket report is written from what the store kept
(the best reproducer, its recorded outcomes, the first differing elements), in the layout of
`triage/report.py`'s issue report; `rgpu-fuzz report <bucket>` reruns the pipelines today.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from campaigns.report.gather import (
    REGRESSION_HEADER,
    BucketView,
    CampaignData,
    bucket_rows,
    diff_header,
    feature_rows,
    hex_bits,
    pipeline_rows,
    regression_rows,
    summary_rows,
    when,
)
from campaigns.report.plots import Plot
from rgpu_fuzz import casefile
from triage.report import _cell, _fence, _input_line

PLOTS_DIR = "plots"
MARKER = "<!-- rgpu-fuzz report campaign: bucket report from the store -->"
"""The first line of a bucket report written here: `report campaign` rewrites only files
that start with it, and keeps reports `rgpu-fuzz report <bucket>` wrote (they rerun)."""


def is_bucket_report(path: Path) -> bool:
    """The file is a bucket report this module wrote (so it may be rewritten)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.readline().rstrip("\n") == MARKER
    except OSError:
        return False
TOP_OPCODES = 20


def _table(header: Sequence[str], rows: Sequence[Sequence[str]],
           align: str | None = None) -> list[str]:
    out = ["| " + " | ".join(_cell(h) for h in header) + " |",
           "|" + "|".join(("---:" if a == "r" else "---") for a in
                          (align or "l" * len(header))) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def outcome_rows(outcomes: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str, str, str]]:
    """(pipeline, status, detail, seconds) of stored outcome summaries."""
    return [(label, str(o.get("status", "?")), str(o.get("detail", "")),
             f"{float(o.get('seconds', 0.0)):.4f}") for label, o in outcomes.items()]


def diff_rows(view: BucketView) -> list[tuple[str, str, str, str, str, str]]:
    """(buffer, index, expected, bits, actual, bits) of a bucket's first differing elements."""
    return [(d.buffer, str(d.index), d.expected, hex_bits(view, d.buffer, d.expected_bits),
             d.actual, hex_bits(view, d.buffer, d.actual_bits)) for d in view.diffs]


def render_bucket(view: BucketView, store_path: str, versions: Mapping[str, str]) -> str:
    """The Markdown report of one bucket from the store's record of it."""
    b = view.bucket
    rate = b.reproduction_rate
    lines = [MARKER, f"# {b.kind}: {', '.join(b.pipelines)} (bucket {b.id})", "",
             f"- signature: `{b.signature}`",
             f"- seen {b.count} times, first {when(b.first_seen)}, last {when(b.last_seen)}",
             f"- status: {b.status}" + (f" ({b.note})" if b.note else ""),
             f"- reproduced {b.reproduced} of {b.tries} tries" if rate is not None else
             "- not reproduced yet", ""]
    case = view.case
    if case is None:
        lines += ["The store keeps no case for this bucket.", ""]
    else:
        g, blk = case.launch.grid, case.launch.block
        size = f", {b.best_size[0]} tokens" if b.best_size else ""
        lines += ["## Kernel", "", f"Best reproducer: case `{case.id}`{size}, entry point "
                  f"`{case.entry}`.", "", _fence(case.kernel, "rust"), "", "## Inputs", ""]
        lines += [_input_line(a) for a in case.args] or ["(no arguments)"]
        lines += ["", "## Launch", "",
                  f"grid = [{g[0]}, {g[1]}, {g[2]}], block = [{blk[0]}, {blk[1]}, {blk[2]}]", ""]
    if view.outcomes:
        lines += ["## Outcomes (as recorded)", "",
                  *_table(("pipeline", "status", "detail", "seconds"),
                          outcome_rows(view.outcomes), "lllr"), ""]
    if view.detail:
        lines += ["## Finding", "", view.detail, ""]
    if view.diffs:
        exp, act = diff_header(view)
        lines += ["## First differing elements", "",
                  *_table(("buffer", "index", exp, "bits", act, "bits"), diff_rows(view),
                          "lrrlrl"), ""]
    lines += ["## Reproduce", "", _fence(
        f"rgpu-fuzz reproduce {b.id} --store {store_path}\n"
        f"rgpu-fuzz report {b.id} --store {store_path}   # reruns today's pipelines", "sh"),
        "", "## Versions (of this report)", ""]
    lines += [f"- {name}: {value}" for name, value in versions.items()]
    if case is not None:
        lines += ["", "<details><summary>case file</summary>", "",
                  _fence(casefile.dumps(case), "toml"), "", "</details>"]
    return "\n".join(lines) + "\n"


def render_markdown(data: CampaignData, plots: Sequence[Plot]) -> str:
    """The campaign report; `plots` are linked as `plots/<name>.svg`."""
    lines = [f"# rgpu-fuzz campaign report: {data.out}", "",
             f"Written {when(data.generated)}.", ""]
    if data.missing:
        lines += [f"> **Missing:** {m}" for m in data.missing] + [""]
    lines += ["## Summary", "", *_table(("quantity", "value"), [(label, value) for _, label, value
                                                        in summary_rows(data)]), ""]
    for p in plots:
        lines += [f"## {p.title}", "", f"![{p.title}]({PLOTS_DIR}/{p.name}.svg)", ""]
    if data.pipelines:
        lines += ["## Pipelines", "", *_table(
            ("pipeline", "runs", "seconds", "share", "s per run", "statuses"),
            pipeline_rows(data), "lrrrrl"), ""]
    if data.features is not None:
        lines += ["## Language features", "", f"Of {data.feature_cases} cases:", "",
                  *_table(("feature", "what", "cases", "share"), feature_rows(data), "llrr"),
                  ""]
    for cov in data.opcodes:
        top = sorted(cov.executed.items(), key=lambda kv: -kv[1])[:TOP_OPCODES]
        lines += [f"## Simulator opcodes, {cov.target}", "",
                  f"{cov.distinct} distinct opcodes executed of {len(cov.table)} in the "
                  f"{cov.target} ISA tables.", "",
                  *_table(("class", "executed", "in the table"),
                          [(k, str(a), str(t)) for k, (a, t) in cov.by_class().items()], "lrr"),
                  "", f"Most executed ({TOP_OPCODES}):", "",
                  *_table(("opcode", "wave-instructions"), [(k, str(v)) for k, v in top], "lr"),
                  ""]
    if data.regressions:
        lines += [f"## Regressions ({len(data.regressions)})", "",
                  "Buckets that were fixed and came back; each is open again (status new).", "",
                  *_table(REGRESSION_HEADER,
                          regression_rows(data), "lrllll"), ""]
    lines += ["## Buckets", ""]
    lines += _table(("id", "count", "kind", "status", "first seen", "signature"),
                    bucket_rows(data), "lrllll") if data.buckets else ["No findings."]
    lines.append("")
    for view in data.top:
        b = view.bucket
        flag = " — **regression**" if b.regression else ""
        lines += [f"### Bucket {b.id} ({b.count}×): {b.kind}{flag}", "", f"`{b.signature}`", "",
                  f"Report: [{view.report_name}]({view.report_name})", ""]
        if view.kernel is not None:
            lines += [_fence(view.kernel, "rust"), ""]
        if view.diffs:
            exp, act = diff_header(view)
            lines += [*_table(("buffer", "index", exp, "bits", act, "bits"), diff_rows(view),
                              "lrrlrl"), ""]
        elif view.detail:
            lines += [view.detail, ""]
    return "\n".join(lines) + "\n"


__all__ = ["MARKER", "PLOTS_DIR", "diff_rows", "is_bucket_report", "outcome_rows",
           "render_bucket", "render_markdown"]
