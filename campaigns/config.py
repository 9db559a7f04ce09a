"""A campaign's settings and running state as values: its configuration, the totals it
keeps, the progress line's figures, the summary, and the checkpoint of finished chunks
(`orchestrate.Campaign` runs the campaign; this module only describes it)."""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from campaigns.jobs import Setup
from rgpu_fuzz.model.errors import RgpuError


class CampaignError(RgpuError):
    """A campaign that cannot start as asked (e.g. resuming with other settings)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CampaignConfig:
    out: Path
    setup: Setup
    seed_start: int = 0
    chunk: int = 8
    shard: tuple[int, int] = (0, 1)
    time_s: float | None = 60.0
    max_cases: int | None = None
    jobs: int = 1
    reduce: bool = True
    reduce_budget_s: float = 60.0
    reduce_slice_s: float = 15.0
    """A reduction runs as jobs of at most this many seconds, each resuming from the smallest
    case of the one before, so chunks queued meanwhile run in between: with one worker, one
    60-s reduction job used to stop the campaign's cases for 60 s."""
    bug_keys: bool = True
    """Bucket wrong code by bug key (`triage/bugkey.py`), reduced or not; False: by `ops=`
    only (then unreduced findings keep their own signature)."""
    probes_from: Path | None = None
    """Another store (a nightly's history) whose probe answers for this run's toolchain are
    known from the start and copied into this campaign's store: a shard starting with an
    empty store does not probe again what earlier nights did (ci/nightly.sh)."""

    @property
    def keys_findings(self) -> bool:
        """Whether jobs compute bug keys (without `reduce` too: docs/triage.md)."""
        return self.bug_keys

    def identity(self) -> dict[str, Any]:
        """What a resumed campaign must share with the one it continues."""
        return {"pipelines": list(self.setup.pipelines), "profile": self.setup.profile,
                "policy": self.setup.policy, "seed_start": self.seed_start,
                "chunk": self.chunk, "shard": list(self.shard)}


@dataclass(slots=True)
class Tally:
    """Running totals shown live and in the summary."""

    cases: int = 0
    gen_seconds: float = 0.0
    seconds: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    invalid: Counter[str] = field(default_factory=Counter)
    findings: int = 0
    cases_with_findings: int = 0
    new_buckets: list[str] = field(default_factory=list)
    reductions: list[dict[str, Any]] = field(default_factory=list)
    chunks: int = 0
    harness_errors: int = 0
    abandoned_jobs: int = 0
    lost_jobs: int = 0
    """Jobs whose worker died before they finished (each queued again)."""
    executor_start_s: float = 0.0
    """Seconds the executor took to start (a Ray instance and its actors: seconds)."""
    probes: int = 0
    """Bug-key probe kernels run by this run's jobs (answers known before are not run)."""
    probe_seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Progress:
    """What the live progress line shows (cases so far in this run, findings, buckets)."""

    elapsed_s: float
    cases: int
    cases_per_s: float
    findings: int
    buckets: int
    reductions_running: int
    left_s: float | None
    """Seconds until the time budget (or, with `--cases` only, the case budget at the current
    rate) is spent; None when unknown."""


@dataclass(frozen=True, slots=True)
class Summary:
    data: dict[str, Any]


def parse_duration(text: str) -> float:
    """`90`, `90s`, `10m`, `2h` → seconds."""
    text = text.strip().lower()
    scale = {"s": 1, "m": 60, "h": 3600}.get(text[-1:], None)
    number = text[:-1] if scale else text
    try:
        value = float(number) * (scale or 1)
    except ValueError:
        raise CampaignError(f"bad duration \"{text}\" (e.g. 90s, 10m, 2h)") from None
    if value <= 0:
        raise CampaignError(f"duration must be positive, got \"{text}\"")
    return value


class Checkpoint:
    """The set of finished chunks, persisted atomically after each one."""

    def __init__(self, path: Path, identity: dict[str, Any]) -> None:
        self.path = path
        self.identity = identity
        self.done: set[int] = set()
        self.totals: dict[str, Any] = {"cases": 0, "findings": 0}
        if path.exists():
            try:
                doc = json.loads(path.read_text(encoding="utf-8"))
                if not isinstance(doc, dict):
                    raise ValueError("not a JSON object")
            except (OSError, UnicodeDecodeError, ValueError) as e:
                raise CampaignError(f"{path}: not a campaign checkpoint ({e}); delete it to "
                                    "start the campaign over, or use another --out") from None
            if doc.get("identity") != identity:
                raise CampaignError(
                    f"{path} was written by a campaign with other settings "
                    f"({doc.get('identity')}); use another --out or the same settings")
            self.done = set(doc.get("done", []))
            self.totals = doc.get("totals", self.totals)

    def mark(self, chunk: int, cases: int, findings: int) -> None:
        self.done.add(chunk)
        self.totals["cases"] += cases
        self.totals["findings"] += findings
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"identity": self.identity, "done": sorted(self.done),
                                   "totals": self.totals}), encoding="utf-8")
        os.replace(tmp, self.path)


def config_as_dict(config: CampaignConfig) -> dict[str, Any]:
    d = asdict(config)
    d["out"] = str(config.out)
    return d


__all__ = ["CampaignConfig", "CampaignError", "Checkpoint", "Progress", "Summary", "Tally",
           "config_as_dict", "parse_duration"]
