; RUN: llc -O0 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1200 < %s | FileCheck %s
; REQUIRES: amdgpu-registered-target
;
; Version matrix (python -m triage.upstream matrix; yes = the RUN line passes, so the bug is there):
;   llvmlite = 0.50.0 (LLVM 22.1.0); llc-22 = 22.1.8; llc-19 = 19.1.7; gisel = llc-22 22.1.8 -global-isel (llc-N: Debian llvm-N's llc and opt)
;   RUN 1: llvmlite yes, llc-22 yes, llc-19 yes, gisel no
; (end of matrix)
;
; Title: [AMDGPU] GFX12 -O0: a uniform f32 sqrt expansion after a divergent loop is placed
; before the loop exit's EXEC restore, and reads EXEC = 0
; Culprit: amdgpu-isel (SelectionDAG schedules the chain-free sqrt expansion ahead of
; llvm.amdgcn.end.cf, which SILowerControlFlow turns into `s_or_b32 exec_lo, exec_lo, sN`)
; Corpus: none; found by a gfx1200 campaign (docs/findings/campaign-new-targets.md, bucket
; 2ed3b9a9b4: `f32::from_bits(0x7f7fffff).sqrt().sqrt()` after a `while` loop, O0).
;
; GFX12 has SALU float (`v_s_sqrt_f32`, `s_fmac_f32`), so the f32 sqrt expansion of a uniform
; value is scalar except its `v_cmp_class_f32` (denormal/zero/inf test), a VALU compare whose
; SGPR result LLVM ANDs with EXEC (`s_and_b32 sN, sN, exec_lo`). In the loop's exit block that
; code comes before the `s_or_b32 exec_lo, exec_lo, s0` that re-enables the lanes that left
; the loop, i.e. where EXEC is 0 (every lane has left): the class test reads as false for every
; input, and a VGPR the block defines there (the class mask, `v_mov_b32 v0, 0x260`, spilled at
; O0) is never written. gfx1100 puts the whole expansion after the restore (VALU v_sqrt).
; rgpu-fuzz's simulator, gfx1200 O0, the campaign case: the spill of v0 is stored with EXEC = 0
; and reloaded after the restore, a sim-uninit-read; ref, gfx942 O0 and gfx1100 O0 compute
; sqrt(sqrt(f32::MAX)) = 4294967040.0. llvmlite's 22.1.0, llc-22 and llc-19 all do it (matrix);
; GlobalISel does not. No upstream
; issue found.

; After the loop's back edge, the class test and its AND with EXEC come before the restore.
; CHECK: s_cbranch_execnz
; CHECK-NOT: s_or_b32 exec_lo, exec_lo
; CHECK: v_cmp_class_f32_e64 [[C:s[0-9]+]],
; CHECK-NEXT: s_and_b32 [[C]], [[C]], exec_lo
; CHECK: s_or_b32 exec_lo, exec_lo, s{{[0-9]+}}
define amdgpu_kernel void @k(ptr addrspace(1) %out, float %x) {
entry:
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  %i.next = add i32 %i, 1
  %more = icmp ult i32 %i.next, %id
  br i1 %more, label %loop, label %exit
exit:
  %s0 = call float @llvm.sqrt.f32(float %x)
  %s = call float @llvm.sqrt.f32(float %s0)
  store float %s, ptr addrspace(1) %out
  ret void
}
