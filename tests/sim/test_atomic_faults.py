"""GLOBAL/DS atomics: the faults of a lane's read-modify-write and several lanes at one
address, on code assembled by llvm-mc-22 (`tests.sim.asm_steps`) and run on a prepared wave.

A lane's read-modify-write is a scalar access to its mapping's (or the LDS's) bytes. Its
`sim-oob-access` texts must be those of a one-lane vector `AddressSpace.read`/`write` or
`Lds.write` at the same address, so each fault test takes its reference text from that
vector path (an independent code path) and also checks the parts a reader relies on (width,
address, mapping) against literals. The values are worked out BY HAND from the ISA
pseudocode (CDNA3 ISA §10.3 "Global atomics": ADD MEM = MEM + DATA, CMPSWAP MEM = (MEM ==
DATA[1]) ? DATA[0] : MEM, the pre-op value returned with SC0), applying the lanes at one
address in ascending lane order (docs/simulator.md "Atomics"); the comments show the
arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.state.memory import Lds
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.test_atomics import LANES, NEG, SHARED_HI, put, run, wave


def addresses(w: Wave, addrs: list[int]) -> None:
    """v[0:1] = addrs[lane] (64-bit), defined; lanes past the list get 0."""
    w.V[:, 0:2] = np.array(addrs + [0] * (LANES - len(addrs)), np.uint64) \
        .view(np.uint32).reshape(LANES, 2)
    w.vdef[:, 0:2] = True


def u32(m_data: np.ndarray, at: int, n: int = 4) -> int:
    return int.from_bytes(m_data[at:at + n].tobytes(), "little")


def fault_text(call: Callable[[], object]) -> str:
    """The fault text of the vector path's call (a zero-argument function that faults)."""
    with pytest.raises(SimStop) as got:
        call()
    assert got.value.fault.kind is FaultKind.OOB_ACCESS
    return got.value.fault.detail


def test_global_atomic_past_its_buffer_faults_as_a_vector_read() -> None:
    """Lane 0 adds 5 to buf's word 0 (7 → 12) before lane 1, 16 bytes into the 16-byte buf
    (past its end, into the guard page), faults; lane 2 is never applied."""
    w, _, space = wave(0b0111)
    m = space.map("buf", bytes(16))
    m.data[0] = 7
    addresses(w, [m.base, m.base + 16, m.base + 4])
    put(w, 6, [5, 6, 7])
    with pytest.raises(SimStop) as got:
        run(["global_atomic_add v4, v[0:1], v6, off sc0"], w)
    ref = fault_text(lambda: space.read(np.array([m.base + 16], np.uint64), 4,
                                        "global_atomic_add"))
    assert got.value.fault.kind is FaultKind.OOB_ACCESS
    assert got.value.fault.detail == ref
    assert f"4-byte access at {m.base + 16:#x} (+0x10 from buf of 16 bytes)" in ref
    assert u32(m.data, 0) == 12 and u32(m.data, 4) == 0


def test_global_atomic_below_every_mapping_faults_as_a_vector_read() -> None:
    w, _, space = wave(0b0001)
    space.map("buf", bytes(16))
    addresses(w, [0x1000])
    put(w, 6, [1])
    with pytest.raises(SimStop) as got:
        run(["global_atomic_add v[0:1], v6, off"], w)  # no SC0: no destination
    ref = fault_text(lambda: space.read(np.array([0x1000], np.uint64), 4, "global_atomic_add"))
    assert got.value.fault.detail == ref
    assert "4-byte access at 0x1000 (below every mapping)" in ref


def test_global_atomic_on_a_read_only_mapping_faults_as_a_vector_store() -> None:
    """A read-only mapping (a code object's `.text`) is read by the atomic, and its store
    faults; the bytes stay 3."""
    w, _, space = wave(0b0001)
    m = space.map("text", bytes([3, 0, 0, 0, 0, 0, 0, 0]), writable=False)
    addresses(w, [m.base + 4])
    put(w, 6, [1])
    with pytest.raises(SimStop) as got:
        run(["global_atomic_add v4, v[0:1], v6, off sc0"], w)
    ref = fault_text(lambda: space.write(np.array([m.base + 4], np.uint64),
                                         np.zeros((1, 4), np.uint8), "global_atomic_add"))
    assert got.value.fault.detail == ref
    assert f"store to read-only text at {m.base + 4:#x} (+0x4 from text of 8 bytes)" in ref
    assert m.data.tolist() == [3, 0, 0, 0, 0, 0, 0, 0]


@pytest.mark.parametrize("at", [62, 64, 0xFFFF_FFFC])
def test_ds_atomic_past_the_lds_faults_as_a_vector_lds_store(at: int) -> None:
    """LDS of 64 bytes: lane 0 adds 9 at byte 0 before lane 1's 4-byte access at `at`
    (straddling the end, at the end, or far past it) faults with `Lds.write`'s text."""
    w, lds, _ = wave(0b0011)
    put(w, 1, [0, at])
    put(w, 2, [9, 1])
    with pytest.raises(SimStop) as got:
        run(["ds_add_u32 v1, v2"], w)
    ref = fault_text(lambda: Lds(64).write(np.array([at], np.uint64),
                                           np.zeros((1, 4), np.uint8), "ds_add_u32"))
    assert got.value.fault.detail == ref
    assert f"4-byte LDS access at {at:#x}, LDS size 0x40" in ref
    assert u32(lds.data, 0) == 9


