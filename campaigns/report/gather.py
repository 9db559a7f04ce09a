"""What a campaign report shows, gathered from a campaign directory (`rgpu-fuzz report
campaign DIR`): the findings store (buckets, their best reproducers and first differing
elements), the checkpoint (settings, totals) and the per-chunk statistics
(`campaign_stats`: cases, pipeline time, statuses, features, simulator opcodes over time).

Everything here is a frozen value computed once; the HTML and Markdown writers
(`campaign_report_html`, `campaign_report_md`) only format it, so both say the same numbers.
A directory without `stats.jsonl` (a campaign run before it was written) still gets a report
from the store and checkpoint alone, and `missing` says which sections are absent and why.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaigns.stats import (
    STATS_FILE,
    ChunkStats,
    PipelineStats,
    StatsLog,
    read_chunk_stats,
)
from oracles import ElementDiff
from rgpu_fuzz.lang.features import FEATURES
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.errors import RgpuError
from triage.store import Bucket, Event, FindingStore, StoreError

STORE_FILE = "findings.sqlite"
DEFAULT_TOP = 10
THROUGHPUT_BINS = 30


class CampaignReportError(RgpuError):
    """A directory that holds no campaign; `str()` is one line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BucketView:
    """One bucket as the report shows it."""

    bucket: Bucket
    case_id: str | None
    """The best reproducer (or, without one, the first kept example)."""
    case: Case | None
    """That case as stored (None when the store lost it)."""
    detail: str
    diffs: tuple[ElementDiff, ...]
    outcomes: Mapping[str, Mapping[str, Any]]
    """The stored outcome summaries of that case, by pipeline."""

    @property
    def kernel(self) -> str | None:
        return self.case.kernel if self.case is not None else None

    @property
    def report_name(self) -> str:
        """The bucket's Markdown report, relative to the report file."""
        return f"buckets/{self.bucket.id}.md"


@dataclass(frozen=True, slots=True, kw_only=True)
class Regression:
    """A bucket that was fixed and came back (`triage recheck`, a campaign or a merge
    reopened it): what the morning's reader must see first."""

    bucket: Bucket
    reopened_at: float | None
    reopened_run: str | None
    detail: str
    """What reopened it (the history entry: "found again: case ...", the recheck's line)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OpcodeCoverage:
    """Distinct simulator opcodes executed on one target against its decoding table."""

    target: str
    executed: Mapping[str, int]
    """Opcode -> wave-instructions executed."""
    table: frozenset[str]
    """Every opcode name of the target's ISA tables (`sim.isa.tables`)."""
    over_time: tuple[tuple[float, int], ...]
    """(minutes since the start, distinct opcodes executed so far) after each chunk."""

    @property
    def distinct(self) -> int:
        return len(self.executed)

    def by_class(self) -> dict[str, tuple[int, int]]:
        """Per name prefix (S, V, DS, GLOBAL, ...): (executed, in the table)."""
        table = Counter(_op_class(n) for n in self.table)
        done = Counter(_op_class(n) for n in self.executed)
        return {k: (done.get(k, 0), table.get(k, 0)) for k in sorted(set(table) | set(done))}


