; A real call (noinline helper with a private array, so the callee gets a stack frame in
; scratch): out[gid] = mix(a[gid], gid).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()

define internal i32 @mix(i32 %x, i32 %i) noinline {
entry:
  %arr = alloca [8 x i32], align 4, addrspace(5)
  br label %fill
fill:
  %k = phi i32 [ 0, %entry ], [ %k1, %fill ]
  %v = mul i32 %x, %k
  %pk = getelementptr [8 x i32], ptr addrspace(5) %arr, i32 0, i32 %k
  store volatile i32 %v, ptr addrspace(5) %pk
  %k1 = add i32 %k, 1
  %d = icmp eq i32 %k1, 8
  br i1 %d, label %done, label %fill
done:
  %j = and i32 %i, 7
  %pj = getelementptr [8 x i32], ptr addrspace(5) %arr, i32 0, i32 %j
  %r = load volatile i32, ptr addrspace(5) %pj
  %rot = call i32 @llvm.fshl.i32(i32 %r, i32 %r, i32 5)
  %m = xor i32 %rot, -1640531527
  ret i32 %m
}
declare i32 @llvm.fshl.i32(i32, i32, i32)

define amdgpu_kernel void @k(ptr addrspace(1) %a, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %bid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %bid, 64
  %gid = add i32 %base, %tid
  %g = zext i32 %gid to i64
  %pa = getelementptr i32, ptr addrspace(1) %a, i64 %g
  %x = load i32, ptr addrspace(1) %pa
  %r = call i32 @mix(i32 %x, i32 %gid)
  %po = getelementptr i32, ptr addrspace(1) %out, i64 %g
  store i32 %r, ptr addrspace(1) %po
  ret void
}
