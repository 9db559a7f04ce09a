"""The findings store (docs/design.md §2 "Bucket and store"): one SQLite file per campaign.

Findings are bucketed by signature (a bucket names a bug, not a case). Each bucket keeps how
often and when it was seen, its triage status, how often `reproduce` saw it again, its best
reproducer and a few examples; runs record the tool versions each campaign or recheck saw;
bug-key probe answers are kept per toolchain.

`FindingStore` is one object over one connection, made of parts that each do one job:

* `schema` — the file: migrations, opening (read-only in a copy), the write transaction;
* `buckets` — buckets: values, reading, triage status;
* `cases` — cases and findings: `record`, best reproducers, examples, outcomes, plugins;
* `runs` — runs and bucket history: `begin_run`, `note_recheck`, regressions;
* `merge` — `merge_from` (a union of two stores);
* `probes` — bug-key probe answers.

The rest of the project imports from this face (`triage.store`), not from its parts.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from triage.store.buckets import (
    BUCKET_ID_LEN,
    Bucket,
    BucketStatus,
    BucketUpdate,
    Example,
    IdLookupError,
    ambiguous_message,
    bucket_id,
)
from triage.store.cases import (
    EXAMPLES_PER_BUCKET,
    CaseRecords,
    case_size,
    outcome_summary,
)
from triage.store.merge import MergeSummary, StoreMerge
from triage.store.probes import ProbeCache, probe_toolchain
from triage.store.runs import Event, HistoryEntry, Run, RunLog, new_run_id
from triage.store.schema import (
    BUSY_TIMEOUT_MS,
    MIGRATIONS,
    SCHEMA_VERSION,
    StoreError,
    connect,
    migrate,
    open_for_reading,
    refuse_foreign,
)

DEFAULT_CAMPAIGN_DIR = Path("runs") / "campaign"
"""Where `campaign` writes when no `--out` is given."""
DEFAULT_STORE = DEFAULT_CAMPAIGN_DIR / "findings.sqlite"
"""The one default store: what a campaign without `--out` writes and every reader reads."""
STORE_ENV = "RGPU_FUZZ_STORE"


def default_store_path() -> Path:
    """`$RGPU_FUZZ_STORE`, or `runs/campaign/findings.sqlite` (the default campaign's)."""
    env = os.environ.get(STORE_ENV)
    return Path(env) if env else DEFAULT_STORE


class FindingStore(CaseRecords, RunLog, StoreMerge, ProbeCache):
    """Buckets of findings in one SQLite file.

    Opened for writing (the default), a missing file is created and an older store upgraded;
    opened `readonly` (what `triage list/show`, `report` and lookups need), the file is never
    written: an older schema is upgraded in a copy in memory, so a store on a read-only disk
    can still be read. Either way a file that is not a store (empty, not SQLite, or SQLite
    without this schema) is refused with a `StoreError`, never given a schema."""

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self.run_id = None
        if readonly:
            self._conn = open_for_reading(self.path)
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"{self.path}: cannot create its folder: "
                             f"{e.strerror or e}") from None
        try:
            self._conn = connect(str(self.path))
            refuse_foreign(self._conn)  # before anything is written into the file
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


__all__ = [
    "BUCKET_ID_LEN", "BUSY_TIMEOUT_MS", "DEFAULT_CAMPAIGN_DIR", "DEFAULT_STORE",
    "EXAMPLES_PER_BUCKET", "MIGRATIONS", "SCHEMA_VERSION", "STORE_ENV", "Bucket",
    "BucketStatus", "BucketUpdate", "Event", "Example", "FindingStore", "HistoryEntry",
    "IdLookupError", "MergeSummary", "Run", "StoreError", "ambiguous_message", "bucket_id",
    "case_size", "default_store_path", "migrate", "new_run_id", "outcome_summary",
    "probe_toolchain",
]
