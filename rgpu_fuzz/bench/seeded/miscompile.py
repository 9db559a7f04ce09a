"""A deliberately broken `llvm-cpu`: the first `xor` instruction of the lowered IR becomes
`or`. Load it with `--plugin rgpu_fuzz/bench/seeded/miscompile.py`; any kernel whose first `xor`
sees overlapping set bits then computes a wrong value, which the oracle must report as
wrong code for `llvm-cpu-xor2or`."""

from __future__ import annotations

import re

from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline

_FIRST_XOR = re.compile(r"= xor ")


class XorToOr(LlvmCpuPipeline):
    """`llvm-cpu` with a seeded miscompilation: first `xor` → `or`."""

    name = "llvm-cpu-xor2or"
    description = "llvm-cpu with the first xor instruction replaced by or (seeded bug)"

    def transform_ir(self, ir_text: str) -> str:
        return _FIRST_XOR.sub("= or ", ir_text, count=1)
