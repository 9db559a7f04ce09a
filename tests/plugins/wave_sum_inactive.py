"""A deliberately broken `amdgpu-sim`: `wave_sum` counts the wave's inactive lanes. Every i32
`llvm.amdgcn.wave.reduce.add` of the lowered IR gets, added to its result, the first active
lane's value times the number of inactive lanes (`wavefrontsize − popcount(ballot(true))`), as
a reduction lowered over the whole wave would if the inactive lanes held that value. Full
waves compute right; a partial wave (a block whose size is not a multiple of the wave size)
does not. Load it with `--plugin tests/plugins/wave_sum_inactive.py`; the oracle must report
wrong code for `amdgpu-sim-sum-inactive` on such kernels."""

from __future__ import annotations

import re

from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline

_SUM = re.compile(r'^(\s*)(%[\w."]+) = call i32 @"?llvm\.amdgcn\.wave\.reduce\.add\.i32"?'
                  r"\(i32 ([^,]+), i32 0\)$", re.MULTILINE)
_DECLS = """
declare i32 @llvm.amdgcn.readfirstlane.i32(i32)
declare i64 @llvm.amdgcn.ballot.i64(i1)
declare i64 @llvm.ctpop.i64(i64)
declare i32 @llvm.amdgcn.wavefrontsize()
"""


def count_inactive(ir: str) -> str:
    """Each i32 wave sum `%r = call ... (i32 %v, i32 0)` becomes the sum into a fresh name
    plus `readfirstlane(%v) · (wavefrontsize − popcount(ballot.i64(true)))`."""
    count = 0

    def one(m: re.Match[str]) -> str:
        nonlocal count
        count += 1
        ind, name, v = m.group(1), m.group(2), m.group(3)
        t = f"%rgpu.inact.{count}"
        return "\n".join([
            f"{ind}{t}.sum = call i32 @llvm.amdgcn.wave.reduce.add.i32(i32 {v}, i32 0)",
            f"{ind}{t}.first = call i32 @llvm.amdgcn.readfirstlane.i32(i32 {v})",
            f"{ind}{t}.mask = call i64 @llvm.amdgcn.ballot.i64(i1 true)",
            f"{ind}{t}.on64 = call i64 @llvm.ctpop.i64(i64 {t}.mask)",
            f"{ind}{t}.on = trunc i64 {t}.on64 to i32",
            f"{ind}{t}.size = call i32 @llvm.amdgcn.wavefrontsize()",
            f"{ind}{t}.off = sub i32 {t}.size, {t}.on",
            f"{ind}{t}.extra = mul i32 {t}.first, {t}.off",
            f"{ind}{name} = add i32 {t}.sum, {t}.extra"])

    out = _SUM.sub(one, ir)
    if count == 0:
        return ir
    have = set(re.findall(r'^declare [^@]*@"?([\w.]+)"?\(', out, re.MULTILINE))
    extra = [d for d in _DECLS.strip().splitlines()
             if re.search(r"@([\w.]+)\(", d).group(1) not in have]  # type: ignore[union-attr]
    return out + "\n" + "\n".join(extra) + "\n"


class SumInactive(AmdgpuSimPipeline):
    """`amdgpu-sim` with a seeded lowering bug: wave sums count inactive lanes."""

    name = "amdgpu-sim-sum-inactive"
    description = "amdgpu-sim whose wave sums count the inactive lanes of a wave (seeded bug)"

    def transform_ir(self, ir_text: str) -> str:
        return count_inactive(ir_text)
