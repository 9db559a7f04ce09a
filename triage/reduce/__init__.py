"""Type-aware reduction of failing cases (docs/design.md §2 "Reduce").

`reduce_case(case, interesting)` shrinks a case with AST rewrites (C-Reduce style: not only
deletions) while `interesting` holds; `signature_predicate` builds the test triage uses:
still well-defined under `ref`, still the same finding signature.
"""

from triage.reduce.passes import DEFAULT_PASSES
from triage.reduce.predicate import (
    expected_ref_trap,
    reduction_key,
    signature_predicate,
)
from triage.reduce.reducer import (
    PassStats,
    Reducer,
    Reduction,
    case_key,
    reduce_case,
)
from triage.reduce.size import Size, measure
from triage.reduce.state import Pass, State

__all__ = [
    "DEFAULT_PASSES", "Pass", "PassStats", "Reducer", "Reduction", "Size", "State", "case_key",
    "expected_ref_trap", "measure", "reduce_case", "reduction_key", "signature_predicate",
]
