"""A deliberately broken `amdgpu-sim`: a code-object hook that flips OPSEL[0] of one packed
instruction, the bug of a back end that picks the wrong half of a packed source (an op_sel
fold gone wrong, as in SIFoldOperands' packed-constant folding, llvm/llvm-project#139317).
OPSEL is bits 13:11 of a VOP3P instruction's first dword on GFX9 and GFX11 (CDNA3 and RDNA3
ISA guides, VOP3P microcode format; the decoder's `formats_cdna.VOP3P` and
`formats_rdna3.VOP3P`), bit 11 selecting SRC0's high half for the low result. The hook flips
it on the first `v_pk_*` instruction of `.text` other than V_PK_MOV_B32 (a 64-bit move,
whose OPSEL picks dwords), so the low result reads the other half of its first source. Load it with
`--plugin rgpu_fuzz/bench/seeded/op_sel.py` and use `amdgpu-sim-opsel:<target>`."""

from __future__ import annotations

from rgpu_fuzz.codeobj.reader import read_code_object
from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline
from rgpu_fuzz.sim import decode, tables


def flip_op_sel(code_object: bytes) -> bytes:
    """The code object with OPSEL[0] flipped on its first packed (`V_PK_*`) instruction
    (unchanged when it has none)."""
    co = read_code_object(code_object)
    text = co.text
    if text is None:
        return code_object
    spec = tables(co.target.name)
    packed = [i for i in decode(co.text_bytes, co.target.name, text.addr)
              if i.encoding.value == "VOP3P" and i.opcode.startswith("V_PK_")
              and i.opcode != "V_PK_MOV_B32"]
    if not packed:
        return code_object
    inst = packed[0]
    fmt = next(f for f in spec.spec.formats if f.encoding == inst.encoding)
    bit = fmt.opsel.lo  # type: ignore[attr-defined]  # OPSEL[0]: the field is bits 13:11
    at = text.offset + inst.address - text.addr
    word = int.from_bytes(code_object[at:at + 4], "little") ^ (1 << bit)
    out = bytearray(code_object)
    out[at:at + 4] = word.to_bytes(4, "little")
    return bytes(out)


class OpSelFlipped(AmdgpuSimPipeline):
    """`amdgpu-sim` with a seeded back-end bug: one packed instruction reads the wrong
    half of its first source."""

    name = "amdgpu-sim-opsel"
    description = "amdgpu-sim with OPSEL[0] flipped on the first v_pk_* instruction (seeded bug)"

    def transform_code_object(self, code_object: bytes) -> bytes:
        return flip_op_sel(code_object)
