"""The upstream facts of a finding kept in its findings store: the evidence line, the culprit
pass and the probes behind them, per bucket signature, so `triage show` prints them without
rerunning anything.

They live in a table of their own, `upstream_facts`, made on first write with
`CREATE TABLE IF NOT EXISTS` through a connection of this module's: the store's schema and
its versioned migrations (`triage/store_schema.py`) do not know it, and a store without it
simply has no facts. The latest write for a signature wins.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from triage.culprit import Culprit
from triage.evidence import Evidence

TABLE = """CREATE TABLE IF NOT EXISTS upstream_facts (
    signature TEXT PRIMARY KEY,
    case_id TEXT NOT NULL,
    spec TEXT NOT NULL,
    evidence TEXT NOT NULL,
    culprit TEXT NOT NULL,
    probes TEXT NOT NULL,
    at REAL NOT NULL)"""


@dataclass(frozen=True)
class StoredFacts:
    signature: str
    case_id: str
    spec: str
    evidence: str
    """The evidence line (`triage.evidence.Evidence.line`)."""
    culprit: str
    """The culprit line (`triage.culprit.Culprit.line`)."""
    probes: tuple[dict[str, object], ...]
    at: float


def record_facts(store: Path, facts: StoredFacts) -> None:
    """Keep `facts` in `store` (replacing those of the same signature)."""
    with sqlite3.connect(store, timeout=30) as db:
        db.execute(TABLE)
        db.execute("INSERT OR REPLACE INTO upstream_facts VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (facts.signature, facts.case_id, facts.spec, facts.evidence,
                    facts.culprit, json.dumps(list(facts.probes)), facts.at))
    db.close()


def load_facts(store: Path, signature: str) -> StoredFacts | None:
    """The facts kept for `signature`, or None (none kept, no such table, no store)."""
    if not store.is_file():
        return None
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30)
    try:
        row = db.execute("SELECT * FROM upstream_facts WHERE signature = ?",
                         (signature,)).fetchone()
    except sqlite3.OperationalError:
        return None
    finally:
        db.close()
    if row is None:
        return None
    return StoredFacts(row[0], row[1], row[2], row[3], row[4], tuple(json.loads(row[5])),
                       row[6])


def facts_of(signature: str, case_id: str, evidence: Evidence, culprit: Culprit
             ) -> StoredFacts:
    """The record of an evidence line and a culprit search of one finding."""
    return StoredFacts(signature, case_id, evidence.spec, evidence.line(), culprit.line(),
                       tuple(asdict(p) for p in evidence.probes), time.time())


__all__ = ["StoredFacts", "facts_of", "load_facts", "record_facts"]
