"""`llvm-cpu` at O0 and O3 computes what the real rustc computes, bit for bit (any NaN equals
any NaN), on every hand-written semantics kernel (values in `expected/`)."""

from __future__ import annotations

import pytest

from rgpu_fuzz.casefile import load
from rgpu_fuzz.model.outcome import Ok, Trap
from rgpu_fuzz.pipelines.base import PipelineSpec
from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline
from tests.semantics.expected_values import CASES, case_names, load_expected, output_mismatches


@pytest.mark.parametrize("level", ["O0", "O3"])
@pytest.mark.parametrize("name", case_names())
def test_llvm_cpu_agrees_with_rustc(name: str, level: str) -> None:
    case = load(CASES / f"{name}.toml")
    want = load_expected(name)
    outcome = LlvmCpuPipeline(PipelineSpec("llvm-cpu", (level,))).run(case)
    if "trap" in want:
        assert isinstance(outcome, Trap), f"rustc traps with {want['trap']}, llvm-cpu: {outcome}"
        assert str(outcome.kind) == want["trap"]
        return
    assert isinstance(outcome, Ok), f"rustc computes outputs, llvm-cpu: {outcome}"
    got = {buf: outcome.outputs[buf].bits() for buf in outcome.outputs}
    assert output_mismatches(case, got, want["outputs"]) == []
