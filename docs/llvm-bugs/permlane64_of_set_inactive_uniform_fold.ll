; RUN: opt -S -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 -mattr=+wavefrontsize64 \
; RUN:   -passes=amdgpu-uniform-intrinsic-combine < %s | FileCheck --check-prefix=IR %s
; RUN: llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 -mattr=+wavefrontsize64 < %s \
; RUN:   | FileCheck --check-prefix=ASM %s
; RUN: llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 -mattr=+wavefrontsize64 \
; RUN:   -amdgpu-enable-uniform-intrinsic-combine=false < %s | FileCheck --check-prefix=KEEP %s
; REQUIRES: amdgpu-registered-target
;
; Version matrix (python -m triage.upstream matrix; yes = the RUN line passes, so the bug is there):
;   llvmlite = 0.50.0 (LLVM 22.1.0); llc-22 = 22.1.8; llc-19 = 19.1.7; gisel = llc-22 22.1.8 -global-isel (llc-N: Debian llvm-N's llc and opt)
;   RUN 1: llvmlite n/a, llc-22 yes, llc-19 no, gisel n/a
;   RUN 2: llvmlite yes, llc-22 yes, llc-19 no, gisel yes
;   RUN 3: llvmlite yes, llc-22 yes, llc-19 no, gisel yes
; (end of matrix)
;
; Title: [AMDGPU] AMDGPUUniformIntrinsicCombine folds permlane64(set.inactive(uniform, c)) to its operand, dropping the lanes set.inactive wrote in whole-wave mode
; Culprit: amdgpu-uniform-intrinsic-combine (AMDGPUUniformIntrinsicCombine: permlane64 of a value UniformityAnalysis calls uniform is replaced by that value)
; Corpus: none yet; campaign buckets 882746ef7b, 7e95e423f3, ceadad10d0 and 1289cf5799 of the
; gfx1100 wave64 wave campaign (docs/findings/campaign-waves.md), kernel language
; `wave_prefix_sum` of a uniform value in a partial wave64 (48 work-items).
;
; LLVM 22.1 (llvmlite's 22.1.0, Debian opt-22/llc-22 22.1.8): the pass, in opt's -O1..-O3
; pipelines and in llc's IR passes, replaces llvm.amdgcn.permlane64(%a) by %a when
; UniformityAnalysis finds %a uniform. %a = llvm.amdgcn.set.inactive(%p, 0) with a uniform %p
; is found uniform, but it is only uniform over the active lanes: in whole-wave mode (the
; strict.wwm around it) the inactive lanes hold 0, and v_permlane64_b32 (RDNA3 ISA,
; V_PERMLANE64_B32: lane i reads lane i ^ 32, EXEC ignored for the source) moves them into
; the other half. With lanes 48-63 inactive, lanes 16-31 must read 0 and lanes 32-47 %p;
; after the fold they read what they hold. The kernel language's cross-half shuffle builds
; exactly this (a wave64 scan step reading a lane of the other half through a permlane64
; copy, as LLVM's own lowering of llvm.amdgcn.wave.shuffle for GFX11 wave64 does in ISel),
; and a partial wave64 then gets a wrong prefix sum: work-item 32 of 48 reads lane 63's 0
; where it needs lane 31's value (wave_prefix_sum(1) gives 32, not 33, at 32, 34, .., 46;
; rgpu-fuzz's simulator, checked by hand from the ISA's V_PERMLANE64_B32 and
; DS_BPERMUTE_B32). With -amdgpu-enable-uniform-intrinsic-combine=false in both opt and
; llc, the same kernels give the reference values (RUN 3 keeps the instruction).
; llc-19 keeps the permlane64 (the pass is new in LLVM 22: llvm/llvm-project#116953).
; Upstream: no issue found (searched: permlane64 set.inactive uniform, uniform intrinsic combine WWM).
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @k(ptr addrspace(1) %out, i32 %p) {
  %a = call i32 @llvm.amdgcn.set.inactive.i32(i32 %p, i32 0)
  %b = call i32 @llvm.amdgcn.permlane64.i32(i32 %a)
  %c = call i32 @llvm.amdgcn.strict.wwm.i32(i32 %b)
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gep = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %c, ptr addrspace(1) %gep
  ret void
}

; IR-LABEL: define amdgpu_kernel void @k(
; IR: %a = call i32 @llvm.amdgcn.set.inactive.i32(i32 %p, i32 0)
; IR-NOT: permlane64
; IR: call i32 @llvm.amdgcn.strict.wwm.i32(i32 %a)
; ASM-LABEL: k:
; ASM-NOT: v_permlane64_b32
; ASM: s_endpgm
; KEEP-LABEL: k:
; KEEP: v_permlane64_b32
