"""`rgpu-fuzz report <id> --upstream DIR` on real corpus cases: corpus/cc7ffa974910 (the
range-return zext bug, docs/llvm-bugs/range_return_i8_anyext.ll) through our lowering,
llvmlite's O3, llvm-reduce-22 with RUN 1's FileCheck predicate, the version matrix.

Expected by hand, from llc's output: llc-22 -O1 -mcpu=gfx942 masks the call's result with
`v_and_b32_e32 v0, 0xffff, v0`; llc-19 and -global-isel mask with 0xff (their cells "no")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.toolchain import debian_llvm_tool
from triage.upstream import MATRIX_BEGIN, Repro, run_lines, version_matrix

ROOT = Path(__file__).resolve().parents[2]


def _report(*args: str, timeout: float = 1200) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rgpu_fuzz", "report", *args],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          check=False)


@pytest.mark.slow
def test_upstream_report_of_the_range_return_corpus_case(tmp_path: Path) -> None:
    debian_llvm_tool("llvm-reduce", 22)
    debian_llvm_tool("llc", 19)
    proc = _report("cc7ffa974910", "--upstream", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    test = tmp_path / "cc7ffa974910.reduced.ll"
    before = (tmp_path / "cc7ffa974910.opt.ll").read_text()
    text = test.read_text()
    (run,) = run_lines(text)
    assert "-mcpu=gfx942" in run.command and "FileCheck %s" in run.command
    assert "0xffff, v0" in text and MATRIX_BEGIN in text  # CHECK lines and matrix copied
    ir = [ln for ln in text.splitlines() if ln and not ln.startswith(";")]
    assert len(ir) < len(before.splitlines()) / 3  # reduced
    assert "zext i8" in text and "range(i8 0, 2)" in text  # what the bug needs survived
    mx = version_matrix(test)
    assert [mx.result(1, v) for v in ("llc-22", "llc-19", "gisel")] == [
        Repro.YES, Repro.NO, Repro.NO]
    issue = (tmp_path / "issue.md").read_text()
    assert issue.startswith("# [AMDGPU] SelectionDAG: zext of a call's i8 result")
    assert "v_and_b32_e32 v0, 0xffff, v0" in issue  # llc-22's output excerpt
    assert "| 1 | yes | yes | no | no |" in issue
    # the rerun: by hand 255 * 255 mod 256 = 1; the simulator keeps 0xfe01 (65025)
    assert "`out[0]`: ref 1 (0x1), amdgpu-sim:gfx942:O3 65025 (0xfe01)" in issue


def test_upstream_report_needs_an_amdgpu_pipeline(tmp_path: Path) -> None:
    """corpus/254dd5a67c19 agrees and names no amdgpu pipeline: one line, exit non-zero."""
    proc = _report("254dd5a67c19", "--upstream", str(tmp_path))
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert "no amdgpu pipeline" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_upstream_report_needs_a_reproducer(tmp_path: Path) -> None:
    """A case with no [expect] issue (corpus/254dd5a67c19 agrees) and no --check: asks for
    --check."""
    proc = _report("254dd5a67c19", "--pipelines", "amdgpu-sim:gfx942:O3", "--upstream",
                   str(tmp_path))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "--check FILE.ll" in proc.stderr


@pytest.mark.slow
def test_upstream_report_of_the_lane_vgpr_corpus_case(tmp_path: Path) -> None:
    """corpus/526d09799032 (the lane-VGPR bug at -O0, llvm/llvm-project#186348): its
    [expect] issue is a finding note, whose known bug (triage/known_bugs.toml) names the
    reproducer; RUN 2 of it, written for gfx1100, is retargeted to the finding's gfx942 and
    the two later rounds pad the spill lanes. The reduced test is at most 40 lines, lit passes
    it, the bug is in llc-22 and not in llc-19 (which puts every lane-VGPR IMPLICIT_DEF in
    the entry block) nor GlobalISel (the reproducer's matrix), and the culprit is the pass the
    upstream fix changes."""
    debian_llvm_tool("llvm-reduce", 22)
    debian_llvm_tool("llc", 19)
    lit = debian_llvm_tool("lit", 22)
    # two llvm-reduce rounds of at most 900 s each (the second keeps its best so far)
    proc = _report("526d09799032", "--upstream", str(tmp_path), timeout=2700)
    assert proc.returncode == 0, proc.stderr[-2000:]
    test = tmp_path / "526d09799032.reduced.ll"
    text = test.read_text()
    assert len(text.splitlines()) <= 40, text
    (run,) = run_lines(text)
    assert "-mcpu=gfx942" in run.command and "--check-prefix=SPILLS" in run.command
    assert "%rgpu.pad" in text and "; SPILLS:" in text
    assert "; Culprit pass: si-lower-sgpr-spills" in text
    mx = version_matrix(test)
    assert [mx.result(1, v) for v in ("llc-22", "llc-19", "gisel")] == [
        Repro.YES, Repro.NO, Repro.NO]
    lit_cfg = ROOT / "docs" / "upstream-examples" / "lit.cfg.py"
    (tmp_path / "lit.cfg.py").write_text(lit_cfg.read_text().replace(
        'os.path.join(_here, "..", "llvm-bugs", "lit.cfg.py")',
        repr(str(ROOT / "docs" / "llvm-bugs" / "lit.cfg.py"))))
    done = subprocess.run([lit, "-v", str(test)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert "PASS:" in done.stdout, done.stdout[-2000:]


def test_interestingness_script_judges_by_the_reproducers_check_lines(tmp_path: Path) -> None:
    """The script llvm-reduce runs: the reproducer's own IR is interesting (llc-22 masks with
    0xffff); the same IR with `range` removed is not (llc-22 then masks with 0xff, checked by
    hand); with `undef` added it is not either (the guard)."""
    from triage.upstream_report import interestingness_script, reduce_run_index

    debian_llvm_tool("llc", 22)
    repro = ROOT / "docs" / "llvm-bugs" / "range_return_i8_anyext.ll"
    text = repro.read_text()
    script = tmp_path / "t.sh"
    script.write_text(interestingness_script(repro, run_lines(text)[0], allow_undef=False))
    script.chmod(0o755)
    ir = "\n".join(ln for ln in text.splitlines() if not ln.startswith(";"))
    cands = {"same": ir, "no-range": ir.replace("range(i8 0, 2) ", ""),
             "undef": ir + "\n@g = global i8 undef\n"}
    rcs = {}
    for name, body in cands.items():
        (tmp_path / f"{name}.ll").write_text(body)
        rcs[name] = subprocess.run([str(script), str(tmp_path / f"{name}.ll")],
                                   check=False, timeout=120).returncode
    assert rcs == {"same": 0, "no-range": 1, "undef": 1}
    assert reduce_run_index(text) == 1
    assert reduce_run_index((ROOT / "docs" / "llvm-bugs" / "sifold_or_minus_one.ll")
                            .read_text()) == 2
