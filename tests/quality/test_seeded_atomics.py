"""Quality: the three seeded atomics bugs (`rgpu_fuzz/bench/seeded/`) are found by a short
campaign of the `atomics` profile, bucketed under their own pipeline and reduced to a few
lines that still show them:

* `rmw_split.py`: `atomicrmw add` rewritten into load, add and store (wrong code; the
  campaign's generated counters have several lanes of one wave on one address, which the
  default schedule already shows; `tests/sim/test_interleave.py` has the one-lane-per-wave
  kernel only interleaving shows);
* `dpp_step.py`: the first `row_shr:1` of the atomic optimizer's DPP scan made `row_shr:2`
  (wrong code, `atomic-opt=dpp`);
* `scope_bit.py`: the scope of the first agent- or system-scope atomic narrowed (gfx942:
  `sc1` dropped; gfx1200: SCOPE's high bit, SYS -> SE and DEV -> CU) (`memory-model-sequence`,
  the code-sequence check).

Seeds 8..15 of the `atomics` profile hold cases each bug changes (seed 8 and seed 10 for the
first two, found by a 16-case campaign of each)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from campaigns.jobs import Setup
from campaigns.orchestrate import Campaign, CampaignConfig
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from triage.store import FindingStore

pytestmark = pytest.mark.slow

SEED_START, CASES = 8, 8


def _campaign(out: Path, plugin: str, spec: str) -> dict[str, Any]:
    config = CampaignConfig(out=out, setup=Setup(("ref", spec), "atomics", "default",
                                                 (str(seeded_plugin(plugin)),)),
                            seed_start=SEED_START, chunk=8, time_s=900.0, max_cases=CASES,
                            jobs=1, reduce_budget_s=60.0)
    campaign = Campaign(config)
    try:
        return campaign.run().data
    finally:
        campaign.close()


@pytest.mark.parametrize(("plugin", "spec", "prefix"), [
    ("rmw_split.py", "amdgpu-sim-rmwsplit:gfx942:O0:interleave=1",
     "wrong-code|amdgpu-sim-rmwsplit:gfx942:O0:interleave=1|"),
    ("dpp_step.py", "amdgpu-sim-dppstep:gfx942:O3:atomic-opt=dpp",
     "wrong-code|amdgpu-sim-dppstep:gfx942:O3:atomic-opt=dpp|"),
    ("scope_bit.py", "amdgpu-sim-scopebit:gfx942:O3",
     "compile-crash|amdgpu-sim-scopebit:gfx942:O3|memory-model|memory-model-sequence: "),
    ("scope_bit.py", "amdgpu-sim-scopebit:gfx1200:O3",
     "compile-crash|amdgpu-sim-scopebit:gfx1200:O3|memory-model|memory-model-sequence: "),
])
def test_a_seeded_atomics_bug_is_found_and_reduced(tmp_path: Path, plugin: str, spec: str,
                                                   prefix: str) -> None:
    out = tmp_path / "campaign"
    summary = _campaign(out, plugin, spec)
    assert summary["cases"] == CASES
    assert summary["cases_with_findings"] >= 1
    assert summary["reductions"] and all(r["reproduced"] for r in summary["reductions"])
    with FindingStore(out / "findings.sqlite") as store:
        buckets = store.buckets()
        assert buckets
        for b in buckets:
            assert str(b.signature).startswith(prefix), b.signature
            assert b.best_case_id is not None
            kernel = store.case(b.best_case_id).kernel
            assert len(kernel.strip().splitlines()) <= 12, kernel
            assert "Atomic" in kernel, kernel
