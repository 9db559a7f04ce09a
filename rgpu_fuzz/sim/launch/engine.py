"""Run one launch of a kernel: memory set up as the runtime would, waves initialised by
`loader`, every work-group's waves stepped round-robin between barriers (or, with
`interleave`, switched at every memory instruction in a seeded order), the first trap or
fault ending the launch. `simulate` is the simulator's one entry point."""

from __future__ import annotations

import gc
import hashlib
import random
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.bound.program import BARRIER, END, SHARED, TRAP, Program
from rgpu_fuzz.sim.common.fault import Fault, FaultKind, SimStop
from rgpu_fuzz.sim.fused.runs import MAX_RUN, RUN_BASE, RunStop
from rgpu_fuzz.sim.isa.inst import Inst
from rgpu_fuzz.sim.launch import tiers
from rgpu_fuzz.sim.launch.counts import opcode_counts
from rgpu_fuzz.sim.launch.float_mode import unmodelled_float_mode
from rgpu_fuzz.sim.launch.image import CODE_OBJECT_BASE
from rgpu_fuzz.sim.launch.interleave import run_interleaved
from rgpu_fuzz.sim.launch.loader import (
    KernargBuilder,
    TargetConfig,
    entry_plan,
    kernel_config,
    set_up_launch,
    target_config,
    wave_setup,
)
from rgpu_fuzz.sim.launch.tiers import tier_up
from rgpu_fuzz.sim.state.memory import AddressSpace, Lds, Private
from rgpu_fuzz.sim.state.wave import Wave

SHARED_APERTURE_HI = 0x0001_0000
PRIVATE_APERTURE_HI = 0x0002_0000
SCRATCH_BASE = 0x7E00_0000_0000
DEFAULT_STEP_LIMIT = 50_000_000
_SRC_SHARED_BASE, _SRC_SHARED_LIMIT, _SRC_PRIVATE_BASE, _SRC_PRIVATE_LIMIT = 235, 236, 237, 238
_NULL = 125  # gfx11 `null`: reads 0 (the executor's storage index, see rgpu_fuzz.sim.isa.inst)


class Status(StrEnum):
    OK = "ok"
    TRAP = "trap"
    FAULT = "fault"


@dataclass(frozen=True, slots=True)
class Arg:
    """One explicit kernel argument in `.args` order: a buffer by name (its address is
    passed) or a by-value argument's bytes."""

    buffer: str | None = None
    data: bytes = b""


@dataclass(frozen=True, slots=True)
class TraceRow:
    address: int
    text: str
    exec_mask: int
    changes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SimResult:
    status: Status
    buffers: dict[str, bytes]
    fault: Fault | None = None
    wave_instructions: int = 0
    opcodes: Mapping[str, int] = field(default_factory=dict)
    seconds: Mapping[str, float] = field(default_factory=dict)
    trace: tuple[TraceRow, ...] = ()


class LaunchMemory:
    """Global memory plus the current work-group's LDS and the scratch geometry."""

    def __init__(self, lanes: int, private_size: int) -> None:
        self.glob = AddressSpace()
        self.shared_hi = SHARED_APERTURE_HI
        self.private_hi = PRIVATE_APERTURE_HI
        self.scratch_base = SCRATCH_BASE
        self.lanes = lanes
        self.private_size = private_size
        self.wave_bytes = (private_size * lanes + 1023) // 1024 * 1024
        self.scratch_span = 1 << 40
        """Bytes of the scratch backing a buffer resource may point into."""
        self._lds: Lds | None = None
        self.lds_of: dict[int, Lds] = {}
        """By wave index, the LDS of its work-group where several groups are resident at
        once (an interleaved launch); empty otherwise."""

    def lds(self, w: Wave) -> Lds:
        if self.lds_of:
            return self.lds_of[w.index]
        assert self._lds is not None
        return self._lds

    def wave_scratch_offset(self, w: Wave) -> int:
        return w.index * self.wave_bytes


