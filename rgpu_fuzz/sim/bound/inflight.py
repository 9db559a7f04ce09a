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

from rgpu_fuzz.sim.bound.operands import hazard
from rgpu_fuzz.sim.state.halves import write_bits
from rgpu_fuzz.sim.state.wave import EXEC, FULL, Pending, Wave, mask_of, span

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


def _whole_dwords(bits: np.ndarray, m: np.ndarray | None) -> np.ndarray | None:
    """Which lanes of the defined bits `bits` (uint32 per lane) are wholly defined, where
    every lane in `m` (None: all) is wholly defined or wholly undefined; else None (some
    lane there is partly defined: `halves.write_bits` gives it a `Wave.vpart` entry)."""
    whole = bits == U32_FULL
    mixed = ~whole & (bits != 0)
    if m is not None:
        mixed &= m
    return None if mixed.any() else whole


U32_FULL = np.uint32(FULL)


def _write_defined_bits(w: Wave, c: int, data: np.ndarray, m: np.ndarray | None,
                        whole: np.ndarray | None = None) -> None:
    """`halves.write_bits(w, c, data, bits, FULL, m)` where the defined bits `bits` of every
    lane in `m` (None: all) are all or none: the value and `whole` (None: every lane
    defined) in those lanes, whose partly defined entries go."""
    if m is None:
        w.V[:, c] = data
        w.vdef[:, c] = True if whole is None else whole
    else:
        np.copyto(w.V[:, c], data, where=m)
        if whole is None:
            w.vdef[:, c] |= m
        else:
            np.copyto(w.vdef[:, c], whole, where=m)
    part = w.vpart.get(c)
    if part is not None:
        em = -1 if m is None else mask_of(m)  # -1: every lane
        for lane in [ln for ln in part if em >> ln & 1]:
            del part[lane]
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
        if EXEC in p.sregs or EXEC + 1 in p.sregs:
            w.refresh_exec()  # the lane vector follows EXEC (`Wave.refresh_exec`)
    data = p.vdata
    if data is None:
        return
    pend = w.pend_v
    m = p.vmask
    vdef = p.vdef
    assert vdef is not None
    plain = p.wmask == FULL and vdef.dtype == bool
    col = p.vcol
    n = data.shape[1]
    if plain and pend.get(col) is p and (n == 1 or all(pend.get(c) is p
                                                      for c in range(col + 1, col + n))):
        # the common case, as the loop below writes it: every destination still ours,
        # whole dwords, definedness per lane; all columns at once
        end = col + n
        if m is None:
            w.V[:, col:end] = data
            w.vdef[:, col:end] = vdef
        else:
            lo, hi = span(m)
            if lo >= 0:
                w.V[lo:hi, col:end] = data[lo:hi]
                w.vdef[lo:hi, col:end] = vdef[lo:hi]
            else:
                np.copyto(w.V[:, col:end], data, where=m[:, None])
                np.copyto(w.vdef[:, col:end], vdef, where=m[:, None])
        for c in range(col, end):
            del pend[c]
        return
    superseded: list[Pending] = []
    for j in range(data.shape[1]):
        c = p.vcol + j
        newer = pend.get(c)
        if newer is p:
            if vdef is _ALL_BITS.get(vdef.shape) and p.wmask == FULL:
                _write_defined_bits(w, c, data[:, j], m)
            elif p.wmask == FULL and vdef.dtype == np.uint32 and \
                    (whole := _whole_dwords(vdef[:, j], m)) is not None:
                _write_defined_bits(w, c, data[:, j], m, whole)
            elif not plain:
                write_bits(w, c, data[:, j], vdef[:, j], p.wmask, m)
            elif m is None:
                w.V[:, c] = data[:, j]
                w.vdef[:, c] = vdef[:, j]
            else:
                np.copyto(w.V[:, c], data[:, j], where=m)
                np.copyto(w.vdef[:, c], vdef[:, j], where=m)
            del pend[c]
        elif newer is not None and any(o is p for o in newer.older):
            # its half, or its lanes, are still ours (`issue_vector_load`); dropped from
            # `older` after all its columns (a 64-bit load kept for its lanes has two)
            write_bits(w, c, data[:, j], vdef[:, j], p.wmask, m)
            superseded.append(newer)
    for newer in superseded:
        _drop(newer.older, p)


def _drop(queue: list[Pending], p: Pending) -> bool:
    """Remove `p` itself from `queue`; whether it was there. By identity: `Pending` is a
    dataclass compared field by field, so `in` and `remove` would compare a different
    record to the same registers by its data arrays and raise (numpy's truth value of an
    array), as three D16 loads (lo, hi, lo) in flight to one VGPR did in `older`. (The
    queues hold vm+lgkm records in issue order, so there `p` comes first among its equals;
    identity keeps that from mattering.)"""
    for k, q in enumerate(queue):
        if q is p:
            del queue[k]
            return True
    return False


