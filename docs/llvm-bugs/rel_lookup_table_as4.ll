; RUN: not --crash opt -passes=rel-lookup-table-converter -disable-output < %s 2>&1 \
; RUN:   | FileCheck --check-prefixes=CHECK,VERIFIER %s
; RUN: not --crash opt -O2 -disable-output < %s 2>&1 | FileCheck %s
; RUN: sed 's/addrspace(4)/addrspace(1)/g' %s | not --crash opt -O2 -disable-output 2>&1 \
; RUN:   | FileCheck --check-prefix=AS1 %s
;
; Version matrix (python -m triage.upstream matrix; yes = the RUN line passes, so the bug is there):
;   llvmlite = 0.50.0 (LLVM 22.1.0); llc-22 = 22.1.8; llc-19 = 19.1.7; gisel = llc-22 22.1.8 -global-isel (llc-N: Debian llvm-N's llc and opt)
;   RUN 1: llvmlite n/a, llc-22 yes, llc-19 yes, gisel n/a
;   RUN 2: llvmlite yes, llc-22 yes, llc-19 yes, gisel n/a
;   RUN 3: llvmlite yes, llc-22 yes, llc-19 yes, gisel n/a
; (end of matrix)
;
; Title: RelLookupTableConverter: llvm.load.relative on the p0 overload for a table in addrspace(4)/(1) breaks the module
; Culprit: rel-lookup-table-converter (an IR pass: RelLookupTableConverterPass builds the bad call)
; Corpus: none. The kernel language has no pointers to constant data (no references; the
; only statics are #[shared] arrays), so no kernel of it gives the optimiser a table of pointers.
;
; LLVM 22.1.8 and LLVM 19 (Debian opt-22 and opt-19): RelLookupTableConverterPass builds
; llvm.load.relative on the p0 overload for a constant table of pointers in a non-zero
; address space: 'Call parameter type does not match function signature', the module is
; broken (opt aborts; llvmlite's assertions build asserts while building the call).
; - Not a regression: opt-19 fails the same way on this file.
; - Not specific to -passes=rel-lookup-table-converter: `opt -O2` runs the pass and fails
;   (RUN 2), and with the table and its elements in addrspace(1) (global) instead of
;   addrspace(4) (constant) it fails too (RUN 3).
; The verifier's message shows the mismatch: the pass declares the intrinsic with a `ptr`
; (addrspace 0) parameter and passes it the relative table it created in the original
; table's address space (`@ptrs.rel`, addrspace(4) here, addrspace(1) in RUN 3).
target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

@s0 = internal addrspace(4) constant i32 10
@s1 = internal addrspace(4) constant i32 50
@ptrs = internal addrspace(4) constant [2 x ptr addrspace(4)] [ptr addrspace(4) @s0, ptr addrspace(4) @s1]

define i32 @f(i32 %j) {
  %c = icmp ult i32 %j, 2
  br i1 %c, label %in, label %out
in:
  %pp = getelementptr [2 x ptr addrspace(4)], ptr addrspace(4) @ptrs, i32 0, i32 %j
  %p = load ptr addrspace(4), ptr addrspace(4) %pp
  %b = load i32, ptr addrspace(4) %p
  ret i32 %b
out:
  ret i32 0
}

; A release build's verifier reports the call; an assertions build (llvmlite's) stops
; earlier, in CallInst::init, on the same call ("Calling a function with a bad signature!").
; CHECK: {{Call parameter type does not match function signature!|Calling a function with a bad signature!}}
; VERIFIER-NEXT: ptr addrspace(4) @ptrs.rel
; VERIFIER-NEXT: call ptr @llvm.load.relative.i{{32|64}}(ptr addrspace(4) @ptrs.rel,
; VERIFIER: LLVM ERROR: Broken module found
; AS1: {{Call parameter type does not match function signature!|Calling a function with a bad signature!}}
