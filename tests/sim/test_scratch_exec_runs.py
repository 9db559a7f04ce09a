"""Uniform SCRATCH and MUBUF row steps under a partial EXEC: one run of lanes (copied with
slices) and scattered lanes (copied with a mask) store and load exactly the lanes in EXEC,
and a load's definedness comes from the bytes it reads in those lanes only.

Hand rules (as `test_scratch_uniform_steps`): byte `o` of lane `l` is byte `(o // 4) * 4 *
lanes + 4 * l + o % 4` of the wave's private store (AMDGPUUsage "Private Segment"); a lane
outside EXEC neither stores nor loads (CDNA3 ISA §10: EXEC masks vector memory
instructions); a load's destination is written at the `s_waitcnt` that covers it, and a
dword (or byte) read from bytes some of whose bits were never written is undefined."""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.sim.bound.mem import bind_buffer, bind_vmem, drain
from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.launch.engine import SCRATCH_BASE, LaunchMemory
from rgpu_fuzz.sim.semantics.memops import memop
from rgpu_fuzz.sim.state.memory import Private
from rgpu_fuzz.sim.state.wave import Wave, lanes_of, span

LANES = 8
ENV = Env(lanes=LANES, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))
OFF = Opnd(OpKind.OFF, 0, 0)
M32 = 0xFFFF_FFFF
VALUES = [0x1000_0000 + 0x0101_0101 * lane for lane in range(LANES)]


def scratch(opcode: str, reg: int, offset: int, n: int = 1):  # type: ignore[no-untyped-def]
    """`scratch_store_* off, v<reg>, s33 offset:<offset>` / `scratch_load_* v<reg>, off, s33
    offset:<offset>`, s33 = 0."""
    data = Opnd(OpKind.VGPR, reg, n)
    base = Opnd(OpKind.SGPR, 33, 1)
    ops = (OFF, data, base) if "STORE" in opcode else (data, OFF, base)
    inst = Inst(0, 8, opcode, "SCRATCH", opcode.lower(), ops, mods={"offset": offset})
    return bind_vmem(inst, memop(opcode), ENV, None)  # type: ignore[arg-type]


def wave(exec_mask: int) -> Wave:
    w = Wave(LANES, 0, 0)
    w.set_exec(exec_mask)
    w.private = Private(32, LANES)
    w.S[33], w.sdef[33] = 0, M32
    w.V[:, 1] = VALUES
    w.V[:, 2] = [v ^ M32 for v in VALUES]
    w.vdef[:, 1:3] = True
    w.V[:, 7:9] = 0x77
    w.vdef[:, 7:9] = True
    return w


def dword(w: Wave, o: int) -> list[int]:
    """Private dword `o // 4` of every lane (o a multiple of 4)."""
    return w.private.data[o * LANES:(o + 4) * LANES].view("<u4").tolist()


def shadow(w: Wave, o: int) -> list[int]:
    return w.private.defined[o * LANES:(o + 4) * LANES].view("<u4").tolist()


@pytest.mark.parametrize("mask", [0b0011_1100, 0b1010_0101, 0b1000_0000, 0b0000_0001])
def test_a_pair_store_and_reload_touch_exactly_the_lanes_in_exec(mask: int) -> None:
    w = wave(mask)
    scratch("SCRATCH_STORE_DWORDX2", 1, 8, n=2)(w)   # offsets 8 and 12: dwords 2 and 3
    on = [bool(mask >> lane & 1) for lane in range(LANES)]
    assert dword(w, 8) == [v if a else 0 for v, a in zip(VALUES, on, strict=True)]
    assert dword(w, 12) == [v ^ M32 if a else 0 for v, a in zip(VALUES, on, strict=True)]
    assert shadow(w, 8) == [M32 if a else 0 for a in on]
    scratch("SCRATCH_LOAD_DWORDX2", 7, 8, n=2)(w)
    assert w.V[:, 7].tolist() == [0x77] * LANES                 # not before the wait
    drain(w)
    assert w.V[:, 7].tolist() == [v if a else 0x77 for v, a in zip(VALUES, on, strict=True)]
    assert w.V[:, 8].tolist() == [v ^ M32 if a else 0x77
                                  for v, a in zip(VALUES, on, strict=True)]
    assert w.vdef[:, 7:9].all()          # stored lanes defined, the others kept theirs


