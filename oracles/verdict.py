"""The oracle's reading of all outcomes of one case (docs/design.md §2 and §5)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from oracles.signature import Signature


class FindingKind(StrEnum):
    WRONG_CODE = "wrong-code"            # outputs differ from the arbiter's class
    TRAP_MISMATCH = "trap-mismatch"      # trapped where ref did not, or not where ref did
    COMPILE_CRASH = "compile-crash"
    RUN_CRASH = "run-crash"
    TIMEOUT = "timeout"
    NONDETERMINISM = "nondeterminism"    # the same case compiled twice gave different bytes
    REJECTED = "rejected"                # a compiler pipeline rejected a case ref accepts
    INVALID_CASE = "invalid-case"        # ref itself rejects or traps: not a compiler bug
    PIPELINE_ERROR = "pipeline-error"    # the pipeline (a plugin) broke: raised, bad value


@dataclass(frozen=True, slots=True)
class ElementDiff:
    """One differing element: its buffer, index, and each side's value and bit pattern."""

    buffer: str
    index: int
    expected: str
    expected_bits: int
    actual: str
    actual_bits: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One thing wrong with one case. `signature` names the bug, not the case
    (docs/design.md §5); it is a value, given text only where the store keeps it."""

    kind: FindingKind
    pipelines: tuple[str, ...]
    signature: Signature
    detail: str = ""
    diffs: tuple[ElementDiff, ...] = field(default=())
    differing_elements: int = 0
    known_issue: str = ""
    """Set when the policy lists this difference as known (the upstream issue)."""
    suspects: tuple[str, ...] = ()
    """The pipelines most likely wrong, when the oracle can say (the arbiter when it is
    outvoted; the minority when no arbiter ran); empty: the pipeline(s) named, or none."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """`agree` when there is nothing to report; otherwise the findings, arbiter first."""

    findings: tuple[Finding, ...] = ()
    classes: tuple[tuple[str, ...], ...] = ()
    """Pipelines grouped by equal outputs (only those that finished)."""
    compared: tuple[str, ...] = ()

    @property
    def agree(self) -> bool:
        return not self.findings

    @property
    def new_findings(self) -> tuple[Finding, ...]:
        """Findings the policy does not list as known differences."""
        return tuple(f for f in self.findings if not f.known_issue)
