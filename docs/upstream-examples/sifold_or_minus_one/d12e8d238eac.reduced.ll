; RUN: llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -print-after=si-fold-operands -o /dev/null < %s 2>&1 | FileCheck --check-prefix=MIR %s
; REQUIRES: amdgpu-registered-target
;
; Version matrix (python -m triage.upstream matrix; yes = the RUN line passes, so the bug is there):
;   llvmlite = 0.50.0 (LLVM 22.1.0); llc-22 = 22.1.8; llc-19 = 19.1.7; gisel = llc-22 22.1.8 -global-isel (llc-N: Debian llvm-N's llc and opt)
;   RUN 1: llvmlite yes, llc-22 yes, llc-19 no, gisel no
; (end of matrix)
;
; From rgpu-fuzz case d12e8d238eac (amdgpu-sim:gfx942:O3).
; Culprit pass: si-fold-operands (llc -opt-bisect-limit: wrong after optional pass 99 of 137,
; si-fold-operands; right with the 98 before it)
; Reduced by llvm-reduce-22; predicate: RUN 2 of sifold_or_minus_one.ll (Debian llc-22) with its CHECK lines, copied below.
target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @k(float %.14, i1 %.15) {
entry:
  %.29 = tail call i64 @llvm.fptoui.sat.i64.f32(float %.14)
  %. = select i1 %.15, i64 -7, i64 -8
  %.32 = or i64 %.29, %.
  store i64 %.32, ptr addrspace(1) null, align 8
  ret void
}

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare i64 @llvm.fptoui.sat.i64.f32(float) #0

attributes #0 = { nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }

; MIR-LABEL: After SI Fold Operands
; MIR: [[U:%[0-9]+]]:sreg_32 = IMPLICIT_DEF
; MIR: [[UV:%[0-9]+]]:vgpr_32 = COPY [[U]]:sreg_32
; MIR: [[HI:%[0-9]+]]:vgpr_32 = V_MOV_B32_e32 [[UV]]:vgpr_32, implicit $exec
; MIR-NEXT: REG_SEQUENCE %{{[0-9]+}}:vgpr_32, %subreg.sub0, [[HI]]:vgpr_32, %subreg.sub1
