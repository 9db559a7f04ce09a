"""The conformance suite every pipeline must pass (STYLE.md rule 3): on each hand-written
semantics kernel it computes what the real rustc computed — bit for bit, any NaN equal to any
NaN, `min`/`max` zeros either sign — or traps with the same kind. Expected values are in
`tests/semantics/expected/`, written by `tests/semantics/regen_expected.py` from rustc.

Pipelines: `RGPU_CONFORMANCE_PIPELINES` (comma-separated specs, `--plugin`-free: register
third-party pipelines through the entry-point group) or the built-ins below. Each pipeline
runs all cases through `run_many`, as a campaign would (rustc batches them).
"""

from __future__ import annotations

import os
from functools import cache

import pytest

from rgpu_fuzz.casefile import load
from rgpu_fuzz.model.outcome import Ok, Outcome, Trap, Unavailable, Unsupported
from rgpu_fuzz.pipelines.base import Pipeline
from rgpu_fuzz.pipelines.registry import Registry
from tests.semantics.expected_values import CASES, case_names, load_expected, output_mismatches

BUILTIN = {"ref": (), "llvm-cpu:O0": (), "llvm-cpu:O3": (),
           "rustc-cpu:O2": (pytest.mark.slow, pytest.mark.rustc),
           "rustc-amdgpu:gfx942:O0": (pytest.mark.slow, pytest.mark.rustc),
           "rustc-amdgpu:gfx942:O2": (pytest.mark.slow, pytest.mark.rustc)}


def _specs() -> list[object]:
    chosen = os.environ.get("RGPU_CONFORMANCE_PIPELINES")
    if chosen:
        return [s.strip() for s in chosen.split(",") if s.strip()]
    return [pytest.param(spec, marks=marks) for spec, marks in BUILTIN.items()]


@cache
def _pipeline(spec: str) -> Pipeline:
    return Registry().create(spec)


def _batches(pipeline: Pipeline) -> bool:
    return type(pipeline)._run_many is not Pipeline._run_many


@cache
def _batched_outcomes(spec: str) -> dict[str, Outcome]:
    names = case_names()
    pipeline = _pipeline(spec)
    outcomes: dict[str, Outcome] = {}
    for start in range(0, len(names), 16):
        chunk = names[start:start + 16]
        cases = [load(CASES / f"{n}.toml") for n in chunk]
        outcomes.update(zip(chunk, pipeline.run_many(cases), strict=True))
    return outcomes


@pytest.mark.parametrize("name", case_names())
@pytest.mark.parametrize("spec", _specs())
def test_pipeline_computes_what_rustc_computed(spec: str, name: str) -> None:
    pipeline = _pipeline(spec)
    case = load(CASES / f"{name}.toml")
    if _batches(pipeline):  # run every case in batches once per process, as campaigns do
        outcome = _batched_outcomes(spec)[name]
    else:
        outcome = pipeline.run(case)
    if isinstance(outcome, Unavailable):
        pytest.skip(f"{spec}: {outcome.reason}")
    if isinstance(outcome, Unsupported):
        pytest.skip(f"{spec} does not support {', '.join(outcome.features)}")
    want = load_expected(name)
    if "trap" in want:
        assert isinstance(outcome, Trap), f"rustc traps with {want['trap']}, {spec}: {outcome}"
        assert str(outcome.kind) == want["trap"]
        return
    assert isinstance(outcome, Ok), f"rustc computes outputs, {spec}: {outcome}"
    got = {buf: outcome.outputs[buf].bits() for buf in outcome.outputs}
    assert output_mismatches(case, got, want["outputs"]) == []
