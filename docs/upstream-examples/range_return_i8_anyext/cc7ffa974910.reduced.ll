; RUN: llc -O1 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 < %s | FileCheck %s
; REQUIRES: amdgpu-registered-target
;
; Version matrix (python -m triage.upstream matrix; yes = the RUN line passes, so the bug is there):
;   llvmlite = 0.50.0 (LLVM 22.1.0); llc-22 = 22.1.8; llc-19 = 19.1.7; gisel = llc-22 22.1.8 -global-isel (llc-N: Debian llvm-N's llc and opt)
;   RUN 1: llvmlite yes, llc-22 yes, llc-19 no, gisel no
; (end of matrix)
;
; From rgpu-fuzz case cc7ffa974910 (amdgpu-sim:gfx942:O3).
; Culprit pass: amdgpu-isel (llc -opt-bisect-limit: wrong after optional pass 157 of 205,
; amdgpu-isel; right with the 156 before it)
; Reduced by llvm-reduce-22; predicate: RUN 1 of range_return_i8_anyext.ll (Debian llc-22) with its CHECK lines, copied below.
target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

declare fastcc range(i8 0, 2) i8 @sq()

define amdgpu_kernel void @k() {
entry:
  %.5 = call fastcc i8 @sq()
  %.6 = zext i8 %.5 to i64
  store i64 %.6, ptr addrspace(1) null, align 8
  ret void
}

; CHECK-LABEL: {{^}}k:
; CHECK: s_swappc_b64
; CHECK-NOT: 0xff,
; CHECK: v_and_b32_e32 v{{[0-9]+}}, 0xffff, v0
; CHECK: global_store_dwordx2