def test_flat_atomic_past_the_lds_aperture_faults_as_a_vector_lds_store() -> None:
    """A FLAT atomic in the shared aperture is LDS at the low 32 bits: byte 60 of the LDS
    takes an 8-byte add (60 + 8 > 64)."""
    w, _, _ = wave(0b0001)
    addresses(w, [SHARED_HI << 32 | 60])
    put(w, 6, [1, 0])
    put(w, 7, [0, 0])
    with pytest.raises(SimStop) as got:
        run(["flat_atomic_add_x2 v[0:1], v[6:7]"], w)
    ref = fault_text(lambda: Lds(64).write(np.array([60], np.uint64),
                                           np.zeros((1, 8), np.uint8), "flat_atomic_add_x2"))
    assert got.value.fault.detail == ref
    assert "8-byte LDS access at 0x3c, LDS size 0x40" in ref


def test_global_add_lanes_at_one_address_apply_in_lane_order() -> None:
    """Lanes 0, 2, 3 at word 0 (= 7) add 1, 3, 4: 7 → 8 → 11 → 15, returning 7, 8, 11.
    Lane 1 at word 1 (= 100) adds 2: returns 100, leaves 102. Word 2 is untouched."""
    w, _, space = wave(0b1111)
    m = space.map("buf", bytes(12))
    m.data[0] = 7
    m.data[4] = 100
    addresses(w, [m.base, m.base + 4, m.base, m.base])
    put(w, 6, [1, 2, 3, 4])
    run(["global_atomic_add v4, v[0:1], v6, off sc0"], w)
    assert w.V[:4, 4].tolist() == [7, 100, 8, 11]
    assert w.vdef[:4, 4].all()
    assert [u32(m.data, 0), u32(m.data, 4), u32(m.data, 8)] == [15, 102, 0]


def test_global_cmpswap_x2_lanes_at_one_address_apply_in_lane_order() -> None:
    """The dword pair 5 with (new, compare) per lane: lane 0 (2^32, 5) finds 5 and swaps;
    lane 1 (9, 5) finds 2^32 and keeps it; lane 2 (11, 2^32) finds 2^32 and swaps; lane 3
    (13, 2^32) finds 11 and keeps it. Returns 5, 2^32, 2^32, 11; the pair ends 11."""
    w, _, space = wave(0b1111)
    m = space.map("buf", bytes(8))
    m.data[0] = 5
    addresses(w, [m.base] * 4)
    new = [1 << 32, 9, 11, 13]
    cmp = [5, 5, 1 << 32, 1 << 32]
    put(w, 6, [v % NEG for v in new])
    put(w, 7, [v >> 32 for v in new])
    put(w, 8, [v % NEG for v in cmp])
    put(w, 9, [v >> 32 for v in cmp])
    run(["global_atomic_cmpswap_x2 v[4:5], v[0:1], v[6:9], off sc0"], w)
    got = [lo | hi << 32 for lo, hi in w.V[:4, 4:6].tolist()]
    assert got == [5, 1 << 32, 1 << 32, 11]
    assert w.vdef[:4, 4:6].all()
    assert u32(m.data, 0, 8) == 11


def test_global_lanes_whose_words_overlap_in_part_apply_in_lane_order() -> None:
    """Lane 0 at byte 0 and lane 1 at byte 2 overlap in bytes 2..3. Bytes 0..5 start
    01 00 00 00 00 00. Lane 0 adds 0x1_0000 to the word at 0 (1 → 0x1_0001, bytes 01 00 01
    00); lane 1 then reads the word at 2, bytes 01 00 00 00 = 1 (lane 0's write), and adds 1:
    bytes 2..5 become 02 00 00 00. Returns 1 and 1."""
    w, _, space = wave(0b0011)
    m = space.map("buf", bytes(8))
    m.data[0] = 1
    addresses(w, [m.base, m.base + 2])
    put(w, 6, [0x1_0000, 1])
    run(["global_atomic_add v4, v[0:1], v6, off sc0"], w)
    assert w.V[:2, 4].tolist() == [1, 1]
    assert m.data[:6].tolist() == [1, 0, 2, 0, 0, 0]


def test_ds_lanes_whose_words_overlap_in_part_apply_in_lane_order() -> None:
    """The LDS form of the case above, with ds_add_rtn_u32 at bytes 8 and 10 (offset:8):
    the same bytes and the same returns."""
    w, lds, _ = wave(0b0011)
    lds.data[8] = 1
    put(w, 1, [0, 2])
    put(w, 2, [0x1_0000, 1])
    run(["ds_add_rtn_u32 v3, v1, v2 offset:8"], w)
    assert w.V[:2, 3].tolist() == [1, 1]
    assert lds.data[8:14].tolist() == [1, 0, 2, 0, 0, 0]
