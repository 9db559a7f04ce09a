"""The findings store (DESIGN.md §7 "Bucket and store"): one SQLite file per campaign.

Findings are bucketed by signature (a bucket names a bug, not a case). Each bucket keeps how
often and when it was seen, its triage status, how often `reproduce` saw it again, and its
best reproducer: the smallest case, shortlex over the kernel's (tokens, characters). A few of
the smallest examples are kept per bucket, with their outcome summaries and first differing
elements, so `triage show` needs no re-run.

Rules the store keeps:
* several processes may write one file at once: WAL journal, a busy timeout, and every
  read-modify-write inside one `BEGIN IMMEDIATE` transaction, so no count is lost;
* the schema is versioned by `PRAGMA user_version` and only ever upgraded by appending to
  `MIGRATIONS`; an old file is upgraded in place when opened;
* cases are stored as canonical `rgpu-case/1` text, never pickles, so any version reads them;
* merging is a union (counts add, first seen is the earliest, last seen the latest, best is
  the smaller); merging the same file twice therefore counts its sightings twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from rgpu_fuzz import casefile
from rgpu_fuzz.lang.lexer import tokenize
from rgpu_fuzz.lang.source import DiagnosticError, SourceFile
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.errors import RgpuError
from rgpu_fuzz.model.outcome import Ok, Outcome, detail
from rgpu_fuzz.oracles import ElementDiff, Finding, Verdict
from rgpu_fuzz.triage.store_probes import MIGRATION as PROBES_MIGRATION
from rgpu_fuzz.triage.store_probes import ProbeCache

DEFAULT_CAMPAIGN_DIR = Path("runs") / "campaign"
"""Where `campaign` writes when no `--out` is given."""
DEFAULT_STORE = DEFAULT_CAMPAIGN_DIR / "findings.sqlite"
"""The one default store: what a campaign without `--out` writes and every reader reads."""
STORE_ENV = "RGPU_FUZZ_STORE"
EXAMPLES_PER_BUCKET = 5
BUSY_TIMEOUT_MS = 60_000
BUCKET_ID_LEN = 10

MIGRATIONS: tuple[str, ...] = (
    # v1: buckets, cases, examples, outcomes
    """
    CREATE TABLE cases (
        id        TEXT PRIMARY KEY,
        toml      TEXT NOT NULL,
        tokens    INTEGER NOT NULL,
        chars     INTEGER NOT NULL,
        generator TEXT NOT NULL DEFAULT '',
        seed      INTEGER,
        parent    TEXT NOT NULL DEFAULT '',
        added     REAL NOT NULL
    );
    CREATE TABLE buckets (
        signature    TEXT PRIMARY KEY,
        id           TEXT NOT NULL UNIQUE,
        kind         TEXT NOT NULL,
        pipelines    TEXT NOT NULL,
        first_seen   REAL NOT NULL,
        last_seen    REAL NOT NULL,
        count        INTEGER NOT NULL DEFAULT 0,
        status       TEXT NOT NULL DEFAULT 'new'
                     CHECK (status IN ('new', 'filed', 'fixed', 'flaky', 'wontfix')),
        best_case_id TEXT REFERENCES cases(id),
        best_tokens  INTEGER,
        best_chars   INTEGER
    );
    CREATE TABLE examples (
        bucket  TEXT NOT NULL REFERENCES buckets(signature),
        case_id TEXT NOT NULL REFERENCES cases(id),
        tokens  INTEGER NOT NULL,
        chars   INTEGER NOT NULL,
        seen    REAL NOT NULL,
        detail  TEXT NOT NULL DEFAULT '',
        diffs   TEXT NOT NULL DEFAULT '[]',
        PRIMARY KEY (bucket, case_id)
    );
    CREATE TABLE outcomes (
        case_id  TEXT NOT NULL REFERENCES cases(id),
        pipeline TEXT NOT NULL,
        summary  TEXT NOT NULL,
        PRIMARY KEY (case_id, pipeline)
    );
    CREATE INDEX examples_by_case ON examples(case_id);
    """,
    # v2: reproduction rate and a free-text note per bucket
    """
    ALTER TABLE buckets ADD COLUMN tries INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE buckets ADD COLUMN reproduced INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE buckets ADD COLUMN note TEXT NOT NULL DEFAULT '';
    CREATE INDEX buckets_by_last_seen ON buckets(last_seen);
    """,
    # v3: the `--plugin` files that defined the campaign's pipelines, so `reproduce` and
    # `report` of a plugin bucket can load them again without being told
    """
    CREATE TABLE plugins (
        pipeline TEXT PRIMARY KEY,
        path     TEXT NOT NULL,
        sha256   TEXT NOT NULL
    );
    """,
    # v4 (issue 13): runs with the versions of every pipeline's tools, which run filed,
    # last saw and fixed each bucket, how often a fixed bucket came back, and each
    # bucket's recheck history
    """
    CREATE TABLE runs (
        id        TEXT PRIMARY KEY,
        kind      TEXT NOT NULL,
        started   REAL NOT NULL,
        ended     REAL,
        pipelines TEXT NOT NULL DEFAULT '',
        versions  TEXT NOT NULL DEFAULT '{}',
        host      TEXT NOT NULL DEFAULT '',
        settings  TEXT NOT NULL DEFAULT '{}'
    );
    CREATE TABLE history (
        bucket TEXT NOT NULL REFERENCES buckets(signature),
        run    TEXT NOT NULL REFERENCES runs(id),
        at     REAL NOT NULL,
        event  TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (bucket, run, event)
    );
    ALTER TABLE buckets ADD COLUMN first_run TEXT;
    ALTER TABLE buckets ADD COLUMN last_run TEXT;
    ALTER TABLE buckets ADD COLUMN fixed_run TEXT;
    ALTER TABLE buckets ADD COLUMN fixed_at REAL;
    ALTER TABLE buckets ADD COLUMN regressions INTEGER NOT NULL DEFAULT 0;
    """,
    # v5 (issue 13): bug-key probe answers per toolchain (store_probes.py)
    PROBES_MIGRATION,
)
SCHEMA_VERSION = len(MIGRATIONS)

_ORDER = {"newest": "first_seen DESC", "count": "count DESC, last_seen DESC",
          "last-seen": "last_seen DESC"}


class BucketStatus(StrEnum):
    """Where a bucket is in triage."""

    NEW = "new"
    FILED = "filed"
    FIXED = "fixed"
    FLAKY = "flaky"
    WONTFIX = "wontfix"


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


class IdLookupError(LookupError):
    """An id or prefix that names nothing, or more than one thing; `str()` is one line."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class StoreError(RgpuError):
    """A store file that cannot be used (not SQLite, newer schema); `str()` is one line."""


