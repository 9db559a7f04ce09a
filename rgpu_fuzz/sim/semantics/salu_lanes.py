"""Scalar rows the lane loops of wave operations need beyond `salu._table`: LLVM's
iterative wave reduction (`llvm.amdgcn.wave.reduce.*`, and its other strategies on LLVM 22)
walks the active lanes with `s_ff1_i32_b64` and clears each with `s_bitset0_b64`.

Rows as plain tuples (shape, destination bits, source bits, fn), made `SOp`s by
`salu.SALU`'s registration: S_BITSET0/1_B64 (CDNA3 ISA "SOP1 Instructions": D.u64[S0.u32[5:0]]
= 0 / 1; the other bits of D kept; SCC not written)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

LANE_SALU: dict[str, tuple[str, int, tuple[int, ...], Callable[..., Any]]] = {
    "S_BITSET0_B64": ("bitset", 64, (32,), lambda a, d: (d & ~(1 << (a & 63)), None)),
    "S_BITSET1_B64": ("bitset", 64, (32,), lambda a, d: (d | (1 << (a & 63)), None)),
}

__all__ = ["LANE_SALU"]
