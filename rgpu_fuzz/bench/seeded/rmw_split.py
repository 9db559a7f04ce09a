"""A deliberately broken `amdgpu-sim`: every integer `atomicrmw add` of the lowered IR
becomes a plain `load`, an `add` and a `store` of the same address — the bug of an
expansion that forgets the read-modify-write must be one memory operation (LLVM LangRef
"atomicrmw Instruction": the load and the store happen atomically). The old value the
`atomicrmw` returned is the loaded one, so a kernel computes what it should whenever no
other lane or wave writes the address between the load and the store.

Within one wave the lanes of one store hit the same address together, so a counter that
several lanes of a wave add to loses updates on the default schedule already; a counter
that one lane per wave adds to does not (each wave runs to its next barrier before
another runs) and is caught only when the simulator interleaves waves at memory
instructions (`interleave=SEED`). Load it with `--plugin rgpu_fuzz/bench/seeded/
rmw_split.py` and use `amdgpu-sim-rmwsplit:gfx942:O0:interleave=1`."""

from __future__ import annotations

import re

from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline

_RMW_ADD = re.compile(
    r"^(?P<indent>\s*)(?P<res>%\S+) = atomicrmw (?:volatile )?add "
    r"(?P<ptrty>ptr(?: addrspace\(\d+\))?) (?P<ptr>%\S+), (?P<ty>i\d+) (?P<val>%\S+|-?\d+)"
    r"(?: syncscope\(\"[^\"]*\"\))? \w+, align (?P<align>\d+)\s*$", re.MULTILINE)
"""`%r = atomicrmw add ptr addrspace(N) %p, iK %v [syncscope("s")] ordering, align A`, the
shape `rgpu_fuzz.lower` writes (llvmlite's `ir.Builder` text)."""


def split_rmw_add(ir_text: str) -> str:
    """`ir_text` with each integer `atomicrmw add` replaced by load, add and store."""
    count = 0

    def plain(m: re.Match[str]) -> str:
        nonlocal count
        count += 1
        g = m.groupdict()
        new = f'%"rmwsplit.{count}"'
        return (f"{g['indent']}{g['res']} = load {g['ty']}, {g['ptrty']} {g['ptr']}, "
                f"align {g['align']}\n"
                f"{g['indent']}{new} = add {g['ty']} {g['res']}, {g['val']}\n"
                f"{g['indent']}store {g['ty']} {new}, {g['ptrty']} {g['ptr']}, "
                f"align {g['align']}")

    return _RMW_ADD.sub(plain, ir_text)


class RmwAddSplit(AmdgpuSimPipeline):
    """`amdgpu-sim` with a seeded atomics bug: `atomicrmw add` is not atomic."""

    name = "amdgpu-sim-rmwsplit"
    description = "amdgpu-sim with atomicrmw add rewritten into load, add, store (seeded bug)"

    def transform_ir(self, ir_text: str) -> str:
        return split_rmw_add(ir_text)