def default_store_path() -> Path:
    """`$RGPU_FUZZ_STORE`, or `runs/campaign/findings.sqlite` (the default campaign's)."""
    env = os.environ.get(STORE_ENV)
    return Path(env) if env else DEFAULT_STORE


def bucket_id(signature: str) -> str:
    """The short stable id of a bucket: the first 10 hex of sha256(signature)."""
    return hashlib.sha256(signature.encode()).hexdigest()[:BUCKET_ID_LEN]


def case_size(case: Case) -> tuple[int, int]:
    """The shortlex key of a reproducer: kernel tokens, then kernel characters."""
    try:
        tokens = len(tokenize(SourceFile("<store>", case.kernel))) - 1
    except DiagnosticError:
        tokens = len(case.kernel)
    return tokens, len(case.kernel)


@dataclass(frozen=True, slots=True, kw_only=True)
class Bucket:
    """One bug: every finding with this signature."""

    id: str
    signature: str
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


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeSummary:
    buckets: int
    new_buckets: int
    cases: int


def outcome_summary(outcome: Outcome) -> dict[str, Any]:
    """What the store keeps of an outcome: status, detail, timings, artefact hashes and, for
    `ok`, a digest of each output buffer (the values themselves can be megabytes)."""
    summary: dict[str, Any] = {
        "status": str(outcome.status), "detail": detail(outcome),
        "seconds": round(outcome.stats.seconds.get("total", outcome.stats.total_seconds), 6),
        "stages": {k: round(v, 6) for k, v in outcome.stats.seconds.items()},
        "artefacts": dict(outcome.stats.artefacts)}
    if isinstance(outcome, Ok):
        summary["outputs"] = {
            name: {"type": str(buf.ty), "len": len(buf.values),
                   "sha256": hashlib.sha256(repr(buf.bits()).encode()).hexdigest()[:16]}
            for name, buf in outcome.outputs.items()}
    return summary