_PROGRAMS: OrderedDict[tuple[str, Env], Program] = OrderedDict()
_CODE_OBJECTS: OrderedDict[str, Any] = OrderedDict()
_CACHED = 256
"""Code objects and bound programs kept per process, least recently used dropped first (a
smaller bound than a benchmark's or a test run's kernel set rebinds every launch)."""
"""Parsed code objects by content hash (the ELF reader is slower than a short launch)."""


_ENVS: dict[int, tuple[Any, TargetConfig, Env]] = {}


def _env(cfg: TargetConfig, kernel: Any) -> Env:
    """The binding env of `kernel` on `cfg`'s target, kept with its descriptor (by identity:
    three scans of the descriptor's fields per launch otherwise)."""
    kd = kernel.descriptor
    held = _ENVS.get(id(kd))
    if held is not None and held[0] is kd and held[1] is cfg:
        return held[2]
    env = _env_of(cfg, kd)
    if len(_ENVS) >= 512:
        _ENVS.clear()
    _ENVS[id(kd)] = (kd, cfg, env)
    return env


def _env_of(cfg: TargetConfig, kd: Any) -> Env:
    # FLOAT_DENORM_MODE: 0 flush source and destination, 1 flush destination (output),
    # 2 flush source, 3 flush none (AMDGPUUsage "Floating Point Denorm Mode Enumeration")
    d32 = kd.field("FLOAT_DENORM_MODE_32")
    d64 = kd.field("FLOAT_DENORM_MODE_16_64")
    constants = ((_NULL, 0),
                 (_SRC_SHARED_BASE, SHARED_APERTURE_HI << 32),
                 (_SRC_SHARED_LIMIT, (SHARED_APERTURE_HI << 32) | 0xFFFF_FFFF),
                 (_SRC_PRIVATE_BASE, PRIVATE_APERTURE_HI << 32),
                 (_SRC_PRIVATE_LIMIT, (PRIVATE_APERTURE_HI << 32) | 0xFFFF_FFFF))
    # GFX12 has no IEEE mode bit (RSRC1 bit 23 is DISABLE_PERF) and no operation reads one
    ieee = kd.has_field("ENABLE_IEEE_MODE") and bool(kd.field("ENABLE_IEEE_MODE"))
    return Env(lanes=cfg.wave_size, ieee=ieee,
               flush32=d32 != 3, flush64=d64 != 3, constants=constants,
               waitcnt=cfg.waitcnt, true16=cfg.true16, code_base=CODE_OBJECT_BASE,
               stores_in_vmcnt=cfg.stores_in_vmcnt, keeps_high16=cfg.keeps_high16)


def program_for(code_hash: str, kernel_name: str, insts: Sequence[Inst], env: Env) -> Program:
    # The bound program is the whole `.text` and depends on the float modes (env), not on
    # the kernel: every kernel of a code object with the same modes shares it (keyed by
    # kernel as well, a code object of N kernels was bound N times: rustc-amdgpu's batches).
    del kernel_name
    key = (code_hash, env)
    prog = _PROGRAMS.get(key)
    if prog is None:
        prog = tiers.bind(insts, env, None)
        if len(_PROGRAMS) >= _CACHED:
            _PROGRAMS.popitem(last=False)[1].release()
        _PROGRAMS[key] = prog
    else:
        _PROGRAMS.move_to_end(key)
    return prog


