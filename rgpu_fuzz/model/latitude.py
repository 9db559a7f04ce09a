"""What else an output element may hold when the kernel observed an unspecified NaN
(docs/language.md "NaN bits"): the arbiter's value is one allowed result, not the only one."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True, kw_only=True)
class Latitude:
    """Per element of one output buffer, the other bit patterns the language allows.

    `alternatives` (runs × elements, the buffer's unsigned bits dtype) holds what other
    allowed executions stored: an element may equal any of them. Where `nan` is set the
    element is the bits of an arithmetic NaN (a float element, or a 32/64-bit integer that
    holds `to_bits` of one): any NaN of `width` bits whose sign-cleared pattern is in
    `patterns` is allowed, with either sign."""

    alternatives: np.ndarray
    nan: np.ndarray
    width: int = 0
    patterns: frozenset[int] = frozenset()

    def allows(self, index: np.ndarray, bits: np.ndarray) -> np.ndarray:
        """Which of the elements at `index` (holding unsigned `bits` there) are allowed."""
        ok = (self.alternatives[:, index] == bits).any(axis=0)
        if self.width and self.patterns:
            nan = self.nan[index]
            if nan.any():
                b = bits.astype(np.uint64) & np.uint64((1 << (self.width - 1)) - 1)
                exp = np.uint64(((1 << (self.width - 1)) - 1)
                                & ~((1 << (23 if self.width == 32 else 52)) - 1))
                is_nan = ((b & exp) == exp) & ((b & ~exp) != 0)
                member = np.isin(b, np.fromiter(self.patterns, dtype=np.uint64))
                ok |= nan & is_nan & member
        return ok
