"""The conformance suite every pipeline must pass: on each hand-written
semantics kernel it computes what the real rustc computed — bit for bit, any NaN equal to any
NaN, `min`/`max` zeros either sign — or traps with the same kind. Expected values are in
`tests/semantics/expected/`, written by `tests/semantics/regen_expected.py` from rustc.

Pipelines: `RGPU_CONFORMANCE_PIPELINES` (comma-separated specs, `--plugin`-free: register
third-party pipelines through the entry-point group) or the built-ins below: every case on
every simulated target (docs/conformance.md "Matrix"). `make test` runs the fast ones
(`amdgpu-sim` at O0 and O3, about 10 s of CPU per pipeline in batches); `-m slow` adds
`amdgpu-sim` O1/O2, `rustc-cpu` and `rustc-amdgpu` at O0 and O2 per target. Each pipeline
runs all cases through `run_many`, as a campaign would (`amdgpu-sim` and rustc batch them),
and all of one pipeline's tests share an xdist group, so the batches are built once.

`tests/conformance/known.py` holds the known failures (strict xfails, each with its class)
and the `Unsupported` budget: an `Unsupported` outcome is a skip, and
`test_unsupported_within_budget` fails when a pipeline answers it for a case the budget does
not name, or no longer answers it for one it does.
"""

from __future__ import annotations

import os
from functools import cache

import pytest

from rgpu_fuzz.casefile import load
from rgpu_fuzz.model.outcome import Ok, Outcome, Trap, Unavailable, Unsupported
from rgpu_fuzz.pipelines.base import Pipeline
from rgpu_fuzz.pipelines.registry import Registry
from tests.conformance.known import allowed_unsupported, known_failure
from tests.semantics.expected_values import CASES, case_names, load_expected, output_mismatches

TARGETS = ("gfx942", "gfx950", "gfx90a", "gfx1100", "gfx1200")
SIM_FAST_LEVELS = (0, 3)
SIM_SLOW_LEVELS = (1, 2)
RUSTC_AMDGPU_LEVELS = (0, 2)

_SLOW = (pytest.mark.slow,)
_RUSTC = (pytest.mark.slow, pytest.mark.rustc)


def builtin() -> dict[str, tuple[pytest.MarkDecorator, ...]]:
    """Spec → marks: the host pipelines, then per target the simulator at every level and
    rustc-amdgpu at O0 and O2."""
    specs: dict[str, tuple[pytest.MarkDecorator, ...]] = {
        "ref": (), "llvm-cpu:O0": (), "llvm-cpu:O2": (), "llvm-cpu:O3": (),
        "rustc-cpu:O2": _RUSTC}
    for t in TARGETS:
        specs |= {f"amdgpu-sim:{t}:O{o}": () for o in SIM_FAST_LEVELS}
        specs |= {f"amdgpu-sim:{t}:O{o}": _SLOW for o in SIM_SLOW_LEVELS}
        specs |= {f"rustc-amdgpu:{t}:O{o}": _RUSTC for o in RUSTC_AMDGPU_LEVELS}
    return specs


def _chosen() -> dict[str, tuple[pytest.MarkDecorator, ...]]:
    chosen = os.environ.get("RGPU_CONFORMANCE_PIPELINES")
    if chosen:
        return {s.strip(): () for s in chosen.split(",") if s.strip()}
    return builtin()


@cache
def _pipeline(spec: str) -> Pipeline:
    return Registry().create(spec)


def _params() -> list[object]:
    """One test per (pipeline, case), in its pipeline's xdist group; a known failure is a
    strict xfail naming its class."""
    params: list[object] = []
    for spec, marks in _chosen().items():
        label = _pipeline(spec).label
        group = pytest.mark.xdist_group(f"conformance-{label}")
        for name in case_names():
            known = known_failure(name, label)
            xfail = () if known is None else (pytest.mark.xfail(
                strict=True, reason=f"{known.klass}; observed {known.observed}"),)
            params.append(pytest.param(spec, name, marks=(*marks, group, *xfail),
                                       id=f"{spec}-{name}"))
    return params


def _spec_params() -> list[object]:
    return [pytest.param(spec, marks=(*marks, pytest.mark.xdist_group(
        f"conformance-{_pipeline(spec).label}")), id=spec) for spec, marks in _chosen().items()]


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


def _outcome(spec: str, name: str) -> Outcome:
    pipeline = _pipeline(spec)
    if _batches(pipeline):  # run every case in batches once per process, as campaigns do
        return _batched_outcomes(spec)[name]
    return pipeline.run(load(CASES / f"{name}.toml"))


@pytest.mark.parametrize(("spec", "name"), _params())
def test_pipeline_computes_what_rustc_computed(spec: str, name: str) -> None:
    case = load(CASES / f"{name}.toml")
    outcome = _outcome(spec, name)
    if isinstance(outcome, Unavailable):
        pytest.skip(f"{spec}: {outcome.reason}")
    label = _pipeline(spec).label
    if isinstance(outcome, Unsupported) and known_failure(name, label) is None:
        why = allowed_unsupported(label).get(name, "NOT IN THE BUDGET")
        pytest.skip(f"{spec} does not support {', '.join(outcome.features)} ({why})")
    want = load_expected(name)
    if "trap" in want:
        assert isinstance(outcome, Trap), f"rustc traps with {want['trap']}, {spec}: {outcome}"
        assert str(outcome.kind) == want["trap"]
        return
    assert isinstance(outcome, Ok), f"rustc computes outputs, {spec}: {outcome}"
    got = {buf: outcome.outputs[buf].bits() for buf in outcome.outputs}
    assert output_mismatches(case, got, want["outputs"]) == []


@pytest.mark.parametrize("spec", _spec_params())
def test_unsupported_within_budget(spec: str) -> None:
    """The cases `spec` answers `Unsupported` for are exactly those the budget names
    (`known.UNSUPPORTED_BUDGET`): one more is a coverage regression, one fewer a stale
    entry to remove."""
    outcomes = {n: _outcome(spec, n) for n in case_names()}
    if all(isinstance(o, Unavailable) for o in outcomes.values()):
        pytest.skip(f"{spec}: {next(iter(outcomes.values()))}")
    label = _pipeline(spec).label
    unsupported = {n for n, o in outcomes.items() if isinstance(o, Unsupported)
                   and known_failure(n, label) is None}  # a known one is a strict xfail
    allowed = set(allowed_unsupported(label))
    assert not unsupported - allowed, (
        f"{spec} answers Unsupported beyond its budget of {len(allowed)}: "
        f"{ {n: outcomes[n] for n in sorted(unsupported - allowed)} }")
    assert not allowed - unsupported, f"{spec} now runs {sorted(allowed - unsupported)}: " \
        "remove them from known.UNSUPPORTED_BUDGET"
