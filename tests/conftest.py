"""Test-wide settings. `make test` (and so CI) selects the Hypothesis profile `ci`:
derandomised, so a red CI run is the same run on a developer's machine.

At the end of a run one line says how many tests were skipped and why, grouped by reason
(`-ra` lists each one; this line is the total a reader checks first). With the environment
variable `RGPU_SKIP_SUMMARY=FILE` the line is also written to FILE, which `make test` prints
again after ruff and mypy, at the very end of its output."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    """The reason a skip gives, without pytest's `Skipped: ` prefix."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return re.sub(r"^Skipped: ", "", reason).strip()


def skip_summary(reports: Sequence[pytest.TestReport | pytest.CollectReport]) -> str:
    """`N skipped: K× reason; ...` (most frequent first), or `0 skipped`."""
    reasons = Counter(_skip_reason(r) for r in reports)
    if not reasons:
        return "0 skipped"
    parts = [f"{n}× {reason}" for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1])]
    return f"{sum(reasons.values())} skipped: " + "; ".join(parts)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if hasattr(terminalreporter.config, "workerinput"):  # an xdist worker: the controller says it
        return
    reports = [r for r in terminalreporter.stats.get("skipped", [])
               if isinstance(r, pytest.TestReport | pytest.CollectReport)]
    line = skip_summary(reports)
    terminalreporter.write_line(f"skip summary: {line}")
    if out := os.environ.get("RGPU_SKIP_SUMMARY"):
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(f"skip summary: {line}\n")
