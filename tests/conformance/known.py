"""What the conformance suite knows to be wrong today, in two tables (docs/conformance.md
explains every entry with its evidence).

`KNOWN_FAILURES`: (case, pipeline label) → the outcome observed and its class. Each is a
strict expected failure, so the day it is fixed the test reports XPASS(strict) and fails:
the entry is then removed. The class names who is wrong: `sim:` the AMDGPU simulator,
`llvm:` LLVM's code generation, `rustc:` the rustc pipelines' harness.

`UNSUPPORTED_BUDGET`: (case, pipeline label) → why that pipeline cannot run that case. An
`Unsupported` outcome is a skip; the suite counts them per pipeline and fails on one that
this table does not name (a simulator coverage regression) and on an entry that no longer
happens (a stale excuse). The budget is the table's size.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class KnownFailure:
    """A (case, pipeline) that is wrong today: what it gives and which class of bug."""

    observed: str
    klass: str


KNOWN_FAILURES: dict[tuple[str, str], KnownFailure] = {}
"""Empty: the six gfx90a failures found when every case first ran on every target, and
rustc-amdgpu's flat atomics at the LDS aperture, are fixed in the simulator
(docs/conformance.md)."""

UNSUPPORTED_BUDGET: dict[tuple[str, str], str] = {}
"""Which pipelines cannot run which case yet (docs/conformance.md "`Unsupported` budget");
empty since the simulator runs LDS atomics. An entry is removed when its pipeline gains
the feature (the suite then reports the stale entry)."""


def known_failure(name: str, label: str) -> KnownFailure | None:
    return KNOWN_FAILURES.get((name, label))


def allowed_unsupported(label: str) -> dict[str, str]:
    """Case → reason, for the cases `label` may answer `Unsupported` for."""
    return {case: why for (case, spec), why in UNSUPPORTED_BUDGET.items() if spec == label}
