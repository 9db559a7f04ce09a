"""Definedness below 32 bits in VGPRs: 16-bit halves (GFX11 true16 `v0.l`/`v0.h`, D16 loads
and stores on every target) and bytes (partial loads from a partly defined spill).

A VGPR lane is defined as a whole (`Wave.vdef`) or, where `vdef` is False, has the defined
bits listed in `Wave.vpart` (column → lane → bits; absent: none). These functions read and
write that state bit-exactly, so writing `v0.l` keeps `v0.h` as defined as it was, a
16-bit read of a defined half of a half-written register is defined, and a D16 load merges
its half into the register when it completes, whatever other load is in flight for the
other half (AMDGPU ISA: D16 loads write 16 bits and leave the rest of the VGPR)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rgpu_fuzz.sim.state.wave import Wave, mask_of, span

FULL = 0xFFFF_FFFF
LOW, HIGH = 0x0000_FFFF, 0xFFFF_0000
U32 = np.uint32


def half_mask(hi: bool) -> int:
    return HIGH if hi else LOW


def defined_bits(w: Wave, col: int) -> np.ndarray:
    """The defined bits of column `col`, per lane (uint32)."""
    out = np.where(w.vdef[:, col], U32(FULL), U32(0))
    part = w.vpart.get(col) if w.vpart else None
    if part:
        for lane, bits in part.items():
            if not w.vdef[lane, col]:
                out[lane] = bits
    return out


def bits_defined(w: Wave, col: int, mask: int) -> np.ndarray:
    """Lanes whose bits `mask` of column `col` are all defined."""
    if not w.vpart or col not in w.vpart:
        return w.vdef[:, col]
    return (defined_bits(w, col) & U32(mask)) == U32(mask)


_KEEP = {FULL: U32(0), LOW: U32(HIGH), HIGH: U32(LOW)}
"""The bits a write of `mask` keeps (`~mask`), for the masks written."""


def all_set(d: np.ndarray) -> bool:
    """Whether `d` (bool per lane, or uint32 defined bits per lane) is all defined; a bool
    vector's bytes hold a 0 where it is False."""
    if d.dtype == np.bool_:
        return b"\x00" not in d.tobytes()
    return bool((d == U32(FULL)).all())


def lanes_defined(column: np.ndarray, where: np.ndarray | None) -> bool:
    """Whether `column` (a `vdef` column) is True in the lanes `where` (None: all); EXEC's
    one run of lanes (`wave.span`) as a slice."""
    if where is not None:
        lo, hi = span(where) if where.dtype == np.bool_ else (-1, -1)
        if lo < 0:
            return bool(column[where].all())
        column = column[lo:hi]
    return b"\x00" not in column.tobytes()


def write_bits(w: Wave, col: int, value: Any, defined: Any, mask: int,
               where: np.ndarray | None) -> None:
    """Write the bits `mask` of `value` (uint32 per lane, already in place) into column
    `col` for the lanes `where` (None: all), with `defined` the defined bits of the new
    data (uint32 per lane) or defined lanes (bool); the other bits keep value and state."""
    old = w.V[:, col]
    v = np.asarray(value, U32)
    if mask == FULL:
        new = np.broadcast_to(v, old.shape)  # `(old & 0) | v`: nothing of `old` kept
    else:
        m = U32(mask)
        new = (old & _KEEP.get(mask, ~m)) | (v & m)
    d = np.asarray(defined)
    if not (w.vpart and col in w.vpart) and all_set(d) and \
            lanes_defined(w.vdef[:, col], where):
        # defined bits into lanes defined as a whole (a true16 write of a defined register,
        # a D16 load completing into one): every lane stays defined; only the value changes
        if where is None:
            old[...] = new
        else:
            np.copyto(old, new, where=where)
        return
    newdef = np.where(d, U32(FULL), U32(0)) if d.dtype == bool else d.astype(U32)
    if mask == FULL:
        bits = np.broadcast_to(newdef, old.shape)  # no bit of the old state kept
    else:
        bits = (defined_bits(w, col) & ~m) | (np.broadcast_to(newdef, old.shape) & m)
    lanes = w.full if where is None else where
    np.copyto(w.V[:, col], new, where=lanes)
    whole = bits == U32(FULL)
    np.copyto(w.vdef[:, col], whole, where=lanes)
    partial = lanes & ~whole & (bits != 0)
    part = w.vpart.get(col)
    if part is not None:
        # the written lanes no longer partly defined leave `part`: a pass over its few
        # entries against one lane mask, not over every written lane
        clear = mask_of(lanes & ~partial)
        for lane in [ln for ln in part if clear >> ln & 1]:
            del part[lane]
        if not part and not partial.any():
            del w.vpart[col]
    if partial.any():
        part = w.vpart.setdefault(col, {})
        idx = np.nonzero(partial)[0]
        part.update(zip(idx.tolist(), bits[idx].tolist(), strict=True))


def byte_bits(byte_defined: np.ndarray) -> np.ndarray:
    """Per-lane defined bits of dwords from per-byte definedness (lanes, 4 * n) → (lanes, n)."""
    b = byte_defined.reshape(byte_defined.shape[0], -1, 4).astype(U32)
    return (b[..., 0] * U32(0xFF) | b[..., 1] * U32(0xFF00) | b[..., 2] * U32(0xFF0000)
            | b[..., 3] * U32(0xFF00_0000))


def stored_bytes_defined(w: Wave, col: int, n: int, start: int, width: int) -> np.ndarray:
    """Per-lane definedness of a store's bytes `start..start+width` of columns
    `col..col+n-1` (every byte of each when `width` ≥ 4): (lanes, bytes) bool."""
    if not w.vpart or not any(c in w.vpart for c in range(col, col + n)):
        d: np.ndarray = np.asarray(w.vdef[:, col:col + n].all(axis=1))
        return np.repeat(d[:, None], width if width < 4 else 4 * n, axis=1)
    bits = np.stack([defined_bits(w, c) for c in range(col, col + n)], axis=1)
    per_byte = np.asarray(((bits[..., None] >> (U32(8) * np.arange(4, dtype=U32)))
                           & U32(0xFF)) == 0xFF)
    flat = per_byte.reshape(len(bits), 4 * n)
    return flat if width >= 4 else flat[:, start:start + width]
