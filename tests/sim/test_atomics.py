"""LDS (DS) atomics and FLAT atomics dispatched by aperture, on code assembled by llvm-mc-22
(`tests.sim.asm_steps`) and run on a prepared wave.

Every expected value below is worked out BY HAND from the ISA manuals' pseudocode (CDNA3
ISA §11 "LDS instructions" for DS_*; RDNA3 ISA "LDS instructions" for DS_CMPSTORE_B32,
whose DATA is the new value and DATA2 the compare value, the reverse of CDNA's DS_CMPST_B32:
MEM = (MEM == DATA) ? DATA2 : MEM; CDNA3 ISA §10.3 for FLAT_ATOMIC_*), applying the active
lanes that share an address one after another in ascending lane order, the order the
simulator documents (docs/simulator.md "Atomics"). The comments show the arithmetic.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from rgpu_fuzz.sim.bound.mem import drain
from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.state.memory import AddressSpace, Lds, Private
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import assemble, run_steps

LANES = 8
ENV = Env(lanes=LANES, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))
SHARED_HI, PRIVATE_HI = 0x1_0000, 0x2_0000
NEG = 1 << 32


def wave(exec_mask: int = 0b1111) -> tuple[Wave, Lds, AddressSpace]:
    w = Wave(LANES, 0, 0)
    w.set_exec(exec_mask)
    lds = Lds(64)
    space = AddressSpace()
    w.mem = SimpleNamespace(glob=space, lds=lambda wave: lds, shared_hi=SHARED_HI,
                            private_hi=PRIVATE_HI)
    w.private = Private(16, LANES)
    return w, lds, space


def put(w: Wave, col: int, values: list[int]) -> None:
    """v<col> = values[lane] (lanes past the list get 0), defined in every lane."""
    w.V[:, col] = [(values[k] if k < len(values) else 0) % NEG for k in range(LANES)]
    w.vdef[:, col] = True


def word(lds: Lds, at: int, n: int = 4) -> int:
    return int.from_bytes(lds.data[at:at + n].tobytes(), "little")


def run(lines: list[str], w: Wave, cpu: str = "gfx942") -> None:
    """Run `lines`, then complete every load in flight (as `s_waitcnt` with zero counts)."""
    run_steps(assemble(lines, cpu), w, ENV)
    drain(w)


# (mnemonic, initial word, v2 data per lane, v4 data per lane, returned per lane, final)
# Lanes 0..3 all at LDS byte 8 (v1 = 0, offset:8).
SAME_ADDRESS = [
    # 10+1=11, +2=13, +3=16, +4=20
    ("ds_add_rtn_u32 v3, v1, v2 offset:8", 10, [1, 2, 3, 4], [], [10, 11, 13, 16], 20),
    # 10-1=9, -2=7, -3=4, -4=0
    ("ds_sub_rtn_u32 v3, v1, v2 offset:8", 10, [1, 2, 3, 4], [], [10, 9, 7, 4], 0),
    # DATA - MEM: 1-10=-9, 2-(-9)=11, 3-11=-8, 4-(-8)=12
    ("ds_rsub_rtn_u32 v3, v1, v2 offset:8", 10, [1, 2, 3, 4], [],
     [10, NEG - 9, 11, NEG - 8], 12),
    # MEM >= DATA ? 0 : MEM+1 with DATA 11: 10→11, 11→0, 0→1, 1→2
    ("ds_inc_rtn_u32 v3, v1, v2 offset:8", 10, [11] * 4, [], [10, 11, 0, 1], 2),
    # MEM == 0 || MEM > DATA ? DATA : MEM-1 with DATA 11: 1→0, 0→11, 11→10, 10→9
    ("ds_dec_rtn_u32 v3, v1, v2 offset:8", 1, [11] * 4, [], [1, 0, 11, 10], 9),
    # signed: min(10,5)=5, min(5,-3)=-3, min(-3,7)=-3, min(-3,INT_MIN)=INT_MIN
    ("ds_min_rtn_i32 v3, v1, v2 offset:8", 10, [5, -3, 7, -(1 << 31)], [],
     [10, 5, NEG - 3, NEG - 3], 1 << 31),
    # unsigned: -3 is 0xFFFFFFFD and INT_MIN 0x80000000, both above 5
    ("ds_min_rtn_u32 v3, v1, v2 offset:8", 10, [5, -3, 7, -(1 << 31)], [], [10, 5, 5, 5], 5),
    # signed: 10 stays the maximum of 10, 5, -3, 7, INT_MIN
    ("ds_max_rtn_i32 v3, v1, v2 offset:8", 10, [5, -3, 7, -(1 << 31)], [],
     [10, 10, 10, 10], 10),
    # unsigned: 0xFFFFFFFD wins from lane 1 on
    ("ds_max_rtn_u32 v3, v1, v2 offset:8", 10, [5, -3, 7, -(1 << 31)], [],
     [10, 10, NEG - 3, NEG - 3], NEG - 3),
    # 0xFF & 0xF7=0xF7, & 0x7F=0x77, & 0xFE=0x76, & 0xFF=0x76
    ("ds_and_rtn_b32 v3, v1, v2 offset:8", 0xFF, [0xF7, 0x7F, 0xFE, 0xFF], [],
     [0xFF, 0xF7, 0x77, 0x76], 0x76),
    # 0|1=1, |2=3, |4=7, |8=15
    ("ds_or_rtn_b32 v3, v1, v2 offset:8", 0, [1, 2, 4, 8], [], [0, 1, 3, 7], 15),
    # 5^1=4, ^3=7, ^7=0, ^1=1
    ("ds_xor_rtn_b32 v3, v1, v2 offset:8", 5, [1, 3, 7, 1], [], [5, 4, 7, 0], 1),
    # (MEM & ~DATA) | DATA2: (0xFF & ~0x0F)|0x05=0xF5, (0xF5 & ~0xF0)|0x30=0x35,
    # (0x35 & ~0x01)|0x00=0x34, (0x34 & ~0)|0x100=0x134
    ("ds_mskor_rtn_b32 v3, v1, v2, v4 offset:8", 0xFF, [0x0F, 0xF0, 0x01, 0],
     [0x05, 0x30, 0, 0x100], [0xFF, 0xF5, 0x35, 0x34], 0x134),
    # each lane writes its DATA and gets the previous lane's
    ("ds_wrxchg_rtn_b32 v3, v1, v2 offset:8", 10, [1, 2, 3, 4], [], [10, 1, 2, 3], 4),
    # GFX9 (MEM == DATA) ? DATA2 : MEM with DATA (compare) 0, DATA2 (new) lane+1:
    # lane 0 finds 0 and writes 1, the others find 1 and leave it
    ("ds_cmpst_rtn_b32 v3, v1, v2, v4 offset:8", 0, [0] * 4, [1, 2, 3, 4], [0, 1, 1, 1], 1),
]


@pytest.mark.parametrize(("asm", "init", "d0", "d1", "ret", "final"), SAME_ADDRESS,
                         ids=[c[0].split()[0] for c in SAME_ADDRESS])
def test_ds_rtn_same_address_in_lane_order(asm: str, init: int, d0: list[int],
                                           d1: list[int], ret: list[int], final: int) -> None:
    w, lds, _ = wave()
    lds.data[8:12] = np.frombuffer(init.to_bytes(4, "little"), np.uint8)
    put(w, 1, [0] * 4)
    put(w, 2, d0)
    put(w, 4, d1)
    run([asm], w)
    assert w.V[:4, 3].tolist() == ret
    assert w.vdef[:4, 3].all()
    assert word(lds, 8) == final
    assert word(lds, 4) == 0 and word(lds, 12) == 0   # nothing else written


def test_gfx11_cmpstore_takes_the_new_value_first() -> None:
    """RDNA3 DS_CMPSTORE_RTN_B32 vdst, addr, DATA (new), DATA2 (compare): the same one
    winner as GFX9's `ds_cmpst_rtn_b32 v3, v1, v2(cmp), v4(new)` above, written with the
    operands the other way round (llc-22 emits this order for a `cmpxchg` on gfx1100)."""
    w, lds, _ = wave()
    put(w, 1, [0] * 4)
    put(w, 2, [0] * 4)          # compare
    put(w, 4, [1, 2, 3, 4])     # new
    run(["ds_cmpstore_rtn_b32 v3, v1, v4, v2 offset:8"], w, "gfx1100")
    assert w.V[:4, 3].tolist() == [0, 1, 1, 1]
    assert word(lds, 8) == 1


def test_ds_64_bit_forms_carry_and_compare_both_dwords() -> None:
    """ds_add_rtn_u64 at byte 16 = 0xFFFFFFFF, DATA lane+1: 0xFFFFFFFF+1 = 0x1_0000_0000
    (the carry into the high dword), +2 = 0x1_0000_0002, +3 = 0x1_0000_0005, +4 =
    0x1_0000_0009. Then ds_cmpst_rtn_b64 (GFX9: DATA compare, DATA2 new) with compare
    0x1_0000_0009 in lane 0 only and new 7: lane 0 swaps, lanes 1..3 compare 0 and miss."""
    w, lds, _ = wave()
    lds.data[16:20] = 0xFF
    put(w, 1, [0] * 4)
    put(w, 2, [1, 2, 3, 4])
    put(w, 3, [0] * 4)
    run(["ds_add_rtn_u64 v[6:7], v1, v[2:3] offset:16"], w)
    got = [int(lo) | int(hi) << 32 for lo, hi in w.V[:4, 6:8].tolist()]
    assert got == [0xFFFF_FFFF, 0x1_0000_0000, 0x1_0000_0002, 0x1_0000_0005]
    assert word(lds, 16, 8) == 0x1_0000_0009
    put(w, 2, [9, 0, 0, 0])
    put(w, 3, [1, 0, 0, 0])
    put(w, 4, [7] * 4)
    put(w, 5, [0] * 4)
    run(["ds_cmpst_rtn_b64 v[6:7], v1, v[2:3], v[4:5] offset:16"], w)
    got = [int(lo) | int(hi) << 32 for lo, hi in w.V[:4, 6:8].tolist()]
    assert got == [0x1_0000_0009, 7, 7, 7]
    assert word(lds, 16, 8) == 7


@pytest.mark.parametrize("cpu", ["gfx942", "gfx90a", "gfx1100"])
def test_ds_without_return_only_active_lanes(cpu: str) -> None:
    """ds_add_u32 v1, v2 offset:4 with v1 = 4*lane and EXEC 0b1010_0101: bytes 4+4k get
    DATA 100+k in lanes 0, 2, 5, 7; the other lanes' words stay 0. The write counts in
    lgkmcnt like a DS store."""
    w, lds, _ = wave(0b1010_0101)
    put(w, 1, [4 * k for k in range(LANES)])
    put(w, 2, [100 + k for k in range(LANES)])
    w.vdef[1, 2] = False            # an inactive lane's undefined data is not used
    run_steps(assemble(["ds_add_u32 v1, v2 offset:4"], cpu), w, ENV)
    assert len(w.lgkm_queue) == 1
    assert [word(lds, 4 + 4 * k) for k in range(LANES)] == [100, 0, 102, 0, 0, 105, 0, 107]


def test_ds_atomic_undefined_data_in_an_active_lane_stops() -> None:
    w, lds, _ = wave(0b0011)
    put(w, 1, [0, 0])
    put(w, 2, [1, 2])
    w.vdef[1, 2] = False
    with pytest.raises(SimStop) as got:
        run(["ds_add_u32 v1, v2"], w)
    assert got.value.fault.kind is FaultKind.UNINIT_READ
    assert word(lds, 0) == 0


def test_ds_atomic_past_the_lds_is_out_of_bounds() -> None:
    w, _, _ = wave(0b0001)
    put(w, 1, [64])                 # LDS is 64 bytes
    put(w, 2, [1])
    with pytest.raises(SimStop) as got:
        run(["ds_add_u32 v1, v2"], w)
    assert got.value.fault.kind is FaultKind.OOB_ACCESS


def flat_addresses(w: Wave, space: AddressSpace) -> int:
    """v[0:1] per lane: lanes 0, 1 the shared aperture at LDS byte 8; lanes 2, 3 the private
    aperture at offset 4 (each lane its own); lanes 4, 5 one global word. Returns the
    global mapping's base."""
    m = space.map("buf", bytes(16))
    m.data[0:4] = np.frombuffer((1000).to_bytes(4, "little"), np.uint8)
    addrs = [SHARED_HI << 32 | 8] * 2 + [PRIVATE_HI << 32 | 4] * 2 + [m.base] * 2
    w.V[:, 0:2] = np.array([*addrs, 0, 0], np.uint64).view(np.uint32).reshape(LANES, 2)
    w.vdef[:, 0:2] = True
    return m.base


