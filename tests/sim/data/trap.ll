; The trap record protocol of our lowering: the first lane that finds a[gid] == 0 writes
; {3, 7, block x, 0, 0, thread x, 0, 0} to %trap and executes llvm.trap (s_trap 2).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare void @llvm.trap()

define amdgpu_kernel void @k(ptr addrspace(1) %a, ptr addrspace(1) %out, ptr addrspace(1) %trap) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %bid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %bid, 64
  %gid = add i32 %base, %tid
  %g64 = zext i32 %gid to i64
  %pa = getelementptr i32, ptr addrspace(1) %a, i64 %g64
  %x = load i32, ptr addrspace(1) %pa
  %z = icmp eq i32 %x, 0
  br i1 %z, label %bad, label %ok
bad:
  %old = cmpxchg ptr addrspace(1) %trap, i32 0, i32 3 monotonic monotonic
  %first = extractvalue { i32, i1 } %old, 1
  br i1 %first, label %record, label %die
record:
  %p1 = getelementptr i32, ptr addrspace(1) %trap, i64 1
  store i32 7, ptr addrspace(1) %p1
  %p2 = getelementptr i32, ptr addrspace(1) %trap, i64 2
  store i32 %bid, ptr addrspace(1) %p2
  %p5 = getelementptr i32, ptr addrspace(1) %trap, i64 5
  store i32 %tid, ptr addrspace(1) %p5
  br label %die
die:
  call void @llvm.trap()
  unreachable
ok:
  %po = getelementptr i32, ptr addrspace(1) %out, i64 %g64
  store i32 %x, ptr addrspace(1) %po
  ret void
}
