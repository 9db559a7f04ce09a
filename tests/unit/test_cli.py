"""The command line (README): one clear line and a non-zero exit for user mistakes,
diagnostics with file:line:col, and the documented `run --json` object."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rgpu_fuzz import __version__, casefile
from rgpu_fuzz.cli import main
from rgpu_fuzz.model.case import BufferArg, Case, Fill, Launch, ScalarArg, Values
from rgpu_fuzz.model.scalars import Scalar

KERNEL = """use rgpu::*;

#[kernel]
pub fn k(a: &[i32], out: &mut [i32], n: u32) {
    let i: usize = thread_idx_x() as usize;
    out[i] = a[i].wrapping_mul(3i32) + (n as i32);
}
"""


def write_case(tmp_path: Path, kernel: str = KERNEL, values: tuple[int, ...] = (1, 2, 3, 4),
               name: str = "c.toml") -> Path:
    case = Case(entry="k", kernel=kernel, launch=Launch(grid=(1, 1, 1), block=(4, 1, 1)),
                args=(BufferArg(name="a", elem=Scalar.I32, len=4,
                                init=Values(tuple(v & 0xFFFFFFFF for v in values))),
                      BufferArg(name="out", elem=Scalar.I32, len=4, init=Fill(0)),
                      ScalarArg(name="n", ty=Scalar.U32, bits=10)))
    return casefile.save(case, tmp_path / name)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"rgpu-fuzz {__version__}"


def test_every_command_has_help_with_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    from rgpu_fuzz.cli import COMMANDS

    for name in COMMANDS:
        with pytest.raises(SystemExit):
            main([name, "--help"])
        out = capsys.readouterr().out
        assert "example: rgpu-fuzz" in out, name


def test_check_ok_and_diagnostic_with_location(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.rs"
    good.write_text(KERNEL)
    assert main(["check", str(good)]) == 0
    bad = tmp_path / "bad.rs"
    bad.write_text(KERNEL.replace("a[i].wrapping_mul(3i32)", "a[i] + 1u8"))
    assert main(["check", str(bad)]) == 1
    err = capsys.readouterr().err
    # line 6, column 14 is where `a[i] + 1u8` starts mixing i32 and u8 (counted by hand)
    assert f"{bad}:6:" in err and "mismatched types" in err
    assert "Traceback" not in err


def test_check_missing_file_is_one_line(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "nope.rs")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "cannot read" in err


def test_run_json_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_case(tmp_path, values=(1, -2, 2**31 - 1, 0))
    assert main(["run", str(path), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    ref = obj["outcomes"]["ref"]
    assert obj["case"] == casefile.load(path).id
    assert ref["status"] == "ok" and ref["detail"] == ""
    # out[i] = a[i] * 3 + 10, wrapping in i32, as unsigned bit patterns (hand-computed):
    # 1*3+10 = 13; -2*3+10 = 4; (2^31-1)*3 = 2^32+2^31-3 -> wraps to 2^31-3 = 0x7ffffffd,
    # +10 -> 0x80000007; 0*3+10 = 10
    assert ref["outputs"] == {"out": {"type": "i32", "bits": [13, 4, 0x80000007, 10]}}
    assert obj["verdict"] == "agree"


def test_run_trap_is_an_outcome_not_an_error(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    kernel = KERNEL.replace("a[i].wrapping_mul(3i32)", "a[i] / a[3]")
    path = write_case(tmp_path, kernel=kernel, values=(1, 2, 3, 0))
    assert main(["run", str(path), "--json"]) == 0
    ref = json.loads(capsys.readouterr().out)["outcomes"]["ref"]
    assert ref["status"] == "trap"
    assert ref["detail"].startswith("div-by-zero at 6:")


def test_run_bad_case_file_is_one_line(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('format = "rgpu-case/1"\nentry = "k"\nkernel = "x"\n[launch]\n'
                    'grid = [1]\nblock = [0]\n')
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("launch.block: every dimension must be >= 1")
    assert "\n" not in err


def test_run_kernel_that_does_not_check_is_a_user_error_at_its_file_location(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A case the user wrote wrong is the user's error (exit 2, one line), placed at the line
    and column of the case file (the kernel starts on line 5 of the saved file: format, id,
    entry, `kernel = '''`), not an `invalid-case` finding against a generator."""
    path = write_case(tmp_path, kernel=KERNEL.replace("3i32", "3u8"))
    assert main(["run", str(path), "--json", "--pipelines", "ref"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    line = 4 + KERNEL.split("\n").index("    out[i] = a[i].wrapping_mul(3i32) + (n as i32);") + 1
    col = KERNEL.split("\n")[line - 5].index("3i32") + 1
    assert f"c.toml:{line}:{col}: mismatched types" in err


def test_run_args_not_matching_the_kernel_show_both_with_types(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_case(tmp_path, kernel=KERNEL.replace("n: u32", "n: u64"))
    assert main(["run", str(path), "--pipelines", "ref"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "it takes (a: &[i32], out: &mut [i32], n: u64)" in err
    assert "n: scalar u32" in err


def test_run_unknown_entry_is_a_user_error(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = write_case(tmp_path)
    path.write_text(path.read_text().replace('entry = "k"', 'entry = "main"').replace(
        "\nid = ", "\nxid = ").replace("xid = ", "# "))
    assert main(["run", str(path), "--pipelines", "ref"]) == 2
    assert "no kernel named `main` (kernels: k)" in capsys.readouterr().err


def test_unknown_pipeline_is_one_line(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = write_case(tmp_path)
    assert main(["run", str(path), "--pipelines", "ref,nosuch:O2"]) == 2
    err = capsys.readouterr().err.strip()
    assert 'unknown pipeline "nosuch"' in err and "\n" not in err


def test_gen_is_deterministic_and_checks(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gen", "--seed", "5"]) == 0
    first = capsys.readouterr().out
    assert main(["gen", "--seed", "5"]) == 0
    assert capsys.readouterr().out == first
    case = casefile.loads(first)
    (tmp_path / "k.rs").write_text(case.kernel)
    assert main(["check", str(tmp_path / "k.rs")]) == 0


def test_gen_bad_profile_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gen", "--profile", "/nonexistent/profile.toml"]) == 2
    assert "\n" not in capsys.readouterr().err.strip()
