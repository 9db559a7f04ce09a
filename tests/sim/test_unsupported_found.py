"""Instructions a campaign met that the simulator did not support (`unsupported-instruction`),
each against a value worked out by hand from AMD's ISA pseudocode; llvm-mc-22 encodes them.

- `s_pack_hl_b32_b16` (gfx1100 O3, one case of a 20-minute campaign): RDNA3 ISA, SOP2
  opcode 53, `D0 = { S1[15 : 0].u16, S0[31 : 16].u16 }`: the high half of S0 into the low
  half of D, the low half of S1 into the high half. GFX11 only (LLVM `hasSPackHL`).
- `v_swap_b32` (gfx90a O3): below."""

from __future__ import annotations

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import assemble, run_steps

M32 = 0xFFFF_FFFF
ENV32 = Env(lanes=32, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
            waitcnt=lambda simm: ((simm >> 10) & 0x3F, (simm >> 4) & 0x3F), true16=True,
            stores_in_vmcnt=False)


def test_s_pack_hl_b32_b16() -> None:
    w = Wave(32, 0, 0)
    w.S[0], w.sdef[0] = 0x1234_5678, M32
    w.S[1], w.sdef[1] = 0x9ABC_DEF0, M32
    run_steps(assemble(["s_pack_hl_b32_b16 s2, s0, s1", "s_pack_hl_b32_b16 s3, s1, 5"],
                       "gfx1100"), w, ENV32)
    # { S1[15:0], S0[31:16] }: {0xDEF0, 0x1234}; {5, 0x9ABC}
    assert (w.S[2], w.sdef[2]) == (0xDEF0_1234, M32)
    assert (w.S[3], w.sdef[3]) == (0x0005_9ABC, M32)


ENV64 = Env(lanes=64, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
            waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))


def test_v_swap_b32_in_the_lanes_of_exec() -> None:
    """`v_swap_b32` (gfx90a O3, one case of a 20-minute campaign): CDNA3 ISA VOP1
    `tmp = D.b32; D.b32 = S0.b32; S0.b32 = tmp`, per active lane. Lanes 0 and 1 active:
    they exchange values and definedness (v2 lane 1 undefined, lane 0 partly: its low half);
    lanes 2..63 keep theirs."""
    w = Wave(64, 0, 0)
    w.V[:, 1], w.vdef[:, 1] = 0x1111_1111, True
    w.V[:, 2], w.vdef[:, 2] = 0x2222_2222, True
    w.vdef[0:2, 2] = False
    w.vpart[2] = {0: 0x0000_FFFF}
    w.set_exec(0b11)
    run_steps(assemble(["v_swap_b32 v1, v2"], "gfx90a"), w, ENV64)
    assert w.V[:3, 1].tolist() == [0x2222_2222, 0x2222_2222, 0x1111_1111]
    assert w.V[:3, 2].tolist() == [0x1111_1111, 0x1111_1111, 0x2222_2222]
    assert w.vdef[:3, 1].tolist() == [False, False, True] and w.vdef[:3, 2].all()
    assert w.vpart == {1: {0: 0x0000_FFFF}}
