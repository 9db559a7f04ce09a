"""A deliberately broken `llvm-cpu` that crashes on one operation: when the lowered IR holds
an `srem` (the kernel has `%` on a signed type), the plugin adds a function calling
`llvm.amdgcn.workitem.id.x`, which the host instruction selector cannot select, so LLVM
aborts in code generation (`LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn...`) — the
shape of a back-end crash that only one operation provokes. Other kernels compile as usual.
Load it with `--plugin rgpu_fuzz/bench/seeded/srem_crash.py`."""

from __future__ import annotations

import re

from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline

_SREM = re.compile(r"= srem ")
_UNSELECTABLE = """
declare i32 @llvm.amdgcn.workitem.id.x()

define i32 @rgpu_plugin_srem_crash() {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  ret i32 %id
}
"""


class SremCrash(LlvmCpuPipeline):
    """`llvm-cpu` that aborts in codegen on kernels with a signed `%`."""

    name = "llvm-cpu-sremcrash"
    description = "llvm-cpu that aborts in codegen when the kernel has a signed % " \
                  "(seeded crash)"

    def transform_ir(self, ir_text: str) -> str:
        return ir_text + _UNSELECTABLE if _SREM.search(ir_text) else ir_text
