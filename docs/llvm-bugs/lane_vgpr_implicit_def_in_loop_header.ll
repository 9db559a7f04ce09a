; LLVM 22.1.8 (Debian llvm-22): at -O0, SILowerSGPRSpills puts the IMPLICIT_DEF of an SGPR-spill
; lane VGPR (%232 below) in the loop header bb.22.for.head, after which the header restores
; lane 0 of it, which the latch bb.28 spilled: the loop-carried value is dead by construction.
;   llc -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -O0 -print-after=si-lower-sgpr-spills \
;       lane_vgpr_implicit_def_in_loop_header.ll -o /dev/null 2>&1 | grep -A3 'IMPLICIT_DEF'
; shows '%232:vgpr_32 = IMPLICIT_DEF' then '$sgpr1 = SI_RESTORE_S32_FROM_VGPR %232:vgpr_32, 0'.
; llc-19 does not. Reduced by llvm-reduce from rgpu-fuzz campaign bucket 8081e0ac57, whose
; full kernel takes the wrong loop exit for a lane on the simulator (docs in
; /work/notes/sim-fidelity.md; regression test tests/sim/test_definedness.py).
target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @k(ptr addrspace(1) %in1, i64 %in1.len, i64 %out1.len, i16 %.39, i16 %.44, i8 %.48, i1 %.49, i8 %.63, i8 %.65, i1 %.73, i16 %.194, i1 %.195, i16 %.96, i1 %.97) {
entry:
  br label %ok

trap.exit:                                        ; preds = %trap.div-by-zero.8, %ok.5, %trap.out-of-bounds.1, %trap.div-by-zero.3, %for.end, %trap.div-by-zero.2, %trap.out-of-bounds, %trap.div-by-zero.1
  ret void

ok:                                               ; preds = %entry
  store i16 %.39, ptr addrspace(5) null, align 2
  br i1 %.49, label %if.then.1, label %if.else.1

if.then.1:                                        ; preds = %ok
  %.52 = load i8, ptr addrspace(5) null, align 1
  %.53 = icmp eq i8 %.52, 0
  br i1 %.53, label %trap.div-by-zero.1, label %ok.1

if.else.1:                                        ; preds = %ok
  br label %if.end.1

if.end.1:                                         ; preds = %ok.1, %if.else.1
  %.67 = icmp uge i64 %out1.len, %in1.len
  br i1 %.67, label %trap.out-of-bounds, label %ok.2

trap.div-by-zero.1:                               ; preds = %if.then.1
  br label %trap.exit

ok.1:                                             ; preds = %if.then.1
  br label %if.end.1

trap.out-of-bounds:                               ; preds = %if.end.1
  br label %trap.exit

ok.2:                                             ; preds = %if.end.1
  %.729 = load i8, ptr addrspace(1) %in1, align 1
  br i1 %.73, label %trap.div-by-zero.2, label %for.head

trap.div-by-zero.2:                               ; preds = %ok.2
  br label %trap.exit

for.head:                                         ; preds = %ok.5, %ok.2
  %.81 = load i32, ptr addrspace(5) null, align 4
  %.82 = icmp slt i32 %.81, 0
  br i1 %.82, label %for.body, label %for.end

for.body:                                         ; preds = %for.head
  br i1 true, label %trap.div-by-zero.3, label %ok.4

for.end:                                          ; preds = %for.head
  br i1 %.49, label %trap.div-by-zero.8, label %trap.exit

trap.div-by-zero.3:                               ; preds = %for.body
  br label %trap.exit

ok.4:                                             ; preds = %for.body
  br i1 %.195, label %trap.out-of-bounds.1, label %ok.5

trap.out-of-bounds.1:                             ; preds = %ok.4
  br label %trap.exit

ok.5:                                             ; preds = %ok.4
  br i1 %.97, label %trap.exit, label %for.head

trap.div-by-zero.8:                               ; preds = %for.end
  br label %trap.exit
}
