"""Binding LDS instructions (DS) to closures: 32-bit addresses that wrap, one or two offsets
(the `*2*` forms), loads parked until `s_waitcnt lgkmcnt` (`bound.inflight`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.alu import Step
from rgpu_fuzz.sim.bound.inflight import issue_vector_load as _issue_vector_load
from rgpu_fuzz.sim.bound.inflight import span
from rgpu_fuzz.sim.bound.memdata import _check_addr, _store_bytes, _to_words, _vaddr32
from rgpu_fuzz.sim.bound.operands import Env, _forget, hazard, uninit, vcol
from rgpu_fuzz.sim.isa.inst import Inst, OpKind
from rgpu_fuzz.sim.semantics.memops import MemOp
from rgpu_fuzz.sim.state.halves import half_mask
from rgpu_fuzz.sim.state.wave import FULL, Pending, Wave

Memory = Any  # rgpu_fuzz.sim.launch.engine.LaunchMemory (avoids an import cycle)


def bind_ds(inst: Inst, op: MemOp, env: Env, mem: Memory) -> Step:
    ops = list(inst.operands)
    if op.store:
        addr_op, datas = ops[0], ops[1:]
        dst = None
    else:
        dst, addr_op, datas = ops[0], ops[1], []
    if op.pair:
        unit = op.width * (64 if op.stride64 else 1)
        offs = [int(inst.mods.get("offset0", 0)) * unit, int(inst.mods.get("offset1", 0)) * unit]
    else:
        m = inst.mods  # one 16-bit offset, which the DS format splits in two bytes
        offs = [int(m["offset"]) if "offset" in m else
                int(m.get("offset1", 0)) << 8 | int(m.get("offset0", 0))]
    lane_ids = np.arange(env.lanes)
    vector = (OpKind.VGPR, OpKind.AGPR)
    runs = op.store and addr_op.kind is OpKind.VGPR and len(datas) >= len(offs) and \
        all(x.kind in vector for x in datas[:len(offs)])
    acol = vcol(addr_op) if runs else -1
    n = max(1, op.width // 4)
    start = 2 if op.d16 == "hi" else 0
    data_cols = [vcol(x) for x in datas[:len(offs)]] if runs else []
    wraps = [np.uint64(off) for off in offs]
    low32 = np.uint64(0xFFFF_FFFF)

    def run_store(w: Wave, lo: int, hi: int) -> None:
        """`step`'s store for EXEC as one run of lanes `lo:hi` (`wave.span`) and data
        registers without partly defined lanes: slices, no mask; the same checks in the
        same order."""
        if w.pend_v and acol in w.pend_v:
            raise hazard(w, f"v{acol} used as an address before its load completed")
        if b"\x00" in w.vdef[lo:hi, acol].tobytes():
            raise uninit(w, f"{inst.mnemonic}: address from an undefined register")
        base = w.V[lo:hi, acol].astype(np.uint64)
        lds = w.mem.lds(w)
        for c, off in zip(data_cols, wraps, strict=True):
            if w.pend_v and any(k in w.pend_v for k in range(c, c + n)):
                raise hazard(w, f"v{c} stored before the s_waitcnt covering its load")
            if b"\x00" in w.vdef[lo:hi, c:c + n].tobytes():
                raise uninit(w, f"{inst.mnemonic}: stores a value derived from an "
                                "undefined register")
            raw = np.ascontiguousarray(w.V[lo:hi, c:c + n]).view(np.uint8)
            if op.width < 4:
                raw = raw[:, start:start + op.width]
            lds.write((base + off) & low32, raw, inst.mnemonic)
        w.lgkm_queue.append(Pending(vm=False, lgkm=True, smem=False, done=True))

    def step(w: Wave) -> None:
        e = w.exec
        if runs:
            lo, hi = (0, w.lanes) if w.exec_full else span(e)
            if hi == 0:
                return
            if lo >= 0 and not (w.vpart and any(c + k in w.vpart for c in data_cols
                                                for k in range(n))):
                return run_store(w, lo, hi)
        if not e.any():
            return
        a, d = _vaddr32(w, addr_op)
        _check_addr(w, d, inst)
        lanes = lane_ids if w.exec_full else lane_ids[e]
        # LDS addresses are 32-bit: base + offset wraps (LLVM folds a negative base into the
        # unsigned offset field and relies on it)
        base = (a if w.exec_full else a[e]).astype(np.uint64)
        lds = w.mem.lds(w)
        if op.store:
            for k, off in enumerate(offs):
                raw, defined = _store_bytes(w, vcol(datas[k]), op)
                if not w.exec_full:
                    raw, defined = raw[e], defined[e]
                if not bool(np.all(defined == 0xFF)):
                    raise uninit(w, f"{inst.mnemonic}: stores a value derived from an "
                                    "undefined register")
                lds.write((base + np.uint64(off)) & np.uint64(0xFFFF_FFFF), raw, inst.mnemonic)
            w.lgkm_queue.append(Pending(vm=False, lgkm=True, smem=False, done=True))
            return
        parts, oks = [], []
        for off in offs:
            data, ok = lds.read((base + np.uint64(off)) & np.uint64(0xFFFF_FFFF), op.width,
                                inst.mnemonic)
            words = _to_words(data, op)
            parts.append(words)
            oks.append(np.repeat(ok[:, None], words.shape[1], axis=1))
        words = np.concatenate(parts, axis=1)
        full = np.zeros((w.lanes, words.shape[1]), np.uint32)
        full[lanes] = words
        fdef = np.zeros(full.shape, bool)
        fdef[lanes] = np.concatenate(oks, axis=1)
        wmask = FULL if not op.d16 else half_mask(op.d16 == "hi")
        if w.vpart and not op.d16:  # a whole-dword load: earlier half-defined records go
            _forget(w, vcol(dst), full.shape[1])  # type: ignore[arg-type]
        _issue_vector_load(w, vcol(dst), full, fdef, vm=False, lgkm=True,  # type: ignore[arg-type]
                           wmask=wmask)
    return step
