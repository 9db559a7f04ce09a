"""Bug-key probes run in the campaign's workers and their answers are kept in the store
(probes used to run serially in the campaign's own process, blocking its loop, and
were forgotten at the end of every run).

The seeded bug is `rgpu_fuzz/bench/seeded/fptosi_plain.py`: `llvm.fpto[su]i.sat` lowered as plain
`fptosi`/`fptoui`, so by Rust's `as` rules (saturate, NaN -> 0; docs/language.md) exactly the
float -> int casts are wrong and nothing else is. Seed 42 of the default profile holds such a
cast (found by a 48-case campaign from seed 0, where it was the one finding).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from campaigns import jobs as campaign_jobs
from campaigns.executors import LocalExecutor
from campaigns.jobs import Setup
from campaigns.orchestrate import Campaign, CampaignConfig
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from triage.store import FindingStore, probe_toolchain

FPTOSI = seeded_plugin("fptosi_plain.py")
SETUP = Setup(("ref", "llvm-cpu-fptosi:O0"), "default", "default", (str(FPTOSI),))
KEY = "wrong-code|llvm-cpu-fptosi:O0|probe=as:float->int"


def run(out: Path) -> dict[str, Any]:
    campaign = Campaign(CampaignConfig(out=out, setup=SETUP, seed_start=40, chunk=4,
                                       max_cases=4, time_s=300, jobs=1, reduce_budget_s=3),
                        executor=LocalExecutor(1))
    try:
        return campaign.run().data
    finally:
        campaign.close()


def test_probes_run_in_the_workers_and_the_store_keeps_their_answers(tmp_path: Path) -> None:
    campaign_jobs._keys.clear()
    campaign_jobs._cache.pop(SETUP, None)
    first = run(tmp_path / "first")
    # this process is the campaign's: it made no pipeline and probed nothing itself
    assert SETUP not in campaign_jobs._cache and not campaign_jobs._keys
    assert first["probes"] > 0 and first["probe_seconds"] > 0
    assert [b["signature"] for b in first["buckets"]] == [KEY]
    with FindingStore(tmp_path / "first" / "findings.sqlite", readonly=True) as store:
        (run_row,) = store.runs("campaign")
        answers = store.probe_answers(probe_toolchain(run_row.versions, "default"))
    assert {a.pipeline for a in answers} == {"llvm-cpu-fptosi:O0"}
    assert {a.op.family for a in answers if a.broken} == {"as:float->int"}
    assert any(not a.broken and a.op.family.startswith("copy:") for a in answers)

    # the same seeds again, on a copy of that store: every answer is known, nothing is probed
    (tmp_path / "second").mkdir()
    shutil.copy(tmp_path / "first" / "findings.sqlite", tmp_path / "second")
    second = run(tmp_path / "second")
    assert second["probes"] == 0 and second["findings"] == first["findings"] > 0
    assert [b["signature"] for b in second["buckets"]] == [KEY]


def test_a_v4_store_gains_the_probe_table_keeps_its_buckets_and_merges_answers(
        tmp_path: Path) -> None:
    import sqlite3

    from rgpu_fuzz.model.scalars import Scalar
    from triage.bugkey import ProbeAnswer, TypedOp
    from triage.store import migrate

    path = tmp_path / "v4.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, upto=4) == 4
    conn.execute("INSERT INTO buckets (signature, id, kind, pipelines, first_seen, last_seen, "
                 "count) VALUES ('wrong-code|p|ops=xor', 'abc', 'wrong-code', 'ref,p', 1, 2, 3)")
    conn.close()
    cast = TypedOp(family="as:float->int", template="{0} as i32", operands=(Scalar.F32,),
                   result=Scalar.I32)
    with FindingStore(path) as s:
        assert s.bucket("abc").count == 3
        assert s.probe_answers("t1") == []
        s.record_probes("t1", [ProbeAnswer("p", cast, True)])
        s.record_probes("t1", [ProbeAnswer("p", cast, False)])  # the first answer stays
        assert s.probe_answers("t1") == [ProbeAnswer("p", cast, True)]
        assert s.probe_answers("t2") == []   # another toolchain knows nothing
    with FindingStore(tmp_path / "merged.sqlite") as m:
        m.merge_from(path)
        assert m.probe_answers("t1") == [ProbeAnswer("p", cast, True)]
