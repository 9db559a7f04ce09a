"""The campaign report as one self-contained HTML file (`report campaign DIR --html OUT`).

Self-contained means it opens from a mail attachment or a CI artefact store with no
network: the stylesheet is inline, the plots are inline SVG, there is no script, and the
only links are to the bucket reports written beside it (`buckets/<id>.md`) and to anchors
in the page. Values a reader (or a test) may want to pick out carry `data-k` attributes.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from campaigns.report.gather import (
    REGRESSION_HEADER,
    CampaignData,
    bucket_rows,
    diff_header,
    feature_rows,
    pipeline_rows,
    regression_rows,
    summary_rows,
    when,
)
from campaigns.report.md import TOP_OPCODES, diff_rows, outcome_rows
from campaigns.report.plots import Plot

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
       color: #1d1d1f; background: #fafafa; }
header { background: #24292f; color: #fff; padding: 14px 28px; }
header h1 { margin: 0; font-size: 20px; font-weight: 600; }
header p { margin: 4px 0 0; color: #c9d1d9; font-size: 13px; }
main { padding: 8px 28px 40px; max-width: 1200px; }
section { background: #fff; border: 1px solid #e1e4e8; border-radius: 6px;
          padding: 4px 18px 14px; margin: 16px 0; }
h2 { font-size: 17px; border-bottom: 1px solid #eaecef; padding-bottom: 4px; }
h3 { font-size: 15px; margin-top: 22px; }
table { border-collapse: collapse; margin: 6px 0; font-size: 13px; }
th, td { border: 1px solid #e1e4e8; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font: 12px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; }
pre { background: #f6f8fa; border: 1px solid #e1e4e8; padding: 8px 10px; overflow: auto;
      max-height: 480px; }
.missing { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 6px;
           padding: 6px 12px; margin: 12px 0; }
.sig { word-break: break-all; }
.regression { color: #b42318; font-weight: 600; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(460px, 1fr));
        gap: 8px 20px; }
figure { margin: 6px 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-weight: 600; margin-bottom: 4px; }
nav a { margin-right: 12px; }
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: str = "",
           key: str | None = None) -> str:
    """A table; columns whose letter in `numeric` is `r` are right-aligned numbers."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for i, c in enumerate(row):
            cls = ' class="n"' if i < len(numeric) and numeric[i] == "r" else ""
            cells.append(f"<td{cls}>{_e(c)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    k = f' data-k="{_e(key)}"' if key else ""
    return f"<table{k}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _summary(data: CampaignData) -> str:
    rows = "".join(f'<tr><th>{_e(label)}</th><td data-k="{_e(k)}">{_e(v)}</td></tr>'
                   for k, label, v in summary_rows(data))
    return f'<table data-k="summary"><tbody>{rows}</tbody></table>'


def _figure(p: Plot) -> str:
    return (f'<figure id="plot-{_e(p.name)}"><figcaption>{_e(p.title)}</figcaption>'
            f"{p.svg}</figure>")


def _buckets(data: CampaignData) -> str:
    if not data.buckets:
        return "<p>No findings.</p>"
    shown = {v.bucket.id for v in data.top}
    rows = []
    for bid, count, kind, status, first, sig in bucket_rows(data):
        link = f'<a href="#bucket-{bid}">{bid}</a>' if bid in shown else _e(bid)
        rows.append(f'<tr><td><code>{link}</code></td>'
                    f'<td class="n" data-k="count" data-bucket="{bid}">{count}</td>'
                    f"<td>{_e(kind)}</td><td>{_e(status)}</td><td>{_e(first)}</td>"
                    f'<td class="sig"><code>{_e(sig)}</code></td></tr>')
    head = "".join(f"<th>{h}</th>" for h in ("id", "count", "kind", "status", "first seen",
                                              "signature"))
    out = [f'<table data-k="buckets"><thead><tr>{head}</tr></thead>'
           f"<tbody>{''.join(rows)}</tbody></table>"]
    for view in data.top:
        b = view.bucket
        flag = ' <span class="regression">regression</span>' if b.regression else ""
        out.append(f'<h3 id="bucket-{b.id}">Bucket <code>{b.id}</code> '
                   f"({b.count}×): {_e(b.kind)}{flag}</h3>")
        out.append(f'<p class="sig"><code>{_e(b.signature)}</code><br>'
                   f'Report: <a href="{_e(view.report_name)}">{_e(view.report_name)}</a>'
                   + (f" · best reproducer <code>{_e(view.case_id)}</code>"
                      if view.case_id else "")
                   + (f", {b.best_size[0]} tokens" if b.best_size else "")
                   + (f", reduced from <code>{_e(view.case.provenance.parent)}</code>"
                      if view.case is not None and view.case.provenance.parent else
                      ", not reduced") + "</p>")
        if view.kernel is not None:
            out.append(f'<pre data-k="kernel" data-bucket="{b.id}">{_e(view.kernel)}</pre>')
        if view.detail:
            out.append(f"<p>{_e(view.detail)}</p>")
        if view.diffs:
            exp, act = diff_header(view)
            out.append("<p>First differing elements:</p>" + _table(
                ("buffer", "index", exp, "bits", act, "bits"), diff_rows(view), "lrrlrl",
                key=f"diffs-{b.id}"))
        if view.outcomes:
            out.append(_table(("pipeline", "status", "detail", "seconds"),
                              outcome_rows(view.outcomes), "lllr"))
    return "\n".join(out)


def _opcodes(data: CampaignData) -> str:
    out = []
    for cov in data.opcodes:
        top = sorted(cov.executed.items(), key=lambda kv: -kv[1])[:TOP_OPCODES]
        out.append(f'<h3>{_e(cov.target)}</h3><p><span data-k="opcodes-{_e(cov.target)}">'
                   f"{cov.distinct}</span> distinct opcodes executed of "
                   f"{len(cov.table)} in the {_e(cov.target)} ISA tables.</p>")
        out.append('<div class="grid"><div>' + _table(
            ("class", "executed", "in the table"),
            [(k, str(a), str(t)) for k, (a, t) in cov.by_class().items()], "lrr")
            + f"</div><div><p>Most executed ({TOP_OPCODES}):</p>" + _table(
            ("opcode", "wave-instructions"), [(k, str(v)) for k, v in top], "lr")
            + "</div></div>")
    return "\n".join(out)


def render_html(data: CampaignData, plots: Sequence[Plot]) -> str:
    by_name = {p.name: p for p in plots}
    sections: list[tuple[str, str, str]] = [("summary", "Summary", _summary(data))]
    over_time = [by_name[n] for n in ("throughput", "cases-findings", "buckets")
                 if n in by_name]
    if over_time:
        sections.append(("time", "Over time", "".join(_figure(p) for p in over_time)))
    if data.pipelines:
        fig = _figure(by_name["pipelines"]) if "pipelines" in by_name else ""
        sections.append(("pipelines", "Pipelines", fig + _table(
            ("pipeline", "runs", "seconds", "share", "s per run", "statuses"),
            pipeline_rows(data), "lrrrrl", key="pipelines")))
    if data.features is not None:
        fig = _figure(by_name["features"]) if "features" in by_name else ""
        sections.append(("features", "Language feature coverage",
                         fig + f"<p>Of {data.feature_cases} cases.</p>" + _table(
                             ("feature", "what", "cases", "share"), feature_rows(data),
                             "llrr", key="features")))
    if data.opcodes:
        figs = "".join(_figure(by_name[f"opcodes-{c.target}"]) for c in data.opcodes
                       if f"opcodes-{c.target}" in by_name)
        sections.append(("opcodes", "Simulator opcode coverage", figs + _opcodes(data)))
    if data.regressions:
        sections.append(("regressions", f"Regressions ({len(data.regressions)})",
                         '<p class="regression">Buckets that were fixed and came back; each '
                         "is open again (status new).</p>" + _table(
                             REGRESSION_HEADER,
                             regression_rows(data), "lrllll", key="regressions")))
    sections.append(("buckets", "Buckets", _buckets(data)))
    missing = "".join(f'<div class="missing" data-k="missing">Missing: {_e(m)}</div>'
                      for m in data.missing)
    nav = "".join(f'<a href="#{k}">{_e(title)}</a>' for k, title, _ in sections)
    body = "\n".join(f'<section id="{k}"><h2>{_e(title)}</h2>\n{html}\n</section>'
                     for k, title, html in sections)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>rgpu-fuzz campaign report: {_e(data.out)}</title>"
            f"<style>{STYLE}</style></head>\n<body><header><h1>rgpu-fuzz campaign report"
            f"</h1><p><code>{_e(data.out)}</code> · written {when(data.generated)}</p>"
            f"</header>\n<main><nav>{nav}</nav>{missing}\n{body}\n</main></body></html>\n")


__all__ = ["render_html"]
