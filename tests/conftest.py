"""Test-wide settings. `make test` (and so CI) selects the Hypothesis profile `ci`:
derandomised, so a red CI run is the same run on a developer's machine (STYLE.md rule 7)."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
