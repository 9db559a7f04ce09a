"""Partly defined lanes (`Wave.vpart`) through the uniform SCRATCH row steps
(`bound.scratch`): a reload settles the destination's entries at issue (the lanes in EXEC
lose theirs; those whose dword is partly defined get its defined bits), and a register
whose entry has no lane left stores as one without an entry.

Hand rules (as `test_scratch_uniform_steps`): byte `o` of lane `l` is byte `(o // 4) * 4 *
lanes + 4 * l + o % 4` of the wave's private store (AMDGPUUsage "Private Segment"); the
shadow holds the defined bits of every byte; a lane outside EXEC neither stores nor loads
(CDNA3 ISA §10); a loaded dword's defined bits are its bytes' shadow bits."""

from __future__ import annotations

import numpy as np

from rgpu_fuzz.sim.bound.mem import bind_vmem, drain
from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics.memops import memop
from rgpu_fuzz.sim.state.halves import defined_bits
from rgpu_fuzz.sim.state.memory import Private
from rgpu_fuzz.sim.state.wave import Wave

LANES = 8
ENV = Env(lanes=LANES, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))
OFF = Opnd(OpKind.OFF, 0, 0)
M32 = 0xFFFF_FFFF


def scratch(opcode: str, reg: int, offset: int):  # type: ignore[no-untyped-def]
    """`scratch_store_dword off, v<reg>, off offset:<offset>` / `scratch_load_dword v<reg>,
    off, off offset:<offset>` (no SGPR base: O0's spill form)."""
    data = Opnd(OpKind.VGPR, reg, 1)
    ops = (OFF, data, OFF) if "STORE" in opcode else (data, OFF, OFF)
    inst = Inst(0, 8, opcode, "SCRATCH", opcode.lower(), ops, mods={"offset": offset})
    return bind_vmem(inst, memop(opcode), ENV, None)  # type: ignore[arg-type]


def wave(exec_mask: int) -> Wave:
    w = Wave(LANES, 0, 0)
    w.set_exec(exec_mask)
    w.private = Private(16, LANES)
    w.V[:, 1] = [0x1111_1111 * (ln + 1) for ln in range(LANES)]
    w.vdef[:, 1] = True
    return w


def set_shadow(w: Wave, o: int, words: list[int]) -> None:
    """The shadow dword at private offset `o` of every lane."""
    w.private.defined[o * LANES:(o + 4) * LANES] = \
        np.frombuffer(b"".join(x.to_bytes(4, "little") for x in words), np.uint8)


def shadow(w: Wave, o: int) -> list[int]:
    return w.private.defined[o * LANES:(o + 4) * LANES].view("<u4").tolist()


def test_a_full_exec_reload_replaces_every_entry_with_the_partly_defined_dwords() -> None:
    # lanes 1 and 6 read 0x0000_FFFF and 0xFF00_0000 (partly defined), lane 3 nothing,
    # the rest everything: v5's old entries (lanes 0, 1, 7) go, the two new ones come
    w = wave(0xFF)
    words = [M32] * LANES
    words[1], words[3], words[6] = 0x0000_FFFF, 0, 0xFF00_0000
    set_shadow(w, 4, words)
    w.vdef[:, 5] = True
    w.vdef[[0, 1, 7], 5] = False
    w.vpart[5] = {0: 0xF, 1: 0xF0, 7: 0xF00}
    scratch("SCRATCH_LOAD_DWORD", 5, 4)(w)
    assert w.vpart[5] == {1: 0x0000_FFFF, 6: 0xFF00_0000}
    drain(w)
    assert defined_bits(w, 5).tolist() == words


def test_a_reload_defined_in_exec_drops_only_the_entries_of_lanes_in_exec() -> None:
    # EXEC lanes 0-3 read defined dwords; lane 5 reads a partly defined one but is not in
    # EXEC: v5's entries of lanes 2 (in EXEC) and 5 (not) -> only lane 5's stays
    w = wave(0x0F)
    words = [M32] * LANES
    words[5] = 0xFF
    set_shadow(w, 8, words)
    w.vdef[:, 5] = True
    w.vdef[[2, 5], 5] = False
    w.vpart[5] = {2: 0xFFFF, 5: 0xF}
    scratch("SCRATCH_LOAD_DWORD", 5, 8)(w)
    assert w.vpart[5] == {5: 0xF}
    drain(w)
    assert defined_bits(w, 5).tolist() == [M32] * 5 + [0xF, M32, M32]


def test_a_register_whose_entry_emptied_stores_its_lanes_all_or_nothing() -> None:
    # a full-EXEC reload of defined dwords empties v5's entry; v5 lane 2 then made wholly
    # undefined; stored under EXEC 0b0000_0110: lane 1 defined (all ones), lane 2
    # undefined (0), lanes outside EXEC keep the shadow they had (0x00FF_00FF)
    w = wave(0xFF)
    set_shadow(w, 0, [M32] * LANES)
    w.vdef[:, 5] = True
    w.vdef[3, 5] = False
    w.vpart[5] = {3: 0xFF}
    scratch("SCRATCH_LOAD_DWORD", 5, 0)(w)
    drain(w)
    assert not w.vpart.get(5)
    w.vdef[2, 5] = False
    set_shadow(w, 12, [0x00FF_00FF] * LANES)
    w.set_exec(0b0000_0110)
    scratch("SCRATCH_STORE_DWORD", 5, 12)(w)
    assert shadow(w, 12) == [0x00FF_00FF, M32, 0] + [0x00FF_00FF] * 5
