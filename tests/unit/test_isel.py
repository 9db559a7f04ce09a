"""The `isel=` option of `amdgpu-sim` and `llvm-cpu`: GlobalISel or SelectionDAG for every
emission, although LLVM's `-global-isel` is one process-wide command-line option and a
worker compiles for many pipeline specs one after another.

What says "this was GlobalISel": LLVM itself. Its GlobalISel pipeline names generic machine
opcodes (`G_FSHL`) in its `unable to legalize instruction` errors, which SelectionDAG has no
notion of (LLVM "Global Instruction Selection" docs, "Legalizer"); x86's GlobalISel in LLVM 22
cannot legalize a funnel shift, which SelectionDAG selects as `rol` (Debian's `llc-22
-global-isel` says the same on the same IR). Output that differs between the two selectors
and is byte-identical between two `dag` compilations around a `global` one shows the option
is set for each emission, not left over from the last.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from rgpu_fuzz.casefile import load
from rgpu_fuzz.lower import HostTarget
from rgpu_fuzz.model.outcome import CompileCrash, Ok
from rgpu_fuzz.pipelines import toolchain
from rgpu_fuzz.pipelines.base import PipelineSpec
from rgpu_fuzz.pipelines.gpu_build import GpuBuild, build_gpu, gpu_target
from rgpu_fuzz.pipelines.llvm_stages import LlvmBuild, StageClock, lower_and_optimise
from rgpu_fuzz.pipelines.options import PipelineError
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.toolchain import Isel, Llc, LlvmError, Target
from tests.toolchain import debian_llvm_tool

CASES = Path(__file__).resolve().parents[1] / "semantics" / "cases"
KERNEL = "cf_while"
"""A semantics kernel (loops, branches, integer arithmetic) both selectors compile for
gfx942 at O3 and for the host at O0 (x86's GlobalISel cannot translate its O3 code)."""

ROTATE = """
define i32 @rot(i32 %x, i32 %s) {
  %r = call i32 @llvm.fshl.i32(i32 %x, i32 %x, i32 %s)
  ret i32 %r
}
declare i32 @llvm.fshl.i32(i32, i32, i32)
"""
"""A rotate (LangRef `llvm.fshl` with both operands the same): SelectionDAG emits x86 `rol`,
LLVM 22's x86 GlobalISel stops with `unable to legalize instruction: ... G_FSHL`."""


def _gpu_asm(isel: Isel) -> tuple[str, bytes]:
    got = build_gpu(load(CASES / f"{KERNEL}.toml"), replace(gpu_target("gfx942"), isel=isel), 3)
    assert isinstance(got, GpuBuild), got
    return got.asm, got.object


def _host_asm(isel: Isel) -> tuple[str, bytes]:
    target = Target.host(isel)
    got = lower_and_optimise(load(CASES / f"{KERNEL}.toml"), HostTarget(), target, 0,
                             clock=StageClock())
    assert isinstance(got, LlvmBuild), got
    return (toolchain.emit_assembly(got.ir_opt, target, 0),
            toolchain.emit_object(got.ir_opt, target, 0))


@pytest.mark.parametrize("compile_", [_gpu_asm, _host_asm], ids=["gfx942-O3", "host-O0"])
def test_dag_after_global_in_one_process_is_selectiondag_again(
        compile_: Callable[[Isel], tuple[str, bytes]]) -> None:
    """dag, global, dag in this one process: GlobalISel's assembly and object differ from
    SelectionDAG's, and the second dag compilation is byte for byte the first."""
    dag_asm, dag_obj = compile_(Isel.DAG)
    global_asm, global_obj = compile_(Isel.GLOBAL)
    again_asm, again_obj = compile_(Isel.DAG)
    assert global_asm != dag_asm and global_obj != dag_obj
    assert again_asm == dag_asm and again_obj == dag_obj


_CHILD = """
import sys
from rgpu_fuzz.pipelines import toolchain
from rgpu_fuzz.pipelines.toolchain import Isel, Target
ir = sys.stdin.read()
for isel in sys.argv[1:]:
    asm = toolchain.emit_assembly(ir, Target.host(Isel(isel)), 3)
    print(isel, "rol" if "\\trol" in asm else "no-rol", flush=True)
"""


def _child(*isels: str) -> subprocess.CompletedProcess[str]:
    """The toolchain in a fresh process (a GlobalISel failure aborts the process)."""
    return subprocess.run([sys.executable, "-c", _CHILD, *isels], input=ROTATE,
                          capture_output=True, text=True, timeout=120, check=False)


def test_global_is_really_globalisel_and_dag_really_selectiondag() -> None:
    """dag then global in one process: the dag emission selects `rol`; the global one stops
    in GlobalISel's legalizer (a generic `G_FSHL`), as `llc-22 -global-isel` does."""
    proc = _child("dag", "global")
    assert proc.stdout.splitlines() == ["dag rol"], proc
    assert proc.returncode != 0
    assert "unable to legalize instruction" in proc.stderr and "G_FSHL" in proc.stderr
    proc = _child("global", "dag")  # the abort comes first: no output at all
    assert proc.stdout == "" and "G_FSHL" in proc.stderr


_AFTER = """
import sys
import llvmlite.binding as llvm
from rgpu_fuzz.pipelines import toolchain
from rgpu_fuzz.pipelines.toolchain import Isel, Target
kernel = "define amdgpu_kernel void @k() { ret void }"
toolchain.emit_object(kernel, Target("amdgcn-amd-amdhsa", "gfx942", isel=Isel.GLOBAL), 2)
tm = llvm.Target.from_default_triple().create_target_machine(opt=3)
print("rol" if "\\trol" in tm.emit_assembly(llvm.parse_assembly(sys.stdin.read())) else "?")
"""


def test_code_generated_outside_the_toolchain_after_a_global_emission_is_selectiondag() -> None:
    """The simulator JITs host code with llvmlite in the same worker (its FMA loops): a
    GlobalISel emission must not leave `-global-isel` on for it. A target machine made
    directly with llvmlite after one selects `rol`, not GlobalISel's abort."""
    proc = subprocess.run([sys.executable, "-c", _AFTER], input=ROTATE, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["rol"]


def test_external_llc_gets_global_isel_on_its_command_line() -> None:
    llc = Llc(debian_llvm_tool("llc", 22))
    host = Target.host()
    assert b"\trol" in llc.emit(ROTATE, host, 3, toolchain.OutputKind.ASSEMBLY)
    with pytest.raises(LlvmError) as err:
        llc.emit(ROTATE, Target.host(Isel.GLOBAL), 3, toolchain.OutputKind.ASSEMBLY)
    assert "unable to legalize instruction" in err.value.signature
    assert "G_FSHL" in err.value.signature


def test_globalisel_abort_in_a_pipeline_is_a_codegen_crash() -> None:
    """The host kernel at O3: SelectionDAG computes it, GlobalISel cannot translate a call
    (LLVM 22's x86 IRTranslator) and its abort is the case's `CompileCrash` in `codegen`."""
    case = load(CASES / f"{KERNEL}.toml")
    reg = Registry()
    assert isinstance(reg.create("llvm-cpu:O3").run(case), Ok)
    got = reg.create("llvm-cpu:O3:isel=global").run(case)
    assert isinstance(got, CompileCrash), got
    assert got.stage == "codegen"
    assert got.signature.startswith("LLVM ERROR: unable to translate instruction")


@pytest.mark.parametrize("name", ["amdgpu-sim:gfx942:O3", "llvm-cpu:O3"])
def test_isel_is_part_of_the_label(name: str) -> None:
    """It changes what is computed: not an execution setting (signatures name it)."""
    reg = Registry()
    assert reg.create(f"{name}:isel=global").label == f"{name}:isel=global"
    assert reg.create(f"{name}:isel=global:timeout=30").label == f"{name}:isel=global"
    assert reg.create(name).label == name


def test_a_bad_selector_is_one_line() -> None:
    for bad in ("isel=fast", "isel="):
        with pytest.raises(PipelineError) as err:
            Registry().create(f"amdgpu-sim:gfx942:{bad}")
        assert "\n" not in str(err.value) and "isel=dag|global" in str(err.value)
    spec = PipelineSpec.parse("llvm-cpu:O3:isel=global:isel=dag")
    with pytest.raises(PipelineError, match="given twice"):
        Registry().create(str(spec))