def test_a_load_defined_in_exec_is_defined_whatever_the_other_lanes_hold() -> None:
    w = wave(0b0000_1110)
    scratch("SCRATCH_STORE_DWORD", 1, 4)(w)          # lanes 1-3 only
    scratch("SCRATCH_STORE_BYTE", 1, 16)(w)
    w.vdef[:, 7:9] = False
    scratch("SCRATCH_LOAD_DWORD", 7, 4)(w)
    scratch("SCRATCH_LOAD_UBYTE", 8, 16)(w)
    drain(w)
    assert w.vdef[:, 7].tolist() == [False, True, True, True, False, False, False, False]
    assert w.vdef[:, 8].tolist() == w.vdef[:, 7].tolist()
    assert w.V[1:4, 7].tolist() == VALUES[1:4]
    assert w.V[1:4, 8].tolist() == [v & 0xFF for v in VALUES[1:4]]
    w.set_exec(0b0001_1110)                          # lane 4's dword was never stored
    scratch("SCRATCH_LOAD_DWORD", 9, 4)(w)
    drain(w)
    assert w.vdef[:, 9].tolist() == [False, True, True, True, False, False, False, False]


@pytest.mark.parametrize("mask", [0b0111_1000, 0b0101_1010])
def test_an_undefined_lane_in_exec_stores_undefined_bytes(mask: int) -> None:
    w = wave(mask)
    w.vdef[4, 1] = False
    scratch("SCRATCH_STORE_DWORD", 1, 0)(w)
    scratch("SCRATCH_STORE_BYTE", 1, 5)(w)
    on = [bool(mask >> lane & 1) for lane in range(LANES)]
    assert shadow(w, 0) == [M32 if a and lane != 4 else 0 for lane, a in enumerate(on)]
    assert [int(w.private.defined[4 * LANES + 4 * lane + 1]) for lane in range(LANES)] == \
        [0xFF if a and lane != 4 else 0 for lane, a in enumerate(on)]
    scratch("SCRATCH_LOAD_DWORD", 7, 0)(w)
    scratch("SCRATCH_LOAD_UBYTE", 8, 5)(w)
    drain(w)
    assert w.vdef[:, 7].tolist() == [lane != 4 if a else True for lane, a in enumerate(on)]
    assert w.vdef[:, 8].tolist() == w.vdef[:, 7].tolist()


def test_a_buffer_reload_with_lanes_outside_exec_undefined_takes_the_row() -> None:
    """MUBUF `buffer_load_dword v3, off, s[0:3], s4 offset:0` with soffset 32 bytes past the
    wave's scratch offset: lane `l`'s private dword 32 / 8 / 4 = 1 (8 lanes, a whole
    swizzled row of 32 bytes per private dword)."""
    w = wave(0b0000_0110)
    w.mem = LaunchMemory(LANES, 32)
    w.S[0], w.S[1] = SCRATCH_BASE & M32, SCRATCH_BASE >> 32
    w.S[4] = w.mem.wave_scratch_offset(w) + 32
    for i in (0, 1, 2, 3, 4):
        w.sdef[i] = M32
    ops = (Opnd(OpKind.VGPR, 1, 1), OFF, Opnd(OpKind.SGPR, 0, 4), Opnd(OpKind.SGPR, 4, 1))
    store = Inst(0, 8, "BUFFER_STORE_DWORD", "MUBUF", "buffer_store_dword", ops,
                 mods={"offset": 0})
    bind_buffer(store, memop("BUFFER_STORE_DWORD"), ENV, None)(w)  # type: ignore[arg-type]
    assert dword(w, 4) == [0, VALUES[1], VALUES[2], 0, 0, 0, 0, 0]
    w.vdef[:, 3] = False
    w.vpart = {3: {2: 0xFF, 5: 0xF0}}
    load = Inst(0, 8, "BUFFER_LOAD_DWORD", "MUBUF", "buffer_load_dword",
                (Opnd(OpKind.VGPR, 3, 1), *ops[1:]), mods={"offset": 0})
    bind_buffer(load, memop("BUFFER_LOAD_DWORD"), ENV, None)(w)  # type: ignore[arg-type]
    assert w.vpart == {3: {2: 0xFF, 5: 0xF0}}       # settled at completion
    drain(w)
    assert w.V[1:3, 3].tolist() == VALUES[1:3]
    assert w.vdef[:, 3].tolist() == [False, True, True, False, False, False, False, False]
    assert w.vpart == {3: {5: 0xF0}}


def test_span_reads_one_run_of_lanes() -> None:
    assert span(lanes_of(0b0011_1100, LANES)) == (2, 6)
    assert span(lanes_of(0b1111_1111, LANES)) == (0, 8)
    assert span(lanes_of(0, LANES)) == (0, 0)
    assert span(lanes_of(0b0100_0100, LANES)) == (-1, -1)
    mutable = np.zeros(LANES, bool)
    assert span(mutable) == (0, 0)
    mutable[3] = True                       # a writable vector is never answered from cache
    assert span(mutable) == (3, 4)


