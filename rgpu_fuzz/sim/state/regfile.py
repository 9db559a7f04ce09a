"""A wave's vector register file, its per-register views, and the pool they are reused from.

Fused runs (`rgpu_fuzz.sim.fused.code`) read and write whole registers as numpy vectors.
Making the view of a register costs more than the arithmetic on it: `V[:, c:c + 2].view(
np.uint64)[:, 0].view(np.float64)` is ~1 us, a float64 add of 64 lanes ~0.25 us. A
`RegViews` makes each view once per register file and keeps it (a dict hit: ~0.02 us),
and the register files are pooled so that the views outlive the wave they were made for:
a warm launch finds them made by the waves of earlier launches.

A view is a key `kind * KIND_STRIDE + column` (an int: the generated code's constants);
`KIND` gives the kind of a value type, `DEFINED` the definedness column."""

from __future__ import annotations

import numpy as np

N_VECTOR = 512
KIND_STRIDE = 1024
KIND: dict[type, int] = {np.uint32: 0, np.int32: 1, np.float32: 2,
                         np.uint64: 3, np.int64: 4, np.float64: 5}
"""Value type → kind: 32-bit kinds are one column, 64-bit kinds the pair at the column."""
DEFINED = 6
_TYPES = {k: np.dtype(t) for t, k in KIND.items()}


class RegViews(dict[int, np.ndarray]):
    """Views of one register file made on first use (`__missing__`): writes through a view
    are writes to the register file."""

    __slots__ = ("D", "V")

    def __init__(self, V: np.ndarray, D: np.ndarray) -> None:
        super().__init__()
        self.V = V
        self.D = D

    def __missing__(self, key: int) -> np.ndarray:
        kind, col = divmod(key, KIND_STRIDE)
        if kind == DEFINED:
            view = self.D[:, col]
        elif kind < 3:
            view = self.V[:, col].view(_TYPES[kind])
        else:
            view = self.V[:, col:col + 2].view(np.uint64)[:, 0].view(_TYPES[kind])
        self[key] = view
        return view


def key(kind: int, col: int) -> int:
    return kind * KIND_STRIDE + col


RegFile = tuple[np.ndarray, np.ndarray, RegViews]

_POOL: dict[int, list[RegFile]] = {}
_POOLED = 64
"""Register files kept per lane count: more than the waves of any one workgroup here."""


def take(lanes: int) -> RegFile:
    """A register file of `lanes` lanes, zeroed (values and definedness), with the views
    any earlier user of it made. Safe across threads: `list.pop` is atomic, and a file is
    in the pool only while no wave holds it."""
    free = _POOL.get(lanes)
    if free:
        try:
            V, D, views = free.pop()
        except IndexError:
            pass
        else:
            V.fill(0)
            D.fill(False)
            return V, D, views
    V = np.zeros((lanes, N_VECTOR), np.uint32)
    D = np.zeros((lanes, N_VECTOR), bool)
    return V, D, RegViews(V, D)


def give(rf: RegFile) -> None:
    """Return a register file no wave will use again."""
    free = _POOL.setdefault(rf[0].shape[0], [])
    if len(free) < _POOLED:
        free.append(rf)


__all__ = ["DEFINED", "KIND", "KIND_STRIDE", "N_VECTOR", "RegViews", "give", "key", "take"]
