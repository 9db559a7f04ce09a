; RUN: llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -global-isel < %s 2>&1 | FileCheck %s
; RUN: llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -global-isel -stop-after=legalizer -o - < %s 2>/dev/null | FileCheck --check-prefix=MIR %s
; REQUIRES: amdgpu-registered-target
;
; Version matrix (python -m triage.upstream matrix; yes = the RUN line passes, so the bug is there):
;   llvmlite = 0.50.0 (LLVM 22.1.0); llc-22 = 22.1.8; llc-19 = 19.1.7; gisel = llc-22 22.1.8 -global-isel (llc-N: Debian llvm-N's llc and opt)
;   RUN 1: llvmlite yes, llc-22 yes, llc-19 yes, gisel yes
;   RUN 2: llvmlite n/a, llc-22 yes, llc-19 yes, gisel yes
; (end of matrix)
;
; Title: [AMDGPU][GlobalISel] a helper's access to LDS that amdgpu-lower-module-lds gave an absolute address becomes s_trap 2 ("local memory global used by non-kernel function")
; Culprit: legalizer (AMDGPULegalizerInfo's G_GLOBAL_VALUE legalization; SelectionDAG's LowerGlobalAddress handles the same global)
; Corpus: none (the fuzzer's pipelines use SelectionDAG unless `isel=global`); found by the
; conformance suite with `isel=global`: tests/semantics/cases/shared_helpers.toml, whose
; `#[inline(never)]` helpers write `#[shared]` arrays, traps (`s_trap 2`) on every target at
; O0 and O3. Reduced from that kernel's IR by llvm-reduce-22, then written by hand.
;
; LLVM 22.1 (Debian llc-22 22.1.8, llvmlite 0.50's 22.1.0) and LLVM 19 (Debian llc-19),
; GlobalISel: amdgpu-lower-module-lds rewrites the helper's use of @lds to a use of
; @llvm.amdgcn.kernel.k.lds, a struct with `!absolute_symbol` (address 0), and records the
; kernel's LDS size: the access is well defined (AMDGPUUsage, "Address Spaces": LDS is
; allocated per work-group by the kernel's group segment size). SelectionDAG lowers it to
; that address (`ds_write_b32 v0, v1` with v0 = i * 4); its LowerGlobalAddress asks
; AMDGPUMachineFunction::getLDSAbsoluteAddress first for a non-entry function. GlobalISel's
; Legalizer does not: it diagnoses "local memory global used by non-kernel function" and
; replaces the address by an `S_TRAP 2` and a G_IMPLICIT_DEF (the MIR after the legalizer),
; so every call of the helper traps at run time.
; Upstream: llvm/llvm-project#119124 (open) discusses when the warning is still wanted and
; says accesses from functions reachable from a kernel "are rewritten to globals with
; absolute addresses (and thus don't trigger this warning)": true for SelectionDAG, not for
; GlobalISel. No issue found for the GlobalISel path (searched the llvm-project issues for
; the message with GlobalISel, legalizeGlobalValue and absolute_symbol).
;   llc-22 -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 globalisel_lds_absolute_in_helper.ll -o -
;     -> helper: v_lshlrev_b32_e32 v0, 2, v0 / ds_write_b32 v0, v1 (no warning, no trap)

target triple = "amdgcn-amd-amdhsa"

@lds = internal addrspace(3) global [32 x i32] undef, align 16

define internal void @helper(i32 %i, i32 %v) #0 {
  %p = getelementptr i32, ptr addrspace(3) @lds, i32 %i
  store i32 %v, ptr addrspace(3) %p, align 4
  ret void
}

define amdgpu_kernel void @k(i32 %i, i32 %v) {
  call void @helper(i32 %i, i32 %v)
  ret void
}

attributes #0 = { noinline }

; CHECK: warning: {{.*}}in function helper {{.*}}: local memory global used by non-kernel function
; CHECK-LABEL: helper:
; CHECK: s_trap 2
; CHECK: ds_write_b32
; MIR-LABEL: name: helper
; MIR: S_TRAP 2
; MIR-NEXT: [[UNDEF:%[0-9]+]]:_(p3) = G_IMPLICIT_DEF
; MIR: G_PTR_ADD [[UNDEF]]
