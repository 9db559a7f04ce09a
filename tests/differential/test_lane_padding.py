"""Lane padding (`triage.lane_padding`) and the pieces of `report --upstream` around it: the
known bug's reproducer, the retargeted RUN line, the tidied IR.

The padding test is judged by the lane-VGPR reproducer's own kernel-independent RUN 2 (its
SPILLS lines, docs/llvm-bugs/lane_vgpr_implicit_def_in_loop_header.ll) on a divergent loop
written here: unpadded, llc-22 -O0 keeps all its SGPR spill lanes in the entry block's lane
VGPR (no bug shown); some padding width moves a lane-VGPR boundary into the loop, and then
llc-22 shows the bug and llc-19 (which puts every lane-VGPR IMPLICIT_DEF in the entry block,
per the reproducer's header) does not."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.toolchain import debian_llvm_tool
from triage.known_bugs import reproducer_of
from triage.lane_padding import add_padding, has_padding, settle, with_width
from triage.upstream import Repro, Variant, debian_variant, run_line, run_lines
from triage.upstream_report import reduce_with_padding, retarget, tidy_ir

ROOT = Path(__file__).resolve().parents[2]
REPRO = ROOT / "docs" / "llvm-bugs" / "lane_vgpr_implicit_def_in_loop_header.ll"

LOOP = """target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @k(ptr addrspace(1) %out, i1 %d) {
entry:
  br label %loop

loop:                                             ; preds = %latch, %entry
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %c = icmp ne i32 %tid, 0
  br i1 %c, label %exit, label %latch

latch:                                            ; preds = %loop
  br i1 %d, label %loop, label %exit

exit:                                             ; preds = %latch, %loop
  store i32 0, ptr addrspace(1) %out
  ret void
}

define void @helper() {
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
"""


def test_padding_is_an_argument_stored_before_each_kernel_return(tmp_path: Path) -> None:
    """The padded IR is valid (opt-22 parses it), the kernel has the argument and one store
    of it, the non-kernel function is untouched; widths are rewritten in both places."""
    opt = debian_llvm_tool("opt", 22)
    ir = add_padding(LOOP)
    path = tmp_path / "p.ll"
    path.write_text(with_width(ir, 7))
    subprocess.run([opt, "-S", str(path), "-o", "/dev/null"], check=True, timeout=60)
    assert "@k(<1 x i32> %rgpu.pad, ptr addrspace(1) %rgpu.pad.out, ptr" in ir
    assert ir.count("store <1 x i32> %rgpu.pad, ptr addrspace(1) %rgpu.pad.out") == 1
    assert "define void @helper() {\n  ret void" in ir
    assert with_width(ir, 7).count("<7 x i32> %rgpu.pad") == 2
    assert has_padding(ir) and not has_padding(LOOP)


def test_settled_padding_shows_the_lane_vgpr_bug_on_llc22_only(tmp_path: Path) -> None:
    debian_llvm_tool("llc", 22)
    debian_llvm_tool("llc", 19)
    llc22, llc19 = debian_variant(22), debian_variant(19)
    assert llc22 is not None and llc19 is not None
    run = retarget(run_lines(REPRO.read_text())[1], "gfx942")
    assert "-mcpu=gfx942" in run.command and "SPILLS" in run.command
    probe = tmp_path / "probe.ll"

    def result(ir: str, llc: Variant) -> Repro:
        probe.write_text(ir)
        return run_line(run, probe, llc, check_file=REPRO).result

    assert result(LOOP, llc22) is Repro.NO
    settled = settle(add_padding(LOOP), lambda ir: result(ir, llc22) is Repro.YES)
    assert settled is not None and "<1 x i32>" not in settled
    assert result(settled, llc22) is Repro.YES
    assert result(settled, llc19) is Repro.NO


def test_reduce_line_and_known_bug_reproducer() -> None:
    text = REPRO.read_text()
    assert reduce_with_padding(text)
    assert not reduce_with_padding((ROOT / "docs" / "llvm-bugs" / "sifold_or_minus_one.ll")
                                   .read_text())
    assert reproducer_of("docs/findings/8081e0ac57.md") == (
        "docs/llvm-bugs/lane_vgpr_implicit_def_in_loop_header.ll")
    assert reproducer_of("docs/findings/no-such.md") is None


def test_tidy_ir_drops_attribute_groups_only_intrinsics_use() -> None:
    """LangRef "Intrinsic Functions": an intrinsic's attributes come from LLVM's table, so
    #0 (only on `@llvm.*` declarations) goes; #1, on a function definition, stays."""
    ir = ("declare i32 @llvm.amdgcn.workitem.id.x() #0\n\ndefine void @f() #1 {\n"
          "  ret void\n}\n\nattributes #0 = { nounwind }\nattributes #1 = { noinline }\n")
    assert tidy_ir(ir) == ["declare i32 @llvm.amdgcn.workitem.id.x()", "",
                           "define void @f() #1 {", "  ret void", "}", "",
                           "attributes #1 = { noinline }"]


def test_tidy_ir_drops_only_what_llc_ignores() -> None:
    ir = ("; ModuleID = 'x'\nsource_filename = \"x\"\n\n; Function Attrs: nounwind\n"
          "define void @f() {\nentry:\n  br label %a\n\na:                ; preds = %entry\n"
          "  ret void\n}\n\ndeclare void @g()\n")
    assert tidy_ir(ir) == ["", "define void @f() {", "entry:", "  br label %a", "a:",
                           "  ret void", "}", "", "declare void @g()"]
