"""A deliberately broken `amdgpu-sim`: the first `v_add_u32` of the linked code object's
`.text` becomes `v_sub_u32` (same encoding, same operands), through the code-object hook.
Load it with `--plugin tests/plugins/sim_add_to_sub.py`; a kernel whose first vector add
sees a non-zero second operand then computes a wrong value, which the oracle must report as
wrong code for `amdgpu-sim-add2sub`."""

from __future__ import annotations

from rgpu_fuzz.codeobj.reader import read_code_object
from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline
from rgpu_fuzz.sim.isa.decode import decode
from rgpu_fuzz.sim.isa.tables import tables


def add_to_sub(code_object: bytes) -> bytes:
    """The first VOP2/VOP3 `V_ADD_U32` with its opcode field set to `V_SUB_U32`'s value in
    the same format's table (field position and numbers from the decoder's tables)."""
    co = read_code_object(code_object)
    text = co.text
    if text is None:
        return code_object
    spec = tables(co.target.name)
    for inst in decode(co.text_bytes, co.target.name, text.addr):
        if inst.opcode != "V_ADD_U32" or inst.encoding.value not in ("VOP2", "VOP3"):
            continue
        fmt = next(f for f in spec.spec.formats if f.encoding == inst.encoding)
        sub = next(v for v, info in spec.ops[fmt.op_table].items() if info.name == "V_SUB_U32")
        at = text.offset + inst.address - text.addr
        word = int.from_bytes(code_object[at:at + 4], "little")
        mask = ((1 << fmt.op.width) - 1) << fmt.op.lo
        word = (word & ~mask) | (sub << fmt.op.lo)
        out = bytearray(code_object)
        out[at:at + 4] = word.to_bytes(4, "little")
        return bytes(out)
    return code_object


class AddToSub(AmdgpuSimPipeline):
    """`amdgpu-sim` with a seeded back-end bug: the first `v_add_u32` subtracts."""

    name = "amdgpu-sim-add2sub"
    description = "amdgpu-sim with the first v_add_u32 of .text turned into v_sub_u32 (seeded bug)"

    def transform_code_object(self, code_object: bytes) -> bytes:
        return add_to_sub(code_object)
