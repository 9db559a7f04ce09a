"""GLOBAL loads and stores in the source of a fused run (`rgpu_fuzz.sim.fused.runs`; the other
memory instructions: `fused.scratch`), as `bound.mem.bind_vmem`'s `global_store` and
`global_load` do them for EXEC as one run of lanes (`wave.span`) whose address (and
store data) is defined and not pending, with no partly defined lane in the data registers
and an SGPR base, if any, defined and not pending. Under any other condition the access's
bound step runs inside the run (`fused.scratch`'s way), so the checks and faults are the bound
step's, in its order; an access outside every mapping is `sim-oob-access` from the same
`memory.AddressSpace` call, with the same detail, at the access's instruction.

- A store is emitted inside the current segment: it writes memory and leaves a completed
  entry in the vmcnt queue, and changes no register (no store makes a register pending,
  so the segment's guards, made at its start, still hold after it).
- A load of whole dwords with full EXEC whose covering `s_waitcnt` (vmcnt 0, the first
  wait after it) is in the run, with no instruction in between naming one of its
  destination registers (`_window`), reads memory at the load and writes its destinations
  at the wait (`fused.scratch.land`), in the SCRATCH windows' `Wave.deferred` entries; a bail
  or fault in between parks it as its bound step would have (`fused.scratch.park`). Its
  destinations must not wait for an older load at issue (else the bound step runs).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rgpu_fuzz.sim.bound.inflight import STORED, span
from rgpu_fuzz.sim.bound.operands import vcol
from rgpu_fuzz.sim.bound.program import ALIASES, waitcnt_counts
from rgpu_fuzz.sim.bound.scratch import all_defined, is_plain_sgpr, signed_offset
from rgpu_fuzz.sim.fused.code import RunCode
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics.memops import MemOp

M32 = 0xFFFF_FFFF
M64 = (1 << 64) - 1
OFF = Opnd(OpKind.OFF, 0, 0)


def _need(em: RunCode) -> None:
    if "_span" not in em.ns:
        em.ns.update({"_span": span, "_STORED": STORED})


def _bound_step(em: RunCode) -> str:
    """The access's bound step, run inside the run (one line of simple statements)."""
    return f"j = {em.at}; _steps[_i + {em.at}](w)"


def _address(em: RunCode, vaddr: Opnd, saddr: Opnd, offset: int, busy: frozenset[int],
             dcols: frozenset[int], full: bool) -> str | None:
    """The guards and address of a GLOBAL access: `_a` (uint64 per lane of `_lo:_hi`)
    inside `else:` at one indent, after the lines that hand it to its bound step (EXEC not
    one run of lanes, or not full where `full`; a column of `busy` pending, of `dcols`
    partly defined, the SGPR base undefined or pending); returns the expression of the
    address's definedness over `_lo:_hi`. None: not a form emitted here."""
    if vaddr.kind is not OpKind.VGPR:
        return None
    if saddr.kind is not OpKind.OFF and not is_plain_sgpr(saddr, em.env):
        return None
    c = vcol(vaddr)
    wide = saddr.kind is OpKind.OFF
    busy = busy | frozenset((c, c + 1) if wide else (c,))
    _need(em)
    em.may_raise()
    if full:
        em.line(f"_lo, _hi = (0, {em.lanes}) if ef else (-1, -1)")
    else:
        em.line(f"_lo, _hi = (0, {em.lanes}) if ef else _span(E)")
    slow = f"_lo < 0 or (w.vpart and not {em.name(dcols)}.isdisjoint(w.vpart)) or " \
        f"(w.pend_v and not {em.name(busy)}.isdisjoint(w.pend_v))"
    if not wide:
        i = saddr.index
        slow += f" or SD[{i}] & SD[{i + 1}] != {M32} or " \
            f"(w.pend_s and ({i} in w.pend_s or {i + 1} in w.pend_s))"
    em.line("if not _hi: pass")
    em.line(f"elif {slow}: {_bound_step(em)}")
    em.line("else:")
    if wide:
        em.line(f"    _a = V[_lo:_hi, {c}:{c + 2}].copy().view(_U64)[:, 0]")
        if offset:
            em.line(f"    _a += {em.name(np.uint64(offset & M64))}")
        return f"VD[_lo:_hi, {c}:{c + 2}]"
    i = saddr.index
    em.line(f"    _a = V[_lo:_hi, {c}].astype(_U64)")
    em.line(f"    _a += _U64(((S[{i}] | S[{i + 1}] << 32) + {offset}) & {M64})")
    return f"VD[_lo:_hi, {c}]"


