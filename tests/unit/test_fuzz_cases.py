"""`fuzz/cases.py`, driven without atheris: the inputs that used to be tracebacks pass the
harness's contract now, and a broken contract is caught and saved."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz import cases


@pytest.fixture(autouse=True)
def crash_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "crashes"
    monkeypatch.setenv(cases.CRASH_DIR_ENV, str(folder))
    return folder


def kernel_input(hole: str, text: str) -> bytes:
    index = cases.frontend.HOLES.index(hole)
    prefix = next(c for c in range(32, 127) if c % len(cases.frontend.HOLES) == index)
    return bytes([cases.MODES.index("kernel"), prefix]) + text.encode()


def shape_input(text: str) -> bytes:
    return bytes([cases.MODES.index("shape")]) + text.encode()


@pytest.mark.parametrize("data", [
    b"",
    kernel_input("stmt", "let a: [u32; 1000000000] = [0u32; 1000000000];"),
    kernel_input("item", "#[shared]\nstatic mut H: [u64; 100000000] = [0u64; 100000000];"),
    kernel_input("expr", "(" * 400 + "1u32" + ")" * 400),
    shape_input(cases.SHAPE.replace("grid = [2, 1, 1]", "grid = [1000000000, 1, 1]")),
    shape_input(cases.SHAPE + "[x]\ny = " + "[" * 100_000 + "]" * 100_000 + "\n"),
    shape_input(cases.SHAPE.replace('name = "n"', 'name = "m"')),
    bytes([cases.MODES.index("raw")]) + b'format = "rgpu-case/1"\nentry = "nope"\n',
    # found by the 30-minute run: a multi-line `format` value was echoed into the one-line
    # error, which then had 7 lines
    bytes([cases.MODES.index("raw")]) + b"format ='''\nuse rgp&u::*;\n\n#[kernel]\n'''\n",
    bytes([cases.MODES.index("raw")]) + (b'format = "rgpu-case/1"\nentry = "a\\nb"\n'
                                         b'kernel = "use rgpu::*;"\n[launch]\n'),
])
def test_inputs_that_were_tracebacks_keep_the_contract(data: bytes, crash_dir: Path) -> None:
    cases.TestOneInput(data)
    assert not crash_dir.exists()


def test_seed_inputs_keep_the_contract(crash_dir: Path) -> None:
    for data in cases.seed_inputs()[:12]:
        cases.TestOneInput(data)
    assert not crash_dir.exists()


def test_a_traceback_is_a_harness_finding_and_is_saved(
        crash_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rgpu_fuzz import cli

    def broken(argv: list[str]) -> int:
        print("Traceback (most recent call last): ...", file=__import__("sys").stderr)
        return cli.EXIT_BUG

    monkeypatch.setattr(cli, "main", broken)
    with pytest.raises(cases.CliBug, match="exited 70"):
        cases.TestOneInput(b"")
    (saved,) = crash_dir.glob("*.toml")
    assert saved.read_text().startswith('format = "rgpu-case/1"')
