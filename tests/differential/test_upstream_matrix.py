"""The version/ISel matrix of an LLVM reproducer (triage.upstream): each RUN line on
llvmlite's LLVM, Debian llc-22, llc-19 and llc-22 -global-isel.

Expected cells come from running the real tools by hand and reading their output, not from
the code under test: for range_return_i8_anyext.ll, `llc-19 -O1 -mcpu=gfx942` masks the
call result with `v_and_b32_e32 v2, 0xff, v0` as written and with 0xffff once the call is
`noundef`; llc-22 masks with 0xffff either way; `-global-isel` masks with 0xff. For
simulated_trap_skips_pseudo_expansion.ll, `llc-22 -O0 -mcpu=gfx1100 -filetype=obj` aborts
with "Unsupported instruction" and llc-19 emits the object."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.toolchain import debian_llvm_tool
from triage import llvmlite_tool
from triage.upstream import (
    MATRIX_BEGIN,
    MATRIX_END,
    Repro,
    RunLine,
    default_variants,
    matrix_lines,
    predicate_run,
    run_lines,
    version_matrix,
    write_matrix,
)

BUGS = Path(__file__).resolve().parents[2] / "docs" / "llvm-bugs"


@pytest.fixture(scope="module", autouse=True)
def _tools() -> None:
    debian_llvm_tool("llc", 22)
    debian_llvm_tool("llc", 19)
    debian_llvm_tool("FileCheck", 22)


def test_run_lines_joins_continuations_like_lit() -> None:
    text = ("; RUN: llc -O1 < %s \\\n;RUN:   | FileCheck %s\n; not a run line\n"
            "  ; RUN: opt -O2 %s\n")
    assert run_lines(text) == [RunLine(1, 1, "llc -O1 < %s | FileCheck %s"),
                               RunLine(2, 4, "opt -O2 %s")]


def test_range_return_matrix_shows_llvm19_needs_noundef() -> None:
    mx = version_matrix(BUGS / "range_return_i8_anyext.ll")
    # RUN 1: as written; RUN 2: the call `noundef`; RUN 3: tahiti
    assert [mx.result(1, v) for v in ("llvmlite", "llc-22", "llc-19", "gisel")] == [
        Repro.YES, Repro.YES, Repro.NO, Repro.NO]
    assert mx.result(2, "llc-19") is Repro.YES
    assert mx.result(2, "gisel") is Repro.NO


def test_trap_matrix_llvm22_only_and_llvmlite_cannot_show_inst() -> None:
    mx = version_matrix(BUGS / "simulated_trap_skips_pseudo_expansion.ll")
    assert mx.result(1, "llvmlite") is Repro.NOT_APPLICABLE   # -asm-show-inst is llc's own
    assert mx.result(1, "llc-22") is Repro.YES
    assert mx.result(2, "llvmlite") is Repro.YES              # the same abort in llvmlite
    assert mx.result(2, "llc-19") is Repro.NO


def test_predicate_run_for_llc_arguments_without_run_lines(tmp_path: Path) -> None:
    """A bare `.ll` + llc arguments + CHECK lines: the same matrix (C of the brief)."""
    ll = tmp_path / "r.ll"
    body = (BUGS / "range_return_i8_anyext.ll").read_text()
    ll.write_text("\n".join(ln for ln in body.splitlines() if "RUN:" not in ln) + "\n")
    variants = tuple(v for v in default_variants() if v.name in ("llc-22", "llc-19"))
    mx = version_matrix(ll, variants, [predicate_run(
        "-O1 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942")])
    assert [c.result for c in mx.cells] == [Repro.YES, Repro.NO]


def test_write_matrix_replaces_the_block(tmp_path: Path) -> None:
    ll = tmp_path / "s.ll"
    ll.write_text((BUGS / "srem64_bypass_urem_24bit.ll").read_text())
    variants = tuple(v for v in default_variants() if v.name == "llc-19")
    mx = version_matrix(ll, variants)
    write_matrix(ll, mx)
    text = ll.read_text()
    assert text.count(MATRIX_BEGIN) == 1 and text.count(MATRIX_END) == 1
    assert "RUN 1: llc-19 yes" in text
    assert "\n".join(matrix_lines(mx)) in text


def test_llvmlite_tool_refuses_llc_only_flags() -> None:
    assert llvmlite_tool.parse_args("llc", ["-O0", "-asm-show-inst"]) == "-asm-show-inst"
    # llvm.set_option ignores an unknown name silently: refused, not dropped
    assert llvmlite_tool.parse_args("llc", ["-no-such-option"]) == "-no-such-option"
    inv = llvmlite_tool.parse_args("llc", ["-O3", "-global-isel", "-mcpu=gfx942"])
    assert not isinstance(inv, str) and inv.global_isel and inv.llvm_options == []
    assert llvmlite_tool.parse_args("opt", ["-passes=instcombine"]) == "-passes=instcombine"
    inv = llvmlite_tool.parse_args("opt", ["-passes=default<O2>", "-disable-output"])
    assert not isinstance(inv, str) and inv.level == 2 and inv.no_output


def test_llvmlite_tool_global_isel_selects_with_globalisel() -> None:
    """`-global-isel` reaches the emission: llvmlite's LLVM gives what Debian llc-22
    -global-isel gives for globalisel_lds_absolute_in_helper.ll (`s_trap 2` in @helper,
    the GlobalISel legalizer's answer; SelectionDAG has no trap there, both checked with
    llc-22 by hand). Before, the option was set as a library option and the emission's own
    `-global-isel=0` undid it."""
    import subprocess
    import sys

    src = (BUGS / "globalisel_lds_absolute_in_helper.ll").read_text()
    base = ["-O3", "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942"]
    out = {}
    for extra in ([], ["-global-isel"]):
        proc = subprocess.run([sys.executable, "-m", "triage.llvmlite_tool", "llc", *base,
                               *extra], input=src, capture_output=True, text=True,
                              timeout=120, check=True, cwd=BUGS.parents[1])
        out[bool(extra)] = proc.stdout
    assert "s_trap 2" in out[True] and "s_trap" not in out[False]


def test_matrix_command_rejects_a_file_without_run_lines(tmp_path: Path) -> None:
    import subprocess
    import sys

    bare = tmp_path / "bare.ll"
    bare.write_text("define void @f() {\n  ret void\n}\n")
    for arg in (str(bare), str(tmp_path / "missing.ll")):
        proc = subprocess.run([sys.executable, "-m", "triage.upstream", "matrix", arg],
                              capture_output=True, text=True, timeout=60, check=False,
                              cwd=BUGS.parents[1])
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.mark.parametrize("path", sorted(BUGS.glob("*.ll")), ids=lambda p: p.stem)
def test_header_matrix_is_what_the_tools_say_today(path: Path) -> None:
    """Each header's matrix block equals a fresh run (a new llvmlite or Debian LLVM that
    changes a cell fails here: rerun `python -m triage.upstream matrix --write`
    and update the write-up)."""
    text = path.read_text().splitlines()
    start = next(i for i, ln in enumerate(text) if ln.startswith(MATRIX_BEGIN))
    end = next(i for i, ln in enumerate(text) if ln.startswith(MATRIX_END))
    fresh = matrix_lines(version_matrix(path))
    assert text[start:end + 1] == fresh, (
        f"{path.name}: the version matrix changed:\n" + "\n".join(fresh))
