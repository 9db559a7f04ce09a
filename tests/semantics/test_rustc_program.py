"""The stored expected values still come from the real rustc: rerun it on them.

The slow run (`make test-all`) rechecks every case; `make test` rechecks `SAMPLE` of them,
chosen by the UTC date (`daily_sample`), so that over the days every stored value meets
the rustc of the day. `RGPU_RUSTC_SAMPLE_DATE=YYYY-MM-DD` picks the sample of another day
(to rerun a red day's sample). Also pins the host-program text transformation, which needs
no rustc.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from rgpu_fuzz.casefile import load
from rgpu_fuzz.pipelines.rustc_program import (
    compile_and_run,
    find_rustc,
    kernel_params,
    rust_kernel_text,
    uses_barrier,
)
from tests.semantics.expected_values import (
    CASES,
    case_names,
    load_expected,
    output_mismatches,
)

SAMPLE = 3
"""Cases `make test` rechecks a day (a rustc compile and run each)."""


def daily_sample(names: Sequence[str], day: date, k: int = SAMPLE) -> list[str]:
    """`k` of `names`, ranked by a hash of the day and the name: another sample every day,
    the same one all day (every xdist worker collects the same tests)."""
    return sorted(names, key=lambda n: hashlib.sha256(f"{day}:{n}".encode()).digest())[:k]


def _sample_day() -> date:
    chosen = os.environ.get("RGPU_RUSTC_SAMPLE_DATE")
    return date.fromisoformat(chosen) if chosen else datetime.now(UTC).date()


def _recheck_params() -> list[object]:
    sample = set(daily_sample(case_names(), _sample_day()))
    return [pytest.param(n, marks=() if n in sample else (pytest.mark.slow,))
            for n in case_names()]


def test_every_case_has_current_expected_values() -> None:
    for name in case_names():
        doc = load_expected(name)
        assert doc["case_id"] == load(CASES / f"{name}.toml").id, (
            f"{name}: the case changed; run tests/semantics/regen_expected.py")
        assert ("outputs" in doc) != ("trap" in doc)


def test_the_daily_sample_rotates() -> None:
    """Three distinct cases a day, the same for the whole day, and over a month most cases
    come up (60 cases, 30 samples of 3: about 47 expected by chance)."""
    names = case_names()
    day = date(2026, 1, 1)
    first = daily_sample(names, day)
    assert len(set(first)) == SAMPLE and set(first) <= set(names)
    assert daily_sample(names, day) == first
    month = {n for d in range(1, 31) for n in daily_sample(names, date(2026, 1, d))}
    assert len(month) >= 35


@pytest.mark.rustc
@pytest.mark.parametrize("name", _recheck_params())
def test_rustc_still_computes_the_stored_values(name: str, tmp_path: Path) -> None:
    if find_rustc() is None:
        pytest.skip("rustc not found (put it on PATH or set RGPU_RUSTC)")
    case = load(CASES / f"{name}.toml")
    want = load_expected(name)
    got = compile_and_run(case, opt_level=want["opt_level"], workdir=tmp_path)
    assert got.compile_error is None, got.log
    assert got.run_error is None, got.log
    if "trap" in want:
        assert got.trap is not None and str(got.trap) == want["trap"]
    else:
        assert got.outputs is not None
        assert output_mismatches(case, got.outputs, want["outputs"]) == []


def test_attributes_are_removed_and_lines_kept() -> None:
    src = ("use rgpu::*;\n#[shared] static mut T: [u32; 4] = [0u32; 4];\n"
           "fn f(a: u32, b: u32) -> u32 { a + b } // #[kernel] in a comment\n"
           "#[kernel] pub fn k(inp: &[u32], out: &mut [u32], n: u32) { sync_threads(); }\n")
    text = rust_kernel_text(src)
    assert "#[" not in text
    assert "pub fn k(inp: &[u32]" in text and "static mut T" in text
    assert text.count("\n") == src.count("\n")
    assert uses_barrier(src)
    assert [(p.name, str(p.ty), p.kind) for p in kernel_params(src, "k")] == [
        ("inp", "u32", "slice"), ("out", "u32", "mut-slice"), ("n", "u32", "scalar")]
