"""MUBUF scratch accesses with one offset for every lane (gfx90a O0 spills: `off`, the
private segment buffer's V# and an SGPR soffset) take `bound.scratch`'s row copies when the
wave's part of the segment lies a whole number of swizzled rows away. Expected values by
hand from the swizzle (AMDGPUUsage "Private Segment Buffer": 4-byte elements, index stride
the wave size; soffset added unswizzled): with soffset - the wave's scratch offset = 32
bytes on 4 lanes, element (32 + 4 * 4 * (offset // 4) + 4 * lane) / 4 is lane `lane`'s
private dword 2 + offset // 4. A MUBUF dword load keeps definedness per bit, as SCRATCH's
does, and settles `vpart` when it completes; a sub-dword load's lane is defined when every
byte it reads is wholly defined."""

from __future__ import annotations

from rgpu_fuzz.sim.bound.mem import bind_buffer, drain
from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.launch.engine import SCRATCH_BASE, LaunchMemory
from rgpu_fuzz.sim.semantics.memops import memop
from rgpu_fuzz.sim.state.memory import Private
from rgpu_fuzz.sim.state.wave import Wave

LANES = 4
ENV = Env(lanes=LANES, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))
M32 = 0xFFFF_FFFF
OFF = Opnd(OpKind.OFF, 0, 0)


def buffer(opcode: str, reg: int, offset: int):  # type: ignore[no-untyped-def]
    """`<opcode> v<reg>, off, s[0:3], s4 offset:<offset>`."""
    ops = (Opnd(OpKind.VGPR, reg, 1), OFF, Opnd(OpKind.SGPR, 0, 4), Opnd(OpKind.SGPR, 4, 1))
    inst = Inst(0, 8, opcode, "MUBUF", opcode.lower(), ops, mods={"offset": offset})
    return bind_buffer(inst, memop(opcode), ENV, None)  # type: ignore[arg-type]


def wave(exec_mask: int = 0b1111) -> Wave:
    w = Wave(LANES, 0, 1)                       # wave 1: its scratch 1024 bytes in
    w.set_exec(exec_mask)
    w.mem = LaunchMemory(LANES, 32)
    w.private = Private(32, LANES)
    w.S[0], w.S[1] = SCRATCH_BASE & M32, SCRATCH_BASE >> 32
    w.S[4] = w.mem.wave_scratch_offset(w) + 32
    for i in (0, 1, 2, 3, 4):
        w.sdef[i] = M32
    w.V[:, 1] = [0x1111_1111, 0x2222_2222, 0x3333_3333, 0x4444_4444]
    w.vdef[:, 1] = True
    return w


def test_a_dword_spill_lands_in_each_lanes_private_dword_and_reloads() -> None:
    w = wave(exec_mask=0b1011)
    buffer("BUFFER_STORE_DWORD", 1, 4)(w)       # private offset 8 + 4 = 12: dword 3
    row = w.private.data[3 * 4 * LANES:4 * 4 * LANES].view("<u4").tolist()
    assert row == [0x1111_1111, 0x2222_2222, 0, 0x4444_4444]
    w.set_exec(0b1111)
    buffer("BUFFER_STORE_DWORD", 1, 4)(w)       # now every lane's slot holds a value
    w.set_exec(0b0110)
    w.V[:, 2] = 9
    w.vdef[:, 2] = [True, False, True, False]
    w.vpart = {2: {1: 0xFF, 3: 0xF}}
    buffer("BUFFER_LOAD_DWORD", 2, 4)(w)
    assert w.vpart == {2: {1: 0xFF, 3: 0xF}}       # settled at completion, not at issue
    drain(w)
    assert w.V[:, 2].tolist() == [9, 0x2222_2222, 0x3333_3333, 9]
    assert w.vdef[:, 2].tolist() == [True, True, True, False]
    assert w.vpart == {2: {3: 0xF}}                 # lanes 0 and 3 were not loaded


def test_a_dword_load_keeps_the_bits_and_a_byte_load_needs_its_byte() -> None:
    w = wave()
    buffer("BUFFER_STORE_DWORD", 1, 0)(w)           # private offset 8: dword 2
    w.private.defined[2 * 4 * LANES + 4 * 1 + 0] = 0x0F   # lane 1, byte 0: 4 bits defined
    buffer("BUFFER_LOAD_DWORD", 3, 0)(w)
    buffer("BUFFER_LOAD_UBYTE", 5, 1)(w)            # byte 1 of the same dword: defined
    buffer("BUFFER_LOAD_UBYTE", 6, 0)(w)            # byte 0: lane 1 undefined
    drain(w)
    assert w.vdef[:, 3].tolist() == [True, False, True, True]
    assert w.vpart == {3: {1: 0xFFFF_FF0F}}       # byte 0's 4 defined bits kept
    assert w.V[:, 5].tolist() == [0x11, 0x22, 0x33, 0x44]
    assert w.vdef[:, 5].all() and w.vdef[:, 6].tolist() == [True, False, True, True]
