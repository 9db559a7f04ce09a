; RUN: llc -O0 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 -asm-show-inst < %s | FileCheck %s
; RUN: not --crash llc -O0 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 -filetype=obj -o /dev/null < %s 2>&1 \
; RUN:   | FileCheck --check-prefix=OBJ %s
; REQUIRES: amdgpu-registered-target
;
; Version matrix (python -m triage.upstream matrix; yes = the RUN line passes, so the bug is there):
;   llvmlite = 0.50.0 (LLVM 22.1.0); llc-22 = 22.1.8; llc-19 = 19.1.7; gisel = llc-22 22.1.8 -global-isel (llc-N: Debian llvm-N's llc and opt)
;   RUN 1: llvmlite n/a, llc-22 yes, llc-19 no, gisel no
;   RUN 2: llvmlite yes, llc-22 yes, llc-19 no, gisel no
; (end of matrix)
;
; Title: [AMDGPU] gfx11 -O0: blocks after llvm.trap keep V_ADD_U64_PSEUDO (llvm/llvm-project#208912)
; Culprit: finalize-isel (FinalizeISel resumes after insertSimulatedTrap's halt block, PR #174774)
; Corpus: none. Our lowering calls llvm.trap only in the last block of `rgpu.trap`
; (rgpu_fuzz/lower/amdgcn.py, gpu_trap_fn), so no block follows it and none is skipped; only
; the hand-written tests/data/amdgcn/trap.ll reaches the bug.
;
; LLVM 22.1 (Debian llc-22 22.1.8, llvmlite 0.50's 22.1.0), gfx11, -O0: the block after an
; `llvm.trap` keeps an unexpanded V_ADD_U64_PSEUDO (the 64-bit address add of the store).
; Upstream: llvm/llvm-project#208912 (closed: the same "Unsupported instruction" abort on
; gfx1100, fixed on main, still in 22.1.8; its backport patch is PR #174774 "[AMDGPU] Fix
; insertSimulatedTrap to return correct continuation block", commit 9429a1e809fd). The
; mechanism, as PR #174774 describes it: on gfx11 llvm.trap is lowered to a simulated trap
; (SIInstrInfo::insertSimulatedTrap, PR #85854); when the trap ends a block with no
; successors, it returned the halt-loop block appended at the end of the function (PR
; #169290 made it so, by its description), so FinalizeISel resumed there and skipped every
; block in between, leaving their custom-inserter pseudos unexpanded. LLVM 19 (Debian
; llc-19) is right (`v_add_co_u32` / `v_add_co_ci_u32`).
;
; Two symptoms of the one bug:
; 1. -filetype=obj aborts: "LLVM ERROR: Unsupported instruction : <MCInst 5751 ...>"
;    (5751 is V_ADD_U64_PSEUDO; the message names no instruction, the trap's
;    `s_mov_b32 ttmp2, m0` just before it is fine: llvm-mc-22 assembles it).
; 2. Assembly output is WRONG CODE, silently: the asm printer prints an empty line for the
;    pseudo, so the store goes to v[0:1] = tid * 4, without the base address %p
;    (-asm-show-inst shows `<MCInst #5751 V_ADD_U64_PSEUDO` there), and llvm-mc-22
;    assembles that text without a word.
; -O1, -O2, -O3, gfx942 and gfx90a (no simulated trap), gfx1030 and gfx1200 at -O0, and
; GlobalISel (-global-isel -O0 gfx1100): right (the object is emitted).
; Found by rgpu-fuzz's code-object tests (tests/data/amdgcn/trap.ll, trap-gfx1100-O0, which
; tests/unit/test_codeobj.py records as a crash); reduced by hand.

define amdgpu_kernel void @k(ptr addrspace(1) %p, i32 %d) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %z = icmp eq i32 %d, 0
  br i1 %z, label %fail, label %ok
fail:
  call void @llvm.trap()
  unreachable
ok:
  %i = zext i32 %tid to i64
  %q = getelementptr i32, ptr addrspace(1) %p, i64 %i
  store i32 %d, ptr addrspace(1) %q
  ret void
}

; CHECK-LABEL: ; %ok
; CHECK: v_lshlrev_b64 v[0:1], s{{[0-9]+}}, v[0:1]
; CHECK-NOT: v_add
; CHECK: <MCInst #{{[0-9]+}} V_ADD_U64_PSEUDO
; CHECK-NOT: v_add
; CHECK: global_store_b32 v[0:1], v{{[0-9]+}}, off
; OBJ: LLVM ERROR: Unsupported instruction : <MCInst
