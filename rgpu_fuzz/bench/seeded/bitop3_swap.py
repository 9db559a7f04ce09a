"""A deliberately broken `amdgpu-sim` for gfx950: a code-object hook that swaps two bits of
the truth table of the first `v_bitop3` in `.text`, the bug of a back end that gets one
minterm of CDNA4's three-input bitwise instruction wrong (LLVM's gfx950 selection folds
and/or/xor trees into `v_bitop3_b32`/`_b16` with a table it computes).

The table's bits 0 and 7 are swapped: `~S0 & ~S1 & ~S2` and `S0 & S1 & S2`, which differ in
the tables LLVM emits most (xor3 0x96, or3 0xfe, majority 0xe8). Their places are the CDNA4
VOP3 fields NEG[0] (bit 61 of the instruction) and OMOD[1] (bit 60), as `sim.isa.bitop3`
decodes them (`TTBL = {OMOD[1:0], ABS[2:0], NEG[2:0]}`, CDNA4 ISA V_BITOP3_B32). Load it
with `--plugin rgpu_fuzz/bench/seeded/bitop3_swap.py` and use `amdgpu-sim-bitop3swap:gfx950`."""

from __future__ import annotations

from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline

TABLE_BIT0 = 61 - 32
"""NEG[0] in the instruction's second dword: truth-table bit 0."""
TABLE_BIT7 = 60 - 32
"""OMOD[1] in the instruction's second dword: truth-table bit 7."""


def swap_bitop3_bits(code_object: bytes) -> bytes:
    """The code object with truth-table bits 0 and 7 of its first `v_bitop3` swapped
    (unchanged when it has none, the bits are equal, or the target is not gfx950)."""
    from rgpu_fuzz.codeobj.reader import read_code_object
    from rgpu_fuzz.sim import decode_text

    co = read_code_object(code_object)
    text = co.text
    if co.target.name != "gfx950" or text is None:
        return code_object
    for inst in decode_text(co):
        if not inst.opcode.startswith("V_BITOP3_"):
            continue
        at = text.offset + inst.address - text.addr + 4
        word = int.from_bytes(code_object[at:at + 4], "little")
        lo, hi = word >> TABLE_BIT0 & 1, word >> TABLE_BIT7 & 1
        if lo == hi:
            return code_object
        word ^= (1 << TABLE_BIT0) | (1 << TABLE_BIT7)
        out = bytearray(code_object)
        out[at:at + 4] = word.to_bytes(4, "little")
        return bytes(out)
    return code_object


class Bitop3BitsSwapped(AmdgpuSimPipeline):
    """`amdgpu-sim` with a seeded gfx950 back-end bug: one `v_bitop3` computes another
    function."""

    name = "amdgpu-sim-bitop3swap"
    description = "amdgpu-sim with bits 0 and 7 of the first v_bitop3's table swapped (seeded bug)"

    def transform_code_object(self, code_object: bytes) -> bytes:
        return swap_bitop3_bits(code_object)
