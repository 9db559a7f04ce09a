"""Uniform-address SCRATCH and MUBUF accesses and `s_waitcnt` in the source of a fused run
(`rgpu_fuzz.sim.fused.runs`): O0 code spills and reloads around almost every instruction, and a
bound step between two segments costs a call, a `Pending` record and its completion.
MUBUF is how targets without architected flat scratch (gfx90a) spill: `off`, the private
segment buffer's V# and an soffset (`bound.mem.bind_buffer`'s uniform form, whose row
copies are SCRATCH's once the swizzled buffer address is a private offset).

What is emitted is `bound.scratch`'s step for the plain case; under every condition under
which that step would fault or hand the access to the general step, the run calls the
access's bound step instead and goes on, so the checks (`sim-waitcnt-hazard`,
`sim-uninit-read`, the swizzle and `sim-oob-access`) are made by the very step that makes
them outside a run, in its order (a store changes no register, a load parks its data as
it always does).

- A store is emitted inside the current segment: it writes memory and leaves a completed
  entry in the vmcnt queue, and changes no register.
- Loads followed by an `s_waitcnt` whose vmcnt is 0, with nothing between them but more
  such loads (each to other registers), scalar ALU instructions and no-ops (a window),
  read their rows at the load into `Wave.deferred` and write their destinations at the
  wait, with the EXEC of their issue (`land`): the wait completes every older load
  first, and no instruction can observe the destinations in between. Where the run hands
  over to the bound steps or faults inside a window, the loads are parked first, as the
  bound steps would have parked them (`park`). Any other load runs as its bound step
  between segments.
- An SMEM load of kernel arguments (a plain SGPR pair plus constants) whose covering
  lgkmcnt(0) wait is in the run, the first wait after it, with no instruction in between
  naming one of its destinations, reads its dwords at the load and writes them at the wait
  the same way (`emit_smem`).
- `s_waitcnt` completes what is in the queues (`inflight.wait`), then the window's loads.

GLOBAL loads and stores: `rgpu_fuzz.sim.fused.global_mem`, whose loads join the same windows.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.inflight import wait
from rgpu_fuzz.sim.bound.operands import Env, vcol
from rgpu_fuzz.sim.bound.program import ALIASES, NOPS, waitcnt_counts
from rgpu_fuzz.sim.bound.scratch import (
    DEFINED_WORD,
    STORED,
    ScratchForm,
    all_defined,
    ones,
    scratch_form,
    uniform_buffer,
    views,
)
from rgpu_fuzz.sim.bound.smem import smem_form
from rgpu_fuzz.sim.fused.code import RunCode
from rgpu_fuzz.sim.fused.code import finish as run_finish
from rgpu_fuzz.sim.fused.global_mem import emit_global_load, emit_global_store, window_to_wait
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics.memops import MemOp, memop
from rgpu_fuzz.sim.semantics.salu import SALU
from rgpu_fuzz.sim.state.wave import FLAT_SCRATCH, FULL, Pending, Wave

M32 = 0xFFFF_FFFF
OFF = Opnd(OpKind.OFF, 0, 0)


def _need(em: RunCode) -> None:
    """Add the names the emitted code uses to the run's namespace."""
    if "_views" not in em.ns:
        em.ns.update({"_views": views, "_STORED": STORED, "_DW": DEFINED_WORD,
                      "_land": land, "_wait": wait})


@dataclass(frozen=True, slots=True)
class BufferForm:
    """A MUBUF access of `bound.mem.bind_buffer`'s uniform form (`bound.scratch.uniform_buffer`)
    of whole dwords or of one byte or short, not D16."""

    col: int
    """The data (store) or destination (load) VGPR column."""
    rsrc: int
    """The V#'s first SGPR."""
    soff: int
    """The soffset SGPR, or -1 (a constant: `const`)."""
    const: int
    ioff: int
    """The instruction's offset field."""


def buffer_form(inst: Inst, op: MemOp, env: Env) -> BufferForm | None:
    """`inst` as a MUBUF access of the uniform form, or None (operands as `bind_buffer`
    reads them: `vdata, vaddr, srsrc, soffset`)."""
    if op.segment != "buffer" or op.d16 or not (op.width % 4 == 0 or op.width < 4) or \
            inst.mods.get("idxen", 0):
        return None
    data, _, srsrc, soff = (*inst.operands, OFF, OFF, OFF, OFF)[:4]
    if data.kind is not OpKind.VGPR and data.kind is not OpKind.AGPR:
        return None
    got = uniform_buffer(env, bool(inst.mods.get("offen", 0)), srsrc, soff)
    if got is None:
        return None
    return BufferForm(vcol(data), *got, int(inst.mods.get("offset", 0)))


