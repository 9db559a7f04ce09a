"""Oracles: compare the outcomes of one case and say what is wrong (docs/design.md §5)."""

from oracles.compare import (
    arbiter_of,
    compare_outputs,
    judge,
    kernel_operations,
    normalise_crash_line,
)
from oracles.policy import KnownDifference, Policy, PolicyError, ZeroSign, load_policy
from oracles.signature import Signature
from oracles.verdict import ElementDiff, Finding, FindingKind, Verdict

__all__ = [
    "ElementDiff", "Finding", "FindingKind", "KnownDifference", "Policy", "PolicyError",
    "Signature", "Verdict", "ZeroSign", "arbiter_of", "compare_outputs", "judge",
    "kernel_operations", "load_policy", "normalise_crash_line",
]
