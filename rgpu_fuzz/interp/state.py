"""The mutable state of one block's threads while compiled closures run them in lock step.

Every value is a numpy array with one entry per thread of the block ("lane"); which lanes take
part is a boolean mask passed to each closure. Lanes leave the current construct through three
masks kept here: `ret` (returned from the current function), `brk` and `cont` (left the
current iteration of the innermost loop). A lane in none of them is live.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rgpu_fuzz.interp.memory import SharedArray, Tracked


class LaneState:
    """Registers of the lanes of one block; one instance per launch, reset per block."""

    __slots__ = (
        "block", "brk", "budget", "buffers", "cont", "frame", "full", "gtid", "lane_ids",
        "lens", "none", "prelude", "ret", "retval", "shared", "steps", "threads",
    )

    def __init__(self, threads: int, budget: int) -> None:
        self.threads = threads
        self.lane_ids = np.arange(threads, dtype=np.intp)
        self.full = np.ones(threads, dtype=bool)
        self.none = np.zeros(threads, dtype=bool)
        self.full.flags.writeable = False
        self.none.flags.writeable = False
        self.budget = budget
        self.steps = 0
        self.frame: list[Any] = []
        self.ret = self.none
        self.brk = self.none
        self.cont = self.none
        self.retval: np.ndarray | None = None
        self.prelude: dict[str, np.ndarray] = {}
        self.gtid = self.lane_ids.astype(np.int64)
        self.block: tuple[int, int, int] = (0, 0, 0)
        self.buffers: dict[str, Tracked] = {}
        self.lens: dict[str, np.ndarray] = {}
        self.shared: dict[str, SharedArray] = {}

    def live(self, mask: np.ndarray) -> np.ndarray:
        """`mask` without the lanes that returned, broke or continued."""
        return mask & ~(self.ret | self.brk | self.cont)
