"""The known-LLVM-bug recheck of triage (`triage/known_bugs.py`): a finding that LLVM 22's
lane-VGPR bug explains is bucketed as "known LLVM bug llvm/llvm-project#186348", any other
finding as before, and both are kept.

Independent sources: corpus case 526d09799032 is the bug's finding (docs/findings/
8081e0ac57.md: the one MIR edit makes it equal `ref`, tests/sim/test_llvm_bug_lane_vgpr.py);
the seeded plugin tests/plugins/sim_add_to_sub.py computes a wrong value by construction
(its `v_sub_u32`), which no llc can undo."""

from __future__ import annotations

from pathlib import Path

from campaigns import jobs as campaign_jobs
from campaigns.jobs import JudgeJob, ReduceJob, Setup, judge_cases
from oracles import FindingKind, Signature
from rgpu_fuzz import casefile
from tests.toolchain import debian_llvm_tool
from triage.classify import place, same_bug
from triage.known_bugs import is_known_bug, known_bugs

ROOT = Path(__file__).parents[2]
BUG_CASE = ROOT / "corpus" / "526d09799032.toml"
ADD_CASE = ROOT / "corpus" / "254dd5a67c19.toml"
PLUGIN = ROOT / "tests" / "plugins" / "sim_add_to_sub.py"
LABEL = "known LLVM bug llvm/llvm-project#186348 (lane-vgpr-implicit-def)"


def _judge(pipelines: tuple[str, ...], case: Path, plugins: tuple[str, ...] = ()) -> tuple[
        campaign_jobs.Found, int]:
    debian_llvm_tool("llc", 22)  # the recheck's llc (installed, or the test skips)
    setup = Setup(pipelines, "default", "default", plugins)
    result = judge_cases(JudgeJob(setup, (casefile.dumps(casefile.load_checked(case)),)))
    assert len(result.found) == 1, result.found
    return result.found[0], campaign_jobs._known[setup].rechecks


def test_the_bugs_own_finding_is_bucketed_as_the_known_bug() -> None:
    """gfx942 O0 traps out of bounds where `ref` does not; rerun with the one-edit llc it
    agrees, so its bucket is the known bug's, with the trap-mismatch kind and the pipeline
    kept; gfx942 O3 (not the bug's opt level) is not rechecked at all."""
    found, rechecks = _judge(("ref", "amdgpu-sim:gfx942:O0", "amdgpu-sim:gfx942:O3"), BUG_CASE)
    [finding] = found.verdict.findings  # O3 agrees with ref (the bug is O0's)
    assert finding.kind is FindingKind.TRAP_MISMATCH, finding
    key = found.bug_keys[finding.signature]
    assert str(key) == f"trap-mismatch|amdgpu-sim:gfx942:O0|{LABEL}", key
    assert is_known_bug(key) and key.pipeline == "amdgpu-sim:gfx942:O0"
    assert place(finding, found.ops, [], bug_key=key) == key
    # `recheck` of the bucket: its reproducer's finding (plain signature) is still its bug
    assert same_bug(key, finding, found.ops)
    assert not same_bug(Signature.parse(str(key).replace(":O0|", ":O1|")), finding, found.ops)
    assert rechecks == 1


def test_a_seeded_amdgpu_sim_bug_is_rechecked_and_bucketed_as_before() -> None:
    """The plugin's wrong code at gfx942 O0 is rechecked (an amdgpu-sim subclass, O0,
    wave64) and still differs with the one-edit llc: no known-bug key, so it is placed as
    any wrong-code finding is (here: reduced first, as an unkeyed finding)."""
    found, rechecks = _judge(("ref", "amdgpu-sim-add2sub:gfx942:O0"), ADD_CASE,
                             (str(PLUGIN),))
    [finding] = found.verdict.findings
    assert finding.kind is FindingKind.WRONG_CODE, finding
    assert rechecks == 1
    assert finding.signature not in found.bug_keys
    assert not is_known_bug(place(finding, found.ops, [], keyed=True, reduced=True))