@dataclass(frozen=True, slots=True, kw_only=True)
class CampaignData:
    """Everything the report shows."""

    out: Path
    store: Path
    generated: float
    identity: Mapping[str, Any] | None
    checkpoint_totals: Mapping[str, Any] | None
    chunks: tuple[ChunkStats, ...]
    stats_present: bool
    stats_bad_lines: int
    buckets: tuple[Bucket, ...]
    """All buckets, most counted first."""
    top: tuple[BucketView, ...]
    start: float | None
    """Wall time the first session started (or the first bucket, without statistics)."""
    end: float | None
    pipelines: tuple[PipelineStats, ...]
    features: Mapping[str, int] | None
    """Cases using each feature of `lang.features.FEATURES` (0 included)."""
    feature_cases: int
    """Cases of the chunks that reported features (the denominator)."""
    opcodes: tuple[OpcodeCoverage, ...]
    missing: tuple[str, ...]
    regressions: tuple[Regression, ...] = ()
    """Buckets reopened after a fix (`Bucket.regression`), most counted first."""

    # ------------------------------------------------------------ totals

    @property
    def cases(self) -> int:
        """Cases run: the statistics' sum, else the checkpoint's total."""
        if self.chunks:
            return sum(c.cases for c in self.chunks)
        return int((self.checkpoint_totals or {}).get("cases", 0))

    @property
    def findings(self) -> int:
        """Findings as the chunks reported them (several per case are possible)."""
        if self.chunks:
            return sum(c.findings for c in self.chunks)
        return int((self.checkpoint_totals or {}).get("findings", 0))

    @property
    def recorded(self) -> int:
        """Findings counted in the store's buckets."""
        return sum(b.count for b in self.buckets)

    @property
    def cases_with_findings(self) -> int:
        return sum(c.cases_with_findings for c in self.chunks)

    @property
    def harness_errors(self) -> int:
        return sum(c.harness_errors for c in self.chunks)

    @property
    def invalid(self) -> dict[str, int]:
        got: Counter[str] = Counter()
        for c in self.chunks:
            got.update(c.invalid)
        return dict(got)

    @property
    def wall_seconds(self) -> float:
        return (self.end - self.start) if self.start is not None and self.end is not None else 0.0

    def active(self) -> list[tuple[float, float]]:
        """Wall-time intervals in which some session ran (from its start to its last
        chunk), overlapping ones joined: shards side by side count once, and the time
        between a campaign and its resumption is not counted."""
        last: dict[float, float] = {}
        for c in self.chunks:
            last[c.session_start] = max(last.get(c.session_start, c.time), c.time)
        joined: list[tuple[float, float]] = []
        for s, t in sorted(last.items()):
            if joined and s <= joined[-1][1]:
                joined[-1] = (joined[-1][0], max(joined[-1][1], t))
            else:
                joined.append((s, t))
        return joined

    @property
    def run_seconds(self) -> float:
        return sum(t - s for s, t in self.active())

    def bucket_status_counts(self) -> dict[str, int]:
        return dict(Counter(str(b.status) for b in self.buckets))

    # ------------------------------------------------------------ series

    def minutes(self, t: float) -> float:
        return (t - (self.start or t)) / 60.0

    def cumulative(self, field: str) -> tuple[tuple[float, int], ...]:
        """(minutes, running total of `field` of the chunks) from 0 at the first session's
        start, after each chunk; a later session (a resumption) starts with a point at its
        own start, so the total stays flat while nothing ran."""
        total = 0
        points: list[tuple[float, int]] = []
        session = None
        for c in self.chunks:
            if c.session_start != session:
                session = c.session_start
                if not points or self.minutes(session) > points[-1][0]:
                    points.append((self.minutes(session), total))
            total += int(getattr(c, field))
            points.append((self.minutes(c.time), total))
        return tuple(points)

    def new_buckets(self) -> tuple[tuple[float, int], ...]:
        """(minutes, buckets known) at each bucket's first sighting (the store's clock);
        buckets known before the campaign started count from minute 0."""
        firsts = sorted(b.first_seen for b in self.buckets)
        return tuple((max(0.0, self.minutes(t)), i + 1) for i, t in enumerate(firsts))

    def throughput(self, bins: int = THROUGHPUT_BINS) -> tuple[tuple[float, float], ...]:
        """(bin centre in minutes, cases per second of running time finished in that bin)
        from the first session's start to the last chunk; NaN where no session ran."""
        if not self.chunks or self.start is None or self.end is None or self.end <= self.start:
            return ()
        n = max(1, min(bins, len(self.chunks)))
        width = (self.end - self.start) / n
        counts = [0] * n
        for c in self.chunks:
            counts[min(n - 1, int((c.time - self.start) / width))] += c.cases
        active = self.active()
        points = []
        for i in range(n):
            a = self.start + i * width
            ran = sum(max(0.0, min(a + width, t) - max(a, s)) for s, t in active)
            points.append((self.minutes(a + width / 2),
                           counts[i] / ran if ran > 0 else float("nan")))
        return tuple(points)


def _op_class(name: str) -> str:
    head = name.split("_", 1)[0]
    return head or name


def _sim_target(spec: str) -> str:
    """The simulated target of a pipeline spec (`amdgpu-sim:gfx90a:O3` -> gfx90a); the
    pipeline's default when the spec names none."""
    from rgpu_fuzz.pipelines.amdgpu_sim import TARGETS, AmdgpuSimPipeline

    for token in spec.split(":")[1:]:
        if token in TARGETS:
            return token
    return AmdgpuSimPipeline.TARGET.default


