"""The atomics profile writes only order-independent kernels (generators/atomics.py): the
reference, which runs each under seven schedules, accepts every one, and the kernels contain
the atomics constructs."""

from __future__ import annotations

from generators.constructs import case_constructs
from generators.grammar import from_seed
from rgpu_fuzz.interp import Finished, run_kernel
from rgpu_fuzz.model.inputs import argument_values
from rgpu_fuzz.model.outcome import Rejected, Trap
from rgpu_fuzz.pipelines.frontend import prepare


def test_generated_atomics_are_schedule_independent() -> None:
    seen: set[str] = set()
    for seed in range(40):
        case = from_seed(seed, "atomics")
        prepared = prepare(case)
        assert isinstance(prepared, tuple), (seed, prepared)
        checked, _ = prepared
        result = run_kernel(checked, case.entry, grid=case.launch.grid,
                            block=case.launch.block, args=argument_values(case.args),
                            step_budget=2_000_000)
        assert not isinstance(result, Rejected), (seed, result, case.kernel)
        assert isinstance(result, Finished | Trap)
        seen |= {c for c in case_constructs(case) if c.startswith("atomic:")}
    assert {"atomic:buffer", "atomic:compare-exchange", "atomic:result-used",
            "atomic:rmw-shared", "atomic:fence"} <= seen, sorted(seen)
