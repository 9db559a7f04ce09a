"""Choice sources: the one channel every random decision of a generator goes through.

A generator never touches `random` itself; it asks a `ChoiceSource`. That is what makes the
same grammar usable by three drivers (docs/design.md §2 "generators"):
* `SeededChoices` — a seed names a case, bit for bit, on every machine and Python version;
* `HypothesisChoices` — every decision is a Hypothesis draw, so shrinking a failing case
  shrinks it *through the grammar* (smaller draws give smaller, still well-typed kernels);
* `AtherisChoices` — coverage-guided fuzzing: atheris's bytes steer the grammar.

Conventions every implementation keeps, so that shrinking moves towards simpler programs:
the smallest value of `integer` and the first option of `choice`/`weighted` are the
simplest; `boolean` shrinks to False.
"""

from __future__ import annotations

import abc
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


class ChoiceSource(abc.ABC):
    """Where a generator's decisions come from. Subclasses implement `integer`, `boolean`
    and `bits`; `choice` and `weighted` are built on `integer` so that every driver makes
    the same decision from the same integer."""

    @abc.abstractmethod
    def integer(self, lo: int, hi: int) -> int:
        """A whole number in `lo..=hi` (both inclusive; `lo <= hi`)."""

    @abc.abstractmethod
    def boolean(self, p: float = 0.5) -> bool:
        """True with probability about `p` (drivers that cannot weigh may ignore `p`)."""

    @abc.abstractmethod
    def bits(self, n: int) -> int:
        """A uniformly chosen `n`-bit unsigned number (seeds, bit patterns of values)."""

    def choice(self, options: Sequence[T]) -> T:
        """One element of a non-empty sequence; the first is the simplest."""
        if not options:
            raise ValueError("choice from an empty sequence")
        return options[self.integer(0, len(options) - 1)]

    def weighted(self, options: Mapping[T, int]) -> T:
        """One key of `options`, with probability proportional to its (integer) weight;
        keys of weight 0 are never chosen. Mapping order is the shrink order."""
        live = [(k, w) for k, w in options.items() if w > 0]
        if not live:
            raise ValueError("weighted choice with no positive weight")
        if len(live) == 1:
            return live[0][0]
        total = sum(w for _, w in live)
        x = self.integer(0, total - 1)
        for key, w in live:
            if x < w:
                return key
            x -= w
        raise AssertionError("unreachable: x < total")


class SeededChoices(ChoiceSource):
    """Reproducible choices from a seed. Only `random.Random.getrandbits` is used, whose
    stream for an integer seed is fixed by the Mersenne Twister algorithm, so the same seed
    gives the same decisions on every platform and Python version (unlike `randrange`,
    whose algorithm has changed between releases)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        if lo > hi:
            raise ValueError(f"empty range {lo}..={hi}")
        span = hi - lo + 1
        if span == 1:
            return lo
        k = (span - 1).bit_length()
        while True:  # rejection sampling: exact and platform independent
            r = self._rng.getrandbits(k)
            if r < span:
                return lo + r

    def boolean(self, p: float = 0.5) -> bool:
        return self._rng.getrandbits(53) < int(p * (1 << 53))

    def bits(self, n: int) -> int:
        return self._rng.getrandbits(n) if n > 0 else 0


class HypothesisChoices(ChoiceSource):
    """Choices drawn from Hypothesis, inside `@given` or `st.composite`. Accepts the `draw`
    function of a composite strategy or the `data` object of `st.data()`."""

    def __init__(self, data: Any) -> None:
        from hypothesis import strategies as st

        self._st = st
        self._draw: Callable[[Any], Any] = data.draw if hasattr(data, "draw") else data

    def integer(self, lo: int, hi: int) -> int:
        if lo == hi:
            return lo
        return int(self._draw(self._st.integers(min_value=lo, max_value=hi)))

    def boolean(self, p: float = 0.5) -> bool:
        # Shrinks to 0, i.e. False: "do not add one more thing".
        if p <= 0.0:
            return False
        threshold = max(1, min(1000, round(p * 1000)))
        return int(self._draw(self._st.integers(0, 999))) >= 1000 - threshold

    def bits(self, n: int) -> int:
        return int(self._draw(self._st.integers(0, (1 << n) - 1))) if n > 0 else 0


class AtherisChoices(ChoiceSource):
    """Choices read from an `atheris.FuzzedDataProvider`, so the fuzzer's bytes steer the
    grammar. `from_bytes` builds the provider (atheris is imported only then: it is an
    optional dependency of the `fuzz/` harnesses, not of the library)."""

    def __init__(self, fdp: Any) -> None:
        self._fdp = fdp

    @classmethod
    def from_bytes(cls, data: bytes) -> AtherisChoices:
        import atheris  # optional: only the fuzz harnesses need it

        return cls(atheris.FuzzedDataProvider(data))

    def integer(self, lo: int, hi: int) -> int:
        if lo == hi:
            return lo
        return int(self._fdp.ConsumeIntInRange(lo, hi))

    def boolean(self, p: float = 0.5) -> bool:
        return bool(self._fdp.ConsumeProbability() < p)

    def bits(self, n: int) -> int:
        if n <= 0:
            return 0
        return int(self._fdp.ConsumeUInt((n + 7) // 8)) & ((1 << n) - 1)
