"""Quality: a seeded bug found by a real campaign lands in one bucket with bug keys, where
the `ops=` bucketing of the same seeds made several ("one bug → one bucket").

Seeds 40..63 hold four kernels that `llvm-cpu-fptosi` (rgpu_fuzz/bench/seeded/fptosi_plain.py:
float→int `as` without saturation) miscompiles, found by a 60-second campaign of main before
bug keys; their reduced kernels keep different surrounding operations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from campaigns.jobs import Setup
from campaigns.orchestrate import Campaign, CampaignConfig
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin

pytestmark = pytest.mark.slow

PLUGIN = seeded_plugin("fptosi_plain.py")
SPEC = "llvm-cpu-fptosi:O0"


def _campaign(out: Path, bug_keys: bool) -> dict[str, Any]:
    config = CampaignConfig(out=out, setup=Setup(("ref", SPEC), "default", "default",
                                                 (str(PLUGIN),)),
                            seed_start=40, chunk=8, time_s=600.0, max_cases=24, jobs=1,
                            reduce_budget_s=30.0, bug_keys=bug_keys)
    campaign = Campaign(config)
    try:
        return campaign.run().data
    finally:
        campaign.close()


def test_the_seeded_fptosi_bug_is_one_bucket(tmp_path: Path) -> None:
    before = _campaign(tmp_path / "ops", bug_keys=False)
    after = _campaign(tmp_path / "key", bug_keys=True)
    assert before["cases_with_findings"] == after["cases_with_findings"] >= 4
    assert len(before["buckets"]) >= 2
    assert [b["signature"] for b in after["buckets"]] == [f"wrong-code|{SPEC}|probe=as:float->int"]
    assert after["buckets"][0]["count"] == after["cases_with_findings"]