def _table_names(target: str) -> frozenset[str]:
    from rgpu_fuzz.sim import UnknownTarget, tables

    try:
        t = tables(target)
    except UnknownTarget:
        return frozenset()
    return frozenset(info.name for ops in t.ops.values() for info in ops.values())


def _opcode_coverage(chunks: tuple[ChunkStats, ...], start: float) -> tuple[OpcodeCoverage, ...]:
    executed: dict[str, Counter[str]] = {}
    over_time: dict[str, list[tuple[float, int]]] = {}
    for c in chunks:
        for spec, ops in (c.opcodes or {}).items():
            target = _sim_target(spec)
            executed.setdefault(target, Counter()).update(ops)
        for target, ops in executed.items():
            over_time.setdefault(target, []).append(((c.time - start) / 60.0, len(ops)))
    return tuple(OpcodeCoverage(target=t, executed=dict(executed[t]), table=_table_names(t),
                                over_time=tuple(over_time[t])) for t in sorted(executed))


def _bucket_view(store: FindingStore, b: Bucket) -> BucketView:
    examples = store.examples(b.signature)
    case_id = b.best_case_id or (examples[0].case_id if examples else None)
    ex = next((e for e in examples if e.case_id == case_id), None)
    # the reduced best reproducer may carry no diffs (set_best without a finding): show the
    # first example's
    shown = ex if ex is not None and (ex.diffs or ex.detail) else next(
        (e for e in examples if e.diffs or e.detail), ex)
    case = None
    if case_id is not None:
        try:
            case = store.case(case_id)
        except (LookupError, RgpuError):
            case = None
    return BucketView(bucket=b, case_id=case_id, case=case,
                      detail=shown.detail if shown else "",
                      diffs=shown.diffs if shown else (),
                      outcomes=store.outcomes(case_id) if case_id else {})


