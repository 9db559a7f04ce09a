"""A frequent seeded bug for throughput measurements: `llvm-cpu` lowering integer negation
`-x` (LLVM IR `sub 0, x`, LangRef "sub") as `1 - x`. Most generated kernels negate an
integer that reaches an output, so most cases become wrong-code findings of one bug
(`probe=sub:int`): what measurements of the campaign's per-finding costs (bug-key probes,
recording, reductions) need."""

from __future__ import annotations

import re

from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline

_NEG = re.compile(r"= sub (i\d+) 0, ")


class NegOffByOne(LlvmCpuPipeline):
    """`llvm-cpu` with a seeded miscompilation: `sub 0, x` → `sub 1, x`."""

    name = "llvm-cpu-neg1"
    description = "llvm-cpu with integer negation computed as 1 - x (frequent seeded bug)"

    def transform_ir(self, ir_text: str) -> str:
        return _NEG.sub(r"= sub \1 1, ", ir_text)
