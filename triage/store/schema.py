"""The findings store's file: its schema and migrations, how it is opened, and the one write
transaction every part of `FindingStore` uses (`StoreBase`).

Rules:
* the schema is versioned by `PRAGMA user_version` and only ever upgraded by appending to
  `MIGRATIONS`; an old file is upgraded in place when opened for writing, in a copy in
  memory when opened read-only;
* several processes may write one file at once: WAL journal, a busy timeout, and every
  read-modify-write inside one `BEGIN IMMEDIATE` transaction, so no count is lost;
* a file that is not a store (empty, not SQLite, SQLite without these tables) is refused
  with a `StoreError`, never given a schema.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rgpu_fuzz.model.errors import RgpuError

BUSY_TIMEOUT_MS = 60_000

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
    # v4: runs with the versions of every pipeline's tools, which run filed,
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
    # v5: bug-key probe answers per toolchain fingerprint (probes.py)
    """
    CREATE TABLE probes (
        toolchain TEXT NOT NULL,
        pipeline  TEXT NOT NULL,
        op        TEXT NOT NULL,
        broken    INTEGER NOT NULL,
        run       TEXT,
        at        REAL NOT NULL,
        PRIMARY KEY (toolchain, pipeline, op)
    );
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


class StoreError(RgpuError):
    """A store file that cannot be used (not SQLite, newer schema); `str()` is one line."""


def connect(path: str, **kwargs: Any) -> sqlite3.Connection:
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


_STORE_TABLES = frozenset({"buckets", "cases", "examples", "outcomes"})
_FOREIGN = "an SQLite file without rgpu-fuzz's tables, not a findings store"


def refuse_foreign(conn: sqlite3.Connection) -> None:
    """Raise `StoreError` for an SQLite file that holds tables but is not a store. Reads
    only; a new (empty) file, or one another process is making a store of right now, passes:
    a store's tables and version are committed in one transaction (`migrate`)."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if (version == 0 and tables) or (version > 0 and not _STORE_TABLES <= tables):
        raise StoreError(_FOREIGN)


def open_for_reading(path: Path) -> sqlite3.Connection:
    """A store, read without writing to it: an older schema is upgraded in a copy in memory,
    so reading or merging never changes the file. Refuses a file that is not a store."""
    if not path.is_file():
        raise StoreError(f"{path}: no such findings store")
    if path.stat().st_size == 0:
        raise StoreError(f"{path}: an empty file, not a findings store")
    try:
        try:
            src = connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            version = src.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.OperationalError:
            # a WAL store in a folder we cannot write (no -shm can be made): read it as is
            src = connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)
            version = src.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if version < 1 or not _STORE_TABLES <= tables:
            src.close()
            raise StoreError(_FOREIGN)
        if version == SCHEMA_VERSION:
            return src
        mem = connect(":memory:")
        src.backup(mem)
        src.close()
        migrate(mem)
        return mem
    except sqlite3.DatabaseError as e:
        raise StoreError(f"{path}: not a findings store ({e})") from None
    except StoreError as e:
        raise StoreError(f"{path}: {e}") from None


class StoreBase:
    """What every part of `FindingStore` shares: the file, the connection, the current run,
    and the write transaction."""

    path: Path
    readonly: bool
    run_id: str | None
    """The run (`begin_run`) that findings recorded now belong to."""
    _conn: sqlite3.Connection

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


__all__ = ["BUSY_TIMEOUT_MS", "MIGRATIONS", "SCHEMA_VERSION", "StoreBase", "StoreError", "connect",
           "migrate", "open_for_reading", "refuse_foreign"]
