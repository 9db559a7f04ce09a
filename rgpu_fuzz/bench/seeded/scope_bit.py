"""A deliberately broken `amdgpu-sim`: a code-object hook that drops the scope bit of one
atomic, the bug of a memory legalizer that loses a stronger sync scope. On gfx942 `sc1`
marks agent and system coherence of loads and stores and system coherence of atomic
read-modify-writes (AMDGPUUsage "Memory Model GFX942"); the hook clears `sc1` (bit 25 of a
FLAT/global instruction's first dword, per llvm-mc's encodings of `global_load_dword ...`
with and without `sc1`) on the first global or flat memory instruction that carries it.
The simulator runs such code the same (it has no weak memory); the memory-model check
(`rgpu_fuzz.memmodel`) reports it as `memory-model-sequence`. Load it with `--plugin
rgpu_fuzz/bench/seeded/scope_bit.py` and use `amdgpu-sim-scopebit:gfx942`."""

from __future__ import annotations

import struct

from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline

SC1 = 1 << 25
"""GFX940 FLAT encoding: SC1 (the bit GFX90A calls SCC)."""


def drop_scope_bit(code_object: bytes) -> bytes:
    """The code object with `sc1` cleared on its first global/flat instruction having it
    (unchanged when none has, or the target is not gfx942)."""
    from rgpu_fuzz.codeobj.reader import read_code_object
    from rgpu_fuzz.sim import decode_text

    co = read_code_object(code_object)
    if co.target.name != "gfx942" or co.text is None:
        return code_object
    for inst in decode_text(co):
        text = inst.text
        if text.startswith(("global_", "flat_")) and " sc1" in text:
            at = co.text.offset + inst.address - co.text.addr
            (word,) = struct.unpack_from("<I", code_object, at)
            out = bytearray(code_object)
            struct.pack_into("<I", out, at, word & ~SC1)
            return bytes(out)
    return code_object


class ScopeBitDropped(AmdgpuSimPipeline):
    """`amdgpu-sim` with a seeded memory-model bug: one atomic loses its scope bit."""

    name = "amdgpu-sim-scopebit"
    description = "amdgpu-sim with sc1 cleared on the first atomic that has it (seeded bug)"

    def transform_code_object(self, code_object: bytes) -> bytes:
        return drop_scope_bit(code_object)
