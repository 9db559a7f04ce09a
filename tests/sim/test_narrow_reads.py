"""Two reads whose definedness or value the simulator must not make up.

1. A 32-bit (or narrower) read of a 64-bit aperture constant (`src_shared_base`,
   `src_private_base`, ...). No source we found documents that read, and LLVM's
   `SIISelLowering::getSegmentAperture` says the register "is broken. When used as a 32-bit
   operand, it returns a wrong value (all zeroes?). The real value is in the upper 32 bits",
   which is why LLVM only ever reads it with `s_mov_b64` and takes the high half.
   (GCC's gcn port and LLVM's `SRC_*_LO` registers assume the low half, which LLVM's own
   comment doubts.) Since what hardware returns is unsettled, the honest outcome is
   `unsupported-instruction:<mnemonic>`, not a value. The 64-bit read stays supported.
2. `v_readfirstlane_b32` of a lane that is partly defined (`Wave.vpart`, a spilled SGPR
   with some undefined bits). readfirstlane copies one lane's 32-bit value, that of the
   lowest active lane or lane 0 when EXEC is 0 (CDNA3 ISA, V_READFIRSTLANE_B32), to an
   SGPR; as for `v_readlane_b32`, the SGPR's defined bits are that lane's defined bits.
   The expected masks below are worked out by hand from the state each test builds.

llvm-mc-22 (`-mcpu=gfx942 --show-encoding`) encodes every instruction used here.
"""

from __future__ import annotations

import pytest

from rgpu_fuzz.sim.bound import lane_steps
from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.bound.program import bind_one
from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.isa.inst import Inst
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import assemble

SHARED_BASE = 0x0001_0000 << 32
PRIVATE_BASE = 0x0002_0000 << 32
ENV = Env(lanes=64, ieee=True, flush32=False, flush64=False,
          constants=((125, 0), (235, SHARED_BASE), (236, SHARED_BASE | 0xFFFF_FFFF),
                     (237, PRIVATE_BASE), (238, PRIVATE_BASE | 0xFFFF_FFFF)),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))


def _assemble(line: str) -> Inst:
    (inst,) = list(assemble([line]))
    return inst


@pytest.mark.parametrize("line", [
    "s_mov_b32 s0, src_shared_base",
    "s_mov_b32 s0, src_private_limit",
    "s_add_u32 s0, src_shared_base, 1",
    "s_and_b32 s0, s1, src_private_base",
    "v_mov_b32 v0, src_private_base",
    "v_add_u32 v0, src_shared_base, v1",
])
def test_a_32_bit_read_of_an_aperture_is_unsupported(line: str) -> None:
    inst = _assemble(line)
    step = bind_one(inst, ENV, None, lambda address: 0)
    assert getattr(step, "unsupported", False), line
    w = Wave(64, 0, 0)
    with pytest.raises(SimStop) as stop:
        step(w)
    fault = stop.value.fault
    assert fault.kind is FaultKind.UNSUPPORTED
    assert fault.signature == f"unsupported-instruction:{inst.mnemonic}"
    assert "aperture" in fault.detail


def test_the_64_bit_read_of_an_aperture_is_its_value() -> None:
    # what LLVM emits (getSegmentAperture): s_mov_b64 of the whole register; the value is
    # the launch's aperture, given by ENV above
    step = bind_one(_assemble("s_mov_b64 s[6:7], src_shared_base"), ENV, None, lambda a: 0)
    assert not getattr(step, "unsupported", False)
    w = Wave(64, 0, 0)
    step(w)
    assert (w.S[6], w.S[7]) == (0, 0x0001_0000)
    assert (w.sdef[6], w.sdef[7]) == (0xFFFF_FFFF, 0xFFFF_FFFF)


def _wave(exec_mask: int, lane: int, defined_bits: int) -> Wave:
    """v6 fully defined in every lane but `lane`, which holds 0xABCD1234 with only
    `defined_bits` defined (as a v_writelane of a partly defined SGPR leaves it)."""
    w = Wave(64, 0, 0)
    w.V[:, 6] = 0x1111_1111
    w.vdef[:, 6] = True
    w.V[lane, 6] = 0xABCD_1234
    w.vdef[lane, 6] = False
    w.vpart[6] = {lane: defined_bits}
    w.set_exec(exec_mask)
    return w


@pytest.mark.parametrize("general", [False, True])
@pytest.mark.parametrize("exec_mask,lane,defined,expect_value,expect_def", [
    # lowest active lane 5 is the partly defined one: its value and its defined bits
    ((1 << 5) | (1 << 9), 5, 0x0000_FFFF, 0xABCD_1234, 0x0000_FFFF),
    # EXEC = 0: lane 0 is read
    (0, 0, 0xFF00_00FF, 0xABCD_1234, 0xFF00_00FF),
    # the partly defined lane 9 is active but not the lowest: lane 5 is read, all defined
    ((1 << 5) | (1 << 9), 9, 0x0000_FFFF, 0x1111_1111, 0xFFFF_FFFF),
    # a lane with no defined bit at all gives an undefined SGPR
    (1 << 3, 3, 0, 0xABCD_1234, 0),
])
def test_readfirstlane_keeps_a_partly_defined_lanes_bits(
        general: bool, exec_mask: int, lane: int, defined: int, expect_value: int,
        expect_def: int, monkeypatch: pytest.MonkeyPatch) -> None:
    inst = _assemble("v_readfirstlane_b32 s4, v6")
    if general:  # the general binder's step (bound.alu._readlane) must agree
        monkeypatch.setattr(lane_steps, "readfirstlane", lambda *a, **k: None)
    step = bind_one(inst, ENV, None, lambda address: 0)
    w = _wave(exec_mask, lane, defined)
    step(w)
    assert (w.S[4], w.sdef[4]) == (expect_value, expect_def)


@pytest.mark.parametrize(("sel", "defined"), [("BYTE_0", True), ("BYTE_1", True),
                                              ("WORD_0", True), ("BYTE_2", False),
                                              ("WORD_1", False)])
def test_an_sdwa_source_is_defined_where_its_selected_bits_are(sel: str, defined: bool) -> None:
    """`v_cmp_ne_u16_sdwa s[2:3], v0, v2 src0_sel:<sel>` with v0's bits 15:0 defined and
    31:16 not (a scratch load of 8 bytes past the 2 stored: campaign bucket
    a8b8660435): the compare reads only the selected bits (SDWA, GFX9 ISA "SDWA"), so its
    result is defined exactly when those are; on the bound step and in a fused run alike."""
    from tests.sim import test_fuse

    (inst,) = list(assemble([f"v_cmp_ne_u16_sdwa s[2:3], v0, v2 src0_sel:{sel} "
                             "src1_sel:DWORD"]))
    w = test_fuse.wave()
    w.V[:, 0] = 0x1234_0100
    w.vdef[:, 0] = False
    w.vpart[0] = {lane: 0x0000_FFFF for lane in range(4)}
    w.V[:, 2], w.vdef[:, 2] = 1, True
    stepped, _, raised, _ = test_fuse.both([inst], w)
    assert raised is None
    assert (stepped.sdef[2] & 0xF == 0xF) is defined
