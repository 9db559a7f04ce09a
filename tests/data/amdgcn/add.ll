target triple = "amdgcn-amd-amdhsa"
@tile = internal addrspace(3) global [64 x float] poison, align 4

define amdgpu_kernel void @add(ptr addrspace(1) %a, i64 %a.len, ptr addrspace(1) %out, i64 %out.len, i32 %n, ptr addrspace(1) %rgpu.trap) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %imp = call ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
  %bsz = load i16, ptr addrspace(4) %imp, align 4
  %bszz = zext i16 %bsz to i32
  %base = mul i32 %gid, %bszz
  %i = add i32 %base, %tid
  %ix = zext i32 %i to i64
  %p = getelementptr i32, ptr addrspace(1) %a, i64 %ix
  %v = load i32, ptr addrspace(1) %p
  %w = add i32 %v, %n
  %q = getelementptr i32, ptr addrspace(1) %out, i64 %ix
  store i32 %w, ptr addrspace(1) %q
  %t = getelementptr float, ptr addrspace(3) @tile, i32 %tid
  store float 1.0, ptr addrspace(3) %t
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
