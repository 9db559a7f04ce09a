"""a failing plugin is an outcome of that pipeline, never a dead command.

Before this change each of these aborted `rgpu-fuzz run` with a traceback (exit 70) and lost
`ref`'s result, hung it (`broken-sleep`), or let a campaign log hundreds of harness errors.
The plugins are in `tests/plugins/broken.py`."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from rgpu_fuzz import casefile
from rgpu_fuzz.cli import main
from tests.unit.test_plugins import CASE

BROKEN = Path(__file__).resolve().parent.parent / "plugins" / "broken.py"
REF_BITS = [0xF0, 0x0E, 0x1F, 0x00]   # a ^ 0x0f for a = ff, 01, 10, 0f (by hand)


@pytest.fixture
def case_file(tmp_path: Path) -> Path:
    path = tmp_path / "case.toml"
    casefile.save(CASE, path)
    return path


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["run", *argv, "--json", "--plugin", str(BROKEN)])
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("{")]
    return code, json.loads(line)


@pytest.mark.parametrize(("pipeline", "says"), [
    ("broken-raises", "ZeroDivisionError"),
    ("broken-text", "not an Outcome"),
    ("broken-none", "NoneType"),
    ("broken-shape", "no_such_buffer"),
    ("broken-short", "3 u32, the case gives 4 u32"),
])
def test_a_broken_run_is_a_pipeline_error(case_file: Path, pipeline: str, says: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, got = run_json(capsys, str(case_file), "--pipelines", f"ref,{pipeline}")
    assert code == 1
    assert got["outcomes"]["ref"]["outputs"]["out"]["bits"] == REF_BITS
    broken = got["outcomes"][pipeline]
    assert broken["status"] == "pipeline-error" and says in broken["detail"], broken
    (finding,) = got["verdict"]
    assert finding["kind"] == "pipeline-error" and finding["pipelines"] == [pipeline]
    if pipeline == "broken-raises":
        assert "Traceback" in finding["detail"] and "1 // 0" in finding["detail"]


def test_an_in_process_hang_is_a_timeout(case_file: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    start = time.monotonic()
    code, got = run_json(capsys, str(case_file), "--pipelines", "ref,broken-sleep")
    assert time.monotonic() - start < 30
    assert code == 1
    assert got["outcomes"]["ref"]["outputs"]["out"]["bits"] == REF_BITS
    assert got["outcomes"]["broken-sleep"]["status"] == "timeout"


@pytest.mark.parametrize(("pipeline", "says"), [
    ("broken-transform-raises", "ValueError: no IR today"),
    ("broken-transform-none", "returned NoneType"),
    ("broken-transform-junk", "IR LLVM rejects"),
])
def test_a_broken_transform_is_a_compile_crash(case_file: Path, pipeline: str, says: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """README, "Add your own compiler": a hook whose IR LLVM cannot use is a compile-crash."""
    code, got = run_json(capsys, str(case_file), "--pipelines", f"ref,{pipeline}:O0")
    assert code == 1
    broken = got["outcomes"][f"{pipeline}:O0"]
    assert broken["status"] == "compile-crash" and "transform" in broken["detail"], broken
    assert says in broken["detail"]
    assert got["outcomes"]["ref"]["outputs"]["out"]["bits"] == REF_BITS
