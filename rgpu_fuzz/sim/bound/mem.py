"""Binding vector memory instructions (GLOBAL, FLAT, SCRATCH, MUBUF) to closures; their
atomics are `bound.atomic`'s (re-exported here); scalar memory (SMEM) is `bound.smem`'s,
LDS (DS) `bound.ds`'s, the per-lane data and address helpers they share `bound.memdata`'s.

Loads park their data until the `s_waitcnt` that covers them (`rgpu_fuzz.sim.bound.inflight`);
uniform-address SCRATCH accesses (O0 spills) take the row-copy steps of
`rgpu_fuzz.sim.bound.scratch`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.alu import Step, Unbindable
from rgpu_fuzz.sim.bound.atomic import bind_atomic
from rgpu_fuzz.sim.bound.inflight import STORED as _STORED
from rgpu_fuzz.sim.bound.inflight import complete, drain, span, wait
from rgpu_fuzz.sim.bound.inflight import issue_vector_load as _issue_vector_load
from rgpu_fuzz.sim.bound.memdata import (
    _byte_definedness,
    _check_addr,
    _dword_definedness,
    _store_bytes,
    _to_words,
    _vaddr32,
    _vaddr64,
)
from rgpu_fuzz.sim.bound.operands import Env, _forget, hazard, scalar_source, uninit, vcol
from rgpu_fuzz.sim.bound.scratch import (
    all_defined,
    buffer_rows,
    row_access,
    scratch_form,
    signed_offset,
    uniform_buffer,
    uniform_scratch,
)
from rgpu_fuzz.sim.common.fault import Fault, FaultKind, SimStop
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics.memops import MemOp
from rgpu_fuzz.sim.state.halves import half_mask
from rgpu_fuzz.sim.state.wave import FULL, Pending, Wave

__all__ = ["bind_atomic", "bind_buffer", "bind_vmem", "complete", "drain", "wait"]

Memory = Any  # rgpu_fuzz.sim.launch.engine.LaunchMemory (avoids an import cycle)
FULL64 = (1 << 64) - 1
Addresses = Callable[[Wave], tuple[np.ndarray, np.ndarray]]
"""Per-lane addresses and whether each is defined."""
RunAddresses = Callable[[Wave, int, int], np.ndarray]
"""The addresses of the lanes `lo:hi`, checked."""


def _aperture_split(mem: Memory, addrs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hi = addrs >> np.uint64(32)
    return hi == np.uint64(mem.shared_hi), hi == np.uint64(mem.private_hi)


def bind_vmem(inst: Inst, op: MemOp, env: Env, mem: Memory) -> Step:
    """GLOBAL, FLAT and SCRATCH loads and stores."""
    ops = list(inst.operands)
    seg = op.segment
    offset = signed_offset(inst)
    if op.store:
        vaddr, vdata, saddr = (ops + [Opnd(OpKind.OFF, 0, 0)] * 3)[:3]
        dst = None
    else:
        dst, vaddr, saddr = (ops + [Opnd(OpKind.OFF, 0, 0)] * 3)[:3]
        vdata = None
    if seg == "scratch" and not inst.mods.get("sve", 1) and vaddr.kind is not OpKind.OFF:
        vaddr = Opnd(OpKind.OFF, 0, 0)  # SVE=0: the VGPR address field is not used (CDNA3 §10.1)
    has_saddr = saddr.kind is OpKind.SGPR
    sget, sdef = scalar_source(saddr, 64 if seg == "global" else 32, env) if has_saddr \
        else ((lambda w: 0), (lambda w: True))
    counted = env.stores_in_vmcnt  # a store's place in vmcnt's queue (GFX9 only)
    addresses = _vmem_addresses(inst, seg, offset, vaddr, has_saddr, sget, sdef)
    general = _vmem_general(inst, op, env, dst, vdata, counted)

    def step(w: Wave) -> None:
        e = w.exec
        if not w.exec_full and not e.any():
            return
        addrs, adef = addresses(w)
        _check_addr(w, adef, inst)
        general(w, e, addrs)

    vaddr_col = vcol(vaddr) if vaddr.kind is OpKind.VGPR else -1
    run_addresses = _run_addresses(inst, offset, vaddr_col, has_saddr, sget, sdef)
    whole = op.width % 4 == 0 and not op.d16
    if seg == "global" and op.store and (op.width % 4 == 0 or op.width < 4):
        data_cols = tuple(range(vcol(vdata), vcol(vdata) + max(1, op.width // 4)))  # type: ignore[arg-type]
        return _global_store(inst, op, counted, data_cols, vaddr_col, step, addresses,
                             run_addresses)
    if seg == "global" and (whole or (op.width < 4 and not op.d16)):
        data_cols = tuple(range(vcol(dst), vcol(dst) + max(1, op.width // 4)))  # type: ignore[arg-type]
        return _global_load(inst, op, data_cols, vaddr_col, step, addresses, run_addresses)
    form = scratch_form(inst, op, env, d16=True)
    if form is not None:
        return uniform_scratch(inst, op, step, sget, sdef, offset, form.col, form.sreg,
                               based=form.saddr is not None, counted=counted)

    return step


def _vmem_addresses(inst: Inst, seg: str, offset: int, vaddr: Opnd, has_saddr: bool,
                    sget: Callable[[Wave], int], sdef: Callable[[Wave], bool]) -> Addresses:
    """`bind_vmem`'s per-lane addresses and their definedness, by segment and address form."""

    def addresses(w: Wave) -> tuple[np.ndarray, np.ndarray]:
        if seg == "scratch":
            if vaddr.kind is OpKind.OFF:
                a = np.zeros(w.lanes, np.uint32)
                d = np.ones(w.lanes, bool)
            else:
                a, d = _vaddr32(w, vaddr)
            if not sdef(w):
                raise uninit(w, f"{inst.mnemonic}: address from an undefined register")
            return (a.astype(np.int64) + sget(w) + offset) & 0xFFFF_FFFF, d
        if has_saddr:
            a, d = _vaddr32(w, vaddr)
            if not sdef(w):
                raise uninit(w, f"{inst.mnemonic}: address from an undefined register")
            return a.astype(np.uint64) + np.uint64(sget(w)) + np.uint64(offset & (2**64 - 1)), d
        a, d = _vaddr64(w, vaddr)
        return a + np.uint64(offset & (2**64 - 1)), d

    return addresses


