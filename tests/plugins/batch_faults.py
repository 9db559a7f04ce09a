"""Seeded faults that strike one case of a batch and not the others, to check that
`llvm-cpu`'s batches (`LlvmCpuPipeline._run_many`) lose nothing of the other cases, and a
batching bug, to check that the campaign reports a finding that shows only in a batch.

A case is struck when its lowered IR holds the constant 48879 (0xBEEF, written
`0xbeefu32` in the kernel): `llvm-cpu-abort-marked` then adds a function the host back end
cannot select (LLVM aborts in code generation, as `fatal.py`), `llvm-cpu-hang-marked` makes
the kernel's entry loop forever (as `hang.py`, 2 s timeout). `llvm-cpu-batch-bug` computes
correctly alone and flips bit 0 of every output element when it runs cases in a batch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import Buffer, Ok, Outcome
from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline

MARK = "48879"

_UNSELECTABLE = """
declare i32 @llvm.amdgcn.workitem.id.x()
define i32 @rgpu_plugin_fatal() {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  ret i32 %id
}
"""
_ENTRY = re.compile(r'^(define void @"?rgpu_kernel_[^\n]*\n?\{\n)', re.MULTILINE)
_SPIN = "rgpu.hang.entry:\n  br label %rgpu.hang\nrgpu.hang:\n  br label %rgpu.hang\n"


class AbortMarked(LlvmCpuPipeline):
    """`llvm-cpu` that makes LLVM abort in code generation on marked cases only."""

    name = "llvm-cpu-abort-marked"
    description = "llvm-cpu; LLVM aborts in codegen on kernels holding 0xBEEF (seeded crash)"

    def transform_ir(self, ir_text: str) -> str:
        return ir_text + _UNSELECTABLE if MARK in ir_text else ir_text


class HangMarked(LlvmCpuPipeline):
    """`llvm-cpu` whose marked kernels never return; 2 s timeout."""

    name = "llvm-cpu-hang-marked"
    description = "llvm-cpu; kernels holding 0xBEEF loop forever (seeded hang, timeout 2 s)"
    timeout = 2.0

    def transform_ir(self, ir_text: str) -> str:
        if MARK not in ir_text:
            return ir_text
        spun, n = _ENTRY.subn(lambda m: m.group(1) + _SPIN, ir_text, count=1)
        assert n == 1, "no kernel entry function in the IR"
        return spun


class BatchBug(LlvmCpuPipeline):
    """`llvm-cpu` that is right alone and wrong in a batch (a seeded batching bug)."""

    name = "llvm-cpu-batch-bug"
    description = "llvm-cpu; flips bit 0 of every output in a batch, not alone (seeded bug)"

    def _run_many(self, cases: Sequence[Case]) -> list[Outcome]:
        return [_flipped(o) for o in super()._run_many(cases)]


def _flipped(o: Outcome) -> Outcome:
    if not isinstance(o, Ok):
        return o
    return replace(o, outputs={k: Buffer(b.ty, _flip(b.values)) for k, b in o.outputs.items()})


def _flip(values: np.ndarray) -> np.ndarray:
    bits = values.view(np.dtype(f"u{values.itemsize}"))
    return (bits ^ bits.dtype.type(1)).view(values.dtype)
