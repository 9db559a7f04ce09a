"""A deliberately broken `llvm-cpu`: float `min` gets the wrong NaN rule. Rust's `f32::min`
ignores a NaN operand (IEEE 754-2008 minNum; our lowering calls `llvm.minnum`); this plugin
calls `llvm.minimum` instead, which propagates the NaN (IEEE 754-2019 minimum; LangRef
"llvm.minimum.*"). `max` is left alone: one bug in one intrinsic. Any kernel whose float
`min` sees exactly one NaN operand then computes NaN instead of the other operand.
Load it with `--plugin rgpu_fuzz/bench/seeded/minnum_nan.py`."""

from __future__ import annotations

import re

from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline

_MINNUM = re.compile(r'@"?llvm\.minnum\.(f32|f64)"?')


def nan_propagating_min(ir_text: str) -> str:
    """The IR with every `llvm.minnum` call and declaration turned into `llvm.minimum`."""
    return _MINNUM.sub(lambda m: f'@"llvm.minimum.{m[1]}"', ir_text)


class MinNumNan(LlvmCpuPipeline):
    """`llvm-cpu` with a seeded bug: float `min` propagates NaN."""

    name = "llvm-cpu-minnan"
    description = "llvm-cpu with llvm.minnum replaced by llvm.minimum (seeded bug)"

    def transform_ir(self, ir_text: str) -> str:
        return nan_propagating_min(ir_text)
