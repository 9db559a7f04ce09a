"""Per-bit definedness through V_CNDMASK_B32 (`bitdef32.cndmask_step`).

GlobalISel at gfx1100 O3 (conformance kernel `small_int_uniform`,
`amdgpu-sim:gfx1100:O3:isel=global`) computes an i16 with true16 code, which writes one half
of a VGPR and leaves the other as it was (here never written, so undefined), then selects
between such values with the 32-bit `v_cndmask_b32` and reads only the low half of the
result (`v_xor_b16 v1.l, v2.l, v1.l`). With a lane's result defined only when both sources
were wholly defined, that read stopped the run with a false `sim-uninit-read` (a
`global_store_d16_hi_b16` of the xor's value).

Expected state worked by hand from the RDNA3 ISA pseudocode: V_CNDMASK_B32
`D.u32 = VCC.u64[laneId] ? S1.u32 : S0.u32` (a copy of one source's 32 bits; which one
depends on the lane's mask bit), V_ASHRREV_I16 with true16 `D.i16 = S1.i16 >> S0[3:0]`
into `vdst.l`, keeping `vdst.h`; V_XOR_B16 `D.u16 = S0.u16 ^ S1.u16`. llvm-mc-22
(`-mcpu=gfx1100 --show-encoding`) encodes the sequence."""

from __future__ import annotations

import numpy as np

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.state.halves import defined_bits
from rgpu_fuzz.sim.state.wave import VCC, Wave
from tests.sim.asm_steps import assemble, run_steps

M32 = 0xFFFF_FFFF
ENV32 = Env(lanes=32, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
            waitcnt=lambda simm: ((simm >> 10) & 0x3F, (simm >> 4) & 0x3F), true16=True,
            stores_in_vmcnt=False)
SEQUENCE = ["v_ashrrev_i16 v1.l, 2, v12.l",      # v1.l defined, v1.h never written
            "v_cndmask_b32_e32 v4, v12, v1, vcc_lo",
            "v_xor_b16 v5.l, v4.l, v12.l"]


def _wave(vcc: int, vcc_defined: int) -> Wave:
    w = Wave(32, 0, 0)
    w.V[:, 12] = 1234          # defined in every lane
    w.vdef[:, 12] = True
    w.S[VCC], w.sdef[VCC] = vcc, vcc_defined
    return w


def test_the_selected_sources_defined_bits_are_the_results() -> None:
    # lanes 0-15 select v1 (low half defined), lanes 16-31 v12 (all defined)
    w = _wave(0x0000_FFFF, M32)
    run_steps(assemble(SEQUENCE, "gfx1100"), w, ENV32)
    bits = defined_bits(w, 4)
    assert bits[:16].tolist() == [0x0000_FFFF] * 16
    assert bits[16:].tolist() == [M32] * 16
    # 1234 >> 2 = 308 (0x134) in the low half of lanes 0-15
    assert (w.V[:16, 4] & 0xFFFF).tolist() == [308] * 16
    assert w.V[16:, 4].tolist() == [1234] * 16
    # the 16-bit xor reads defined halves only: 308 ^ 1234 = 0x134 ^ 0x4D2 = 0x5E6
    assert (defined_bits(w, 5) & 0xFFFF).tolist() == [0xFFFF] * 32
    assert (w.V[:16, 5] & 0xFFFF).tolist() == [0x5E6] * 16
    assert (w.V[16:, 5] & 0xFFFF).tolist() == [0] * 16


def test_an_undefined_mask_bit_leaves_the_lane_undefined() -> None:
    # lane 3's mask bit is undefined: which source it copies is unknown, so no bit is
    # defined even where both sources are
    w = _wave(0x0000_FFFF, M32 & ~(1 << 3))
    run_steps(assemble(SEQUENCE, "gfx1100"), w, ENV32)
    bits = defined_bits(w, 4)
    assert bits[3] == 0
    assert bits[2] == 0x0000_FFFF and bits[20] == M32
    assert not np.any(defined_bits(w, 5)[3] & 0xFFFF)
