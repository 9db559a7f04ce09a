; RUN: llc -O0 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 < %s | FileCheck %s
; REQUIRES: amdgpu-registered-target
;
; Version matrix (python -m triage.upstream matrix; yes = the RUN line passes, so the bug is there):
;   llvmlite = 0.50.0 (LLVM 22.1.0); llc-22 = 22.1.8; llc-19 = 19.1.7; gisel = llc-22 22.1.8 -global-isel (llc-N: Debian llvm-N's llc and opt)
;   RUN 1: llvmlite yes, llc-22 yes, llc-19 no, gisel no
; (end of matrix)
;
; Title: [AMDGPU] gfx11 real-true16, -O0: llvm.bswap.i64 copies only the low 16 bits of each
; half before the 32-bit byte permute
; Culprit: amdgpu-isel / the true16 COPY lowering at -O0 (the 32-bit source of V_PERM_B32 is
; built by a 16-bit move)
; Corpus: none; found by the conformance case `int_bit_methods` (`swap_bytes` of a u64) on
; amdgpu-sim:gfx1100:O0 and rustc-amdgpu:gfx1100:O0 (docs/conformance.md).
;
; With real true16 (gfx1100's default in LLVM 22), llc-22 -O0 lowers the bswap of each 32-bit
; half to `v_mov_b16_e32 v3.l, v1.l` then (after the selector's `s_mov_b32`) `v_perm_b32 v3, 0, v3, s2` (selector 0x00010203):
; V_PERM_B32 reads all four bytes of v3 (RDNA3 ISA, V_PERM_B32: D.u32 = {byte sel[31:24] of
; {S0, S1}, ...}), of which the move wrote only bits 15:0. Bytes 3..2 of the result are
; whatever v3.h held. By hand, for x = 0x80000000_00000000: swap_bytes gives 0x80; the
; simulator (v3.h undefined, or 0 from an earlier write) gives 0. `-mattr=-real-true16`
; gives `v_mov_b32_e32 v3, v1`; llc-19 (no real true16 by default) and -O1 and up do not
; copy. No upstream issue found.

; CHECK-LABEL: k:
; CHECK: v_mov_b16_e32 v[[T:[0-9]+]].l, v{{[0-9]+}}.l
; CHECK-NOT: v[[T]]
; CHECK: v_perm_b32 v[[T]], 0, v[[T]], s{{[0-9]+}}
define amdgpu_kernel void @k(ptr addrspace(1) %p) {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %q = getelementptr i64, ptr addrspace(1) %p, i32 %id
  %v = load i64, ptr addrspace(1) %q
  %s = call i64 @llvm.bswap.i64(i64 %v)
  store i64 %s, ptr addrspace(1) %q
  ret void
}
