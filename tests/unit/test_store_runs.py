"""The store's runs and bucket history (schema v4): a v3 store upgrades in place; a
fixed bucket that a campaign finds again, or that another store saw after the fix, is
reopened as a regression; merging carries runs and history over."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from tests.unit.test_store import SIG, SIG_V, make_case, outcomes, verdict
from triage.store import BucketStatus, Event, FindingStore, bucket_id, migrate

VERSIONS = {"llvm": "LLVM 22.1.0", "rgpu-fuzz": "0.1.0 abc"}


def test_a_v3_store_gains_runs_and_keeps_its_buckets(tmp_path: Path) -> None:
    path = tmp_path / "v3.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, upto=3) == 3
    conn.execute("INSERT INTO buckets (signature, id, kind, pipelines, first_seen, last_seen, "
                 "count, status) VALUES (?, ?, 'wrong-code', 'ref,llvm-cpu:O3', 1.0, 2.0, 7, "
                 "'filed')", (SIG, bucket_id(SIG)))
    conn.close()
    with FindingStore(path) as s:
        b = s.bucket(SIG)
        assert (b.count, b.status, b.first_run, b.regressions, b.regression) == (
            7, BucketStatus.FILED, None, 0, False)
        run = s.begin_run("recheck", ("ref",), VERSIONS, "host")
        s.note_recheck(SIG_V, Event.FIXED, "agrees")
        s.end_run()
        b = s.bucket(SIG)
        assert (b.status, b.fixed_run) == (BucketStatus.FIXED, run.id)
        assert s.run(run.id).versions == VERSIONS and s.run(run.id).ended is not None


def test_a_campaign_that_finds_a_fixed_bucket_again_reopens_it(tmp_path: Path) -> None:
    with FindingStore(tmp_path / "s.sqlite") as s:
        first = s.begin_run("campaign", ("ref", "llvm-cpu:O3"), VERSIONS, "host")
        s.record(make_case(), verdict(), outcomes(3))
        s.set_status(bucket_id(SIG), "fixed")
        assert s.bucket(SIG).fixed_at is not None
        second = s.begin_run("campaign", ("ref", "llvm-cpu:O3"), VERSIONS, "host")
        s.record(make_case("out[0] = 7u32;"), verdict(), outcomes(3))
        b = s.bucket(SIG)
        assert (b.status, b.regressions, b.regression) == (BucketStatus.NEW, 1, True)
        assert (b.first_run, b.last_run, b.count) == (first.id, second.id, 2)
        (entry,) = s.history(SIG_V)
        assert (entry.event, entry.run) == (Event.REGRESSED, second.id)


def test_merge_reopens_a_bucket_seen_after_its_fix(tmp_path: Path) -> None:
    with FindingStore(tmp_path / "old.sqlite") as o:  # a store from before the fix
        o.record(make_case("out[0] = 5u32;"), verdict(), outcomes(3))
    time.sleep(0.01)
    with FindingStore(tmp_path / "history.sqlite") as h:
        h.begin_run("campaign", ("ref",), VERSIONS, "night-1")
        h.record(make_case(), verdict(), outcomes(3))
        fix = h.begin_run("recheck", ("ref",), VERSIONS, "night-1")
        h.note_recheck(SIG_V, Event.FIXED, "agrees")
    time.sleep(0.01)
    with FindingStore(tmp_path / "tonight.sqlite") as t:
        tonight = t.begin_run("campaign", ("ref",), VERSIONS, "night-2")
        t.record(make_case("out[0] = 9u32;"), verdict(), outcomes(3))
    with FindingStore(tmp_path / "history.sqlite") as h:
        h.merge_from(tmp_path / "old.sqlite")
        assert h.bucket(SIG).status is BucketStatus.FIXED   # seen before the fix only
        h.merge_from(tmp_path / "tonight.sqlite")
        b = h.bucket(SIG)
        assert (b.status, b.regressions, b.fixed_run, b.last_run) == (
            BucketStatus.NEW, 1, fix.id, tonight.id)
        assert [e.event for e in h.history(SIG_V)] == [Event.FIXED, Event.REGRESSED]
        assert {r.id for r in h.runs()} >= {fix.id, tonight.id}
        assert h.run(tonight.id).host == "night-2"
