"""The culprit pass, the evidence line and the duplicate search on the corpus cases of known
LLVM bugs, with Debian's llc-22 and llc-19 and the simulator (no mocks).

The expected culprits come from the upstream issues, not from the code under test:
* corpus/d12e8d238eac (docs/llvm-bugs/sifold_or_minus_one.ll): llvm/llvm-project#189677,
  "SIFoldOperands folds v_or_b32 x, -1 into a copy of x", fixed in SIFoldOperands by PR
  #189655: the pass is `si-fold-operands`, an optional pass at -O3, so OptBisect names it;
* corpus/526d09799032 (docs/llvm-bugs/lane_vgpr_implicit_def_in_loop_header.ll):
  llvm/llvm-project#186348, "[AMDGPU][SILowerSGPRSpills] Correct insertion of IMPLICIT_DEF
  in cycles": the pass is `si-lower-sgpr-spills`, a required pass at -O0, so only the
  skip test (MIR round trip without it) can name it;
* GlobalISel's "unable to legalize instruction: G_FPTOUI_SAT" on the same d12e8d238eac
  kernel is raised by the Legalizer pass (LegalizerHelper reports what it cannot legalize;
  the message is GlobalISel's `reportGISelFailure` from the Legalizer).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from oracles import load_policy
from rgpu_fuzz import casefile
from tests.toolchain import debian_llvm_tool
from triage.culprit import crash_pass, find_culprit, with_instances
from triage.duplicates import find_duplicates, shape
from triage.evidence import Evidence, Probe, gather, variants
from triage.facts_store import facts_of, load_facts, record_facts
from triage.trials import Trials

ROOT = Path(__file__).resolve().parents[2]
SIFOLD = ROOT / "corpus" / "d12e8d238eac.toml"
LANE = ROOT / "corpus" / "526d09799032.toml"


@pytest.fixture(scope="module")
def sifold() -> Trials:
    debian_llvm_tool("llc", 22)
    return Trials(casefile.load(SIFOLD), load_policy("default"))


def test_sifold_culprit_is_si_fold_operands_by_opt_bisect(sifold: Trials) -> None:
    c = find_culprit(sifold, "amdgpu-sim:gfx942:O3")
    assert (c.passes, c.method) == (("si-fold-operands",), "opt-bisect"), c.line()


@pytest.mark.slow
def test_lane_vgpr_culprit_is_si_lower_sgpr_spills_by_the_skip_test() -> None:
    debian_llvm_tool("llc", 22)
    trials = Trials(casefile.load(LANE), load_policy("default"))
    c = find_culprit(trials, "amdgpu-sim:gfx942:O0")
    assert c.method == "skip" and c.passes == ("si-lower-sgpr-spills",), c.line()


def test_globalisel_legalizer_crash_names_the_legalizer(sifold: Trials) -> None:
    spec = "amdgpu-sim:gfx942:O3:isel=global"
    trial = sifold.run(spec)
    assert trial.agrees is None and "G_FPTOUI_SAT" in trial.why
    c = find_culprit(sifold, spec, trial.outcome)
    assert c.passes == ("Legalizer",), c.line()


def test_evidence_of_sifold(sifold: Trials) -> None:
    """llc-19 has the bug too (the reproducer's header: LLVM 19's SIFoldOperands has the
    same fold); -O0 does not run SIFoldOperands (AMDGPU adds it at -O1 and up), so O0
    agrees; the host never sees AMDGPU code generation."""
    debian_llvm_tool("llc", 19)
    ev = gather(sifold, "amdgpu-sim:gfx942:O3")
    by = {p.name: p.agrees for p in ev.probes}
    assert by["llc-22"] is False and by["llc-19"] is False
    assert by["O0"] is True and by["host llvm-cpu O3"] is True
    line = ev.line()
    assert line.startswith("amdgpu-sim:gfx942:O3 wrong; also wrong: llc-22, llc-19")
    assert "GlobalISel (unable to legalize instruction: G_FPTOUI_SAT)" in line
    assert "not run on hardware (hip, nvptx-gpu: not available here)" in line


def test_variants_change_one_thing() -> None:
    got = dict(variants("amdgpu-sim:gfx90a:O1:isel=global"))
    assert got["SelectionDAG"] == "amdgpu-sim:gfx90a:O1"
    assert got["llc-19"] == "amdgpu-sim:gfx90a:O1:isel=global:llc=/usr/lib/llvm-19/bin/llc"
    assert got["gfx942 O1"] == "amdgpu-sim:gfx942:O1:isel=global"
    assert got["O3"] == "amdgpu-sim:gfx90a:O3:isel=global"
    assert got["rustc-amdgpu O2"] == "rustc-amdgpu:gfx90a:O2"
    assert "llvmlite" not in got
    assert dict(variants("llvm-cpu:O2:llc=/usr/lib/llvm-19/bin/llc"))["llvmlite"] == "llvm-cpu:O2"


def test_evidence_line_says_hardware_when_seen() -> None:
    ev = Evidence("amdgpu-sim:gfx942:O3", "ref", (
        Probe("llc-19", "x", True), Probe("hip", "hip:O3", False)))
    assert ev.line() == ("amdgpu-sim:gfx942:O3 wrong; also wrong: none of the variants; "
                         "agree with ref: llc-19; seen on hardware (hip)")


def test_crash_pass_reads_the_innermost_running_pass() -> None:
    log = ("Stack dump:\n0.\tProgram arguments: llc x.ll\n"
           "1.\tRunning pass 'Function Pass Manager' on module 'x.ll'.\n"
           "2.\tRunning pass 'SI Fold Operands' on function '@k'\n")
    assert crash_pass(log) == "SI Fold Operands" and crash_pass("LLVM ERROR: x") is None


def test_crash_pass_of_llc19_on_an_uncalled_internal_function(tmp_path: Path) -> None:
    """LLVM 19's AMDGPUResourceUsageAnalysis, a module pass, segfaults on a module with an
    internal function nobody calls (the campaign's llc-19 O0 bucket, reduced by
    llvm-reduce; upstream's codegen-internal-only-func.ll expected this crash with
    `not --crash` until PR #102913 made the pass a machine-function pass in LLVM 20)."""
    import subprocess

    llc19 = debian_llvm_tool("llc", 19)
    src = tmp_path / "f.ll"
    src.write_text('target triple = "amdgcn-amd-amdhsa"\n\n'
                   "define internal void @f() {\n  ret void\n}\n")
    proc = subprocess.run([llc19, "-O0", "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942",
                           "-filetype=obj", str(src), "-o", str(tmp_path / "f.o")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode != 0
    assert crash_pass(proc.stderr) == "Function register usage analysis"


def test_instances_are_counted_from_zero() -> None:
    assert with_instances(["a", "b", "a", "a"]) == ["a", "b", "a,1", "a,2"]


def test_duplicates_by_culprit_and_shape() -> None:
    case = casefile.load(SIFOLD)
    dups = {d.where: d.why for d in find_duplicates(case, "si-fold-operands")}
    assert "docs/llvm-bugs/sifold_or_minus_one.ll" in dups
    lane = {d.where for d in find_duplicates(case, "si-lower-sgpr-spills")}
    assert {"docs/llvm-bugs/lane_vgpr_implicit_def_in_loop_header.ll",
            "triage/known_bugs.toml lane-vgpr-implicit-def", "corpus/526d09799032.toml"} <= lane
    # the kernel is `a[0] as u64 | c - 8u64` under an `if` on `b[0] < 1.0`
    assert {"as:float->int", "or:int", "sub:int", "lt:float"} <= shape(case)


def test_facts_are_kept_beside_the_store(sifold: Trials, tmp_path: Path) -> None:
    from triage.store import FindingStore

    store = tmp_path / "f.sqlite"
    FindingStore(store).close()
    ev = Evidence("amdgpu-sim:gfx942:O3", "ref", (Probe("llc-19", "s", False),))
    c = find_culprit(sifold, "amdgpu-sim:gfx942:O3")
    record_facts(store, facts_of("wrong-code|amdgpu-sim:gfx942:O3|x", "d12e8d238eac", ev, c))
    kept = load_facts(store, "wrong-code|amdgpu-sim:gfx942:O3|x")
    assert kept is not None and kept.culprit.startswith("culprit pass: si-fold-operands")
    assert kept.evidence == ev.line() and kept.probes[0]["name"] == "llc-19"
    assert load_facts(store, "other") is None
    tables = {r[0] for r in sqlite3.connect(store).execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "upstream_facts" in tables
    with FindingStore(store, readonly=True) as fs:  # the store still opens as a store
        assert fs.buckets() == []


def test_lane_vgpr_edit_finds_globalisels_entry_block() -> None:
    """GlobalISel's MIR numbers the entry block bb.1 (its IRTranslator's bb.0 is merged
    away): the lane-VGPR edit moves the IMPLICIT_DEF there. Before, it looked for bb.0 only
    and failed on every GlobalISel function, so the known-bug recheck never explained a
    GlobalISel finding (the conformance case cf_while on gfx942 O0 with isel=global is
    right once the edit applies)."""
    from triage.llc_lane_vgpr_defs import hoist

    mir = ("---\nname: k\nbody: |\n  bb.1.entry:\n    successors: %bb.2\n\n"
           "    S_BRANCH %bb.2\n\n  bb.2.loop:\n    %7:vgpr_32 = IMPLICIT_DEF\n"
           "    $sgpr4 = SI_RESTORE_S32_FROM_VGPR %7:vgpr_32, 0\n"
           "    %7:vgpr_32 = SI_SPILL_S32_TO_VGPR $sgpr4, 0, %7:vgpr_32\n...\n")
    out, moved = hoist(mir)
    assert moved == 1
    assert out.index("%7:vgpr_32 = IMPLICIT_DEF") < out.index("S_BRANCH %bb.2")


def test_triage_show_prints_the_kept_facts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """What `report` keeps in the store, `triage show` prints: the evidence and culprit lines
    of the bucket's signature (and says how to gather them when none are kept)."""
    from rgpu_fuzz.cli import main
    from tests.unit.test_cli_triage import FLIPBITS, record_flipbits
    from triage.culprit import Culprit
    from triage.store import FindingStore

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    (tmp_path / "flipbits.py").write_text(FLIPBITS)
    store = tmp_path / "f.sqlite"
    bid = record_flipbits(store)
    assert main(["triage", "show", bid, "--store", str(store)]) == 0
    assert "evidence: not gathered" in capsys.readouterr().out
    with FindingStore(store, readonly=True) as fs:
        signature = str(fs.bucket(bid).signature)
    ev = Evidence("flipbits", "ref", (Probe("llc-19", "s", True),))
    culprit = Culprit(("si-fold-operands",), "opt-bisect", "by hand")
    record_facts(store, facts_of(signature, "c", ev, culprit))
    assert main(["triage", "show", bid, "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert f"evidence: {ev.line()}" in out
    assert "culprit: si-fold-operands (by hand)" in out


def test_evidence_of_a_compile_crash_counts_the_same_crash(sifold: Trials) -> None:
    """GlobalISel in LLVM 22.1 legalizes no llvm.fpto[su]i.sat (checked by hand with llc-22
    -global-isel for i8..i64 results): the same error on the other targets and with
    Debian's llc-22 is the same crash; SelectionDAG compiles it (and is wrong there, the
    SIFoldOperands bug, but that is not this finding)."""
    spec = "amdgpu-sim:gfx942:O3:isel=global"
    ev = gather(sifold, spec, sifold.run(spec).outcome)
    by = {p.name: p.agrees for p in ev.probes}
    assert ev.verb == "crashes" and ev.line().startswith(f"{spec} crashes; also crashes: ")
    assert by["gfx90a O3"] is False and by["gfx1100 O3"] is False and by["llc-22"] is False
    assert by["SelectionDAG"] is None  # it compiles (into the SIFoldOperands wrong code)
    assert "SelectionDAG (compiles; another finding: wrong-code)" in ev.line()
