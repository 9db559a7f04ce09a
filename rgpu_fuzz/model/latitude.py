"""What else an output element may hold when the kernel observed an unspecified NaN
(docs/language.md "NaN bits"): the arbiter's value is one allowed result, not the only one."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_FRACTION_BITS = {16: 10, 32: 23, 64: 52}


def float_nan_bits(bits: np.ndarray, width: int) -> np.ndarray:
    """Which unsigned bit patterns of a `width`-bit IEEE 754 float are NaNs (exponent all
    ones, trailing significand not zero; §3.4)."""
    b = np.asarray(bits).astype(np.uint64)
    frac = (1 << _FRACTION_BITS[width]) - 1
    exp = np.uint64(((1 << (width - 1)) - 1) & ~frac)
    return ((b & exp) == exp) & ((b & np.uint64(frac)) != 0)


def quiet_bit(width: int) -> int:
    """IEEE 754 §6.2.1: the first bit of the trailing significand is 1 for a quiet NaN."""
    return 1 << (_FRACTION_BITS[width] - 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class Latitude:
    """Per element of one output buffer, the other bit patterns the language allows.

    `alternatives` (runs × elements, the buffer's unsigned bits dtype) holds what other
    allowed executions stored: an element may equal any of them. Where `nan` is set the
    element is the bits of an arithmetic NaN (a float element, or a 32/64-bit integer that
    holds `to_bits` of one), and the runs saw every payload its operation may choose: any
    sign goes with any of those payloads, and so does each payload with its quiet bit clear
    when that signalling NaN was an operand (`signalling`, sign cleared): unchanged
    propagation; and a signalling operand that a run stored unchanged, quieted."""

    alternatives: np.ndarray
    nan: np.ndarray
    width: int = 0
    signalling: frozenset[int] = frozenset()

    def allows(self, index: np.ndarray, expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
        """Which elements at `index` (the arbiter's bits `expected`, a pipeline's `actual`
        there, both unsigned) hold a value the language allows."""
        ok = (self.alternatives[:, index] == actual).any(axis=0)
        nan = self.nan[index] & ~ok
        if not self.width or not nan.any():
            return ok
        magnitude = np.uint64((1 << (self.width - 1)) - 1)
        seen = np.vstack([self.alternatives[:, index], expected]).astype(np.uint64) & magnitude
        got = actual.astype(np.uint64) & magnitude
        same = (seen == got).any(axis=0)
        quiet = np.uint64(quiet_bit(self.width))
        quieted = got | quiet
        unchanged = ((seen == quieted).any(axis=0)
                     & np.isin(got, np.fromiter(self.signalling, dtype=np.uint64,
                                                count=len(self.signalling))))
        # a run that stored a signalling operand unchanged saw that operand: its payload
        # quieted is allowed too ("a NaN operand's payload, quieted")
        operand = (float_nan_bits(seen, self.width) & ((seen | quiet) == got)).any(axis=0)
        return ok | (nan & float_nan_bits(got, self.width) & (same | unchanged | operand))
