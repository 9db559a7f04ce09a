"""The recheck of LLVM 22.1's constant fold of `llvm.amdgcn.wave.reduce.{add,sub,xor}`
(docs/findings/wave-reduce-fold.md; fixed upstream by llvm/llvm-project#193142): `amdgpu-sim`
with every such reduction's operand hidden from constant folding.

InstCombine's constant folding (`ConstantFolding.cpp`) treats the wave reductions as
idempotent and folds `wave.reduce.add(c)` to `c`, though the sum of `c` over `n` active lanes
is `c·n` (and the xor is `c` only when `n` is odd). The fold needs a constant operand. Here,
before optimisation (the `transform_ir` hook), each such operand goes through an empty inline
`asm` that returns its input (constraint `=s,0` for a literal, which is wave-uniform, so the
back end keeps the uniform lowering, `s_bcnt1` times the value; `=v,0` otherwise, since the
operand may differ between lanes). Nothing else changes: when the finding's kernel then
agrees with the arbiter, the fold explains it. The recheck of `known_bugs.toml` creates this
pipeline with the finding pipeline's options (`recheck_pipeline`); it applies only to findings
of the plain `amdgpu-sim`, whose own `transform_ir` is the identity (a plugin subclass's own
IR rewrite would be lost here)."""

from __future__ import annotations

import re

from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline

_REDUCE = re.compile(
    r'(= call (i32|i64) @"?llvm\.amdgcn\.wave\.reduce\.(?:add|sub|xor)\.i(?:32|64)"?\()'
    r"(i32|i64) ([^,]+), ")
"""A wave reduction whose result depends on the active-lane count, as LLVM or llvmlite's
builder prints it (names quoted or not): the callee up to `(`, the operand's type and value."""
_ASSIGN = re.compile(r'^(\s*)(%[\w."]+) ', re.MULTILINE)
_LITERAL = re.compile(r"-?\d+$")


def hide_reduce_operands(ir: str) -> str:
    """`ir` with each add/sub/xor wave reduction's operand replaced by the result of an
    empty inline `asm` that returns it (a fresh `%rgpu.unfold.N` just before the call)."""
    out: list[str] = []
    count = 0
    for line in ir.splitlines(keepends=True):
        m = _REDUCE.search(line)
        lhs = _ASSIGN.match(line)
        if m is None or lhs is None:
            out.append(line)
            continue
        count += 1
        ty, value = m.group(3), m.group(4).strip()
        reg = "s" if _LITERAL.match(value) else "v"
        fresh = f"%rgpu.unfold.{count}"
        out.append(f'{lhs.group(1)}{fresh} = call {ty} asm "", "={reg},0"({ty} {value})\n')
        out.append(line[:m.start()] + m.group(1) + f"{ty} {fresh}, " + line[m.end():])
    return "".join(out)


class UnfoldedWaveReduce(AmdgpuSimPipeline):
    """`amdgpu-sim` whose add/sub/xor wave reductions LLVM cannot constant-fold."""

    name = "amdgpu-sim-unfolded-reduce"
    description = ("amdgpu-sim with the operands of wave.reduce.add/sub/xor hidden from "
                   "constant folding (the recheck of llvm/llvm-project#193142)")

    def transform_ir(self, ir_text: str) -> str:
        return hide_reduce_operands(ir_text)


__all__ = ["UnfoldedWaveReduce", "hide_reduce_operands"]
