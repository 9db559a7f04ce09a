; Each work-item stores what the dispatcher gave it: work-item ids, work-group ids, the
; dispatch packet's workgroup_size_x and grid_size_x, the v5 hidden kernargs
; hidden_block_count_x and hidden_group_size_x/y/z. 10 u32 per work-item, at its flat
; global index.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workitem.id.y()
declare i32 @llvm.amdgcn.workitem.id.z()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare i32 @llvm.amdgcn.workgroup.id.z()
declare ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
declare ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()

define amdgpu_kernel void @k(ptr addrspace(1) %out, i32 %stride) {
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %ty = call i32 @llvm.amdgcn.workitem.id.y()
  %tz = call i32 @llvm.amdgcn.workitem.id.z()
  %bx = call i32 @llvm.amdgcn.workgroup.id.x()
  %by = call i32 @llvm.amdgcn.workgroup.id.y()
  %bz = call i32 @llvm.amdgcn.workgroup.id.z()
  %dp = call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
  %wsx.p = getelementptr i8, ptr addrspace(4) %dp, i64 4
  %wsx16 = load i16, ptr addrspace(4) %wsx.p
  %wsx = zext i16 %wsx16 to i32
  %gsx.p = getelementptr i8, ptr addrspace(4) %dp, i64 12
  %gsx = load i32, ptr addrspace(4) %gsx.p
  %ia = call ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
  %bcx = load i32, ptr addrspace(4) %ia
  %gx.p = getelementptr i8, ptr addrspace(4) %ia, i64 12
  %gx16 = load i16, ptr addrspace(4) %gx.p
  %gx = zext i16 %gx16 to i32
  %gy.p = getelementptr i8, ptr addrspace(4) %ia, i64 14
  %gy16 = load i16, ptr addrspace(4) %gy.p
  %gy = zext i16 %gy16 to i32
  %gz.p = getelementptr i8, ptr addrspace(4) %ia, i64 16
  %gz16 = load i16, ptr addrspace(4) %gz.p
  %gz = zext i16 %gz16 to i32
  ; flat index = ((bz*nby + by)*nbx + bx) * threads + (tz*gy + ty)*gx + tx, nby = 3 fixed by
  ; the test's launch
  %t0 = mul i32 %tz, %gy
  %t1 = add i32 %t0, %ty
  %t2 = mul i32 %t1, %gx
  %tid = add i32 %t2, %tx
  %b0 = mul i32 %bz, 3
  %b1 = add i32 %b0, %by
  %b2 = mul i32 %b1, %bcx
  %bid = add i32 %b2, %bx
  %gxy = mul i32 %gx, %gy
  %threads = mul i32 %gxy, %gz
  %g0 = mul i32 %bid, %threads
  %g = add i32 %g0, %tid
  %base = mul i32 %g, %stride
  %vals = insertelement <10 x i32> poison, i32 %tx, i32 0
  %v1 = insertelement <10 x i32> %vals, i32 %ty, i32 1
  %v2 = insertelement <10 x i32> %v1, i32 %tz, i32 2
  %v3 = insertelement <10 x i32> %v2, i32 %bx, i32 3
  %v4 = insertelement <10 x i32> %v3, i32 %by, i32 4
  %v5 = insertelement <10 x i32> %v4, i32 %bz, i32 5
  %v6 = insertelement <10 x i32> %v5, i32 %wsx, i32 6
  %v7 = insertelement <10 x i32> %v6, i32 %gsx, i32 7
  %v8 = insertelement <10 x i32> %v7, i32 %bcx, i32 8
  %v9 = insertelement <10 x i32> %v8, i32 %threads, i32 9
  %b64 = zext i32 %base to i64
  %p = getelementptr i32, ptr addrspace(1) %out, i64 %b64
  store <10 x i32> %v9, ptr addrspace(1) %p, align 4
  ret void
}