def _diffs_json(diffs: tuple[ElementDiff, ...]) -> str:
    return json.dumps([[d.buffer, d.index, d.expected, d.expected_bits, d.actual,
                        d.actual_bits] for d in diffs])


def _diffs_from(text: str) -> tuple[ElementDiff, ...]:
    return tuple(ElementDiff(*row) for row in json.loads(text))


def _bucket(row: sqlite3.Row) -> Bucket:
    best = (row["best_tokens"], row["best_chars"]) if row["best_case_id"] else None
    return Bucket(id=row["id"], signature=row["signature"], kind=row["kind"],
                  pipelines=tuple(p for p in row["pipelines"].split(",") if p),
                  first_seen=row["first_seen"], last_seen=row["last_seen"], count=row["count"],
                  status=BucketStatus(row["status"]), best_case_id=row["best_case_id"],
                  best_size=best, tries=row["tries"], reproduced=row["reproduced"],
                  note=row["note"], first_run=row["first_run"], last_run=row["last_run"],
                  fixed_run=row["fixed_run"], fixed_at=row["fixed_at"],
                  regressions=row["regressions"])


def _run(row: sqlite3.Row) -> Run:
    return Run(id=row["id"], kind=row["kind"], started=row["started"], ended=row["ended"],
               pipelines=tuple(p for p in row["pipelines"].split(",") if p),
               versions=json.loads(row["versions"]), host=row["host"],
               settings=json.loads(row["settings"]))


def new_run_id(kind: str) -> str:
    """`campaign-20261130T210501Z-3fa2c1`: sortable by start, unique across machines."""
    return f"{kind}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{secrets.token_hex(3)}"


def _connect(path: str, **kwargs: Any) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
                           **kwargs)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return conn


