"""A deliberately broken `amdgpu-sim`: every `llvm.amdgcn.ballot.i64` of the lowered IR keeps
only its low 32 bits, as if the ballot had been lowered as `ballot.i32` zero-extended on a
wave64 target (the ballot-width-versus-wave-size confusion of upstream reports such as
llvm/llvm-project#62477). `ballot.i32` itself cannot be selected on wave64 by LLVM 22 ("Cannot
select: AMDGPUISD::SETCC"), so the seeded fault truncates instead: the same wrong value without
the crash. Load it with `--plugin tests/plugins/wave_ballot_low32.py`; a kernel whose ballot
has a vote from lanes 32..63 then computes a wrong value, which the oracle must report as
wrong code for `amdgpu-sim-ballot32`."""

from __future__ import annotations

import re

from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline

_BALLOT = re.compile(r'^(\s*)(%[\w."]+) = call i64 @"?llvm\.amdgcn\.ballot\.i64"?\((i1 [^)]*)\)$',
                     re.MULTILINE)
"""A ballot call as LLVM or our IR builder prints it (names quoted or not)."""


def low32_ballots(ir: str) -> str:
    """Every `%v = call i64 @llvm.amdgcn.ballot.i64(i1 %c)` becomes the ballot into a fresh
    name, then `%v = and i64 <it>, 4294967295`."""
    count = 0

    def one(m: re.Match[str]) -> str:
        nonlocal count
        count += 1
        indent, name, arg = m.group(1), m.group(2), m.group(3)
        fresh = f"%rgpu.ballot64.{count}"
        return (f"{indent}{fresh} = call i64 @llvm.amdgcn.ballot.i64({arg})\n"
                f"{indent}{name} = and i64 {fresh}, 4294967295")

    return _BALLOT.sub(one, ir)


class BallotLow32(AmdgpuSimPipeline):
    """`amdgpu-sim` with a seeded lowering bug: a 64-lane ballot loses lanes 32..63."""

    name = "amdgpu-sim-ballot32"
    description = "amdgpu-sim with every ballot.i64 cut to its low 32 bits (seeded bug)"

    def transform_ir(self, ir_text: str) -> str:
        return low32_ballots(ir_text)
