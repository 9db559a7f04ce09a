"""The known-bug recheck of LLVM 22.1's constant fold of wave reductions (`known_bugs.toml`
`wave-reduce-constant-fold`, docs/findings/wave-reduce-fold.md, fixed upstream by
llvm/llvm-project#193142): a campaign buckets its findings as that known bug, and nothing else.

Independent sources: the expected values of the conformance case `wave_uniform_control` are
worked by hand in its file (at wave 32, waves 1 and 3 store `wave_sum(1u32)` = their lane
counts 32 and 4; the folded build stores 1); Debian's `opt-22` shows the fold itself and that
an operand passed through inline asm is not folded; the seeded plugin
tests/plugins/wave_sum_inactive.py is wrong by construction, which hiding an operand from
constant folding cannot undo."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from campaigns import jobs as campaign_jobs
from campaigns.jobs import JudgeJob, Setup, judge_cases
from oracles import FindingKind
from rgpu_fuzz import casefile
from tests.toolchain import debian_llvm_tool
from triage.known_bugs import is_known_bug, known_bugs
from triage.wave_reduce_unfold import hide_reduce_operands

ROOT = Path(__file__).parents[2]
CASE = ROOT / "tests" / "conformance" / "waves" / "wave_uniform_control.toml"
SUM_PLUGIN = ROOT / "tests" / "plugins" / "wave_sum_inactive.py"
LABEL = "known LLVM bug llvm/llvm-project#193142 (wave-reduce-constant-fold)"

_FUNC = """target triple = "amdgcn-amd-amdhsa"
define i32 @sum(i32 %x) {
  %r = call i32 @llvm.amdgcn.wave.reduce.add.i32(i32 1, i32 0)
  %q = call i32 @"llvm.amdgcn.wave.reduce.xor.i32"(i32 %x, i32 0)
  %m = call i32 @llvm.amdgcn.wave.reduce.umax.i32(i32 %x, i32 0)
  %s = add i32 %r, %q
  %t = add i32 %s, %m
  ret i32 %t
}
"""


def test_the_operands_of_lane_count_reductions_go_through_inline_asm() -> None:
    """add and xor get the asm (a literal in an SGPR, `=s`, a variable in a VGPR, `=v`);
    umax, which the fold gets right, keeps its operand."""
    got = hide_reduce_operands(_FUNC)
    assert '%rgpu.unfold.1 = call i32 asm "", "=s,0"(i32 1)\n' in got
    assert "@llvm.amdgcn.wave.reduce.add.i32(i32 %rgpu.unfold.1, i32 0)" in got
    assert '%rgpu.unfold.2 = call i32 asm "", "=v,0"(i32 %x)\n' in got
    assert '@"llvm.amdgcn.wave.reduce.xor.i32"(i32 %rgpu.unfold.2, i32 0)' in got
    assert "@llvm.amdgcn.wave.reduce.umax.i32(i32 %x, i32 0)" in got
    assert "rgpu.unfold.3" not in got


def test_opt_22_folds_the_constant_and_not_the_hidden_one(tmp_path: Path) -> None:
    """Debian's opt-22 InstCombine: the plain sum of 1 becomes 1 (the bug), the hidden one
    stays a reduction."""
    opt = debian_llvm_tool("opt", 22)
    plain, hidden = tmp_path / "plain.ll", tmp_path / "hidden.ll"
    plain.write_text(_FUNC)
    hidden.write_text(hide_reduce_operands(_FUNC))
    outs = []
    for src in (plain, hidden):
        done = subprocess.run([opt, "-S", "-mcpu=gfx1100", "-passes=instcombine", str(src)],
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        outs.append(done.stdout.split("define", 1)[1].split("\n}", 1)[0])  # the body
    assert "wave.reduce.add" not in outs[0] and "add i32 %q, 1" in outs[0]
    assert "wave.reduce.add.i32(i32 %rgpu.unfold.1" in outs[1]


def test_the_table_applies_the_fold_to_o1_to_o3_of_the_plain_pipeline() -> None:
    [bug] = [b for b in known_bugs() if b.name == "wave-reduce-constant-fold"]
    assert (bug.upstream, bug.kinds, bug.pipelines, bug.opt) == (
        "llvm/llvm-project#193142", frozenset({"wrong-code"}), frozenset({"amdgpu-sim"}),
        frozenset({1, 2, 3}))
    assert bug.recheck_pipeline == "triage.wave_reduce_unfold:UnfoldedWaveReduce"


@pytest.mark.slow
def test_the_folds_finding_is_bucketed_as_the_known_bug() -> None:
    """gfx1100 O3 stores 1 where `ref` at wave 32 stores 32 and 4 (wrong code); with the
    operands hidden it agrees, so the bucket is the known bug's; O0 (no InstCombine) agrees
    with `ref` and is no finding."""
    setup = Setup(("ref", "amdgpu-sim:gfx1100:O0", "amdgpu-sim:gfx1100:O3"), "default",
                  "default")
    case = casefile.dumps(casefile.load_checked(CASE))
    [found] = judge_cases(JudgeJob(setup, (case,))).found
    [finding] = found.verdict.findings
    assert finding.kind is FindingKind.WRONG_CODE
    key = found.bug_keys[finding.signature]
    assert str(key) == f"wrong-code|amdgpu-sim:gfx1100:O3|{LABEL}", key
    assert is_known_bug(key)
    assert campaign_jobs._known[setup].rechecks == 1


@pytest.mark.slow
def test_a_seeded_wave_sum_bug_is_not_rechecked() -> None:
    """The plugin's sums count inactive lanes (wave 3 has 4 active lanes of 32): a subclass
    of amdgpu-sim, so the fold's recheck does not apply and its finding is no known bug."""
    setup = Setup(("ref", "amdgpu-sim-sum-inactive:gfx1100:O3"), "default", "default",
                  (str(SUM_PLUGIN),))
    case = casefile.dumps(casefile.load_checked(CASE))
    [found] = judge_cases(JudgeJob(setup, (case,))).found
    [finding] = found.verdict.findings
    assert finding.kind is FindingKind.WRONG_CODE
    assert not is_known_bug(found.bug_keys.get(finding.signature))
    assert campaign_jobs._known[setup].rechecks == 0
