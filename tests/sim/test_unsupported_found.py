"""Instructions a campaign met that the simulator did not support (`unsupported-instruction`),
each against a value worked out by hand from AMD's ISA pseudocode; llvm-mc-22 encodes them.

- `s_pack_hl_b32_b16` (gfx1100 O3, one case of a 20-minute campaign): RDNA3 ISA, SOP2
  opcode 53, `D0 = { S1[15 : 0].u16, S0[31 : 16].u16 }`: the high half of S0 into the low
  half of D, the low half of S1 into the high half. GFX11 only (LLVM `hasSPackHL`)."""

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
