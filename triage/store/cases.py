"""Cases and findings in the findings store: `record` counts a case's findings in their
buckets and keeps the case (canonical `rgpu-case/1` text, never a pickle, so any version
reads it), its outcome summaries, and the examples and best reproducers that refer to it.

Cases and outcomes no example or best reproducer refers to are dropped (`drop_orphans`), so a
store grows with its buckets, not with its campaign's length.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from oracles import Finding, Signature, Verdict
from rgpu_fuzz import casefile
from rgpu_fuzz.lang.lexer import tokenize
from rgpu_fuzz.lang.source import DiagnosticError, SourceFile
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import Ok, Outcome, detail
from triage.store.buckets import (
    BucketStatus,
    BucketTriage,
    BucketUpdate,
    IdLookupError,
    bucket_from_row,
    bucket_id,
    diffs_json,
    unique_row,
)
from triage.store.runs import reopen

EXAMPLES_PER_BUCKET = 5


def case_size(case: Case) -> tuple[int, int]:
    """The shortlex key of a reproducer: kernel tokens, then kernel characters."""
    try:
        tokens = len(tokenize(SourceFile("<store>", case.kernel))) - 1
    except DiagnosticError:
        tokens = len(case.kernel)
    return tokens, len(case.kernel)


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


def offer_best(db: sqlite3.Connection, sig: str, case_id: str,
               size: tuple[int, int]) -> bool:
    cur = db.execute(
        "UPDATE buckets SET best_case_id = ?, best_tokens = ?, best_chars = ? "
        "WHERE signature = ? AND (best_case_id IS NULL OR (best_tokens, best_chars) > (?, ?))",
        (case_id, *size, sig, *size))
    return cur.rowcount > 0


def trim_examples(db: sqlite3.Connection, sig: str) -> None:
    db.execute(
        "DELETE FROM examples WHERE bucket = ? AND case_id NOT IN ("
        " SELECT case_id FROM examples WHERE bucket = ?"
        " ORDER BY case_id = (SELECT best_case_id FROM buckets WHERE signature = ?) DESC,"
        " tokens, chars, seen LIMIT ?)", (sig, sig, sig, EXAMPLES_PER_BUCKET))


def drop_orphans(db: sqlite3.Connection) -> None:
    db.execute("DELETE FROM outcomes WHERE case_id NOT IN (SELECT case_id FROM examples) "
               "AND case_id NOT IN (SELECT best_case_id FROM buckets "
               "WHERE best_case_id IS NOT NULL)")
    db.execute("DELETE FROM cases WHERE id NOT IN (SELECT case_id FROM examples) "
               "AND id NOT IN (SELECT best_case_id FROM buckets "
               "WHERE best_case_id IS NOT NULL)")


class CaseRecords(BucketTriage):
    """Recording cases and findings (a part of `FindingStore`)."""

    def record(self, case: Case, verdict: Verdict,
               outcomes: Mapping[str, Outcome]) -> list[BucketUpdate]:
        """Count one case's findings, one bucket per signature; keep the case as an example
        (and as the best reproducer when it is the smallest yet)."""
        if verdict.agree:
            return []
        if not case.pipelines:
            case = replace(case, pipelines=tuple(outcomes))
        now = time.time()
        by_signature: dict[Signature, Finding] = {}
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
            drop_orphans(db)
        return updates

    def _put_case(self, db: sqlite3.Connection, case: Case, now: float) -> tuple[int, int]:
        size = case_size(case)
        p = case.provenance
        db.execute("INSERT OR IGNORE INTO cases VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (case.id, casefile.dumps(case), *size, p.generator, p.seed, p.parent, now))
        return size

    def _count(self, db: sqlite3.Connection, case_id: str, size: tuple[int, int],
               finding: Finding, now: float) -> BucketUpdate:
        sig = str(finding.signature)  # the stored text (docs/design.md §5)
        row = db.execute("SELECT * FROM buckets WHERE signature = ?", (sig,)).fetchone()
        new = row is None
        if new:
            db.execute("INSERT INTO buckets (signature, id, kind, pipelines, first_seen, "
                       "last_seen, count, first_run) VALUES (?, ?, ?, ?, ?, ?, 0, ?)",
                       (sig, bucket_id(sig), str(finding.kind), ",".join(finding.pipelines),
                        now, now, self.run_id))
        elif row["status"] == BucketStatus.FIXED:
            reopen(db, sig, self.run_id, now, f"found again: case {case_id}")
        db.execute("UPDATE buckets SET count = count + 1, last_seen = max(last_seen, ?), "
                   "first_seen = min(first_seen, ?), last_run = coalesce(?, last_run) "
                   "WHERE signature = ?", (now, now, self.run_id, sig))
        db.execute("INSERT OR IGNORE INTO examples VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (sig, case_id, *size, now, finding.detail, diffs_json(finding.diffs)))
        replaced = offer_best(db, sig, case_id, size)
        trim_examples(db, sig)
        row = db.execute("SELECT * FROM buckets WHERE signature = ?", (sig,)).fetchone()
        return BucketUpdate(bucket=bucket_from_row(row), new=new, best_replaced=replaced)

    def set_best(self, sig: Signature, case: Case, *, finding: Finding | None = None,
                 outcomes: Mapping[str, Outcome] | None = None) -> bool:
        """Offer a (reduced) case as the bucket's reproducer; True when it became the best
        (it must be strictly smaller than the current one)."""
        signature = str(sig)
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
                        diffs_json(finding.diffs) if finding else "[]"))
            replaced = offer_best(db, signature, case.id, size)
            trim_examples(db, signature)
            drop_orphans(db)
        return replaced

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

    def case(self, id_or_prefix: str) -> Case:
        """The stored case whose id starts with `id_or_prefix`."""
        row = unique_row(self._prefix_rows("cases", id_or_prefix), id_or_prefix, "case")
        return casefile.loads(row["toml"], f"{self.path}:case {row['id']}")

    def match_ids(self, prefix: str) -> tuple[list[str], list[str]]:
        """Bucket ids and case ids starting with `prefix` (for lookups across sources)."""
        return ([r["id"] for r in self._prefix_rows("buckets", prefix)],
                [r["id"] for r in self._prefix_rows("cases", prefix)])

    def outcomes(self, case_id: str) -> dict[str, dict[str, Any]]:
        """The recorded outcome summaries of a case, by pipeline label."""
        rows = self._conn.execute("SELECT pipeline, summary FROM outcomes WHERE case_id = ? "
                                  "ORDER BY rowid", (case_id,))
        return {r["pipeline"]: json.loads(r["summary"]) for r in rows}


__all__ = ["EXAMPLES_PER_BUCKET", "CaseRecords", "case_size", "drop_orphans", "offer_best",
           "outcome_summary", "trim_examples"]
