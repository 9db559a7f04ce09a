"""A deliberately broken `llvm-cpu`: `<<` loses its shift-amount mask. Rust masks the
amount to the bit width (`x << n` is `x << (n & (bits-1))`); our lowering writes that `and`
before every `shl` (LangRef `shl`: an amount >= the width is poison). This plugin makes each
`shl` use the unmasked amount, the bug of a lowering that forgets the `& 31`. On the host an
8- or 16-bit shift by 8..31 then gives 0 (x86 masks the count to 5 bits, SDM "SAL/SAR/SHL/SHR"),
and the optimiser may fold any over-wide shift to poison. Right shifts are left alone: one
bug in one place. Load it with `--plugin rgpu_fuzz/bench/seeded/shl_nomask.py`."""

from __future__ import annotations

import re

from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline

_NAME = r'%"[^"]*"|%[\w.]+'
_MASK = re.compile(rf'^\s*(?P<dst>{_NAME}) = and (?P<ty>i\d+) (?P<src>{_NAME}), (?P<k>\d+)\s*$')
_SHL = re.compile(rf'^(?P<head>\s*(?:{_NAME}) = shl (?P<ty>i\d+) (?:{_NAME}), )'
                  rf'(?P<amount>{_NAME})\s*$')


def unmasked_shl(ir_text: str) -> str:
    """The IR with every `shl` whose amount is `and %n, bits-1` shifting by `%n` instead."""
    masks: dict[str, str] = {}
    out = []
    for line in ir_text.splitlines():
        if m := _MASK.match(line):
            if int(m["k"]) == int(m["ty"][1:]) - 1:
                masks[m["dst"]] = m["src"]
        elif (m := _SHL.match(line)) and m["amount"] in masks:
            line = m["head"] + masks[m["amount"]]
        out.append(line)
    return "\n".join(out) + "\n"


class ShlNoMask(LlvmCpuPipeline):
    """`llvm-cpu` with a seeded bug: `<<` shifts by the unmasked amount."""

    name = "llvm-cpu-shlmask"
    description = "llvm-cpu with the shift-amount mask of << dropped (seeded bug)"

    def transform_ir(self, ir_text: str) -> str:
        return unmasked_shl(ir_text)
