"""Vector memory's per-lane data, shared by the GLOBAL/FLAT/SCRATCH, MUBUF and DS binders:
register dwords to stored bytes and loaded bytes back to dwords, each with its definedness, and
the VGPR address operands with their hazard and definedness checks."""

from __future__ import annotations

import numpy as np

from rgpu_fuzz.sim.bound.operands import hazard, uninit, vcol
from rgpu_fuzz.sim.isa.inst import Inst, Opnd
from rgpu_fuzz.sim.semantics.memops import MemOp
from rgpu_fuzz.sim.state.wave import Wave


def _to_words(raw: np.ndarray, op: MemOp, old: np.ndarray | None = None) -> np.ndarray:
    """Loaded bytes (lanes, width) → register dwords (lanes, n), extending sub-dword data; a
    D16 load's value sits in its half (the other half is merged at completion, `complete`)."""
    width = op.width
    if width >= 4:
        return np.ascontiguousarray(raw).view(np.uint32)
    val = raw[:, 0].astype(np.uint32) if width == 1 else \
        np.ascontiguousarray(raw).view(np.uint16)[:, 0].astype(np.uint32)
    if op.signed:
        sh = np.uint32(32 - 8 * width)
        val = ((val << sh).view(np.int32) >> (32 - 8 * width)).view(np.uint32)
    if op.d16 == "hi":
        val = val << np.uint32(16)
    elif op.d16:
        val = val & np.uint32(0xFFFF)
    return val[:, None]


def _store_bytes(w: Wave, col: int, op: MemOp) -> tuple[np.ndarray, np.ndarray]:
    n = max(1, op.width // 4)
    if w.pend_v and any(c in w.pend_v for c in range(col, col + n)):
        raise hazard(w, f"v{col} stored before the s_waitcnt covering its load")
    words = np.ascontiguousarray(w.V[:, col:col + n])
    raw = words.view(np.uint8).reshape(w.lanes, 4 * n)
    start = 2 if op.d16 == "hi" else 0
    if op.width < 4:
        raw = raw[:, start:start + op.width]
    masks = _byte_definedness(w, col, n)
    return raw, masks[:, start:start + op.width] if op.width < 4 else masks


def _vaddr64(w: Wave, op: Opnd) -> tuple[np.ndarray, np.ndarray]:
    col = vcol(op)
    if w.pend_v and (col in w.pend_v or col + 1 in w.pend_v):
        raise hazard(w, f"v[{col}:{col + 1}] used as an address before its load completed")
    return (np.ascontiguousarray(w.V[:, col:col + 2]).view(np.uint64)[:, 0],
            w.vdef[:, col] & w.vdef[:, col + 1])


def _vaddr32(w: Wave, op: Opnd) -> tuple[np.ndarray, np.ndarray]:
    col = vcol(op)
    if w.pend_v and col in w.pend_v:
        raise hazard(w, f"v{col} used as an address before its load completed")
    return w.V[:, col], w.vdef[:, col]


def _check_addr(w: Wave, defined: np.ndarray, inst: Inst) -> None:
    if not bool(np.all(defined[w.exec])):
        raise uninit(w, f"{inst.mnemonic}: address from an undefined register")


def _byte_definedness(w: Wave, col: int, n: int) -> np.ndarray:
    """The defined bits of each byte (uint8 masks, lanes × 4n) of the dwords `col ...`, for
    a store to private memory: lanes that `Wave.vpart` holds as partly defined keep their
    defined bits (an O0 SGPR lane mask spilled by v_writelane, then the VGPR spilled to
    scratch, must come back as it went)."""
    out = np.where(np.repeat(w.vdef[:, col:col + n], 4, axis=1), np.uint8(0xFF), np.uint8(0))
    for j in range(n):
        for lane, bits in w.vpart.get(col + j, {}).items():
            for k in range(4):
                out[lane, 4 * j + k] = (bits >> (8 * k)) & 0xFF
    return out


def _dword_definedness(w: Wave, col: int, lanes: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """Per-dword definedness (lanes, n) of a dword load from each byte's defined bits;
    lanes whose dwords come back partly defined get `Wave.vpart` entries (only private
    memory has a per-bit shadow, so only spills and copies through the stack make them)."""
    n = bits.shape[1] // 4
    per = bits.reshape(len(lanes), n, 4)
    full = (per == 0xFF).all(axis=2)
    some = (per != 0).any(axis=2) & ~full
    if w.vpart or some.any():
        for j in range(n):
            part = w.vpart.get(col + j)
            if part:
                for lane in lanes.tolist():
                    part.pop(lane, None)
            for i in np.nonzero(some[:, j])[0].tolist():
                mask = sum(int(per[i, j, k]) << (8 * k) for k in range(4))
                w.vpart.setdefault(col + j, {})[int(lanes[i])] = mask
    return full
