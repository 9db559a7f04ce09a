"""A deliberately broken `amdgpu-sim`: a code-object hook that turns the first DPP
`row_shr:1` of the linked code object's `.text` into `row_shr:2`, the bug of a back end (a
DPP combine, an encoder) that gets one DPP control wrong. A scan or reduction built from
`row_shr:1/2/4/8` steps (LLVM's atomic optimizer, our `waveops=ladder` lowering) then adds
the lane two below instead of one below at its first step, and every lane past the first of
its row gets a wrong sum.

Where the field is (public sources):
* AMD "Instinct MI300" (CDNA3) ISA Reference Guide and "Vega" (GFX9) ISA, microcode format
  VOP_DPP, and the RDNA3 ISA Reference Guide §7.7 / microcode format VOP_DPP16: the DPP dword
  that follows a VOP1/VOP2/VOPC word whose SRC0 is 250 has SRC0 in bits 7:0 and DPP_CTRL in
  bits 16:8 (then FI 18 on RDNA3, BOUND_CTRL 19, source modifiers, BANK_MASK 27:24,
  ROW_MASK 31:28). On RDNA3 a VOP3 whose SRC0 is 250 carries the same dword as its third.
* The DPP_CTRL enumeration of the same manuals: DPP_ROW_SR1..15 (`row_shr:n`) are
  0x111..0x11F, i.e. 0x110 + n, on GFX9, CDNA3 and RDNA3 alike.

The hook reads the simulator's decoding (`dpp_ctrl`, the instruction's size) to find the
instruction, then checks the raw bits of the dword it edits against 0x111 before writing
0x112. Load it with `--plugin
rgpu_fuzz/bench/seeded/dpp_row_shr.py` and use `amdgpu-sim-dpp-shr2:<target>` (with
`waveops=ladder`, whose reductions and scans are the DPP ladder)."""

from __future__ import annotations

import struct

from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline

DPP_ROW_SHR = 0x110
"""DPP_CTRL of `row_shr:n` is DPP_ROW_SHR + n (n = 1..15; ISA manuals' DPP_CTRL table)."""
DPP_CTRL_LO, DPP_CTRL_MASK = 8, 0x1FF
"""DPP_CTRL: bits 16:8 of the DPP dword (9 bits)."""


def row_shr_1_to_2(code_object: bytes) -> bytes:
    """The code object with the first `row_shr:1` of `.text` made `row_shr:2` (unchanged
    when there is none)."""
    return widen_first_dpp_step(code_object, frozenset({DPP_ROW_SHR + 1}))


def widen_first_dpp_step(code_object: bytes, ctrls: frozenset[int]) -> bytes:
    """The code object with the first DPP instruction of `.text` whose DPP_CTRL is one of
    `ctrls` given DPP_CTRL + 1 (`row_shr:1` → `row_shr:2`, `row_xmask:1` → `row_xmask:2`);
    unchanged when there is none. The DPP dword is an instruction's last: dword 1 of a
    VOP1/VOP2/VOPC DPP form (8 bytes), dword 2 of an RDNA3 VOP3 DPP form (12 bytes); no
    literal follows it."""
    from rgpu_fuzz.codeobj.reader import read_code_object
    from rgpu_fuzz.sim import decode_text

    co = read_code_object(code_object)
    text = co.text
    if text is None:
        return code_object
    for inst in decode_text(co):
        ctrl = inst.mods.get("dpp_ctrl")
        if ctrl not in ctrls or inst.size not in (8, 12):
            continue
        at = text.offset + inst.address - text.addr + inst.size - 4
        (word,) = struct.unpack_from("<I", code_object, at)
        if (word >> DPP_CTRL_LO) & DPP_CTRL_MASK != ctrl:
            continue  # not where the manuals put it: leave the instruction alone
        word = (word & ~(DPP_CTRL_MASK << DPP_CTRL_LO)) | ((ctrl + 1) << DPP_CTRL_LO)
        out = bytearray(code_object)
        struct.pack_into("<I", out, at, word)
        return bytes(out)
    return code_object


class DppRowShr2(AmdgpuSimPipeline):
    """`amdgpu-sim` with a seeded DPP bug: the first `row_shr:1` shifts by two."""

    name = "amdgpu-sim-dpp-shr2"
    description = ("amdgpu-sim with the first DPP row_shr:1 of .text turned into row_shr:2 "
                   "(seeded bug)")

    def transform_code_object(self, code_object: bytes) -> bytes:
        return row_shr_1_to_2(code_object)
