"""Plugins that break rather than miscompile. Each is the plugin's failure, so
each must become an outcome of that pipeline — `pipeline-error` for a `_run` that raises or
returns a wrong value, `timeout` for one that never returns, `compile-crash` for a
`transform_ir` that raises or returns something that is not IR — while `ref` and every other
pipeline keep their results and a campaign goes on."""

from __future__ import annotations

import time

import numpy as np

from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import Buffer, Ok, Outcome
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline
from rgpu_fuzz.pipelines.ref import RefPipeline


class Raises(RefPipeline):
    name = "broken-raises"
    description = "_run raises ZeroDivisionError"

    def _run(self, case: Case) -> Outcome:
        return 1 // 0  # type: ignore[no-any-return]


class ReturnsText(RefPipeline):
    name = "broken-text"
    description = "_run returns a string"

    def _run(self, case: Case) -> Outcome:
        return "all good"  # type: ignore[return-value]


class ReturnsNone(RefPipeline):
    name = "broken-none"
    description = "_run returns None"

    def _run(self, case: Case) -> Outcome:
        return None  # type: ignore[return-value]


class WrongShape(RefPipeline):
    name = "broken-shape"
    description = "_run returns Ok with a buffer the kernel does not have"

    def _run(self, case: Case) -> Outcome:
        return Ok(outputs={"no_such_buffer": Buffer(Scalar.U8, np.zeros(3, dtype=np.uint8))})


class ShortBuffer(RefPipeline):
    name = "broken-short"
    description = "_run returns Ok whose buffers are one element short"

    def _run(self, case: Case) -> Outcome:
        got = super()._run(case)
        assert isinstance(got, Ok)
        return Ok(outputs={n: Buffer(b.ty, b.values[:-1]) for n, b in got.outputs.items()})


class SleepsForever(RefPipeline):
    name = "broken-sleep"
    description = "_run never returns (in-process); timeout 1 s"
    timeout = 1.0

    def _run(self, case: Case) -> Outcome:
        while True:
            time.sleep(3600)


class TransformRaises(LlvmCpuPipeline):
    name = "broken-transform-raises"
    description = "transform_ir raises"

    def transform_ir(self, ir_text: str) -> str:
        raise ValueError("no IR today")


class TransformNone(LlvmCpuPipeline):
    name = "broken-transform-none"
    description = "transform_ir returns None"

    def transform_ir(self, ir_text: str) -> str:
        return None  # type: ignore[return-value]


class TransformJunk(LlvmCpuPipeline):
    name = "broken-transform-junk"
    description = "transform_ir returns text that is not LLVM IR"

    def transform_ir(self, ir_text: str) -> str:
        return "this is not LLVM IR"