def _uniform(inst: Inst, name: str,
             em: RunCode) -> tuple[MemOp, ScratchForm | BufferForm] | None:
    op = memop(name)
    if op is None:
        return None
    if op.segment == "buffer":
        bform = buffer_form(inst, op, em.env)
        return None if bform is None else (op, bform)
    if op.segment != "scratch":
        return None
    form = scratch_form(inst, op, em.env)
    if form is None or (form.saddr is not None and form.sreg is None):
        return None
    return op, form


def _buffer_offset(em: RunCode, form: BufferForm) -> None:
    """Inside `if ef or E.any():`: `_o`, the private offset of a uniform MUBUF access (the
    V# base, soffset and offset field, `bound.scratch.buffer_rows`), or -1 where its bound
    step would fault (the V# or soffset undefined or pending, the base outside the private
    segment) or the wave's part of the segment is not a whole number of swizzled rows
    away."""
    i, k = form.rsrc, form.soff
    regs = em.name(frozenset((i, i + 1) if k < 0 else (i, i + 1, k)))
    ok = f"SD[{i}] | SD[{i + 1}] << 32 == {(1 << 64) - 1}"
    if k >= 0:
        ok += f" and SD[{k}] & {M32} == {M32}"
    em.line(f"    if {ok} and not (w.pend_s and not {regs}.isdisjoint(w.pend_s)):")
    em.line(f"        _M = w.mem; _o = ((S[{i}] | S[{i + 1}] << 32) & {(1 << 48) - 1}) - "
            "_M.scratch_base")
    em.line("        if 0 <= _o < _M.scratch_span:")
    em.line(f"            _o += {f'S[{k}]' if k >= 0 else form.const} - "
            "_M.wave_scratch_offset(w)")
    em.line(f"            _o = _o // {em.lanes} + {form.ioff} if _o % {4 * em.lanes} == 0 "
            "else -1")
    em.line("        else: _o = -1")