@pytest.mark.parametrize(("cpu", "asm"), [
    ("gfx942", "flat_atomic_add v4, v[0:1], v6 sc0"),
    ("gfx90a", "flat_atomic_add v4, v[0:1], v6 glc"),
    ("gfx1100", "flat_atomic_add_u32 v4, v[0:1], v6 glc")])
def test_flat_atomic_goes_where_its_aperture_says(cpu: str, asm: str) -> None:
    """LDS byte 8 = 50: lane 0 adds 1 (returns 50), lane 1 adds 2 (returns 51) → 53.
    Private offset 4 of lanes 2, 3 was stored 20 and 30 by a FLAT store through the same
    aperture: they return 20, 30 and hold 23, 34. The global word 1000: +5 → 1000, +6 →
    1005 → 1011."""
    w, lds, space = wave(0b11_1111)
    m_base = flat_addresses(w, space)
    lds.data[8] = 50
    store = "flat_store_dword v[0:1], v5" if cpu != "gfx1100" else "flat_store_b32 v[0:1], v5"
    w.set_exec(0b1100)
    put(w, 5, [0, 0, 20, 30])
    run_steps(assemble([store], cpu), w, ENV)
    w.set_exec(0b11_1111)
    put(w, 6, [1, 2, 3, 4, 5, 6])
    run([asm], w, cpu)
    assert w.V[:6, 4].tolist() == [50, 51, 20, 30, 1000, 1005]
    assert w.vdef[:6, 4].all()
    assert lds.data[8] == 53
    got, ok = w.private.read(np.array([2, 3]), np.array([4, 4]), 4, "test")
    assert [int.from_bytes(r.tobytes(), "little") for r in got] == [23, 34] and ok.all()
    assert int.from_bytes(space.read(np.array([m_base], np.uint64), 4, "t").tobytes(),
                          "little") == 1011


