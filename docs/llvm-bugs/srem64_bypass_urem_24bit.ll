; RUN: llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 < %s | FileCheck %s
; REQUIRES: amdgpu-registered-target
;
; Version matrix (python -m triage.upstream matrix; yes = the RUN line passes, so the bug is there):
;   llvmlite = 0.50.0 (LLVM 22.1.0); llc-22 = 22.1.8; llc-19 = 19.1.7; gisel = llc-22 22.1.8 -global-isel (llc-N: Debian llvm-N's llc and opt)
;   RUN 1: llvmlite yes, llc-22 yes, llc-19 yes, gisel no
; (end of matrix)
;
; Title: [AMDGPU] SelectionDAG: the 32-bit bypass block of `srem i64 4294967294, %d` lowers its urem with the 24-bit float division
; Culprit: amdgpu-isel (SelectionDAG lowers the bypass block's urem with DIVREM24; MIR after amdgpu-isel holds the 24-bit float division)
; Corpus: corpus/a936db9d4aa3.toml, a known divergence of amdgpu-sim:gfx942:O3 (strict xfail);
; `rgpu-fuzz report a936db9d4aa3 --upstream DIR` reduces its IR with RUN 1 (99 -> 18 lines).
;
; AMDGPU SelectionDAG, LLVM 22.1 (Debian llc-22 22.1.8, llvmlite 0.50's 22.1.0) and LLVM 19
; (Debian llc-19): wrong code for an i64 srem. GlobalISel (-global-isel) is right: its
; bypass block uses the exact 32-bit expansion (v_mul_hi_u32 and two conditional fix-ups).
; CodeGenPrepare's slow-division bypass splits `srem i64 4294967294, %d` into a 32-bit block
; `%4 = urem i32 -2, (trunc i64 %d to i32)` taken when (%d & 0xFFFFFFFF00000000) == 0 and the
; full i64 path. Instruction selection lowers that urem with the 24-bit float division
; (the DIVREM24 shape: v_cvt_f32_u32, v_rcp_iflag_f32, v_trunc_f32, v_fma_f32,
; v_cmp_ge_f32 |r|, +1, then `v_and_b32 v6, 0x7ff, v1`), although the numerator 0xfffffffe
; has 32 significant bits:
;   llc -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -O3 srem64_bypass_urem_24bit.ll -o - \
;     | sed -n '/v_rcp_iflag/,/v_and_b32_e32 v6, 0x7ff/p'
; The same `urem i32 -2, %d` in a kernel of its own is lowered with the exact 32-bit
; expansion (v_mul_hi_u32 ... two conditional subtractions).
;
; Why the result is wrong whatever the float rounding: the numerator converts to 2^32, the
; quotient estimate trunc(2^32 * rcp(7)) is a multiple of 64 near 613566784 (f32 has 24
; significand bits), the fix-up adds at most 1, so r = 0xfffffffe - q*7 cannot be the exact
; 4294967294 mod 7 = 2 (which needs q = 613566756); the simulator computes 0x737 & 0x7ff for
; tid 0. Expected by hand for tid 0..6 (d = 7..1): 2, 2, 4, 2, 2, 0, 0. `-O0` is right.
; Found by the rgpu-fuzz 30-min campaign of 2026-12-01 (case c966fd2426ca, seed 102205),
; reduced by hand; regression test tests/sim/test_llvm_bugs_o3.py pins it.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @k(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %t = zext nneg i32 %tid to i64
  %d = sub nsw i64 7, %t
  %r = srem i64 4294967294, %d
  %r32 = trunc i64 %r to i32
  %p = getelementptr i32, ptr addrspace(1) %out, i64 %t
  store i32 %r32, ptr addrspace(1) %p
  ret void
}

; The 32-bit bypass block: a float reciprocal estimate (the i64 path uses v_rcp_f32), no
; exact 32-bit refinement (v_mul_hi_u32), the remainder -2 - q * d masked to 11 bits.
; CHECK: v_rcp_iflag_f32_e32
; CHECK-NOT: v_mul_hi_u32
; CHECK: v_sub_u32_e32 [[R:v[0-9]+]], -2, v{{[0-9]+}}
; CHECK-NEXT: v_and_b32_e32 v{{[0-9]+}}, 0x7ff, [[R]]
