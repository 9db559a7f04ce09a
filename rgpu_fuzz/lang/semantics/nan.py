"""The bits of a NaN that an arithmetic operation returns (docs/language.md "NaN bits").

Rust (RFC 3514; `f32` docs, "NaN bit patterns") and LLVM (LangRef, "Behavior of
Floating-Point NaN values") give the same rule, the language's rule: when an arithmetic
operation (`+ - * / %`, `sqrt`, `mul_add`, `min`/`max` of two NaNs, `as` between floats)
returns a NaN, its sign is non-deterministic, and its quiet bit and payload are one of

* the preferred NaN: quiet, payload all zero;
* quieting propagation: quiet, the payload of a NaN operand;
* unchanged propagation: the quiet bit and payload of a NaN operand (a signalling NaN only
  comes out of an operation that had that signalling NaN as an operand);
* a target-specific extra payload: none on x86, ARM or AMDGPU, so none here.

`-x`, `abs`, `to_bits`, `from_bits`, loads, stores and moves keep every bit (`-`/`abs` set
the sign only). So a NaN's bits are exact until arithmetic makes them, and from then on the
reference knows a set, not a value.

The reference computes with numpy, which on every host numpy runs on returns one member of
that set (x86 SSE: the default NaN 0xffc00000 or the first NaN operand, quieted). To learn
which outputs depend on the choice, the interpreter reruns a launch under an `Explorer`
(`exploring`) that replaces each arithmetic NaN by a fixed member — positive and preferred,
negative with the first NaN operand's payload, or positive with the last one's — and records
the signalling NaN operands
(which unchanged propagation may return).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from rgpu_fuzz.model.latitude import quiet_bit

__all__ = ["EXPLORER", "Explorer", "NanChoice", "Observation", "chosen", "exploring",
           "observe_bits", "observing", "preferred"]


class NanChoice(Enum):
    """Which member of the allowed set an exploring run returns for every arithmetic NaN.
    Absolute choices, not changes relative to numpy's: two runs then differ in the sign of
    every NaN, also one computed from another NaN (flipping both would flip it back)."""

    POSITIVE_PREFERRED = "+preferred"
    NEGATIVE_PROPAGATED = "-propagated"
    """Negative, the first NaN operand's payload quieted (the preferred one without)."""
    POSITIVE_PROPAGATED_LAST = "+propagated-last"
    """Positive, the last NaN operand's payload quieted: any operand's payload is allowed,
    and an operation with NaNs in two places (`fma(NaN, 1.0, sNaN)`, which LLVM 22 folds to
    the third's quieted: campaign bucket 655b0d0dc3) has two to choose from."""


def preferred(width: int) -> int:
    """The preferred NaN, sign cleared: quiet, payload zero (0x7fc00000 for f32)."""
    return ((1 << (width - 1)) - 1) & ~(quiet_bit(width) - 1)


_LAYOUT = {
    np.dtype(f): (w, np.dtype(u), np.dtype(u).type(1 << (w - 1)), np.dtype(u).type(quiet_bit(w)),
                  np.dtype(u).type(preferred(w)))
    for f, u, w in ((np.float16, np.uint16, 16), (np.float32, np.uint32, 32),
                    (np.float64, np.uint64, 64))}
"""Per float dtype: width, bits dtype, sign bit, quiet bit, preferred NaN."""


@dataclass
class Explorer:
    """An exploring run's choice, and what it saw: per float width, the signalling NaNs
    (sign cleared) that were operands of arithmetic, which may come out unchanged."""

    choice: NanChoice
    signalling: dict[int, set[int]] = field(
        default_factory=lambda: {16: set(), 32: set(), 64: set()})
    produced: bool = False
    """Whether any arithmetic returned a NaN (no NaN: nothing else to explore)."""


EXPLORER: ContextVar[Explorer | None] = ContextVar("rgpu_nan_explorer", default=None)


@contextmanager
def exploring(explorer: Explorer) -> Iterator[Explorer]:
    """Every arithmetic NaN computed inside the block follows `explorer`'s choice."""
    token = EXPLORER.set(explorer)
    try:
        yield explorer
    finally:
        EXPLORER.reset(token)


