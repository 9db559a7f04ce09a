; RUN: llc -O0 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -print-after=si-lower-sgpr-spills \
; RUN:   -filter-print-funcs=k -o /dev/null < %s 2>&1 | FileCheck %s
; RUN: llc -O0 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 -print-after=si-lower-sgpr-spills \
; RUN:   -filter-print-funcs=k -o /dev/null < %s 2>&1 | FileCheck --check-prefix=SPILLS %s
; REQUIRES: amdgpu-registered-target
; Reduce: RUN 2, pad (RUN 1's CHECK lines name this kernel's blocks, RUN 2's hold for any
; kernel; `report --upstream` retargets it to the finding's processor, docs/triage.md)
;
; Version matrix (python -m triage.upstream matrix; yes = the RUN line passes, so the bug is there):
;   llvmlite = 0.50.0 (LLVM 22.1.0); llc-22 = 22.1.8; llc-19 = 19.1.7; gisel = llc-22 22.1.8 -global-isel (llc-N: Debian llvm-N's llc and opt)
;   RUN 1: llvmlite yes, llc-22 yes, llc-19 no, gisel no
;   RUN 2: llvmlite yes, llc-22 yes, llc-19 no, gisel no
; (end of matrix)
;
; Title: [AMDGPU] -O0: SILowerSGPRSpills puts a lane VGPR's IMPLICIT_DEF in the loop header, loop-carried SGPR spills are lost across the back edge
; Culprit: si-lower-sgpr-spills (SILowerSGPRSpills, as llvm/llvm-project#186348 names it)
; Corpus: corpus/526d09799032.toml, a known divergence of amdgpu-sim:gfx942:O0 (strict xfail).
;
; LLVM 22.1 (Debian llvm-22 22.1.8; llvmlite 0.50's 22.1.0) at -O0, AMDGPU: SILowerSGPRSpills puts the
; IMPLICIT_DEF of an SGPR-spill lane VGPR inside the loop that spills and restores through it,
; ahead of the restores of loop-carried SGPRs. The WWM fast register allocator then sees the
; lane VGPR dead across the back edge: it does not reload it at the loop top and reuses its
; physical VGPR after the last spill, so the next iteration reads other values.
; Upstream: llvm/llvm-project#186348 "[AMDGPU][SILowerSGPRSpills] Correct insertion of
; IMPLICIT_DEF in cycles" (merged) describes this mechanism; 22.1.8 does not have it.
; GlobalISel (-global-isel -O0, llc-22) puts both lane VGPR IMPLICIT_DEFs in the entry
; block: no reproduction (the matrix's `gisel no`).
; Found through rgpu-fuzz bucket 8081e0ac57 (docs/findings/8081e0ac57.md); this kernel is
; written by hand, not reduced.
;
; Trigger: SGPR values carried around a loop whose value on entry is undef (here two uniform
; <32 x i32>; in the fuzzer's kernel, the lane masks SILowerI1Copies builds for the exits of a
; divergent loop), spilled into a lane VGPR that no block outside the loop writes. With
; `zeroinitializer` instead of `undef` the preheader spills them too, the IMPLICIT_DEF lands
; in bb.0 and the output is right.
;
; 1. The MIR:
;      llc-22 -O0 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -print-after=si-lower-sgpr-spills \
;        lane_vgpr_implicit_def_in_loop_header.ll -o /dev/null
;    bb.1.loop holds `%447:vgpr_32 = IMPLICIT_DEF`, then `$sgprN = SI_RESTORE_S32_FROM_VGPR
;    %447, 5..36` (the incoming %v1), then `SI_SPILL_S32_TO_VGPR ..., 5..36, %447` (%v1.next for
;    the back edge). llc-19 -O0 puts every lane VGPR IMPLICIT_DEF in bb.0.entry.
; 2. The code (llc-22 -O0 -mcpu=gfx942, the loop .LBB0_1): the top reads
;    `v_readlane_b32 s0, v11, 5` .. `v_readlane_b32 s31, v11, 36` with no reload of v11; the
;    bottom writes `v_writelane_b32 v11, s68, 5` .. `s99, 36` and then, v11 being "dead", puts
;    another lane VGPR in it: `v_writelane_b32 v11, s1, 5` .. `v_writelane_b32 v11, s31, 35`,
;    `v_accvgpr_write_b32 a2, v11`, `s_cbranch_scc1 .LBB0_1`. Lanes 5..35 of v11 reach the
;    next iteration holding s1..s31, not s68..s98: element j of %v1 becomes element j + 1
;    (CDNA3 ISA, V_WRITELANE_B32 / V_READLANE_B32: VGPR[S1[5:0]][vdst] = S0, D = VGPR[S1[5:0]]
;    [src0], EXEC ignored).
; 3. The values, by hand: @k(out, n) for n >= 1 stores out[32*k + j] = 100*k + j + (n - 1)
;    (iteration 0 selects the constant, every later one adds 1). n = 3: out[0..31] = 2..33,
;    out[32..63] = 102..133.
;    rgpu-fuzz's simulator, gfx942, one work-item, n = 3: llc-22 -O0 (and llvmlite 22.1.0 -O0)
;    give out[32..63] = 104, 105, .., 133, 133, 133 (n = 2: one element of shift; n = 4:
;    three); llc-19 -O0 and llc-22 -O1 give the hand values. Moving the lane VGPR IMPLICIT_DEFs
;    to the top of bb.0 in the -stop-after=si-lower-sgpr-spills MIR and resuming with
;    -start-after=si-lower-sgpr-spills gives the hand values; the same round trip without the
;    move does not. Pinned by tests/sim/test_llvm_bug_lane_vgpr.py.
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @k(ptr addrspace(1) %out, i32 %n) {
entry:
  br label %loop

loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  %v0 = phi <32 x i32> [ undef, %entry ], [ %v0.next, %loop ]
  %v1 = phi <32 x i32> [ undef, %entry ], [ %v1.next, %loop ]
  %first = icmp eq i32 %i, 0
  %v0.inc = add <32 x i32> %v0, splat (i32 1)
  %v0.next = select i1 %first, <32 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15, i32 16, i32 17, i32 18, i32 19, i32 20, i32 21, i32 22, i32 23, i32 24, i32 25, i32 26, i32 27, i32 28, i32 29, i32 30, i32 31>, <32 x i32> %v0.inc
  %v1.inc = add <32 x i32> %v1, splat (i32 1)
  %v1.next = select i1 %first, <32 x i32> <i32 100, i32 101, i32 102, i32 103, i32 104, i32 105, i32 106, i32 107, i32 108, i32 109, i32 110, i32 111, i32 112, i32 113, i32 114, i32 115, i32 116, i32 117, i32 118, i32 119, i32 120, i32 121, i32 122, i32 123, i32 124, i32 125, i32 126, i32 127, i32 128, i32 129, i32 130, i32 131>, <32 x i32> %v1.inc
  %i.next = add i32 %i, 1
  %more = icmp ult i32 %i.next, %n
  br i1 %more, label %loop, label %exit

exit:
  %p0 = getelementptr <32 x i32>, ptr addrspace(1) %out, i32 0
  store <32 x i32> %v0.next, ptr addrspace(1) %p0
  %p1 = getelementptr <32 x i32>, ptr addrspace(1) %out, i32 1
  store <32 x i32> %v1.next, ptr addrspace(1) %p1
  ret void
}

; The lane VGPR is defined (IMPLICIT_DEF) inside the loop, then read by the restores of the
; loop-carried SGPRs, then written by their spills for the back edge.
; CHECK-LABEL: bb.1.loop:
; CHECK: [[LANE:%[0-9]+]]:vgpr_32 = IMPLICIT_DEF
; CHECK: $sgpr{{[0-9]+}} = SI_RESTORE_S32_FROM_VGPR [[LANE]]:vgpr_32, 5,
; CHECK: [[LANE]]:vgpr_32 = SI_SPILL_S32_TO_VGPR $sgpr{{[0-9]+}}, 5, [[LANE]]:vgpr_32(tied-def 0)
; CHECK-LABEL: bb.2.exit:

; Any kernel: a lane VGPR's IMPLICIT_DEF directly followed by SGPR restores, then (before any
; spill into that VGPR, in the same block) a restore of lane N from it, while some spill writes
; lane N: the restore reads a lane the IMPLICIT_DEF has just made undefined. (wave32 here:
; on gfx942 this kernel's first restore from the loop's lane VGPR follows spills into it.)
; SPILLS: [[LANE:%[0-9]+]]:vgpr_32 = IMPLICIT_DEF{{[[:space:]]+[$]sgpr[0-9]+ = }}
; SPILLS-NOT: {{^}}bb.
; SPILLS-NOT: [[LANE]]:vgpr_32 = SI_SPILL_S32_TO_VGPR
; SPILLS: SI_RESTORE_S32_FROM_VGPR [[LANE]]:vgpr_32, [[N:[0-9]+]]
; SPILLS: [[LANE]]:vgpr_32 = SI_SPILL_S32_TO_VGPR {{(killed )?}}$sgpr{{[0-9]+}}, [[N]], [[LANE]]:vgpr_32(tied-def 0)
