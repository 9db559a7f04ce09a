"""Deliberately broken `llvm-cpu`s that get the bits of a NaN wrong where the language's
rule (docs/language.md "NaN bits"; Rust RFC 3514, LLVM LangRef "Behavior of Floating-Point
NaN values") leaves no choice: `to_bits` of a NaN gives 0 (not a NaN at all), or a signalling
NaN with a payload that no operand had. The oracle must still catch both now that it
accepts any allowed NaN. Load with `--plugin tests/plugins/nan_bits.py`."""

from __future__ import annotations

import re

from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline

_TO_BITS = re.compile(r'^(\s*)(%"?[\w.]+"?) = bitcast (float|double) (%"?[\w.]+"?) to (i32|i64)$',
                      re.MULTILINE)


def _nan_bits_as(ir_text: str, bits32: int, bits64: int) -> str:
    """Every float→int bitcast (`to_bits`) returns `bits32`/`bits64` for a NaN input."""

    def patch(m: re.Match[str]) -> str:
        pad, dst, fty, src, ity = m.groups()
        tmp = dst.lstrip("%").strip('"')
        nan, raw = f'%"{tmp}.isnan"', f'%"{tmp}.raw"'
        bits = bits32 if ity == "i32" else bits64
        return (f"{pad}{nan} = fcmp uno {fty} {src}, {src}\n"
                f"{pad}{raw} = bitcast {fty} {src} to {ity}\n"
                f"{pad}{dst} = select i1 {nan}, {ity} {bits}, {ity} {raw}")

    return _TO_BITS.sub(patch, ir_text)


class NanBitsZero(LlvmCpuPipeline):
    """`llvm-cpu` with a seeded bug: `to_bits` of any NaN is 0."""

    name = "llvm-cpu-nanbits-zero"
    description = "llvm-cpu with to_bits(NaN) = 0 (seeded bug)"

    def transform_ir(self, ir_text: str) -> str:
        return _nan_bits_as(ir_text, 0, 0)


class NanBitsSignalling(LlvmCpuPipeline):
    """`llvm-cpu` with a seeded bug: `to_bits` of any NaN is a signalling NaN (quiet bit
    clear, payload 1), which no arithmetic may return unless an operand was that NaN."""

    name = "llvm-cpu-nanbits-snan"
    description = "llvm-cpu with to_bits(NaN) = 0x7f800001 / 0x7ff0000000000001 (seeded bug)"

    def transform_ir(self, ir_text: str) -> str:
        return _nan_bits_as(ir_text, 0x7F800001, 0x7FF0000000000001)
