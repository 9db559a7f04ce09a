"""`lower.textir` writes the IR text llvmlite's builder writes, byte for byte.

The expected text is llvmlite 0.50's own `str(module)` (`llvmlite.ir`, an independent
implementation of the same builder API) for the same lowering calls: each side runs in a
child process with `RGPU_LOWER_IR` choosing the builder (`lower.irapi` chooses once per
process). Kernels: the conformance kernels (`tests/semantics/cases`), the corpus, and
generated cases of the `default`, `barriers` and `floats` profiles; targets: the host (the
IR `llvm-cpu` optimises at every level: the level is not an input of the lowering), amdgcn
and nvptx. The default run checks 30 kernels; the slow one all conformance kernels, the
corpus and 500 generated cases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rgpu_fuzz import casefile
from rgpu_fuzz.generators import SeededChoices, generate, load_profile
from rgpu_fuzz.model.case import Case
from tests.semantics.expected_values import CASES, case_names

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ("host", "amdgcn", "nvptx")


def _generated(profile: str, first: int, n: int) -> list[Case]:
    p = load_profile(profile)
    return [generate(SeededChoices(s), p, seed=s) for s in range(first, first + n)]


def _lower(backend: str, jobs: list[dict[str, str]]) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "tests.textir_lowering"], cwd=ROOT,
                         input=json.dumps(jobs), capture_output=True, text=True, check=False,
                         env=dict(os.environ, RGPU_LOWER_IR=backend))
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout)
    builder = {"text": "rgpu_fuzz.lower.textir", "llvmlite": "llvmlite.ir.builder"}[backend]
    assert (got["backend"], got["builder"]) == (backend, builder)
    return got["texts"]  # type: ignore[no-any-return]


def _assert_identical(cases: list[Case]) -> None:
    jobs = [{"kernel": c.kernel, "entry": c.entry, "target": t} for c in cases
            for t in TARGETS]
    text, llvmlite = _lower("text", jobs), _lower("llvmlite", jobs)
    lowered = sum(not t.startswith("LowerError") for t in llvmlite)
    assert lowered >= len(jobs) * 9 // 10, "most kernels lower on every target"
    differ = [(j["entry"], j["target"], j["kernel"]) for j, a, b
              in zip(jobs, text, llvmlite, strict=True) if a != b]
    assert differ == []


def test_text_equals_llvmlite_on_30_kernels() -> None:
    names = case_names()
    cases = [casefile.load(CASES / f"{n}.toml") for n in names[::len(names) // 8][:8]]
    cases += [casefile.load(p) for p in sorted((ROOT / "corpus").glob("*.toml"))][:4]
    cases += (_generated("default", 5_550_000, 6) + _generated("barriers", 1_000, 6)
              + _generated("floats", 2_000, 6))
    assert len(cases) == 30
    _assert_identical(cases)


@pytest.mark.slow
def test_text_equals_llvmlite_on_the_conformance_kernels_corpus_and_500_cases() -> None:
    cases = [casefile.load(CASES / f"{n}.toml") for n in case_names()]
    cases += [casefile.load(p) for p in sorted((ROOT / "corpus").glob("*.toml"))]
    cases += (_generated("default", 5_550_000, 250) + _generated("barriers", 1_000, 150)
              + _generated("floats", 2_000, 100))
    _assert_identical(cases)
