; Stores one element past the end of the 64-element output for the last work-item.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @k(ptr addrspace(1) %out, i32 %shift) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %i = add i32 %tid, %shift
  %i64 = zext i32 %i to i64
  %po = getelementptr i32, ptr addrspace(1) %out, i64 %i64
  store i32 %tid, ptr addrspace(1) %po
  ret void
}
