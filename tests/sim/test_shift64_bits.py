"""64-bit VALU shifts of a register pair with partly defined lanes (`Wave.vpart`): the
defined-bit masks move with the value (`defined64.shift64_step`'s `by_bits`), on the bound
steps and, through the fused tier's hand-over, in a fused run.

The state is campaign bucket a8b8660435 (gfx942 O3): a 5-byte bool array in
scratch read back by `scratch_load_dwordx2`, so the high register holds one defined byte
(bits 7:0) and three nothing wrote. Expected masks by hand from the ISA (CDNA3 ISA
V_LSHRREV_B64: D = S1 >> S0[5:0]; V_LSHLREV_B64: D = S1 << S0[5:0]; V_ASHRREV_I64: D = S1 >>
S0[5:0], arithmetic): the bits that move keep their state, zeros shifted in are defined,
copies of the sign bit have the sign bit's state."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from oracles import judge, load_policy
from rgpu_fuzz import casefile
from rgpu_fuzz.lang.features import case_module
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.runner import run_case
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.state.halves import defined_bits
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim import test_fuse

M32 = 0xFFFF_FFFF
CASES = Path(__file__).parent / "data" / "cases"


def _wave(hi_bits: int) -> Wave:
    w = Wave(4, 0, 0)
    w.V[:, 4] = [0x0100_0000, 0x0000_0001, 0x8000_0000, 0x1234_5678]
    w.V[:, 5] = [0xABCD_EF01, 0x0000_0080, 0xFFFF_FF7F, 0]
    w.vdef[:, 4] = True
    w.vdef[:, 5] = False
    w.vpart[5] = {lane: hi_bits for lane in range(4)}
    return w


def _shift(opcode: str, amount: int) -> Inst:
    ops = (Opnd(OpKind.VGPR, 6, 2), Opnd(OpKind.INT, 0, 1, value=amount),
           Opnd(OpKind.VGPR, 4, 2))
    return Inst(0, 8, opcode, "VOP3", opcode.lower(), ops, share_key=("shift64", opcode, ops))


@pytest.mark.parametrize(("opcode", "amount", "hi_bits", "want_lo", "want_hi"), [
    # >> 8: v6 = bytes 1..4 (v4's top three, v5's byte 0, all defined); v7 = v5's undefined
    # bytes 1..3 then a zero byte shifted in
    ("V_LSHRREV_B64", 8, 0x0000_00FF, M32, 0xFF00_0000),
    # >> 4: v6 takes v5's bits 3:0 (defined); v7: v5's bits 7:4 defined, 31:8 not, zeros
    ("V_LSHRREV_B64", 4, 0x0000_00FF, M32, 0xF000_000F),
    # >> 40: v6 = v5 >> 8: bits 23:0 from v5's undefined bytes, 31:24 zeros
    ("V_LSHRREV_B64", 40, 0x0000_00FF, 0xFF00_0000, M32),
    # << 8: v6 = v4 << 8 (defined); v7 = v5 << 8 | v4's top byte: bits 15:8 and 7:0
    ("V_LSHLREV_B64", 8, 0x0000_00FF, M32, 0x0000_FFFF),
    # arithmetic >> 8 with v5's sign bit undefined: its copies are undefined too
    ("V_ASHRREV_I64", 8, 0x0000_00FF, M32, 0x0000_0000),
    # arithmetic >> 8 with only v5's sign bit (and byte 0) defined: copies defined
    ("V_ASHRREV_I64", 8, 0x8000_00FF, M32, 0xFF80_0000),
])
def test_defined_bits_shift_with_the_value(opcode: str, amount: int, hi_bits: int,
                                           want_lo: int, want_hi: int) -> None:
    stepped, fused, raised, _ = test_fuse.both([_shift(opcode, amount)], _wave(hi_bits))
    assert raised is None
    for w in (stepped, fused):
        assert defined_bits(w, 6).tolist() == [want_lo] * 4
        assert defined_bits(w, 7).tolist() == [want_hi] * 4
    pair = (stepped.V[:, 4].astype(np.uint64) | (stepped.V[:, 5].astype(np.uint64) << 32))
    got = stepped.V[:, 6].astype(np.uint64) | (stepped.V[:, 7].astype(np.uint64) << 32)
    if opcode == "V_ASHRREV_I64":
        want = (pair.view(np.int64) >> amount).view(np.uint64)
    else:
        want = pair >> np.uint64(amount) if opcode == "V_LSHRREV_B64" else \
            pair << np.uint64(amount)
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("spec", ["amdgpu-sim:gfx942:O3", "amdgpu-sim:gfx90a:O3",
                                  "amdgpu-sim:gfx1100:O3"])
def test_the_campaign_case_agrees_with_ref(spec: str) -> None:
    """Bucket a8b8660435 reduced: `a[(out0[0] | 1) as usize]` of a `[bool; 5]` written with
    `a[block_dim_z()] = true`; it used to stop at `sim-uninit-read` on all three targets."""
    case = casefile.load_checked(CASES / "o3_shift64_partly_defined_pair.toml")
    outcomes = run_case(case, Registry().create_all(["ref", spec]))
    assert isinstance(outcomes[spec], Ok), outcomes[spec]
    assert not judge(case, outcomes, load_policy("default"), case_module(case)).findings
