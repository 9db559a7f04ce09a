"""The corpus's known-divergence xfail accepts the known divergence and nothing else: before it
named `raises=KnownDivergence`, any exception of the test (a harness error, a divergence on
another pipeline) passed as the expected failure.

A real pytest run (subprocess) over three variants of the corpus's one known divergence
(526d09799032: gfx942 O0 traps out of bounds where `ref` does not, docs/findings): as filed
it xfails; declared on another pipeline, with the real divergence still run, it fails; with a
pipeline spec the harness rejects, it fails."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from rgpu_fuzz import casefile
from rgpu_fuzz.model.case import Expect, ExpectStatus

ROOT = Path(__file__).resolve().parents[2]
KNOWN = ROOT / "corpus" / "526d09799032.toml"

RUNNER = """
from pathlib import Path

import pytest

from rgpu_fuzz import casefile
from tests.corpus.test_corpus import check_case, expectation_marks

CASES = sorted(Path(__file__).parent.glob("*.toml"))


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem, marks=expectation_marks(
    casefile.load(p))) for p in CASES])
def test_case(path):
    check_case(path)
"""


def _variant(tmp: Path, name: str, pipelines: tuple[str, ...]) -> None:
    case = casefile.load(KNOWN)
    assert case.expect is not None
    expect = Expect(status=ExpectStatus.KNOWN_DIVERGENCE, pipelines=pipelines,
                    issue=case.expect.issue)
    casefile.save(replace(case, expect=expect), tmp / f"{name}.toml")


def test_only_the_known_divergence_is_an_expected_failure(tmp_path: Path) -> None:
    _variant(tmp_path, "as_filed", ("amdgpu-sim:gfx942:O0",))
    _variant(tmp_path, "elsewhere", ("llvm-cpu:O0",))          # gfx942 O0 still runs below
    _variant(tmp_path, "harness_error", ("llvm-cpu:bogus=1",))  # PipelineError, not a finding
    (tmp_path / "test_variants.py").write_text(RUNNER)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "RGPU_CORPUS_PIPELINES": "ref,amdgpu-sim:gfx942:O0", "COLUMNS": "1000"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                           str(tmp_path)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    lines = proc.stdout.splitlines()
    assert any(x.startswith("XFAIL") and "as_filed" in x for x in lines), proc.stdout
    assert any(x.startswith("FAILED") and "elsewhere" in x and "diverges beyond" in x
               for x in lines), proc.stdout
    assert any(x.startswith("FAILED") and "harness_error" in x and "PipelineError" in x
               for x in lines), proc.stdout
    assert "2 failed, 1 xfailed" in proc.stdout, proc.stdout
