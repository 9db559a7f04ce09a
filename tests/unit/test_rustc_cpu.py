"""`rustc-cpu`: a few cases through the real rustc, batches against single compiles, the
fallback when one case of a batch does not compile, and availability."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rgpu_fuzz.casefile import load
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import CompileCrash, Ok, Outcome, Trap, Unavailable
from rgpu_fuzz.pipelines import rustc_batch
from rgpu_fuzz.pipelines.base import PipelineSpec
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.rustc_cpu import RustcCpuPipeline
from rgpu_fuzz.pipelines.rustc_program import ProgramCase, find_rustc, program_case, program_source
from tests.semantics.expected_values import CASES, load_expected, output_mismatches

needs_rustc = pytest.mark.skipif(find_rustc() is None,
                                 reason="rustc not found (put it on PATH or set RGPU_RUSTC)")

BATCH = ("bool_ops", "int_ops_u8", "trap_oob_read", "shared_reduce", "cf_helpers",
         "trap_rem_overflow")


def _case(name: str) -> Case:
    return load(CASES / f"{name}.toml")


def _pipeline(level: str = "O2") -> RustcCpuPipeline:
    return RustcCpuPipeline(PipelineSpec("rustc-cpu", (level,)))


def _summary(outcome: Outcome) -> tuple[Any, ...]:
    """What a batch must reproduce exactly: status and result, not timings or hashes."""
    match outcome:
        case Ok(outputs=outputs):
            return ("ok", {k: b.bits() for k, b in outputs.items()})
        case Trap(kind=kind, where=where):
            return ("trap", kind, where)
        case CompileCrash(stage=stage, signature=sig):
            return ("compile-crash", stage, sig)
    return (str(outcome.status),)


@pytest.fixture(scope="module")
def unbatched() -> list[tuple[Any, ...]]:
    """The outcomes of `BATCH` compiled one by one at O0 (O0 compiles fastest)."""
    pipeline = _pipeline("O0")
    return [_summary(pipeline.run(_case(n))) for n in BATCH]


def test_registered_under_its_name() -> None:
    assert Registry().cls("rustc-cpu") is RustcCpuPipeline
    assert _pipeline("O3").opt_level == 3
    assert RustcCpuPipeline(PipelineSpec("rustc-cpu")).opt_level == 2


def test_unavailable_when_rgpu_rustc_points_nowhere(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    monkeypatch.setenv("RGPU_RUSTC", str(tmp_path / "no-such-rustc"))
    pipeline = _pipeline()
    reason = pipeline.unavailable_reason()
    assert reason is not None and "no-such-rustc" in reason and "\n" not in reason
    assert isinstance(pipeline.run(_case("bool_ops")), Unavailable)
    assert all(isinstance(o, Unavailable) for o in pipeline.run_batch([_case("bool_ops")] * 2))


def test_program_maps_lines_back_to_cases() -> None:
    units = [program_case(_case(n)) for n in ("bool_ops", "cf_helpers")]
    program = program_source(units)
    lines = program.source.splitlines()
    for index, (unit, (first, end)) in enumerate(zip(units, program.kernel_lines, strict=True)):
        assert end - first == unit.kernel_source.rstrip("\n").count("\n") + 1
        assert "use rgpu::*;" in lines[first - 1]
        assert program.case_at(first) == index and program.case_at(end - 1) == index
    assert program.case_at(1) is None


@needs_rustc
@pytest.mark.rustc
@pytest.mark.parametrize("name", ["int_methods_i32", "trap_div_overflow"])
def test_agrees_with_stored_rustc_values(name: str) -> None:
    case = _case(name)
    want = load_expected(name)
    outcome = _pipeline().run(case)
    assert outcome.stats.artefacts.keys() >= {"source", "rust-source", "binary"}
    assert outcome.stats.seconds.keys() >= {"rustc", "run", "total"}
    if "trap" in want:
        assert isinstance(outcome, Trap), outcome
        assert str(outcome.kind) == want["trap"]
        assert outcome.where is not None and outcome.where.line >= 1
        return
    assert isinstance(outcome, Ok), outcome
    got = {k: b.bits() for k, b in outcome.outputs.items()}
    assert output_mismatches(case, got, want["outputs"]) == []


@needs_rustc
@pytest.mark.rustc
def test_batch_gives_exactly_the_unbatched_outcomes(unbatched: list[tuple[Any, ...]]) -> None:
    batched = _pipeline("O0").run_batch([_case(n) for n in BATCH])
    assert [_summary(o) for o in batched] == unbatched
    assert len({o.stats.artefacts["binary"] for o in batched}) == 1


@needs_rustc
@pytest.mark.rustc
@pytest.mark.parametrize("blame", [True, False], ids=["blamed-by-line", "halving"])
def test_a_case_that_does_not_compile_does_not_poison_its_batch(
        monkeypatch: pytest.MonkeyPatch, blame: bool, unbatched: list[tuple[Any, ...]]) -> None:
    cases = [_case(n) for n in BATCH[:4]]
    bad = cases[2].id
    original = RustcCpuPipeline.program_case

    def broken(self: RustcCpuPipeline, case: Case) -> Any:
        unit = original(self, case)
        if isinstance(unit, ProgramCase) and case.id == bad:
            return ProgramCase(unit.case, unit.kernel_source + "fn broken() -> u32 { 1u8 }\n",
                               unit.params, unit.args)
        return unit

    monkeypatch.setattr(RustcCpuPipeline, "program_case", broken)
    if not blame:
        monkeypatch.setattr(rustc_batch, "_blamed", lambda build: set())
    outcomes = _pipeline("O0").run_batch(cases)
    crash = outcomes[2]
    assert isinstance(crash, CompileCrash), crash
    assert crash.stage == "rustc-error"
    assert crash.signature == "error[E0308]: mismatched types"
    assert [_summary(o) for i, o in enumerate(outcomes) if i != 2] == [
        s for i, s in enumerate(unbatched[:4]) if i != 2]
