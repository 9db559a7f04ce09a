"""The greedy reduction loop (docs/design.md §2 "Reduce"), in the style of C-Reduce: passes
propose rewritten candidates, the first interesting one that is smaller becomes the new best,
and the passes repeat until none of them makes progress (a fixpoint) or the budget runs out.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from itertools import islice

from rgpu_fuzz.model.case import Case
from triage.reduce.passes import DEFAULT_PASSES
from triage.reduce.size import Size, measure
from triage.reduce.state import Pass, State

Interesting = Callable[[Case], bool]


@dataclass(frozen=True, slots=True)
class PassStats:
    """What one pass did over the whole reduction."""

    name: str
    tried: int = 0
    """Candidates handed to the interestingness test."""
    accepted: int = 0
    cache_hits: int = 0
    invalid: int = 0
    """Candidates whose kernel did not check (never tested)."""
    not_smaller: int = 0
    """Candidates skipped because they were not smaller than the current best."""
    seconds: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Reduction:
    """The result of `reduce_case`: the smallest interesting case found, and how it went."""

    case: Case
    original: Case
    interesting_at_start: bool
    """False when the original case was not interesting: nothing was reduced."""
    tried: int
    accepted: int
    cache_hits: int
    seconds: float
    size_before: Size
    size_after: Size
    rounds: int
    """Sweeps over all passes (the last one made no progress unless `out_of_time`)."""
    out_of_time: bool
    passes: tuple[PassStats, ...] = field(default=())

    @property
    def lines_before(self) -> int:
        return self.size_before.lines

    @property
    def lines_after(self) -> int:
        return self.size_after.lines

    @property
    def tokens_before(self) -> int:
        return self.size_before.tokens

    @property
    def tokens_after(self) -> int:
        return self.size_after.tokens


def case_key(case: Case) -> str:
    """The cache key of a candidate: sha256 of its identity text (kernel, launch, args)."""
    return hashlib.sha256(case.identity_text().encode()).hexdigest()


@dataclass
class _Counters:
    tried: int = 0
    accepted: int = 0
    cache_hits: int = 0
    invalid: int = 0
    not_smaller: int = 0
    seconds: float = 0.0

    def frozen(self, name: str) -> PassStats:
        return PassStats(name, self.tried, self.accepted, self.cache_hits, self.invalid,
                         self.not_smaller, self.seconds)


class Reducer:
    """Shrinks a case while `interesting` still holds.

    Invariants every pass keeps:
    * every candidate is checked (`check_source`, arguments against parameters) before the
      interestingness test sees it, so an accepted candidate always checks; the test itself
      re-runs the interpreter before any compiler pipeline (see `signature_predicate`);
    * "smaller" is shortlex over the canonical printed kernel (tokens, then characters),
      then launch and buffer sizes, then input values (`Size`); a candidate that is not
      strictly smaller is never tested, so the loop terminates;
    * candidates are tried in the order passes propose them and the first interesting one
      wins, also when `jobs > 1` evaluates a batch in parallel: the result is deterministic;
    * each candidate is tested at most once: results are cached by `case_key`.
    """

    def __init__(self, interesting: Interesting, *, budget_s: float = 120.0, jobs: int = 1,
                 cache: dict[str, bool] | None = None,
                 passes: Iterable[Pass] = DEFAULT_PASSES,
                 on_accept: Callable[[Case, str], None] | None = None) -> None:
        self.interesting = interesting
        self.budget_s = budget_s
        self.jobs = max(1, jobs)
        self.cache: dict[str, bool] = {} if cache is None else cache
        self.passes = tuple(passes)
        self.on_accept = on_accept
        self._deadline = 0.0
        self._counters: dict[str, _Counters] = {}

    def _time_left(self) -> bool:
        return time.monotonic() < self._deadline

    def _test(self, case: Case) -> tuple[bool, State | None]:
        """Check the candidate, then (if it checks) ask the interestingness test."""
        state = State.of(case)
        if state is None:
            return False, None
        return bool(self.interesting(case)), state

    def reduce(self, case: Case) -> Reduction:
        start = time.monotonic()
        self._deadline = start + self.budget_s
        self._counters = {p.name: _Counters() for p in self.passes}
        size_before = measure(case)
        state = State.of(case)
        key = case_key(case)
        ok = state is not None and (self.cache[key] if key in self.cache
                                    else self.interesting(case))
        rounds = 0
        if ok:
            assert state is not None
            self.cache[key] = True
            with ThreadPoolExecutor(self.jobs) as pool:
                state, rounds = self._fixpoint(state, pool)
        best = state.case if (ok and state is not None) else case
        if best is not case:
            best = replace(best, provenance=replace(case.provenance, parent=case.id),
                           expect=case.expect, pipelines=case.pipelines)
        stats = tuple(c.frozen(name) for name, c in self._counters.items())
        return Reduction(
            case=best, original=case, interesting_at_start=ok,
            tried=sum(s.tried for s in stats), accepted=sum(s.accepted for s in stats),
            cache_hits=sum(s.cache_hits for s in stats), seconds=time.monotonic() - start,
            size_before=size_before, size_after=measure(best), rounds=rounds,
            out_of_time=not self._time_left(), passes=stats)

    def _fixpoint(self, state: State, pool: ThreadPoolExecutor) -> tuple[State, int]:
        rounds = 0
        progress = True
        while progress and self._time_left():
            rounds += 1
            progress = False
            for p in self.passes:
                t0 = time.monotonic()
                state, accepted = self._run_pass(p, state, pool)
                self._counters[p.name].seconds += time.monotonic() - t0
                progress |= accepted > 0
                if not self._time_left():
                    break
        return state, rounds

    def _run_pass(self, p: Pass, state: State, pool: ThreadPoolExecutor) -> tuple[State, int]:
        """Apply one pass until it has nothing more to offer. After an acceptance the pass
        resumes at the same position in the new state's candidates (the ones before it were
        just tried and failed, as C-Reduce assumes)."""
        accepted = 0
        position = 0
        while self._time_left():
            found = self._first_interesting(p, state, islice(p.candidates(state), position, None),
                                            pool)
            if found is None:
                break
            offset, state = found
            position += offset
            accepted += 1
            if self.on_accept is not None:
                self.on_accept(state.case, p.name)
        return state, accepted

    def _first_interesting(self, p: Pass, state: State, candidates: Iterator[Case],
                           pool: ThreadPoolExecutor) -> tuple[int, State] | None:
        counters = self._counters[p.name]
        best_size = measure(state.case)
        batch: list[tuple[int, Case, str]] = []   # to test, in candidate order
        hit: tuple[int, Case] | None = None       # a cached interesting candidate ends a batch

        def flush() -> tuple[int, State] | None:
            results = list(pool.map(lambda item: self._test(item[1]), batch))
            for (_index, _cand, key), (ok, new_state) in zip(batch, results, strict=True):
                if new_state is None:
                    counters.invalid += 1
                else:
                    counters.tried += 1
                self.cache[key] = ok
            for (index, _cand, _key), (ok, new_state) in zip(batch, results, strict=True):
                if ok and new_state is not None:
                    counters.accepted += 1
                    return index, new_state
            batch.clear()
            if hit is not None:
                new_state = State.of(hit[1])
                if new_state is not None:
                    counters.accepted += 1
                    return hit[0], new_state
            return None

        for index, cand in enumerate(candidates):
            if not self._time_left():
                break
            key = case_key(cand)
            cached = self.cache.get(key)
            if cached is not None:
                counters.cache_hits += 1
                if not cached:
                    continue
            if not measure(cand) < best_size:
                counters.not_smaller += 1
                continue
            if cached:
                hit = (index, cand)
                return flush()
            batch.append((index, cand, key))
            if len(batch) >= self.jobs:
                found = flush()
                if found is not None:
                    return found
        return flush() if batch else None


def reduce_case(case: Case, interesting: Interesting, *, budget_s: float = 120.0,
                jobs: int = 1, cache: dict[str, bool] | None = None,
                passes: Iterable[Pass] = DEFAULT_PASSES,
                on_accept: Callable[[Case, str], None] | None = None) -> Reduction:
    """Reduce `case` while `interesting(candidate)` holds (see `Reducer` for the rules).

    `cache` (key: `case_key`, value: interesting) may be shared between reductions of the
    same finding; `jobs` candidates are tested at a time; `budget_s` bounds the whole run
    and the best case so far is returned when it runs out."""
    return Reducer(interesting, budget_s=budget_s, jobs=jobs, cache=cache, passes=passes,
                   on_accept=on_accept).reduce(case)
