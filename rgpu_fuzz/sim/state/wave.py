"""One wave's architectural state, as numpy vectors over its lanes.

Scalar registers live in one list indexed by the operand encoding (s0..s101, flat_scratch
102-103, xnack_mask 104-105, vcc 106-107, ttmp 108-123, m0 124, exec 126-127), so an
instruction's operand field is the index. VGPRs and AGPRs share one `(lanes, 512)` uint32
array (AGPR n at column 256 + n) so that a 64- or 128-bit operand is a contiguous slice of
each lane's row. Beside each register file a definedness shadow (`docs/simulator.md`,
"Definedness").
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from rgpu_fuzz.sim.state.regfile import RegViews, give, take

FULL = 0xFFFF_FFFF
VCC = 106
M0 = 124
EXEC = 126
FLAT_SCRATCH = 102
AGPR_BASE = 256
N_SCALAR = 256

_MASK_CACHE: dict[int, dict[int, np.ndarray]] = {}
"""Lane count → lane mask → its bool vector (by count first: no key tuple to build)."""


def lanes_of(mask: int, lanes: int) -> np.ndarray:
    """The bool vector of a lane mask (cached: few distinct masks occur in one launch)."""
    by_mask = _MASK_CACHE.get(lanes)
    if by_mask is None:
        by_mask = _MASK_CACHE[lanes] = {}
    got = by_mask.get(mask)
    if got is None:
        if len(by_mask) > 4096:
            by_mask.clear()
        raw = np.frombuffer(mask.to_bytes(8, "little"), np.uint8)
        got = np.unpackbits(raw, bitorder="little")[:lanes].astype(bool)
        got.flags.writeable = False
        by_mask[mask] = got
    return got


_MASK_OF: dict[bytes, int] = {}
_BOOL = np.dtype(bool)


def mask_of(lanes: np.ndarray) -> int:
    """The lane mask of a bool vector (cached by its bytes, as `lanes_of`)."""
    if lanes.dtype != _BOOL:
        return int.from_bytes(np.packbits(lanes, bitorder="little").tobytes(), "little")
    key = lanes.tobytes()
    got = _MASK_OF.get(key)
    if got is None:
        if len(_MASK_OF) > 4096:
            _MASK_OF.clear()
        got = _MASK_OF[key] = int.from_bytes(np.packbits(lanes, bitorder="little").tobytes(),
                                             "little")
    return got


@dataclass(slots=True)
class Pending:
    """A load issued and not yet waited for: what it will write when it completes."""

    vm: bool
    lgkm: bool
    smem: bool
    sregs: tuple[int, ...] = ()
    svalues: tuple[int, ...] = ()
    sdefs: tuple[int, ...] | None = None
    """Defined bits per scalar destination (None: all; a read past a kernarg segment)."""
    vcol: int = -1
    vdata: np.ndarray | None = None
    vdef: np.ndarray | None = None
    vmask: np.ndarray | None = None
    done: bool = False
    wmask: int = 0xFFFF_FFFF
    """The bits of each destination dword the load writes (a D16 load: one half)."""
    older: list[Pending] = field(default_factory=list)
    """Earlier loads in flight to the other half of the same VGPR (D16 lo and hi pairs)."""


@dataclass(slots=True)
class Wave:
    lanes: int
    group: int
    index: int
    S: list[int] = field(default_factory=lambda: [0] * N_SCALAR)
    sdef: list[int] = field(default_factory=lambda: [0] * N_SCALAR)
    """Defined bits of each scalar register (memcheck-style, per bit: lane masks are built
    with AND/OR from partly undefined loop masks at O0)."""
    V: np.ndarray = field(init=False)
    vdef: np.ndarray = field(init=False)
    vpart: dict[int, dict[int, int]] = field(default_factory=dict)
    """Lanes of VGPR columns holding a partly defined 32-bit value (column → lane → defined
    bits), for which `vdef` says False: SGPR spills by v_writelane carry loop masks whose
    high bits were never defined, and they must come back as they went."""
    exec: np.ndarray = field(init=False)
    exec_full: bool = True
    exec_bits: int = field(init=False)
    """EXEC as the lane mask `exec` is made from (set with it by `refresh_exec` only)."""
    lane_mask: int = field(init=False)
    """(1 << lanes) - 1."""
    scc: int = 0
    scc_def: bool = False
    pc: int = 0
    ended: bool = False
    at_barrier: bool = False
    vm_queue: list[Pending] = field(default_factory=list)
    lgkm_queue: list[Pending] = field(default_factory=list)
    pend_s: dict[int, Pending] = field(default_factory=dict)
    pend_v: dict[int, Pending] = field(default_factory=dict)
    private: Any = None
    deferred: list[Any] = field(default_factory=list)
    """Loads of a fused run's window not yet written (`fused.scratch`): (column, rows, defined,
    EXEC full, EXEC) each."""
    scratch_views: Any = None
    """(private, its data and shadow as dword rows): `bound.mem`'s uniform scratch path."""
    mem: Any = None
    full: np.ndarray = field(init=False)
    Vflat: memoryview = field(init=False)
    """`V` as one flat memoryview (lane * N_VECTOR + column): a single element reads as a
    Python int and writes several times faster than through numpy indexing (the lane moves
    of SGPR spills, `rgpu_fuzz.sim.bound.scalar_steps`)."""
    dflat: memoryview = field(init=False)
    """`vdef` the same way (elements are bools)."""
    views: RegViews = field(init=False)
    """Per-register views of `V` and `vdef` (`rgpu_fuzz.sim.state.regfile`): fused runs'
    operands."""

    def __post_init__(self) -> None:
        self.V, self.vdef, self.views = take(self.lanes)
        self.Vflat = self.V.reshape(-1).data
        self.dflat = self.vdef.reshape(-1).data
        self.full = np.ones(self.lanes, bool)
        self.exec = self.full
        self.lane_mask = self.exec_bits = (1 << self.lanes) - 1

    def __getstate__(self) -> dict[str, Any]:
        """Every field but the memoryviews, which can be neither pickled nor copied (tests
        deep-copy waves), and the register views, whose copies would not alias the copied
        arrays: `__setstate__` makes both again over the new arrays."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _VIEWS}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)
        self.Vflat = self.V.reshape(-1).data
        self.dflat = self.vdef.reshape(-1).data
        self.views = RegViews(self.V, self.vdef)

    def release(self) -> None:
        """Give the register file back to the pool (`regfile.take`): the launch is done with
        this wave, and nothing reads its registers again."""
        give((self.V, self.vdef, self.views))

    def set_exec(self, mask: int) -> None:
        """Write EXEC (both halves) and refresh the lane vector (`exec` and `exec_full`
        follow `exec_bits` alone: nothing to refresh where the mask is the same)."""
        S = self.S
        S[EXEC] = mask & 0xFFFF_FFFF
        S[EXEC + 1] = (mask >> 32) & 0xFFFF_FFFF
        self.sdef[EXEC] = self.sdef[EXEC + 1] = FULL
        mask &= self.lane_mask
        if mask != self.exec_bits:
            self.refresh_exec(mask)

    def refresh_exec(self, mask: int | None = None) -> None:
        """Make `exec`, `exec_full` and `exec_bits` from EXEC, or from `mask` when the caller
        has it (EXEC's lanes, no bit above them)."""
        if mask is None:
            mask = (self.S[EXEC] | self.S[EXEC + 1] << 32) & self.lane_mask
        self.exec_bits = mask
        if mask == self.lane_mask:
            self.exec_full = True
            self.exec = self.full
        else:
            self.exec_full = False
            self.exec = lanes_of(mask, self.lanes)

    @property
    def exec_mask(self) -> int:
        return (self.S[EXEC] | self.S[EXEC + 1] << 32) & self.lane_mask


_VIEWS = frozenset({"Vflat", "dflat", "views"})


_SPANS: dict[int, tuple[np.ndarray, int, int]] = {}


def span(e: np.ndarray) -> tuple[int, int]:
    """The lanes of the lane vector `e` as one run `[lo, hi)` (`hi == 0`: no lane), or
    `(-1, -1)` where they are not contiguous. A partial EXEC is nearly always one run (a
    block of fewer threads than the wave, or a loop's remaining lanes), and a run is
    written with slices, several times cheaper in numpy than a boolean mask. Cached by
    the array's identity for read-only arrays: EXEC vectors are `wave.lanes_of`'s cached,
    read-only arrays, replaced rather than written when EXEC changes."""
    got = _SPANS.get(id(e))
    if got is not None and got[0] is e:
        return got[1], got[2]
    idx = np.flatnonzero(e)
    if not len(idx):
        lo = hi = 0
    elif int(idx[-1]) - int(idx[0]) + 1 == len(idx):
        lo, hi = int(idx[0]), int(idx[-1]) + 1
    else:
        lo = hi = -1
    if not e.flags.writeable:
        if len(_SPANS) > 4096:
            _SPANS.clear()
        _SPANS[id(e)] = (e, lo, hi)
    return lo, hi