def _prologue(em: RunCode, op: MemOp, form: ScratchForm | BufferForm, fallback: str) -> None:
    """Inside `if ef or E.any():` (an empty EXEC accesses nothing): `_o`, the private
    offset, or -1 where `bound.scratch.uniform_scratch`'s step (`bound.scratch.buffer_rows`'s)
    would fault or take the general path; then `fallback` runs that step in the run (it
    checks and faults as it always does), else the row-copy code that follows, with `_v`
    the rows."""
    width = op.width
    n = max(1, width // 4)
    cols = em.name(frozenset(range(form.col, form.col + n)))
    em.line("if ef or E.any():")
    em.line("    _o = -1")
    pad = "    "
    if isinstance(form, BufferForm):
        _buffer_offset(em, form)
    elif form.sreg is not None:
        i = form.sreg
        em.line(f"    if SD[{i}] & {M32} == {M32} and not (w.pend_s and {i} in w.pend_s):")
        em.line(f"        _o = (S[{i}] + {form.offset}) & {M32}")
        pad = "        "
    else:
        em.line(f"    _o = {form.offset & M32}")
    em.line(f"{pad}_P = w.private")
    if width >= 4:
        bad = f"_o & 3 or _o + {4 * n} > _P.size or _P.size & 3"
    else:
        bad = f"_o + {width} > _P.size or _P.size & 3" + (" or _o & 1" if width == 2 else "")
    em.line(f"{pad}if {bad} or (w.vpart and not {cols}.isdisjoint(w.vpart)) or "
            f"(w.pend_v and not {cols}.isdisjoint(w.pend_v)): _o = -1")
    em.line(f"    if _o < 0: {fallback}")
    em.line("    else:")
    em.line("        _v = _views(w)")
    if width == 2:
        em.line("        _k = (_o >> 1) & 1")
        em.line("        _dr = _v[5][_o >> 2, :, _k]; _sr = _v[6][_o >> 2, :, _k]")
    elif width == 1:
        em.line("        _dr = _v[3][_o >> 2, :, _o & 3]; _sr = _v[4][_o >> 2, :, _o & 3]")


def _bound_step(em: RunCode) -> str:
    """The access's bound step, run inside the run (one line of simple statements)."""
    return f"j = {em.at}; _steps[_i + {em.at}](w)"


def emit_store(em: RunCode, inst: Inst, name: str) -> bool:
    """Emit a uniform SCRATCH store or a GLOBAL store (`emit_global_store`) inside the
    current segment; False: not these forms."""
    if name.startswith("GLOBAL_"):
        gop = memop(name)
        return gop is not None and gop.store and emit_global_store(em, inst, gop)
    got = _uniform(inst, name, em)
    if got is None or not got[0].store:
        return False
    op, form = got
    _need(em)
    _prologue(em, op, form, _bound_step(em))
    col = form.col
    width = op.width
    n = max(1, width // 4)
    if width >= 4:
        em.line("        _r = _o >> 2")
        if n == 1:
            em.line(f"        if ef: _v[1][_r] = V[:, {col}]; "
                    f"np.negative(VD[:, {col}], out=_v[2][_r], dtype=_U32, casting='unsafe')")
        else:
            em.line(f"        if ef: _v[1][_r:_r + {n}] = V[:, {col}:{col + n}].T; "
                    f"np.negative(VD[:, {col}:{col + n}].T, out=_v[2][_r:_r + {n}], "
                    "dtype=_U32, casting='unsafe')")
        em.line(f"        else: _v[1][_r:_r + {n}, E] = V[E, {col}:{col + n}].T; "
                f"_v[2][_r:_r + {n}, E] = np.negative(VD[E, {col}:{col + n}].T, dtype=_U32, "
                "casting='unsafe')")
    else:
        # the register's low byte or half (little-endian) and its definedness per byte
        dt = "np.uint16" if width == 2 else "np.uint8"
        em.line(f"        _x = V.view({dt})[:, {col * 4 // width}]")
        em.line(f"        if ef: _dr[...] = _x; np.negative(VD[:, {col}], out=_sr, dtype={dt}, "
                "casting='unsafe')")
        em.line(f"        else: np.copyto(_dr, _x, where=E); np.copyto(_sr, "
                f"np.negative(VD[:, {col}], dtype={dt}, casting='unsafe'), where=E)")
    if em.env.stores_in_vmcnt:
        em.line("        w.vm_queue.append(_STORED)")
    return True


def _window(em: RunCode) -> bool:
    """Whether the load at `em.at` starts or continues a window: uniform SCRATCH loads to
    distinct registers, with only scalar ALU instructions and no-ops between them (no
    VGPR is read or written there: O0 reloads of an SGPR spill switch EXEC around the
    load), up to an `s_waitcnt` whose vmcnt is 0."""
    seen: set[int] = set()
    for k, inst in enumerate(em.insts[em.at:]):
        if not inst.share_key or inst.halves:
            return False
        name = ALIASES.get(inst.opcode, inst.opcode)
        if k and name == "S_WAITCNT":
            return waitcnt_counts(inst, em.env)[0] == 0
        if k and (name in SALU or name in NOPS):
            continue
        got = _uniform(inst, name, em)
        if got is None or got[0].store:
            return False
        op, form = got
        cols = set(range(form.col, form.col + max(1, op.width // 4)))
        if cols & seen:
            return False
        seen |= cols
    return False


def emit_load(em: RunCode, inst: Inst, name: str) -> bool:
    """Emit a uniform SCRATCH load of a window (`_window`) as an entry of `Wave.deferred`,
    or an SMEM load of its own (`emit_smem`); False: it runs as its bound step between
    segments."""
    if name.startswith("S_"):
        return emit_smem(em, inst, name)
    if name.startswith("GLOBAL_"):
        gop = memop(name)
        return gop is not None and not gop.store and emit_global_load(em, inst, gop)
    got = _uniform(inst, name, em)
    if got is None or got[0].store or not _window(em):
        return False
    op, form = got
    _need(em)
    col = form.col
    width = op.width
    n = max(1, width // 4)
    _prologue(em, op, form, _bound_step(em))
    if width >= 4:
        whole = em.name(ones(4 * n * em.lanes))
        alld = em.name(all_defined(em.lanes, n))
        em.line("        _r = _o >> 2")
        em.line(f"        _s = _v[2][_r:_r + {n}]")
        em.line(f"        if _s.tobytes() == {whole}: _dd = {alld}")
        em.line("        else:")
        em.line("            _ok = _s == _DW")
        em.line("            _dd = None if ((_s != 0) & ~_ok).any() else _ok.T")
        em.line(f"        if _dd is None: {_bound_step(em)}")
        em.line(f"        else: w.deferred.append(({col}, _v[1][_r:_r + {n}], _dd, ef, E))")
    else:
        # a sub-dword load's lane is defined when all its bytes are (`bind_vmem`)
        dd = f"(_sr == {0xFFFF if width == 2 else 0xFF})[:, None]"
        if op.signed:
            signed = "np.int16" if width == 2 else "np.int8"
            data = f"_dr.view({signed}).astype(np.int32).view(_U32)[None, :]"
        else:
            data = "_dr.astype(_U32)[None, :]"
        em.line(f"        w.deferred.append(({col}, {data}, {dd}, ef, E))")
    em.deferred.append((col, n))
    return True


def _smem_window(em: RunCode, regs: tuple[int, ...]) -> bool:
    """`fused.global_mem.window_to_wait` of an SMEM load to the SGPRs `regs`, covered by
    lgkmcnt 0 (reading or writing one before would be `sim-waitcnt-hazard`; `regs` lie
    below the registers instructions use implicitly, VCC, EXEC, M0)."""
    low, high = regs[0], regs[-1] + 1
    return window_to_wait(em, 1, lambda o: o.kind is OpKind.SGPR and o.index < high and
                          o.index + max(o.count, 1) > low)

def emit_smem(em: RunCode, inst: Inst, name: str) -> bool:
    """Emit an SMEM load of a plain SGPR pair plus constants (`bound.smem.smem_form`) whose
    covering wait ends its window (`_smem_window`) as an entry of `Wave.deferred`, its
    values read at issue as the bound step reads them, written at the wait (`land`);
    False: it runs as its bound step between segments. Where the base is undefined or
    pending, a destination still waits for an older load, or the bytes are not all
    contents of one mapping (`memory.AddressSpace.holding`), the bound step runs in the
    run, checks and faults (or parks the load) as it always does."""
    op = memop(name)
    if op is None or op.segment != "smem" or op.store:
        return False
    form = smem_form(inst, op, em.env)
    if form is None:
        return False
    i, k, regs = form
    if not regs or regs[-1] >= FLAT_SCRATCH or not _smem_window(em, regs):
        return False
    _need(em)
    em.may_raise()
    watch = em.name(frozenset((i, i + 1, *regs)))
    unpack = em.name(struct.Struct(f"<{len(regs)}I").unpack_from)
    em.line(f"if SD[{i}] & SD[{i + 1}] != {M32} or "
            f"(w.pend_s and not {watch}.isdisjoint(w.pend_s)): {_bound_step(em)}")
    em.line("else:")
    em.line(f"    _a = ((S[{i}] | S[{i + 1}] << 32) + {k}) & {(1 << 64) - 4}")
    em.line(f"    _m = w.mem.glob.holding(_a, {op.width})")
    em.line(f"    if _m is None: {_bound_step(em)}")
    em.line(f"    else: w.deferred.append((-1, {regs!r}, {unpack}(_m.data, _a - _m.base), "
            "True, None))")
    em.deferred.append((-1, len(regs)))
    return True


def land(w: Wave) -> None:
    """Write the window's loads (`Wave.deferred`) into their destinations, as `inflight.
    complete` would: with the EXEC of their issue; an SMEM load's (`emit_smem`) whole."""
    for col, rows, defined, full, e in w.deferred:
        if col < 0:
            S, sdef = w.S, w.sdef
            for r, value in zip(rows, defined, strict=True):
                S[r] = value
                sdef[r] = FULL
            continue
        n = rows.shape[0]
        if full:
            w.V[:, col:col + n] = rows.T
            w.vdef[:, col:col + n] = defined
        else:
            np.copyto(w.V[:, col:col + n], rows.T, where=e[:, None])
            np.copyto(w.vdef[:, col:col + n], defined, where=e[:, None])
    w.deferred.clear()


def park(w: Wave) -> None:
    """Park the window's loads (`Wave.deferred`) as their bound steps would have: where the
    run hands over to the bound steps or faults inside a window. Their order in the vmcnt
    queue may differ from issue order (behind loads issued by bound steps in the window):
    the window ends in a vmcnt(0) wait, which completes all, and their registers differ.
    The same holds for SMEM loads in the lgkmcnt queue: their window ends in an
    lgkmcnt(0) wait with no other wait before it, and names none of their registers."""
    for col, rows, defined, full, e in w.deferred:
        if col < 0:
            p = Pending(vm=False, lgkm=True, smem=True, sregs=rows, svalues=defined)
            for r in rows:
                w.pend_s[r] = p
            w.lgkm_queue.append(p)
            continue
        n = rows.shape[0]
        p = Pending(vm=True, lgkm=False, smem=False, vcol=col, vdata=rows.copy().T,
                    vdef=defined, vmask=None if full else e.copy())
        for c in range(col, col + n):
            w.pend_v[c] = p
        w.vm_queue.append(p)
    w.deferred.clear()


def finish(w: Wave, steps: list[Any], i: int, j: int, k: int) -> int:
    """`fused.code.finish`, after parking the window's loads."""
    if w.deferred:
        park(w)
    return run_finish(w, steps, i, j, k)


def emit_wait(em: RunCode, vm: int, lgkm: int) -> None:
    """`s_waitcnt` between two segments: what is in the queues, then the window's loads
    (`land`)."""
    _need(em)
    em.close_segment()
    em.may_raise()
    em.line(f"if w.vm_queue or w.lgkm_queue: _wait(w, {vm}, {lgkm})")
    if em.deferred:
        em.line("if w.deferred: _land(w)")
    em.deferred.clear()
    em.refresh_exec()  # a load completed here may have written EXEC
    em.open_segment(em.at + 1)


__all__ = ["emit_load", "emit_smem", "emit_store", "emit_wait", "finish", "land", "park"]
