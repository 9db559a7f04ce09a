"""Differential on the project's own kernels: every conformance case (tests/semantics/cases)
and corpus case (corpus/*.toml), lowered to amdgcn by `rgpu_fuzz.lower`, compiled by LLVM and
linked; our rendering of every instruction equals `llvm-objdump-22 -d`. The default run
covers gfx942 at O0 and O3; the other targets and 1,000 generated cases per target are
`slow`."""

from __future__ import annotations

from pathlib import Path

import pytest

from generators import from_seed
from rgpu_fuzz import casefile
from rgpu_fuzz.codeobj import read_code_object
from rgpu_fuzz.sim.isa import Encoding, decode_code_object, render
from tests.conformance.known import known_failure
from tests.sim.case_objects import build
from tests.sim.llvm_disasm import objdump
from tests.toolchain import debian_llvm_tool

ROOT = Path(__file__).parents[2]
CASE_FILES = sorted((ROOT / "tests" / "semantics" / "cases").glob("*.toml")) + sorted(
    (ROOT / "corpus").glob("*.toml"))
GENERATED = 1000


def _plan(target: str, opt: int) -> tuple[list[tuple[str, str, int]], list[str]]:
    """Every case file at `target` and `opt`, but those whose known failure there is an
    LLVM crash (tests/conformance/known.py): `LLVM ERROR` aborts the whole build process."""
    files = []
    for p in CASE_FILES:
        known = known_failure(p.stem, f"amdgpu-sim:{target}:O{opt}")
        if not (known is not None and known.observed.startswith("CompileCrash")):
            files.append(p)
    return [(p.read_text(), target, opt) for p in files], [p.stem for p in files]


def _disagreements(objdump_path: str, code_object: Path) -> tuple[int, list[tuple[str, ...]]]:
    co = read_code_object(code_object.read_bytes())
    ours = decode_code_object(co)
    theirs = objdump(objdump_path, code_object)
    bad = [(hex(i.address), theirs.get(i.address, "<no instruction here>"), render(i))
           for i in ours if render(i) != theirs.get(i.address)
           or i.encoding is Encoding.UNKNOWN]
    boundaries = {i.address for i in ours}
    bad += [(hex(a), t, "<not an instruction boundary>") for a, t in theirs.items()
            if a not in boundaries]
    return len(ours), bad


def _check(plan: list[tuple[str, str, int]], labels: list[str]) -> None:
    objdump_path = debian_llvm_tool("llvm-objdump", 22)
    built = build(plan)
    total, failures = 0, []
    compiled = [(label, b) for label, b in zip(labels, built, strict=True) if isinstance(b, Path)]
    assert compiled, f"nothing compiled: {built[:3]}"
    for label, path in compiled:
        n, bad = _disagreements(objdump_path, path)
        total += n
        failures += [(label, *b) for b in bad]
    assert not failures, f"{len(failures)}/{total} differ: {failures[:10]}"


@pytest.mark.parametrize("opt", [0, 3])
def test_cases_gfx942(opt: int) -> None:
    _check(*_plan("gfx942", opt))


@pytest.mark.slow
@pytest.mark.parametrize("target", ["gfx950", "gfx90a", "gfx1100", "gfx1200"])
@pytest.mark.parametrize("opt", [0, 3])
def test_cases_other_targets(target: str, opt: int) -> None:
    _check(*_plan(target, opt))


@pytest.mark.slow
@pytest.mark.parametrize("target", ["gfx942", "gfx950", "gfx90a", "gfx1100", "gfx1200"])
def test_generated_cases(target: str) -> None:
    """Seeds 0..999 of the default profile; even seeds at O0, odd at O3."""
    plan = [(casefile.dumps(from_seed(seed)), target, 3 * (seed % 2)) for seed in range(GENERATED)]
    _check(plan, [f"seed{seed}" for seed in range(GENERATED)])
