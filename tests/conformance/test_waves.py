"""The wave conformance cases: every wave function on hand-worked values, at wave 32 and 64
(docs/language.md "Wave operations", docs/conformance.md "Wave operations").

Each case `tests/conformance/waves/<name>.toml` has `<name>.expect.toml` beside it: its
`how` says how the values were worked out by hand from the language reference, and per wave
size each `&mut` buffer's values as runs `[first, step, count]` (`first`, `first + step`, …),
or `rejected = "<reason>"` where the case is ill-defined at that size. Every pipeline of
`wave_pipelines.toml` marked `enabled` runs every case and must give the values of the wave
size it declares; where the reference rejects the case at that size, nothing is compared.
`RGPU_WAVE_PIPELINES` (comma-separated specs) runs others instead.
"""

from __future__ import annotations

import os
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from generators.constructs import construct_coverage
from rgpu_fuzz.casefile import load
from rgpu_fuzz.model.case import BufferArg, Case
from rgpu_fuzz.model.outcome import Ok, Rejected, Unavailable
from rgpu_fuzz.pipelines.base import Pipeline
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.targets import WAVE_SIZES

HERE = Path(__file__).resolve().parent
CASES = HERE / "waves"
TABLE = HERE / "wave_pipelines.toml"


def case_names() -> list[str]:
    return sorted(p.stem for p in CASES.glob("*.toml") if not p.stem.endswith(".expect"))


@cache
def case(name: str) -> Case:
    return load(CASES / f"{name}.toml")


@cache
def expectation(name: str) -> dict[str, Any]:
    return tomllib.loads((CASES / f"{name}.expect.toml").read_text(encoding="utf-8"))


def enabled_specs() -> list[str]:
    chosen = os.environ.get("RGPU_WAVE_PIPELINES")
    if chosen:
        return [s.strip() for s in chosen.split(",") if s.strip()]
    table = tomllib.loads(TABLE.read_text(encoding="utf-8"))
    return [row["spec"] for row in table["pipeline"] if row["enabled"]]


def known_failure(spec: str, name: str) -> str | None:
    """Why `name` is a known divergence on `spec` (the row's `known` table: case name ->
    the bug it shows, with its write-up), or None. Such a test is a strict xfail: it fails
    the suite the day the bug is gone, so the entry goes with it."""
    table = tomllib.loads(TABLE.read_text(encoding="utf-8"))
    for row in table["pipeline"]:
        if row["spec"] == spec:
            return row.get("known", {}).get(name)
    return None


def expand(runs: list[list[int]]) -> list[int]:
    return [first + step * i for first, step, count in runs for i in range(count)]


@cache
def pipeline(spec: str) -> Pipeline:
    return Registry().create(spec)


def test_every_case_says_how_its_values_were_worked_out_at_both_sizes() -> None:
    assert len(case_names()) >= 10
    for name in case_names():
        exp = expectation(name)
        assert "by hand" in exp["how"], name
        outputs = {a.name: a for a in case(name).args
                   if isinstance(a, BufferArg) and a.name in _mut_params(case(name))}
        for w in WAVE_SIZES:
            at = exp[f"wave{w}"]
            if "rejected" in at:
                continue
            assert set(at) == set(outputs), (name, w)
            for buf, runs in at.items():
                assert len(expand(runs)) == outputs[buf].len, (name, w, buf)


def test_the_cases_reach_every_wave_construct() -> None:
    """Each `wave:*` construct of the generator's catalogue, and a block with a partial wave
    at wave 64 only, occur in a wave case (tests/conformance/test_coverage.py defers them
    here: rustc-cpu cannot run wave functions)."""
    cov = construct_coverage(case(n) for n in case_names())
    missing = [c for c in cov.missing() if c.startswith("wave:") or c == "launch:partial-wave64"]
    assert missing == []


def _mut_params(c: Case) -> set[str]:
    from rgpu_fuzz.lang.parser import parse

    kernel = parse(c.kernel).fns()[c.entry]
    return {p.name for p in kernel.params if getattr(p.ty, "mutable", False)}


@pytest.mark.parametrize("name", case_names())
@pytest.mark.parametrize("spec", enabled_specs())
def test_wave_case(spec: str, name: str, request: pytest.FixtureRequest) -> None:
    known = known_failure(spec, name)
    if known is not None:
        request.node.add_marker(pytest.mark.xfail(reason=known, strict=True,
                                                  raises=AssertionError))
    p = pipeline(spec)
    got = p.run(case(name), frozenset({"wave"}))
    if isinstance(got, Unavailable):
        pytest.skip(f"{spec}: {got.reason}")
    want = expectation(name)[f"wave{p.wave_size}"]
    if "rejected" in want:
        if spec.split(":", 1)[0] == "ref":
            assert isinstance(got, Rejected) and str(got.reason) == want["rejected"], got
        return  # the reference rejects the case at this size: nothing to compare
    assert isinstance(got, Ok), got
    assert got.stats.wave_size == p.wave_size
    for buf, runs in want.items():
        values = got.outputs[buf].values
        expected = np.array(expand(runs)).astype(values.dtype)
        bad = np.flatnonzero(values != expected)
        assert not len(bad), (f"{buf}[{int(bad[0])}] = {values[bad[0]]}, expected "
                              f"{expected[bad[0]]} ({len(bad)} differ)")
