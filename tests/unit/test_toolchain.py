"""The one LLVM toolchain (`rgpu_fuzz.pipelines.toolchain`): target machines for any triple,
optimisation levels, emission from fresh modules, the one wrapped error, external `llc`.

Expected facts come from LLVM itself (its assembly text, its own `llc`) or from LangRef
(what O0 must leave alone), never from the module under test."""

from __future__ import annotations

import re
import struct
import subprocess

import pytest

from rgpu_fuzz.model.case import BufferArg, Case, Fill, Launch, Values
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines import toolchain
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.toolchain import Llc, LlvmError, OutputKind, Target
from tests.toolchain import debian_llvm_tool

MUL8 = """
define i32 @times8(i32 %x) {
  %y = mul i32 %x, 8
  ret i32 %y
}
"""

AMDGCN = "amdgcn-amd-amdhsa"


def test_optimisation_levels_use_the_new_pass_manager() -> None:
    host = Target.host()
    assert "mul i32 %x, 8" in toolchain.optimise(MUL8, host, 0)   # O0: nothing runs
    assert re.search(r"shl i32 %x, 3", toolchain.optimise(MUL8, host, 3))  # instcombine


@pytest.mark.parametrize("cpu", ["gfx942", "gfx90a", "gfx1100"])
def test_target_machine_for_any_triple_and_cpu(cpu: str) -> None:
    """LLVM's AMDGPU asm printer names the target it compiled for in `.amdgcn_target`
    (AMDGPUUsage, "Code Object Target Identification"), and an object is an ELF."""
    target = Target(AMDGCN, cpu)
    asm = toolchain.emit_assembly(MUL8, target, 2)
    assert f'.amdgcn_target "{AMDGCN}--{cpu}' in asm
    assert "s_lshl_b32" in asm or "v_lshlrev_b32" in asm  # the multiply became a shift
    obj = toolchain.emit_object(MUL8, target, 2)
    assert obj[:4] == b"\x7fELF" and obj[4] == 2  # ELFCLASS64
    assert struct.unpack_from("<H", obj, 18)[0] == 224  # e_machine EM_AMDGPU (ELF gABI)


def test_features_reach_the_target_machine() -> None:
    """gfx1100 runs wave32 by default; `+wavefrontsize64` asks for wave64 (AMDGPUUsage,
    target features), which the asm printer reports as `.amdhsa_wavefront_size32 0`."""
    kernel = "define amdgpu_kernel void @k() { ret void }"
    w32 = toolchain.emit_assembly(kernel, Target(AMDGCN, "gfx1100"), 0)
    w64 = toolchain.emit_assembly(kernel, Target(AMDGCN, "gfx1100", "+wavefrontsize64"), 0)
    assert ".amdhsa_wavefront_size32 1" in w32
    assert ".amdhsa_wavefront_size32 0" in w64


def test_emission_from_a_fresh_module_each_time() -> None:
    """Assembly then object from one text twice over (one module would abort LLVM)."""
    target = Target(AMDGCN, "gfx942")
    for _ in range(2):
        toolchain.emit_assembly(MUL8, target, 1)
        toolchain.emit_object(MUL8, target, 1)
    facts = toolchain.determinism(MUL8, toolchain.optimise(MUL8, target, 1), target, 1)
    assert list(facts) == ["object"] and len(facts["object"]) == 64


def test_emission_from_the_optimised_module_gives_the_object_of_its_text() -> None:
    """`amdgpu-sim`'s O3 batches emit from the module the passes ran on: the object must be
    the one LLVM writes from the optimised text parsed again (the route it replaced)."""
    kernel = ("define amdgpu_kernel void @k(ptr addrspace(1) %p, i32 %n) {\n"
              "  %x = load i32, ptr addrspace(1) %p\n  %y = mul i32 %x, %n\n"
              "  %z = mul i32 %y, 8\n  store i32 %z, ptr addrspace(1) %p\n  ret void\n}\n")
    target = Target(AMDGCN, "gfx942")
    for level in (1, 3):
        want = toolchain.emit_object(toolchain.optimise(kernel, target, level), target, level)
        mod = toolchain.optimised_module(kernel, target, level)
        assert toolchain.emit_module(mod, target, level) == want