def migrate(conn: sqlite3.Connection, upto: int = SCHEMA_VERSION) -> int:
    """Apply the missing migrations (up to `upto`) in one transaction; the new version."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(f"schema version {version} is newer than this rgpu-fuzz "
                             f"understands ({SCHEMA_VERSION}); upgrade rgpu-fuzz")
        for number in range(version + 1, upto + 1):
            for statement in MIGRATIONS[number - 1].split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
            version = number
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return int(version)


class FindingStore(ProbeCache):
    """Buckets of findings in one SQLite file.

    Opened for writing (the default), a missing file is created and an older store upgraded;
    opened `readonly` (what `triage list/show`, `report` and lookups need), the file is never
    written: an older schema is upgraded in a copy in memory, so a store on a read-only disk
    can still be read. Either way a file that is not a store (empty, not SQLite, or SQLite
    without this schema) is refused with a `StoreError`, never given a schema."""

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self.run_id: str | None = None
        """The run (`begin_run`) that findings recorded now belong to."""
        if readonly:
            self._conn = _open_for_reading(self.path)
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"{self.path}: cannot create its folder: "
                             f"{e.strerror or e}") from None
        try:
            self._conn = _connect(str(self.path))
            _refuse_foreign(self._conn)  # before anything is written into the file
            self._conn.execute("PRAGMA journal_mode = WAL")
            migrate(self._conn)
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{self.path}: not a findings store ({e})") from None
        except StoreError as e:
            raise StoreError(f"{self.path}: {e}") from None

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> FindingStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken up front so concurrent writers queue, not fail."""
        if self.readonly:
            raise StoreError(f"{self.path}: opened read-only")
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    # ---------------------------------------------------------------- writing

    def record(self, case: Case, verdict: Verdict,
               outcomes: Mapping[str, Outcome]) -> list[BucketUpdate]:
        """Count one case's findings, one bucket per signature; keep the case as an example
        (and as the best reproducer when it is the smallest yet)."""
        if verdict.agree:
            return []
        if not case.pipelines:
            case = replace(case, pipelines=tuple(outcomes))
        now = time.time()
        by_signature: dict[str, Finding] = {}
        for f in verdict.findings:
            by_signature.setdefault(f.signature, f)
        updates = []
        with self._write() as db:
            size = self._put_case(db, case, now)
            for label, outcome in outcomes.items():
                db.execute("INSERT OR REPLACE INTO outcomes VALUES (?, ?, ?)",
                           (case.id, label, json.dumps(outcome_summary(outcome))))
            for finding in by_signature.values():
                updates.append(self._count(db, case.id, size, finding, now))
            self._drop_orphans(db)
        return updates

    def _put_case(self, db: sqlite3.Connection, case: Case, now: float) -> tuple[int, int]:
        size = case_size(case)
        p = case.provenance
        db.execute("INSERT OR IGNORE INTO cases VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (case.id, casefile.dumps(case), *size, p.generator, p.seed, p.parent, now))
        return size

    def _count(self, db: sqlite3.Connection, case_id: str, size: tuple[int, int],
               finding: Finding, now: float) -> BucketUpdate:
        sig = finding.signature
        row = db.execute("SELECT * FROM buckets WHERE signature = ?", (sig,)).fetchone()
        new = row is None
        if new:
            db.execute("INSERT INTO buckets (signature, id, kind, pipelines, first_seen, "
                       "last_seen, count, first_run) VALUES (?, ?, ?, ?, ?, ?, 0, ?)",
                       (sig, bucket_id(sig), str(finding.kind), ",".join(finding.pipelines),
                        now, now, self.run_id))
        elif row["status"] == BucketStatus.FIXED:
            self._reopen(db, sig, self.run_id, now, f"found again: case {case_id}")
        db.execute("UPDATE buckets SET count = count + 1, last_seen = max(last_seen, ?), "
                   "first_seen = min(first_seen, ?), last_run = coalesce(?, last_run) "
                   "WHERE signature = ?", (now, now, self.run_id, sig))
        db.execute("INSERT OR IGNORE INTO examples VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (sig, case_id, *size, now, finding.detail, _diffs_json(finding.diffs)))
        replaced = self._offer_best(db, sig, case_id, size)
        self._trim_examples(db, sig)
        row = db.execute("SELECT * FROM buckets WHERE signature = ?", (sig,)).fetchone()
        return BucketUpdate(bucket=_bucket(row), new=new, best_replaced=replaced)

    @staticmethod
    def _offer_best(db: sqlite3.Connection, sig: str, case_id: str,
                    size: tuple[int, int]) -> bool:
        cur = db.execute(
            "UPDATE buckets SET best_case_id = ?, best_tokens = ?, best_chars = ? "
            "WHERE signature = ? AND (best_case_id IS NULL OR (best_tokens, best_chars) > (?, ?))",
            (case_id, *size, sig, *size))
        return cur.rowcount > 0

    @staticmethod
    def _trim_examples(db: sqlite3.Connection, sig: str) -> None:
        db.execute(
            "DELETE FROM examples WHERE bucket = ? AND case_id NOT IN ("
            " SELECT case_id FROM examples WHERE bucket = ?"
            " ORDER BY case_id = (SELECT best_case_id FROM buckets WHERE signature = ?) DESC,"
            " tokens, chars, seen LIMIT ?)", (sig, sig, sig, EXAMPLES_PER_BUCKET))

    @staticmethod
    def _drop_orphans(db: sqlite3.Connection) -> None:
        db.execute("DELETE FROM outcomes WHERE case_id NOT IN (SELECT case_id FROM examples) "
                   "AND case_id NOT IN (SELECT best_case_id FROM buckets "
                   "WHERE best_case_id IS NOT NULL)")
        db.execute("DELETE FROM cases WHERE id NOT IN (SELECT case_id FROM examples) "
                   "AND id NOT IN (SELECT best_case_id FROM buckets "
                   "WHERE best_case_id IS NOT NULL)")

    def set_best(self, signature: str, case: Case, *, finding: Finding | None = None,
                 outcomes: Mapping[str, Outcome] | None = None) -> bool:
        """Offer a (reduced) case as the bucket's reproducer; True when it became the best
        (it must be strictly smaller than the current one)."""
        now = time.time()
        with self._write() as db:
            row = db.execute("SELECT pipelines FROM buckets WHERE signature = ?",
                             (signature,)).fetchone()
            if row is None:
                raise IdLookupError(f"no bucket has signature {signature!r}")
            if not case.pipelines:
                case = replace(case, pipelines=tuple(outcomes or ()) or
                               tuple(p for p in row["pipelines"].split(",") if p))
            size = self._put_case(db, case, now)
            for label, outcome in (outcomes or {}).items():
                db.execute("INSERT OR REPLACE INTO outcomes VALUES (?, ?, ?)",
                           (case.id, label, json.dumps(outcome_summary(outcome))))
            db.execute("INSERT OR IGNORE INTO examples VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (signature, case.id, *size, now, finding.detail if finding else "",
                        _diffs_json(finding.diffs) if finding else "[]"))
            replaced = self._offer_best(db, signature, case.id, size)
            self._trim_examples(db, signature)
            self._drop_orphans(db)
        return replaced

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
                       "WHERE signature = ?", (str(status), note, b.signature))
            if status is BucketStatus.FIXED and b.status is not BucketStatus.FIXED:
                # fixed by hand: a later sighting is a regression from now on
                db.execute("UPDATE buckets SET fixed_at = ? WHERE signature = ?",
                           (time.time(), b.signature))
        return self.bucket(b.id)

    # ---------------------------------------------------------------- runs and rechecks

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
        return _run(row)

    def runs(self, kind: str | None = None) -> list[Run]:
        """Every recorded run, oldest first."""
        where, params = ("WHERE kind = ?", (kind,)) if kind else ("", ())
        return [_run(r) for r in self._conn.execute(
            f"SELECT * FROM runs {where} ORDER BY started, id", params)]

    def history(self, signature: str) -> list[HistoryEntry]:
        """What runs saw of a bucket, oldest first."""
        rows = self._conn.execute("SELECT * FROM history WHERE bucket = ? ORDER BY at, rowid",
                                  (signature,))
        return [HistoryEntry(run=r["run"], at=r["at"], event=Event(r["event"]),
                             detail=r["detail"]) for r in rows]

    def note_recheck(self, signature: str, event: Event, detail: str = "") -> Bucket:
        """Record what the current run's recheck saw of a bucket and move its status:
        `fixed` marks it fixed by this run; `regressed` reopens it (status `new`, one more
        regression); the others change nothing but the history."""
        if self.run_id is None:
            raise ValueError("note_recheck needs a run (begin_run)")
        now = time.time()
        with self._write() as db:
            if event is Event.REGRESSED:
                self._reopen(db, signature, self.run_id, now, detail)
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

    @staticmethod
    def _reopen(db: sqlite3.Connection, signature: str, run_id: str | None, now: float,
                detail: str) -> None:
        db.execute("UPDATE buckets SET status = 'new', regressions = regressions + 1 "
                   "WHERE signature = ?", (signature,))
        db.execute("INSERT OR REPLACE INTO history VALUES (?, ?, ?, ?, ?)",
                   (signature, run_id or "", now, str(Event.REGRESSED), detail))

    def record_reproduction(self, signature: str, reproduced: bool) -> None:
        """Count one `reproduce` attempt (the reproduction rate flags flaky buckets)."""
        with self._write() as db:
            db.execute("UPDATE buckets SET tries = tries + 1, reproduced = reproduced + ? "
                       "WHERE signature = ?", (int(reproduced), signature))

    def record_plugins(self, files: Mapping[str, str | Path]) -> None:
        """Remember which plugin file (absolute path and content hash) defines each named
        pipeline; a later campaign with the same name replaces the entry."""
        with self._write() as db:
            for name, path in files.items():
                p = Path(path).resolve()
                db.execute("INSERT OR REPLACE INTO plugins VALUES (?, ?, ?)",
                           (name, str(p), hashlib.sha256(p.read_bytes()).hexdigest()))

    def plugins(self) -> dict[str, tuple[Path, str]]:
        """Pipeline name -> (plugin file, sha256 of its content when recorded)."""
        return {r["pipeline"]: (Path(r["path"]), r["sha256"])
                for r in self._conn.execute("SELECT * FROM plugins")}

    def merge_from(self, other_path: str | Path) -> MergeSummary:
        """Add another store's buckets, cases and examples into this one (a union)."""
        other = _open_for_reading(Path(other_path))
        try:
            return self._merge(other)
        finally:
            other.close()

    def _merge(self, src: sqlite3.Connection) -> MergeSummary:
        buckets = new = 0
        with self._write() as db:
            for row in src.execute("SELECT * FROM cases"):
                db.execute("INSERT OR IGNORE INTO cases VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           tuple(row))
            for row in src.execute("SELECT * FROM outcomes"):
                db.execute("INSERT OR IGNORE INTO outcomes VALUES (?, ?, ?)", tuple(row))
            for row in src.execute("SELECT * FROM plugins"):
                db.execute("INSERT OR IGNORE INTO plugins VALUES (?, ?, ?)", tuple(row))
            for row in src.execute("SELECT * FROM runs"):
                db.execute("INSERT OR IGNORE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           tuple(row))
            for row in src.execute("SELECT * FROM history"):
                db.execute("INSERT OR IGNORE INTO history VALUES (?, ?, ?, ?, ?)", tuple(row))
            for row in src.execute("SELECT * FROM probes"):
                db.execute("INSERT OR IGNORE INTO probes VALUES (?, ?, ?, ?, ?, ?)", tuple(row))
            for b in (_bucket(r) for r in src.execute("SELECT * FROM buckets")):
                buckets += 1
                mine_row = db.execute("SELECT * FROM buckets WHERE signature = ?",
                                      (b.signature,)).fetchone()
                if mine_row is None:
                    new += 1
                    db.execute("INSERT INTO buckets (signature, id, kind, pipelines, "
                               "first_seen, last_seen, count, status, tries, reproduced, "
                               "note, first_run, last_run, fixed_run, fixed_at, regressions) "
                               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                               (b.signature, b.id, b.kind, ",".join(b.pipelines),
                                b.first_seen, b.last_seen, b.count, str(b.status), b.tries,
                                b.reproduced, b.note, b.first_run, b.last_run, b.fixed_run,
                                b.fixed_at, b.regressions))
                else:
                    self._merge_bucket(db, _bucket(mine_row), b)
                if b.best_case_id and b.best_size:
                    self._offer_best(db, b.signature, b.best_case_id, b.best_size)
                for ex in src.execute("SELECT * FROM examples WHERE bucket = ?",
                                      (b.signature,)):
                    db.execute("INSERT OR IGNORE INTO examples VALUES (?, ?, ?, ?, ?, ?, ?)",
                               tuple(ex))
                self._trim_examples(db, b.signature)
            self._drop_orphans(db)
            cases = src.execute("SELECT count(*) FROM cases").fetchone()[0]
        return MergeSummary(buckets=buckets, new_buckets=new, cases=cases)

    def _merge_bucket(self, db: sqlite3.Connection, mine: Bucket, theirs: Bucket) -> None:
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
                    regressions, mine.signature))
        if seen_after_fix:
            self._reopen(db, mine.signature, last.last_run, time.time(),
                         f"seen {time.strftime('%Y-%m-%d %H:%M', time.gmtime(last.last_seen))}"
                         " UTC, after it was fixed")

    # ---------------------------------------------------------------- reading

    def buckets(self, order_by: str = "newest",
                status: BucketStatus | str | None = None) -> list[Bucket]:
        """Every bucket, newest first (or by `count`, or by `last-seen`)."""
        if order_by not in _ORDER:
            raise ValueError(f"order_by: expected one of {', '.join(_ORDER)}")
        where, params = ("WHERE status = ?", (str(BucketStatus(status)),)) if status else ("", ())
        rows = self._conn.execute(f"SELECT * FROM buckets {where} ORDER BY {_ORDER[order_by]}",
                                  params)
        return [_bucket(r) for r in rows]

    def bucket(self, id_or_prefix: str) -> Bucket:
        """The bucket whose id starts with `id_or_prefix` (or whose signature it is)."""
        row = self._conn.execute("SELECT * FROM buckets WHERE signature = ?",
                                 (id_or_prefix,)).fetchone()
        if row is not None:
            return _bucket(row)
        rows = self._prefix_rows("buckets", id_or_prefix)
        return _bucket(_unique(rows, id_or_prefix, "bucket"))

    def case(self, id_or_prefix: str) -> Case:
        """The stored case whose id starts with `id_or_prefix`."""
        row = _unique(self._prefix_rows("cases", id_or_prefix), id_or_prefix, "case")
        return casefile.loads(row["toml"], f"{self.path}:case {row['id']}")

    def match_ids(self, prefix: str) -> tuple[list[str], list[str]]:
        """Bucket ids and case ids starting with `prefix` (for lookups across sources)."""
        return ([r["id"] for r in self._prefix_rows("buckets", prefix)],
                [r["id"] for r in self._prefix_rows("cases", prefix)])

    def _prefix_rows(self, table: str, prefix: str) -> list[sqlite3.Row]:
        if not prefix:
            return []
        escaped = prefix.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return self._conn.execute(f"SELECT * FROM {table} WHERE id LIKE ? ESCAPE '\\' "
                                  "ORDER BY id", (escaped + "%",)).fetchall()

    def examples(self, signature: str) -> list[Example]:
        """The kept cases of a bucket, the best first, then smallest first."""
        rows = self._conn.execute(
            "SELECT e.* FROM examples e JOIN buckets b ON b.signature = e.bucket "
            "WHERE e.bucket = ? ORDER BY e.case_id = b.best_case_id DESC, e.tokens, e.chars, "
            "e.seen", (signature,))
        return [Example(case_id=r["case_id"], size=(r["tokens"], r["chars"]), seen=r["seen"],
                        detail=r["detail"], diffs=_diffs_from(r["diffs"])) for r in rows]

    def outcomes(self, case_id: str) -> dict[str, dict[str, Any]]:
        """The recorded outcome summaries of a case, by pipeline label."""
        rows = self._conn.execute("SELECT pipeline, summary FROM outcomes WHERE case_id = ? "
                                  "ORDER BY rowid", (case_id,))
        return {r["pipeline"]: json.loads(r["summary"]) for r in rows}

    def buckets_of_case(self, case_id: str) -> list[Bucket]:
        """The buckets a case is an example (or the best reproducer) of."""
        rows = self._conn.execute(
            "SELECT * FROM buckets WHERE best_case_id = ? OR signature IN "
            "(SELECT bucket FROM examples WHERE case_id = ?) ORDER BY first_seen",
            (case_id, case_id))
        return [_bucket(r) for r in rows]


