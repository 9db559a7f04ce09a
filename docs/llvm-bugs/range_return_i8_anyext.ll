; RUN: llc -O1 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 < %s | FileCheck %s
; RUN: sed 's/call i8 @h1/call noundef i8 @h1/' %s \
; RUN:   | llc -O1 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 | FileCheck %s
; RUN: llc -O1 -mtriple=amdgcn-amd-amdhsa -mcpu=tahiti < %s | FileCheck --check-prefix=TAHITI %s
; REQUIRES: amdgpu-registered-target
;
; Version matrix (python -m triage.upstream matrix; yes = the RUN line passes, so the bug is there):
;   llvmlite = 0.50.0 (LLVM 22.1.0); llc-22 = 22.1.8; llc-19 = 19.1.7; gisel = llc-22 22.1.8 -global-isel (llc-N: Debian llvm-N's llc and opt)
;   RUN 1: llvmlite yes, llc-22 yes, llc-19 no, gisel no
;   RUN 2: llvmlite yes, llc-22 yes, llc-19 yes, gisel no
;   RUN 3: llvmlite yes, llc-22 yes, llc-19 no, gisel no
; (end of matrix)
;
; Title: [AMDGPU] SelectionDAG: zext of a call's i8 result with a range attribute masks the any-extended register with 0xffff instead of 0xff
; Culprit: amdgpu-isel (SelectionDAG takes the i8 range as a fact about the 16-bit register; MIR after amdgpu-isel masks with 0xffff)
; Corpus: corpus/cc7ffa974910.toml, a known divergence of amdgpu-sim:gfx942:O3 (strict xfail;
; gfx90a and gfx1100 at O3 diverge the same way); `rgpu-fuzz report cc7ffa974910 --upstream
; DIR` reduces its IR with RUN 1 of this file (107 -> 13 lines).
;
; AMDGPU SelectionDAG: wrong code for the zero extension of a call's i8 result that carries a
; `range` return attribute; latent since at least LLVM 19 with `noundef`, reached without it
; in LLVM 22.
;
; The callee returns the i8 in v0 any-extended (AMDGPUUsage, "Function Call Convention
; Work-Item ... Return values": a value smaller than 32 bits is in the low bits, the rest
; unspecified); here it computes `mul i8` with v_mul_lo_u16, so for x = 0xff v0 holds
; 0xff * 0xff = 0xfe01: the i8 is 0x01, bits 15:8 are 0xfe. The caller's `zext i8 to i64`
; must mask with 0xff, and does without the attribute (`v_and_b32 v0, 0xff, v0`). With
; `range(i8 0, 2)` it masks with 0xffff: the range of the i8 value is taken as a fact about
; the 16-bit register it was promoted to, whose bits 15:8 the callee never cleared.
;
; Which LLVMs (each checked with the llc named, -O1, gfx942, the `s_swappc` .. store):
; - Debian llc-22 22.1.8 and llvmlite 0.50's 22.1.0: `v_and_b32_e32 v0, 0xffff, v0` (RUN 1);
;   the same at -O3, and on gfx90a at -O3; gfx1100 (true16) copies the low 16 bits with
;   `v_mov_b16_e32 v1.l, v0.l` / `v_mov_b16_e32 v1.h, 0`, the same 0xffff mask.
; - Debian llc-19 19.1: masks with 0xff as written, but only because LLVM 19 uses the range
;   only when the value is also `noundef` (observed, not read in its source): with `noundef`
;   on the call (RUN 2), or on the callee's return beside its `range`, llc-19 masks with
;   0xffff too. So this is not a regression in 22: 22 applies the range without `noundef`,
;   which exposes a lowering bug 19 already has.
; - On tahiti (GFX6, no 16-bit registers, the i8 is promoted to i32) llc-22 emits no mask at
;   all (RUN 3): the callee's `v_mul_u32_u24` leaves 0xfe01 in v0 and the caller stores v0.
;   llc-19 masks with 0xff there without `noundef`, and not at all with it.
; - GlobalISel (`-global-isel`, llc-19 and llc-22, with and without `noundef`) masks with
;   0xff; so do the AArch64 (`and w8, w0, #0xff`) and RISC-V (`andi a0, a0, 255` /
;   `zext.b a0, a0`) back ends of llc-19 and llc-22 with the same IR (addrspace(1) removed,
;   default calling convention). The bug is in AMDGPU's SelectionDAG lowering of the
;   promoted call result, not in the attribute's meaning.
; The attribute is correct: x * x for x in {0, -1} (i8) is 0 or 1. Expected by hand:
; out[0] = 1 (0xff * 0xff = 65025 = 0xfe01, low byte 1); the simulator computes 65025, the
; register's low 16 bits.
; Found by an rgpu-fuzz 30-minute campaign (bucket 0c85a73aa6, seed range 91000000): IPO
; inferred the range on an `#[inline(never)]` helper called with 0 and 255. Reduced by
; hand; tests/sim/test_llvm_bugs_o3.py pins it on the simulator.
target triple = "amdgcn-amd-amdhsa"

define internal range(i8 0, 2) i8 @h1(i8 %x) #0 {
  %m = mul nsw i8 %x, %x
  ret i8 %m
}

define amdgpu_kernel void @k(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %x = load i8, ptr addrspace(1) %in, align 1
  %r = call i8 @h1(i8 %x)
  %z = zext i8 %r to i64
  store i64 %z, ptr addrspace(1) %out, align 8
  ret void
}

attributes #0 = { noinline }

; CHECK-LABEL: {{^}}k:
; CHECK: s_swappc_b64
; CHECK-NOT: 0xff,
; CHECK: v_and_b32_e32 v{{[0-9]+}}, 0xffff, v0
; CHECK: global_store_dwordx2

; TAHITI-LABEL: {{^}}k:
; TAHITI: s_swappc_b64
; TAHITI-NOT: v_and_b32
; TAHITI-NOT: v_bfe_u32
; TAHITI: buffer_store_dwordx2 v[0:1]
