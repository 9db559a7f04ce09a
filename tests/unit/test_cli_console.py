"""Labels printed by the CLI are the labels a user can paste back (rich emoji codes off)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu_fuzz.cli import main
from tests.toolchain import debian_llvm_tool

EXAMPLE = Path(__file__).resolve().parents[2] / "corpus"


def test_run_table_prints_an_llc_label_verbatim(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    # `:o2:` is one of rich's emoji codes: with emoji on, `llvm-cpu:O2:llc=...` printed as
    # `llvm-cpu🅾llc=...` (seen in `rgpu-fuzz run` before this change).
    llc = debian_llvm_tool("llc", 22)
    monkeypatch.setenv("COLUMNS", "400")
    case = sorted(EXAMPLE.glob("*.toml"))[0]
    spec = f"llvm-cpu:O2:llc={llc}"
    main(["run", str(case), "--pipelines", f"ref,{spec}"])
    out = capsys.readouterr().out
    assert spec in out
    assert "\N{NEGATIVE SQUARED LATIN CAPITAL LETTER O}" not in out