def wait(w: Wave, vmcnt: int, lgkmcnt: int) -> None:
    q = w.vm_queue
    if len(q) > vmcnt:
        # the oldest leave the queue together, then complete in issue order (completing
        # one reads no queue)
        k = len(q) - vmcnt
        done = q[:k]
        del q[:k]
        for p in done:
            if p is STORED:
                continue  # a store: nothing to complete, in no other queue
            complete(w, p)
            if p.lgkm:
                _drop(w.lgkm_queue, p)
    q = w.lgkm_queue
    if not q:
        return
    if lgkmcnt == 0:
        for p in q:
            complete(w, p)
            if p.vm:
                _drop(w.vm_queue, p)
        q.clear()
        return
    # only in-order (DS) returns can be counted on with lgkmcnt > 0
    while len(q) > lgkmcnt and not q[0].smem:
        p = q.pop(0)
        complete(w, p)
        if p.vm:
            _drop(w.vm_queue, p)


def drain(w: Wave) -> None:
    wait(w, 0, 0)


def wait_split(w: Wave, loadcnt: int | None, dscnt: int | None, kmcnt: int | None) -> None:
    """GFX12's split counters (RDNA4 ISA "S_WAIT_LOADCNT" ... "S_WAIT_KMCNT"; AMDGPUUsage
    memory model GFX12): LOADcnt counts vector-memory loads and returning atomics (the
    vm queue: stores are in STOREcnt, not tracked, as vscnt), DScnt LDS operations, KMcnt
    scalar-memory loads (the lgkm queue's DS and SMEM records). A FLAT access counts in
    LOADcnt and DScnt both, as it counts in vmcnt and lgkmcnt before GFX12. `None`: that
    counter is not waited for."""
    if loadcnt is not None:
        wait(w, loadcnt, 1 << 30)
    q = w.lgkm_queue
    if dscnt is not None and q:
        # LDS returns in order: the oldest DS records beyond `dscnt` complete
        ds = [p for p in q if not p.smem]
        for p in ds[:max(0, len(ds) - dscnt)]:
            _drop(q, p)
            complete(w, p)
            if p.vm:
                _drop(w.vm_queue, p)
    if kmcnt == 0 and q:
        # scalar loads return out of order: only a wait for zero says which have landed
        for p in [p for p in q if p.smem]:
            _drop(q, p)
            complete(w, p)


SPLIT_WAITS: dict[str, tuple[str, ...]] = {
    "S_WAIT_LOADCNT": ("load",), "S_WAIT_DSCNT": ("ds",), "S_WAIT_KMCNT": ("km",),
    "S_WAIT_LOADCNT_DSCNT": ("load", "ds"), "S_WAIT_STORECNT_DSCNT": ("store", "ds")}
"""GFX12 wait instructions that wait for a tracked counter, by the counters their SIMM16
names; the combined forms put the first counter in bits 13:8 and DScnt in bits 5:0 (as
LLVM's SIInsertWaitcnts encodes them). S_WAIT_STORECNT/SAMPLECNT/BVHCNT/EXPCNT wait for
nothing the simulator keeps in flight: they are no-ops (`bound.program.NOPS`)."""


def split_wait_counts(name: str, simm16: int) -> tuple[int | None, int | None, int | None]:
    """(loadcnt, dscnt, kmcnt) one GFX12 wait instruction waits for (None: not that one)."""
    kinds = SPLIT_WAITS[name]
    values = (simm16 >> 8 & 0x3F, simm16 & 0x3F) if len(kinds) == 2 else (simm16,)
    got = dict(zip(kinds, values, strict=True))
    return got.get("load"), got.get("ds"), got.get("km")


def _covers(new: np.ndarray | None, old: np.ndarray | None) -> bool:
    """Whether a load under EXEC lanes `new` writes every lane a load under `old` writes
    (None: every lane)."""
    if new is None:
        return True
    return bool(new.all()) if old is None else not bool((old & ~new).any())


def issue_vector_load(w: Wave, col: int, data: np.ndarray, defined: np.ndarray,
                      vm: bool, lgkm: bool, wmask: int = FULL) -> None:
    """Park a vector load of `data` (lanes, n dwords) for `col ...`. `defined`: defined
    lanes (bool) or defined bits (uint32) per destination dword."""
    n = data.shape[1]
    pend = w.pend_v
    # EXEC itself, not a copy: the EXEC vector is read-only and replaced when EXEC changes
    p = Pending(vm=vm, lgkm=lgkm, smem=False, vcol=col, vdata=data, vdef=defined,
                vmask=None if w.exec_full else w.exec, wmask=wmask)
    if pend:
        for c in range(col, col + n):
            q = pend.get(c)
            if q is not None:
                if q.vm != vm:
                    raise hazard(w, f"v{c} loaded again before the previous load completed")
                # an older load that writes bits this one does not (the other half of a
                # D16 pair, or a whole dword before a D16 load: campaign
                # bucket c232097e70), or lanes this one does not (issued under another
                # EXEC: a gfx1100 O3 `global_load_d16_u8 v10` for lane 1, then
                # `global_load_b64 v[10:11]` for lane 0, one waitcnt for both; bucket
                # b08b6336a9) still writes them when it completes
                if not q.done and (q.wmask & ~wmask & FULL
                                   or not _covers(p.vmask, q.vmask)):
                    p.older.append(q)
                # and so do the loads `q` kept (they complete before this one, so any
                # bits this one also writes end up as this one leaves them)
                p.older.extend(o for o in q.older if not o.done and
                               all(o is not k for k in p.older))
    for c in range(col, col + n):
        pend[c] = p
    if vm:
        w.vm_queue.append(p)
    if lgkm:
        w.lgkm_queue.append(p)
