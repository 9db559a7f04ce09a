; A private array indexed by data: a[gid] % 16 picks the element, so scratch is addressed
; per lane with different offsets; the array is filled with gid * 16 + i first.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()

define amdgpu_kernel void @k(ptr addrspace(1) %a, ptr addrspace(1) %out) {
entry:
  %arr = alloca [16 x i32], align 4, addrspace(5)
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %bid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %bid, 64
  %gid = add i32 %base, %tid
  br label %fill
fill:
  %i = phi i32 [ 0, %entry ], [ %i1, %fill ]
  %g16 = mul i32 %gid, 16
  %val = add i32 %g16, %i
  %pi = getelementptr [16 x i32], ptr addrspace(5) %arr, i32 0, i32 %i
  store volatile i32 %val, ptr addrspace(5) %pi
  %i1 = add i32 %i, 1
  %done = icmp eq i32 %i1, 16
  br i1 %done, label %read, label %fill
read:
  %g64 = zext i32 %gid to i64
  %pa = getelementptr i32, ptr addrspace(1) %a, i64 %g64
  %x = load i32, ptr addrspace(1) %pa
  %j = and i32 %x, 15
  %pj = getelementptr [16 x i32], ptr addrspace(5) %arr, i32 0, i32 %j
  %r = load volatile i32, ptr addrspace(5) %pj
  %po = getelementptr i32, ptr addrspace(1) %out, i64 %g64
  store i32 %r, ptr addrspace(1) %po
  ret void
}
