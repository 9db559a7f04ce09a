"""GLOBAL loads and stores and DS stores under a partial EXEC, one run of lanes or scattered,
against values worked out by hand: only lanes in EXEC access memory (CDNA3 ISA §10 "Global,
scratch and flat": inactive lanes neither access memory nor fault; §11 LDS likewise), a
loaded byte or short is zero- or sign-extended to 32 bits (GLOBAL_LOAD_UBYTE/SBYTE/USHORT/
SSHORT), the destination is written at the `s_waitcnt` covering the load, and the checks
come in the bound step's order: a load in flight to the address, an undefined address in
an active lane, then (stores) a load in flight to the data, undefined data, the bounds."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from rgpu_fuzz.sim.bound.ds import bind_ds
from rgpu_fuzz.sim.bound.mem import bind_vmem, drain
from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics.memops import memop
from rgpu_fuzz.sim.state.memory import AddressSpace, Lds
from rgpu_fuzz.sim.state.wave import Pending, Wave

LANES = 8
ENV = Env(lanes=LANES, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))
OFF = Opnd(OpKind.OFF, 0, 0)
BUFFER = bytes(range(0x80, 0xC0))      # 64 bytes: byte i holds 0x80 + i


def glob(opcode: str, reg: int, offset: int = 0, saddr: bool = False, n: int = 1):  # type: ignore[no-untyped-def]
    """`global_load_* v<reg>, v[0:1], off offset:<offset>` (or `v0, s[4:5]` with saddr),
    `global_store_* v[0:1], v<reg>, off` likewise."""
    vaddr = Opnd(OpKind.VGPR, 0, 1 if saddr else 2)
    base = Opnd(OpKind.SGPR, 4, 2) if saddr else OFF
    data = Opnd(OpKind.VGPR, reg, n)
    ops = (vaddr, data, base) if "STORE" in opcode else (data, vaddr, base)
    inst = Inst(0, 8, opcode, "GLOBAL", opcode.lower(), ops, mods={"offset": offset})
    return bind_vmem(inst, memop(opcode), ENV, None)  # type: ignore[arg-type]


def wave(exec_mask: int, saddr: bool = False) -> tuple[Wave, np.ndarray, int]:
    """v[0:1] = buffer + 4 * lane (or v0 = 4 * lane and s[4:5] = buffer); v2 = 0xA0B0C0D0 +
    lane, v3 = 0x7000 + lane; v8..v11 = 0x55, all defined."""
    w = Wave(LANES, 0, 0)
    w.set_exec(exec_mask)
    space = AddressSpace()
    m = space.map("buf", BUFFER)
    lds = Lds(128)
    w.mem = SimpleNamespace(glob=space, lds=lambda wave: lds)
    lane = np.arange(LANES, dtype=np.uint64)
    if saddr:
        w.V[:, 0] = 4 * lane
        w.S[4], w.S[5] = m.base & 0xFFFF_FFFF, m.base >> 32
        w.sdef[4] = w.sdef[5] = 0xFFFF_FFFF
    else:
        w.V[:, 0:2] = (np.uint64(m.base) + 4 * lane).view(np.uint32).reshape(LANES, 2)
    w.V[:, 2] = 0xA0B0_C0D0 + lane.astype(np.uint32)
    w.V[:, 3] = 0x7000 + lane.astype(np.uint32)
    w.vdef[:, 0:4] = True
    w.V[:, 8:12] = 0x55
    w.vdef[:, 8:12] = True
    return w, m.data, m.base


def le32(b: bytes) -> int:
    return int.from_bytes(b, "little")


@pytest.mark.parametrize("mask", [0b0011_1100, 0b1001_0110, 0b1111_1111])
@pytest.mark.parametrize("saddr", [False, True])
def test_loads_extend_and_write_only_active_lanes(mask: int, saddr: bool) -> None:
    w, _, _ = wave(mask, saddr)
    w.vdef[:, 1] = [bool(mask >> ln & 1) or saddr for ln in range(LANES)]  # inactive: no use
    glob("GLOBAL_LOAD_DWORDX2", 8, 4, saddr, n=2)(w)      # bytes 4 * lane + 4 ..
    glob("GLOBAL_LOAD_SBYTE", 10, 3, saddr)(w)             # byte 4 * lane + 3 >= 0x83
    glob("GLOBAL_LOAD_USHORT", 11, 2, saddr)(w)
    assert w.V[:, 8].tolist() == [0x55] * LANES
    drain(w)
    for ln in range(LANES):
        on = bool(mask >> ln & 1)
        b = 4 * ln
        assert w.V[ln, 8] == (le32(BUFFER[b + 4:b + 8]) if on else 0x55)
        assert w.V[ln, 9] == (le32(BUFFER[b + 8:b + 12]) if on else 0x55)
        assert w.V[ln, 10] == (0xFFFF_FF00 | BUFFER[b + 3] if on else 0x55)
        assert w.V[ln, 11] == (le32(BUFFER[b + 2:b + 4]) if on else 0x55)
    assert w.vdef[:, 8:12].all()


@pytest.mark.parametrize("mask", [0b0000_1110, 0b0101_0001])
def test_stores_write_only_active_lanes(mask: int) -> None:
    w, data, _ = wave(mask)
    glob("GLOBAL_STORE_DWORD", 2)(w)
    glob("GLOBAL_STORE_BYTE", 3, 2)(w)
    for ln in range(LANES):
        got = bytes(data[4 * ln:4 * ln + 4])
        want = (0xA0B0_C0D0 + ln).to_bytes(4, "little")
        if mask >> ln & 1:
            assert got == want[:2] + bytes([ln]) + want[3:]
        else:
            assert got == BUFFER[4 * ln:4 * ln + 4]


@pytest.mark.parametrize(("setup", "kind"), [
    ("address-pending", FaultKind.WAITCNT_HAZARD),
    ("address", FaultKind.UNINIT_READ),
    ("data-pending", FaultKind.WAITCNT_HAZARD),
    ("data", FaultKind.UNINIT_READ),
    ("bounds", FaultKind.OOB_ACCESS),
])
def test_store_checks_come_in_order(setup: str, kind: FaultKind) -> None:
    w, data, _ = wave(0b0111_0000)
    # each setup also breaks every later check, so the first one in order must win
    if setup == "address-pending":
        w.pend_v[1] = Pending(vm=True, lgkm=False, smem=False)
    if setup in ("address-pending", "address"):
        w.vdef[5, 1] = False
    if setup in ("address-pending", "address", "data-pending"):
        w.pend_v[2] = Pending(vm=True, lgkm=False, smem=False)
    if setup != "bounds":
        w.vdef[6, 2] = False
    w.V[6, 0] += 64                                          # lane 6 past the buffer
    with pytest.raises(SimStop) as got:
        glob("GLOBAL_STORE_DWORD", 2)(w)
    assert got.value.fault.kind is kind
    assert bytes(data) == BUFFER


def test_a_load_past_the_buffer_in_an_active_lane_is_out_of_bounds() -> None:
    w, _, _ = wave(0b0000_0110)
    w.V[3, 0] += 64                                          # inactive: no fault
    glob("GLOBAL_LOAD_DWORD", 8)(w)
    w.V[2, 0] += 64
    with pytest.raises(SimStop) as got:
        glob("GLOBAL_LOAD_USHORT", 9)(w)
    assert got.value.fault.kind is FaultKind.OOB_ACCESS


def ds(opcode: str, **mods: int):  # type: ignore[no-untyped-def]
    """`ds_write_* v3, v2` / `ds_write2_b32 v3, v2, v8` with v3 = 4 * lane + 4 the address
    (set by the test)."""
    ops = (Opnd(OpKind.VGPR, 3, 1), Opnd(OpKind.VGPR, 2, 1), Opnd(OpKind.VGPR, 8, 1))
    inst = Inst(0, 8, opcode, "DS", opcode.lower(), ops if "2" in opcode[8:] else ops[:2],
                mods=mods)
    return bind_ds(inst, memop(opcode), ENV, None)  # type: ignore[arg-type]


@pytest.mark.parametrize("mask", [0b0000_0111, 0b1000_0101])
def test_ds_stores_write_only_active_lanes(mask: int) -> None:
    w, _, _ = wave(mask)
    lds = w.mem.lds(w)
    w.V[:, 3] = 4 * np.arange(LANES, dtype=np.uint32)
    ds("DS_WRITE_B32", offset=0)(w)                          # lane l: dword l
    ds("DS_WRITE_B8", offset=32)(w)                          # lane l: low byte of dword 8 + l
    ds("DS_WRITE2_B32", offset0=16, offset1=24)(w)           # dwords 16 + l and 24 + l
    want = [0] * 32
    for ln in range(LANES):
        if mask >> ln & 1:
            want[ln] = want[16 + ln] = 0xA0B0_C0D0 + ln
            want[8 + ln] = 0xD0 + ln
            want[24 + ln] = 0x55
    assert lds.data.view("<u4").tolist() == want
    assert len(w.lgkm_queue) == 3


@pytest.mark.parametrize(("setup", "kind"), [
    ("address", FaultKind.UNINIT_READ),
    ("data", FaultKind.UNINIT_READ),
    ("bounds", FaultKind.OOB_ACCESS),
])
def test_ds_store_checks_come_in_order(setup: str, kind: FaultKind) -> None:
    w, _, _ = wave(0b0000_1100)
    w.V[:, 3] = 4 * np.arange(LANES, dtype=np.uint32)
    if setup == "address":
        w.vdef[2, 3] = False
    if setup != "bounds":
        w.vdef[3, 2] = False
    w.V[3, 3] = 128                                          # past the 128-byte LDS
    with pytest.raises(SimStop) as got:
        ds("DS_WRITE_B32", offset=0)(w)
    assert got.value.fault.kind is kind
    assert not w.mem.lds(w).data.any()
