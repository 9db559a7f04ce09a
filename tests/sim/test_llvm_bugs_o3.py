"""LLVM bugs the simulator found, pinned on their standalone reproducers in docs/llvm-bugs:
each test asserts that the bug still reproduces and says "fixed upstream?" when it stops.
Expected values by hand (see the reproducer's header)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rgpu_fuzz.sim.engine import Arg, Status
from tests.sim.kernels import build, out, run

BUGS = Path(__file__).parents[2] / "docs" / "llvm-bugs"
SREM_BY_HAND = [4294967294 % d for d in range(7, 0, -1)]  # tid 0..6: d = 7 - tid


def _srem(opt: int) -> list[int]:
    ir = (BUGS / "srem64_bypass_urem_24bit.ll").read_text()
    res = run(build(ir, opt=opt), (1, 1, 1), (7, 1, 1), [Arg("out")],
              {"out": np.zeros(7, np.uint32)})
    assert res.status is Status.OK, res.fault
    return out(res, "out", np.uint32).tolist()


def test_srem64_bypass_block_uses_the_24_bit_division() -> None:
    """O0 computes 4294967294 mod d exactly; O3's 32-bit bypass block does not (tid 0:
    0x737, the low 11 bits of 0xfffffffe - 613566785 * 7)."""
    assert SREM_BY_HAND == [2, 2, 4, 2, 2, 0, 0]
    assert _srem(0) == SREM_BY_HAND
    got = _srem(3)
    assert got[0] == 0x737 and got != SREM_BY_HAND, (
        f"LLVM's i64 srem bypass bug no longer reproduces (fixed upstream?): {got}")
