"""The findings store (docs/design.md §2): buckets, best reproducers, merging, migrations, ids,
and several writer processes on one file."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from oracles import ElementDiff, Finding, FindingKind, Signature, Verdict
from rgpu_fuzz.model.case import BufferArg, Case, Fill, Launch
from rgpu_fuzz.model.outcome import Buffer, Ok, Stats
from rgpu_fuzz.model.scalars import Scalar
from triage.store import (
    SCHEMA_VERSION,
    BucketStatus,
    FindingStore,
    IdLookupError,
    bucket_id,
    migrate,
)

SIG = "wrong-code|llvm-cpu:O3|ops=+"
SIG_V = Signature.parse(SIG)
REPO = Path(__file__).resolve().parents[2]


def make_case(body: str = "out[0] = 1u32;", n: int = 4) -> Case:
    kernel = f"use rgpu::*;\n\n#[kernel]\npub fn k(out: &mut [u32]) {{\n    {body}\n}}\n"
    return Case(entry="k", kernel=kernel, launch=Launch(),
                args=(BufferArg(name="out", elem=Scalar.U32, len=n, init=Fill(0)),))


def verdict(sig: str = SIG, kind: FindingKind = FindingKind.WRONG_CODE) -> Verdict:
    diff = ElementDiff("out", 0, "1", 1, "3", 3)
    return Verdict(findings=(Finding(kind=kind, pipelines=("ref", "llvm-cpu:O3"),
                                     signature=Signature.parse(sig),
                                     detail="1 element differs", diffs=(diff,),
                                     differing_elements=1),))


def outcomes(value: int = 1) -> dict[str, Ok]:
    def ok(v: int) -> Ok:
        return Ok(outputs={"out": Buffer(Scalar.U32, np.array([v, 0, 0, 0], dtype=np.uint32))},
                  stats=Stats(seconds={"total": 0.5}, artefacts={"llvm-ir": "ab" * 32}))

    return {"ref": ok(1), "llvm-cpu:O3": ok(value)}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[FindingStore]:
    with FindingStore(tmp_path / "f.sqlite") as s:
        yield s


def test_same_signature_twice_is_one_bucket_counted_twice(store: FindingStore) -> None:
    (first,) = store.record(make_case(), verdict(), outcomes(3))
    (second,) = store.record(make_case("out[1] = 2u32;"), verdict(), outcomes(3))
    assert first.new and not second.new
    (b,) = store.buckets()
    assert b.count == 2 and str(b.signature) == SIG and b.id == bucket_id(SIG)
    assert b.kind == "wrong-code" and b.pipelines == ("ref", "llvm-cpu:O3")
    assert b.first_seen <= b.last_seen and b.status is BucketStatus.NEW
    assert len(b.id) == 10


def test_agreeing_verdict_records_nothing(store: FindingStore) -> None:
    assert store.record(make_case(), Verdict(), outcomes()) == []
    assert store.buckets() == []


def test_best_reproducer_is_replaced_only_by_a_smaller_case(store: FindingStore) -> None:
    big = make_case("out[0] = 1u32 + 2u32 * 3u32;")
    small = make_case("out[0] = 7u32;")
    bigger = make_case("out[0] = 1u32 + 2u32 * 3u32 + 4u32;")
    (u,) = store.record(big, verdict(), outcomes(3))
    assert u.best_replaced and u.bucket.best_case_id == big.id
    (u,) = store.record(small, verdict(), outcomes(3))
    assert u.best_replaced and u.bucket.best_case_id == small.id
    (u,) = store.record(bigger, verdict(), outcomes(3))
    assert not u.best_replaced and u.bucket.best_case_id == small.id
    assert store.case(small.id).kernel == small.kernel
    assert store.case(small.id).pipelines == ("ref", "llvm-cpu:O3")  # for `reproduce`


def test_set_best_takes_a_reduced_case(store: FindingStore) -> None:
    store.record(make_case("out[0] = 1u32 + 2u32;"), verdict(), outcomes(3))
    reduced = make_case("out[0] = 3u32;")
    assert store.set_best(SIG_V, reduced)
    assert not store.set_best(SIG_V, make_case("out[0] = 1u32 + 2u32 + 9u32;"))
    assert store.bucket(bucket_id(SIG)).best_case_id == reduced.id


def test_at_most_five_examples_the_smallest_kept(store: FindingStore) -> None:
    cases = [make_case(" + ".join(["1u32"] * (i + 1)).join(["out[0] = ", ";"]))
             for i in range(8)]
    for c in reversed(cases):
        store.record(c, verdict(), outcomes(3))
    kept = [e.case_id for e in store.examples(SIG_V)]
    assert kept == [c.id for c in cases[:5]]
    assert store.examples(SIG_V)[0].diffs[0].actual_bits == 3
    assert store.outcomes(cases[0].id)["llvm-cpu:O3"]["artefacts"]["llvm-ir"] == "ab" * 32
    with pytest.raises(IdLookupError):
        store.case(cases[7].id)  # evicted examples do not pile up


def test_status_and_reproduction_rate(store: FindingStore) -> None:
    store.record(make_case(), verdict(), outcomes(3))
    b = store.set_status(bucket_id(SIG)[:4], "filed", note="upstream #12")
    assert b.status is BucketStatus.FILED and b.note == "upstream #12"
    store.record_reproduction(SIG_V, True)
    store.record_reproduction(SIG_V, False)
    b = store.bucket(b.id)
    assert (b.tries, b.reproduced, b.reproduction_rate) == (2, 1, 0.5)
    assert store.buckets(status="filed") == [b] and store.buckets(status="new") == []
    with pytest.raises(IdLookupError, match="unknown status"):
        store.set_status(b.id, "done")


def test_merge_two_files(tmp_path: Path) -> None:
    other_sig = "compile-crash|llvm-cpu:O0|codegen|LLVM ERROR: x"
    small, big = make_case("out[0] = 2u32;"), make_case("out[0] = 2u32 + 5u32;")
    with FindingStore(tmp_path / "a.sqlite") as a:
        a.record(big, verdict(), outcomes(3))
        a.record(big, verdict(), outcomes(3))
    with FindingStore(tmp_path / "b.sqlite") as b:
        b.record(small, verdict(), outcomes(3))
        b.record(make_case(), verdict(other_sig, FindingKind.COMPILE_CRASH), outcomes())
        b.set_status(bucket_id(other_sig), "filed")
    with FindingStore(tmp_path / "a.sqlite") as a:
        summary = a.merge_from(tmp_path / "b.sqlite")
        assert (summary.buckets, summary.new_buckets) == (2, 1)
        merged = {str(bk.signature): bk for bk in a.buckets(order_by="count")}
        assert merged[SIG].count == 3
        assert merged[SIG].best_case_id == small.id
        assert merged[other_sig].count == 1 and merged[other_sig].status is BucketStatus.FILED
        assert a.case(small.id).kernel == small.kernel
        first_a = merged[SIG].first_seen
    with FindingStore(tmp_path / "b.sqlite") as b:
        assert b.bucket(bucket_id(SIG)).count == 1  # the source is not changed
        assert b.bucket(bucket_id(SIG)).first_seen >= first_a


def test_migration_from_v1_keeps_data(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, upto=1) == 1
    conn.execute("INSERT INTO buckets (signature, id, kind, pipelines, first_seen, last_seen, "
                 "count) VALUES (?, ?, 'wrong-code', 'ref,llvm-cpu:O3', 1.0, 2.0, 7)",
                 (SIG, bucket_id(SIG)))
    conn.close()
    with FindingStore(path) as s:
        b = s.bucket(bucket_id(SIG))
        assert (b.count, b.tries, b.reproduced, b.note) == (7, 0, 0, "")
        s.record_reproduction(SIG_V, True)
    version = sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0]
    assert version == SCHEMA_VERSION >= 2


def test_merge_reads_an_old_file_without_upgrading_it(tmp_path: Path) -> None:
    old = tmp_path / "old.sqlite"
    conn = sqlite3.connect(old, isolation_level=None)
    migrate(conn, upto=1)
    conn.execute("INSERT INTO buckets (signature, id, kind, pipelines, first_seen, last_seen, "
                 "count) VALUES (?, ?, 'wrong-code', 'ref', 1.0, 2.0, 4)", (SIG, bucket_id(SIG)))
    conn.close()
    with FindingStore(tmp_path / "new.sqlite") as s:
        s.merge_from(old)
        assert s.bucket(SIG).count == 4
    assert sqlite3.connect(old).execute("PRAGMA user_version").fetchone()[0] == 1


def test_not_a_store_is_one_line(tmp_path: Path) -> None:
    from triage.store import StoreError

    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(StoreError, match=r"junk\.sqlite: not a findings store"):
        FindingStore(junk)


def test_prefix_lookup_errors(store: FindingStore) -> None:
    cases = [make_case(f"out[0] = {i}u32;") for i in range(40)]
    for c in cases:
        store.record(c, verdict(f"sig-{c.id}"), outcomes(3))
    with pytest.raises(IdLookupError) as e:
        store.case("")
    with pytest.raises(IdLookupError) as e:
        store.case("zz")
    assert str(e.value) == "no case matches 'zz'"
    by_first: dict[str, list[str]] = {}
    for c in cases:
        by_first.setdefault(c.id[0], []).append(c.id)
    digit, ids = max(by_first.items(), key=lambda kv: len(kv[1]))
    assert len(ids) >= 3
    with pytest.raises(IdLookupError) as e:
        store.case(digit)
    msg = str(e.value)
    assert msg.startswith(f"'{digit}' is ambiguous: matches {len(ids)} cases (")
    assert "\n" not in msg and msg.endswith(", ...)")
    assert store.case(cases[0].id[:8]).id == cases[0].id
    assert isinstance(e.value, LookupError)


_WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from test_store import make_case, outcomes, verdict
    from triage.store import FindingStore
    with FindingStore(sys.argv[1]) as s:
        for i in range(int(sys.argv[2])):
            s.record(make_case(f"out[0] = {{i % 7}}u32;"), verdict(), outcomes(3))
""")


def test_concurrent_writers_lose_no_counts(tmp_path: Path) -> None:
    db = tmp_path / "shared.sqlite"
    script = _WRITER.format(tests=str(Path(__file__).parent))
    procs = [subprocess.Popen([sys.executable, "-c", script, str(db), "40"], cwd=REPO,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    with FindingStore(db) as s:
        (b,) = s.buckets()
        assert b.count == 80
        assert len(s.examples(SIG_V)) == 5
