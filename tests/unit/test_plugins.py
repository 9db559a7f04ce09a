"""Pipelines from `--plugin` files, end to end: the example plugins in `tests/plugins/`
seed a miscompilation, an LLVM abort and a hang through `LlvmCpuPipeline.transform_ir`,
and `rgpu-fuzz run` must report each as the finding it is and carry on."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from rgpu_fuzz import casefile
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from rgpu_fuzz.cli import main
from rgpu_fuzz.model.case import BufferArg, Case, Fill, Launch, Values
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.llvm_cpu import artefacts
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.workers import Died, call_in_worker

PLUGINS = Path(__file__).resolve().parent.parent / "plugins"
CANNOT_SELECT = "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.workitem.id.x"

KERNEL = """use rgpu::*;

#[kernel]
pub fn k(a: &[u32], out: &mut [u32]) {
    let t: usize = thread_idx_x() as usize;
    out[t] = a[t] ^ 0x0fu32;
}
"""
CASE = Case(entry="k", kernel=KERNEL, launch=Launch(block=(4, 1, 1)), args=(
    BufferArg(name="a", elem=Scalar.U32, len=4, init=Values((0xFF, 0x01, 0x10, 0x0F))),
    BufferArg(name="out", elem=Scalar.U32, len=4, init=Fill(0))))


@pytest.fixture
def case_file(tmp_path: Path) -> Path:
    path = tmp_path / f"{CASE.id}.toml"
    casefile.save(CASE, path)
    return path


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[Any]]:
    code = main(["run", *argv, "--json"])
    lines = capsys.readouterr().out.splitlines()
    return code, [json.loads(ln) for ln in lines if ln.startswith("{")]


def test_miscompile_plugin_is_wrong_code(case_file: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, (got,) = run_json(capsys, str(case_file), "--pipelines", "ref,llvm-cpu-xor2or",
                            "--plugin", str(seeded_plugin("miscompile.py")))
    assert code == 1
    ref, broken = got["outcomes"]["ref"], got["outcomes"]["llvm-cpu-xor2or"]
    assert ref["outputs"]["out"]["bits"] == [0xF0, 0x0E, 0x1F, 0x00]     # xor
    assert broken["outputs"]["out"]["bits"] == [0xFF, 0x0F, 0x1F, 0x0F]  # or
    (finding,) = got["verdict"]
    assert finding["kind"] == "wrong-code"
    assert finding["pipelines"] == ["ref", "llvm-cpu-xor2or"]
    assert finding["signature"].startswith("wrong-code|llvm-cpu-xor2or|")


def test_fatal_plugin_is_compile_crash(case_file: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    line = CANNOT_SELECT
    code, (got,) = run_json(capsys, str(case_file), "--pipelines", "llvm-cpu-fatal,ref",
                            "--plugin", str(PLUGINS / "fatal.py"))
    assert code == 1
    crash = got["outcomes"]["llvm-cpu-fatal"]
    assert crash["status"] == "compile-crash"
    assert crash["detail"] == f"codegen: {line}"
    assert got["outcomes"]["ref"]["status"] == "ok"
    (finding,) = got["verdict"]
    assert finding["kind"] == "compile-crash"
    assert finding["signature"] == f"compile-crash|llvm-cpu-fatal|codegen|{line}"


def test_fatal_plugin_aborts_the_worker() -> None:
    """The abort is LLVM's own (SIGABRT), not a Python exception dressed up as one."""
    reg = Registry()
    reg.load_plugin(PLUGINS / "fatal.py")
    pipeline = reg.create("llvm-cpu-fatal")
    result = call_in_worker("rgpu_fuzz.pipelines.llvm_cpu:execute",
                            pipeline.job(CASE), timeout=60)  # type: ignore[attr-defined]
    assert isinstance(result, Died), result
    assert result.signal == "SIGABRT"
    assert "LLVM ERROR: Cannot select" in result.log


def test_fatal_plugin_artefacts_stop_before_codegen() -> None:
    """`reproduce --show ir` still shows the IR that made LLVM abort."""
    reg = Registry()
    reg.load_plugin(PLUGINS / "fatal.py")
    texts = artefacts(CASE, pipeline=reg.create("llvm-cpu-fatal"))  # type: ignore[arg-type]
    assert "@llvm.amdgcn.workitem.id.x" in texts["llvm-ir-opt"]
    assert "asm" not in texts
    assert texts["error"] == f"codegen: {CANNOT_SELECT}"


def test_hang_plugin_times_out_and_the_run_goes_on(tmp_path: Path, case_file: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    second = tmp_path / "second.toml"
    casefile.save(CASE, second)
    # `llvm-cpu` first leaves a warm worker for the hang job, so its 2 s go to the kernel
    # and not to starting Python; the worker it kills is replaced for `llvm-cpu:O0`.
    hang = "llvm-cpu-hang"  # the label: `timeout=` is an execution setting, not identity
    start = time.monotonic()
    code, got = run_json(capsys, str(case_file), str(second),
                         "--pipelines", f"ref,llvm-cpu,{hang}:timeout=2,llvm-cpu:O0",
                         "--plugin", str(PLUGINS / "hang.py"))
    assert time.monotonic() - start < 30
    assert code == 1 and len(got) == 2
    for one in got:
        outcomes = one["outcomes"]
        assert outcomes[hang]["status"] == "timeout"
        assert outcomes[hang]["detail"] == "run after 2s"  # the worker's last stage
        assert [outcomes[p]["status"] for p in ("ref", "llvm-cpu", "llvm-cpu:O0")] == ["ok"] * 3
        (finding,) = one["verdict"]
        assert finding["kind"] == "timeout"
        assert finding["signature"] == f"timeout|{hang}|run"


def test_hang_plugin_default_timeout_is_its_class_attribute() -> None:
    reg = Registry()
    reg.load_plugin(PLUGINS / "hang.py")
    assert reg.create("llvm-cpu-hang").timeout == 3.0  # type: ignore[attr-defined]
    assert reg.create("llvm-cpu-hang:O1:timeout=0.5").timeout == 0.5  # type: ignore[attr-defined]


def test_pipelines_lists_plugin(capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["pipelines", "--plugin", str(seeded_plugin("miscompile.py"))]) == 0
    out = capsys.readouterr().out
    assert "llvm-cpu-xor2or" in out and "llvm-cpu " in out


def test_plugin_classes_are_found_again_in_another_process(tmp_path: Path) -> None:
    """A worker re-imports the plugin file under the same module name (no per-process
    `hash()` salt), and a file edited since it was loaded is refused, not mixed in."""
    import subprocess
    import sys

    from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline
    from rgpu_fuzz.pipelines.registry import ClassRef, PipelineError, plugin_module_name

    assert ClassRef.of(LlvmCpuPipeline).plugin_file is None
    plugin = tmp_path / "my-plugin.py"
    plugin.write_text((seeded_plugin("miscompile.py")).read_text())
    reg = Registry()
    (name,) = reg.load_plugin(plugin)
    ref = ClassRef.of(reg.cls(name))
    assert ref.plugin_file == str(plugin.resolve())
    assert ref.module == plugin_module_name(plugin) and ref.module.isidentifier()
    other = subprocess.run([sys.executable, "-c", "import sys; from rgpu_fuzz.pipelines."
                            "registry import plugin_module_name as n; print(n(sys.argv[1]))",
                            str(plugin)], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == ref.module
    assert ref.load() is reg.cls(name)
    plugin.write_text(plugin.read_text() + "\n# edited\n")
    with pytest.raises(PipelineError, match="changed since it was loaded"):
        ref.load()
