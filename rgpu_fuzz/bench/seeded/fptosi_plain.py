"""A deliberately broken `llvm-cpu`: every saturating float→int cast
(`llvm.fptosi.sat` / `llvm.fptoui.sat`, LangRef "Saturating floating-point to integer
conversions") is lowered as the plain `fptosi` / `fptoui` instruction. Rust's `as` saturates
and maps NaN to 0; the plain instruction gives poison for NaN and out-of-range values (the
host's `cvttss2si` answers the "integer indefinite" value, 0x80000000 for i32). Any kernel
that casts an out-of-range or NaN float to an integer then computes a wrong value.
Load it with `--plugin rgpu_fuzz/bench/seeded/fptosi_plain.py`."""

from __future__ import annotations

import re

from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline

# `%"x" = call i32 @"llvm.fptosi.sat.i32.f32"(float %".36")` (llvmlite quotes the names)
_SAT_CALL = re.compile(
    r'call (?P<int>i\d+) @"?llvm\.(?P<kind>fpto[su]i)\.sat\.i\d+\.f\d+"?'
    r'\((?P<fty>float|double) (?P<value>%"[^"]*"|%[\w.]+)\)')


def plain_casts(ir_text: str) -> str:
    """The IR with each saturating cast call replaced by the plain conversion."""
    return _SAT_CALL.sub(
        lambda m: f"{m['kind']} {m['fty']} {m['value']} to {m['int']}", ir_text)


class FptosiPlain(LlvmCpuPipeline):
    """`llvm-cpu` with a seeded bug: float→int `as` does not saturate."""

    name = "llvm-cpu-fptosi"
    description = "llvm-cpu with saturating float→int casts lowered as plain fptosi/fptoui " \
                  "(seeded bug)"

    def transform_ir(self, ir_text: str) -> str:
        return plain_casts(ir_text)
