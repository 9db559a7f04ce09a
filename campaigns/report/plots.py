"""The campaign report's plots, drawn with matplotlib (Agg canvas, SVG output).

Each figure is returned as SVG text that can be inlined in HTML or saved as a file: text
stays text (`svg.fonttype = none`, no font is embedded or fetched), ids are salted per
figure so several figures can share one HTML page, and the RDF metadata block is dropped.
Every line carries an SVG id (`series-<name>`) and every bar one (`bar-<name>-<i>`), so
tests and readers can find the data.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from campaigns.report.gather import CampaignData, OpcodeCoverage

STATUS_COLOURS = {
    "ok": "#4c9a2a", "trap": "#7b68ee", "rejected": "#a0a0a0", "compile-crash": "#d62728",
    "run-crash": "#ff7f0e", "timeout": "#8c564b", "unsupported": "#bcbd22",
    "unavailable": "#c7c7c7", "pipeline-error": "#e377c2",
}
LINE = "#1f77b4"
ACCENT = "#d62728"


@dataclass(frozen=True, slots=True)
class Plot:
    name: str
    """File stem and anchor, e.g. `throughput`."""
    title: str
    svg: str


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "font.family": "sans-serif",
                         "font.size": 9, "axes.spines.top": False,
                         "axes.spines.right": False, "figure.dpi": 96})
    return plt


def _svg(fig: Any, salt: str) -> str:
    import matplotlib

    plt = _pyplot()
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": salt}):
        fig.savefig(buf, format="svg", bbox_inches="tight",
                    metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    return re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S)


def _line(ax: Any, points: Sequence[tuple[float, float]], gid: str, **kw: Any) -> None:
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    (line,) = ax.plot(xs, ys, marker="o", markersize=2.5, linewidth=1.4, **kw)
    line.set_gid(f"series-{gid}")


def _bar_ids(bars: Any, name: str) -> None:
    """Bar `i` of a series gets the SVG id `bar-<name>-<i>`."""
    for i, patch in enumerate(bars):
        patch.set_gid(f"bar-{name}-{i}")


def throughput(data: CampaignData) -> Plot | None:
    points = data.throughput()
    if not points:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.2, 2.4))
    _line(ax, points, "throughput", color=LINE, drawstyle="steps-mid")
    ax.set_xlabel("minutes since the campaign started")
    ax.set_ylabel("cases / s")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    return Plot("throughput", "Throughput over time", _svg(fig, "throughput"))


def cases_and_findings(data: CampaignData) -> Plot | None:
    cases = data.cumulative("cases")
    if not cases:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.2, 2.4))
    _line(ax, cases, "cases", color=LINE, label="cases")
    ax.set_xlabel("minutes since the campaign started")
    ax.set_ylabel("cases", color=LINE)
    ax.set_ylim(bottom=0)
    right = ax.twinx()
    right.spines["right"].set_visible(True)
    _line(right, data.cumulative("findings"), "findings", color=ACCENT, label="findings")
    right.set_ylabel("findings", color=ACCENT)
    right.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    return Plot("cases-findings", "Cases and findings over time",
                _svg(fig, "cases-findings"))


def new_buckets(data: CampaignData) -> Plot | None:
    points = data.new_buckets()
    if not points:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.2, 2.2))
    end = data.minutes(data.end) if data.end is not None else points[-1][0]
    _line(ax, [(0.0, 0), *points, (max(end, points[-1][0]), points[-1][1])], "buckets",
          color=ACCENT, drawstyle="steps-post")
    ax.set_xlabel("minutes since the campaign started")
    ax.set_ylabel("buckets known")
    ax.set_ylim(bottom=0)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.grid(alpha=0.3)
    return Plot("buckets", "New buckets over time", _svg(fig, "buckets"))


def pipelines(data: CampaignData) -> Plot | None:
    pipes = data.pipelines
    if not pipes:
        return None
    plt = _pyplot()
    labels = [p.label for p in pipes]
    fig, (share, mix) = plt.subplots(1, 2, figsize=(9.0, 0.5 + 0.42 * len(pipes)),
                                     sharey=True, gridspec_kw={"wspace": 0.08})
    total = sum(p.seconds for p in pipes) or 1.0
    ys = list(range(len(pipes)))
    bars = share.barh(ys, [100.0 * p.seconds / total for p in pipes], color=LINE)
    _bar_ids(bars, "time-share")
    for y, p in zip(ys, pipes, strict=True):
        share.text(100.0 * p.seconds / total + 1, y, f"{100.0 * p.seconds / total:.0f} %",
                   va="center", fontsize=8)
    share.set_yticks(ys, labels)
    share.invert_yaxis()
    share.set_xlim(0, 115)
    share.set_xlabel("share of pipeline time (%)")
    statuses = sorted({s for p in pipes for s in p.statuses},
                      key=lambda s: (list(STATUS_COLOURS).index(s)
                                     if s in STATUS_COLOURS else 99, s))
    left = [0.0] * len(pipes)
    for status in statuses:
        widths = [100.0 * p.statuses.get(status, 0) / (p.runs or 1) for p in pipes]
        b = mix.barh(ys, widths, left=left, label=status,
                     color=STATUS_COLOURS.get(status, "#17becf"))
        _bar_ids(b, f"status-{status}")
        left = [a + w for a, w in zip(left, widths, strict=True)]
    mix.set_xlim(0, 100)
    mix.set_xlabel("status mix (% of runs)")
    mix.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=min(len(statuses), 5),
               fontsize=8, frameon=False, borderaxespad=0.2)
    return Plot("pipelines", "Time share and status mix per pipeline", _svg(fig, "pipelines"))


def features(data: CampaignData) -> Plot | None:
    if data.features is None or not data.feature_cases:
        return None
    plt = _pyplot()
    names = list(data.features)
    fig, ax = plt.subplots(figsize=(7.2, 0.4 + 0.26 * len(names)))
    pct = [100.0 * data.features[n] / data.feature_cases for n in names]
    bars = ax.barh(range(len(names)), pct, color=LINE)
    _bar_ids(bars, "features")
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel(f"% of the {data.feature_cases} cases using the feature")
    return Plot("features", "Language feature coverage", _svg(fig, "features"))


def opcodes(cov: OpcodeCoverage) -> Plot:
    plt = _pyplot()
    classes = cov.by_class()
    names = list(classes)
    fig, (over, by) = plt.subplots(1, 2, figsize=(9.0, 2.8),
                                   gridspec_kw={"width_ratios": [1, 1.3], "wspace": 0.35})
    _line(over, cov.over_time, f"opcodes-{cov.target}", color=LINE)
    over.set_xlabel("minutes since the campaign started")
    over.set_ylabel("distinct opcodes executed")
    over.set_ylim(bottom=0)
    over.grid(alpha=0.3)
    xs = range(len(names))
    table = by.bar(xs, [classes[n][1] for n in names], color="#dddddd", label="in the ISA table")
    _bar_ids(table, f"table-{cov.target}")
    done = by.bar(xs, [classes[n][0] for n in names], color=LINE, label="executed")
    _bar_ids(done, f"executed-{cov.target}")
    by.set_xticks(list(xs), names, rotation=60, fontsize=7)
    by.set_yscale("symlog", linthresh=10)
    by.set_ylabel("opcodes")
    by.legend(fontsize=8, frameon=False)
    return Plot(f"opcodes-{cov.target}",
                f"Simulator opcode coverage, {cov.target}: {cov.distinct} of {len(cov.table)}",
                _svg(fig, f"opcodes-{cov.target}"))


def all_plots(data: CampaignData) -> list[Plot]:
    """Every plot the data supports, in report order."""
    got = [throughput(data), cases_and_findings(data), new_buckets(data), pipelines(data),
           features(data), *(opcodes(c) for c in data.opcodes)]
    return [p for p in got if p is not None]


__all__ = ["Plot", "all_plots"]
