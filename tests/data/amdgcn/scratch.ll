target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @scratch(ptr addrspace(1) %out, i64 %out.len, i32 %k, ptr addrspace(1) %rgpu.trap) #0 {
entry:
  %arr = alloca [16 x i32], align 4, addrspace(5)
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  br label %fill
fill:
  %i = phi i32 [ 0, %entry ], [ %i1, %fill ]
  %p = getelementptr [16 x i32], ptr addrspace(5) %arr, i32 0, i32 %i
  %v = mul i32 %i, %tid
  store volatile i32 %v, ptr addrspace(5) %p
  %i1 = add i32 %i, 1
  %done = icmp eq i32 %i1, 16
  br i1 %done, label %read, label %fill
read:
  %kk = and i32 %k, 15
  %q = getelementptr [16 x i32], ptr addrspace(5) %arr, i32 0, i32 %kk
  %r = load volatile i32, ptr addrspace(5) %q
  %ix = zext i32 %tid to i64
  %o = getelementptr i32, ptr addrspace(1) %out, i64 %ix
  store i32 %r, ptr addrspace(1) %o
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
attributes #0 = { "denormal-fp-math-f32"="ieee,ieee" }
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
