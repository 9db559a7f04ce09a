; RUN: llc -O0 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 -mattr=+wavefrontsize64 < %s | FileCheck %s
; REQUIRES: amdgpu-registered-target
;
; Version matrix (python -m triage.upstream matrix; yes = the RUN line passes, so the bug is there):
;   llvmlite = 0.50.0 (LLVM 22.1.0); llc-22 = 22.1.8; llc-19 = 19.1.7; gisel = llc-22 22.1.8 -global-isel (llc-N: Debian llvm-N's llc and opt)
;   RUN 1: llvmlite yes, llc-22 yes, llc-19 yes, gisel no
; (end of matrix)
;
; Title: [AMDGPU] GFX10+/GFX11 wave64: a VALU instruction's SGPR-pair result is allocated over
; one of its own SGPR sources, which RDNA's "Wave64 Destination Restrictions" forbid
; Culprit: regallocfast (at -O0; greedy at -O1..-O3): nothing in the VOPC/VOP3b definitions
; keeps SDST off the SGPR sources in wave64 (no early-clobber), so a source killed by the
; instruction gives its register to the result
; Corpus: none; found by scanning the conformance kernels built for gfx1100 wave64
; (docs/findings/wave64-sgpr-overlap.md): all 85 at -O0, 21 at -O3.
;
; RDNA3 ISA §7.2.3.2 (RDNA2 ISA §6.2.4), "Wave64 Destination Restrictions": a wave64 VALU
; instruction may issue as two wave32 passes, "the first pass of a wave64 VALU instruction
; may not overwrite a scalar value used by the second half"; doing so "may lead to
; unpredictable results". Here the bounds check `t < n` (n a 64-bit kernel argument in
; s[2:3]) becomes `v_cmp_lt_u64_e64 s[2:3], v[1:2], s[2:3]`: pass 0 writes s2 with the mask
; bits of lanes 0-31, pass 1 compares lanes 32-63 against s[2:3], whose low dword is that
; mask now. Worked by hand for n = 40, one wave of 64: lanes 0-31 are below 40, so s2 becomes
; 0xffffffff and lanes 32-63 compare against 0x00000000_ffffffff: all true, so out[40..63]
; = 1 where t < 40 is false. Mesa's ACO enforces the restriction (aco_live_var_analysis.cpp:
; SGPR operands of a GFX10+ VALU with an SGPR-pair definition are "late kill", the carry-in
; of v_addc/v_subb excepted, which each pass reads its own dword of). LLVM 22.1.8 (llc-22)
; llvmlite's 22.1.0 and llc-19 emit it (matrix above). No upstream issue found.

; CHECK-LABEL: k:
; CHECK: v_cmp_lt_u64_e64 s{{\[}}[[LO:[0-9]+]]:[[HI:[0-9]+]]{{\]}}, v{{\[[0-9]+:[0-9]+\]}}, s{{\[}}[[LO]]:[[HI]]{{\]}}
define amdgpu_kernel void @k(ptr addrspace(1) %out, i64 %n) {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %t = zext i32 %id to i64
  %in = icmp ult i64 %t, %n
  %v = zext i1 %in to i32
  %p = getelementptr i32, ptr addrspace(1) %out, i64 %t
  store i32 %v, ptr addrspace(1) %p
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
