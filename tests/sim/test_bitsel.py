"""Per-bit definedness of V_BFI_B32 and the bit scans (`rgpu_fuzz.sim.bound.bitsel`), worked
by hand: the scans' results from the pseudocode (V_FFBL_B32 / RDNA3 V_CTZ_I32_B32: the index
of the lowest set bit, -1 for 0; V_FFBH_U32 / V_CLZ_I32_U32: the number of zeros above the
highest set bit), their definedness from which bits the scan reads."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import ENV, assemble, run_steps


def _run(line: str, cpu: str, value: int, defined: int) -> Wave:
    lanes = 32 if cpu == "gfx1100" else 64
    w = Wave(lanes, 0, 0)
    w.vdef[:, :] = True
    w.V[:, 4] = value
    w.vdef[:, 4] = False
    w.vpart[4] = {lane: defined for lane in range(lanes)}
    with np.errstate(all="ignore"):
        run_steps(assemble([line], cpu), w, replace(ENV, lanes=lanes, true16=cpu == "gfx1100"))
    return w


@pytest.mark.parametrize(("cpu", "line", "value", "defined", "want", "is_defined"), [
    # LLVM's u16 trailing_ones on gfx1100: bit 16 a defined 1, bits 31:17 undefined → 16
    ("gfx1100", "v_ctz_i32_b32 v17, v4", 0x0001_0000, 0x0001_FFFF, 16, True),
    ("gfx942", "v_ffbl_b32 v17, v4", 0x0000_0100, 0x0000_FFFF, 8, True),
    # the low half all zeros: the scan reaches the undefined high half
    ("gfx1100", "v_ctz_i32_b32 v17, v4", 0x0001_0000, 0x0000_FFFF, 16, False),
    # an undefined bit below the first set one
    ("gfx942", "v_ffbl_b32 v17, v4", 0x0000_0100, 0x0000_FF7F, 8, False),
    # bit 31 a defined 1, the rest undefined: no leading zeros, defined
    ("gfx1100", "v_clz_i32_u32 v17, v4", 0x8000_0001, 0x8000_0000, 0, True),
    ("gfx90a", "v_ffbh_u32 v17, v4", 0x0010_0000, 0xFFF0_0000, 11, True),
    ("gfx90a", "v_ffbh_u32 v17, v4", 0x0010_0000, 0xFFE0_0000, 11, False),
])
def test_bit_scans_are_defined_when_the_read_bits_are(cpu: str, line: str, value: int,
                                                      defined: int, want: int,
                                                      is_defined: bool) -> None:
    w = _run(line, cpu, value, defined)
    assert set(w.V[:, 17].tolist()) == {want}
    assert set(w.vdef[:, 17].tolist()) == {is_defined}
