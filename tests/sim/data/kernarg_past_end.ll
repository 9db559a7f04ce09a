; Kernarg segments read past their end (sim loader's KERNARG_POOL_GRANULE).
; @sum3: out[0] = a + b * c; kernarg_size 20, and at O3 LLVM loads a, b, c with one
; s_load_dwordx4 at 0x8 (a widened 3-dword load), reading bytes 20..23 past the segment.
; @peek: out[0] = the dword at kernarg + off, for a uniform `off` the test chooses.
target triple = "amdgcn-amd-amdhsa"

declare ptr addrspace(4) @llvm.amdgcn.kernarg.segment.ptr()

define amdgpu_kernel void @sum3(ptr addrspace(1) %out, i32 %a, i32 %b, i32 %c) #0 {
  %s = mul i32 %b, %c
  %t = add i32 %a, %s
  store i32 %t, ptr addrspace(1) %out
  ret void
}

define amdgpu_kernel void @peek(ptr addrspace(1) %out, i32 %off) #0 {
  %kp = call ptr addrspace(4) @llvm.amdgcn.kernarg.segment.ptr()
  %o = zext i32 %off to i64
  %p = getelementptr i8, ptr addrspace(4) %kp, i64 %o
  %v = load i32, ptr addrspace(4) %p, align 4
  store i32 %v, ptr addrspace(1) %out
  ret void
}

attributes #0 = { "amdgpu-no-implicitarg-ptr" }
