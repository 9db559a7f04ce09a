"""Runs and bucket history in the findings store (fixed-verification): each campaign
or recheck is a row with the versions of its pipelines' tools; a bucket's history says what
each run saw of it.

"Fixed" means fixed by a run R with versions V (`fixed_run`); a sighting after `fixed_at` —
by a campaign, a recheck or a merged store — is a regression: the bucket is reopened
(`reopen`) and counted in `regressions`.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from oracles import Signature
from triage.store.buckets import Bucket, BucketTriage, IdLookupError


class Event(StrEnum):
    """What a run saw of a bucket (its `history`)."""

    REPRODUCES = "reproduces"
    """the best reproducer still gives the bucket's signature"""
    FIXED = "fixed"
    """all the bucket's pipelines agree on its best reproducer now"""
    REGRESSED = "regressed"
    """a fixed bucket reproduced again (or a campaign found it again): reopened"""
    CHANGED = "changed"
    """the reproducer diverges, but with other signatures: left as it was"""
    SKIPPED = "skipped"
    """not rechecked (a pipeline unavailable, no stored case)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class Run:
    """One campaign or recheck: when, on which pipelines, with which tool versions, where."""

    id: str
    kind: str
    started: float
    ended: float | None
    pipelines: tuple[str, ...]
    versions: dict[str, str]
    host: str
    settings: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryEntry:
    """One event of a bucket's history, with the run it happened in."""

    run: str
    at: float
    event: Event
    detail: str


def run_from_row(row: sqlite3.Row) -> Run:
    return Run(id=row["id"], kind=row["kind"], started=row["started"], ended=row["ended"],
               pipelines=tuple(p for p in row["pipelines"].split(",") if p),
               versions=json.loads(row["versions"]), host=row["host"],
               settings=json.loads(row["settings"]))


def new_run_id(kind: str) -> str:
    """`campaign-20261130T210501Z-3fa2c1`: sortable by start, unique across machines."""
    return f"{kind}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{secrets.token_hex(3)}"


def reopen(db: sqlite3.Connection, signature: str, run_id: str | None, now: float,
           detail: str) -> None:
    db.execute("UPDATE buckets SET status = 'new', regressions = regressions + 1 "
               "WHERE signature = ?", (signature,))
    db.execute("INSERT OR REPLACE INTO history VALUES (?, ?, ?, ?, ?)",
               (signature, run_id or "", now, str(Event.REGRESSED), detail))


class RunLog(BucketTriage):
    """Runs and history (a part of `FindingStore`)."""

    def begin_run(self, kind: str, pipelines: tuple[str, ...] | list[str],
                  versions: Mapping[str, str], host: str,
                  settings: Mapping[str, Any] | None = None) -> Run:
        """Record the start of a campaign or recheck; findings recorded from now on name it
        (`Bucket.first_run`, `last_run`)."""
        run_id = new_run_id(kind)
        with self._write() as db:
            db.execute("INSERT INTO runs VALUES (?, ?, ?, NULL, ?, ?, ?, ?)",
                       (run_id, kind, time.time(), ",".join(pipelines),
                        json.dumps(dict(versions), sort_keys=True), host,
                        json.dumps(dict(settings or {}), sort_keys=True, default=str)))
        self.run_id = run_id
        return self.run(run_id)

    def end_run(self) -> None:
        """Record the end of the current run (a run without an end was interrupted)."""
        if self.run_id is None:
            return
        with self._write() as db:
            db.execute("UPDATE runs SET ended = ? WHERE id = ?", (time.time(), self.run_id))

    def run(self, run_id: str) -> Run:
        row = self._conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise IdLookupError(f"no run {run_id!r}")
        return run_from_row(row)

    def runs(self, kind: str | None = None) -> list[Run]:
        """Every recorded run, oldest first."""
        where, params = ("WHERE kind = ?", (kind,)) if kind else ("", ())
        return [run_from_row(r) for r in self._conn.execute(
            f"SELECT * FROM runs {where} ORDER BY started, id", params)]

    def history(self, signature: Signature) -> list[HistoryEntry]:
        """What runs saw of a bucket, oldest first."""
        rows = self._conn.execute("SELECT * FROM history WHERE bucket = ? ORDER BY at, rowid",
                                  (str(signature),))
        return [HistoryEntry(run=r["run"], at=r["at"], event=Event(r["event"]),
                             detail=r["detail"]) for r in rows]

    def note_recheck(self, sig: Signature, event: Event, detail: str = "") -> Bucket:
        """Record what the current run's recheck saw of a bucket and move its status:
        `fixed` marks it fixed by this run; `regressed` reopens it (status `new`, one more
        regression); the others change nothing but the history."""
        if self.run_id is None:
            raise ValueError("note_recheck needs a run (begin_run)")
        signature = str(sig)
        now = time.time()
        with self._write() as db:
            if event is Event.REGRESSED:
                reopen(db, signature, self.run_id, now, detail)
            else:
                if event is Event.FIXED:
                    # still fixed: the run that fixed it first keeps the credit
                    db.execute("UPDATE buckets SET fixed_run = CASE WHEN status = 'fixed' "
                               "THEN coalesce(fixed_run, ?) ELSE ? END, fixed_at = CASE WHEN "
                               "status = 'fixed' THEN coalesce(fixed_at, ?) ELSE ? END, "
                               "status = 'fixed' WHERE signature = ?",
                               (self.run_id, self.run_id, now, now, signature))
                db.execute("INSERT OR REPLACE INTO history VALUES (?, ?, ?, ?, ?)",
                           (signature, self.run_id, now, str(event), detail))
        return self.bucket(signature)


__all__ = ["Event", "HistoryEntry", "Run", "RunLog", "new_run_id", "reopen", "run_from_row"]
