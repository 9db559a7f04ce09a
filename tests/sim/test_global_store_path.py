"""GLOBAL stores of whole registers (`bound.mem.bind_vmem`'s `global_store`) against values
worked out by hand: only lanes in EXEC store (CDNA3 ISA §10 "Global, scratch and flat":
inactive lanes neither access memory nor fault), D16_HI stores bits 31:16 of the data
VGPR, and the checks come in the bound step's order: an undefined address, then a load
still in flight to the data (`sim-waitcnt-hazard`), then undefined data in an active lane
(`sim-uninit-read`), then the bounds (`sim-oob-access`). A lane holding a partly defined
value (`Wave.vpart`) goes the general path, which reports it as undefined data."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from rgpu_fuzz.sim.bound.mem import bind_vmem
from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics.memops import memop
from rgpu_fuzz.sim.state.memory import AddressSpace
from rgpu_fuzz.sim.state.wave import Pending, Wave

LANES = 4
ENV = Env(lanes=LANES, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))
OFF = Opnd(OpKind.OFF, 0, 0)


def _store(opcode: str, offset: int = 0):  # type: ignore[no-untyped-def]
    ops = (Opnd(OpKind.VGPR, 0, 2), Opnd(OpKind.VGPR, 2, 1), OFF)
    inst = Inst(0, 8, opcode, "GLOBAL", opcode.lower(), ops, mods={"offset": offset})
    return bind_vmem(inst, memop(opcode), ENV, None)  # type: ignore[arg-type]


def _wave(exec_mask: int, size: int = 16) -> tuple[Wave, np.ndarray, int]:
    """A wave whose v[0:1] holds buffer + 4 * lane and v2 holds 0x11223344 * (lane + 1)
    (mod 2^32), all defined; the buffer is `size` zero bytes."""
    w = Wave(LANES, 0, 0)
    w.set_exec(exec_mask)
    glob = AddressSpace()
    m = glob.map("out", bytes(size))
    w.mem = SimpleNamespace(glob=glob)
    addrs = np.array([m.base + 4 * ln for ln in range(LANES)], np.uint64)
    w.V[:, 0:2] = addrs.view(np.uint32).reshape(LANES, 2)
    w.V[:, 2] = [0x1122_3344, 0x2244_6688, 0x3366_99CC, 0x4488_CD10]
    w.vdef[:, 0:3] = True
    return w, m.data, m.base


def test_only_lanes_in_exec_store_and_an_inactive_undefined_lane_is_no_fault() -> None:
    w, data, _ = _wave(0b0101)
    w.vdef[1, 2] = False
    w.vdef[3, 0] = False                    # an inactive lane's address: not used
    _store("GLOBAL_STORE_DWORD")(w)
    assert data.tobytes() == bytes.fromhex("44332211" "00000000" "cc996633" "00000000")
    assert len(w.vm_queue) == 1             # counted by vmcnt like any store


def test_d16_hi_stores_the_high_half_and_byte_the_low_byte_at_the_offset() -> None:
    w, data, _ = _wave(0b1111)
    _store("GLOBAL_STORE_SHORT_D16_HI")(w)
    assert data.tobytes() == bytes.fromhex("22110000" "44220000" "66330000" "88440000")
    w, data, _ = _wave(0b1000, size=24)
    _store("GLOBAL_STORE_BYTE", offset=5)(w)          # lane 3: buffer + 12 + 5
    assert data.tobytes() == bytes(17) + b"\x10" + bytes(6)


@pytest.mark.parametrize(("setup", "kind"), [
    ("address", FaultKind.UNINIT_READ),      # lane 2's address undefined, data too
    ("pending", FaultKind.WAITCNT_HAZARD),   # v2 still loading, lane 2's data undefined
    ("data", FaultKind.UNINIT_READ),
    ("bounds", FaultKind.OOB_ACCESS),
    ("partial", FaultKind.UNINIT_READ),
])
def test_checks_in_the_bound_steps_order(setup: str, kind: FaultKind) -> None:
    w, data, base = _wave(0b0111)
    if setup == "address":
        w.vdef[2, 0] = w.vdef[2, 2] = False
    if setup == "pending":
        w.vdef[2, 2] = False
        w.pend_v[2] = Pending(vm=True, lgkm=False, smem=False, vcol=2)
    if setup == "data":
        w.vdef[2, 2] = False
    if setup == "bounds":
        w.V[1, 0:2] = np.array([base + 16], np.uint64).view(np.uint32)   # one past the end
    if setup == "partial":
        w.vpart[2] = {1: 0x0000_FFFF}       # lane 1's v2: low half defined only
        w.vdef[1, 2] = False
    with pytest.raises(SimStop) as stop:
        _store("GLOBAL_STORE_DWORD")(w)
    assert stop.value.fault.kind is kind
    assert data.tobytes() == bytes(16)      # nothing stored
