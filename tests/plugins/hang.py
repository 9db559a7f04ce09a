"""A `llvm-cpu` whose kernel never returns: the entry function's first block is replaced by
a jump into a block that branches to itself. The worker must be killed after the (short)
timeout, the outcome be `Timeout(stage="run")`, and the next job run in a fresh worker."""

from __future__ import annotations

import re

from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline

# The exported entry (`define void @"rgpu_kernel_<entry>"(...) {`); helpers are internal.
_ENTRY = re.compile(r'^(define void @"?rgpu_kernel_[^\n]*\n?\{\n)', re.MULTILINE)
_SPIN = "rgpu.hang.entry:\n  br label %rgpu.hang\nrgpu.hang:\n  br label %rgpu.hang\n"


class Spin(LlvmCpuPipeline):
    """`llvm-cpu` with the kernel's entry replaced by an endless loop; 3 s timeout."""

    name = "llvm-cpu-hang"
    description = "llvm-cpu whose kernel loops forever (seeded hang; timeout 3 s)"
    timeout = 3.0

    def transform_ir(self, ir_text: str) -> str:
        # An entry block may have no predecessors, so the loop is a block of its own; the
        # function is not `mustprogress`, so LLVM must keep the infinite loop.
        spun, n = _ENTRY.subn(lambda m: m.group(1) + _SPIN, ir_text, count=1)
        assert n == 1, "no kernel entry function in the IR"
        return spun