def simulate(code_object: bytes, kernel_name: str, grid: tuple[int, int, int],
             block: tuple[int, int, int], args: Sequence[Arg] | KernargBuilder,
             buffers: Mapping[str, bytes],
             *, decode: Callable[[Any, Any], Sequence[Inst]], target: str | None = None,
             step_limit: int = DEFAULT_STEP_LIMIT, trace_wave: int | None = None,
             dynamic_lds: int = 0, read: Any = None, interleave: int = 0) -> SimResult:
    """Run `kernel_name` of `code_object` over `grid` × `block` with `buffers` mapped into
    global memory; `decode(code_object_reader_value, kernel)` lists the kernel's
    instructions (decoding is cached by the caller's decoder). `args` are the explicit
    kernel arguments, or a `KernargBuilder` (the code-object launch path) packing them.
    `dynamic_lds` bytes of group segment are allocated after the kernel's fixed size, as
    `hipModuleLaunchKernel`'s sharedMemBytes: the dispatch packet's group_segment_size is
    their sum. `read`: `code_object` as `read_code_object` returned it, when the caller read
    it already (the pipeline reads and verifies it before the launch: reading it here again
    was a second parse of the ELF per batch, ~1 ms per case at O0).

    A launch of a code object whose program is bound already (`_PROGRAMS`) does not call
    `decode`: the program holds the instructions (`bench sim`'s warm launches of 75 cases
    decoded every code object again, past the decoder's 64-entry cache).

    `interleave`: 0 (the default) runs each wave of a work-group until its next barrier
    before the next wave runs, so a non-atomic read-modify-write of one address by two
    waves looks atomic. A seed N > 0 switches waves after every global, FLAT, buffer and DS
    instruction instead, to a wave drawn by `random.Random(N)` (`interleave.run_interleaved`):
    the outputs of a well-defined kernel do not depend on the draw, a lost update does."""

    t0 = time.perf_counter()
    co, kernel, cfg, prog, t1, t2 = _bound_program(code_object, read, kernel_name, target,
                                                   decode)
    lanes = cfg.wave_size

    kd = kernel.descriptor
    refused = unmodelled_float_mode(kd)
    if refused is not None:
        return SimResult(Status.FAULT, {}, Fault(FaultKind.UNSUPPORTED, refused,
                                                 kernel.entry_address, "float-mode"))
    private_size = entry_plan(kd).private_size
    mem = LaunchMemory(lanes, private_size)
    group_size = kd.group_segment_fixed_size + dynamic_lds
    try:
        launched = set_up_launch(mem.glob, co, kernel, grid, block, args, buffers, SCRATCH_BASE,
                                 group_size=group_size)
    except SimStop as stop:
        return SimResult(Status.FAULT, {}, stop.fault)
    mapped, st = launched.buffers, launched.entry
    init_wave = wave_setup(kernel, cfg, st, block)

    entry = prog.index.get(kernel.entry_address)
    result_fault: Fault | None = None
    status = Status.OK
    total = 0
    counts = [0] * len(prog.steps)
    runs = [0] * len(prog.steps)
    slow: list[int] = []
    trace: list[TraceRow] = []
    items = block[0] * block[1] * block[2]
    n_waves = (items + lanes - 1) // lanes
    old_err = np.seterr(all="ignore")
    rng = random.Random(interleave) if interleave else None
    try:
        if entry is None:
            raise SimStop(Fault(FaultKind.OOB_ACCESS, f"entry {kernel.entry_address:#x} is not "
                                "an instruction of .text"))
        groups = _groups(mem, grid, n_waves, private_size, group_size, init_wave, entry,
                         per_wave_lds=rng is not None)
        if rng is not None and trace_wave is None:
            trapped, total = run_interleaved(groups, prog, counts, slow, total, step_limit,
                                             rng)
            if trapped:
                raise _Trapped()
        for waves in groups if rng is None or trace_wave is not None else ():
            status, total = _run_group(waves, prog, counts, runs, slow, total, step_limit,
                                       trace if trace_wave is not None else None,
                                       trace_wave)
            if status is Status.TRAP:
                raise _Trapped()
            for w in waves:
                w.release()
    except _Trapped:
        status = Status.TRAP
    except SimStop as stop:
        result_fault = _at_instruction(stop.fault, prog)
        status = Status.FAULT
    finally:
        np.seterr(**old_err)
    t3 = time.perf_counter()
    _freeze_caches()
    opcodes = opcode_counts(prog, counts, runs, exact=not slow and trace_wave is None)
    out = {name: m.data.tobytes() for name, m in mapped.items()}
    return SimResult(status, out, result_fault, total, opcodes,
                     {"decode": t1 - t0, "bind": t2 - t1, "simulate": t3 - t2}, tuple(trace))