def test_one_error_type_with_a_normalised_first_line() -> None:
    with pytest.raises(LlvmError) as parse_error:
        toolchain.parse("define i32 @f() {\n  ret i64 0\n}\n")
    assert parse_error.value.stage == "parse"
    # LLVM: "<string>:2:7: error: value doesn't match function result type 'i32'"
    assert parse_error.value.signature == (
        "<string>:N:N: error: value doesn't match function result type 'i32'")
    assert "2:7" in parse_error.value.message
    with pytest.raises(LlvmError) as verify_error:
        toolchain.parse("define i32 @f() {\n  %a = add i32 %b, 1\n  %b = add i32 %a, 1\n"
                        "  ret i32 %a\n}\n")
    assert verify_error.value.stage == "verify"
    assert verify_error.value.signature == "Instruction does not dominate all uses!"
    with pytest.raises(LlvmError) as target_error:
        toolchain.target_machine(Target("nosuch-unknown-none"), 0)
    assert target_error.value.stage == "target"


def test_normalised_line_blanks_numbers_addresses_and_paths() -> None:
    line = "LLVM ERROR: Cannot select: t12: i32 = foo 0x55d0c0ffee, %17 at /tmp/x/in.ll:3:14"
    assert toolchain.normalise_error_line("noise\n" + line) == (
        "LLVM ERROR: Cannot select: t12: i32 = foo 0x_, %N at /…:N:N")


def test_globalisel_types_and_the_function_are_blanked() -> None:
    """Two messages of llc-22 -global-isel for gfx942 (a campaign's fptoui.sat on i32 from
    f32 in a helper, fptosi.sat on i8 from f64 in the kernel): one legalizer gap, one line."""
    a = ("LLVM ERROR: unable to legalize instruction: %12:_(s32) = G_FPTOUI_SAT %11:_(s32) "
         "(in function: h1)")
    b = ("LLVM ERROR: unable to legalize instruction: %7:_(s8) = G_FPTOUI_SAT %3:_(s64) "
         "(in function: k)")
    want = ("LLVM ERROR: unable to legalize instruction: %N:_(sN) = G_FPTOUI_SAT %N:_(sN) "
            "(in function: …)")
    assert toolchain.normalise_error_line(a) == toolchain.normalise_error_line(b) == want
    assert "<N x sN>" in toolchain.normalise_error_line("LLVM ERROR: bad %1:_(<2 x s16>)")


def test_ir_adaptation_for_older_llvm_is_version_gated() -> None:
    text = ("declare void @llvm.lifetime.start.p0(ptr captures(none))\n"
            "define void @f(ptr captures(none) %p, ptr captures(address) %q, i32 %a) {\n"
            "  call void @llvm.lifetime.start.p0(ptr %p)\n"
            "  %c = icmp samesign ult i32 %a, 4\n  ret void\n}\n"
            "attributes #0 = { nocreateundeforpoison memory(read, target_mem0: none) }\n")
    assert toolchain.adapt_ir_for(text, 22) == text
    old = toolchain.adapt_ir_for(text, 19)
    assert "ptr nocapture %p" in old and "ptr %q" in old
    assert "lifetime" not in old and "samesign" not in old
    assert "attributes #0 = { memory(read) }" in old


def _mul_case() -> Case:
    kernel = ("use rgpu::*;\n#[kernel]\npub fn k(a: &[u32], out: &mut [u32]) {\n"
              "    let t: usize = thread_idx_x() as usize;\n"
              "    out[t] = a[t] * 8u32 + (a[t] >> 1u32);\n}\n")
    return Case(entry="k", kernel=kernel, launch=Launch(block=(4, 1, 1)), args=(
        BufferArg(name="a", elem=Scalar.U32, len=4, init=Values((1, 7, 0xFFFF_FFFF, 40))),
        BufferArg(name="out", elem=Scalar.U32, len=4, init=Fill(0))))


