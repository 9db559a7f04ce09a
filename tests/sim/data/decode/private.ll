; Private (scratch) arrays with dynamic indices, of i32 and i64 elements.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @scratch(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) {
entry:
  %arr = alloca [16 x i32], align 4, addrspace(5)
  %arr64 = alloca [8 x i64], align 8, addrspace(5)
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  br label %fill
fill:
  %i = phi i32 [ 0, %entry ], [ %i1, %fill ]
  %p = getelementptr [16 x i32], ptr addrspace(5) %arr, i32 0, i32 %i
  %v = mul i32 %i, %id
  store volatile i32 %v, ptr addrspace(5) %p
  %i8 = and i32 %i, 7
  %p64 = getelementptr [8 x i64], ptr addrspace(5) %arr64, i32 0, i32 %i8
  %v64 = zext i32 %v to i64
  store volatile i64 %v64, ptr addrspace(5) %p64
  %i1 = add i32 %i, 1
  %c = icmp ult i32 %i1, 16
  br i1 %c, label %fill, label %read
read:
  %pa = getelementptr i32, ptr addrspace(1) %a, i32 %id
  %x = load i32, ptr addrspace(1) %pa
  %k = and i32 %x, 15
  %pk = getelementptr [16 x i32], ptr addrspace(5) %arr, i32 0, i32 %k
  %r = load volatile i32, ptr addrspace(5) %pk
  %k8 = and i32 %x, 7
  %pk64 = getelementptr [8 x i64], ptr addrspace(5) %arr64, i32 0, i32 %k8
  %r64 = load volatile i64, ptr addrspace(5) %pk64
  %r64t = trunc i64 %r64 to i32
  %t = add i32 %r, %r64t
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %id
  store i32 %t, ptr addrspace(1) %po
  ret void
}