def _bound_program(code_object: bytes, read: Any, kernel_name: str, target: str | None,
                   decode: Callable[[Any, Any], Sequence[Inst]]
                   ) -> tuple[Any, Any, TargetConfig, Program, float, float]:
    """`simulate`'s code object (read once per content hash), kernel, target configuration
    and bound program (bound once per code hash and `Env`), with the times decoding and
    binding ended."""
    from rgpu_fuzz.codeobj.reader import read_code_object

    code_hash = _digest(code_object)
    co = _CODE_OBJECTS.get(code_hash)
    if co is None:
        co = read_code_object(code_object) if read is None else read
        if len(_CODE_OBJECTS) >= _CACHED:
            _CODE_OBJECTS.popitem(last=False)
        _CODE_OBJECTS[code_hash] = co
    else:
        _CODE_OBJECTS.move_to_end(code_hash)
    kernel = co.kernel(kernel_name)
    cfg = kernel_config(target_config(target or co.target.name), kernel.descriptor)
    env = _env(cfg, kernel)
    key = (code_hash, env)
    prog = _PROGRAMS.get(key)
    if prog is not None:
        _PROGRAMS.move_to_end(key)
        t1 = t2 = time.perf_counter()
    else:
        insts = decode(co, kernel)
        t1 = time.perf_counter()
        prog = program_for(code_hash, kernel_name, insts, env)
        t2 = time.perf_counter()
    return co, kernel, cfg, prog, t1, t2


def _at_instruction(f: Fault, prog: Program) -> Fault:
    """`f` with the address and text of the instruction it stopped at, where its `pc` is one."""
    idx = f.pc
    inst = prog.insts[idx] if 0 <= idx < len(prog.insts) else None
    if inst is not None:
        f = Fault(f.kind, f"{f.detail} (at {inst.address:#x}: "
                          f"{inst.text or inst.mnemonic})", inst.address,
                  f.mnemonic or inst.mnemonic)
    return f


_DIGESTS: OrderedDict[int, tuple[bytes, str]] = OrderedDict()
"""The digests of the code objects launched last, by the `bytes` object's id (the object
held, so that its id is not reused while it is kept): a batch launches its eight kernels
from one `bytes` object, and a kernel launched again hashed its code object again. As many
as `_CODE_OBJECTS` keeps (whose code objects hold the same bytes)."""


def _digest(data: bytes) -> str:
    held = _DIGESTS.get(id(data))
    if held is not None and held[0] is data:
        _DIGESTS.move_to_end(id(data))
        return held[1]
    digest = hashlib.sha256(data).hexdigest()
    if len(_DIGESTS) >= _CACHED:
        _DIGESTS.popitem(last=False)
    _DIGESTS[id(data)] = (data, digest)
    return digest


_FROZEN_AT = [0]
_FREEZE_EVERY = 250


def _freeze_caches() -> None:
    """Move the process's long-lived simulator caches out of the garbage collector's reach
    once they have grown by `_FREEZE_EVERY` bound steps (`gc.freeze`, Python docs "gc").

    The caches (memoised instructions, bound steps: ~15 closure cells each) are hundreds of
    thousands of objects that live as long as the process, and every full collection walked
    them all: measured over the 148 bench launches (74 cases at O0 and O3), 12 full
    collections took 8-10 s of a 31 s run. At 2000 a cold worker still ran a full collection
    every few cases: 384 O0 cases in one process spent 0.8 s in them, 0.2 s at 250 (about 4
    cases' new steps). Freezing also keeps what is garbage at that moment, so the simulator
    makes none in cycles: a bound step's lazy binder does not refer to itself, and a program
    evicted from `_PROGRAMS` drops its steps (`Program.release`); after those 384 cases,
    unfreezing and collecting finds nothing (234,714 objects before)."""
    n = sum(len(v) for v in _shared_steps().values())
    if n - _FROZEN_AT[0] >= _FREEZE_EVERY:
        _FROZEN_AT[0] = n
        gc.freeze()