def _run_addresses(inst: Inst, offset: int, vaddr_col: int, has_saddr: bool,
                   sget: Callable[[Wave], int], sdef: Callable[[Wave], bool]) -> RunAddresses:
    """`bind_vmem`'s addresses of a GLOBAL access for a run of lanes (its fast steps)."""
    wrap = np.uint64(offset & (2**64 - 1))

    def run_addresses(w: Wave, lo: int, hi: int) -> np.ndarray:
        """`addresses` of a GLOBAL access for the lanes `lo:hi` (EXEC as one run,
        `wave.span`), with `_check_addr`'s check: the same checks in the same order."""
        c = vaddr_col
        if has_saddr:
            if w.pend_v and c in w.pend_v:
                raise hazard(w, f"v{c} used as an address before its load completed")
            if not sdef(w):
                raise uninit(w, f"{inst.mnemonic}: address from an undefined register")
            a = w.V[lo:hi, c].astype(np.uint64)
            a += np.uint64((sget(w) + offset) & FULL64)
            d = w.vdef[lo:hi, c]
        else:
            if w.pend_v and (c in w.pend_v or c + 1 in w.pend_v):
                raise hazard(w, f"v[{c}:{c + 1}] used as an address before its load "
                                "completed")
            a = w.V[lo:hi, c:c + 2].copy().view(np.uint64)[:, 0]
            if offset:
                a += wrap
            d = w.vdef[lo:hi, c:c + 2]
        if b"\x00" in d.tobytes():
            raise uninit(w, f"{inst.mnemonic}: address from an undefined register")
        return a

    return run_addresses


