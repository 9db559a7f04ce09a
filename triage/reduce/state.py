"""What a reduction pass sees (the current best case, checked) and what it is.

Passes work on the *typed* tree the checker returns, so a rewrite can ask any expression
for its type; they hand back whole candidate `Case`s, printed canonically, which the reducer
measures, deduplicates and tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.checker import CheckedModule
from rgpu_fuzz.lang.printer import print_module
from rgpu_fuzz.lang.types import UNIT
from rgpu_fuzz.model.case import Arg, Case, Launch
from rgpu_fuzz.pipelines.frontend import prepare
from triage.reduce.tree import rebuild


@dataclass(frozen=True, slots=True)
class State:
    """The current best case and its checked module (every expression typed)."""

    case: Case
    checked: CheckedModule
    module: ast.Module
    """The checked module with unit-typed block tails (a trailing `if` or block) moved into
    the statements, so statement passes see them; it prints to the same text."""

    @classmethod
    def of(cls, case: Case) -> State | None:
        """The state of a case, or None when its kernel does not check or its arguments do
        not fit the entry kernel (such a candidate is never interesting)."""
        prepared = prepare(case)
        if not isinstance(prepared, tuple):
            return None
        checked = prepared[0]
        return cls(case, checked, _unit_tails_as_stmts(checked.module))

    @property
    def kernel(self) -> ast.Fn:
        return self.checked.fns[self.case.entry]

    def with_module(self, module: ast.Module, *, args: tuple[Arg, ...] | None = None) -> Case:
        """A candidate: this case with `module` printed as its kernel (and new args)."""
        return Case(entry=self.case.entry, kernel=print_module(module), launch=self.case.launch,
                    args=self.case.args if args is None else args,
                    provenance=self.case.provenance, pipelines=self.case.pipelines)

    def with_inputs(self, *, launch: Launch | None = None,
                    args: tuple[Arg, ...] | None = None) -> Case:
        """A candidate with the same kernel text and a new launch or arguments."""
        return Case(entry=self.case.entry, kernel=self.case.kernel,
                    launch=self.case.launch if launch is None else launch,
                    args=self.case.args if args is None else args,
                    provenance=self.case.provenance, pipelines=self.case.pipelines)


def _unit_tails_as_stmts(node: Any) -> Any:
    """Blocks whose tail is a `()` expression, with that tail as a statement instead."""

    def move(n: Any) -> Any:
        if isinstance(n, ast.Block) and n.tail is not None and n.tail.ty is UNIT:
            return replace(n, stmts=(*n.stmts, ast.ExprStmt(expr=n.tail, semi=False)),
                           tail=None)
        return n

    return rebuild(node, move)


@dataclass(frozen=True, slots=True)
class Pass:
    """A named rewrite: from the current state, candidate cases in the order to try them
    (most promising and coarsest first). Candidates need not be valid or smaller: the
    reducer checks both, but cheap filtering here saves time."""

    name: str
    candidates: Callable[[State], Iterator[Case]]
