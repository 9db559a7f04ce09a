"""The mutable state of the lanes that compiled closures run in lock step.

Every value is a numpy array with one entry per lane; which lanes take part is a boolean mask
passed to each closure. Lanes leave the current construct through three masks kept here:
`ret` (returned from the current function), `brk` and `cont` (left the current iteration of
the innermost loop). A lane in none of them is live.

The lanes are the threads of `groups` consecutive blocks (a "wave" of blocks; one block when
the launch runs block by block): lane `l` is thread `l % threads` of the wave's block
`l // threads`.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from rgpu_fuzz.interp.memory import SharedArray, Tracked
from rgpu_fuzz.interp.waves import WaveLayout
from rgpu_fuzz.targets import DEFAULT_WAVE_SIZE


class LaneState:
    """Registers of the lanes of one wave of blocks; one instance per wave."""

    __slots__ = (
        "block", "brk", "budget", "buffers", "cont", "deadline", "frame", "full", "groups",
        "gtid", "lane_ids", "lanes", "lens", "none", "prelude", "ret", "retval", "shared",
        "steps", "threads", "waves",
    )

    def __init__(self, threads: int, groups: int, budget: int,
                 deadline: float | None, wave_size: int = DEFAULT_WAVE_SIZE) -> None:
        self.threads = threads
        self.groups = groups
        self.lanes = lanes = threads * groups
        self.lane_ids = np.arange(lanes, dtype=np.intp)
        self.full = np.ones(lanes, dtype=bool)
        self.none = np.zeros(lanes, dtype=bool)
        self.full.flags.writeable = False
        self.none.flags.writeable = False
        self.budget = budget
        self.deadline = deadline
        """`time.perf_counter()` value after which the launch stops (None: no time limit)."""
        self.steps = 0
        self.frame: list[Any] = []
        self.ret = self.none
        self.brk = self.none
        self.cont = self.none
        self.retval: np.ndarray | None = None
        self.prelude: dict[str, np.ndarray] = {}
        self.gtid = self.lane_ids.astype(np.int64)
        self.block: tuple[int, int, int] = (0, 0, 0)
        """The (first) block of the wave, for locations."""
        self.buffers: dict[str, Tracked] = {}
        self.lens: dict[str, np.ndarray] = {}
        self.shared: dict[str, SharedArray] = {}
        self.waves = WaveLayout(wave_size, threads, groups)
        """Where each lane sits in its (hardware) wave, for the wave functions."""

    def live(self, mask: np.ndarray) -> np.ndarray:
        """`mask` without the lanes that returned, broke or continued."""
        return mask & ~(self.ret | self.brk | self.cont)

    def weight(self, mask: np.ndarray) -> int:
        """How many blocks have a lane in `mask`: the steps one execution under `mask`
        counts, so that a wave counts exactly what its blocks run one by one would."""
        if self.groups == 1 or mask is self.full:
            return self.groups
        return int(np.count_nonzero(mask.reshape(self.groups, self.threads).any(axis=1)))

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline

    def per_block(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(blocks with any lane in `mask`, blocks with every lane in `mask`)."""
        m = mask.reshape(self.groups, self.threads)
        return np.asarray(m.any(axis=1)), np.asarray(m.all(axis=1))
