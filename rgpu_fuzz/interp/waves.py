"""The wave functions, lane-exact, with the wave size a parameter of the launch
(docs/language.md "Wave operations").

A wave is `wave_size` consecutive threads of a block by linear id (`x + y·bx + z·bx·by`):
thread `t` is lane `t % wave_size` of the block's wave `t // wave_size`; the last wave of a
block whose size is not a multiple of the wave size is partial, and its lanes past the block's
end are inactive. Each operation lays the lanes of the state (several blocks when the launch
runs them as one set, `machine.py`) out as a matrix, one row per wave, one column per lane,
and computes row by row.

Ill-defined uses stop the launch with a rejection, as the interpreter rejects other programs
that are outside the language: lanes of a wave reaching a wave operation apart, or giving
different values for an argument that must be wave-uniform (`wave-divergence`; the checker
proves both impossible except for `thread_idx_x() / wave_size()` on a block whose rows are
not whole waves), and a lane read from a lane that is inactive or past the wave
(`inactive-lane`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import numpy as np

from rgpu_fuzz.interp.signals import RejectSignal
from rgpu_fuzz.lang.source import Span
from rgpu_fuzz.model.outcome import RejectReason
from rgpu_fuzz.model.scalars import Scalar

__all__ = ["WaveLayout", "collective", "wave_prelude"]


class WaveLayout:
    """Where each lane of a `LaneState` sits in the wave matrix (rows × `size`)."""

    __slots__ = ("cols", "exists", "pos", "row", "rows", "size", "threads")

    def __init__(self, size: int, threads: int, groups: int) -> None:
        self.size = size
        self.threads = threads
        per_block = -(-threads // size)
        self.rows = groups * per_block
        lanes = np.arange(threads * groups, dtype=np.intp)
        self.pos = (lanes // threads) * (per_block * size) + lanes % threads
        """Each lane's flat index in the matrix."""
        self.row = self.pos // size
        self.cols = np.arange(size, dtype=np.int64)
        exists = np.zeros(self.rows * size, dtype=bool)
        exists[self.pos] = True
        self.exists = exists.reshape(self.rows, size)

    def matrix(self, values: np.ndarray, fill: Any = 0) -> np.ndarray:
        """`values` (one per lane) as rows × size; positions past a block's end get `fill`."""
        out = np.full(self.rows * self.size, fill, dtype=values.dtype)
        out[self.pos] = values
        return out.reshape(self.rows, self.size)

    def lanes(self, m: np.ndarray) -> np.ndarray:
        """A rows × size matrix back to one value per lane."""
        return m.reshape(-1)[self.pos]

    def lane_of(self, row: int, col: int) -> int:
        """The state's lane at a matrix position (which must exist)."""
        return int(np.flatnonzero(self.pos == row * self.size + col)[0])


def wave_prelude(layout: WaveLayout, lanes: int) -> dict[str, np.ndarray]:
    """`wave_size()` and `lane_id()` of every lane."""
    lane_id = (np.arange(lanes) % layout.threads % layout.size).astype(np.uint32)
    return {"wave_size": np.full(lanes, layout.size, dtype=np.uint32), "lane_id": lane_id}


def _active(layout: WaveLayout, m: np.ndarray, span: Span) -> np.ndarray:
    """The active lanes as a matrix, after checking that every wave with a lane here has all
    its lanes here (a wave's lanes past the block's end are never active)."""
    act = layout.matrix(m, False)
    torn = act.any(axis=1) & (act != layout.exists).any(axis=1)
    if torn.any():
        row = int(np.flatnonzero(torn)[0])
        col = int(np.flatnonzero(layout.exists[row] & ~act[row])[0])
        here, of = int(act[row].sum()), int(layout.exists[row].sum())
        raise RejectSignal(RejectReason.WAVE_DIVERGENCE,
                           f"{here} of the {of} lanes of a wave reached this wave operation",
                           span, layout.lane_of(row, col))
    return act


def _uniform(layout: WaveLayout, act: np.ndarray, v: np.ndarray, span: Span,
             what: str) -> np.ndarray:
    """The per-wave value of an argument that must be wave-uniform (as int64)."""
    vals = layout.matrix(v).astype(np.int64)
    first = np.argmax(act, axis=1)
    per_row = vals[np.arange(layout.rows), first]
    differs = act & (vals != per_row[:, None])
    if differs.any():
        row, col = (int(x[0]) for x in np.nonzero(differs))
        raise RejectSignal(RejectReason.WAVE_DIVERGENCE,
                           f"the {what} differs between the lanes of a wave "
                           f"({int(per_row[row])} and {int(vals[row, col])})",
                           span, layout.lane_of(row, col))
    return per_row


def _read(layout: WaveLayout, act: np.ndarray, x: np.ndarray, src: np.ndarray,
          reading: np.ndarray, span: Span, name: str) -> np.ndarray:
    """`x` of lane `src` (rows × size, int64) wherever `reading` (rows × size) holds; a
    source past the wave or inactive is ill-defined."""
    safe = np.clip(src, 0, layout.size - 1)
    rows = np.arange(layout.rows)[:, None]
    ok = (src >= 0) & (src < layout.size) & act[rows, safe]
    bad = reading & ~ok
    if bad.any():
        row, col = (int(i[0]) for i in np.nonzero(bad))
        raise RejectSignal(RejectReason.INACTIVE_LANE,
                           f"`{name}` on lane {col} reads lane {int(src[row, col])}, which is "
                           f"{'past the wave' if src[row, col] >= layout.size else 'inactive'}"
                           f" (wave size {layout.size})", span, layout.lane_of(row, col))
    return layout.matrix(x)[rows, safe]


