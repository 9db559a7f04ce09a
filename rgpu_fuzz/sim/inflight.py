"""Loads in flight: issued, parked in a `Pending` record, written at the `s_waitcnt` that
covers them.

A load does not write its destination when it issues: its data is read from memory then,
parked, and written at the `s_waitcnt` that covers it (vmcnt for vector memory, lgkmcnt for
SMEM and DS, both for FLAT; CDNA3 ISA §4.4 "Data dependency resolution"). Until then its
destination registers are marked pending (`Wave.pend_v`, `Wave.pend_s`), and reading one
is `sim-waitcnt-hazard`. Vector memory returns in issue order, so `vmcnt(N)` completes all
but the N newest; scalar loads may return out of order, so only `lgkmcnt(0)` is taken to
cover one.
"""

from __future__ import annotations

import numpy as np

from rgpu_fuzz.sim.halves import write_bits
from rgpu_fuzz.sim.operands import hazard
from rgpu_fuzz.sim.wave import FULL, Pending, Wave

STORED = Pending(vm=True, lgkm=False, smem=False, done=True)
"""What a GLOBAL or SCRATCH store leaves in the vmcnt queue: an entry that completes
nothing (the store wrote memory when it issued), shared: `wait` only counts and drops it."""


_ALL_BITS: dict[tuple[int, int], np.ndarray] = {}


def all_bits(lanes: int, n: int) -> np.ndarray:
    """A read-only (lanes, n) uint32 array of all-ones: the defined bits of a load whose
    every byte is defined, kept as bits (a MUBUF load): `complete` settles it as
    `halves.write_bits` would, without its per-lane work."""
    got = _ALL_BITS.get((lanes, n))
    if got is None:
        got = _ALL_BITS[(lanes, n)] = np.full((lanes, n), FULL, np.uint32)
        got.flags.writeable = False
    return got


def _write_defined_bits(w: Wave, c: int, data: np.ndarray, m: np.ndarray | None) -> None:
    """`halves.write_bits(w, c, data, <all bits defined>, FULL, m)`: the value and
    "defined" in the lanes `m` (None: all), whose partly defined entries go."""
    if m is None:
        w.V[:, c] = data
        w.vdef[:, c] = True
    else:
        np.copyto(w.V[:, c], data, where=m)
        w.vdef[:, c] |= m
    part = w.vpart.get(c)
    if part is not None:
        for lane in (range(w.lanes) if m is None else np.nonzero(m)[0].tolist()):
            part.pop(lane, None)
        if not part:
            del w.vpart[c]


def complete(w: Wave, p: Pending) -> None:
    """Write a completed load's data into its destination (where no newer load to the same
    registers superseded it)."""
    if p.done:
        return
    p.done = True
    if p.sregs:
        for i, (k, v) in enumerate(zip(p.sregs, p.svalues, strict=True)):
            if w.pend_s.get(k) is p:
                w.S[k] = v
                w.sdef[k] = FULL if p.sdefs is None else p.sdefs[i]
                del w.pend_s[k]
    data = p.vdata
    if data is None:
        return
    pend = w.pend_v
    m = p.vmask
    vdef = p.vdef
    assert vdef is not None
    plain = p.wmask == FULL and vdef.dtype == bool
    for j in range(data.shape[1]):
        c = p.vcol + j
        newer = pend.get(c)
        if newer is p:
            if vdef is _ALL_BITS.get(vdef.shape) and p.wmask == FULL:
                _write_defined_bits(w, c, data[:, j], m)
            elif not plain:
                write_bits(w, c, data[:, j], vdef[:, j], p.wmask, m)
            elif m is None:
                w.V[:, c] = data[:, j]
                w.vdef[:, c] = vdef[:, j]
            else:
                np.copyto(w.V[:, c], data[:, j], where=m)
                np.copyto(w.vdef[:, c], vdef[:, j], where=m)
            del pend[c]
        elif newer is not None and p in newer.older:
            newer.older.remove(p)  # its half is still ours to write
            write_bits(w, c, data[:, j], vdef[:, j], p.wmask, m)


def wait(w: Wave, vmcnt: int, lgkmcnt: int) -> None:
    q = w.vm_queue
    while len(q) > vmcnt:
        p = q.pop(0)
        complete(w, p)
        if p.lgkm and p in w.lgkm_queue:
            w.lgkm_queue.remove(p)
    q = w.lgkm_queue
    if not q:
        return
    if lgkmcnt == 0:
        for p in q:
            complete(w, p)
            if p.vm and p in w.vm_queue:
                w.vm_queue.remove(p)
        q.clear()
        return
    # only in-order (DS) returns can be counted on with lgkmcnt > 0
    while len(q) > lgkmcnt and not q[0].smem:
        p = q.pop(0)
        complete(w, p)
        if p.vm and p in w.vm_queue:
            w.vm_queue.remove(p)


def drain(w: Wave) -> None:
    wait(w, 0, 0)


def issue_vector_load(w: Wave, col: int, data: np.ndarray, defined: np.ndarray,
                      vm: bool, lgkm: bool, wmask: int = FULL) -> None:
    """Park a vector load of `data` (lanes, n dwords) for `col ...`. `defined`: defined
    lanes (bool) or defined bits (uint32) per destination dword."""
    n = data.shape[1]
    pend = w.pend_v
    if pend:
        for j in range(n):
            q = pend.get(col + j)
            if q is not None and q.vm != vm:
                raise hazard(w, f"v{col + j} loaded again before the previous load completed")
    p = Pending(vm=vm, lgkm=lgkm, smem=False, vcol=col, vdata=data, vdef=defined,
                vmask=None if w.exec_full else w.exec.copy(), wmask=wmask)
    for j in range(n):
        if pend:
            q = pend.get(col + j)
            if q is not None and not q.done and not q.wmask & wmask:
                p.older.append(q)
        pend[col + j] = p
    if vm:
        w.vm_queue.append(p)
    if lgkm:
        w.lgkm_queue.append(p)
