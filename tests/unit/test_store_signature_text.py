"""A store written when signatures were text reads the same now that they are values.

`tests/data/stores/signature-text.sql` is the dump of a store rgpu-fuzz wrote before
`Signature` values were carried end to end (one bucket per signature kind, odd texts
included: a `|` inside a crash line and an invalid-case reason, an empty `ops=`). The
expected texts and ids are read from the dump's own rows, and each id is checked against
sha256 of the text computed here (docs/design.md §5: the first 10 hex), not by the store."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from oracles import Signature
from triage.store import Event, FindingStore

DUMP = Path(__file__).resolve().parents[1] / "data" / "stores" / "signature-text.sql"


@pytest.fixture
def old_store(tmp_path: Path) -> Path:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(DUMP.read_text(encoding="utf-8"))
    conn.close()
    return path


def _rows(path: Path) -> dict[str, str]:
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT signature, id FROM buckets").fetchall())
    finally:
        conn.close()


def test_every_bucket_reads_back_with_its_text_and_id(old_store: Path) -> None:
    rows = _rows(old_store)
    assert len(rows) == 11
    with FindingStore(old_store, readonly=True) as store:
        buckets = store.buckets()
        assert {str(b.signature): b.id for b in buckets} == rows
        for b in buckets:
            assert b.id == hashlib.sha256(str(b.signature).encode()).hexdigest()[:10]
            assert Signature.parse(str(b.signature)) == b.signature
            assert store.bucket(b.id) == b and store.bucket(b.signature) == b
            assert store.examples(b.signature), b.id
    crash = next(b for b in buckets if b.kind == "compile-crash")
    assert crash.signature.stage == "codegen" and crash.signature.detail.endswith("| x")


def test_history_and_counts_of_an_old_store(old_store: Path) -> None:
    with FindingStore(old_store, readonly=True) as store:
        fixed = store.bucket("f73ab06cf7")
        assert str(fixed.signature) == "wrong-code|llvm-cpu-xor2or:O0|ops=neg,xor"
        assert [h.event for h in store.history(fixed.signature)] == [Event.FIXED]
        keyed = store.bucket("6be12135ce")
        assert (keyed.count, keyed.tries, keyed.reproduced) == (2, 1, 1)


def test_writing_to_an_old_store_keeps_its_texts(old_store: Path, tmp_path: Path) -> None:
    """Counting a finding again, a recheck, a reproduction and a merge write the bucket's
    text as it was: no second bucket, no changed id."""
    from oracles import Finding, Verdict

    before = _rows(old_store)
    with FindingStore(old_store) as store:
        for b in store.buckets():
            store.record_reproduction(b.signature, False)
            store.record(store.case(b.best_case_id or ""), Verdict(findings=(Finding(
                kind=b.kind, pipelines=b.pipelines, signature=b.signature),)), {})
        store.begin_run("recheck", ["ref"], {}, "host")
        store.note_recheck(store.bucket("8b830bfb14").signature, Event.REPRODUCES, "again")
        store.end_run()
    assert _rows(old_store) == before
    with FindingStore(tmp_path / "new.sqlite") as merged:
        merged.merge_from(old_store)
    assert _rows(tmp_path / "new.sqlite") == before
