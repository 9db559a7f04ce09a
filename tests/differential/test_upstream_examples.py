"""The committed outputs of `rgpu-fuzz report <id> --upstream DIR` (docs/upstream-examples):
each reduced test passes `lit` from llvm-22 as it is, is at most 40 lines, carries the version
matrix (llvmlite, llc-22, llc-19, GlobalISel) and names the culprit pass that the hand-written
reproducer in docs/llvm-bugs names from its upstream issue or MIR diff; each issue.md has the
evidence line and the duplicate search."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.toolchain import debian_llvm_tool
from triage.duplicates import llvm_bug_culprits

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "upstream-examples"
REDUCED = sorted(EXAMPLES.glob("*/*.reduced.ll"))


def test_there_are_three_examples() -> None:
    assert len(REDUCED) >= 3, REDUCED


def test_lit_passes_on_the_examples() -> None:
    lit = debian_llvm_tool("lit", 22)
    proc = subprocess.run([lit, "-v", str(EXAMPLES)], capture_output=True, text=True,
                          timeout=300, check=False)
    passed = re.findall(r"^PASS: .* :: (\S+)", proc.stdout, re.M)
    assert sorted(passed) == sorted(str(p.relative_to(EXAMPLES)) for p in REDUCED), (
        proc.stdout[-3000:])


@pytest.mark.parametrize("path", REDUCED, ids=lambda p: p.parent.name)
def test_example_is_small_with_matrix_and_culprit(path: Path) -> None:
    text = path.read_text()
    assert len(text.splitlines()) <= 40
    variants = re.search(r"^;\s+llvmlite = .*$", text, re.M)
    assert variants is not None and all(
        v in variants.group(0) for v in ("LLVM 22.1.0", "llc-22 = 22.1.8", "llc-19 =",
                                         "-global-isel"))
    m = re.search(r"^; Culprit pass: (\S+)", text, re.M)
    assert m is not None, "no culprit pass in the header"
    expected = llvm_bug_culprits(ROOT)[f"docs/llvm-bugs/{path.parent.name}.ll"]
    assert m.group(1) == expected
    issue = (path.parent / "issue.md").read_text()
    pipeline = re.search(r"^; From rgpu-fuzz case \w+ \((\S+)\)\.$", text, re.M)
    assert pipeline is not None
    assert f"- evidence: {pipeline.group(1)} wrong; also wrong: llc-22" in issue
    assert "### Filed already?" in issue and f"docs/llvm-bugs/{path.parent.name}.ll" in issue
