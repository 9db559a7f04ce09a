"""Binding atomic read-modify-writes: GLOBAL/FLAT atomics (FLAT dispatched by aperture to
LDS, private or global memory, as for FLAT loads and stores: `bound.mem._aperture_split`)
and the LDS (DS) atomics with and without return.

Lanes of one wave apply in ascending lane order. The ISA manuals make each atomic
indivisible per address (CDNA3 ISA §10.3 "Global atomics" and §11 "LDS": the read, the
operation and the write of one element happen as one), but do not order the lanes of one
instruction that hit the same address; any serial order is one valid execution of the
memory model (AMDGPUUsage "Memory Model": atomics to one location have a single total
modification order), and ascending lane order is the one this simulator picks.

The cache-policy bits (`glc`/`slc`/`dlc`, `sc0`/`sc1`/`nt`) are decoded
(`memops.cache_policy`) and change nothing on a one-wave-at-a-time model, except that the
GLC/SC0 bit of a GLOBAL/FLAT atomic is its "return the pre-op value" bit; a destination
operand without that bit (or the reverse) is refused as undecodable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.alu import Step, Unbindable
from rgpu_fuzz.sim.bound.inflight import issue_vector_load
from rgpu_fuzz.sim.bound.memdata import _check_addr, _vaddr32, _vaddr64
from rgpu_fuzz.sim.bound.operands import Env, hazard, scalar_source, uninit, vcol
from rgpu_fuzz.sim.bound.scratch import signed_offset
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics.memops import ATOMIC_OPS, AtomicOp, DsAtomicOp, cache_policy
from rgpu_fuzz.sim.state.wave import Pending, Wave

Memory = Any  # rgpu_fuzz.sim.launch.engine.LaunchMemory (avoids an import cycle)
Rmw = Callable[[int, int, int, int], int]
LOW32 = 0xFFFF_FFFF


def _le(value: int, nbytes: int) -> np.ndarray:
    return np.frombuffer(value.to_bytes(nbytes, "little"), np.uint8)[None, :]


def _data(w: Wave, inst: Inst, e: np.ndarray, col: int, n: int) -> np.ndarray:
    """The data registers `col..col+n` of every lane as uint64 dwords, checked: none waits
    for a load, every active lane defined (atomic data is a use, docs/simulator.md)."""
    if w.pend_v and any(c in w.pend_v for c in range(col, col + n)):
        raise hazard(w, f"v{col} used by an atomic before its load completed")
    if not bool(np.all(w.vdef[e, col:col + n])):
        raise uninit(w, f"{inst.mnemonic}: data from an undefined register")
    return w.V[:, col:col + n].astype(np.uint64)


def _operands(data: np.ndarray, lanes: np.ndarray, first: int, words: int) -> list[int]:
    """The operand of each of `lanes` held in `words` dwords from column `first` of `data`
    (low dword first), as ints."""
    value = data[lanes, first]
    if words == 2:
        value = value | data[lanes, first + 1] << np.uint64(32)
    out: list[int] = value.tolist()
    return out


def _result(w: Wave, lanes: np.ndarray, olds: list[int], oks: list[bool] | None,
            words: int) -> tuple[np.ndarray, np.ndarray]:
    """The pre-op values `olds` of `lanes` as a load's (lanes, words) dwords, low dword
    first, and their definedness (`oks` per lane; None: all defined)."""
    out = np.zeros((w.lanes, words), np.uint32)
    odef = np.zeros((w.lanes, words), bool)
    value = np.array(olds, np.uint64)
    out[lanes, 0] = value & np.uint64(LOW32)
    if words == 2:
        out[lanes, 1] = value >> np.uint64(32)
    odef[lanes] = True if oks is None else np.array(oks, bool)[:, None]
    return out, odef


def _rmw_private(w: Wave, lane: int, offset: int, nbytes: int, fn: Rmw, src: int, cmp: int,
                 bits: int, what: str) -> tuple[int, bool]:
    """One lane's read-modify-write at its private `offset`: (old value, whether it was
    defined). Private memory's per-bit shadow makes the new value undefined when the old
    one was."""
    lanes = np.array([lane], np.int64)
    offs = np.array([offset], np.int64)
    raw, bits_ok = w.private.read_bits(lanes, offs, nbytes, what)
    old = int.from_bytes(raw.tobytes(), "little")
    ok = bool(np.all(bits_ok == 0xFF))
    w.private.write(lanes, offs, _le(fn(old, src, cmp, bits), nbytes),
                    np.full((1, nbytes), ok), what)
    return old, ok


def _rmw_lanes(w: Wave, flat: bool, lanes: np.ndarray, addrs: list[int], srcs: list[int],
               cmps: list[int], fn: Rmw, bits: int, what: str) -> tuple[list[int],
                                                                      list[bool] | None]:
    """Each lane's read-modify-write in ascending lane order: its old value, and whether
    each was defined (None: all were). Global memory and LDS have no definedness shadow; a
    lane faults as a one-lane `read` then `write` would (`AddressSpace.element`,
    `Lds.element`: an LDS read out of range would be 0 and undefined, and its write faults).
    `flat`: an address in the shared aperture is LDS at its low 32 bits, in the private
    aperture the lane's private offset at its low 32 bits, else global."""
    nbytes = bits // 8
    glob = w.mem.glob.element
    shared_hi = w.mem.shared_hi if flat else -1
    private_hi = w.mem.private_hi if flat else -1
    lds = None
    olds: list[int] = []
    oks: list[bool] | None = None
    for i, addr in enumerate(addrs):
        hi = addr >> 32
        if hi == shared_hi:
            if lds is None:
                lds = w.mem.lds(w).element
            b = lds(addr & LOW32, nbytes, what)
        elif hi == private_hi:
            if oks is None:
                oks = [True] * i
            old, ok = _rmw_private(w, int(lanes[i]), addr & LOW32, nbytes, fn, srcs[i],
                                   cmps[i], bits, what)
            olds.append(old)
            oks.append(ok)
            continue
        else:
            b = glob(addr, nbytes, what)
        old = int.from_bytes(b, "little")
        b[:] = fn(old, srcs[i], cmps[i], bits).to_bytes(nbytes, "little")
        olds.append(old)
        if oks is not None:
            oks.append(True)
    return olds, oks


