"""Which lane each lane reads: the lane maps of DPP16, DPP8, `v_permlane16/x16_b32`, the
permlane swaps and `ds_swizzle_b32`, as numpy index vectors (-1: no such lane, "out of range").

Sources. DPP_CTRL values and their meaning: the GFX9/CDNA ISA guides' "DPP_CTRL
Enumeration" (CDNA3 and CDNA2 ISA, "VOP_DPP"; the same table in LLVM's
AMDGPUModifierSyntax "dpp_ctrl", "dpp16_ctrl", "dpp32_ctrl"):

| DPP_CTRL | name | lane l of a row of 16 (r = l & ~15, i = l & 15) reads |
|---|---|---|
| 0x000-0x0FF | quad_perm:[a,b,c,d] | (l & ~3) + sel[l & 3], sel = ctrl's 2-bit fields, low first |
| 0x101-0x10F | row_shl:n | l + n if i + n < 16 |
| 0x111-0x11F | row_shr:n | l - n if i >= n |
| 0x121-0x12F | row_ror:n | r + (i - n) mod 16 |
| 0x130 | wave_shl:1 (GFX9) | l + 1 (lane 63: none) |
| 0x134 | wave_rol:1 (GFX9) | (l + 1) mod 64 |
| 0x138 | wave_shr:1 (GFX9) | l - 1 (lane 0: none) |
| 0x13C | wave_ror:1 (GFX9) | (l - 1) mod 64 |
| 0x140 | row_mirror | r + 15 - i |
| 0x141 | row_half_mirror | (l & ~7) + 7 - (l & 7) |
| 0x142 | row_bcast:15 (GFX9) | rows 1-3 read lane 16·row - 1 ("15th thread ... to next row") |
| 0x143 | row_bcast:31 (GFX9) | rows 2-3 read lane 31 ("thread 31 to rows 2 and 3") |
| 0x150-0x15F | row_share:n (GFX10+), row_newbcast:n (GFX90A+) | r + n |
| 0x160-0x16F | row_xmask:n (GFX10+) | r + (i ^ n) |

Rows that row_bcast does not name (row 0 for :15, rows 0-1 for :31) read no lane: the
guides say only where the thread is broadcast to, so those rows are treated as reading out of
range (LLVM masks them off with row_mask 0xA / 0xC wherever it emits the broadcasts). Any other
DPP_CTRL value is reserved: `ValueError`, so the binder reports the instruction unsupported.

DPP8 (RDNA3 ISA §7.7 "DPP8"; AMDGPUModifierSyntax "dpp8_sel"): lane l reads
(l & ~7) + sel[l & 7], sel the eight 3-bit fields of LANE_SEL, lane 0's lowest.

`v_permlane16_b32` / `v_permlanex16_b32` (RDNA3 ISA pseudocode, from AMD's ISA XML):
lanesel = {S2, S1}; lane 16·row + i reads 16·row' + lanesel[4i+3:4i], row' = row for
permlane16 and {row[1], ~row[0]} (the other row of the pair) for permlanex16.

`v_permlane16_swap_b32` / `v_permlane32_swap_b32` (CDNA4 ISA pseudocode, from AMD's CDNA4
ISA XML): lanes l and l ^ 16 (l ^ 32) trade values, SRC0's lane of each pair being the one in
an even row (the lower half) and VDST's the one in an odd row (the upper half):
`VGPR[pass*32 + lane][SRC0] <-> VGPR[pass*32 + lane + 16][VDST]` (lane 0-15, pass 0-1) and
`VGPR[lane][SRC0] <-> VGPR[lane + 32][VDST]` (lane 0-31).

`ds_swizzle_b32` (GFX9 and RDNA3 ISA "DS_SWIZZLE_B32"; the offset fields as LLVM's
`swizzle(...)` syntax encodes them, SIDefines.h `Swizzle`): offset[15:8] = 0x80 is QDMode,
lane l reads (l & ~3) + offset[2(l&3)+1 : 2(l&3)]; offset[15] = 0 is BitMode, within each
group of 32 lane i reads ((i & and_mask) | or_mask) ^ xor_mask with and_mask = offset[4:0],
or_mask = offset[9:5], xor_mask = offset[14:10]. FFT (0xE000-) and rotate (0xC000-) modes
are not modelled (`ValueError`).
"""

from __future__ import annotations

import numpy as np

ROW = 16


def _lanes(n: int) -> np.ndarray:
    return np.arange(n, dtype=np.int64)


