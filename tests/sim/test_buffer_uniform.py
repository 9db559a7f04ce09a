"""MUBUF's uniform form (gfx90a O0 spills: `off`, the private segment buffer's V# in
s[0:3], soffset an SGPR or a constant) on its specialised bound step and inside fused runs,
against values worked out by hand and against the general step.

The instructions are llvm-mc-22's encodings (`llvm-mc-22 -arch=amdgcn -mcpu=gfx90a
-show-encoding`) decoded by the simulator. Hand rules: the buffer address of lane `l` is
the V# base + soffset (unswizzled) + the swizzled offset, with 4-byte elements and an
index stride of the wave size (AMDGPUUsage "Private Segment Buffer"; CDNA3 ISA §9.1.5
"Swizzled Buffer Addressing"): element `(offset // 4) * lanes + l`, byte `offset % 4`.
Here the V# base is the scratch backing's start, the wave is wave 1 (its part of the
backing 1024 bytes in) and soffset = 1024 + 32, so lane `l`'s element `(32 + 16 * (offset
// 4) + 4 * l) / 4` is its private dword `2 + offset // 4`. A MUBUF load keeps
definedness per bit, as SCRATCH's does (a spill and its reload copy bits; none is
observed), and settles `vpart` when it completes; reading a register whose load is in
flight, or storing it, is `sim-waitcnt-hazard` (CDNA3 ISA §4.4).

The general step is reached through the `offen` twin of each instruction with a VGPR
offset of 0 in every lane: the same address, computed lane by lane, read through
`Private.read`. The row paths are kept off it by `no_general` (a call of
`Private._index` fails the test)."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from rgpu_fuzz.sim.bound.mem import bind_buffer, drain
from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.bound.program import bind_program
from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.fused.code import RUN_BASE, RunStop
from rgpu_fuzz.sim.fused.runs import compiled
from rgpu_fuzz.sim.isa.decode import decode
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd, from_decoded
from rgpu_fuzz.sim.launch.engine import SCRATCH_BASE, LaunchMemory
from rgpu_fuzz.sim.semantics.memops import memop
from rgpu_fuzz.sim.state.memory import Private
from rgpu_fuzz.sim.state.wave import Pending, Wave

LANES = 4
ENV = Env(lanes=LANES, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))
M32 = 0xFFFF_FFFF
SWIZZLED = 1 << 31

ENC = {
    "store v3 +4": "04 00 70 e0 00 03 00 04",      # buffer_store_dword v3, off, s[0:3], s4 offset:4
    "store v3 +4 offen": "04 10 70 e0 09 03 00 04",
    "load v5 +4": "04 00 50 e0 00 05 00 04",       # buffer_load_dword v5, off, s[0:3], s4 offset:4
    "load v5 +4 offen": "04 10 50 e0 09 05 00 04",
    "load v6 +8": "08 00 50 e0 00 06 00 04",
    "load v6 +8 offen": "08 10 50 e0 09 06 00 04",
    "load v6 +24": "18 00 50 e0 00 06 00 04",
    "load v6 +24 offen": "18 10 50 e0 09 06 00 04",
    "store v6 +0": "00 00 70 e0 00 06 00 04",
    "store v6 +0 offen": "00 10 70 e0 09 06 00 04",
    "load v5 +4 soff 0": "04 00 50 e0 00 05 00 80",  # ..., s[0:3], 0 offset:4
    "store v3 +5 byte": "05 00 60 e0 00 03 00 04",
    "load v6 +5 sbyte": "05 00 44 e0 00 06 00 04",
    "load v5 +5 ubyte": "05 00 40 e0 00 05 00 04",
    "load v5 +4 short d16 hi": "04 00 94 e0 00 05 00 04",  # buffer_load_short_d16_hi
    "load v5 +5 ubyte d16": "05 00 80 e0 00 05 00 04",     # buffer_load_ubyte_d16
    "load v[6:7] +8": "08 00 54 e0 00 06 00 04",   # buffer_load_dwordx2
    "load v[6:7] +8 offen": "08 10 54 e0 09 06 00 04",
    "store v[2:3] +8": "08 00 74 e0 00 02 00 04",  # buffer_store_dwordx2
    "store v[2:3] +8 offen": "08 10 74 e0 09 02 00 04",
}


def mubuf(name: str) -> Inst:
    got = from_decoded(decode(bytes.fromhex(ENC[name]), "gfx90a")[0])
    assert got.encoding == "MUBUF" and got.share_key
    return got


def step(name: str) -> Any:
    inst = mubuf(name)
    return bind_buffer(inst, memop(inst.opcode), ENV, None)  # type: ignore[arg-type]


def wave(exec_mask: int = 0b1111) -> Wave:
    w = Wave(LANES, 0, 1)
    w.set_exec(exec_mask)
    w.mem = LaunchMemory(LANES, 32)
    w.private = Private(32, LANES)
    # V# dword 1: base bits 32-47, then stride 0 and SWIZZLE_EN (bit 31), not address bits
    w.S[0], w.S[1], w.S[2], w.S[3] = SCRATCH_BASE & M32, SWIZZLED | SCRATCH_BASE >> 32, M32, \
        0x27000
    w.S[4] = w.mem.wave_scratch_offset(w) + 32
    for i in range(5):
        w.sdef[i] = M32
    w.V[:, 3] = [0x1111_1111, 0x2222_2222, 0x3333_3333, 0x4444_4444]
    w.vdef[:, 3] = True
    w.V[:, 2] = [0xA0, 0xA1, 0xA2, 0xA3]
    w.vdef[:, 2] = True
    w.vdef[:, 9] = True                         # the offen twins' offset: 0 in every lane
    return w


@pytest.fixture
def no_general(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: Any) -> Any:
        raise AssertionError("the general step read private memory")
    monkeypatch.setattr(Private, "_index", fail)


def state(w: Wave) -> tuple[Any, ...]:
    drain(w)
    return (list(w.S), list(w.sdef), w.V.tobytes(), w.vdef.tobytes(), copy.deepcopy(w.vpart),
            w.private.data.tobytes(), w.private.defined.tobytes())


def run(names: list[str], w: Wave) -> tuple[FaultKind, str] | None:
    try:
        for name in names:
            step(name)(w)
    except SimStop as stop:
        return stop.fault.kind, stop.fault.detail
    return None


def general_twin(names: list[str], w: Wave) -> tuple[Any, ...]:
    """What the general step leaves after `names` (their `offen` twins where they have
    one), and what it raised."""
    g = copy.deepcopy(w)
    g.scratch_views = None
    raised = run([n + " offen" if n + " offen" in ENC else n for n in names], g)
    return raised, state(g)


def test_a_spill_lands_in_each_lanes_swizzled_dword_and_reloads(no_general: None) -> None:
    w = wave(0b1011)
    step("store v3 +4")(w)                      # private offset 8 + 4 = 12: dword 3
    row = w.private.data[3 * 4 * LANES:4 * 4 * LANES].view("<u4").tolist()
    assert row == [0x1111_1111, 0x2222_2222, 0, 0x4444_4444]
    assert w.private.defined[3 * 4 * LANES:4 * 4 * LANES].tolist() == \
        [0xFF] * 8 + [0] * 4 + [0xFF] * 4
    w.set_exec(0b0111)
    w.vdef[:, 5] = False
    w.vpart = {5: {0: 0xF0, 3: 0xFF}}
    step("load v5 +4")(w)
    assert w.pend_v and w.vpart == {5: {0: 0xF0, 3: 0xFF}}   # settled at completion
    drain(w)
    assert w.V[:3, 5].tolist() == [0x1111_1111, 0x2222_2222, 0]
    assert w.vdef[:, 5].tolist() == [True, True, False, False]  # lane 2's slot: never stored
    assert w.vpart == {5: {3: 0xFF}}            # lane 3 was not loaded


def test_partly_defined_bits_come_back_as_they_went(no_general: None) -> None:
    """Lane 1 of v3 holds a lane mask defined in its low 16 bits, lane 3 only in bits 0-3:
    both reload with exactly those bits defined (`vpart` entries). Until the MUBUF loads
    kept bits, lane 3 came back wholly undefined (a byte with an undefined bit was
    undefined): a gfx90a O0 spill of a 21-lane wave's EXEC mask (bits 0-20) lost bits 16-20,
    and the `s_andn2_b64 exec, exec, s[4:5]` after its reload was a false
    `sim-uninit-read` (docs/findings/25a4e21b33.md)."""
    w = wave()
    w.vdef[1, 3] = w.vdef[3, 3] = False
    w.vpart = {3: {1: 0x0000_FFFF, 3: 0x0000_000F}}
    step("store v3 +4")(w)
    assert w.private.defined[3 * 4 * LANES:4 * 4 * LANES].tolist() == \
        [0xFF] * 4 + [0xFF, 0xFF, 0, 0] + [0xFF] * 4 + [0x0F, 0, 0, 0]
    step("load v5 +4")(w)
    drain(w)
    assert w.V[:, 5].tolist() == [0x1111_1111, 0x2222_2222, 0x3333_3333, 0x4444_4444]
    assert w.vdef[:, 5].tolist() == [True, False, True, False]
    assert w.vpart[5] == {1: 0x0000_FFFF, 3: 0x0000_000F}


@pytest.mark.parametrize("exec_mask", [0b1111, 0b0110, 0b1001, 0])
@pytest.mark.parametrize("part", [False, True])
def test_the_row_paths_leave_what_the_general_step_leaves(exec_mask: int, part: bool) -> None:
    names = ["store v3 +4", "store v[2:3] +8", "load v5 +4", "load v[6:7] +8"]
    w = wave(0b1101)
    w.vdef[1, 2] = False                        # lane 1 of v2 undefined
    if part:
        w.vdef[2, 3] = False
        w.vpart = {3: {2: 0x00FF_FF00}, 6: {0: 0xF}}
    w.set_exec(exec_mask)
    want = general_twin(names, w)
    assert (run(names, w), state(w)) == want


def test_bytes_are_extended_as_the_general_step_extends_them(no_general: None) -> None:
    w = wave()
    w.V[:, 3] = [0x01, 0x7F, 0x80, 0xFF]
    step("store v3 +5 byte")(w)                 # private offset 13: dword 3, byte 1
    assert w.private.data[3 * 4 * LANES + 1:4 * 4 * LANES:4].tolist() == [0x01, 0x7F, 0x80,
                                                                          0xFF]
    step("load v6 +5 sbyte")(w)
    step("load v5 +5 ubyte")(w)
    drain(w)
    assert w.V[:, 6].tolist() == [0x01, 0x7F, 0xFFFF_FF80, M32]
    assert w.V[:, 5].tolist() == [0x01, 0x7F, 0x80, 0xFF]


MSG_UNDEF = "buffer_load_dword: resource or offset undefined"


@pytest.mark.parametrize(("setup", "kind", "detail"), [
    ("rsrc-undefined", FaultKind.UNINIT_READ, MSG_UNDEF),
    ("soffset-undefined", FaultKind.UNINIT_READ, MSG_UNDEF),
    ("rsrc-pending", FaultKind.WAITCNT_HAZARD, "s[0:1] read before the s_waitcnt"),
    ("soffset-pending", FaultKind.WAITCNT_HAZARD, "s4 read before the s_waitcnt"),
    ("rsrc-pending+soffset-undefined", FaultKind.UNINIT_READ, MSG_UNDEF),
    ("base-outside", FaultKind.OOB_ACCESS, "is outside the private segment"),
    ("base-outside+soffset-pending", FaultKind.OOB_ACCESS, "is outside the private segment"),
    ("past-the-segment", FaultKind.OOB_ACCESS, "private access at offset 0x20"),
    ("store-data-pending", FaultKind.WAITCNT_HAZARD, "v6 stored before the s_waitcnt"),
])
def test_faults_are_the_general_steps_in_its_order(setup: str, kind: FaultKind,
                                                   detail: str) -> None:
    names = ["load v6 +8", "store v6 +0"] if setup == "store-data-pending" else \
        ["load v6 +24" if setup == "past-the-segment" else "load v5 +4"]
    w = wave()
    p = Pending(vm=False, lgkm=True, smem=True, sregs=(0,), svalues=(0,))
    if "rsrc-undefined" in setup:
        w.sdef[1] = 0xFFFF_FF00
    if "soffset-undefined" in setup:
        w.sdef[4] = 0
    if "rsrc-pending" in setup:
        w.pend_s[0] = p
    if "soffset-pending" in setup:
        w.pend_s[4] = p
    if "base-outside" in setup:               # 4 KiB below, soffset 4 KiB further
        w.S[0], w.S[1] = (SCRATCH_BASE - 0x1000) & M32, SWIZZLED | (SCRATCH_BASE - 0x1000) >> 32
        w.S[4] += 0x1000
    want = general_twin(names, w)
    got = run(names, w)
    assert got is not None and got[0] == kind and detail in got[1]
    assert (got, state(w)) == want


def test_an_empty_exec_accesses_nothing_and_checks_nothing() -> None:
    names = ["store v3 +4", "load v5 +4"]
    w = wave(0)
    w.sdef[0] = 0
    want = general_twin(names, w)
    assert (run(names, w), state(w)) == want == (None, want[1])
    assert not w.private.defined.any()
    f, raised, called = both([*names, WAIT], wave(0))
    assert raised is None and called == [] and not f.private.defined.any()


def test_a_wave_part_not_whole_rows_away_takes_the_general_step() -> None:
    """soffset 4 bytes further: element (36 + 16 * 1 + 4 * l) / 4 = 13 + l, i.e. lane l's
    private dword 3 for l < 3 and lane 0's dword 4 for l = 3 (the swizzle does not map the
    access to one private offset, so no row copy can do it). One byte further (37 + 16 +
    4 * l) the offset / lanes is a whole dword (8 + 4 = 12), and still no row copy."""
    w = wave()
    w.S[4] += 4
    w.private.defined[:] = 0xFF
    w.private.data[3 * 16:5 * 16] = range(32)
    step("load v5 +4")(w)
    drain(w)
    assert w.V[:, 5].tolist() == [0x0706_0504, 0x0B0A_0908, 0x0F0E_0D0C, 0x1312_1110]
    w.S[4] -= 3
    want = general_twin(["load v5 +4"], w)
    assert (run(["load v5 +4"], w), state(w)) == want


# ------------------------------------------------------------------ fused runs
def inst(opcode: str, *ops: Opnd, **mods: int) -> Inst:
    return Inst(0, 8, opcode, "X", opcode.lower(), ops, mods=mods,
                share_key=("test-buffer-uniform", opcode, ops, tuple(sorted(mods.items()))))


WAIT = inst("S_WAITCNT", vmcnt=0)
NOP = inst("S_NOP")


def v(i: int) -> Opnd:
    return Opnd(OpKind.VGPR, i, 1)


def add(dst: int, a: int, b: int) -> Inst:
    return inst("V_ADD_U32", v(dst), v(a), v(b))


def both(names: list[str | Inst], w: Wave) -> tuple[Wave, Any, list[int]]:
    """Run the instructions as bound steps and as one fused run from copies of `w`: both
    raise the same fault at the same instruction and leave the same state; returns the
    fused wave, the fault and the instructions whose bound step the run called."""
    insts = [mubuf(n) if isinstance(n, str) else n for n in names]
    w.scratch_views = None
    stepped, fused = copy.deepcopy(w), copy.deepcopy(w)
    raised_steps = raised_fused = None
    prog = bind_program(insts, ENV, None)
    for k in range(len(insts)):
        try:
            prog.steps[k](stepped)
        except SimStop as stop:
            raised_steps = (stop.fault.kind, k)
            break
    make = compiled(insts, ENV)
    assert make is not None, "the run was not fusible"
    called: list[int] = []

    def spy(k: int, st: Any) -> Any:
        return lambda w: (called.append(k), st(w))[1]
    steps = [spy(k, st) for k, st in enumerate(bind_program(insts, ENV, None).steps)]
    try:
        assert make(steps, 0)(fused) == RUN_BASE - len(insts)
    except RunStop as stop:
        raised_fused = (stop.fault.kind, stop.offset)
    assert raised_fused == raised_steps
    pend = (sorted(fused.pend_v), len(fused.vm_queue)), (sorted(stepped.pend_v),
                                                          len(stepped.vm_queue))
    assert pend[0] == pend[1]
    assert state(fused) == state(stepped)
    return fused, raised_fused, called


def test_a_spill_and_reload_in_a_run_is_inline() -> None:
    f, raised, called = both(["store v3 +4", "load v5 +4", WAIT, add(7, 5, 5)], wave())
    assert raised is None and called == []      # no bound step called from the run
    assert f.V[:, 7].tolist() == [0x2222_2222, 0x4444_4444, 0x6666_6666, 0x8888_8888]


def test_a_run_with_a_partial_exec_writes_only_its_lanes() -> None:
    w = wave(0b0110)
    w.V[:, 5] = 7
    f, raised, called = both(["store v3 +4", "store v[2:3] +8", "load v5 +4",
                              "load v[6:7] +8", WAIT], w)
    assert raised is None and called == []
    assert f.V[:, 5].tolist() == [7, 0x2222_2222, 0x3333_3333, 7]
    assert f.vdef[:, 5].tolist() == [False, True, True, False]
    assert f.V[1:3, 6:8].tolist() == [[0xA1, 0x2222_2222], [0xA2, 0x3333_3333]]


def test_bytes_in_a_run_are_extended() -> None:
    w = wave()
    w.V[:, 3] = [0x01, 0x7F, 0x80, 0xFF]
    f, raised, called = both(["store v3 +5 byte", "load v6 +5 sbyte", "load v5 +5 ubyte",
                              WAIT], w)
    assert raised is None and called == []
    assert f.V[:, 6].tolist() == [0x01, 0x7F, 0xFFFF_FF80, M32]
    assert f.V[:, 5].tolist() == [0x01, 0x7F, 0x80, 0xFF]


def test_d16_loads_in_a_run_write_their_half_and_keep_the_other() -> None:
    """D16 loads write 16 bits of the register (the short, or the byte zero-extended to
    16 bits) and leave the other half (CDNA3 ISA: *_D16 and *_D16_HI loads)."""
    w = wave()
    w.V[:, 5] = 0xBEEF_ABCD
    w.vdef[:, 5] = True
    f, raised, _ = both(["store v3 +4", "load v5 +4 short d16 hi", WAIT], w)
    assert raised is None
    assert f.V[:, 5].tolist() == [0x1111_ABCD, 0x2222_ABCD, 0x3333_ABCD, 0x4444_ABCD]
    f, raised, _ = both(["store v3 +4", "load v5 +5 ubyte d16", WAIT], w)
    assert raised is None
    assert f.V[:, 5].tolist() == [0xBEEF_0011, 0xBEEF_0022, 0xBEEF_0033, 0xBEEF_0044]


def test_a_wait_turned_into_s_nop_is_a_hazard_at_the_read() -> None:
    _, raised, _ = both(["store v3 +4", "load v5 +4", NOP, add(7, 5, 5)], wave())
    assert raised == (FaultKind.WAITCNT_HAZARD, 3)


def test_partly_defined_bytes_in_a_run_take_the_bound_step() -> None:
    w = wave()
    w.vdef[1, 3] = False
    w.vpart = {3: {1: 0x0000_FFFF}}
    f, raised, called = both(["store v3 +4", "load v5 +4", WAIT], w)
    assert raised is None and called == [0, 1]
    assert f.vpart[5] == {1: 0x0000_FFFF}


@pytest.mark.parametrize(("setup", "kind", "at", "bound"), [
    ("none", None, None, []),
    ("rsrc-undefined", FaultKind.UNINIT_READ, 1, [1]),
    ("soffset-undefined", FaultKind.UNINIT_READ, 1, [1]),
    ("rsrc-pending", FaultKind.WAITCNT_HAZARD, 1, [1]),
    ("base-outside", FaultKind.OOB_ACCESS, 1, [1]),
    ("past-the-segment", FaultKind.OOB_ACCESS, 1, [1]),
    ("not-whole-rows", None, None, [0, 1, 2, 5]),
    ("constant-soffset", None, None, []),
])
def test_faults_and_hand_overs_come_from_the_bound_step_at_the_access(
        setup: str, kind: FaultKind | None, at: int | None, bound: list[int]) -> None:
    """The first access of each run that its bound step would fault on or hand to the
    general step runs as that bound step; a window's other loads stay inline."""
    names: list[str | Inst] = ["store v3 +4", "load v6 +24" if setup == "past-the-segment"
                               else "load v6 +8", "load v5 +4", NOP, WAIT, "store v6 +0"]
    w = wave()
    w.private.defined[:] = 0xFF
    w.private.data[:] = np.arange(len(w.private.data)) * 7 % 256
    if setup in ("rsrc-undefined", "soffset-undefined", "rsrc-pending", "base-outside"):
        names[0] = NOP                          # the store would fault first
    if setup == "rsrc-undefined":
        w.sdef[0] = 0
    if setup == "soffset-undefined":
        w.sdef[4] = 0xFFFF
    if setup == "rsrc-pending":
        w.pend_s[1] = Pending(vm=False, lgkm=True, smem=True, sregs=(1,), svalues=(0,))
    if setup == "base-outside":                # 4 KiB below, soffset 4 KiB further
        w.S[0], w.S[1] = (SCRATCH_BASE - 0x1000) & M32, SWIZZLED | (SCRATCH_BASE - 0x1000) >> 32
        w.S[4] += 0x1000
    if setup == "not-whole-rows":
        w.S[4] += 1                             # lane l's dwords are no private row
    if setup == "constant-soffset":
        w.index = 0                             # its part of the backing at 0: soffset 0
        w.S[4] = 32
        names[2] = "load v5 +4 soff 0"
    _, raised, called = both(names, w)
    assert raised == (None if kind is None else (kind, at))
    assert called == bound


def test_storing_a_register_whose_load_is_in_flight_is_a_hazard_in_a_run() -> None:
    _, raised, called = both(["load v6 +8", "store v6 +0", WAIT], wave())
    assert raised == (FaultKind.WAITCNT_HAZARD, 1) and called == [0, 1]
