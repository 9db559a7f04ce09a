"""Per-chunk campaign statistics (`OUT/stats.jsonl`): what the findings store does not keep.

The store holds findings; it does not say how many cases ran when, how long each pipeline
took, which language features the generated kernels used or which simulator opcodes they
executed. The campaign driver appends one JSON line per finished chunk here (one call from
`Campaign._chunk_done`), and `rgpu-fuzz report campaign` plots them over time.

Rules the file keeps:
* one line per chunk, written after its checkpoint; a chunk that runs again after a kill
  writes a second line with the same `chunk` index, and readers keep the last one, so
  nothing is counted twice;
* a line that does not parse (a torn write at a kill) is skipped and counted, never fatal;
* `v` is the record version; readers skip versions they do not know.

Simulator opcodes come from `RGPU_SIM_STATS` (see `pipelines/amdgpu_sim.py`): the chunk's
worker process points it at a file of its own (`SimOpcodeCapture`), so its simulator workers
append one line per launch there, and the lines written while the chunk ran are the chunk's.
`RGPU_SIM_STATS_OWNER` (the capturing process's pid) tells that setting from a user's: a
process started by a capturing one inherits both, and must capture into a file of its own,
not take the inherited path for the user's and record nothing.
"""

from __future__ import annotations

import atexit
import json
import os
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rgpu_fuzz.pipelines.amdgpu_sim import STATS_ENV

STATS_FILE = "stats.jsonl"
STATS_OWNER_ENV = "RGPU_SIM_STATS_OWNER"
RECORD_VERSION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineStats:
    """One pipeline's share of some cases: of one chunk (`ChunkStats.pipelines`), or of a
    whole campaign (the report's sum over its chunks, `plus`)."""

    label: str
    seconds: float
    """Sum of the pipeline's `total` seconds over the cases."""
    runs: int
    statuses: Mapping[str, int]

    def plus(self, other: PipelineStats) -> PipelineStats:
        """Both shares together (same label)."""
        statuses = Counter(self.statuses)
        statuses.update(other.statuses)
        return PipelineStats(label=self.label, seconds=self.seconds + other.seconds,
                             runs=self.runs + other.runs, statuses=dict(statuses))


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkStats:
    """One finished chunk of a campaign."""

    chunk: int
    time: float
    """Wall-clock time (Unix seconds) when the driver took the chunk's result."""
    session_start: float
    """Wall-clock time when the campaign process that ran the chunk started (a resumed
    campaign has several sessions)."""
    cases: int
    gen_seconds: float
    pipelines: Mapping[str, PipelineStats]
    findings: int
    cases_with_findings: int
    invalid: Mapping[str, int] = field(default_factory=dict)
    harness_errors: int = 0
    features: Mapping[str, int] | None = None
    """How many of the chunk's cases use each language feature; None when the worker did
    not report them."""
    opcodes: Mapping[str, Mapping[str, int]] | None = None
    """Simulator opcodes executed, by pipeline spec: opcode -> wave-instructions; None when
    not recorded."""

    def to_json(self) -> dict[str, Any]:
        return {"v": RECORD_VERSION, "chunk": self.chunk, "time": round(self.time, 3),
                "session_start": round(self.session_start, 3), "cases": self.cases,
                "gen_seconds": round(self.gen_seconds, 6),
                "pipelines": {label: {"seconds": round(p.seconds, 6), "runs": p.runs,
                                      "statuses": dict(p.statuses)}
                              for label, p in self.pipelines.items()},
                "findings": self.findings, "cases_with_findings": self.cases_with_findings,
                "invalid": dict(self.invalid), "harness_errors": self.harness_errors,
                "features": None if self.features is None else dict(self.features),
                "opcodes": None if self.opcodes is None else
                {spec: dict(ops) for spec, ops in self.opcodes.items()}}

    @staticmethod
    def from_json(doc: Mapping[str, Any]) -> ChunkStats:
        """The record of one line; KeyError/TypeError/ValueError when it is not one."""
        pipes = {str(label): PipelineStats(
                    label=str(label), seconds=float(p["seconds"]), runs=int(p["runs"]),
                    statuses={str(k): int(v) for k, v in p["statuses"].items()})
                 for label, p in doc["pipelines"].items()}
        feats = doc.get("features")
        ops = doc.get("opcodes")
        return ChunkStats(
            chunk=int(doc["chunk"]), time=float(doc["time"]),
            session_start=float(doc["session_start"]), cases=int(doc["cases"]),
            gen_seconds=float(doc["gen_seconds"]), pipelines=pipes,
            findings=int(doc["findings"]), cases_with_findings=int(doc["cases_with_findings"]),
            invalid={str(k): int(v) for k, v in doc.get("invalid", {}).items()},
            harness_errors=int(doc.get("harness_errors", 0)),
            features=None if feats is None else {str(k): int(v) for k, v in feats.items()},
            opcodes=None if ops is None else
            {str(s): {str(k): int(v) for k, v in o.items()} for s, o in ops.items()})


