"""The Pipeline contract (DESIGN.md §4): a Case in, an Outcome out.

A pipeline is named by a spec string, `name[:option...]` (`llvm-cpu:O3`,
`amdgpu-sim:gfx942:O2`). Subclasses implement `_run`; `run` is final so every pipeline keeps
the same rules: availability is checked first, a kernel using a feature the pipeline does not
declare gets `Unsupported`, and the total time is always recorded.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar, final

from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import Outcome, Stats, Unavailable, Unsupported


@dataclass(frozen=True, slots=True)
class PipelineSpec:
    """A parsed spec string: `llvm-cpu:O3` is name `llvm-cpu`, options `("O3",)`."""

    name: str
    options: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> PipelineSpec:
        parts = [p.strip() for p in text.strip().split(":")]
        if not parts[0] or any(not p for p in parts):
            raise ValueError(f"bad pipeline spec \"{text}\" (expected name[:option...])")
        return cls(parts[0], tuple(parts[1:]))

    def __str__(self) -> str:
        return ":".join((self.name, *self.options))


EXECUTION_OPTIONS = ("timeout=", "det")
"""Options that change how a pipeline is run or checked, not what it computes."""


class Pipeline(abc.ABC):
    """Turns a Case into an Outcome. Subclasses set `name`, `description`, `option_help` and
    `features` and implement `_run`; they never override `run`."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    option_help: ClassVar[str] = ""
    features: ClassVar[frozenset[str] | None] = None
    """Language features (see `rgpu_fuzz.lang.features`) this pipeline runs; None: all."""

    def __init__(self, spec: PipelineSpec) -> None:
        self.spec = spec

    @property
    def label(self) -> str:
        """How outcomes and signatures name this pipeline: the spec string without
        execution settings (`timeout=...`, `det`), which change how it is run and checked,
        not what is computed, so `llvm-cpu:O2:timeout=30` and `llvm-cpu:O2` bucket together."""
        opts = [o for o in self.spec.options
                if not (o.startswith(EXECUTION_OPTIONS[0]) or o in EXECUTION_OPTIONS[1:])]
        return str(PipelineSpec(self.spec.name, tuple(opts)))

    def unavailable_reason(self) -> str | None:
        """One line saying why this pipeline cannot run here, or None when it can."""
        return None

    @final
    def run(self, case: Case, case_features: frozenset[str] = frozenset()) -> Outcome:
        start = time.perf_counter()
        reason = self.unavailable_reason()
        if reason is not None:
            return Unavailable(reason=reason)
        if self.features is not None and (missing := case_features - self.features):
            return Unsupported(features=tuple(sorted(missing)))
        outcome = self._run(case)
        seconds = dict(outcome.stats.seconds)
        seconds.setdefault("total", time.perf_counter() - start)
        return replace(outcome, stats=Stats(seconds=seconds, artefacts=outcome.stats.artefacts))

    @final
    def run_many(self, cases: Sequence[Case],
                 case_features: Sequence[frozenset[str]] | None = None) -> list[Outcome]:
        """`run` over several cases, letting a pipeline share work between them (one rustc
        crate for a whole batch); the same rules as `run` for every case."""
        feats = case_features if case_features is not None else [frozenset()] * len(cases)
        reason = self.unavailable_reason()
        if reason is not None:
            return [Unavailable(reason=reason) for _ in cases]
        out: list[Outcome | None] = [None] * len(cases)
        todo = []
        for i, f in enumerate(feats):
            if self.features is not None and (missing := f - self.features):
                out[i] = Unsupported(features=tuple(sorted(missing)))
            else:
                todo.append(i)
        start = time.perf_counter()
        results = self._run_many([cases[i] for i in todo])
        share = (time.perf_counter() - start) / max(1, len(todo))
        for i, outcome in zip(todo, results, strict=True):
            seconds = dict(outcome.stats.seconds)
            seconds.setdefault("total", share)
            out[i] = replace(outcome, stats=Stats(seconds=seconds,
                                                  artefacts=outcome.stats.artefacts))
        return [o for o in out if o is not None]

    def _run_many(self, cases: Sequence[Case]) -> list[Outcome]:
        """Override to share work between cases; by default each case runs alone."""
        return [self._run(c) for c in cases]

    @abc.abstractmethod
    def _run(self, case: Case) -> Outcome: ...