def _checkpoint(out: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads((out / "checkpoint.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _is_campaign(d: Path) -> bool:
    return (d / "checkpoint.json").is_file() or (d / STATS_FILE).is_file()


def campaign_dirs(out: Path) -> list[Path]:
    """`out` when it holds a campaign, else its sub-directories that do: the shards of one
    run side by side (`ci/nightly.sh` writes `OUT/shard-I-of-N/`)."""
    if _is_campaign(out):
        return [out]
    return sorted(d for d in out.iterdir() if d.is_dir() and _is_campaign(d))


def _identity(checkpoints: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The settings of the campaign (its shards share all but `shard`)."""
    idents = [cp["identity"] for cp in checkpoints if isinstance(cp.get("identity"), dict)]
    if not idents:
        return None
    shards = [f"{i[0]}/{i[1]}" for i in (d.get("shard") for d in idents)
              if isinstance(i, list) and len(i) == 2]
    return {**idents[0], "shards": shards}


def _totals(checkpoints: list[dict[str, Any]]) -> dict[str, int] | None:
    got: Counter[str] = Counter()
    for cp in checkpoints:
        totals = cp.get("totals")
        if isinstance(totals, dict):
            got.update({k: int(v) for k, v in totals.items() if isinstance(v, int | float)})
    return dict(got) if checkpoints else None


def collect(out: Path, *, store: Path | None = None, top: int = DEFAULT_TOP) -> CampaignData:
    """Read campaign directory `out` (read-only) into what the report shows: its store
    (`store`, default `out/findings.sqlite`: a merged store for shards), checkpoints and
    statistics (of `out`, or of each shard directory in it)."""
    if not out.is_dir():
        raise CampaignReportError(f"{out}: no such campaign directory")
    store_path = store if store is not None else out / STORE_FILE
    if not store_path.is_file():
        raise CampaignReportError(
            f"{store_path}: no such findings store" if store is not None else
            f"{out}: no {STORE_FILE} here (not a campaign directory; for shards, pass the "
            "merged store with --store)")
    try:
        db = FindingStore(store_path, readonly=True)
    except StoreError as e:
        raise CampaignReportError(str(e)) from None
    try:
        buckets = tuple(db.buckets(order_by="count"))
        views = tuple(_bucket_view(db, b) for b in buckets[:top])
        regressions = tuple(_regression(db, b) for b in buckets if b.regression)
    finally:
        db.close()
    dirs = campaign_dirs(out)
    logs: list[StatsLog] = [read_chunk_stats(d) for d in dirs]
    chunks = tuple(sorted((c for log in logs for c in log.chunks),
                          key=lambda c: (c.time, c.chunk)))
    checkpoints = [cp for cp in (_checkpoint(d) for d in dirs) if cp is not None]
    missing: list[str] = []
    bad_lines = sum(log.bad_lines for log in logs)
    present = any(log.present for log in logs)
    if not present:
        missing.append(f"no {STATS_FILE} (a campaign run before per-chunk statistics were "
                       "written): throughput, pipeline time and statuses, feature and opcode "
                       "coverage are not available; totals come from the checkpoint")
    elif not chunks:
        missing.append(f"{STATS_FILE} holds no chunk yet")
    if bad_lines:
        missing.append(f"{bad_lines} unreadable line(s) in {STATS_FILE} were skipped")
    if not checkpoints:
        missing.append("no readable checkpoint.json: the campaign's settings are unknown")
    # with statistics, the campaign's own sessions set the time axis (a store merged with
    # earlier nights' holds buckets first seen long before)
    starts = [c.session_start for c in chunks] or [b.first_seen for b in buckets]
    ends = [c.time for c in chunks] or [b.last_seen for b in buckets]
    start = min(starts) if starts else None
    end = max(ends) if ends else None

    totals: dict[str, PipelineStats] = {}
    for c in chunks:
        for label, p in c.pipelines.items():
            totals[label] = totals[label].plus(p) if label in totals else p
    featured = [c for c in chunks if c.features is not None]
    features: dict[str, int] | None = None
    if featured:
        features = dict.fromkeys(FEATURES, 0)
        for c in featured:
            for k, v in (c.features or {}).items():
                features[k] = features.get(k, 0) + v
    elif chunks:
        missing.append("no feature counts in the statistics (written by an older worker)")
    opcodes = _opcode_coverage(chunks, start or 0.0)
    if chunks and not opcodes:
        missing.append("no simulator opcodes recorded (no amdgpu-sim pipeline ran, or "
                       "RGPU_SIM_STATS was set by the user)")
    return CampaignData(
        out=out, store=store_path, generated=time.time(), identity=_identity(checkpoints),
        checkpoint_totals=_totals(checkpoints), chunks=chunks, stats_present=present,
        stats_bad_lines=bad_lines, buckets=buckets, top=views, start=start, end=end,
        pipelines=tuple(totals.values()), features=features,
        feature_cases=sum(c.cases for c in featured), opcodes=opcodes, missing=tuple(missing),
        regressions=regressions)


def _regression(db: FindingStore, bucket: Bucket) -> Regression:
    last = next((h for h in reversed(db.history(bucket.signature))
                 if h.event is Event.REGRESSED), None)
    return Regression(bucket=bucket, reopened_at=last.at if last else None,
                      reopened_run=(last.run or None) if last else None,
                      detail=last.detail if last else "")


# ---------------------------------------------------------------- rows both writers show


def when(t: float | None) -> str:
    """A wall time as the report prints it (UTC)."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t)) if t is not None else "–"


def _duration(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 3600}h {s // 60 % 60:02d}m {s % 60:02d}s" if s >= 3600 else \
        f"{s // 60}m {s % 60:02d}s"


def summary_rows(data: CampaignData) -> list[tuple[str, str, str]]:
    """(key, label, value) of the summary table; `key` marks the value for readers."""
    ident = data.identity or {}
    run = data.run_seconds
    rows = [
        ("pipelines", "pipelines", ", ".join(ident.get("pipelines", [])) or
         ", ".join(p.label for p in data.pipelines) or "–"),
        ("profile", "generator profile / oracle policy",
         f"{ident.get('profile', '–')} / {ident.get('policy', '–')}"),
        ("seeds", "seeds", f"from {ident.get('seed_start', '–')}, {ident.get('chunk', '–')} per "
         f"chunk, shard {', '.join(ident.get('shards', [])) or '–'}"),
        ("store", "findings store", str(data.store)),
        ("started", "first session started", when(data.start)),
        ("ended", "last result", when(data.end)),
        ("run-time", "time running (sessions and shards overlapping count once)",
         _duration(run) if data.chunks else "–"),
        ("sessions", "sessions (shards and resumptions)",
         str(len({c.session_start for c in data.chunks}))
         if data.chunks else "–"),
        ("cases", "cases run", str(data.cases)),
        ("cases-per-s", "cases per second", f"{data.cases / run:.2f}" if run > 0 else "–"),
        ("chunks", "chunks with statistics", str(len(data.chunks))),
        ("findings", "findings (as judged in the chunks)", str(data.findings)),
        ("cases-with-findings", "cases with findings",
         str(data.cases_with_findings) if data.chunks else "–"),
        ("recorded", "findings counted in buckets (store)", str(data.recorded)),
        ("buckets", "buckets", str(len(data.buckets))),
        ("regressions", "regressions (fixed buckets that came back)", str(len(data.regressions))),
        ("bucket-statuses", "buckets by status", ", ".join(
            f"{k} {v}" for k, v in sorted(data.bucket_status_counts().items())) or "–"),
        ("harness-errors", "harness errors (bugs in rgpu-fuzz)",
         str(data.harness_errors) if data.chunks else "–"),
        ("invalid", "cases rejected by the arbiter", ", ".join(
            f"{k} {v}" for k, v in sorted(data.invalid.items())) or "0"),
    ]
    return rows


def pipeline_rows(data: CampaignData) -> list[tuple[str, str, str, str, str, str]]:
    """(pipeline, runs, seconds, share, mean seconds per run, statuses)."""
    total = sum(p.seconds for p in data.pipelines) or 1.0
    return [(p.label, str(p.runs), f"{p.seconds:.1f}", f"{100.0 * p.seconds / total:.1f} %",
             f"{p.seconds / p.runs:.4f}" if p.runs else "–",
             ", ".join(f"{k} {v}" for k, v in sorted(p.statuses.items(),
                                                    key=lambda kv: -kv[1])))
            for p in data.pipelines]


def feature_rows(data: CampaignData) -> list[tuple[str, str, str, str]]:
    """(feature, what it is, cases, % of cases)."""
    if data.features is None:
        return []
    n = data.feature_cases or 1
    return [(k, FEATURES.get(k, ""), str(v), f"{100.0 * v / n:.1f} %")
            for k, v in data.features.items()]


def bucket_rows(data: CampaignData) -> list[tuple[str, str, str, str, str, str]]:
    """(id, count, kind, status, first seen, signature) of every bucket, most counted first."""
    return [(b.id, str(b.count), b.kind, f"{b.status} (regression)" if b.regression
             else str(b.status), when(b.first_seen), str(b.signature)) for b in data.buckets]


REGRESSION_HEADER = ("bucket", "count", "fixed at", "reopened at", "reopened by run",
                     "what reopened it")


def regression_rows(data: CampaignData) -> list[tuple[str, str, str, str, str, str]]:
    """(id, count, fixed at, reopened at, reopened by run, what reopened it)."""
    return [(r.bucket.id, str(r.bucket.count), when(r.bucket.fixed_at), when(r.reopened_at),
             r.reopened_run or "–", r.detail or "–") for r in data.regressions]


def diff_header(view: BucketView) -> tuple[str, str]:
    """The two sides of a bucket's differing elements: expected and actual pipeline."""
    pipes = view.bucket.pipelines
    return (pipes[0], pipes[-1]) if pipes else ("expected", "actual")


def hex_bits(view: BucketView, buffer: str, bits: int) -> str:
    """A differing element's bit pattern, as wide as the buffer's element type."""
    from rgpu_fuzz.model.case import BufferArg
    from triage.report import _hex_width

    width = next((_hex_width(a.elem) for a in (view.case.args if view.case else ())
                  if isinstance(a, BufferArg) and a.name == buffer), 8)
    return f"0x{bits:0{width}x}"


__all__ = [
    "DEFAULT_TOP",
    "REGRESSION_HEADER",
    "BucketView",
    "CampaignData",
    "CampaignReportError",
    "OpcodeCoverage",
    "PipelineStats",
    "Regression",
    "bucket_rows",
    "campaign_dirs",
    "collect",
    "diff_header",
    "feature_rows",
    "hex_bits",
    "pipeline_rows",
    "regression_rows",
    "summary_rows",
    "when",
]
