"""A finding without a bug key is not put in a bucket because its kernel holds that bucket's
operations (purity miss: bucket 1b682c54bf `ops=neg,sqrt`, a simulator
bug in VOP3 `neg` on `v_cndmask`, also took an LLVM `srem` bug).

Seed 102205 of the default profile is that `srem` case, c966fd2426ca: LLVM 22.1 lowers the
32-bit bypass block of `srem i64 4294967294, %d` with the 24-bit division
(docs/llvm-bugs/srem64_bypass_urem_24bit.ll; by hand 4294967294 mod 7 = 2, O3 gives 0x737;
tests/sim/test_llvm_bugs_o3.py pins it). Its kernel also holds a `neg` and a `sqrt`, and no
operation of it is wrong alone (the bug needs the constant numerator), so it has no key."""

from __future__ import annotations

from pathlib import Path

from campaigns.executors import LocalExecutor
from campaigns.jobs import Setup
from campaigns.orchestrate import Campaign, CampaignConfig
from oracles import Finding, FindingKind, Signature, Verdict
from rgpu_fuzz.model.scalars import Scalar
from triage.bugkey import TypedOp, probe_case
from triage.store import FindingStore

O3 = "amdgpu-sim:gfx942:O3"
SQRT_BUCKET = f"wrong-code|{O3}|ops=neg,sqrt"
SREM_CASE = "c966fd2426ca"


def test_a_context_bug_is_not_placed_in_a_bucket_by_the_operations_it_holds(
        tmp_path: Path) -> None:
    out = tmp_path / "campaign"
    out.mkdir()
    # the bucket of the other bug, as store held it: `(-a[i]).sqrt()` wrong
    sqrt_case = probe_case(TypedOp("sqrt:float", "(-{0}).sqrt()", (Scalar.F32,), Scalar.F32))
    with FindingStore(out / "findings.sqlite") as store:
        store.record(sqrt_case, Verdict(findings=(Finding(
            kind=FindingKind.WRONG_CODE, pipelines=(O3,),
            signature=Signature.parse(SQRT_BUCKET)),)), {})
    campaign = Campaign(CampaignConfig(
        out=out, setup=Setup(("ref", O3), "default", "default"), seed_start=102205, chunk=1,
        max_cases=1, time_s=300, jobs=1, reduce_budget_s=2.0), executor=LocalExecutor(1))
    try:
        summary = campaign.run().data
    finally:
        campaign.close()
    assert summary["findings"] == 1
    with FindingStore(out / "findings.sqlite", readonly=True) as store:
        placed = [str(b.signature) for b in store.buckets_of_case(SREM_CASE)]
        sqrt = next(b for b in store.buckets() if str(b.signature) == SQRT_BUCKET)
    assert sqrt.count == 1                        # the planted example only
    (srem,) = placed
    assert srem.startswith(f"wrong-code|{O3}|ops=") and srem != SQRT_BUCKET
    assert "rem" in srem.split("ops=")[1].split(",")