def bind_atomic(inst: Inst, op: AtomicOp, env: Env, mem: Memory) -> Step:
    """GLOBAL/FLAT atomics, lane by lane in lane order. A FLAT address in the shared
    aperture is LDS at its low 32 bits, in the private aperture the lane's private offset
    at its low 32 bits, else global (AMDGPUUsage "Address Spaces": generic → LDS/private by
    aperture; the same split as FLAT loads and stores). The pre-op value is returned with
    the GLC/SC0 bit (LLVM then prints a destination)."""
    ops = list(inst.operands)
    returns = len(ops) == 4 or (len(ops) == 3 and ops[2].kind is not OpKind.SGPR
                                and ops[2].kind is not OpKind.OFF)
    if returns != cache_policy(inst.mods).returns:
        raise Unbindable(f"{inst.mnemonic}: destination and GLC/SC0 bit disagree")
    if returns:
        dst, vaddr, vdata, saddr = [*ops, Opnd(OpKind.OFF, 0, 0)][:4]
    else:
        dst = None
        vaddr, vdata, saddr = [*ops, Opnd(OpKind.OFF, 0, 0)][:3]
    words = op.bits // 32
    fn = ATOMIC_OPS[op.op]
    bits = op.bits
    flat = op.segment == "flat"
    has_saddr = saddr.kind is OpKind.SGPR
    sget, sdef = scalar_source(saddr, 64, env) if has_saddr else ((lambda w: 0),
                                                                  (lambda w: True))
    counted = env.stores_in_vmcnt  # a store's place in vmcnt's queue (GFX9 only)
    offset = signed_offset(inst)
    cmpswap = op.op == "CMPSWAP"
    n = words * (2 if cmpswap else 1)

    def step(w: Wave) -> None:
        e = w.exec
        if not e.any():
            return
        if has_saddr:
            a, d = _vaddr32(w, vaddr)
            addrs = a.astype(np.uint64) + np.uint64(sget(w))
            if not sdef(w):
                raise uninit(w, f"{inst.mnemonic}: address from an undefined register")
        else:
            addrs, d = _vaddr64(w, vaddr)
        addrs = addrs + np.uint64(offset & (2**64 - 1))
        _check_addr(w, d, inst)
        data = _data(w, inst, e, vcol(vdata), n)
        lanes = np.flatnonzero(e)
        srcs = _operands(data, lanes, 0, words)
        cmps = _operands(data, lanes, words, words) if cmpswap else [0] * len(srcs)
        olds, oks = _rmw_lanes(w, flat, lanes, addrs[lanes].tolist(), srcs, cmps, fn, bits,
                               inst.mnemonic)
        if dst is None:
            if counted:
                w.vm_queue.append(Pending(vm=True, lgkm=flat, smem=False, done=True))
            return
        out, odef = _result(w, lanes, olds, oks, words)
        issue_vector_load(w, vcol(dst), out, odef, vm=True, lgkm=flat)
    return step


