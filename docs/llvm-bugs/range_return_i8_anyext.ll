; LLVM 22.1 (llvmlite 0.50's 22.1.0 and Debian llvm-22 22.1.8): wrong code on AMDGPU for the
; zero extension of a call's i8 result that carries a `range` return attribute. LLVM 19
; (Debian llc-19) is right.
;
; The callee returns the i8 in v0 any-extended (AMDGPUUsage, "Function Call Convention
; Work-Item ... Return values": a value smaller than 32 bits is in the low bits, the rest
; unspecified); here it computes `mul i8` with v_mul_lo_u16, so for x = 0xff v0 holds
; 0xff * 0xff = 0xfe01: the i8 is 0x01, bits 15:8 are 0xfe. The caller's `zext i8 to i64`
; must mask with 0xff, and does without the attribute (`v_and_b32 v0, 0xff, v0`). With
; `range(i8 0, 2)` it masks with 0xffff: the range of the i8 value is taken as a fact about
; the 16-bit register it was promoted to, whose bits 15:8 the callee never cleared.
;   llc -O1 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 range_return_i8_anyext.ll -o - \
;     | grep -A1 s_swappc    ->  v_and_b32_e32 v0, 0xffff, v0   (llc-19: 0xff)
; The same at -O3, on gfx90a and gfx1100. The attribute is correct: x * x for x in {0, -1}
; (i8) is 0 or 1. Expected by hand: out[0] = 1 (0xff * 0xff = 65025 = 0xfe01, low byte 1);
; the simulator computes 65025, the register's low 16 bits.
; Found by the rgpu-fuzz 30-minute campaign of 2026-12-01 (session 9; bucket 0c85a73aa6,
; seed range 91000000): IPO inferred the range on an `#[inline(never)]` helper called with
; 0 and 255. Reduced by hand; tests/sim/test_llvm_bugs_o3.py pins it.
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
