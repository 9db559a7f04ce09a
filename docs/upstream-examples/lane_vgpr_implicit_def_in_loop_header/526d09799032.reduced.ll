; RUN: llc -O0 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -print-after=si-lower-sgpr-spills -filter-print-funcs=k -o /dev/null < %s 2>&1 | FileCheck --check-prefix=SPILLS %s
; REQUIRES: amdgpu-registered-target
;
; Version matrix (python -m triage.upstream matrix; yes = the RUN line passes, so the bug is there):
;   llvmlite = 0.50.0 (LLVM 22.1.0); llc-22 = 22.1.8; llc-19 = 19.1.7; gisel = llc-22 22.1.8 -global-isel (llc-N: Debian llvm-N's llc and opt)
;   RUN 1: llvmlite yes, llc-22 yes, llc-19 no, gisel no
; (end of matrix)
;
; From rgpu-fuzz case 526d09799032 (amdgpu-sim:gfx942:O0).
; Culprit pass: si-lower-sgpr-spills (wrong with every optional pass left out; right when llc runs without
; si-lower-sgpr-spills (-stop-before/-start-after around MIR; 21 MIR-changing machine passes tried))
; Reduced by llvm-reduce-22 (3 rounds, all but the first with lane padding); predicate: RUN 2 of lane_vgpr_implicit_def_in_loop_header.ll (Debian llc-22) with its CHECK lines, copied below.
target triple = "amdgcn-amd-amdhsa"

declare noundef range(i32 0, 1024) i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @k(<63 x i32> %rgpu.pad, ptr addrspace(1) %rgpu.pad.out) {
entry:
  br label %for.head
trap.exit:
  store <63 x i32> %rgpu.pad, ptr addrspace(1) %rgpu.pad.out, align 4
  ret void
for.head:
  %.50 = call i32 @llvm.amdgcn.workitem.id.x()
  %.52.not = icmp eq i32 %.50, 0
  br i1 %.52.not, label %if.end.1, label %for.head.trap.exit_crit_edge
for.head.trap.exit_crit_edge:
  br label %trap.exit
if.end.1:
  br i1 false, label %if.end.1.trap.exit_crit_edge, label %for.head
if.end.1.trap.exit_crit_edge:
  br label %trap.exit
}

; SPILLS: [[LANE:%[0-9]+]]:vgpr_32 = IMPLICIT_DEF{{[[:space:]]+[$]sgpr[0-9]+ = }}
; SPILLS-NOT: {{^}}bb.
; SPILLS-NOT: [[LANE]]:vgpr_32 = SI_SPILL_S32_TO_VGPR
; SPILLS: SI_RESTORE_S32_FROM_VGPR [[LANE]]:vgpr_32, [[N:[0-9]+]]
; SPILLS: [[LANE]]:vgpr_32 = SI_SPILL_S32_TO_VGPR {{(killed )?}}$sgpr{{[0-9]+}}, [[N]], [[LANE]]:vgpr_32(tied-def 0)
