; Every work-item writes a[gid] to LDS, crosses a workgroup barrier and reads back the element
; of the work-item at the mirrored position of its work-group (several waves per group).
target triple = "amdgcn-amd-amdhsa"
@tile = internal addrspace(3) global [256 x i32] poison

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare void @llvm.amdgcn.s.barrier()

define amdgpu_kernel void @k(ptr addrspace(1) %a, ptr addrspace(1) %out, i32 %n) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %bid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %bid, %n
  %gid = add i32 %base, %tid
  %g64 = zext i32 %gid to i64
  %pa = getelementptr i32, ptr addrspace(1) %a, i64 %g64
  %v = load i32, ptr addrspace(1) %pa
  %lp = getelementptr [256 x i32], ptr addrspace(3) @tile, i32 0, i32 %tid
  store i32 %v, ptr addrspace(3) %lp
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %last = sub i32 %n, 1
  %mirror = sub i32 %last, %tid
  %lq = getelementptr [256 x i32], ptr addrspace(3) @tile, i32 0, i32 %mirror
  %w = load i32, ptr addrspace(3) %lq
  %po = getelementptr i32, ptr addrspace(1) %out, i64 %g64
  store i32 %w, ptr addrspace(1) %po
  ret void
}
