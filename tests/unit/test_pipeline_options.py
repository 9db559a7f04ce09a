"""Declared pipeline options and reserved names.

Expected values are the spec grammar written down in `rgpu_fuzz.pipelines.options`: each
malformed spec below was accepted before (and became a label) and must now be one error."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from rgpu_fuzz.cli import main
from rgpu_fuzz.pipelines.base import Pipeline
from rgpu_fuzz.pipelines.options import Choice, Flag, Int, OptLevel, PathOption, PipelineError
from rgpu_fuzz.pipelines.registry import RESERVED_NAMES, Registry

CASE = Path(__file__).resolve().parents[2] / "corpus"


@pytest.mark.parametrize("spec", [
    "rustc-cpu:O9", "llvm-cpu:O4", "ref:steps=abc", "ref:steps=-5", "ref:steps=0", "ref:bogus",
    "ref:steps", "llvm-cpu:O2:O3", "llvm-cpu:det=1", "llvm-cpu:timeout=0",
    "llvm-cpu:timeout=nan", "llvm-cpu:timeout=x", "ref:", "",
])
def test_bad_option_is_one_error(spec: str) -> None:
    with pytest.raises(PipelineError) as err:
        Registry().create(spec)
    assert "\n" not in str(err.value)


def test_options_are_typed_and_the_label_is_canonical() -> None:
    reg = Registry()
    ref = reg.create("ref:steps=1_000")
    assert ref.option(ref.STEPS) == 1000  # type: ignore[attr-defined]
    assert ref.label == "ref:steps=1000"
    llvm = reg.create("llvm-cpu:det:o3:timeout=7.5")
    assert (llvm.opt_level, llvm.check_determinism, llvm.timeout) == (3, True, 7.5)  # type: ignore[attr-defined]
    assert llvm.label == "llvm-cpu:O3"       # execution settings are not part of the label
    assert reg.create("llvm-cpu").label == "llvm-cpu"
    assert reg.create("rustc-cpu:O0").opt_level == 0  # type: ignore[attr-defined]


class _Target(Pipeline):
    name = "target-test"
    TARGET = Choice(name="target", choices=("gfx942", "gfx90a", "gfx1100"))
    OPT = OptLevel(level=1)
    LLC = PathOption(name="llc", executable=True)
    DET = Flag(name="det", execution=True)
    STEPS = Int(name="steps", value=5, min=1, max=10)
    options = (TARGET, OPT, LLC, DET, STEPS)

    def _run(self, case):  # type: ignore[no-untyped-def]
        raise NotImplementedError


def test_every_kind_of_declaration(tmp_path: Path) -> None:
    p = _Target("target-test")
    assert (p.option(p.TARGET), p.option(p.OPT), p.option(p.LLC), p.option(p.DET),
            p.option(p.STEPS)) == ("gfx942", 1, None, False, 5)
    llc = tmp_path / "llc"
    llc.write_text("#!/bin/sh\n")
    llc.chmod(0o755)
    p = _Target(f"target-test:O3:llc={llc}:gfx90a:det:steps=10")
    assert (p.option(p.TARGET), p.option(p.OPT), p.option(p.LLC), p.option(p.DET),
            p.option(p.STEPS)) == ("gfx90a", 3, str(llc), True, 10)
    assert p.label == f"target-test:gfx90a:O3:llc={llc}:steps=10"
    for bad, why in [("gfx999", "unknown option"), ("steps=11", "out of range"),
                     (f"llc={tmp_path}/missing", "no such file"), ("gfx942:gfx90a", "twice")]:
        with pytest.raises(PipelineError, match=why):
            _Target(f"target-test:{bad}")
    llc.chmod(0o644)
    with pytest.raises(PipelineError, match="not executable"):
        _Target(f"target-test:llc={llc}")


def _plugin(tmp_path: Path, name: str, cls: str = "P") -> Path:
    path = tmp_path / f"{cls.lower()}_{name.replace('-', '_')}.py"
    path.write_text(textwrap.dedent(f"""
        from rgpu_fuzz.pipelines.ref import RefPipeline

        class {cls}(RefPipeline):
            name = "{name}"
    """))
    return path


@pytest.mark.parametrize("name", sorted(RESERVED_NAMES))
def test_a_plugin_cannot_shadow_a_builtin_name(tmp_path: Path, name: str) -> None:
    with pytest.raises(PipelineError, match="reserved"):
        Registry().load_plugin(_plugin(tmp_path, name))


def test_two_pipelines_with_one_name_are_refused(tmp_path: Path) -> None:
    reg = Registry()
    reg.load_plugin(_plugin(tmp_path, "mine", "A"))
    reg.load_plugin(_plugin(tmp_path, "mine", "A"))   # the same file again: the same class
    with pytest.raises(PipelineError, match="two pipelines named \"mine\""):
        reg.load_plugin(_plugin(tmp_path, "mine", "B"))


@pytest.mark.parametrize("spec", ["rustc-cpu:O9", "ref:steps=abc", "ref:steps=-5", "ref:bogus"])
def test_cli_bad_option_exits_2_with_one_line(spec: str, capsys: pytest.CaptureFixture[str]
                                              ) -> None:
    case = next(iter(sorted(CASE.glob("*.toml"))))
    assert main(["run", str(case), "--pipelines", f"ref,{spec}" if spec[:3] != "ref"
                 else spec]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and spec.split(":")[0] in err, err


def test_cli_plugin_named_ref_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = next(iter(sorted(CASE.glob("*.toml"))))
    assert main(["run", str(case), "--pipelines", "ref",
                 "--plugin", str(_plugin(tmp_path, "ref"))]) == 2
    assert "reserved" in capsys.readouterr().err