def _vmem_general(inst: Inst, op: MemOp, env: Env, dst: Opnd | None, vdata: Opnd | None,
                  counted: bool) -> Callable[[Wave, np.ndarray, np.ndarray], None]:
    """`bind_vmem`'s general access of the lanes in EXEC at their addresses, routed by
    segment and aperture."""
    seg = op.segment
    lane_ids = np.arange(env.lanes, dtype=np.int64)

    def general(w: Wave, e: np.ndarray, addrs: np.ndarray) -> None:
        lanes = lane_ids if w.exec_full else lane_ids[e]
        act = addrs if w.exec_full else addrs[e]
        if op.store:
            raw, defined = _store_bytes(w, vcol(vdata), op)  # type: ignore[arg-type]
            if seg in ("scratch", "flat") and w.vpart and op.width >= 4:
                defined = _byte_definedness(w, vcol(vdata), op.width // 4)  # type: ignore[arg-type]
            if not w.exec_full:
                raw, defined = raw[e], defined[e]
            _route_store(w, w.mem, seg, lanes, act, raw, defined, inst)
            if counted:
                w.vm_queue.append(Pending(vm=True, lgkm=seg == "flat", smem=False,
                                          done=True))
            return
        col = vcol(dst)  # type: ignore[arg-type]
        if w.vpart and not op.d16 and op.width >= 4:  # whole dwords: stale half records go
            _forget(w, col, op.width // 4)
        raw, bits = _route_load(w, w.mem, seg, lanes, act, op.width, inst)
        rdef = _dword_definedness(w, col, lanes, bits) if op.width >= 4 else \
            (bits == 0xFF).all(axis=1)
        words = _to_words(raw, op)
        full = np.zeros((w.lanes, words.shape[1]), np.uint32)
        fdef = np.zeros((w.lanes, words.shape[1]), rdef.dtype)
        full[lanes] = words
        fdef[lanes] = rdef[:, None] if rdef.ndim == 1 else rdef
        wmask = FULL if not op.d16 else half_mask(op.d16 == "hi")
        _issue_vector_load(w, col, full, fdef, vm=True, lgkm=seg == "flat", wmask=wmask)

    return general


def _global_store(inst: Inst, op: MemOp, counted: bool, data_cols: tuple[int, ...],
                  vaddr_col: int, step: Step, addresses: Addresses,
                  run_addresses: RunAddresses) -> Step:
    """`bind_vmem`'s step for a GLOBAL store of whole registers (or of a byte or short)."""
    start = 2 if op.d16 == "hi" else 0

    def global_store(w: Wave) -> None:
        """`step` for a GLOBAL store of whole registers none of which has partly defined
        lanes (`Wave.vpart`): the data's definedness is then `vdef` itself, and the checks
        run in `step`'s order (address, load hazard, undefined data, bounds)."""
        full = w.exec_full
        e = w.exec
        lo, hi = (0, w.lanes) if full else span(e)
        if hi == 0:
            return
        if w.vpart and any(c in w.vpart for c in data_cols):
            return step(w)
        if lo >= 0 and vaddr_col >= 0:
            # EXEC as one run of lanes: slices, no mask
            addrs = run_addresses(w, lo, hi)
            if w.pend_v and any(c in w.pend_v for c in data_cols):
                raise hazard(w, f"v{data_cols[0]} stored before the s_waitcnt covering its "
                                "load")
            if b"\x00" in w.vdef[lo:hi, data_cols[0]:data_cols[-1] + 1].tobytes():
                raise uninit(w, f"{inst.mnemonic}: stores a value derived from an undefined "
                                "register")
            raw = np.ascontiguousarray(w.V[lo:hi, data_cols[0]:data_cols[-1] + 1]).view(
                np.uint8)
            if op.width < 4:
                raw = raw[:, start:start + op.width]
            w.mem.glob.write(addrs, raw, inst.mnemonic)
            if counted:
                w.vm_queue.append(_STORED)
            return
        addrs, adef = addresses(w)
        if not (adef.all() if full else adef[e].all()):
            raise uninit(w, f"{inst.mnemonic}: address from an undefined register")
        if w.pend_v and any(c in w.pend_v for c in data_cols):
            raise hazard(w, f"v{data_cols[0]} stored before the s_waitcnt covering its load")
        if full:
            ok = w.vdef[:, data_cols[0]:data_cols[-1] + 1].all()
            raw = w.V[:, data_cols[0]:data_cols[-1] + 1]
        else:
            ok = w.vdef[e, data_cols[0]:data_cols[-1] + 1].all()
            raw = w.V[e, data_cols[0]:data_cols[-1] + 1]
            addrs = addrs[e]
        if not ok:
            raise uninit(w, f"{inst.mnemonic}: stores a value derived from an undefined "
                            "register")
        raw = np.ascontiguousarray(raw).view(np.uint8)
        if op.width < 4:
            raw = raw[:, start:start + op.width]
        w.mem.glob.write(addrs, raw, inst.mnemonic)
        if counted:
            w.vm_queue.append(_STORED)

    return global_store


def _global_load(inst: Inst, op: MemOp, data_cols: tuple[int, ...], vaddr_col: int,
                 step: Step, addresses: Addresses, run_addresses: RunAddresses) -> Step:
    """`bind_vmem`'s step for a GLOBAL load of whole dwords (or of a byte or short,
    extended)."""

    def global_load(w: Wave) -> None:
        """`step` for a GLOBAL load of whole dwords into registers none of which has partly
        defined lanes: global memory has no definedness shadow, so the loaded lanes are
        defined, and the checks run in `step`'s order (address, bounds, load hazard)."""
        full = w.exec_full
        e = w.exec
        lo, hi = (0, w.lanes) if full else span(e)
        if hi == 0:
            return
        if w.vpart and any(c in w.vpart for c in data_cols):
            return step(w)
        n = len(data_cols)
        if lo >= 0 and vaddr_col >= 0:
            # EXEC as one run of lanes: slices, no mask; a byte or short zero- or
            # sign-extended as `general` does (`_to_words`)
            addrs = run_addresses(w, lo, hi)
            raw = w.mem.glob.read(addrs, op.width, inst.mnemonic)
            words = raw.view(np.uint32) if op.width >= 4 else _to_words(raw, op)
            if hi - lo == w.lanes:
                data = words
            else:
                data = np.zeros((w.lanes, n), np.uint32)
                data[lo:hi] = words
            _issue_vector_load(w, data_cols[0], data, all_defined(w.lanes, n), vm=True,
                               lgkm=False)
            return
        if op.width < 4:
            return step(w)
        addrs, adef = addresses(w)
        if not (adef.all() if full else adef[e].all()):
            raise uninit(w, f"{inst.mnemonic}: address from an undefined register")
        if full:
            data = w.mem.glob.read(addrs, op.width, inst.mnemonic).view(np.uint32)
        else:
            data = np.zeros((w.lanes, n), np.uint32)
            data[e] = w.mem.glob.read(addrs[e], op.width, inst.mnemonic).view(np.uint32)
        _issue_vector_load(w, data_cols[0], data, all_defined(w.lanes, n), vm=True, lgkm=False)

    return global_load


def _route_load(w: Wave, mem: Memory, seg: str, lanes: np.ndarray, addrs: np.ndarray,
                width: int, inst: Inst) -> tuple[np.ndarray, np.ndarray]:
    """(bytes, each byte's defined bits as uint8 masks)."""
    if seg == "scratch":
        return w.private.read_bits(lanes, addrs.astype(np.int64), width, inst.mnemonic)
    if seg == "flat":
        shared, private = _aperture_split(mem, addrs)
        if shared.any() or private.any():
            out = np.zeros((len(lanes), width), np.uint8)
            dd = np.full((len(lanes), width), 0xFF, np.uint8)
            g = ~(shared | private)
            if g.any():
                out[g] = mem.glob.read(addrs[g], width, inst.mnemonic)
            if shared.any():
                data, ok = mem.lds(w).read(addrs[shared] & np.uint64(0xFFFF_FFFF), width,
                                           inst.mnemonic)
                out[shared] = data
                dd[shared] = np.where(ok, np.uint8(0xFF), np.uint8(0))[:, None]
            if private.any():
                data, d = w.private.read_bits(lanes[private],
                                         (addrs[private] & np.uint64(0xFFFF_FFFF)).astype(
                                             np.int64), width, inst.mnemonic)
                out[private] = data
                dd[private] = d
            return out, dd
    return mem.glob.read(addrs, width, inst.mnemonic), np.full((len(lanes), width), 0xFF,
                                                              np.uint8)


def _route_store(w: Wave, mem: Memory, seg: str, lanes: np.ndarray, addrs: np.ndarray,
                 raw: np.ndarray, defined: np.ndarray, inst: Inst) -> None:
    if seg == "scratch":
        w.private.write(lanes, addrs.astype(np.int64), raw,
                        defined if defined.ndim == 2 else
                        np.repeat(defined[:, None], raw.shape[1], axis=1), inst.mnemonic)
        return
    if seg == "flat":
        shared, private = _aperture_split(mem, addrs)
        if private.any():
            w.private.write(lanes[private],
                            (addrs[private] & np.uint64(0xFFFF_FFFF)).astype(np.int64),
                            raw[private], defined[private] if defined.ndim == 2 else
                            np.repeat(defined[private, None], raw.shape[1], axis=1),
                            inst.mnemonic)
        rest = ~private
        if not bool(np.all(defined[rest] == 0xFF if defined.dtype == np.uint8
                           else defined[rest])):
            raise uninit(w, f"{inst.mnemonic}: stores a value derived from an undefined "
                            "register")
        if shared.any():
            mem.lds(w).write(addrs[shared] & np.uint64(0xFFFF_FFFF), raw[shared],
                             inst.mnemonic)
        g = rest & ~shared
        if g.any():
            mem.glob.write(addrs[g], raw[g], inst.mnemonic)
        return
    if not bool(np.all(defined == 0xFF if defined.dtype == np.uint8 else defined)):
        raise uninit(w, f"{inst.mnemonic}: stores a value derived from an undefined register")
    mem.glob.write(addrs, raw, inst.mnemonic)


def bind_buffer(inst: Inst, op: MemOp, env: Env, mem: Memory) -> Step:
    """MUBUF over the private segment buffer (the only buffer LLVM emits for our kernels:
    scratch on targets without architected flat scratch). The V# is read from the SGPRs and
    the address computed the way the hardware does for a swizzled, ADD_TID buffer
    (AMDGPUUsage "Private Segment Buffer"; CDNA3 ISA §9.1.5 "Swizzled Buffer Addressing"),
    then mapped back to (lane, private offset)."""
    ops = list(inst.operands)
    vdata, vaddr, srsrc, soff = (ops + [Opnd(OpKind.OFF, 0, 0)] * 4)[:4]
    offen = bool(inst.mods.get("offen", 0))
    if inst.mods.get("idxen", 0):
        raise Unbindable("idxen buffer addressing")
    ioff = int(inst.mods.get("offset", 0))
    rget, rdef = scalar_source(Opnd(OpKind.SGPR, srsrc.index, 2), 64, env)
    has_soff = soff.kind in (OpKind.SGPR, OpKind.INT, OpKind.BITS)
    sget, sdef = scalar_source(soff, 32, env) if has_soff else ((lambda w: 0), (lambda w: True))
    counted = env.stores_in_vmcnt  # a store's place in vmcnt's queue (GFX9 only)
    lane_ids = np.arange(env.lanes)
    access = row_access(op, vcol(vdata), bits=True, counted=counted)

    def step(w: Wave) -> None:
        e = w.exec
        if not e.any():
            return
        if not (rdef(w) and sdef(w)):
            raise uninit(w, f"{inst.mnemonic}: resource or offset undefined")
        base = rget(w) & 0xFFFF_FFFF_FFFF
        if not 0 <= base - w.mem.scratch_base < w.mem.scratch_span:
            raise SimStop(Fault(FaultKind.OOB_ACCESS, f"{inst.mnemonic}: buffer resource base "
                                f"{base:#x} is outside the private segment", w.pc))
        if offen:
            a, d = _vaddr32(w, vaddr)
            _check_addr(w, d, inst)
            voff = a.astype(np.int64)
            rel = base - w.mem.scratch_base + sget(w) - w.mem.wave_scratch_offset(w)
        else:
            rel = base - w.mem.scratch_base + sget(w) - w.mem.wave_scratch_offset(w)
            # one offset for every lane: with the wave's part of the segment a whole number
            # of swizzled rows away, lane l's bytes are its own private bytes at
            # rel / lanes + offset, the rows `bound.scratch` copies
            if rel % (4 * w.lanes) == 0 and access(w, rel // w.lanes + ioff):
                return
            voff = np.zeros(w.lanes, np.int64)
        lanes = lane_ids if w.exec_full else lane_ids[e]
        # the buffer offset is 32 bits: VGPR offset + instruction offset wraps (MI200/CDNA3
        # ISA "Buffer Addressing": buffer_offset = vgpr_offset + inst_offset; LLVM folds a
        # constant into `offset:` over a VGPR holding 0 - 4*i and relies on the wrap, and
        # GFX9 does not range-check private resources)
        total = ((voff if w.exec_full else voff[e]) + ioff) & 0xFFFF_FFFF
        # swizzle: element (4 bytes) index stride = lanes; soffset is added unswizzled
        addr = rel + (total // 4) * 4 * w.lanes + lanes * 4 + total % 4
        elem = addr // 4
        plane = (elem % w.lanes).astype(np.int64)
        poff = (elem // w.lanes) * 4 + addr % 4
        if op.store:
            raw, defined = _store_bytes(w, vcol(vdata), op)
            if w.vpart and op.width >= 4:  # partly defined lanes keep their bits
                defined = _byte_definedness(w, vcol(vdata), op.width // 4)
            if not w.exec_full:
                raw, defined = raw[e], defined[e]
            w.private.write(plane, poff, raw, defined, inst.mnemonic)
            if counted:
                w.vm_queue.append(Pending(vm=True, lgkm=False, smem=False, done=True))
            return
        raw, d = w.private.read_bits(plane, poff, op.width, inst.mnemonic)
        words = _to_words(raw, op)
        full = np.zeros((w.lanes, words.shape[1]), np.uint32)
        full[lanes] = words
        if op.width >= 4:
            # each dword's defined bits as the shadow holds them (a spilled, partly defined
            # SGPR lane mask comes back as it went: SCRATCH's `_dword_definedness`)
            fdef = np.zeros(full.shape, np.uint32)
            fdef[lanes] = np.ascontiguousarray(d).view(np.uint32)
        else:
            fdef = np.zeros(full.shape, bool)
            fdef[lanes] = (d == 0xFF).all(axis=1)[:, None]
        wmask = FULL if not op.d16 else half_mask(op.d16 == "hi")
        _issue_vector_load(w, vcol(vdata), full, fdef, vm=True, lgkm=False, wmask=wmask)

    form = uniform_buffer(env, offen, srsrc, soff)
    if form is None:
        return step
    return buffer_rows(inst, step, access, ioff, *form)

