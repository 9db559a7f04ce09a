; RUN: llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 < %s | FileCheck %s
; RUN: llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -print-after=si-fold-operands \
; RUN:   -o /dev/null < %s 2>&1 | FileCheck --check-prefix=MIR %s
; REQUIRES: amdgpu-registered-target
;
; Version matrix (python -m triage.upstream matrix; yes = the RUN line passes, so the bug is there):
;   llvmlite = 0.50.0 (LLVM 22.1.0); llc-22 = 22.1.8; llc-19 = 19.1.7; gisel = llc-22 22.1.8 -global-isel (llc-N: Debian llvm-N's llc and opt)
;   RUN 1: llvmlite yes, llc-22 yes, llc-19 yes, gisel yes
;   RUN 2: llvmlite yes, llc-22 yes, llc-19 yes, gisel no
; (end of matrix)
;
; Reduce: RUN 2 (RUN 1 only says what is absent: no -1 in v1)
; Title: [AMDGPU] SIFoldOperands folds `v_or_b32 x, -1` into a copy of x (llvm/llvm-project#189677)
; Culprit: si-fold-operands (SIFoldOperands, llvm/llvm-project#189677 and its fix PR #189655)
; Corpus: corpus/d12e8d238eac.toml, a known divergence of amdgpu-sim:gfx942:O3 (strict xfail);
; `rgpu-fuzz report d12e8d238eac --upstream DIR` reduces its IR with RUN 2 (112 -> 16 lines).
;
; AMDGPU SIFoldOperands, LLVM 22.1 (llvmlite 0.50's 22.1.0, Debian llc-22 22.1.8) and LLVM 19
; (Debian llc-19), SelectionDAG and GlobalISel: wrong code for
; `or i64 (fptoui float to i64), (select c, i64 -7, i64 -8)`. Upstream: the bug
; llvm/llvm-project#189677, fixed by PR #189655 "[AMDGPU][SIFoldOperands] Fix OR -1 fold"
; (merged 2026-03-31: "folding `or x, -1` to `v_mov_b32 -1` removed Src1Idx, which is
; incorrect because -1 is in Src0Idx (after canonicalization)"); neither LLVM here has the fix.
;
; The high half of the select is -1 on both arms, so ISel leaves the high half of the
; fptoui undefined (IMPLICIT_DEF) and ORs it with -1: `%51 = V_OR_B32_e64 %45(undef), %46(-1)`,
; which is -1 whatever %45 holds. si-fold-operands rewrites it to `%51 = V_MOV_B32_e32 %45`
; (llc -print-after-all), so the stored high dword is whatever register the undefined value
; was given: the s_cselect result (llc-22), the output pointer (llc-19), the other input
; (the campaign's kernel).
;   llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 sifold_or_minus_one.ll -o - | grep v1
;     ->  v_mov_b32_e32 v1, s0      (should be v_mov_b32_e32 v1, -1)
; Expected by hand for a = 3.0, b = 0.0 (so c is true): 3 | -7 = 0xfffffffffffffffb. The
; simulator computes a high dword from whichever register that is (llc-22 alone: s0 = -7,
; 0xfffffff9fffffffb; llvmlite: 0), as hardware would.
; GlobalISel (-global-isel, llc-22) reaches the same fold with a defined operand:
; `%68 = V_OR_B32_e64 %38, %63` (%63 = V_MOV_B32_e32 -1) becomes `%68 = V_MOV_B32_e32 %38`,
; so the high dword is the fptoui's high half (`v_cvt_u32_f32_e32 v1, v1`) instead of -1:
; RUN 1 matches there too; the MIR of RUN 2 is SelectionDAG's.
; Found by the rgpu-fuzz 30-minute campaign of 2026-12-01 (bucket cc0c69fd93,
; `out0[0] = in0[0] as u64 | a - 8` with `a` 0 or 1), reduced by hand; pinned by
; tests/sim/test_llvm_bugs_o3.py.
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @k(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %out) {
  %b = load float, ptr addrspace(1) %pb, align 4
  %c = fcmp olt float %b, 1.0
  %s = select i1 %c, i64 -7, i64 -8
  %a = load float, ptr addrspace(1) %pa, align 4
  %f = fptoui float %a to i64
  %o = or i64 %f, %s
  store i64 %o, ptr addrspace(1) %out, align 8
  ret void
}

; The high dword (v1) of the stored value must be -1; it is a copy of another register.
; CHECK-LABEL: {{^}}k:
; CHECK-NOT: v1, -1
; CHECK: global_store_dwordx2 v{{[0-9]+}}, v[0:1]
; CHECK-NOT: v1, -1
; CHECK: s_endpgm
; MIR-LABEL: After SI Fold Operands
; MIR: [[U:%[0-9]+]]:sreg_32 = IMPLICIT_DEF
; MIR: [[UV:%[0-9]+]]:vgpr_32 = COPY [[U]]:sreg_32
; MIR: [[HI:%[0-9]+]]:vgpr_32 = V_MOV_B32_e32 [[UV]]:vgpr_32, implicit $exec
; MIR-NEXT: REG_SEQUENCE %{{[0-9]+}}:vgpr_32, %subreg.sub0, [[HI]]:vgpr_32, %subreg.sub1