@pytest.mark.parametrize("major", [19, 22])
def test_llvm_cpu_through_debian_llc(major: int) -> None:
    """`llvm-cpu:llc=PATH`: the optimised IR through Debian's llc, the object run by MCJIT;
    expected by hand: x*8 + (x>>1) mod 2**32."""
    llc = debian_llvm_tool("llc", major)
    assert Llc(llc).version()[0] == major
    outcome = Registry().create(f"llvm-cpu:O2:llc={llc}").run(_mul_case())
    assert isinstance(outcome, Ok), outcome
    expected = [(x * 8 + (x >> 1)) % 2**32 for x in (1, 7, 0xFFFF_FFFF, 40)]
    assert outcome.outputs["out"].bits() == expected


def test_llc_failure_is_an_llvm_error_with_llcs_first_line() -> None:
    llc = Llc(debian_llvm_tool("llc", 22))
    with pytest.raises(LlvmError) as e:
        llc.emit("define i32 @f() {\n  ret i64 0\n}\n", Target.host(), 0, OutputKind.OBJECT)
    assert e.value.stage == "codegen"
    assert e.value.signature == (
        "error: in.ll:N:N: error: value doesn't match function result type 'i32'")


def test_an_llc_that_is_not_there_is_an_llvm_error() -> None:
    with pytest.raises(LlvmError, match="cannot run llc"):
        Llc("/nonexistent/llc").version()


PAIR = """
target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @k(ptr addrspace(1) noalias %a, ptr addrspace(1) noalias %o) {
  %a1 = getelementptr half, ptr addrspace(1) %a, i64 1
  %x0 = load half, ptr addrspace(1) %a, align 4
  %x1 = load half, ptr addrspace(1) %a1, align 2
  %y0 = fmul half %x0, %x1
  %y1 = fmul half %x1, %x1
  %o1 = getelementptr half, ptr addrspace(1) %o, i64 1
  store half %y0, ptr addrspace(1) %o, align 4
  store half %y1, ptr addrspace(1) %o1, align 2
  ret void
}
"""
"""Two isomorphic f16 products stored side by side: what the SLP vectoriser packs."""

LOOP = """
target triple = "x86_64-unknown-linux-gnu"
define void @f(ptr noalias %a, ptr noalias %b, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %pa = getelementptr float, ptr %a, i64 %i
  %pb = getelementptr float, ptr %b, i64 %i
  %x = load float, ptr %pa
  %y = fmul float %x, 3.0
  store float %y, ptr %pb
  %i1 = add i64 %i, 1
  %c = icmp ult i64 %i1, %n
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
"""
"""A counted loop without a vectorisation hint: what the loop vectoriser widens."""


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize(("name", "ir", "vector"), [
    ("slp", PAIR, "x half>"), ("loop", LOOP, "x float>")])
def test_vectorisers_run_where_opt_runs_them(level: int, name: str, ir: str,
                                             vector: str) -> None:
    """`default<O<level>>` vectorises what `opt-22 -O<level>` vectorises: the SLP and loop
    vectorisers at O2 and O3, neither at O1 (llvmlite's own tuning options left SLP off at
    every level and the loop vectoriser on at O1). Expected: opt-22's output on the same IR,
    for gfx942 (the pair) and x86-64 (the loop)."""
    amd = name == "slp"
    target = Target(AMDGCN, "gfx942") if amd else Target("x86_64-unknown-linux-gnu")
    cpu = ["-mcpu=gfx942"] if amd else []
    opt = subprocess.run([debian_llvm_tool("opt", 22), *cpu, f"-O{level}", "-S"], input=ir,
                         capture_output=True, text=True, check=True, timeout=60).stdout
    theirs = vector in opt
    assert theirs == (level >= 2), opt  # the fact the test rests on, from opt itself
    assert (vector in toolchain.optimise(ir, target, level)) == theirs
