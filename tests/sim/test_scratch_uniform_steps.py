"""Uniform-address SCRATCH steps (`bound.scratch`: O0 spills, reloads and byte/short
alloca slots; `bound.mem.bind_vmem` picks them) and the direct GLOBAL load, through the
binder, against values worked out by hand.

Hand rules: the private layout swizzles 4-byte elements with an index stride of the wave
size (AMDGPUUsage "Private Segment"), so byte `o` of lane `l` is byte `(o // 4) * 4 *
lanes + 4 * l + o % 4` of the wave's backing store; SCRATCH_STORE_BYTE/SHORT store bits
7:0 / 15:0 of the data VGPR; LOAD_UBYTE/USHORT zero-extend, SBYTE/SSHORT sign-extend
(CDNA3 ISA §10 "Scratch instructions"); lanes outside EXEC neither store nor load. The
checks come in the general step's order: empty EXEC does nothing, an undefined SGPR base
is `sim-uninit-read`, a pending one `sim-waitcnt-hazard`, then a pending data register
`sim-waitcnt-hazard`, then the bounds `sim-oob-access`."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from rgpu_fuzz.sim.bound.mem import bind_vmem, drain
from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics.memops import memop
from rgpu_fuzz.sim.state.memory import AddressSpace, Private
from rgpu_fuzz.sim.state.wave import Pending, Wave

LANES = 4
ENV = Env(lanes=LANES, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))
OFF = Opnd(OpKind.OFF, 0, 0)
S_BASE = Opnd(OpKind.SGPR, 33, 1)
M32 = 0xFFFF_FFFF


def scratch(opcode: str, reg: int, offset: int, n: int = 1):  # type: ignore[no-untyped-def]
    """`scratch_store_* off, v<reg>, s33 offset:<offset>` / `scratch_load_* v<reg>, off, s33
    offset:<offset>`."""
    data = Opnd(OpKind.VGPR, reg, n)
    ops = (OFF, data, S_BASE) if "STORE" in opcode else (data, OFF, S_BASE)
    inst = Inst(0, 8, opcode, "SCRATCH", opcode.lower(), ops, mods={"offset": offset})
    return bind_vmem(inst, memop(opcode), ENV, None)  # type: ignore[arg-type]


def wave(exec_mask: int = 0b1111, size: int = 16) -> Wave:
    w = Wave(LANES, 0, 0)
    w.set_exec(exec_mask)
    w.private = Private(size, LANES)
    w.S[33], w.sdef[33] = 4, M32          # the frame base: private offset 4
    w.V[:, 1] = [0x1234_56F0, 0x0000_80A5, 0xFFFF_FF7F, 0x0102_0304]
    w.vdef[:, 1] = True
    return w


def byte_at(w: Wave, lane: int, o: int) -> int:
    return int(w.private.data[(o // 4) * 4 * LANES + 4 * lane + o % 4])


def test_a_byte_store_lands_at_the_swizzled_byte_and_loads_back_extended() -> None:
    w = wave()
    scratch("SCRATCH_STORE_BYTE", 1, 1)(w)            # private offset 4 + 1 = 5
    assert [byte_at(w, ln, 5) for ln in range(LANES)] == [0xF0, 0xA5, 0x7F, 0x04]
    assert [byte_at(w, ln, 4) for ln in range(LANES)] == [0, 0, 0, 0]
    assert int(w.private.defined[(5 // 4) * 4 * LANES + 4 * 2 + 1]) == 0xFF
    scratch("SCRATCH_LOAD_UBYTE", 2, 1)(w)
    scratch("SCRATCH_LOAD_SBYTE", 3, 1)(w)
    drain(w)
    assert w.V[:, 2].tolist() == [0xF0, 0xA5, 0x7F, 0x04]
    assert w.V[:, 3].tolist() == [0xFFFF_FFF0, 0xFFFF_FFA5, 0x7F, 0x04]
    assert w.vdef[:, 2:4].all()


def test_a_short_store_and_its_loads_and_an_odd_offset() -> None:
    w = wave()
    scratch("SCRATCH_STORE_SHORT", 1, 2)(w)           # offset 6: bytes 2-3 of dword 1
    scratch("SCRATCH_LOAD_USHORT", 2, 2)(w)
    scratch("SCRATCH_LOAD_SSHORT", 3, 2)(w)
    scratch("SCRATCH_LOAD_USHORT", 4, 1)(w)           # offset 5: low byte 0, high = stored low
    drain(w)
    assert w.V[:, 2].tolist() == [0x56F0, 0x80A5, 0xFF7F, 0x0304]
    assert w.V[:, 3].tolist() == [0x56F0, 0xFFFF_80A5, 0xFFFF_FF7F, 0x0304]
    assert w.V[:, 4].tolist() == [0xF000, 0xA500, 0x7F00, 0x0400]
    # byte 5 was never stored: the odd load's lanes are undefined
    assert not w.vdef[:, 4].any() and w.vdef[:, 2:4].all()


def test_partial_exec_stores_and_loads_only_active_lanes() -> None:
    w = wave(exec_mask=0b0110)
    w.V[:, 5] = 0xAAAA_AAAA
    w.vdef[:, 5] = True
    scratch("SCRATCH_STORE_BYTE", 1, 0)(w)
    scratch("SCRATCH_STORE_DWORD", 1, 4)(w)          # offset 8
    assert [byte_at(w, ln, 4) for ln in range(LANES)] == [0, 0xA5, 0x7F, 0]
    assert [byte_at(w, ln, 8) for ln in range(LANES)] == [0, 0xA5, 0x7F, 0]
    assert [int(w.private.defined[2 * 4 * LANES + 4 * ln]) for ln in range(LANES)] == \
        [0, 0xFF, 0xFF, 0]
    scratch("SCRATCH_LOAD_UBYTE", 5, 0)(w)
    drain(w)
    assert w.V[:, 5].tolist() == [0xAAAA_AAAA, 0xA5, 0x7F, 0xAAAA_AAAA]


def test_an_undefined_register_stores_undefined_bytes_and_loads_undefined() -> None:
    w = wave()
    w.vdef[2, 1] = False
    scratch("SCRATCH_STORE_SHORT", 1, 0)(w)
    scratch("SCRATCH_STORE_DWORDX2", 1, 4, n=2)(w)   # v2 never written: undefined
    scratch("SCRATCH_LOAD_USHORT", 6, 0)(w)
    scratch("SCRATCH_LOAD_DWORDX2", 7, 4, n=2)(w)
    drain(w)
    assert w.vdef[:, 6].tolist() == [True, True, False, True]
    assert w.vdef[:, 7].tolist() == [True, True, False, True]
    assert not w.vdef[:, 8].any()
    assert w.V[:, 7].tolist() == [0x1234_56F0, 0x0000_80A5, 0xFFFF_FF7F, 0x0102_0304]


@pytest.mark.parametrize("opcode", ["SCRATCH_STORE_BYTE", "SCRATCH_LOAD_UBYTE",
                                    "SCRATCH_STORE_DWORD", "SCRATCH_LOAD_DWORD"])
@pytest.mark.parametrize(("setup", "kind"), [
    ("base-undefined", FaultKind.UNINIT_READ),
    ("base-pending", FaultKind.WAITCNT_HAZARD),
    ("data-pending", FaultKind.WAITCNT_HAZARD),  # stores only; loads: out of bounds next
    ("bounds", FaultKind.OOB_ACCESS),
])
def test_checks_in_the_general_steps_order(opcode: str, setup: str, kind: FaultKind) -> None:
    w = wave()
    p = Pending(vm=False, lgkm=True, smem=True)
    if setup == "base-undefined":
        w.sdef[33] = 0xFFFF_0000
        w.pend_s[33] = p                         # undefined wins over pending
    if setup == "base-pending":
        w.pend_s[33] = p
    if setup == "data-pending":
        w.pend_v[1] = Pending(vm=True, lgkm=False, smem=False)
        w.S[33] = 64                             # and out of bounds: the hazard comes first
    if setup == "bounds":
        w.S[33] = 16                             # the first byte past the 16 of each lane
    if setup == "data-pending" and "LOAD" in opcode:
        kind = FaultKind.OOB_ACCESS
    with pytest.raises(SimStop) as got:
        scratch(opcode, 1, 0)(w)
    assert got.value.fault.kind is kind
    w.set_exec(0)                                # nothing active: no access, no fault
    scratch(opcode, 1, 0)(w)


def test_a_global_dword_load_reads_active_lanes_and_faults_past_the_buffer() -> None:
    glob = AddressSpace()
    m = glob.map("in", bytes(range(16)))
    w = Wave(LANES, 0, 0)
    w.mem = SimpleNamespace(glob=glob)
    w.set_exec(0b1011)
    addrs = np.array([m.base + 4 * ln for ln in range(LANES)], np.uint64)
    w.V[:, 0:2] = addrs.view(np.uint32).reshape(LANES, 2)
    w.vdef[:, 0:2] = True
    w.V[:, 4] = 7
    ops = (Opnd(OpKind.VGPR, 4, 1), Opnd(OpKind.VGPR, 0, 2), OFF)
    load = Inst(0, 8, "GLOBAL_LOAD_DWORD", "GLOBAL", "global_load_dword", ops,
                mods={"offset": 0})
    bind_vmem(load, memop("GLOBAL_LOAD_DWORD"), ENV, None)(w)  # type: ignore[arg-type]
    drain(w)
    # little-endian dwords of bytes 0..15; lane 2 inactive keeps 7 (and stays undefined)
    assert w.V[:, 4].tolist() == [0x0302_0100, 0x0706_0504, 7, 0x0F0E_0D0C]
    assert w.vdef[:, 4].tolist() == [True, True, False, True]
    past = Inst(0, 8, "GLOBAL_LOAD_DWORD", "GLOBAL", "global_load_dword", ops,
                mods={"offset": 4})
    with pytest.raises(SimStop) as got:                  # lane 3 reads bytes 16..19
        bind_vmem(past, memop("GLOBAL_LOAD_DWORD"), ENV, None)(w)  # type: ignore[arg-type]
    assert got.value.fault.kind is FaultKind.OOB_ACCESS


def test_partly_defined_lanes_go_through_private_memory_bit_for_bit() -> None:
    """v1 lane 2 holds a value with only its low 12 bits defined (`vpart`), v5 lanes 0 and
    3 old partly defined entries. Stored and reloaded into v5 under EXEC 0b0111: lane 2
    comes back with its 12 bits, lanes 0 and 1 fully defined (their entries go), lane 3
    (inactive) keeps its old entry."""
    w = wave(exec_mask=0b0111)
    w.vdef[2, 1] = False
    w.vpart = {1: {2: 0x0000_0FFF}, 5: {0: 0xFF, 3: 0xF}}
    w.private.defined[4 * LANES + 4 * 3] = 0xFF         # lane 3's slot: one byte defined
    scratch("SCRATCH_STORE_DWORD", 1, 0)(w)
    assert [int.from_bytes(w.private.defined[4 * LANES + 4 * ln:4 * LANES + 4 * ln + 4],
                           "little") for ln in range(LANES)] == [M32, M32, 0x0FFF, 0xFF]
    scratch("SCRATCH_LOAD_DWORD", 5, 0)(w)
    assert w.vpart[5] == {2: 0x0FFF, 3: 0xF}            # at issue, as the general step
    drain(w)
    assert w.vdef[:, 5].tolist() == [True, True, False, False]
    assert w.V[:3, 5].tolist() == [0x1234_56F0, 0x0000_80A5, 0xFFFF_FF7F]
