"""A new user's first hour as the README tells it: the tour's first
command checks a file that ships, `run` without `--pipelines` compares more than the
arbiter alone, and installing prints no licence deprecation banner (an SPDX string)."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest

from rgpu_fuzz.cli import main

ROOT = Path(__file__).resolve().parents[2]


def tour() -> list[list[str]]:
    """The commands of README "A short tour", as argv lists (comments dropped)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## A short tour", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line.split("#", 1)[0]) for line in block.splitlines()
            if line.startswith("rgpu-fuzz ")]


def test_the_tours_first_command_checks_a_shipped_kernel(
        monkeypatch: pytest.MonkeyPatch) -> None:
    first = tour()[0]
    assert first[:2] == ["rgpu-fuzz", "check"]
    monkeypatch.chdir(ROOT)
    assert Path(first[2]).is_file(), first
    assert main(first[1:]) == 0


def test_run_without_pipelines_compares_the_default_set(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gen", "--seed", "7", "--out", str(tmp_path)]) == 0
    (case,) = tmp_path.glob("*.toml")
    capsys.readouterr()
    assert main(["run", str(case), "--json"]) == 0
    outcomes = json.loads(capsys.readouterr().out)["outcomes"]
    assert list(outcomes) == ["ref", "llvm-cpu:O0", "llvm-cpu:O3"]
    assert {o["status"] for o in outcomes.values()} == {"ok"}


def test_licence_is_an_spdx_expression() -> None:
    """setuptools >= 77 deprecates the `license = { text = ... }` table (the banner printed
    three times per install); the SPDX string needs setuptools 77 to build."""
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert doc["project"]["license"] == "Apache-2.0"
    (setuptools,) = [r for r in doc["build-system"]["requires"] if r.startswith("setuptools")]
    assert re.fullmatch(r"setuptools>=(\d+)", setuptools) and int(setuptools[12:]) >= 77
