; 64-bit unsigned division and remainder of uniform (kernarg) values. At O0 LLVM 22 expands
; them on the scalar unit through a float reciprocal, building 64-bit products as
; {mul_hi, IMPLICIT_DEF} << 32: the undefined half is shifted out (campaign bucket 15a114f19e).
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @k(ptr addrspace(1) %out, i64 %a, i64 %b) {
  %q = udiv i64 %a, %b
  %r = urem i64 %a, %b
  store i64 %q, ptr addrspace(1) %out
  %p1 = getelementptr i64, ptr addrspace(1) %out, i64 1
  store i64 %r, ptr addrspace(1) %p1
  ret void
}
