"""The LLVM bug reproducers of docs/llvm-bugs, run by llvm-22's own `lit` as upstream would run
them: each file's CHECK lines pin the wrong code (or the crash), so a passing lit test means the
bug is still in Debian's LLVM 22. When one stops reproducing, its test fails and says "fixed
upstream?" with the file name: update the write-up (and its corpus case), do not loosen the
CHECK lines."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.toolchain import debian_llvm_tool
from triage.upstream import MATRIX_BEGIN, run_lines

BUGS = Path(__file__).resolve().parents[2] / "docs" / "llvm-bugs"
REPRODUCERS = sorted(BUGS.glob("*.ll"))


def _lit(*args: str) -> subprocess.CompletedProcess[str]:
    lit = debian_llvm_tool("lit", 22)
    bindir = str(Path(debian_llvm_tool("llc", 22)).parent)
    return subprocess.run([lit, "-v", "-D", f"llvm_bin={bindir}", *args],
                          capture_output=True, text=True, timeout=600, check=False)


def test_there_are_reproducers() -> None:
    assert len(REPRODUCERS) >= 6, REPRODUCERS


@pytest.mark.parametrize("path", REPRODUCERS, ids=lambda p: p.stem)
def test_each_reproducer_has_run_lines_and_a_matrix(path: Path) -> None:
    """A reproducer an LLVM maintainer can run as is: RUN lines, and the header says which
    LLVMs reproduce it (`python -m triage.upstream matrix --write`)."""
    text = path.read_text()
    assert run_lines(text), f"{path.name}: no `; RUN:` line"
    assert MATRIX_BEGIN in text, f"{path.name}: no version matrix in the header"
    matrix_runs = re.findall(r"^;\s+RUN (\d+):", text, re.M)
    assert len(matrix_runs) == len(run_lines(text)), (
        f"{path.name}: the matrix has {len(matrix_runs)} rows for {len(run_lines(text))} "
        "RUN lines; rerun the matrix")


@pytest.mark.parametrize("path", REPRODUCERS, ids=lambda p: p.stem)
def test_llvm_bug_still_reproduces_under_lit(path: Path) -> None:
    proc = _lit(str(path))
    status = re.search(r"^(PASS|FAIL|UNRESOLVED|UNSUPPORTED|XFAIL|XPASS): ", proc.stdout,
                       re.M)
    assert status is not None, f"lit gave no result for {path.name}:\n{proc.stdout[-3000:]}"
    if status.group(1) == "UNSUPPORTED":
        pytest.skip(f"{path.name}: lit says UNSUPPORTED (no AMDGPU target in this llc?)")
    assert status.group(1) == "PASS", (
        f"{path.name} no longer reproduces with Debian llvm-22 (fixed upstream?): lit says "
        f"{status.group(1)}\n{proc.stdout[-3000:]}")


def test_lit_runs_the_folder_as_a_suite() -> None:
    """`lit docs/llvm-bugs` as the README of the folder says: every file found, all passing."""
    proc = _lit(str(BUGS))
    found = re.findall(r"^(PASS|FAIL|UNRESOLVED): [^:]+ :: (\S+)", proc.stdout, re.M)
    assert sorted(name for _s, name in found) == sorted(p.name for p in REPRODUCERS), (
        proc.stdout[-3000:])
    failed = [name for s, name in found if s != "PASS"]
    assert not failed, f"no longer reproducing (fixed upstream?): {failed}"
