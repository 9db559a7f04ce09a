"""Global buffers and shared arrays, with the access tracking that finds data races and reads
of uninitialised shared memory (docs/language.md "Well-definedness").

Tracking is per element with two small integer arrays:
* `writer[e]`: -1 nobody wrote `e`, else the id of the one thread that did (a second writer
  is a race, reported at once, so "many writers" never needs representing);
* `reader[e]`: -1 nobody read `e`, the id of the one thread that did, or -2 for several.

A write by thread t races when another thread wrote or read the element; a read by t races
when another thread wrote it. Thread ids are global (block-linear × threads per block +
thread) for global buffers, which are tracked for the whole launch because there is no
grid-wide barrier; they are block-local for shared arrays, whose tracking restarts at every
`sync_threads()` (its acquire/release ordering makes earlier accesses happen-before later
ones). Read-only `&[T]` buffers cannot race and are not tracked.

All accesses are vectorised over the active lanes of one block. Lanes of one vector store
that hit one element are two threads writing it: a race as well.
"""

from __future__ import annotations

import numpy as np

from rgpu_fuzz.interp.signals import RejectSignal, first_lane
from rgpu_fuzz.lang.source import Span
from rgpu_fuzz.model.outcome import RejectReason
from rgpu_fuzz.model.scalars import Scalar

NOBODY = -1
SEVERAL = -2


class Tracked:
    """An array of elements with writer/reader tracking. `ids` passed to `load`/`store` are the
    thread ids of the lanes (global or block-local, chosen by the owner)."""

    __slots__ = ("data", "elem", "name", "reader", "reason", "tracked", "writer")

    def __init__(self, name: str, elem: Scalar, data: np.ndarray, *, tracked: bool,
                 reason: RejectReason) -> None:
        self.name = name
        self.elem = elem
        self.data = data
        self.tracked = tracked
        self.reason = reason
        n = data.shape[0]
        self.writer = np.full(n, NOBODY, dtype=np.int64) if tracked else None
        self.reader = np.full(n, NOBODY, dtype=np.int64) if tracked else None

    def __len__(self) -> int:
        return self.data.shape[0]

    def _race(self, bad: np.ndarray, e: np.ndarray, lanes: np.ndarray, span: Span,
              what: str) -> None:
        i = first_lane(bad)
        raise RejectSignal(
            self.reason, f"`{self.name}[{int(e[i])}]` {what}", span, int(lanes[i])
        )

    def load(self, idx: np.ndarray, mask: np.ndarray, all_active: bool, ids: np.ndarray,
             lane_ids: np.ndarray, span: Span) -> np.ndarray:
        """Values at `idx` (in bounds on active lanes) for every lane; inactive lanes get
        element 0's value or zero."""
        n = self.data.shape[0]
        if all_active:
            e = idx.astype(np.intp)
            values = self.data[e]
        else:
            if n == 0:
                return np.zeros(mask.shape[0], dtype=self.data.dtype)
            values = self.data[np.where(mask, idx, 0).astype(np.intp)]
            e = idx[mask].astype(np.intp)
        if self.tracked:
            t = ids if all_active else ids[mask]
            lanes = lane_ids if all_active else lane_ids[mask]
            self._track_read(e, t, lanes, span)
        return values

    def _track_read(self, e: np.ndarray, t: np.ndarray, lanes: np.ndarray, span: Span) -> None:
        assert self.writer is not None and self.reader is not None
        w = self.writer[e]
        bad = (w != NOBODY) & (w != t)
        if bad.any():
            i = first_lane(bad)
            self._race(bad, e, lanes, span,
                       f"read by thread {int(t[i])} after thread {int(w[i])} wrote it")
        r = self.reader[e]
        new = np.where((r == NOBODY) | (r == t), t, SEVERAL)
        self.reader[e] = new
        clash = self.reader[e] != new          # two lanes of this access read one element
        if clash.any():
            self.reader[e[clash]] = SEVERAL

    def _same_store_race(self, e: np.ndarray, t: np.ndarray, lanes: np.ndarray,
                         span: Span) -> None:
        """Several lanes of one store hit one element: report the lowest lane that is not the
        first to write its element (the first write, in lane order, is the one raced with)."""
        order = np.argsort(e, kind="stable")
        sorted_e = e[order]
        second = order[1:][sorted_e[1:] == sorted_e[:-1]]
        i = int(second.min())
        first = int(order[np.searchsorted(sorted_e, e[i])])
        bad = np.zeros(len(e), dtype=bool)
        bad[i] = True
        self._race(bad, e, lanes, span,
                   f"written by threads {int(t[first])} and {int(t[i])} in one store")

    def store(self, idx: np.ndarray, values: np.ndarray, mask: np.ndarray, all_active: bool,
              ids: np.ndarray, lane_ids: np.ndarray, span: Span) -> None:
        if all_active:
            e = idx.astype(np.intp)
            v = values
        else:
            e = idx[mask].astype(np.intp)
            v = values[mask]
        if self.tracked:
            assert self.writer is not None and self.reader is not None
            t = ids if all_active else ids[mask]
            lanes = lane_ids if all_active else lane_ids[mask]
            w = self.writer[e]
            r = self.reader[e]
            bad = ((w != NOBODY) & (w != t)) | ((r != NOBODY) & (r != t))
            if bad.any():
                i = first_lane(bad)
                other = int(w[i]) if w[i] != NOBODY and w[i] != t[i] else int(r[i])
                who = "several threads" if other == SEVERAL else f"thread {other}"
                self._race(bad, e, lanes, span,
                           f"written by thread {int(t[i])} after {who} accessed it")
            self.writer[e] = t
            if (self.writer[e] != t).any():
                self._same_store_race(e, t, lanes, span)
        self.data[e] = v