def test_d16_loads_write_one_half_and_keep_the_other() -> None:
    """CDNA3 ISA §10 (D16 loads): `_D16` writes bits 15:0, `_D16_HI` bits 31:16, the other
    half of the VGPR unchanged; UBYTE zero- and SBYTE sign-extends the byte to 16 bits."""
    w = wave(0b0000_0110)
    w.V[:, 3] = [0x0000_8180 + 0x0101_0000 * lane for lane in range(LANES)]
    w.vdef[:, 3] = True
    scratch("SCRATCH_STORE_DWORD", 3, 0)(w)          # lanes 1, 2: bytes 80 81 lane lane
    w.V[:, 7:11] = 0xAAAA_BBBB
    w.vdef[:, 7:11] = True
    scratch("SCRATCH_LOAD_SBYTE_D16", 7, 0)(w)       # byte 0x80 -> 0xFF80 in bits 15:0
    scratch("SCRATCH_LOAD_UBYTE_D16_HI", 8, 0)(w)    # byte 0x80 -> 0x0080 in bits 31:16
    scratch("SCRATCH_LOAD_SHORT_D16_HI", 9, 0)(w)    # short 0x8180 in bits 31:16
    scratch("SCRATCH_LOAD_SHORT_D16", 10, 2)(w)      # short (lane << 8 | lane) in 15:0
    scratch("SCRATCH_LOAD_UBYTE_D16_HI", 10, 1)(w)   # the other half of v10, in flight too
    assert w.V[:, 7].tolist() == [0xAAAA_BBBB] * LANES
    drain(w)
    kept = [0, 3, 4, 5, 6, 7]
    assert w.V[1:3, 7].tolist() == [0xAAAA_FF80] * 2
    assert w.V[1:3, 8].tolist() == [0x0080_BBBB] * 2
    assert w.V[1:3, 9].tolist() == [0x8180_BBBB] * 2
    assert w.V[1:3, 10].tolist() == [0x0081_0101, 0x0081_0202]
    assert all(w.V[ln, c] == 0xAAAA_BBBB for ln in kept for c in range(7, 11))
    assert w.vdef[:, 7:11].all() and not w.vpart


def test_a_d16_load_of_undefined_bytes_leaves_its_half_undefined() -> None:
    w = wave(0b0000_0011)
    scratch("SCRATCH_STORE_BYTE", 1, 0)(w)           # byte 0 of lanes 0, 1; byte 1 never
    w.V[:, 7:9] = 0x1234_5678
    w.vdef[:, 7:9] = True
    scratch("SCRATCH_LOAD_UBYTE_D16", 7, 0)(w)
    scratch("SCRATCH_LOAD_SHORT_D16_HI", 8, 0)(w)    # bytes 0 and 1: not all defined
    drain(w)
    assert w.V[0:2, 7].tolist() == [0x1234_0000 | (VALUES[ln] & 0xFF) for ln in (0, 1)]
    assert w.vdef[0:2, 7].all()
    assert w.V[0:2, 8].tolist() == [(VALUES[ln] & 0xFF) << 16 | 0x5678 for ln in (0, 1)]
    assert not w.vdef[0:2, 8].any() and w.vdef[2:, 8].all()
    assert w.vpart == {8: {0: 0x0000_FFFF, 1: 0x0000_FFFF}}


def test_three_d16_loads_in_flight_to_one_register_complete_in_order() -> None:
    """lo, hi, lo D16 loads to v7 before one wait: vector memory returns in order (CDNA3 ISA
    §4.4), so bits 15:0 hold the second lo load's short and 31:16 the hi load's. (Before,
    completing the first compared `Pending` records field by field and raised.)"""
    w = wave(0b0000_0011)
    w.V[:, 3] = [0x2222_1111, 0x4444_3333] + [0] * (LANES - 2)
    w.vdef[:, 3] = True
    scratch("SCRATCH_STORE_DWORD", 3, 0)(w)
    w.V[:, 7] = 0xAAAA_BBBB
    scratch("SCRATCH_LOAD_SHORT_D16", 7, 0)(w)       # 0x1111 / 0x3333
    scratch("SCRATCH_LOAD_SHORT_D16_HI", 7, 2)(w)    # 0x2222 / 0x4444 in bits 31:16
    scratch("SCRATCH_LOAD_UBYTE_D16", 7, 3)(w)       # 0x22 / 0x44 in bits 15:0, last
    drain(w)
    assert w.V[0:2, 7].tolist() == [0x2222_0022, 0x4444_0044]
    assert w.vdef[0:2, 7].all() and not w.vpart
