"""The reduction passes, in the order the reducer runs them: coarse to fine.

Launch and buffers shrink first because every later candidate then runs on fewer threads.
Items, blocks and statements go next (each removal takes many tokens), then control flow,
inlining and expressions, then literals and values, and names last (they only save
characters)."""

from triage.reduce.passes.exprs import (
    INLINE_HELPERS,
    INLINE_LETS,
    REPLACE_EXPRS,
    SHRINK_LITERALS,
)
from triage.reduce.passes.inputs import SHRINK_BUFFERS, SHRINK_LAUNCH, SHRINK_VALUES
from triage.reduce.passes.items import REMOVE_ITEMS, REMOVE_PARAMS, SIMPLIFY_DECLS
from triage.reduce.passes.names import CANONICAL_NAMES
from triage.reduce.passes.stmts import (
    EMPTY_BLOCKS,
    FLATTEN_BLOCKS,
    IF_BRANCHES,
    LOOPS,
    REMOVE_STMTS,
)
from triage.reduce.state import Pass

DEFAULT_PASSES: tuple[Pass, ...] = (
    SHRINK_LAUNCH,
    SHRINK_BUFFERS,
    REMOVE_ITEMS,
    EMPTY_BLOCKS,
    REMOVE_STMTS,
    IF_BRANCHES,
    LOOPS,
    FLATTEN_BLOCKS,
    INLINE_HELPERS,
    REMOVE_PARAMS,
    REPLACE_EXPRS,
    INLINE_LETS,
    SHRINK_LITERALS,
    SIMPLIFY_DECLS,
    SHRINK_VALUES,
    CANONICAL_NAMES,
)

__all__ = [
    "CANONICAL_NAMES", "DEFAULT_PASSES", "EMPTY_BLOCKS", "FLATTEN_BLOCKS", "IF_BRANCHES",
    "INLINE_HELPERS", "INLINE_LETS", "LOOPS", "REMOVE_ITEMS", "REMOVE_PARAMS", "REMOVE_STMTS",
    "REPLACE_EXPRS",
    "SHRINK_BUFFERS", "SHRINK_LAUNCH", "SHRINK_LITERALS", "SHRINK_VALUES", "SIMPLIFY_DECLS",
    "Pass",
]
