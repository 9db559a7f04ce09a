"""A `llvm-cpu` whose IR makes LLVM abort in code generation: it adds an exported function
that calls `llvm.amdgcn.workitem.id.x`, an AMDGPU intrinsic the host (x86) instruction
selector cannot select. LLVM prints `LLVM ERROR: Cannot select: intrinsic
%llvm.amdgcn.workitem.id.x` and aborts the worker (SIGABRT); the pipeline must turn that into
`CompileCrash(stage="codegen")` and the campaign must carry on."""

from __future__ import annotations

from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline

_UNSELECTABLE = """
declare i32 @llvm.amdgcn.workitem.id.x()

define i32 @rgpu_plugin_fatal() {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  ret i32 %id
}
"""


class CannotSelect(LlvmCpuPipeline):
    """`llvm-cpu` plus one function the host back end cannot compile."""

    name = "llvm-cpu-fatal"
    description = "llvm-cpu plus an amdgcn intrinsic call: LLVM aborts in codegen (seeded crash)"

    def transform_ir(self, ir_text: str) -> str:
        # Exported, so optimisation keeps it; MCJIT compiles every function of the module.
        return ir_text + _UNSELECTABLE
