"""The reference interpreter computes what the real rustc computes, on every hand-written
semantics kernel (values in `expected/`, produced by `regen_expected.py`)."""

from __future__ import annotations

import pytest

from rgpu_fuzz.casefile import load
from rgpu_fuzz.model.case import BufferArg
from rgpu_fuzz.model.inputs import argument_values
from rgpu_fuzz.model.outcome import Trap
from rgpu_fuzz.model.scalars import to_bits
from tests.semantics.expected_values import (
    CASES,
    case_names,
    load_expected,
    output_mismatches,
)

STEP_BUDGET = 10_000_000


@pytest.mark.parametrize("name", case_names())
def test_interpreter_agrees_with_rustc(name: str) -> None:
    from rgpu_fuzz.interp import Finished, run_kernel
    from rgpu_fuzz.lang.checker import check_source

    path = CASES / f"{name}.toml"
    case = load(path)
    want = load_expected(name)
    checked = check_source(case.kernel, str(path))
    outcome = run_kernel(checked, case.entry, grid=case.launch.grid, block=case.launch.block,
                         args=argument_values(case.args), step_budget=STEP_BUDGET)
    if "trap" in want:
        assert isinstance(outcome, Trap), f"rustc traps with {want['trap']}, interpreter: {outcome}"
        assert str(outcome.kind) == want["trap"]
        return
    assert isinstance(outcome, Finished), f"rustc computes outputs, interpreter: {outcome}"
    got = {}
    for buf, values in outcome.outputs.items():
        arg = case.arg(buf)
        assert isinstance(arg, BufferArg)
        got[buf] = to_bits(values, arg.elem)
    assert output_mismatches(case, got, want["outputs"]) == []
