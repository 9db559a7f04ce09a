"""A deliberately broken `amdgpu-sim`: a code-object hook that narrows the scope of one
atomic, the bug of a memory legalizer that loses a stronger sync scope. The simulator runs
such code the same (it has no weak memory); the memory-model check (`rgpu_fuzz.memmodel`)
reports it as `memory-model-sequence`. Load it with `--plugin
rgpu_fuzz/bench/seeded/scope_bit.py` and use `amdgpu-sim-scopebit:gfx942` or
`amdgpu-sim-scopebit:gfx1200`.

* gfx942: `sc1` marks agent and system coherence of loads and stores and system coherence
  of atomic read-modify-writes (AMDGPUUsage "Memory Model GFX942"); the hook clears `sc1`
  (bit 25 of a FLAT/global instruction's first dword, per llvm-mc's encodings of
  `global_load_dword ...` with and without `sc1`) on the first global or flat memory
  instruction that carries it.
* gfx1200: the scope is a 2-bit field, SCOPE (bits 51:50 of the 96-bit VFLAT/VGLOBAL
  encoding; RDNA4 ISA "Memory Scope and Temporal Hints": 0 CU, 1 SE, 2 DEV, 3 SYS), so there
  is no single bit whose loss means "not agent/system" in every case; the hook clears its
  high bit (bit 19 of the second dword, per llvm-mc-22's encodings of `global_load_b32 ...`
  with `scope:SCOPE_SYS` 0x0c, `SCOPE_DEV` 0x08 and `SCOPE_SE` 0x04 in byte 6) on the first
  global or flat instruction at DEV or SYS scope: SYS becomes SE and DEV becomes CU, each
  narrower than the agent or system scope the IR asked for.
"""

from __future__ import annotations

import struct

from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline

SC1 = 1 << 25
"""GFX940 FLAT encoding: SC1 (the bit GFX90A calls SCC)."""

SCOPE_HIGH = 1 << 19
"""GFX12 VFLAT/VGLOBAL encoding, second dword: the high bit of SCOPE (instruction bit 51)."""

_HOOKED = {
    # target: (what marks the instruction in the decoder's text, dword offset, bit to clear)
    "gfx942": ((" sc1",), 0, SC1),
    "gfx1200": ((" scope:SCOPE_DEV", " scope:SCOPE_SYS"), 4, SCOPE_HIGH),
}


def drop_scope_bit(code_object: bytes) -> bytes:
    """The code object with the scope bit cleared on its first global/flat instruction
    having it (unchanged when none has, or the target is neither gfx942 nor gfx1200)."""
    from rgpu_fuzz.codeobj.reader import read_code_object
    from rgpu_fuzz.sim import decode_text

    co = read_code_object(code_object)
    if co.target.name not in _HOOKED or co.text is None:
        return code_object
    marks, offset, bit = _HOOKED[co.target.name]
    for inst in decode_text(co):
        text = inst.text
        if text.startswith(("global_", "flat_")) and any(m in text for m in marks):
            at = co.text.offset + inst.address - co.text.addr + offset
            (word,) = struct.unpack_from("<I", code_object, at)
            out = bytearray(code_object)
            struct.pack_into("<I", out, at, word & ~bit)
            return bytes(out)
    return code_object


class ScopeBitDropped(AmdgpuSimPipeline):
    """`amdgpu-sim` with a seeded memory-model bug: one atomic loses its scope bit."""

    name = "amdgpu-sim-scopebit"
    description = ("amdgpu-sim with the scope bit (gfx942 sc1, gfx1200 SCOPE's high bit) "
                   "cleared on the first atomic that has it (seeded bug)")

    def transform_code_object(self, code_object: bytes) -> bytes:
        return drop_scope_bit(code_object)
