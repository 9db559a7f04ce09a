"""Merging findings stores (`triage merge`, the nightly's shards into its history store).

A merge is a union: counts add, first seen is the earliest, last seen the latest, best is
the smaller; merging the same file twice therefore counts its sightings twice. Runs,
history, plugins and probe answers are carried over; a bucket fixed on one side and seen
after that fix on the other is reopened as a regression.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from triage.store.buckets import Bucket, BucketStatus, bucket_from_row
from triage.store.cases import drop_orphans, offer_best, trim_examples
from triage.store.runs import reopen
from triage.store.schema import StoreBase, open_for_reading

_COPIED_AS_IS = ("cases", "outcomes", "plugins", "runs", "history", "probes")
"""Tables whose rows are immutable facts keyed by content: a merge keeps the first copy."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeSummary:
    buckets: int
    new_buckets: int
    cases: int


class StoreMerge(StoreBase):
    """Merging another store into this one (a part of `FindingStore`)."""

    def merge_from(self, other_path: str | Path) -> MergeSummary:
        """Add another store's buckets, cases and examples into this one (a union)."""
        other = open_for_reading(Path(other_path))
        try:
            return self._merge(other)
        finally:
            other.close()

    def _merge(self, src: sqlite3.Connection) -> MergeSummary:
        buckets = new = 0
        with self._write() as db:
            for table in _COPIED_AS_IS:
                for row in src.execute(f"SELECT * FROM {table}"):
                    marks = ", ".join("?" * len(row))
                    db.execute(f"INSERT OR IGNORE INTO {table} VALUES ({marks})", tuple(row))
            for row in src.execute("SELECT * FROM buckets"):
                b, text = bucket_from_row(row), row["signature"]  # the text as kept, byte for byte
                buckets += 1
                mine_row = db.execute("SELECT * FROM buckets WHERE signature = ?",
                                      (text,)).fetchone()
                if mine_row is None:
                    new += 1
                    db.execute("INSERT INTO buckets (signature, id, kind, pipelines, "
                               "first_seen, last_seen, count, status, tries, reproduced, "
                               "note, first_run, last_run, fixed_run, fixed_at, regressions) "
                               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                               (text, b.id, b.kind, ",".join(b.pipelines),
                                b.first_seen, b.last_seen, b.count, str(b.status), b.tries,
                                b.reproduced, b.note, b.first_run, b.last_run, b.fixed_run,
                                b.fixed_at, b.regressions))
                else:
                    self._merge_bucket(db, bucket_from_row(mine_row), b, text)
                if b.best_case_id and b.best_size:
                    offer_best(db, text, b.best_case_id, b.best_size)
                for ex in src.execute("SELECT * FROM examples WHERE bucket = ?", (text,)):
                    db.execute("INSERT OR IGNORE INTO examples VALUES (?, ?, ?, ?, ?, ?, ?)",
                               tuple(ex))
                trim_examples(db, text)
            drop_orphans(db)
            cases = src.execute("SELECT count(*) FROM cases").fetchone()[0]
        return MergeSummary(buckets=buckets, new_buckets=new, cases=cases)

    def _merge_bucket(self, db: sqlite3.Connection, mine: Bucket, theirs: Bucket,
                      text: str) -> None:
        """One bucket both stores hold. Triage status: this store's unless it is `new`.
        A bucket fixed on one side and seen after that fix on the other is a regression:
        reopened, like a campaign that finds a fixed bucket again."""
        status = theirs.status if mine.status is BucketStatus.NEW else mine.status
        fixed_side = mine if mine.status is BucketStatus.FIXED else theirs
        first = mine if mine.first_seen <= theirs.first_seen else theirs
        last = mine if mine.last_seen >= theirs.last_seen else theirs
        regressions = max(mine.regressions, theirs.regressions)
        fixed_at = fixed_side.fixed_at
        seen_after_fix = (status is BucketStatus.FIXED and fixed_at is not None
                          and last.last_seen > fixed_at)
        db.execute("UPDATE buckets SET count = count + ?, first_seen = ?, last_seen = ?, "
                   "tries = tries + ?, reproduced = reproduced + ?, status = ?, "
                   "note = CASE WHEN note = '' THEN ? ELSE note END, first_run = ?, "
                   "last_run = ?, fixed_run = ?, fixed_at = ?, regressions = ? "
                   "WHERE signature = ?",
                   (theirs.count, first.first_seen, last.last_seen, theirs.tries,
                    theirs.reproduced, str(status), theirs.note,
                    first.first_run or mine.first_run or theirs.first_run,
                    last.last_run or mine.last_run or theirs.last_run,
                    fixed_side.fixed_run or mine.fixed_run or theirs.fixed_run, fixed_at,
                    regressions, text))
        if seen_after_fix:
            reopen(db, text, last.last_run, time.time(),
                         f"seen {time.strftime('%Y-%m-%d %H:%M', time.gmtime(last.last_seen))}"
                         " UTC, after it was fixed")

    # ---------------------------------------------------------------- reading


__all__ = ["MergeSummary", "StoreMerge"]
