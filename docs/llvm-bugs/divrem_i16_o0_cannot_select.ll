; RUN: not --crash llc -O0 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 < %s 2>&1 \
; RUN:   | FileCheck --check-prefix=SDIVREM %s
; RUN: sed 's/sdiv/udiv/; s/srem/urem/' %s \
; RUN:   | not --crash llc -O0 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 2>&1 \
; RUN:   | FileCheck --check-prefix=UDIVREM %s
; RUN: not --crash llc -O2 -amdgpu-codegenprepare-disable-idiv-expansion \
; RUN:   -mtriple=amdgcn-amd-amdhsa -mcpu=gfx900 < %s 2>&1 | FileCheck --check-prefix=SDIVREM %s
; RUN: llc -O0 -mtriple=amdgcn-amd-amdhsa -mcpu=tahiti < %s | FileCheck --check-prefix=OK %s
; RUN: llc -O1 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 < %s | FileCheck --check-prefix=OK %s
; REQUIRES: amdgpu-registered-target
;
; Version matrix (python -m triage.upstream matrix; yes = the RUN line passes, so the bug is there):
;   llvmlite = 0.50.0 (LLVM 22.1.0); llc-22 = 22.1.8; llc-19 = 19.1.7; gisel = llc-22 22.1.8 -global-isel (llc-N: Debian llvm-N's llc and opt)
;   RUN 1: llvmlite yes, llc-22 yes, llc-19 yes, gisel no
;   RUN 2: llvmlite yes, llc-22 yes, llc-19 yes, gisel no
;   RUN 3: llvmlite yes, llc-22 yes, llc-19 yes, gisel no
;   RUN 4: llvmlite yes, llc-22 yes, llc-19 yes, gisel yes
;   RUN 5: llvmlite yes, llc-22 yes, llc-19 yes, gisel yes
; (end of matrix)
;
; Title: [AMDGPU] -O0: "Cannot select: i16,i16 = sdivrem" (and udivrem) for an i8/i16 division and remainder of the same operands
; Culprit: amdgpu-isel (SelectionDAG: DAGCombiner joins sdiv and srem into SDIVREM, which has no selection for i16 where i16 is legal)
; Corpus: none yet. Found through the `div_euclid`/`rem_euclid` conformance cases of the
; kernel language, whose lowering computes a quotient and a remainder of the same i8/i16
; operands in one block; `/` and `%` alone are each guarded by their own trap block, so a
; basic block never held both before.
;
; LLVM 22.1.8 and LLVM 19.1.7 (Debian llc-22, llc-19; llvmlite 0.50's 22.1.0 too) abort in
; instruction selection when one basic block divides and takes the remainder of the same i16
; (or i8, which is promoted to i16) operands: DAGCombiner's useDivRem joins ISD::SDIV and
; ISD::SREM (UDIV/UREM) into one SDIVREM (UDIVREM) node, and on subtargets where i16 is a
; legal type (GFX8 and later: gfx900, gfx942, gfx1100 here) nothing lowers or selects an
; i16 SDIVREM. At -O1 and above AMDGPUCodeGenPrepare expands i8/i16 division in IR before
; selection and hides it; at -O0 that pass does not run (RUN 1, 2), and with
; -amdgpu-codegenprepare-disable-idiv-expansion it aborts at -O2 too (RUN 3).
; Controls: tahiti (GFX6, i16 not legal, promoted to i32) compiles it at -O0 (RUN 4); -O1 on
; gfx942 compiles it (RUN 5); GlobalISel (-global-isel -O0) compiles it.
; Upstream: no issue found (searched "Cannot select sdivrem i16", "udivrem i16 AMDGPU O0").
target triple = "amdgcn-amd-amdhsa"

define i16 @divrem(i16 %a, i16 %b) {
  %q = sdiv i16 %a, %b
  %r = srem i16 %a, %b
  %s = add i16 %q, %r
  ret i16 %s
}

; SDIVREM: LLVM ERROR: Cannot select: {{.*}} i16,i16 = sdivrem
; SDIVREM: In function: divrem
; UDIVREM: LLVM ERROR: Cannot select: {{.*}} i16,i16 = udivrem
; UDIVREM: In function: divrem
; OK-LABEL: divrem:
; OK: s_setpc_b64
