; A weak global defined nowhere: ld.lld -shared leaves an R_AMDGPU_ABS64 GOT relocation against an
; undefined dynamic symbol.
target triple = "amdgcn-amd-amdhsa"

@ext = extern_weak addrspace(1) global i32

define amdgpu_kernel void @k(ptr addrspace(1) %out) {
  %v = load i32, ptr addrspace(1) @ext
  store i32 %v, ptr addrspace(1) %out
  ret void
}
