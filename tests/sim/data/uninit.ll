; Stores an element of a private array that nothing wrote: the value is undefined, and
; storing it to global memory must be reported (sim-uninit-read).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @k(ptr addrspace(1) %out) {
  %arr = alloca [4 x i32], align 4, addrspace(5)
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %j = and i32 %tid, 3
  %pj = getelementptr [4 x i32], ptr addrspace(5) %arr, i32 0, i32 %j
  %r = load volatile i32, ptr addrspace(5) %pj
  %t64 = zext i32 %tid to i64
  %po = getelementptr i32, ptr addrspace(1) %out, i64 %t64
  store i32 %r, ptr addrspace(1) %po
  ret void
}