def test_the_table_names_the_bug_and_where_it_applies() -> None:
    [bug] = [b for b in known_bugs() if b.name == "lane-vgpr-implicit-def"]
    assert (bug.upstream, bug.pipelines, bug.opt, bug.wave_sizes) == (
        "llvm/llvm-project#186348", frozenset({"amdgpu-sim"}), frozenset({0}),
        frozenset({32, 64}))


def test_the_reduced_kernel_is_rechecked_against_the_known_bugs() -> None:
    """The recheck also runs on the reduced kernel (`reduce_finding`): in an earlier
    campaign llc-22 crashed on the MIR round trip of an unreduced kernel of this bug, so
    only the reduced one could be recognised (bucket 8081e0ac57). The bug's case, reduced
    again under its plain signature, comes back with the known-bug key; the seeded wrong
    code (no llc undoes it) with none."""
    debian_llvm_tool("llc", 22)
    setup = Setup(("ref", "amdgpu-sim:gfx942:O0"), "default", "default", ())
    case = casefile.dumps(casefile.load_checked(BUG_CASE))
    [finding] = judge_cases(JudgeJob(setup, (case,))).found[0].verdict.findings
    result = campaign_jobs.reduce_finding(ReduceJob(setup, case, finding.signature, 5.0))
    assert result.reduced_toml is not None
    assert str(result.known_key) == f"trap-mismatch|amdgpu-sim:gfx942:O0|{LABEL}"

    plugin = Setup(("ref", "amdgpu-sim-add2sub:gfx942:O0"), "default", "default",
                   (str(PLUGIN),))
    case = casefile.dumps(casefile.load_checked(ADD_CASE))
    [finding] = judge_cases(JudgeJob(plugin, (case,))).found[0].verdict.findings
    result = campaign_jobs.reduce_finding(ReduceJob(plugin, case, finding.signature, 5.0))
    assert result.reduced_toml is not None
    assert result.known_key is None


def test_the_bugs_uninit_read_is_bucketed_as_the_known_bug_too() -> None:
    """campaign bucket 15a114f19e (reduced): a loop whose divergent `break` mask
    is spilled to a lane VGPR; at gfx942 O0 the simulator stops at `sim-uninit-read` (the
    lanes the latch wrote come back undefined), not a wrong value. With the one-edit llc it
    equals `ref` (checked by hand on 2026-12-01: llc-19, gfx1100's wave32 and O3 equal `ref`
    too, gfx90a O0 fails the same way), so it is the known bug's."""
    pipelines = ("ref", "amdgpu-sim:gfx942:O0")
    known = campaign_jobs._known.get(Setup(pipelines, "default", "default", ()))
    before = known.rechecks if known is not None else 0
    found, rechecks = _judge(pipelines, ROOT / "tests" / "sim" / "data" / "cases" /
                             "o0_lane_vgpr_uninit_read.toml")
    [finding] = found.verdict.findings
    assert finding.kind is FindingKind.RUN_CRASH and "sim-uninit-read" in str(finding.signature)
    assert str(found.bug_keys[finding.signature]) == f"run-crash|amdgpu-sim:gfx942:O0|{LABEL}"
    assert rechecks - before == 1


def test_a_wave32_finding_is_bucketed_as_the_known_bug() -> None:
    """campaign bucket 239c6f84fb (gfx1100, wave32, O0; docs/findings/239c6f84fb.md): the
    same header IMPLICIT_DEF, in the loop's second lane VGPR. The recheck now runs on wave32
    (the table's `wave_sizes`, the wrapper's wave32 MIR repair) and keys it; before, gfx1100
    findings were not rechecked and this one was a bucket of its own."""
    pipelines = ("ref", "amdgpu-sim:gfx1100:O0")
    found, _ = _judge(pipelines, ROOT / "tests" / "sim" / "data" / "cases" /
                      "o0_wave32_lane_vgpr_uninit_read.toml")
    [finding] = found.verdict.findings
    assert finding.kind is FindingKind.RUN_CRASH and "sim-uninit-read" in str(finding.signature)
    assert str(found.bug_keys[finding.signature]) == \
        f"run-crash|amdgpu-sim:gfx1100:O0|{LABEL}"