Op: TypeAlias = Callable[[WaveLayout, np.ndarray, list[np.ndarray], Scalar, Span], np.ndarray]
"""(layout, active matrix, argument values per lane, T, span) -> result per wave (a vector
of `rows`) or per lane (a rows × size matrix)."""


def _first(layout: WaveLayout, act: np.ndarray, a: list[np.ndarray], t: Scalar,
           span: Span) -> np.ndarray:
    return layout.matrix(a[0])[np.arange(layout.rows), np.argmax(act, axis=1)]


def _read_lane(layout: WaveLayout, act: np.ndarray, a: list[np.ndarray], t: Scalar,
               span: Span) -> np.ndarray:
    lane = _uniform(layout, act, a[1], span, "lane of `read_lane`")
    src = np.broadcast_to(lane[:, None], act.shape)
    return _read(layout, act, a[0], src, act, span, "read_lane")[:, 0]


def _ballot(layout: WaveLayout, act: np.ndarray, a: list[np.ndarray], t: Scalar,
            span: Span) -> np.ndarray:
    bits = (act & layout.matrix(a[0], False)).astype(np.uint64) << layout.cols.astype(np.uint64)
    return np.bitwise_or.reduce(bits, axis=1)


def _shuffle(layout: WaveLayout, act: np.ndarray, a: list[np.ndarray], t: Scalar,
             span: Span) -> np.ndarray:
    src = layout.matrix(a[1]).astype(np.int64) % layout.size
    return _read(layout, act, a[0], src, act, span, "shuffle")


def _shuffle_xor(layout: WaveLayout, act: np.ndarray, a: list[np.ndarray], t: Scalar,
                 span: Span) -> np.ndarray:
    mask = _uniform(layout, act, a[1], span, "mask of `shuffle_xor`")
    return _read(layout, act, a[0], layout.cols ^ mask[:, None], act, span, "shuffle_xor")


def _shuffle_down(layout: WaveLayout, act: np.ndarray, a: list[np.ndarray], t: Scalar,
                  span: Span) -> np.ndarray:
    delta = _uniform(layout, act, a[1], span, "delta of `shuffle_down`")
    last = layout.size - 1 - np.argmax(act[:, ::-1], axis=1)
    src = layout.cols + delta[:, None]
    moved = act & (src <= last[:, None])
    got = _read(layout, act, a[0], src, moved, span, "shuffle_down")
    return np.where(moved, got, layout.matrix(a[0]))


def _reduce(ufunc: np.ufunc, identity: Callable[[Scalar], int]) -> Op:
    def op(layout: WaveLayout, act: np.ndarray, a: list[np.ndarray], t: Scalar,
           span: Span) -> np.ndarray:
        x = np.where(act, layout.matrix(a[0]), np.array(identity(t)).astype(t.dtype))
        return ufunc.reduce(x, axis=1, dtype=t.dtype)  # integer add wraps in numpy

    return op


def _prefix_sum(layout: WaveLayout, act: np.ndarray, a: list[np.ndarray], t: Scalar,
                span: Span) -> np.ndarray:
    x = np.where(act, layout.matrix(a[0]), np.zeros((), t.dtype))
    return np.cumsum(x, axis=1, dtype=t.dtype)


def _all(layout: WaveLayout, act: np.ndarray, a: list[np.ndarray], t: Scalar,
         span: Span) -> np.ndarray:
    return np.asarray((~act | layout.matrix(a[0], False)).all(axis=1))


def _any(layout: WaveLayout, act: np.ndarray, a: list[np.ndarray], t: Scalar,
         span: Span) -> np.ndarray:
    return np.asarray((act & layout.matrix(a[0], False)).any(axis=1))


def _all_ones(t: Scalar) -> int:
    return -1 if t.is_signed else t.max_value


_OPS: dict[str, Op] = {
    "read_first_lane": _first,
    "read_lane": _read_lane,
    "ballot": _ballot,
    "shuffle": _shuffle,
    "shuffle_xor": _shuffle_xor,
    "shuffle_down": _shuffle_down,
    "wave_sum": _reduce(np.add, lambda t: 0),
    "wave_min": _reduce(np.minimum, lambda t: t.max_value),
    "wave_max": _reduce(np.maximum, lambda t: t.min_value),
    "wave_and": _reduce(np.bitwise_and, _all_ones),
    "wave_or": _reduce(np.bitwise_or, lambda t: 0),
    "wave_xor": _reduce(np.bitwise_xor, lambda t: 0),
    "wave_prefix_sum": _prefix_sum,
    "wave_all": _all,
    "wave_any": _any,
}


def collective(name: str, operand: Scalar, span: Span
               ) -> Callable[[WaveLayout, np.ndarray, list[np.ndarray]], np.ndarray]:
    """The lane function of collective wave call `name` with `T` = `operand`: from the mask
    of the lanes executing it and its arguments' values to one result per lane."""
    op = _OPS[name]

    def run(layout: WaveLayout, m: np.ndarray, args: list[np.ndarray]) -> np.ndarray:
        act = _active(layout, m, span)
        out = op(layout, act, args, operand, span)
        if out.ndim == 1:
            return out[layout.row]
        return layout.lanes(out)

    return run