def bind_ds_atomic(inst: Inst, op: DsAtomicOp, env: Env, mem: Memory) -> Step:
    """An LDS atomic (`ds_add_u32 vaddr, vdata`, `ds_cmpst_rtn_b32 vdst, vaddr, vdata0,
    vdata1`...): each active lane's element at vaddr + offset (32 bits, wrapping as for DS
    loads and stores, `bound.ds`) read, changed by `ATOMIC_OPS[op.op]` and written, lane by
    lane in lane order; the `_RTN_` forms return the pre-op value at the covering
    `s_waitcnt lgkmcnt`, the others count in lgkmcnt like a DS store (CDNA3 ISA §11, RDNA3
    ISA §12 "LDS instructions")."""
    if inst.mods.get("gds", 0):
        raise Unbindable(f"{inst.mnemonic}: GDS")
    ops = list(inst.operands)
    dst = ops[0] if op.returns else None
    addr_op, *datas = ops[1:] if op.returns else ops
    m = inst.mods
    offset = int(m["offset"]) if "offset" in m else \
        int(m.get("offset1", 0)) << 8 | int(m.get("offset0", 0))
    words = op.bits // 32
    fn = ATOMIC_OPS[op.op]
    bits = op.bits
    two = op.op in ("CMPSWAP", "MSKOR")
    if len(datas) != (2 if two else 1):
        raise Unbindable(f"{inst.mnemonic}: {len(datas)} data operands")
    cols = [vcol(x) for x in datas]
    # the GFX9 DS_CMPST forms take the compare value first (`DsAtomicOp.swapped`)
    src_col, cmp_col = (cols[1], cols[0]) if op.swapped else (cols[0], cols[-1])

    def step(w: Wave) -> None:
        e = w.exec
        if not e.any():
            return
        a, d = _vaddr32(w, addr_op)
        _check_addr(w, d, inst)
        src_data = _data(w, inst, e, src_col, words)
        cmp_data = _data(w, inst, e, cmp_col, words) if two else src_data
        lanes = np.flatnonzero(e)
        srcs = _operands(src_data, lanes, 0, words)
        cmps = _operands(cmp_data, lanes, 0, words) if two else srcs
        element = w.mem.lds(w).element
        nbytes = 4 * words
        what = inst.mnemonic
        olds: list[int] = []
        for addr, src, cmp in zip(a[lanes].tolist(), srcs, cmps, strict=True):
            b = element((addr + offset) & LOW32, nbytes, what)
            old = int.from_bytes(b, "little")
            b[:] = fn(old, src, cmp, bits).to_bytes(nbytes, "little")
            olds.append(old)
        if dst is None:
            w.lgkm_queue.append(Pending(vm=False, lgkm=True, smem=False, done=True))
            return
        out, odef = _result(w, lanes, olds, None, words)
        issue_vector_load(w, vcol(dst), out, odef, vm=False, lgkm=True)
    return step
