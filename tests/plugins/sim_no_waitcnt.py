"""A deliberately broken `amdgpu-sim`: the first `s_waitcnt` of the linked code object's
`.text` becomes `s_nop 0`, through the code-object hook. Load it with
`--plugin tests/plugins/sim_no_waitcnt.py`; a kernel whose first wait covers a load that is
used next then reads the load's destination too early, which the simulator must report as
`sim-waitcnt-hazard` (on hardware: a value that depends on timing)."""

from __future__ import annotations

from rgpu_fuzz.codeobj.reader import read_code_object
from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline
from rgpu_fuzz.sim.isa.decode import decode
from rgpu_fuzz.sim.isa.tables import tables


def replace_first(code_object: bytes, opcode: str, new_word0: int) -> bytes:
    """`code_object` with the first instruction named `opcode` (AMD's name) in `.text`
    replaced by the 32-bit instruction `new_word0`; unchanged when there is none."""
    co = read_code_object(code_object)
    text = co.text
    if text is None:
        return code_object
    for inst in decode(co.text_bytes, co.target.name, text.addr):
        if inst.opcode == opcode and inst.size == 4:
            at = text.offset + inst.address - text.addr
            out = bytearray(code_object)
            out[at:at + 4] = new_word0.to_bytes(4, "little")
            return bytes(out)
    return code_object


def s_nop0(target: str) -> int:
    """`s_nop 0`: the SOPP format's identifying bits with S_NOP's opcode, from the tables."""
    spec = tables(target)
    sopp = next(f for f in spec.spec.formats if f.op_table == "SOPPOp")
    value = next(v for v, info in spec.ops["SOPPOp"].items() if info.name == "S_NOP")
    return sopp.match | (value << sopp.op.lo)


class NoWaitcnt(AmdgpuSimPipeline):
    """`amdgpu-sim` with a seeded back-end bug: the first `s_waitcnt` removed."""

    name = "amdgpu-sim-nowait"
    description = "amdgpu-sim with the first s_waitcnt of .text replaced by s_nop 0 (seeded bug)"

    def transform_code_object(self, code_object: bytes) -> bytes:
        target = read_code_object(code_object).target.name
        return replace_first(code_object, "S_WAITCNT", s_nop0(target))