def emit_global_store(em: RunCode, inst: Inst, op: MemOp) -> bool:
    """Emit a GLOBAL store of whole registers (or a byte, short or D16_HI half of one)
    inside the current segment; False: not this form."""
    if not (op.width % 4 == 0 or op.width < 4):
        return False
    vaddr, data, saddr = (*inst.operands, OFF, OFF, OFF)[:3]
    if data.kind not in (OpKind.VGPR, OpKind.AGPR):
        return False
    d = vcol(data)
    n = max(1, op.width // 4)
    dcols = frozenset(range(d, d + n))
    adef = _address(em, vaddr, saddr, signed_offset(inst), dcols, dcols, full=False)
    if adef is None:
        return False
    em.line(f"    if b'\\x00' in {adef}.tobytes() or "
            f"b'\\x00' in VD[_lo:_hi, {d}:{d + n}].tobytes(): {_bound_step(em)}")
    em.line("    else:")
    raw = f"np.ascontiguousarray(V[_lo:_hi, {d}:{d + n}]).view(np.uint8)"
    if op.width < 4:
        start = 2 if op.d16 == "hi" else 0
        raw += f"[:, {start}:{start + op.width}]"
    em.line(f"        w.mem.glob.write(_a, {raw}, {inst.mnemonic!r})")
    if em.env.stores_in_vmcnt:
        em.line("        w.vm_queue.append(_STORED)")
    return True


def window_to_wait(em: RunCode, counter: int, names: Callable[[Opnd], bool]) -> bool:
    """Whether the load at `em.at` is covered by the first `s_waitcnt` after it in the run,
    with its `counter` (0: vmcnt, 1: lgkmcnt) at 0, and no instruction in between has an
    operand `names` picks (one of the load's destinations); `*movrel*`, which indexes
    registers by M0, ends the window."""
    for inst in em.insts[em.at + 1:]:
        if not inst.share_key or inst.halves:
            return False
        name = ALIASES.get(inst.opcode, inst.opcode)
        if name == "S_WAITCNT":
            return waitcnt_counts(inst, em.env)[counter] == 0
        if "MOVREL" in name or any(names(o) for o in inst.operands):
            return False
    return False


def _window(em: RunCode, cols: frozenset[int]) -> bool:
    """`window_to_wait` of a load to the VGPR columns `cols`, covered by vmcnt 0."""
    return window_to_wait(em, 0, lambda o: o.kind in (OpKind.VGPR, OpKind.AGPR) and not
                          cols.isdisjoint(range(vcol(o), vcol(o) + max(o.count, 1))))


def emit_global_load(em: RunCode, inst: Inst, op: MemOp) -> bool:
    """Emit a GLOBAL load of whole dwords whose covering wait ends its window (`_window`)
    as an entry of `Wave.deferred`; False: it runs as its bound step between segments."""
    if op.width % 4 or op.d16 or not inst.operands:
        return False
    dst, vaddr, saddr = (*inst.operands, OFF, OFF, OFF)[:3]
    if dst.kind not in (OpKind.VGPR, OpKind.AGPR):
        return False
    d = vcol(dst)
    n = op.width // 4
    dcols = frozenset(range(d, d + n))
    if not _window(em, dcols):
        return False
    mark = len(em.body)
    adef = _address(em, vaddr, saddr, signed_offset(inst), dcols, dcols, full=True)
    if adef is None:
        del em.body[mark:]
        return False
    em.line(f"    if b'\\x00' in {adef}.tobytes(): {_bound_step(em)}")
    em.line(f"    else: w.deferred.append(({d}, w.mem.glob.read(_a, {op.width}, "
            f"{inst.mnemonic!r}).view(_U32).T, {em.name(all_defined(em.lanes, n))}, True, "
            "None))")
    em.deferred.append((d, n))
    return True


__all__ = ["emit_global_load", "emit_global_store"]
