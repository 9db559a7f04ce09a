"""Interleaved waves: a launch whose waves switch after every memory instruction, in an
order drawn from a seeded generator (the `interleave=SEED` option of `amdgpu-sim`,
docs/simulator.md §1). A non-atomic read-modify-write between waves, which the default
schedule (each wave to its next barrier) makes look atomic, then loses updates as on a GPU
that runs several waves and work-groups at once."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace

from rgpu_fuzz.sim.bound.program import BARRIER, END, TRAP, Program
from rgpu_fuzz.sim.common.fault import Fault, FaultKind, SimStop
from rgpu_fuzz.sim.state.wave import Wave

_MEMORY_PREFIXES = ("global_", "flat_", "buffer_", "ds_", "s_load_", "s_buffer_load_",
                    "s_store_", "s_buffer_store_")
"""The instructions after which an interleaved launch switches waves: every access of
memory another wave of the launch may touch — global, FLAT, buffer, LDS, and scalar
memory (LLVM loads a uniform address that nothing in the kernel is known to write through
`s_load_dword`; the kernel-argument loads switch too, harmlessly). Scratch is the wave's
own."""


RESIDENT_GROUPS = 4
"""Work-groups an interleaved launch keeps running at once (a GPU runs several on its
compute units; a global read-modify-write split into a load and a store loses updates
between waves of different groups as well as of one)."""


def run_interleaved(groups: Iterator[list[Wave]], prog: Program, counts: list[int],
                     slow: list[int], total: int, limit: int,
                     rng: random.Random) -> tuple[bool, int]:
    """Run the launch with waves switched after every memory instruction
    (`_MEMORY_PREFIXES`): up to `RESIDENT_GROUPS` work-groups at once, the next wave drawn
    by `rng` from all waves of them neither ended nor waiting at their group's barrier (the
    one that just ran among them), so one wave's load and another's store may fall between
    a third wave's load and store. A group's barrier is released when every wave of it
    waits there or has ended, as in `_run_group`; a group whose waves have all ended makes
    room for the next. The bound steps run one instruction at a time (a fused run may hold
    several memory instructions); `slow` is noted, so opcode counts come from every index.
    Returns (trapped, the wave-instructions run in all)."""
    is_memory: dict[int, bool] = {}
    slow.append(-1)
    resident: list[list[Wave]] = []
    pending = True
    while True:
        while pending and len(resident) < RESIDENT_GROUPS:
            group = next(groups, None)
            if group is None:
                pending = False
            else:
                resident.append(group)
        if not resident:
            return False, total
        ready = []
        for group in resident:
            live = [w for w in group if not w.ended]
            if live and all(w.at_barrier for w in live):
                for w in live:
                    w.at_barrier = False
            ready += [w for w in live if not w.at_barrier]
        if not ready:  # the resident groups have all ended
            for group in resident:
                for w in group:
                    w.release()
            resident.clear()
            continue
        w = ready[rng.randrange(len(ready))] if len(ready) > 1 else ready[0]
        r, n = _step_to_memory(w, prog, counts, is_memory, limit - total)
        total += n
        if r == TRAP:
            return True, total
        if r == END:
            w.ended = True
            for group in [g for g in resident if all(v.ended for v in g)]:
                for v in group:
                    v.release()
                resident.remove(group)
        elif r == BARRIER:
            w.at_barrier = True


def _step_to_memory(w: Wave, prog: Program, counts: list[int], is_memory: dict[int, bool],
                    budget: int) -> tuple[int | None, int]:
    """Run `w` on the bound steps until it has executed one memory instruction (result
    None), ends, waits at a barrier or traps (the step's code), within `budget`."""
    i = w.pc
    n = 0
    steps, insts = prog.steps, prog.insts
    n_steps = len(steps)
    try:
        while True:
            if i >= n_steps:
                w.pc = n_steps - 1
                raise SimStop(Fault(FaultKind.OOB_ACCESS, "ran past the end of .text", w.pc))
            mem = is_memory.get(i)
            if mem is None:
                mem = is_memory[i] = insts[i].mnemonic.startswith(_MEMORY_PREFIXES)
            r = steps[i](w)
            counts[i] += 1
            n += 1
            if r is not None and r < 0:
                w.pc = i + 1
                return r, n
            i = i + 1 if r is None else r
            if n > budget:
                raise SimStop(Fault(FaultKind.STEP_LIMIT,
                                    f"more than {budget} wave-instructions", i))
            if mem:
                w.pc = i
                return None, n
    except SimStop as stop:
        raise SimStop(replace(stop.fault, pc=i)) from None
    except Exception as e:  # a simulator bug: reported as a fault of the simulator, with its place
        import traceback
        raise SimStop(Fault(FaultKind.INTERNAL, f"{type(e).__name__}: {e}\n"
                            f"{traceback.format_exc(limit=-4)}", i)) from None
