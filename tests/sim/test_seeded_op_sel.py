"""The seeded packed-math bug (`rgpu_fuzz/bench/seeded/op_sel.py`, pipeline
`amdgpu-sim-opsel`): a code-object hook flips OPSEL[0] (bit 11 of the first dword, CDNA3 and
RDNA3 VOP3P format) of the first `v_pk_*` instruction. The hook changes exactly that bit;
on a hand-written case whose i16 loop LLVM's loop vectorizer runs two iterations at a time
(`data/cases/o3_i16_loop_packed.toml`: `v_pk_mul_lo_u16 v11, v5, 3 op_sel_hi:[1,0]`, the
induction variables of iterations i and i+1 in one VGPR) the simulated result differs from
`ref` on every target, the oracle reports wrong code, and the reducer shrinks the case
while the finding holds. A short `half` campaign finds it too: the SLP vectoriser packs the
profile's pairs of 16-bit values (`toolchain.tuning_options`) and the final writes store
pairs (`generators/half.py`, `final_pair`), so the packed result reaches an output; measured
over `half` seeds 0..199 at gfx942 O3, 53 kernels have a packed instruction and 18 show the
flip (none before either change)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from campaigns.config import CampaignConfig
from campaigns.jobs import Setup
from campaigns.orchestrate import Campaign
from oracles import judge, load_policy
from rgpu_fuzz import casefile
from rgpu_fuzz.bench.seeded import plugin
from rgpu_fuzz.bench.seeded.op_sel import flip_op_sel
from rgpu_fuzz.codeobj.reader import read_code_object
from rgpu_fuzz.lang.features import case_module
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.pipelines.amdgpu_sim import prepare_launch
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.runner import run_case
from rgpu_fuzz.sim.isa import decode_code_object, render
from triage.reduce import reduce_case, signature_predicate
from triage.store import FindingStore

CASE = Path(__file__).parent / "data" / "cases" / "o3_i16_loop_packed.toml"


def _registry() -> Registry:
    reg = Registry()
    reg.load_plugin(plugin("op_sel.py"))
    return reg


def test_the_hook_flips_one_op_sel_bit_of_the_first_packed_instruction() -> None:
    case = casefile.load_checked(CASE)
    launch = prepare_launch(Registry().create("amdgpu-sim:gfx942:O3").job(case))  # type: ignore[attr-defined]
    assert launch is not None
    before = launch.code_object
    after = flip_op_sel(before)
    diff = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert len(diff) == 1 and before[diff[0]] ^ after[diff[0]] == 1 << 3  # bit 11 of a dword
    old = {i.address: render(i) for i in decode_code_object(read_code_object(before))}
    new = {i.address: render(i) for i in decode_code_object(read_code_object(after))}
    changed = [(old[a], new[a]) for a in old if old[a] != new[a]]
    assert len(changed) == 1
    was, now = changed[0]
    assert was.startswith("v_pk_") and now.startswith("v_pk_")
    assert "op_sel:[1," in now and "op_sel:[1," not in was
    # a code object without packed instructions is left as it is
    plain = casefile.load_checked(Path(__file__).parents[2] / "corpus" / "254dd5a67c19.toml")
    other = prepare_launch(Registry().create("amdgpu-sim:gfx942:O3").job(plain))  # type: ignore[attr-defined]
    assert other is not None and flip_op_sel(other.code_object) == other.code_object


@pytest.mark.parametrize("target", ["gfx942", "gfx90a", "gfx1100"])
def test_the_flipped_op_sel_is_wrong_code(target: str) -> None:
    case = casefile.load_checked(CASE)
    specs = ["ref", f"amdgpu-sim:{target}:O3", f"amdgpu-sim-opsel:{target}:O3"]
    outcomes = run_case(case, _registry().create_all(specs))
    assert isinstance(outcomes[specs[1]], Ok), outcomes[specs[1]]
    verdict = judge(case, outcomes, load_policy("default"), case_module(case))
    assert {(f.kind.value, f.pipelines[-1]) for f in verdict.findings} == \
        {("wrong-code", specs[2])}, verdict.findings


@pytest.mark.slow
def test_the_finding_reduces() -> None:
    case = casefile.load_checked(CASE)
    reg = _registry()
    specs = ["ref", "amdgpu-sim-opsel:gfx942:O3"]
    policy = load_policy("default")
    verdict = judge(case, run_case(case, reg.create_all(specs)), policy, case_module(case))
    (finding,) = verdict.findings
    test = signature_predicate(finding.signature, specs, policy, registry=reg)
    r = reduce_case(case, test, budget_s=240)
    assert r.interesting_at_start
    assert r.size_after < r.size_before and r.lines_after < r.lines_before, r.case.kernel
    asm = reg.create("amdgpu-sim:gfx942:O3").artefact_text(r.case, "asm")  # type: ignore[attr-defined]
    assert "v_pk_" in asm
    with tempfile.TemporaryDirectory():
        assert test(r.case)


@pytest.mark.slow
def test_a_half_campaign_finds_the_flipped_op_sel(tmp_path: Path) -> None:
    """Seeds 168..175 of the `half` profile: 8 generated cases, unreduced; at least one
    finding, each a wrong-code bucket of the seeded pipeline whose case has a packed
    instruction in its gfx942 O3 code (measured: seeds 169, 172 and 174)."""
    spec = "amdgpu-sim-opsel:gfx942:O3"
    config = CampaignConfig(out=tmp_path / "c", setup=Setup(("ref", spec), "half", "default",
                                                             (str(plugin("op_sel.py")),)),
                            seed_start=168, chunk=8, time_s=600.0, max_cases=8, jobs=1,
                            reduce=False)
    campaign = Campaign(config)
    try:
        summary = campaign.run().data
    finally:
        campaign.close()
    assert summary["cases"] == 8 and summary["cases_with_findings"] >= 1, summary
    plain = Registry().create("amdgpu-sim:gfx942:O3")
    with FindingStore(tmp_path / "c" / "findings.sqlite") as store:
        buckets = store.buckets()
        assert buckets
        for b in buckets:
            assert str(b.signature).startswith(f"wrong-code|{spec}|"), b.signature
            assert b.best_case_id is not None
            asm = plain.artefact_text(store.case(b.best_case_id), "asm")  # type: ignore[attr-defined]
            assert "v_pk_" in asm