class SharedArray(Tracked):
    """A `#[shared]` array of one block: uninitialised at block start (docs/language.md).

    A wave of `groups` blocks holds one segment of `length` elements per block; the lanes of
    block `b` of the wave reach element `i` of their segment at `b * length + i` (`offsets`,
    added to every index after it was bounds-checked against `length`)."""

    __slots__ = ("groups", "length", "offsets", "written")

    def __init__(self, name: str, elem: Scalar, length: int, groups: int = 1,
                 threads: int = 1) -> None:
        super().__init__(name, elem, np.zeros(length * groups, dtype=elem.dtype),
                         tracked=True, reason=RejectReason.SHARED_RACE)
        self.length = length
        self.groups = groups
        self.written = np.zeros(length * groups, dtype=bool)
        self.offsets: np.ndarray | None = None
        if groups > 1:
            self.offsets = np.repeat(np.arange(groups, dtype=np.uint64) * np.uint64(length),
                                     threads)

    def load(self, idx: np.ndarray, mask: np.ndarray, all_active: bool, ids: np.ndarray,
             lane_ids: np.ndarray, span: Span) -> np.ndarray:
        if self.offsets is not None:
            idx = idx + self.offsets
        e = idx if all_active else idx[mask]
        unwritten = ~self.written[e.astype(np.intp)]
        if unwritten.any():
            i = first_lane(unwritten)
            lanes = lane_ids if all_active else lane_ids[mask]
            raise RejectSignal(
                RejectReason.UNINIT_SHARED_READ,
                f"`{self.name}[{int(e[i])}]` read before any thread of the block wrote it",
                span, int(lanes[i]),
            )
        return super().load(idx, mask, all_active, ids, lane_ids, span)

    def store(self, idx: np.ndarray, values: np.ndarray, mask: np.ndarray, all_active: bool,
              ids: np.ndarray, lane_ids: np.ndarray, span: Span) -> None:
        if self.offsets is not None:
            idx = idx + self.offsets
        super().store(idx, values, mask, all_active, ids, lane_ids, span)
        self.written[(idx if all_active else idx[mask]).astype(np.intp)] = True

    def barrier(self, blocks: np.ndarray | None = None) -> None:
        """A new barrier interval for the blocks of the wave set in `blocks` (None: every
        block): their earlier accesses are ordered before later ones."""
        assert self.writer is not None and self.reader is not None
        if blocks is None or self.groups == 1:
            self.writer.fill(NOBODY)
            self.reader.fill(NOBODY)
        else:
            self.writer.reshape(self.groups, self.length)[blocks] = NOBODY
            self.reader.reshape(self.groups, self.length)[blocks] = NOBODY


def global_buffer(name: str, elem: Scalar, data: np.ndarray, mutable: bool) -> Tracked:
    """A kernel slice parameter; only `&mut` buffers can race."""
    return Tracked(name, elem, data, tracked=mutable, reason=RejectReason.GLOBAL_RACE)