def chunk_stats(result: Any, session_start: float, now: float | None = None) -> ChunkStats:
    """The record of a `campaign_jobs.ChunkResult` (typed `Any`: the result type lives in
    the module that imports this one's users, and older results lack the new fields)."""
    pipes = {label: PipelineStats(label=label, seconds=sum(secs), runs=len(secs),
                                  statuses=dict(result.statuses.get(label, {})))
             for label, secs in result.seconds.items()}
    features = getattr(result, "features", None)
    opcodes = getattr(result, "opcodes", None)
    return ChunkStats(
        chunk=result.index, time=time.time() if now is None else now,
        session_start=session_start, cases=result.cases, gen_seconds=result.gen_seconds,
        pipelines=pipes, findings=sum(len(f.verdict.findings) for f in result.found),
        cases_with_findings=len(result.found), invalid=dict(result.invalid),
        harness_errors=len(result.harness_errors),
        features=None if features is None else dict(features),
        opcodes=None if opcodes is None else {s: dict(o) for s, o in opcodes.items()})


def append_chunk_stats(out: Path, result: Any, started_monotonic: float) -> None:
    """Append the record of a finished chunk to `out/stats.jsonl`; `started_monotonic` is
    the campaign's `time.monotonic()` at start. Statistics are a by-product: a disk error
    here must not stop a campaign, so it is logged to `out/campaign.log` instead."""
    session_start = time.time() - (time.monotonic() - started_monotonic)
    line = json.dumps(chunk_stats(result, session_start).to_json(), separators=(",", ":"))
    try:
        with open(out / STATS_FILE, "a", encoding="utf-8") as f:
            f.write(line + "\n")
    except OSError as e:
        try:
            with open(out / "campaign.log", "a", encoding="utf-8") as log:
                log.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {STATS_FILE}: {e}\n")
        except OSError:
            pass


@dataclass(frozen=True, slots=True, kw_only=True)
class StatsLog:
    """What `read_chunk_stats` found: the chunks (last record per chunk index, in time
    order) and how many lines were unusable."""

    chunks: tuple[ChunkStats, ...]
    bad_lines: int
    present: bool


def read_chunk_stats(out: Path) -> StatsLog:
    path = out / STATS_FILE
    if not path.is_file():
        return StatsLog(chunks=(), bad_lines=0, present=False)
    by_chunk: dict[int, ChunkStats] = {}
    bad = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
                if doc.get("v") != RECORD_VERSION:
                    bad += 1
                    continue
                rec = ChunkStats.from_json(doc)
            except (ValueError, KeyError, TypeError, AttributeError):
                bad += 1
                continue
            by_chunk[rec.chunk] = rec
    chunks = tuple(sorted(by_chunk.values(), key=lambda c: (c.time, c.chunk)))
    return StatsLog(chunks=chunks, bad_lines=bad, present=True)


def _unlink_at_exit(path: Path) -> None:
    """Remove `path` when this process ends normally: `atexit` in a plain process, and a
    multiprocessing finalizer in a pool worker (which leaves through `os._exit`)."""
    from multiprocessing import util

    atexit.register(path.unlink, missing_ok=True)
    util.Finalize(None, path.unlink, kwargs={"missing_ok": True}, exitpriority=0)


class SimOpcodeCapture:
    """Collects the simulator opcodes executed between `start()` and `collect()` in this
    process's simulator workers.

    The first capture in a process points `RGPU_SIM_STATS` at a file of this process (and
    `RGPU_SIM_STATS_OWNER` at its pid) and closes the workers of the default pool that were
    started without it (workers copy the environment when they start). A user's own
    `RGPU_SIM_STATS` (set without an owner) is left alone: then nothing is captured
    (`collect()` returns None), since several processes append to that file. A setting
    inherited from another capturing process (a campaign's job process started by a
    process that ran a chunk itself) is that process's file, not the user's: replaced."""

    _path: Path | None = None

    def __init__(self) -> None:
        self.path = self._own_file()
        if self.path is not None:
            self.path.write_bytes(b"")

    @classmethod
    def _own_file(cls) -> Path | None:
        pid = str(os.getpid())
        owner = os.environ.get(STATS_OWNER_ENV)
        if (cls._path is not None and os.environ.get(STATS_ENV) == str(cls._path)
                and owner == pid):
            return cls._path
        if os.environ.get(STATS_ENV) and owner is None:
            return None
        from rgpu_fuzz.pipelines.workers import default_pool

        fd, name = tempfile.mkstemp(prefix="rgpu-sim-stats-", suffix=".jsonl")
        os.close(fd)
        cls._path = Path(name)
        _unlink_at_exit(cls._path)
        os.environ[STATS_ENV] = name
        os.environ[STATS_OWNER_ENV] = pid
        default_pool().close()
        return cls._path

    @classmethod
    def start(cls) -> SimOpcodeCapture:
        return cls()

    def collect(self) -> dict[str, Counter[str]] | None:
        """Opcode -> wave-instructions executed, per pipeline spec, since `start()`."""
        if self.path is None:
            return None
        got: dict[str, Counter[str]] = {}
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        for line in text.splitlines():
            try:
                doc = json.loads(line)
                ops = got.setdefault(str(doc["spec"]), Counter())
                ops.update({str(k): int(v) for k, v in doc["opcodes"].items()})
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
        return got


__all__ = ["STATS_FILE", "STATS_OWNER_ENV", "ChunkStats", "PipelineStats", "SimOpcodeCapture",
           "StatsLog", "append_chunk_stats", "chunk_stats", "read_chunk_stats"]