def chosen(result: np.ndarray, *operands: np.ndarray,
           source: np.ndarray | None = None) -> np.ndarray:
    """`result` of an arithmetic operation on `operands` (same float type), or of a cast
    between float types from `source`, with its NaNs replaced by the exploring run's choice.
    Outside an exploring run: as is."""
    explorer = EXPLORER.get()
    if explorer is None:
        return result
    r = np.asarray(result)
    nan = np.isnan(r)
    if not nan.any():
        return result
    explorer.produced = True
    width, udt, sign, q, pref = _LAYOUT[r.dtype]
    negative = explorer.choice is NanChoice.NEGATIVE_PROPAGATED
    last = explorer.choice is NanChoice.POSITIVE_PROPAGATED_LAST
    payload = np.full(r.shape, pref | sign if negative else pref, dtype=udt)
    if source is not None:
        converted = _cast_operand(explorer, np.broadcast_to(np.asarray(source), r.shape),
                                  width) & ~sign
        if negative:
            payload = np.where(nan, converted | q | sign, payload)
        elif last:
            payload = np.where(nan, converted | q, payload)
    for op in (operands if last else reversed(operands)):
        o = np.asarray(op, dtype=r.dtype)
        if o.shape != r.shape:
            o = np.broadcast_to(o, r.shape)
        on = np.isnan(o) & nan
        if not on.any():
            continue
        ob = o.view(udt) & ~sign
        signalling = on & ((ob & q) == 0)
        if signalling.any():
            explorer.signalling[width].update(int(b) for b in np.unique(ob[signalling]))
        if negative:
            payload = np.where(on, ob | q | sign, payload)
        elif last:
            payload = np.where(on, ob | q, payload)
    out = np.where(nan, payload, r.view(udt)).view(r.dtype)
    return out if isinstance(result, np.ndarray) else out[()]


def _cast_operand(explorer: Explorer, source: np.ndarray, width: int) -> np.ndarray:
    """A float cast's NaN operands as the cast may return them unchanged, at the result's
    `width` (docs/language.md "NaN bits": the payload cut to its high bits or extended with
    zeros, quiet bit and sign kept); each signalling one is recorded at both widths, as
    arithmetic's operands are: `x as f64 as f32` may return a signalling `x` unchanged
    (LLVM folds the pair away: campaign buckets 1d8255727b and 680ac55e4c)."""
    swidth, sudt, ssign, sq, _ = _LAYOUT[source.dtype]
    _, udt, _, _, _ = _LAYOUT[np.dtype({16: np.float16, 32: np.float32, 64: np.float64}[width])]
    bits = source.view(sudt).astype(np.uint64)
    frac_bits = {16: 10, 32: 23, 64: 52}
    shift = frac_bits[width] - frac_bits[swidth]
    frac = bits & np.uint64((1 << frac_bits[swidth]) - 1)
    frac = frac << np.uint64(shift) if shift > 0 else frac >> np.uint64(-shift)
    exp = np.uint64(((1 << (width - 1)) - 1) & ~((1 << frac_bits[width]) - 1))
    out = ((bits >> np.uint64(swidth - 1)) << np.uint64(width - 1)) | exp | frac
    nan = np.isnan(source)
    signalling = nan & ((bits & np.uint64(int(sq))) == 0)
    if signalling.any():
        explorer.signalling[swidth].update(int(b) & (int(ssign) - 1)
                                           for b in np.unique(bits[signalling]))
        kept = signalling & (frac != 0)  # a payload cut to zero is no NaN: not returnable
        explorer.signalling[width].update(int(b) & ((1 << (width - 1)) - 1)
                                          for b in np.unique(out[kept]))
    return out.astype(udt)


@dataclass
class Observation:
    """Whether `to_bits` saw a NaN during an `observing` block (any lane, active or not:
    a false alarm only costs an exploring run)."""

    nan_bits: bool = False


_OBSERVATION: ContextVar[Observation | None] = ContextVar("rgpu_nan_observation", default=None)


@contextmanager
def observing() -> Iterator[Observation]:
    """Record whether the block turns a NaN into bits."""
    observation = Observation()
    token = _OBSERVATION.set(observation)
    try:
        yield observation
    finally:
        _OBSERVATION.reset(token)


def observe_bits(a: np.ndarray) -> None:
    """`to_bits` calls this with its float operand."""
    observation = _OBSERVATION.get()
    if observation is not None and not observation.nan_bits and np.isnan(a).any():
        observation.nan_bits = True
