"""Seeded faults that strike one case of an `amdgpu-sim` batch and not the others, to check
that batches (`AmdgpuSimPipeline._run_many`, `amdgpu_sim_batch`) lose nothing of the other
cases. A case is struck when its lowered IR holds the constant 48879 (0xBEEF, written
`0xbeefu32` in the kernel).

* `amdgpu-sim-abort-marked`: adds a function calling `llvm.x86.rdtsc`, which the AMDGPU
  instruction selector cannot select (`LLVM ERROR: Cannot select: intrinsic`): LLVM aborts
  the worker in code generation, a stage of the whole batch.
* `amdgpu-sim-badkd-k1`: a code-object hook that takes batches (`hook_sees_batches`) and
  breaks the descriptor of the kernel named `k1.k` only (KERNARG_SIZE + 8, as
  `sim_bad_kernarg_size.py`): the second case of a batch, and nothing alone.
* `amdgpu-sim-xor2or`: `llvm-cpu-xor2or`'s miscompilation through the IR hook (batched).
* `amdgpu-sim-2s`: a 2 s timeout per case, to hang a launch cheaply.
"""

from __future__ import annotations

import re

from rgpu_fuzz.codeobj.reader import read_code_object
from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline

MARK = "48879"
_FIRST_XOR = re.compile(r"= xor ")

_UNSELECTABLE = """
declare i64 @llvm.x86.rdtsc()

define i64 @rgpu_plugin_fatal() {
  %t = call i64 @llvm.x86.rdtsc()
  ret i64 %t
}
"""

KERNARG_SIZE_OFFSET = 8
"""AMDGPUUsage "Code Object V3 Kernel Descriptor": KERNARG_SIZE, bytes 8..11."""


class AbortMarked(AmdgpuSimPipeline):
    """`amdgpu-sim` that makes LLVM abort in code generation on marked cases only."""

    name = "amdgpu-sim-abort-marked"
    description = "amdgpu-sim; LLVM aborts in codegen on kernels holding 0xBEEF (seeded crash)"

    def transform_ir(self, ir_text: str) -> str:
        return ir_text + _UNSELECTABLE if MARK in ir_text else ir_text


class BadKernargK1(AmdgpuSimPipeline):
    """`amdgpu-sim` whose hook breaks the descriptor of kernel `k1.k` (a batch's second)."""

    name = "amdgpu-sim-badkd-k1"
    description = "amdgpu-sim; KERNARG_SIZE of kernel k1.k off by 8 (seeded, batches only)"
    hook_sees_batches = True

    def transform_code_object(self, code_object: bytes) -> bytes:
        co = read_code_object(code_object)
        out = bytearray(code_object)
        for k in co.kernels:
            if k.name != "k1.k":
                continue
            sym = k.descriptor_symbol
            sec = next(s for s in co.elf.sections if s.addr and s.contains(sym.value, 64))
            at = sec.offset + sym.value - sec.addr + KERNARG_SIZE_OFFSET
            size = int.from_bytes(out[at:at + 4], "little")
            out[at:at + 4] = (size + 8).to_bytes(4, "little")
        return bytes(out)


class XorToOr(AmdgpuSimPipeline):
    """`amdgpu-sim` with `llvm-cpu-xor2or`'s seeded miscompilation (first `xor` of the
    lowered IR → `or`): an IR hook, so it runs in batches (the hook sees each case's IR)."""

    name = "amdgpu-sim-xor2or"
    description = "amdgpu-sim with the first xor instruction replaced by or (seeded bug)"

    def transform_ir(self, ir_text: str) -> str:
        return _FIRST_XOR.sub("= or ", ir_text, count=1)


class ShortTimeout(AmdgpuSimPipeline):
    """`amdgpu-sim` with a 2 s timeout per case, to hang a launch cheaply."""

    name = "amdgpu-sim-2s"
    description = "amdgpu-sim with a 2 s timeout per case"
    timeout = 2.0