def _shared_steps() -> dict[Any, Any]:
    return SHARED


_SREG_NAMES = {102: "flat_scratch_lo", 103: "flat_scratch_hi", 104: "xnack_mask_lo",
               105: "xnack_mask_hi", 106: "vcc_lo", 107: "vcc_hi", 124: "m0", 126: "exec_lo",
               127: "exec_hi", **{108 + k: f"ttmp{k}" for k in range(16)}}


class _Trapped(Exception):
    pass


def _run_group(waves: list[Wave], prog: Program, counts: list[int], runs: list[int],
               slow: list[int], total: int, limit: int, trace: list[TraceRow] | None,
               trace_wave: int | None) -> tuple[Status, int]:
    while True:
        live = [w for w in waves if not w.ended]
        if not live:
            return Status.OK, total
        progressed = False
        for w in live:
            if w.at_barrier:
                continue
            progressed = True
            if trace is not None and w.index == trace_wave:
                r, n = _run_traced(w, prog, counts, trace, limit - total)
            else:
                r, n = _run_wave(w, prog, counts, runs, slow, limit - total)
            total += n
            if r == TRAP:
                return Status.TRAP, total
            if r == END:
                w.ended = True
            elif r == BARRIER:
                w.at_barrier = True
        if all(w.at_barrier or w.ended for w in waves):
            for w in waves:
                w.at_barrier = False
        elif not progressed:
            raise SimStop(Fault(FaultKind.BARRIER_DEADLOCK, "no wave can make progress"))


def _groups(mem: LaunchMemory, grid: tuple[int, int, int], n_waves: int, private_size: int,
            group_size: int, init_wave: Callable[..., None], entry: int, *,
            per_wave_lds: bool) -> Iterator[list[Wave]]:
    """The work-groups of the launch in dispatch order (x fastest), each as its initialised
    waves with an LDS of its own: `mem`'s current one, or (`per_wave_lds`, several groups
    resident at once) one recorded for each of its waves in `mem.lds_of`."""
    lanes = mem.lanes
    counter = 0
    for gz in range(grid[2]):
        for gy in range(grid[1]):
            for gx in range(grid[0]):
                lds = Lds(group_size)
                mem._lds = lds
                waves = []
                for k in range(n_waves):
                    w = Wave(lanes, 0, counter)
                    w.mem = mem
                    w.private = Private(private_size, lanes)
                    init_wave(w, (gx, gy, gz), k * lanes, mem.wave_scratch_offset(w))
                    w.pc = entry
                    waves.append(w)
                    if per_wave_lds:
                        mem.lds_of[counter] = lds
                    counter += 1
                yield waves


