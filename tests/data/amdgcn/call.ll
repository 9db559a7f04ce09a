target triple = "amdgcn-amd-amdhsa"

define internal i32 @mix(i32 %x, i32 %y) #1 {
  %r = call i32 @llvm.fshl.i32(i32 %x, i32 %x, i32 5)
  %m = mul i32 %y, -1640531527
  %z = xor i32 %r, %m
  ret i32 %z
}

define amdgpu_kernel void @call(ptr addrspace(1) %a, i64 %a.len, ptr addrspace(1) %out, i64 %out.len, ptr addrspace(1) %rgpu.trap) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %ix = zext i32 %tid to i64
  %p = getelementptr i32, ptr addrspace(1) %a, i64 %ix
  %v = load i32, ptr addrspace(1) %p
  %w = call i32 @mix(i32 %v, i32 %tid)
  %q = getelementptr i32, ptr addrspace(1) %out, i64 %ix
  store i32 %w, ptr addrspace(1) %q
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.fshl.i32(i32, i32, i32)
attributes #1 = { noinline }
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
