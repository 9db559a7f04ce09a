"""Result bits that one defined source decides, whatever the other holds (memcheck's rules
for AND and OR), and the six bits of a 64-bit shift amount that a shift reads.

Both were false `sim-uninit-read`s of gfx1100 O0 campaign kernels (bucket 239c6f84fb's
cases 72834e05ce3f and 542a54d8c4b0, which LLVM's lane-VGPR bug does not explain): true16
code leaves the high half of a VGPR undefined, then LLVM
- zero-extends the value to 64 bits and masks the pair with `& 0xff`, whose high dword is 0:
  `v_and_b32_e64 v7, v7, s4` with v7 undefined and s4 = 0 (CDNA3/RDNA3 pseudocode
  `D.u32 = S0.u32 & S1.u32`: every bit is 0 whatever v7 holds);
- shifts by it: `v_mov_b16 v3.h, s2` then `v_lshlrev_b64 v[3:4], v3, s[2:3]`, which reads
  `S0[5:0]` only (`D.u64 = S1.u64 << S0[5:0]`).
Expected values by hand from that pseudocode; llvm-mc-22 encodes the instructions."""

from __future__ import annotations

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.state.halves import defined_bits
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import assemble, run_steps

M32 = 0xFFFF_FFFF
ENV32 = Env(lanes=32, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
            waitcnt=lambda simm: ((simm >> 10) & 0x3F, (simm >> 4) & 0x3F), true16=True,
            stores_in_vmcnt=False)


def _run(lines: list[str], w: Wave) -> None:
    run_steps(assemble(lines, "gfx1100"), w, ENV32)


def test_and_with_a_defined_zero_is_defined() -> None:
    w = Wave(32, 0, 0)
    w.V[:, 7] = 0x1234_5678          # never written: undefined in every lane
    w.S[4], w.sdef[4] = 0, M32
    w.S[5], w.sdef[5] = 0xFF, M32
    _run(["v_and_b32_e64 v7, v7, s4",     # & 0: 0, defined
          "v_and_b32_e64 v8, v9, s5",     # v9 undefined & 0xff: bits 31:8 defined zeros
          "v_or_b32_e64 v10, v9, -1"], w)  # | all ones: all ones, defined
    assert w.V[:, 7].tolist() == [0] * 32 and w.vdef[:, 7].all()
    assert defined_bits(w, 8).tolist() == [0xFFFF_FF00] * 32
    assert w.V[:, 10].tolist() == [M32] * 32 and w.vdef[:, 10].all()


def test_and_under_partial_exec_leaves_inactive_lanes() -> None:
    w = Wave(32, 0, 0)
    w.S[4], w.sdef[4] = 0, M32
    w.V[:, 7], w.vdef[:, 7] = 5, False
    w.set_exec(0b11)
    _run(["v_and_b32_e64 v7, v7, s4"], w)
    assert w.vdef[:2, 7].all() and w.V[:2, 7].tolist() == [0, 0]
    assert not w.vdef[2:, 7].any() and w.V[2:, 7].tolist() == [5] * 30


def test_a_64_bit_shift_reads_six_bits_of_its_amount() -> None:
    w = Wave(32, 0, 0)
    w.V[:, 3], w.vdef[:, 3] = 0xFFFE, True     # amount: 0xfffe & 63 = 62
    w.S[2], w.sdef[2] = 3, M32
    w.S[3], w.sdef[3] = 0, M32
    _run(["v_mov_b16_e32 v3.h, s6",            # s6 undefined: v3[31:16] undefined
          "v_lshlrev_b64 v[3:4], v3, s[2:3]"], w)
    # 3 << 62 = 0xC000000000000000
    assert w.V[:, 3].tolist() == [0] * 32 and w.V[:, 4].tolist() == [0xC000_0000] * 32
    assert w.vdef[:, 3].all() and w.vdef[:, 4].all()


def test_a_32_bit_shift_reads_five_bits_of_its_amount() -> None:
    """gfx1100 O3 campaign kernel (bucket 16b2c466a0's case e0095e85ab17): `global_load_d16_u8
    v1` keeps v1's undefined high half, then `v_ashrrev_i32_e64 v1, v1, s0` shifts by it.
    RDNA3 pseudocode: `D.i32 = S1.i32 >> S0[4:0]`, `D.u32 = S1.u32 >> S0[4:0]`,
    `D.u32 = S1.u32 << S0[4:0]`; amount 0x23 & 31 = 3, worked by hand."""
    w = Wave(32, 0, 0)
    w.V[:, 1], w.vdef[:, 1] = 0x23, True
    w.S[0], w.sdef[0] = 0x8000_0000, M32
    w.S[1], w.sdef[1] = 1, M32
    _run(["v_mov_b16_e32 v1.h, s6",            # s6 undefined: v1[31:16] undefined
          "v_ashrrev_i32_e64 v2, v1, s0",
          "v_lshrrev_b32_e64 v3, v1, s0",
          "v_lshlrev_b32_e64 v4, v1, s1"], w)
    assert w.V[:, 2].tolist() == [0xF000_0000] * 32 and w.vdef[:, 2].all()
    assert w.V[:, 3].tolist() == [0x1000_0000] * 32 and w.vdef[:, 3].all()
    assert w.V[:, 4].tolist() == [8] * 32 and w.vdef[:, 4].all()


def test_a_whole_dword_lds_load_replaces_a_half_defined_register() -> None:
    """gfx1100 O3 campaign kernel (case 20b3ac3d4a72): `v_mov_b16_e32 v5.l, 0` leaves v5's
    high half undefined, then `ds_load_b32 v5` overwrites all 32 bits (RDNA3 ISA "LDS
    instructions": DS_LOAD_B32 `D.b32 = MEM[ADDR].b32`), so storing v5 stores defined data.
    The stale half-defined record outlived the load and the store was reported undefined."""
    from types import SimpleNamespace

    import numpy as np

    from rgpu_fuzz.sim.state.memory import AddressSpace, Lds

    w = Wave(32, 0, 0)
    lds = Lds(256)
    w.mem = SimpleNamespace(glob=AddressSpace(), lds=lambda wave: lds)
    w.V[:, 0], w.vdef[:, 0] = np.arange(32, dtype=np.uint32) * 4, True
    w.V[:, 1], w.vdef[:, 1] = 0x0007_0007, True
    _run(["ds_store_b32 v0, v1",
          "v_mov_b16_e32 v5.l, 0",          # v5[31:16] undefined
          "ds_load_b32 v5, v0",
          "s_waitcnt lgkmcnt(0)",
          "ds_store_b32 v0, v5 offset:128"], w)   # a store of v5: its data must be defined
    assert defined_bits(w, 5).tolist() == [M32] * 32
    assert w.V[:, 5].tolist() == [0x0007_0007] * 32
    assert bytes(lds.data[128:132]) == bytes([7, 0, 7, 0])
