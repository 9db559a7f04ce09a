"""A valid instruction whose operand the executor has no state for is
`unsupported-instruction`, never a Python exception out of the decoder scan.

Expected values: `0x7E0002FE` is `v_mov_b32_e32 v0, src_lds_direct` on gfx942 (llvm-mc-22
`--disassemble -mcpu=gfx942`; VOP1 with SRC0 = 254, LDS_DIRECT in the CDNA3 ISA's operand
table); the simulator models no LDS-direct state."""

from __future__ import annotations

import struct

import pytest

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.bound.program import bind_one
from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.isa.code import scan
from rgpu_fuzz.sim.isa.inst import OpKind
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import assemble, run_steps

ENV = Env(lanes=64, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))


def test_lds_direct_source_decodes_and_binds_as_unsupported() -> None:
    code = scan(struct.pack("<I", 0x7E0002FE), "gfx942", 0x1000)
    (inst,) = list(code)
    assert inst.mnemonic == "v_mov_b32_e32"  # llvm-mc-22 prints the same
    assert [o.kind for o in inst.operands] == [OpKind.VGPR, OpKind.UNMODELLED]
    step = bind_one(inst, ENV, None, lambda address: 0)
    assert getattr(step, "unsupported", False)
    with pytest.raises(SimStop) as stop:
        step(None)  # type: ignore[arg-type]
    assert stop.value.fault.kind is FaultKind.UNSUPPORTED


@pytest.mark.parametrize(("cpu", "line"), [
    ("gfx1100", "v_cmpx_eq_u32 v1, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf"),
])
def test_unmodelled_dpp_form_is_unsupported_not_run_as_its_base_operation(
        cpu: str, line: str) -> None:
    """DPP reads its first source from other lanes (quad_perm:[1,0,3,2] swaps lanes 0 and
    1). A DPP form `bound.dpp` does not model (a V_CMPX, which writes the EXEC the DPP step
    narrows) is reported, never run as the plain operation, which would give each lane its
    own v1: a wrong value with no sign. llvm-mc-22 encodes the line (tests/sim/asm_steps.py)."""
    (inst,) = list(assemble([line], cpu))
    w = Wave(64 if cpu != "gfx1100" else 32, 0, 0)
    w.vdef[:, :] = True
    with pytest.raises(SimStop) as stop:
        run_steps(assemble([line], cpu), w)
    assert stop.value.fault.signature == f"unsupported-instruction:{inst.mnemonic}"
    assert "DPP" in stop.value.fault.detail