def dpp16_sources(ctrl: int, lanes: int, gfx9: bool) -> np.ndarray:
    """The lane each of `lanes` lanes reads under DPP_CTRL `ctrl` (-1: none). `gfx9`:
    the GFX9/CDNA table (wave shifts, row_bcast, row_newbcast); else GFX10+ (row_share,
    row_xmask)."""
    lane = _lanes(lanes)
    row, i = lane & ~(ROW - 1), lane & (ROW - 1)
    none = np.full(lanes, -1, np.int64)
    if 0 <= ctrl <= 0xFF:
        sel = np.array([(ctrl >> (2 * k)) & 3 for k in range(4)], np.int64)
        return (lane & ~3) + sel[lane & 3]
    n = ctrl & 0xF
    if 0x101 <= ctrl <= 0x10F:
        return np.where(i + n < ROW, lane + n, none)
    if 0x111 <= ctrl <= 0x11F:
        return np.where(i >= n, lane - n, none)
    if 0x121 <= ctrl <= 0x12F:
        return row + (i - n) % ROW
    if ctrl == 0x140:
        return row + ROW - 1 - i
    if ctrl == 0x141:
        return (lane & ~7) + 7 - (lane & 7)
    if gfx9 and ctrl in (0x130, 0x134, 0x138, 0x13C):
        if ctrl == 0x130:
            return np.where(lane + 1 < lanes, lane + 1, none)
        if ctrl == 0x134:
            return (lane + 1) % lanes
        if ctrl == 0x138:
            return lane - 1          # lane 0 reads -1: none
        return (lane - 1) % lanes
    if gfx9 and ctrl == 0x142:
        return np.where(row >= ROW, row - 1, none)
    if gfx9 and ctrl == 0x143:
        return np.where(row >= 2 * ROW, np.int64(31), none)
    if 0x150 <= ctrl <= 0x15F:
        return row + n
    if not gfx9 and 0x160 <= ctrl <= 0x16F:
        return row + (i ^ n)
    raise ValueError(f"DPP_CTRL {ctrl:#x} is reserved on this target")


def dpp8_sources(lane_sel: int, lanes: int) -> np.ndarray:
    """DPP8: lane l reads (l & ~7) + the 3-bit field l & 7 of LANE_SEL."""
    lane = _lanes(lanes)
    sel = np.array([(lane_sel >> (3 * k)) & 7 for k in range(8)], np.int64)
    return (lane & ~7) + sel[lane & 7]


def write_enabled(row_mask: int, bank_mask: int, lanes: int) -> np.ndarray:
    """Lanes a DPP16 instruction may write: ROW_MASK bit k enables lanes 16k..16k+15,
    BANK_MASK bit b the lanes whose index in their row is 4b..4b+3; a disabled lane is not
    written (CDNA3 ISA "VOP_DPP"; AMDGPUModifierSyntax "row_mask", "bank_mask")."""
    lane = _lanes(lanes)
    rows = (row_mask >> (lane >> 4)) & 1
    banks = (bank_mask >> ((lane & 15) >> 2)) & 1
    return (rows & banks).astype(bool)


def permlane16_sources(sel1: int, sel2: int, lanes: int, cross: bool) -> np.ndarray:
    """`v_permlane16_b32` (`cross` False) / `v_permlanex16_b32` (True): lanesel =
    {S2, S1}; lane 16·row + i reads 16·row' + lanesel[4i+3:4i]."""
    lanesel = (sel2 & 0xFFFF_FFFF) << 32 | (sel1 & 0xFFFF_FFFF)
    lane = _lanes(lanes)
    row, i = lane >> 4, lane & 15
    pick = np.array([(lanesel >> (4 * k)) & 15 for k in range(16)], np.int64)
    other = (row & 2) | (~row & 1) if cross else row
    return other * ROW + pick[i]


def permlane_swap_sources(distance: int, lanes: int) -> tuple[np.ndarray, np.ndarray]:
    """`v_permlane16_swap_b32` (`distance` 16) / `v_permlane32_swap_b32` (32): the partner
    each lane trades with (l ^ distance) and whether the lane is SRC0's side of its pair
    (bit `distance` of l clear: an even row, the lower half) rather than VDST's."""
    lane = _lanes(lanes)
    return lane ^ distance, (lane & distance) == 0


def swizzle_sources(offset: int, lanes: int) -> np.ndarray:
    """`ds_swizzle_b32`'s lane map for the 16-bit offset (QDMode and BitMode)."""
    lane = _lanes(lanes)
    if offset >> 8 == 0x80:
        sel = np.array([(offset >> (2 * k)) & 3 for k in range(4)], np.int64)
        return (lane & ~3) + sel[lane & 3]
    if offset & 0x8000 == 0:
        and_mask, or_mask, xor_mask = offset & 31, (offset >> 5) & 31, (offset >> 10) & 31
        i = lane & 31
        return (lane & ~31) + (((i & and_mask) | or_mask) ^ xor_mask)
    raise ValueError(f"ds_swizzle offset {offset:#06x}: FFT and rotate modes are not "
                     "modelled")


__all__ = ["dpp8_sources", "dpp16_sources", "permlane16_sources", "permlane_swap_sources",
           "swizzle_sources", "write_enabled"]
