"""`memory.AddressSpace` reads and writes against addresses worked out by hand: mappings
sit page-aligned with an unmapped guard page between them; an access is `sim-oob-access`
naming the first lane outside every mapping; lanes in different mappings each access their
own (LLVM selects a pointer per lane and loads once: campaign bucket
be9333042f, reported as `sim-oob-access` before); the
mapping of the last access, tried first, never answers for an address outside it; and
`holding` answers only for bytes that are a mapping's contents."""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.state.memory import PAGE, AddressSpace

FIRST = 0x7F00_0000_0000


def space() -> AddressSpace:
    """a: 16 bytes at FIRST; b: 32 bytes after a guard page, at FIRST + 2 pages."""
    glob = AddressSpace(FIRST)
    glob.map("a", bytes(range(16)))
    glob.map("b", bytes(range(100, 132)))
    return glob


A, B = FIRST, FIRST + 2 * PAGE
"""`map` places the first mapping at the first aligned address and each next one at the
next aligned address a guard page past the end of the previous."""


def at(*addrs: int) -> np.ndarray:
    return np.array(addrs, np.uint64)


def test_the_layout_is_the_one_worked_out_by_hand() -> None:
    assert [(m.name, m.base) for m in space().mappings] == [("a", A), ("b", B)]


def test_alternating_mappings_read_and_write_their_own_bytes() -> None:
    glob = space()
    assert glob.read(at(A + 4, A + 12), 4, "t").tolist() == [[4, 5, 6, 7], [12, 13, 14, 15]]
    assert glob.read(at(B, B + 28), 4, "t").tolist() == [[100, 101, 102, 103],
                                                          [128, 129, 130, 131]]
    glob.write(at(A, A), np.array([[1, 1], [2, 2]], np.uint8), "t")   # the last lane wins
    assert glob.read(at(A + 12, A), 2, "t").tolist() == [[12, 13], [2, 2]]


@pytest.mark.parametrize(("addrs", "width", "detail"), [
    ((A + 12, A + 13), 4, f"4-byte access at {A + 13:#x} (+0xd from a of 16 bytes)"),
    ((B + 4, A + 16), 4, f"4-byte access at {A + 16:#x} (+0x10 from a of 16 bytes)"),
    ((A - 8,), 4, f"4-byte access at {A - 8:#x} (below every mapping)"),
    ((B + 32, B), 1, f"1-byte access at {B + 32:#x} (+0x20 from b of 32 bytes)"),
])
def test_an_access_outside_every_mapping_names_the_first_such_lane(
        addrs: tuple[int, ...], width: int, detail: str) -> None:
    glob = space()
    glob.read(at(A), 4, "t")                # a is the mapping of the last access
    for op in ("read", "write"):
        with pytest.raises(SimStop) as got:
            if op == "read":
                glob.read(at(*addrs), width, "t")
            else:
                glob.write(at(*addrs), np.zeros((len(addrs), width), np.uint8), "t")
        assert got.value.fault.kind is FaultKind.OOB_ACCESS
        assert got.value.fault.detail == f"t: {detail}"


def test_a_store_to_a_read_only_mapping_is_an_out_of_bounds_access() -> None:
    glob = AddressSpace(FIRST)
    glob.map("ro", bytes(8), writable=False)
    glob.read(at(A), 4, "t")
    with pytest.raises(SimStop) as got:
        glob.write(at(A + 4), np.zeros((1, 4), np.uint8), "t")
    assert got.value.fault.detail == f"t: store to read-only ro at {A + 4:#x} (+0x4 from ro " \
        "of 8 bytes)"


def test_holding_answers_only_for_contents() -> None:
    glob = AddressSpace(FIRST)
    glob.map("args", bytes(10), pad_to=16)
    assert glob.holding(A + 2, 8) is glob.mappings[0]
    assert glob.holding(A + 4, 8) is None            # bytes 10, 11: padding, not contents
    assert glob.holding(A + 2, 8) is glob.mappings[0]
    assert glob.holding(A + 16, 4) is None and glob.holding(A - 4, 4) is None


def test_lanes_in_different_mappings_each_read_and_write_their_own() -> None:
    glob = space()
    # lane 0 in b, lane 1 in a, lane 2 in b again: each lane's own bytes, in lane order
    assert glob.read(at(B + 1, A + 2, B + 30), 2, "t").tolist() == [[101, 102], [2, 3],
                                                                    [130, 131]]
    glob.write(at(A + 4, B + 8, A + 4), np.array([[7], [8], [9]], np.uint8), "t")
    assert glob.read(at(A + 4, B + 8), 1, "t").tolist() == [[9], [8]]  # the last lane wins


def test_lanes_in_different_mappings_still_check_each_lane() -> None:
    glob = space()
    with pytest.raises(SimStop) as got:
        glob.read(at(B, A + 14), 4, "t")    # lane 1 runs past a's 16 bytes
    assert got.value.fault.kind is FaultKind.OOB_ACCESS
    assert f"4-byte access at {A + 14:#x} (+0xe from a of 16 bytes)" in got.value.fault.detail
    ro = AddressSpace(FIRST)
    ro.map("a", bytes(16))
    ro.map("k", bytes(16), writable=False)
    with pytest.raises(SimStop) as got:
        ro.write(at(A, B), np.array([[1], [2]], np.uint8), "t")
    assert "store to read-only k" in got.value.fault.detail
    assert ro.read(at(A), 1, "t").tolist() == [[0]]  # nothing written when any lane faults
