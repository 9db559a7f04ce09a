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
(`exploring`) that replaces each arithmetic NaN by another member — opposite sign, and
another payload where the rule offers one — and records the payloads the rule allows.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

__all__ = ["Explorer", "NanChoice", "allowed_patterns", "chosen", "exploring", "is_nan_bits",
           "quiet_bit", "sign_bit"]


class NanChoice(Enum):
    """Which other member of the allowed set an exploring run returns for every NaN."""

    FLIP_SIGN = "flip-sign"
    OTHER_PAYLOAD = "other-payload"
    BOTH = "both"


_FRACTION_BITS = {32: 23, 64: 52}


def sign_bit(width: int) -> int:
    return 1 << (width - 1)


def quiet_bit(width: int) -> int:
    """IEEE 754 §6.2.1: the first bit of the trailing significand is 1 for a quiet NaN."""
    return 1 << (_FRACTION_BITS[width] - 1)


def _exponent(width: int) -> int:
    return ((1 << (width - 1)) - 1) & ~((1 << _FRACTION_BITS[width]) - 1)


def is_nan_bits(bits: np.ndarray, width: int) -> np.ndarray:
    """Which unsigned bit patterns of a `width`-bit float are NaNs (exponent all ones,
    fraction not zero)."""
    b = np.asarray(bits, dtype=np.uint64)
    exp, frac = np.uint64(_exponent(width)), np.uint64((1 << _FRACTION_BITS[width]) - 1)
    return ((b & exp) == exp) & ((b & frac) != 0)


def preferred(width: int) -> int:
    """The preferred NaN, sign cleared: quiet, payload zero (0x7fc00000 for f32)."""
    return _exponent(width) | quiet_bit(width)


def allowed_patterns(width: int, operands: frozenset[int]) -> frozenset[int]:
    """The sign-cleared bit patterns an arithmetic NaN may have, given the sign-cleared bit
    patterns of the NaN operands it may propagate: the preferred NaN, every operand quieted,
    every operand unchanged."""
    q = quiet_bit(width)
    return frozenset({preferred(width), *operands, *(p | q for p in operands)})


@dataclass
class Explorer:
    """An exploring run's choice, and what it saw: per float width, the sign-cleared bit
    patterns of NaN operands and results of arithmetic that returned a NaN."""

    choice: NanChoice
    operands: dict[int, set[int]] = field(default_factory=lambda: {32: set(), 64: set()})
    produced: bool = False
    """Whether any arithmetic returned a NaN (no NaN: nothing else to explore)."""
    other_payload: bool = False
    """Whether some NaN had another payload to choose (else OTHER_PAYLOAD adds nothing)."""

    def patterns(self, width: int) -> frozenset[int]:
        return allowed_patterns(width, frozenset(self.operands[width]))


_EXPLORER: ContextVar[Explorer | None] = ContextVar("rgpu_nan_explorer", default=None)


@contextmanager
def exploring(explorer: Explorer) -> Iterator[Explorer]:
    """Every arithmetic NaN computed inside the block follows `explorer`'s choice."""
    token = _EXPLORER.set(explorer)
    try:
        yield explorer
    finally:
        _EXPLORER.reset(token)


def chosen(result: np.ndarray, *operands: np.ndarray) -> np.ndarray:
    """`result` of an arithmetic operation on `operands` (same float type; none for a cast),
    with its NaNs replaced by the exploring run's choice. Outside an exploring run: as is."""
    explorer = _EXPLORER.get()
    if explorer is None:
        return result
    r = np.asarray(result)
    nan = np.isnan(r)
    if not nan.any():
        return result
    explorer.produced = True
    width = r.dtype.itemsize * 8
    udt = np.dtype(f"u{r.dtype.itemsize}")
    sign, q = udt.type(sign_bit(width)), udt.type(quiet_bit(width))
    bits = np.array(r, copy=True).view(udt)
    natural = bits & ~sign
    seen = explorer.operands[width]
    seen.update(int(b) for b in np.unique(natural[nan]))
    alternative = np.full(bits.shape, preferred(width), dtype=udt)
    for op in operands:
        o = np.broadcast_to(np.asarray(op, dtype=r.dtype), r.shape)
        on = np.isnan(o) & nan
        if not on.any():
            continue
        ob = o.view(udt) & ~sign
        seen.update(int(b) for b in np.unique(ob[on]))
        quieted = ob | q
        pick = on & (alternative == natural) & (quieted != natural)
        alternative = np.where(pick, quieted, alternative)
    if explorer.choice is not NanChoice.FLIP_SIGN:
        differs = nan & (alternative != natural)
        if differs.any():
            explorer.other_payload = True
            bits = np.where(differs, (bits & sign) | alternative, bits).astype(udt)
    if explorer.choice is not NanChoice.OTHER_PAYLOAD:
        bits = np.where(nan, bits ^ sign, bits).astype(udt)
    out = bits.view(r.dtype)
    return out if isinstance(result, np.ndarray) else out[()]
