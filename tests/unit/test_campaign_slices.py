"""Reductions run as time slices (`CampaignConfig.reduce_slice_s`), so that with one worker
the campaign's chunks go on while a finding is reduced (one 60-s reduction job used
to hold every chunk queued behind it for 60 s).

The seeded bug is `rgpu_fuzz/bench/seeded/miscompile.py` (the first `xor` of the IR becomes `or`):
seeds 48..71 hold kernels it changes (59 and 62 among them tests/unit/test_executor_ray.py). Each
reduction candidate is compiled by LLVM, so a reduction takes seconds, not milliseconds."""

from __future__ import annotations

from pathlib import Path

from campaigns.executors import LocalExecutor
from campaigns.jobs import Setup
from campaigns.orchestrate import Campaign, CampaignConfig
from rgpu_fuzz import casefile
from tests.unit.test_campaign import MISCOMPILE
from triage.store import FindingStore


def test_chunks_run_between_the_slices_of_a_reduction(tmp_path: Path) -> None:
    setup = Setup(("ref", "llvm-cpu-xor2or:O0"), "default", "default", (str(MISCOMPILE),))
    out = tmp_path / "out"
    during: list[int] = []   # chunks finished while a reduction was under way

    def watch(c: Campaign) -> None:
        if c.pending_reductions:
            during.append(c.tally.chunks)

    campaign = Campaign(CampaignConfig(out=out, setup=setup, seed_start=48, chunk=2,
                                       max_cases=24, time_s=300, jobs=1,
                                       reduce_budget_s=8, reduce_slice_s=0.25),
                        on_progress=watch, executor=LocalExecutor(1))
    try:
        data = campaign.run().data
    finally:
        campaign.close()
    reductions = data["reductions"]
    assert reductions and all(r["reproduced"] for r in reductions)
    assert max(r["slices"] for r in reductions) >= 2, reductions
    # one job at a time, FIFO: without slices at most one chunk (queued before the
    # reduction) can finish while it runs
    assert during and max(during) - min(during) >= 3, during
    with FindingStore(out / "findings.sqlite", readonly=True) as store:
        for b in store.buckets():
            reduced = casefile.load(out / "reduced" / f"{b.id}.toml")
            original = store.case(reduced.provenance.parent)   # the generated case itself
            assert original.provenance.seed is not None and 48 <= original.provenance.seed < 72
            assert len(reduced.kernel) < len(original.kernel)