def test_flat_cmpswap_at_the_lds_aperture_one_winner() -> None:
    """FLAT_ATOMIC_CMPSWAP: DATA[0] the new value, DATA[1] the compare value (CDNA3 §10.3).
    Lanes 0, 1 at LDS byte 8 (= 0) both compare 0 with new lane+1: lane 0 wins (returns 0,
    writes 1), lane 1 then finds 1 (returns 1)."""
    w, lds, space = wave(0b11)
    flat_addresses(w, space)
    put(w, 6, [1, 2])
    put(w, 7, [0, 0])
    run(["flat_atomic_cmpswap v4, v[0:1], v[6:7] sc0"], w)
    assert w.V[:2, 4].tolist() == [0, 1]
    assert lds.data[8] == 1


def test_flat_atomic_on_unwritten_private_memory_returns_undefined() -> None:
    """Private memory has a definedness shadow: an add to a never-written private word
    returns an undefined value (using it is `sim-uninit-read`) and leaves it undefined."""
    w, _, space = wave(0b0100)
    flat_addresses(w, space)
    put(w, 6, [0, 0, 3])
    run(["flat_atomic_add v4, v[0:1], v6 sc0"], w)
    assert not w.vdef[2, 4]
    _, ok = w.private.read(np.array([2]), np.array([4]), 4, "test")
    assert not ok.any()