def _unique(rows: list[sqlite3.Row], prefix: str, what: str) -> sqlite3.Row:
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


_STORE_TABLES = frozenset({"buckets", "cases", "examples", "outcomes"})
_FOREIGN = "an SQLite file without rgpu-fuzz's tables, not a findings store"


def _refuse_foreign(conn: sqlite3.Connection) -> None:
    """Raise `StoreError` for an SQLite file that holds tables but is not a store. Reads
    only; a new (empty) file, or one another process is making a store of right now, passes:
    a store's tables and version are committed in one transaction (`migrate`)."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if (version == 0 and tables) or (version > 0 and not _STORE_TABLES <= tables):
        raise StoreError(_FOREIGN)


def _open_for_reading(path: Path) -> sqlite3.Connection:
    """A store, read without writing to it: an older schema is upgraded in a copy in memory,
    so reading or merging never changes the file. Refuses a file that is not a store."""
    if not path.is_file():
        raise StoreError(f"{path}: no such findings store")
    if path.stat().st_size == 0:
        raise StoreError(f"{path}: an empty file, not a findings store")
    try:
        try:
            src = _connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            version = src.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.OperationalError:
            # a WAL store in a folder we cannot write (no -shm can be made): read it as is
            src = _connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)
            version = src.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if version < 1 or not _STORE_TABLES <= tables:
            src.close()
            raise StoreError(_FOREIGN)
        if version == SCHEMA_VERSION:
            return src
        mem = _connect(":memory:")
        src.backup(mem)
        src.close()
        migrate(mem)
        return mem
    except sqlite3.DatabaseError as e:
        raise StoreError(f"{path}: not a findings store ({e})") from None
    except StoreError as e:
        raise StoreError(f"{path}: {e}") from None


__all__ = [
    "DEFAULT_CAMPAIGN_DIR", "DEFAULT_STORE", "MIGRATIONS", "SCHEMA_VERSION", "STORE_ENV", "Bucket",
    "BucketStatus", "BucketUpdate", "Event", "Example", "FindingStore", "HistoryEntry",
    "IdLookupError", "MergeSummary", "Run", "StoreError", "bucket_id", "case_size",
    "default_store_path", "migrate", "new_run_id", "outcome_summary",
]