def _run_wave(w: Wave, prog: Program, counts: list[int], runs: list[int], slow: list[int],
              budget: int) -> tuple[int, int]:
    """Run `w` until it ends, waits at a barrier or traps: on the fused tier
    (`Program.fast`, where a step may run several instructions: `RUN_BASE - k`) while the
    step budget has room for a whole run, then on the bound steps, one instruction at a
    time, so that the budget stops at the same instruction either way (noted in `slow`:
    those indices may be missing from `Program.executed`)."""
    i = w.pc
    n = 0
    fast, steps, heat = prog.fast, prog.steps, prog.heat
    n_steps = len(steps)
    soft = budget - MAX_RUN
    hot = tiers.HOT
    try:
        while n <= soft:
            if i >= n_steps:
                w.pc = n_steps - 1
                raise SimStop(Fault(FaultKind.OOB_ACCESS, "ran past the end of .text", w.pc))
            h = heat[i] + 1
            heat[i] = h
            if h == 1 or h == hot:
                tier_up(prog, i, h)
            r = fast[i](w)
            counts[i] += 1
            n += 1
            if r is None:
                i += 1
            elif r >= 0:
                i = r
            elif r <= RUN_BASE:
                k = RUN_BASE - r
                runs[i] += 1
                n += k - 1
                i += k
            else:
                w.pc = i + 1
                return r, n
        slow.append(i)
        while True:
            if i >= n_steps:
                w.pc = n_steps - 1
                raise SimStop(Fault(FaultKind.OOB_ACCESS, "ran past the end of .text", w.pc))
            r = steps[i](w)
            counts[i] += 1
            n += 1
            if r is None:
                i += 1
            elif r >= 0:
                i = r
            else:
                w.pc = i + 1
                return r, n
            if n > budget:
                raise SimStop(Fault(FaultKind.STEP_LIMIT,
                                    f"more than {budget} wave-instructions", i))
    except RunStop as stop:
        for m in range(stop.offset):
            counts[i + m] += 1
        raise SimStop(replace(stop.fault, pc=i + stop.offset)) from None
    except SimStop as stop:
        raise SimStop(replace(stop.fault, pc=i)) from None
    except Exception as e:  # a simulator bug: reported as a fault of the simulator, with its place
        import traceback
        raise SimStop(Fault(FaultKind.INTERNAL, f"{type(e).__name__}: {e}\n"
                            f"{traceback.format_exc(limit=-4)}", i)) from None


def _run_traced(w: Wave, prog: Program, counts: list[int],
                trace: list[TraceRow], budget: int) -> tuple[int, int]:
    """`_run_wave` that records, for every instruction, the registers it changed (within the
    same step budget: tracing a hang ends as `sim-step-limit`, not at the worker's timeout)."""
    i = w.pc
    n = 0
    while True:
        if n >= budget:
            raise SimStop(Fault(FaultKind.STEP_LIMIT, f"more than {budget} wave-instructions",
                                i))
        w.pc = i
        inst = prog.insts[i]
        s0, v0, scc0, exec0 = list(w.S), w.V.copy(), w.scc, w.exec_mask
        sd0, vd0 = list(w.sdef), w.vdef.copy()
        try:
            r = prog.steps[i](w)
        except SimStop as stop:
            raise SimStop(replace(stop.fault, pc=i)) from None
        counts[i] += 1
        n += 1
        changes = [f"{_SREG_NAMES.get(k, f's{k}')}={w.S[k]:#x}"
                   f"{'' if w.sdef[k] == 0xFFFF_FFFF else '?'}"
                   for k in range(len(s0)) if w.S[k] != s0[k] or w.sdef[k] != sd0[k]]
        if w.scc != scc0:
            changes.append(f"scc={w.scc}")
        diff_cols = np.nonzero(((w.V != v0) | (w.vdef != vd0)).any(axis=0))[0]
        for c in diff_cols.tolist():
            name = f"v{c}" if c < 256 else f"a{c - 256}"
            vals = w.V[:, c]
            lanes = np.nonzero((w.V[:, c] != v0[:, c]) | (w.vdef[:, c] != vd0[:, c]))[0]
            shown = ", ".join(f"{int(ln)}:{int(vals[ln]):#x}{'' if w.vdef[ln, c] else '?'}"
                              for ln in lanes[:4])
            more = f" (+{len(lanes) - 4} lanes)" if len(lanes) > 4 else ""
            changes.append(f"{name}[{shown}{more}]")
        trace.append(TraceRow(inst.address, inst.text or inst.mnemonic, exec0, tuple(changes)))
        if r is None:
            i += 1
        elif r >= 0:
            i = r
        else:
            w.pc = i + 1
            return r, n
