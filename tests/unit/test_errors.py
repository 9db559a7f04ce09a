"""One root for rgpu-fuzz's own exceptions: what the user gave
is an `RgpuError` (one line, exit 2); `HarnessBug` is ours (traceback, exit 70)."""

from __future__ import annotations

import pytest

from campaigns.orchestrate import CampaignError
from generators.profile import ProfileError
from oracles import PolicyError
from rgpu_fuzz import casefile
from rgpu_fuzz.cli import EXIT_BUG, EXIT_USAGE, UserError, main
from rgpu_fuzz.lang.source import DiagnosticError
from rgpu_fuzz.model.errors import HarnessBug, RgpuError
from rgpu_fuzz.pipelines.options import PipelineError
from triage.store import StoreError


@pytest.mark.parametrize("cls", [UserError, PipelineError, PolicyError, casefile.CaseError,
                                 CampaignError, StoreError, ProfileError, DiagnosticError,
                                 HarnessBug])
def test_every_harness_error_has_one_root(cls: type) -> None:
    assert issubclass(cls, RgpuError)


def test_cli_tells_user_errors_from_bugs(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    import rgpu_fuzz.cli.check as check

    def user(_args: object) -> int:
        raise PolicyError("p.toml: max_diffs: expected a positive integer\nsecond line")

    def bug(_args: object) -> int:
        raise HarnessBug("invariant broken")

    monkeypatch.setattr(check, "execute", user)
    assert main(["check", "x.rs"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.strip() == "rgpu-fuzz check: error: p.toml: max_diffs: expected a positive integer"
    monkeypatch.setattr(check, "execute", bug)
    assert main(["check", "x.rs"]) == EXIT_BUG
    err = capsys.readouterr().err
    assert "Traceback" in err and "HarnessBug: invariant broken" in err
