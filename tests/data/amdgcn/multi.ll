target triple = "amdgcn-amd-amdhsa"
@tile = internal addrspace(3) global [256 x double] poison, align 8

define amdgpu_kernel void @first(ptr addrspace(1) %x, i64 %x.len, double %s, ptr addrspace(1) %rgpu.trap) {
entry:
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %ty = call i32 @llvm.amdgcn.workitem.id.y()
  %tz = call i32 @llvm.amdgcn.workitem.id.z()
  %bz = call i32 @llvm.amdgcn.workgroup.id.z()
  %t0 = add i32 %tx, %ty
  %t1 = add i32 %t0, %tz
  %t = add i32 %t1, %bz
  %ti = and i32 %t, 255
  %ix = zext i32 %ti to i64
  %p = getelementptr double, ptr addrspace(1) %x, i64 %ix
  %v = load double, ptr addrspace(1) %p
  %l = getelementptr double, ptr addrspace(3) @tile, i32 %ti
  store double %v, ptr addrspace(3) %l
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %n = xor i32 %ti, 1
  %l2 = getelementptr double, ptr addrspace(3) @tile, i32 %n
  %w = load double, ptr addrspace(3) %l2
  %m = call double @llvm.fma.f64(double %w, double %s, double %v)
  store double %m, ptr addrspace(1) %p
  ret void
}

define amdgpu_kernel void @second(ptr addrspace(1) %y, i64 %y.len, i8 %b, i16 %h, i64 %q, float %f, ptr addrspace(1) %rgpu.trap) {
entry:
  %imp = call ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
  %gp = getelementptr i8, ptr addrspace(4) %imp, i64 12
  %gs = load i16, ptr addrspace(4) %gp, align 4
  %g = zext i16 %gs to i64
  %b64 = zext i8 %b to i64
  %h64 = sext i16 %h to i64
  %s0 = add i64 %g, %b64
  %s1 = add i64 %s0, %h64
  %s2 = add i64 %s1, %q
  %fi = fptosi float %f to i64
  %s3 = add i64 %s2, %fi
  store i64 %s3, ptr addrspace(1) %y
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workitem.id.y()
declare i32 @llvm.amdgcn.workitem.id.z()
declare i32 @llvm.amdgcn.workgroup.id.z()
declare void @llvm.amdgcn.s.barrier()
declare double @llvm.fma.f64(double, double, double)
declare ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
