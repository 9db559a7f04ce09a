"""`ref`: the reference interpreter, the arbiter of every comparison (docs/design.md §3)."""

from __future__ import annotations

import time
from dataclasses import replace

from rgpu_fuzz.interp import Finished, run_kernel
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.inputs import argument_values
from rgpu_fuzz.model.outcome import Buffer, Ok, Outcome, Stats
from rgpu_fuzz.pipelines.base import Pipeline, PipelineSpec
from rgpu_fuzz.pipelines.frontend import prepare
from rgpu_fuzz.pipelines.options import Float, Int, KeyChoice
from rgpu_fuzz.targets import DEFAULT_WAVE_SIZE, WAVE_SIZES

DEFAULT_STEP_BUDGET = 10_000_000
DEFAULT_TIME_BUDGET = 10.0
"""Seconds a launch may run before `Rejected(step-budget)`: a case that does not terminate
costs this, not the minutes `DEFAULT_STEP_BUDGET` steps take (microseconds each)."""


class RefPipeline(Pipeline):
    """Runs the case on the reference interpreter. Options: a step budget and a time budget
    in seconds, e.g. `ref:steps=1000:time=2`; past either the case is rejected as not
    terminating (`step-budget`); the wave size, `ref:wave=32`."""

    name = "ref"
    description = "reference interpreter (the executable specification; the arbiter)"
    STEPS = Int(name="steps", value=DEFAULT_STEP_BUDGET, min=1,
                help="step budget; past it the case is rejected (step-budget)")
    TIME = Float(name="time", value=DEFAULT_TIME_BUDGET,
                 help="seconds a launch may run; past them the case is rejected (step-budget)")
    WAVE = KeyChoice(name="wave", choices=tuple(str(w) for w in WAVE_SIZES),
                     choice=str(DEFAULT_WAVE_SIZE),
                     help="the wave size the wave functions run at (lanes per wave)")
    options = (STEPS, TIME, WAVE)
    timeout = 600.0
    """The step budget is what normally ends a long run; this only stops a stuck one."""

    @property
    def wave_size(self) -> int:
        return int(self.option(self.WAVE))

    def with_wave_size(self, size: int) -> RefPipeline:
        """The reference at wave size `size`, its other options as given."""
        if size == self.wave_size:
            return self
        tokens = [t for t in self.spec.options if not t.startswith("wave=")]
        return type(self)(PipelineSpec(self.spec.name, (*tokens, f"wave={size}")))

    def _step_budget(self) -> int:
        return self.option(self.STEPS)

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
                            time_budget=self.option(self.TIME), wave_size=self.wave_size)
        t2 = time.perf_counter()
        seconds = {"check": t1 - t0, "run": t2 - t1}
        if isinstance(result, Finished):
            outputs = {p.name: Buffer(case.arg(p.name).elem, result.outputs[p.name],  # type: ignore[union-attr]
                                      result.latitude.get(p.name))
                       for p in kernel.params if p.name in result.outputs}
            return Ok(outputs=outputs, stats=Stats(seconds=seconds))
        return replace(result, stats=Stats(seconds=seconds))
