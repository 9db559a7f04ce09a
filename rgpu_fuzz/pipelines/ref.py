"""`ref`: the reference interpreter, the arbiter of every comparison (DESIGN.md §4)."""

from __future__ import annotations

import time
from dataclasses import replace

from rgpu_fuzz.interp import Finished, run_kernel
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.inputs import argument_values
from rgpu_fuzz.model.outcome import Buffer, Ok, Outcome, Stats
from rgpu_fuzz.pipelines.base import Pipeline
from rgpu_fuzz.pipelines.frontend import prepare

DEFAULT_STEP_BUDGET = 10_000_000
DEFAULT_TIME_BUDGET = 10.0
"""Seconds a launch may run before `Rejected(step-budget)`: a case that does not terminate
costs this, not the minutes `DEFAULT_STEP_BUDGET` steps take (a few microseconds each)."""


class RefPipeline(Pipeline):
    """Runs the case on the reference interpreter. Options: a step budget and a time budget
    in seconds, e.g. `ref:steps=1000:time=2`."""

    name = "ref"
    description = "reference interpreter (the executable specification; the arbiter)"
    option_help = "steps=N: step budget (default 10000000); time=SECONDS: time budget (default 10)"

    def _step_budget(self) -> int:
        for opt in self.spec.options:
            key, _, value = opt.partition("=")
            if key == "steps" and value.isdigit():
                return int(value)
        return DEFAULT_STEP_BUDGET

    def _time_budget(self) -> float:
        for opt in self.spec.options:
            key, _, value = opt.partition("=")
            if key == "time":
                try:
                    return float(value)
                except ValueError:
                    break
        return DEFAULT_TIME_BUDGET

    def _run(self, case: Case) -> Outcome:
        t0 = time.perf_counter()
        prepared = prepare(case)
        if not isinstance(prepared, tuple):
            return prepared
        checked, kernel = prepared
        t1 = time.perf_counter()
        args = argument_values(case.args)
        result = run_kernel(checked, case.entry, grid=case.launch.grid, block=case.launch.block,
                            args=args, step_budget=self._step_budget(),
                            time_budget=self._time_budget())
        t2 = time.perf_counter()
        seconds = {"check": t1 - t0, "run": t2 - t1}
        if isinstance(result, Finished):
            outputs = {p.name: Buffer(case.arg(p.name).elem, result.outputs[p.name])  # type: ignore[union-attr]
                       for p in kernel.params if p.name in result.outputs}
            return Ok(outputs=outputs, stats=Stats(seconds=seconds))
        return replace(result, stats=Stats(seconds=seconds))
