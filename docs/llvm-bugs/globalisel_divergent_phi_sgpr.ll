; RUN: llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -global-isel < %s | FileCheck %s
; RUN: llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -global-isel -stop-after=regbankselect -o - < %s | FileCheck --check-prefix=MIR %s
; REQUIRES: amdgpu-registered-target
;
; Version matrix (python -m triage.upstream matrix; yes = the RUN line passes, so the bug is there):
;   llvmlite = 0.50.0 (LLVM 22.1.0); llc-22 = 22.1.8; llc-19 = 19.1.7; gisel = llc-22 22.1.8 -global-isel (llc-N: Debian llvm-N's llc and opt)
;   RUN 1: llvmlite yes, llc-22 yes, llc-19 yes, gisel yes
;   RUN 2: llvmlite n/a, llc-22 yes, llc-19 no, gisel yes
; (end of matrix)
;
; Title: [AMDGPU][GlobalISel] RegBankSelect puts a divergent phi of constants in an SGPR: after structurization every lane gets the value of the last arm that ran
; Culprit: regbankselect (the MIR after it holds `G_PHI` of two constants on the sgpr bank; its result is divergent)
; Corpus: none (the fuzzer's pipelines use SelectionDAG unless `isel=global`); found by the
; conformance suite with `isel=global`: tests/semantics/cases/shared_barrier_control.toml,
; `if S[t] % 2 == 0 { o5[g] = 1 } else { o5[g] = 2 }`, gives 1 in every element at O3 on
; gfx942, gfx90a and gfx1100 (rustc and SelectionDAG: 2 where S[t] is odd). Written by hand
; from that kernel's IR (the phi joining the two arms, each with its own bounds check).
;
; LLVM 22.1 (Debian llc-22 22.1.8, llvmlite 0.50's 22.1.0) and LLVM 19 (Debian llc-19),
; GlobalISel at -O1..-O3 (-O0 is right): %v = phi [1, %then], [2, %else] after a divergent
; branch on the work-item id. structurizecfg runs the arms one after the other under EXEC
; masks; RegBankSelect (the default AMDGPURegisterBankInfo one) gives the phi the bank of
; its constant inputs, sgpr, so it becomes one SGPR written in each arm
; (`s_mov_b32 s6, 2` under the else lanes, `s_mov_b32 s6, 1` under the then lanes: SALU
; writes ignore EXEC) and read once at the join: every lane stores 1. SelectionDAG keeps the
; phi in a VGPR (`v_mov_b32_e32 v1, 1` / `v_mov_b32_e32 v1, 2` under EXEC). Expected by
; hand: out[t] = 1 for even t, 2 for odd t (n = 64, every t in bounds).
; Upstream: AMDGPURegBankSelect (`-new-reg-bank-select`, PR #112863, banks from machine
; uniformity) is meant to replace it; in LLVM 22.1 it stops earlier on this file
; ("RegBankLegalize: none of the rules ... matched ... llvm.amdgcn.end.cf"). No issue found
; for the default selector's phi (searched the llvm-project issues for divergent G_PHI,
; sgpr, regbankselect and structurizer); PR #220853 fixes a related SelectionDAG case
; (constants feeding a divergent phi).

target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @k(ptr addrspace(1) %out, i64 %n, ptr addrspace(1) %flag) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %t64 = zext i32 %tid to i64
  %c = and i32 %tid, 1
  %z = icmp eq i32 %c, 0
  %inb = icmp ult i64 %t64, %n
  br i1 %z, label %then, label %else

then:
  br i1 %inb, label %end, label %oob1

else:
  br i1 %inb, label %end, label %oob2

end:
  %v = phi i32 [ 1, %then ], [ 2, %else ]
  %p = getelementptr i32, ptr addrspace(1) %out, i64 %t64
  store i32 %v, ptr addrspace(1) %p, align 4
  ret void

oob1:
  store i32 1, ptr addrspace(1) %flag, align 4
  ret void

oob2:
  store i32 2, ptr addrspace(1) %flag, align 4
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()

; CHECK-LABEL: k:
; CHECK: s_mov_b32 [[S:s[0-9]+]], 2
; CHECK: s_mov_b32 [[S]], 1
; CHECK: v_mov_b32_e32 [[V:v[0-9]+]], [[S]]
; CHECK: global_store_dword v{{[0-9]+}}, [[V]], s
; MIR-LABEL: name: k
; MIR: {{%[0-9]+}}:sgpr(s32) = G_PHI {{%[0-9]+}}(s32), %bb.{{[0-9]+}}, {{%[0-9]+}}(s32), %bb.{{[0-9]+}}
