"""GLOBAL stores and loads inside fused runs (`fused.global_mem`) against the bound steps they
replace and against values worked out by hand.

Each run is executed on the bound steps one by one and as one fused run from copies of the
same wave; both must raise the same fault (kind, instruction, detail) and leave the same
registers, memory and vmcnt queue. Hand rules (CDNA3 ISA §10 "Global, scratch and flat"):
the address is the 64-bit VGPR pair plus the signed 13-bit offset, or the SGPR pair plus
the 32-bit VGPR plus the offset; stores are little-endian; only lanes in EXEC store; D16_HI
stores bits 31:16 of the data; V_ADD_U32 is modulo 2^32; a load's destination is written
at the `s_waitcnt` whose vmcnt covers it, and reading or writing it before is
`sim-waitcnt-hazard` (CDNA3 ISA §4.4)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.common.fault import FaultKind
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.state.memory import AddressSpace
from rgpu_fuzz.sim.state.wave import Pending, Wave
from tests.sim.test_fuse_smem import both as fused_and_stepped

LANES = 4
ENV = Env(lanes=LANES, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))
M32 = 0xFFFF_FFFF
OFF = Opnd(OpKind.OFF, 0, 0)
DATA = [0x1122_3344, 0x5566_7788, 0x99AA_BBCC, 0xDDEE_FF00]
"""v2 per lane; v3 = v2 + 1."""


def v(i: int, n: int = 1) -> Opnd:
    return Opnd(OpKind.VGPR, i, n)


def inst(opcode: str, *ops: Opnd, **mods: int) -> Inst:
    return Inst(0, 8, opcode, "X", opcode.lower(), ops, mods=mods,
                share_key=("test-fuse-global-store", opcode, ops, tuple(sorted(mods.items()))))


def store(opcode: str, data: int = 2, n: int = 1, offset: int = 0,
          saddr: bool = False) -> Inst:
    if saddr:
        return inst(opcode, v(6), v(data, n), Opnd(OpKind.SGPR, 10, 2), offset=offset)
    return inst(opcode, v(0, 2), v(data, n), OFF, offset=offset)


def add(dst: int, a: int, b: int) -> Inst:
    return inst("V_ADD_U32", v(dst), v(a), v(b))


def wave(exec_mask: int = 0b1111, size: int = 64) -> Wave:
    """v[0:1] = buffer + 8 * lane; s[10:11] = buffer, v6 = 8 * lane; v2, v3 data."""
    w = Wave(LANES, 0, 0)
    w.set_exec(exec_mask)
    glob = AddressSpace()
    glob.map("in", bytes(16), writable=False)
    m = glob.map("out", bytes(size))
    w.mem = SimpleNamespace(glob=glob)
    addrs = np.array([m.base + 8 * ln for ln in range(LANES)], np.uint64)
    w.V[:, 0:2] = addrs.view(np.uint32).reshape(LANES, 2)
    w.V[:, 2] = DATA
    w.V[:, 3] = [x + 1 for x in DATA]
    w.V[:, 6] = [8 * ln for ln in range(LANES)]
    w.vdef[:, 0:7] = True
    w.S[10], w.S[11] = m.base & M32, m.base >> 32
    w.sdef[10] = w.sdef[11] = M32
    return w


def out(w: Wave) -> bytes:
    return bytes(w.mem.glob.mappings[1].data)


def state(w: Wave) -> tuple[Any, ...]:
    return (list(w.S), list(w.sdef), w.V.tobytes(), w.vdef.tobytes(),
            [m.data.tobytes() for m in w.mem.glob.mappings], len(w.vm_queue),
            sorted(w.pend_v), sorted(w.pend_s), w.deferred)


def both(insts: list[Inst], w: Wave) -> tuple[Wave, Any, list[int]]:
    """`test_fuse_smem.both`, comparing memory and loads in flight too (`state`)."""
    return fused_and_stepped(insts, w, state)


def le(*words: int) -> bytes:
    return b"".join(x.to_bytes(4, "little") for x in words)


def test_a_store_in_a_run_is_inline_and_little_endian() -> None:
    run = [add(4, 2, 2), store("GLOBAL_STORE_DWORD", 4), add(5, 4, 4)]
    f, raised, called = both(run, wave())
    assert raised is None and called == []      # no bound step called from the run
    sums = [(2 * x) & M32 for x in DATA]
    assert out(f)[:32] == b"".join(le(x, 0) for x in sums)
    assert len(f.vm_queue) == 1


def test_two_dwords_at_a_negative_offset_and_the_saddr_form() -> None:
    w = wave()
    w.V[:, 0:2] = (w.V[:, 0:2].copy().view(np.uint64) + np.uint64(16)).view(np.uint32)
    f, raised, called = both([store("GLOBAL_STORE_DWORDX2", 2, 2, offset=-16)], w)
    assert raised is None and called == []
    assert out(f)[:32] == b"".join(le(x, x + 1) for x in DATA)
    f, raised, called = both([store("GLOBAL_STORE_DWORD", 3, saddr=True, offset=4)], wave())
    assert raised is None and called == []
    assert out(f)[:32] == b"".join(le(0, x + 1) for x in DATA)


def test_a_short_a_byte_and_a_d16_hi_store_the_right_bytes() -> None:
    run = [store("GLOBAL_STORE_SHORT", 2), store("GLOBAL_STORE_BYTE", 3, offset=2),
           store("GLOBAL_STORE_SHORT_D16_HI", 2, offset=4)]
    f, raised, called = both(run, wave())
    assert raised is None and called == []
    want = b"".join(x.to_bytes(4, "little")[:2] + bytes([(x + 1) & 0xFF, 0]) +
                    x.to_bytes(4, "little")[2:] + bytes(2) for x in DATA)
    assert out(f)[:32] == want


def test_only_a_run_of_lanes_in_exec_stores() -> None:
    f, raised, called = both([store("GLOBAL_STORE_DWORD")], wave(0b0110))
    assert raised is None and called == []
    assert out(f)[:32] == le(0, 0, DATA[1], 0, DATA[2], 0, 0, 0)


def test_lanes_not_in_one_run_and_an_empty_exec_take_the_bound_step() -> None:
    f, raised, called = both([store("GLOBAL_STORE_DWORD")], wave(0b1001))
    assert raised is None and called == [0]
    assert out(f)[:32] == le(DATA[0], 0, 0, 0, 0, 0, DATA[3], 0)
    f, raised, called = both([store("GLOBAL_STORE_DWORD")], wave(0))
    assert raised is None and called == [] and not f.vm_queue and not any(out(f))


@pytest.mark.parametrize(("setup", "kind"), [
    ("address-undefined", FaultKind.UNINIT_READ),
    ("address-pending", FaultKind.WAITCNT_HAZARD),
    ("data-undefined", FaultKind.UNINIT_READ),
    ("data-pending", FaultKind.WAITCNT_HAZARD),
    ("saddr-undefined", FaultKind.UNINIT_READ),
    ("out-of-bounds", FaultKind.OOB_ACCESS),
    ("read-only", FaultKind.OOB_ACCESS),
])
def test_faults_come_from_the_bound_step_or_with_its_detail(setup: str, kind: FaultKind) -> None:
    w = wave()
    run = [add(5, 2, 2), store("GLOBAL_STORE_DWORD", 3, saddr=setup == "saddr-undefined")]
    if setup == "address-undefined":
        w.vdef[2, 1] = False
    if setup in ("address-pending", "data-pending"):
        w.pend_v[1 if setup == "address-pending" else 3] = Pending(vm=True, lgkm=False,
                                                                   smem=False)
    if setup == "data-undefined":
        w.vdef[3, 3] = False
    if setup == "saddr-undefined":
        w.sdef[11] = 0
    if setup == "out-of-bounds":
        w.V[3, 0] += 32                     # lane 3 at +56: bytes 56..59 of 64 still fit
        w.V[3, 0] += 8                      # +64: past the end
    if setup == "read-only":
        base = w.mem.glob.mappings[0].base
        w.V[:, 0:2] = np.array([base] * LANES, np.uint64).view(np.uint32).reshape(LANES, 2)
    _, raised, _ = both(run, w)
    assert raised is not None and raised[:2] == (kind, 1)


def test_a_lane_partly_defined_takes_the_bound_step() -> None:
    w = wave()
    w.vdef[1, 3] = False
    w.vpart = {3: {1: 0x0000_FFFF}}
    _, raised, called = both([store("GLOBAL_STORE_DWORD", 3)], w)
    assert raised is not None and raised[:2] == (FaultKind.UNINIT_READ, 0) and called == [0]


def load(opcode: str, dst: int, n: int = 1, offset: int = 0, addr: int = 0) -> Inst:
    return inst(opcode, v(dst, n), v(addr, 2), OFF, offset=offset)


VM0 = inst("S_WAITCNT", vmcnt=0)
NOP = inst("S_NOP")


def loaded() -> Wave:
    """`wave()` whose buffer holds 0x10 + k at byte k."""
    w = wave()
    w.mem.glob.mappings[1].data[:] = np.arange(0x10, 0x50, dtype=np.uint8)
    return w


def dword(k: int) -> int:
    return int.from_bytes(bytes(range(0x10 + k, 0x14 + k)), "little")


def test_a_load_in_a_run_is_read_inline_and_written_at_the_wait() -> None:
    run = [load("GLOBAL_LOAD_DWORD", 4, offset=4), NOP, VM0, add(5, 4, 4)]
    f, raised, called = both(run, loaded())
    assert raised is None and called == []
    assert f.V[:, 4].tolist() == [dword(8 * ln + 4) for ln in range(LANES)]
    assert f.V[:, 5].tolist() == [(2 * dword(8 * ln + 4)) & M32 for ln in range(LANES)]
    assert f.vdef[:, 4:6].all() and not f.pend_v and not f.vm_queue


def test_two_dwords_into_their_own_address_registers() -> None:
    f, raised, called = both([load("GLOBAL_LOAD_DWORDX2", 0, 2), VM0], loaded())
    assert raised is None and called == []
    assert f.V[:, 0:2].tolist() == [[dword(8 * ln), dword(8 * ln + 4)] for ln in range(LANES)]


def test_a_read_of_the_destination_before_the_wait_is_a_hazard() -> None:
    _, raised, called = both([load("GLOBAL_LOAD_DWORD", 4), add(5, 4, 4), VM0], loaded())
    assert raised is not None and raised[:2] == (FaultKind.WAITCNT_HAZARD, 1)
    assert called == [0, 1]         # the load parked by its bound step, the read faults


def test_a_wait_turned_into_s_nop_or_counting_one_leaves_the_load_in_flight() -> None:
    f, raised, called = both([load("GLOBAL_LOAD_DWORD", 4), NOP], loaded())
    assert raised is None and called == [0] and sorted(f.pend_v) == [4]
    run = [load("GLOBAL_LOAD_DWORD", 4), load("GLOBAL_LOAD_DWORD", 5, offset=4),
           inst("S_WAITCNT", vmcnt=1), add(6, 4, 4), add(7, 5, 5)]
    _, raised, called = both(run, loaded())
    assert raised is not None and raised[:2] == (FaultKind.WAITCNT_HAZARD, 4)
    assert called[:2] == [0, 1]


def test_exec_not_full_and_an_older_load_take_the_bound_step() -> None:
    w = loaded()
    w.set_exec(0b0110)
    f, raised, called = both([load("GLOBAL_LOAD_DWORD", 4), VM0], w)
    assert raised is None and called == [0]
    assert f.V[:, 4].tolist() == [0, dword(8), dword(16), 0]
    w = loaded()
    older = Pending(vm=True, lgkm=False, smem=False, vcol=4,
                    vdata=np.full((LANES, 1), 7, np.uint32), vdef=np.ones((LANES, 1), bool))
    w.pend_v[4] = older
    w.vm_queue.append(older)
    f, raised, called = both([load("GLOBAL_LOAD_DWORD", 4), VM0], w)
    assert raised is None and called == [0]
    assert f.V[:, 4].tolist() == [dword(8 * ln) for ln in range(LANES)]


def test_a_bail_or_a_fault_in_the_window_parks_the_load_as_the_bound_step_would() -> None:
    w = loaded()
    w.sdef[9] = 0                   # s9 undefined: the S_ADD_U32 guard hands over
    s_add = inst("S_ADD_U32", Opnd(OpKind.SGPR, 12, 1), Opnd(OpKind.SGPR, 9, 1),
                 Opnd(OpKind.SGPR, 9, 1))
    f, raised, called = both([load("GLOBAL_LOAD_DWORD", 4), s_add, VM0], w)
    assert raised is None and 0 not in called and 1 in called
    assert f.V[:, 4].tolist() == [dword(8 * ln) for ln in range(LANES)]
    w = loaded()
    run = [load("GLOBAL_LOAD_DWORD", 4), load("GLOBAL_LOAD_DWORD", 5, addr=6), VM0]
    w.V[:, 6:8] = w.V[:, 0:2]
    w.vdef[:, 7] = True
    w.V[3, 6] += 60                 # lane 3: +24 + 60 = +84, past 64 bytes
    f, raised, called = both(run, w)
    assert raised is not None and raised[:2] == (FaultKind.OOB_ACCESS, 1)
    assert called == [] and sorted(f.pend_v) == [4]
