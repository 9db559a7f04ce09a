"""`rgpu_fuzz.checkout`: the one place that finds the source checkout (benches, report
--upstream and the recorded revision use it). The tests run from a checkout, so it must be
the folder holding this `tests/` and the `pyproject.toml` of the `rgpu-fuzz` distribution."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu_fuzz.checkout import NoCheckout, checkout, in_checkout

HERE = Path(__file__).resolve().parents[2]


def test_the_checkout_is_the_repository_the_tests_run_from() -> None:
    assert checkout() == HERE
    assert in_checkout("tests", "plugins", "broken.py").is_file()


def test_no_checkout_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import rgpu_fuzz.checkout as mod

    monkeypatch.setattr(mod, "checkout", lambda: None)
    with pytest.raises(NoCheckout) as e:
        mod.in_checkout("tests", "plugins")
    assert str(e.value).count("\n") == 0 and "tests/plugins" in str(e.value)
