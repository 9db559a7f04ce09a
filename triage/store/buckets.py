"""Buckets of the findings store: one bucket per signature (a bug, not a case), its counts,
its triage status, its best reproducer and kept examples — the values, and reading them.

The best reproducer is the smallest case seen, shortlex over the kernel's (tokens,
characters); a few of the smallest examples are kept per bucket with their finding's detail
and first differing elements, so `triage show` needs no re-run.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass
from enum import StrEnum

from oracles import ElementDiff, Signature
from triage.store.schema import StoreBase

BUCKET_ID_LEN = 10

_ORDER = {"newest": "first_seen DESC", "count": "count DESC, last_seen DESC",
          "last-seen": "last_seen DESC"}


class BucketStatus(StrEnum):
    """Where a bucket is in triage."""

    NEW = "new"
    FILED = "filed"
    FIXED = "fixed"
    FLAKY = "flaky"
    WONTFIX = "wontfix"


class IdLookupError(LookupError):
    """An id or prefix that names nothing, or more than one thing; `str()` is one line."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def bucket_id(signature: Signature | str) -> str:
    """The short stable id of a bucket: the first 10 hex of sha256 of the signature's text
    (the text kept in the store, so ids of stores written before are unchanged)."""
    return hashlib.sha256(str(signature).encode()).hexdigest()[:BUCKET_ID_LEN]


@dataclass(frozen=True, slots=True, kw_only=True)
class Bucket:
    """One bug: every finding with this signature."""

    id: str
    signature: Signature
    kind: str
    pipelines: tuple[str, ...]
    first_seen: float
    last_seen: float
    count: int
    status: BucketStatus
    best_case_id: str | None
    best_size: tuple[int, int] | None
    tries: int = 0
    reproduced: int = 0
    note: str = ""
    first_run: str | None = None
    """The run that filed it (None for buckets filed before runs were recorded)."""
    last_run: str | None = None
    fixed_run: str | None = None
    """The recheck run that last found it fixed (its versions are what fixed it)."""
    fixed_at: float | None = None
    regressions: int = 0
    """How often it came back after being fixed."""

    @property
    def regression(self) -> bool:
        """Open again after it had been fixed: what reports flag."""
        return self.regressions > 0 and self.status is not BucketStatus.FIXED

    @property
    def reproduction_rate(self) -> float | None:
        """How often `reproduce` saw it again; None before the first try."""
        return self.reproduced / self.tries if self.tries else None


@dataclass(frozen=True, slots=True, kw_only=True)
class BucketUpdate:
    """What one `record` did to one bucket."""

    bucket: Bucket
    new: bool
    """The signature was seen for the first time."""
    best_replaced: bool
    """The recorded case became the bucket's best reproducer."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Example:
    """One kept case of a bucket, with the finding's detail and first differing elements."""

    case_id: str
    size: tuple[int, int]
    seen: float
    detail: str
    diffs: tuple[ElementDiff, ...]


def diffs_json(diffs: tuple[ElementDiff, ...]) -> str:
    return json.dumps([[d.buffer, d.index, d.expected, d.expected_bits, d.actual,
                        d.actual_bits] for d in diffs])


def diffs_from(text: str) -> tuple[ElementDiff, ...]:
    return tuple(ElementDiff(*row) for row in json.loads(text))


def bucket_from_row(row: sqlite3.Row) -> Bucket:
    best = (row["best_tokens"], row["best_chars"]) if row["best_case_id"] else None
    return Bucket(id=row["id"], signature=Signature.parse(row["signature"]), kind=row["kind"],
                  pipelines=tuple(p for p in row["pipelines"].split(",") if p),
                  first_seen=row["first_seen"], last_seen=row["last_seen"], count=row["count"],
                  status=BucketStatus(row["status"]), best_case_id=row["best_case_id"],
                  best_size=best, tries=row["tries"], reproduced=row["reproduced"],
                  note=row["note"], first_run=row["first_run"], last_run=row["last_run"],
                  fixed_run=row["fixed_run"], fixed_at=row["fixed_at"],
                  regressions=row["regressions"])


