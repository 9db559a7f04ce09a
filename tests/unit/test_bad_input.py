"""Bad input to the commands: one line on stderr, exit 2, and
nothing written where it should not be. Each of these was a traceback (exit 70) or a silent
exit 0 before.

An unwritable folder is `/sys/...` when the tests run as root (permission bits do not stop
root; sysfs refuses every new file), otherwise a folder with mode 0555."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rgpu_fuzz.cli import main


@pytest.fixture
def unwritable(tmp_path: Path) -> Path:
    if os.geteuid() == 0:
        return Path("/sys/rgpu-fuzz-test-unwritable")
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o555)
    return folder / "sub"


def one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def campaign(out: Path, *extra: str) -> list[str]:
    return ["campaign", "--out", str(out), "--time", "5s", "--jobs", "1", "--pipelines", "ref",
            *extra]


def test_campaign_out_naming_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_text("x")
    err = one_line_error(capsys, campaign(tmp_path / "f"))
    assert "cannot write a campaign folder there" in err
    assert (tmp_path / "f").read_text() == "x"


def test_campaign_out_unwritable(unwritable: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "cannot write a campaign folder there" in one_line_error(capsys, campaign(unwritable))


def test_campaign_with_a_corrupt_store(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "findings.sqlite").write_bytes(b"this is no database" * 64)
    assert "not a findings store" in one_line_error(capsys, campaign(out))


def test_campaign_with_a_corrupt_checkpoint(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    for text in ('{"identity": ', "[1, 2]"):
        (out / "checkpoint.json").write_text(text)
        assert "not a campaign checkpoint" in one_line_error(capsys, campaign(out))


@pytest.mark.parametrize("specs", ["", " , "])
def test_campaign_without_pipelines_is_refused(tmp_path: Path, specs: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*campaign(tmp_path / "out")[:-2], "--pipelines", specs]
    assert "--pipelines is empty" in one_line_error(capsys, argv)
    assert not (tmp_path / "out").exists()


def test_gen_out_unwritable_or_a_file(tmp_path: Path, unwritable: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert "cannot write" in one_line_error(capsys, ["gen", "--count", "2", "--out",
                                                     str(unwritable)])
    (tmp_path / "f").write_text("x")
    assert "not a folder" in one_line_error(capsys, ["gen", "--out", str(tmp_path / "f")])


def test_bench_out_unwritable_is_refused_before_measuring(
        unwritable: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_error(capsys, ["bench", "gen", "--seeds", "1", "--out",
                                  str(unwritable / "b.json")])
    assert "cannot write" in err and "bench gen..." not in err


def test_bench_conformance_folder_without_cases_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`bench rustc` and `bench sim` time the conformance cases they are given (library code
    does not look for them under tests/): a folder without any is refused up front."""
    err = one_line_error(capsys, ["bench", "rustc", "--conformance", str(tmp_path)])
    assert "--conformance" in err and "no case files" in err


@pytest.mark.parametrize("text", [b"garbage [[[\n", b"\xff\xfe\x00garbage", b"x = " + b"[" * 5000,
                                  b'extends = "default"\n[limits]\nexpr_depth = 100000\n'])
def test_gen_profile_garbage(tmp_path: Path, text: bytes,
                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "garbage.toml"
    path.write_bytes(text)
    assert "garbage.toml" in one_line_error(capsys, ["gen", "--profile", str(path)])


def test_gen_count_without_out_prints_every_case(capsys: pytest.CaptureFixture[str]) -> None:
    from rgpu_fuzz import casefile

    assert main(["gen", "--seed", "5", "--count", "3"]) == 0
    out = capsys.readouterr().out
    parts = out.split("# ---- seed ")[1:]
    assert [p.split(" ", 1)[0] for p in parts] == ["5", "6", "7"]
    for seed, part in zip((5, 6, 7), parts, strict=True):
        assert casefile.loads(part.split("\n", 1)[1]).provenance.seed == seed


def test_bench_gen_honours_seeds(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["bench", "gen", "--seeds", "20"]) == 0
    assert json.loads(capsys.readouterr().out)["benchmarks"]["gen"]["cases"] == 20


def test_campaign_help_shows_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["campaign", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for default in ("default: 60s", "default: runs/campaign", "default: 8",
                    "default: ref,llvm-cpu:O0,llvm-", "default: 0/1"):
        assert default in out


def test_toml_error_prefix_is_not_doubled(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.toml"
    path.write_text('format = "rgpu-case/1"\n[launch\n')
    err = one_line_error(capsys, ["run", str(path)])
    assert err.startswith(f"rgpu-fuzz run: error: {path}:2:")
    assert err.count("error:") == 1

