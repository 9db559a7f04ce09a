; A uniform dynamic index into a vector (insertelement) and a divergent one
; (extractelement): at O0 LLVM lowers both through VGPR indexing mode on GFX9
; (`s_set_gpr_idx_on sN, gpr_idx(DST)` and, in a readfirstlane loop, gpr_idx(SRC0)).
; out[tid*8 + j] = (j == idx ? tid + 100 : j + 1); got[tid] = that vector's element tid & 7.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @k(ptr addrspace(1) %out, ptr addrspace(1) %got, i32 %idx) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %val = add i32 %tid, 100
  %vec = insertelement <8 x i32> <i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 8>, i32 %val, i32 %idx
  %base = mul i32 %tid, 8
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %base
  store <8 x i32> %vec, ptr addrspace(1) %p, align 4
  %sel = and i32 %tid, 7
  %e = extractelement <8 x i32> %vec, i32 %sel
  %q = getelementptr i32, ptr addrspace(1) %got, i32 %tid
  store i32 %e, ptr addrspace(1) %q, align 4
  ret void
}
