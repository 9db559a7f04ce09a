"""LLVM bugs the simulator found, pinned on their standalone reproducers in docs/llvm-bugs:
each test asserts that the bug still reproduces and says "fixed upstream?" when it stops.
Expected values by hand (see the reproducer's header)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rgpu_fuzz.sim.launch.engine import Arg, Status
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


def test_zext_of_a_call_result_with_a_range_attribute_keeps_bits_15_8() -> None:
    """`zext (call range(i8 0, 2) i8 @h1(0xff))`: h1 computes 0xff * 0xff in a 16-bit
    multiply (0xfe01, i8 value 1); the caller masks with 0xffff instead of 0xff, so 65025
    is stored where 1 is right (by hand: 255 * 255 mod 256 = 1)."""
    ir = (BUGS / "range_return_i8_anyext.ll").read_text()
    for opt in (1, 3):
        res = run(build(ir, opt=opt), (1, 1, 1), (1, 1, 1), [Arg("in"), Arg("out")],
                  {"in": np.array([0xFF], np.uint8), "out": np.zeros(1, np.uint64)})
        assert res.status is Status.OK, res.fault
        got = out(res, "out", np.uint64).tolist()
        assert got == [0xFE01], (
            f"LLVM's range-return zext bug no longer reproduces at O{opt} (fixed upstream?): "
            f"{got}, by hand [1]")


def test_or_with_minus_one_keeps_the_undefined_half() -> None:
    """`fptoui(3.0) | select(true, -7, -8)`: by hand 3 | -7 = 0xfffffffffffffffb; LLVM's
    SIFoldOperands turns the high half's `v_or_b32 undef, -1` into a copy of the undefined
    operand (llvm/llvm-project#189677)."""
    ir = (BUGS / "sifold_or_minus_one.ll").read_text()
    res = run(build(ir, opt=3), (1, 1, 1), (1, 1, 1), [Arg("a"), Arg("b"), Arg("out")],
              {"a": np.array([3.0], np.float32), "b": np.array([0.0], np.float32),
               "out": np.zeros(1, np.uint64)})
    assert res.status is Status.OK, res.fault
    (got,) = out(res, "out", np.uint64).tolist()
    assert got & 0xFFFF_FFFF == 0xFFFF_FFFB  # the low half is right
    # the high half is whichever register the undefined value got (llc-22 standalone: -7;
    # llvmlite's: 0), never the -1 it must be
    assert got >> 32 != 0xFFFF_FFFF, (
        f"LLVM's OR -1 fold bug no longer reproduces (fixed upstream, PR #189655?): "
        f"{got:#x}, by hand 0xfffffffffffffffb")
