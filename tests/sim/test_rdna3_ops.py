"""RDNA3 (gfx1100) operations met by a gfx90a/gfx1100 campaign (2026-12-05), against
values by hand: S_CTZ_I32_B64 / S_CLZ_I32_U64 are S_FF1_I32_B64 / S_FLBIT_I32_B64 renamed
(RDNA3 ISA "Instruction renames": the index of the lowest / the count of leading zeros
above the highest set bit, -1 for 0); V_MAXMIN_F32 is min(max(S0, S1), S2) and
V_MINMAX_F32 max(min(S0, S1), S2) (RDNA3 ISA pseudocode), each step with V_MIN/V_MAX's
NaN rules (IEEE mode: a NaN operand gives the other). llvm-mc-22 encodes each line."""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.launch.loader import target_config
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import assemble, run_steps

CFG = target_config("gfx1100")
ENV = Env(lanes=32, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=CFG.waitcnt, true16=CFG.true16, stores_in_vmcnt=CFG.stores_in_vmcnt)
M32 = 0xFFFF_FFFF


@pytest.mark.parametrize(("value", "ctz", "clz"), [
    (0x0000_0000_0000_0001, 0, 63),
    (0x8000_0000_0000_0000, 63, 0),
    (0x0000_0010_0000_0000, 36, 27),
    (0x0000_0000_0000_0000, M32, M32),   # -1
])
def test_64_bit_bit_scans(value: int, ctz: int, clz: int) -> None:
    w = Wave(32, 0, 0)
    w.S[4], w.S[5] = value & M32, value >> 32
    w.sdef[4] = w.sdef[5] = M32
    run_steps(assemble(["s_ctz_i32_b64 s0, s[4:5]", "s_clz_i32_u64 s1, s[4:5]"], "gfx1100"),
              w, ENV)
    assert (w.S[0], w.S[1]) == (ctz, clz)
    assert w.sdef[0] == w.sdef[1] == M32


def test_maxmin_and_minmax() -> None:
    w = Wave(32, 0, 0)
    w.vdef[:, :] = True
    a = np.array([1.0, 5.0, -2.0, np.nan] * 8, np.float32)
    b = np.array([3.0, 4.0, np.nan, 1.0] * 8, np.float32)
    c = np.array([2.0, 2.0, 0.5, 0.5] * 8, np.float32)
    w.V[:32, 1], w.V[:32, 2], w.V[:32, 3] = a.view(np.uint32), b.view(np.uint32), \
        c.view(np.uint32)
    run_steps(assemble(["v_maxmin_f32 v4, v1, v2, v3", "v_minmax_f32 v5, v1, v2, v3"],
                       "gfx1100"), w, ENV)
    # by hand: max(a, b) = 3, 5, -2 (NaN gives the other), 1; then min with c
    assert w.V[:4, 4].view(np.float32).tolist() == [2.0, 2.0, -2.0, 0.5]
    # min(a, b) = 1, 4, -2, 1; then max with c
    assert w.V[:4, 5].view(np.float32).tolist() == [2.0, 4.0, 0.5, 1.0]