def test_gfx11_global_min_max_signed_and_unsigned() -> None:
    """RDNA3 spells CDNA's SMIN/UMAX as `_MIN_I32`/`_MAX_U64` (RDNA3 ISA "Global
    atomics"). The word 10 with lanes 0, 1 adding -3 then 5 through global_atomic_min_i32:
    min(10, -3) = -3, min(-3, 5) = -3. The dword pair 7 through global_atomic_max_u64 with
    lanes 2, 3 giving 2^32 then 3: max = 2^32 both times."""
    w, _, space = wave(0b0011)
    m = space.map("buf", bytes(16))
    m.data[0] = 10
    m.data[8] = 7
    w.S[0], w.S[1] = m.base & 0xFFFF_FFFF, m.base >> 32
    w.sdef[0] = w.sdef[1] = 0xFFFF_FFFF
    put(w, 0, [0, 0, 8, 8])
    put(w, 1, [-3, 5])
    run(["global_atomic_min_i32 v4, v0, v1, s[0:1] glc"], w, "gfx1100")
    assert w.V[:2, 4].tolist() == [10, NEG - 3]
    assert int.from_bytes(m.data[0:4].tobytes(), "little") == NEG - 3
    w.set_exec(0b1100)
    put(w, 2, [0, 0, 0, 3])
    put(w, 3, [0, 0, 1, 0])
    run(["global_atomic_max_u64 v0, v[2:3], s[0:1]"], w, "gfx1100")
    assert int.from_bytes(m.data[8:16].tobytes(), "little") == 1 << 32