class BucketTriage(StoreBase):
    """Reading buckets and their examples, moving them through triage (a part of "
        "`FindingStore`)."""

    def set_status(self, id_or_prefix: str, status: BucketStatus | str,
                   note: str | None = None) -> Bucket:
        """Move a bucket through triage (and optionally replace its note)."""
        try:
            status = BucketStatus(status)
        except ValueError:
            raise IdLookupError(f"unknown status {status!r} (one of "
                                f"{', '.join(s.value for s in BucketStatus)})") from None
        b = self.bucket(id_or_prefix)
        with self._write() as db:
            db.execute("UPDATE buckets SET status = ?, note = coalesce(?, note) "
                       "WHERE id = ?", (str(status), note, b.id))
            if status is BucketStatus.FIXED and b.status is not BucketStatus.FIXED:
                # fixed by hand: a later sighting is a regression from now on
                db.execute("UPDATE buckets SET fixed_at = ? WHERE id = ?",
                           (time.time(), b.id))
        return self.bucket(b.id)

    def record_reproduction(self, signature: Signature, reproduced: bool) -> None:
        """Count one `reproduce` attempt (the reproduction rate flags flaky buckets)."""
        with self._write() as db:
            db.execute("UPDATE buckets SET tries = tries + 1, reproduced = reproduced + ? "
                       "WHERE signature = ?", (int(reproduced), str(signature)))

    def buckets(self, order_by: str = "newest",
                status: BucketStatus | str | None = None) -> list[Bucket]:
        """Every bucket, newest first (or by `count`, or by `last-seen`)."""
        if order_by not in _ORDER:
            raise ValueError(f"order_by: expected one of {', '.join(_ORDER)}")
        where, params = ("WHERE status = ?", (str(BucketStatus(status)),)) if status else ("", ())
        rows = self._conn.execute(f"SELECT * FROM buckets {where} ORDER BY {_ORDER[order_by]}",
                                  params)
        return [bucket_from_row(r) for r in rows]

    def bucket(self, id_or_prefix: str | Signature) -> Bucket:
        """The bucket whose id starts with `id_or_prefix` (or whose signature it is)."""
        row = self._conn.execute("SELECT * FROM buckets WHERE signature = ?",
                                 (str(id_or_prefix),)).fetchone()
        if row is not None:
            return bucket_from_row(row)
        if isinstance(id_or_prefix, Signature):
            raise IdLookupError(f"no bucket has signature {str(id_or_prefix)!r}")
        rows = self._prefix_rows("buckets", id_or_prefix)
        return bucket_from_row(unique_row(rows, id_or_prefix, "bucket"))

    def _prefix_rows(self, table: str, prefix: str) -> list[sqlite3.Row]:
        if not prefix:
            return []
        escaped = prefix.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return self._conn.execute(f"SELECT * FROM {table} WHERE id LIKE ? ESCAPE '\\' "
                                  "ORDER BY id", (escaped + "%",)).fetchall()

    def examples(self, signature: Signature) -> list[Example]:
        """The kept cases of a bucket, the best first, then smallest first."""
        rows = self._conn.execute(
            "SELECT e.* FROM examples e JOIN buckets b ON b.signature = e.bucket "
            "WHERE e.bucket = ? ORDER BY e.case_id = b.best_case_id DESC, e.tokens, e.chars, "
            "e.seen", (str(signature),))
        return [Example(case_id=r["case_id"], size=(r["tokens"], r["chars"]), seen=r["seen"],
                        detail=r["detail"], diffs=diffs_from(r["diffs"])) for r in rows]

    def buckets_of_case(self, case_id: str) -> list[Bucket]:
        """The buckets a case is an example (or the best reproducer) of."""
        rows = self._conn.execute(
            "SELECT * FROM buckets WHERE best_case_id = ? OR signature IN "
            "(SELECT bucket FROM examples WHERE case_id = ?) ORDER BY first_seen",
            (case_id, case_id))
        return [bucket_from_row(r) for r in rows]


def unique_row(rows: list[sqlite3.Row], prefix: str, what: str) -> sqlite3.Row:
    if len(rows) == 1:
        return rows[0]
    if not rows:
        raise IdLookupError(f"no {what} matches {prefix!r}")
    raise IdLookupError(ambiguous_message(prefix, [(what, r["id"]) for r in rows]))


def ambiguous_message(prefix: str, matches: list[tuple[str, str]]) -> str:
    """`'ab' is ambiguous: matches 3 cases (ab12..., ab34..., ...)`."""
    kinds: dict[str, int] = {}
    for what, _ in matches:
        kinds[what] = kinds.get(what, 0) + 1
    counted = " and ".join(f"{n} {what}{'s' if n != 1 else ''}" for what, n in kinds.items())
    shown = ", ".join(f"{i}..." for _, i in matches[:3]) + (", ..." if len(matches) > 3 else "")
    return f"{prefix!r} is ambiguous: matches {counted} ({shown})"


__all__ = [
    "BUCKET_ID_LEN",
    "Bucket",
    "BucketStatus",
    "BucketTriage",
    "BucketUpdate",
    "Example",
    "IdLookupError",
    "ambiguous_message",
    "bucket_from_row",
    "bucket_id",
    "diffs_from",
    "diffs_json",
    "unique_row",
]
