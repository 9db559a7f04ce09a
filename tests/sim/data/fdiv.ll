; IEEE division and square root in binary32 and binary64 (LLVM expands them into
; v_div_scale / v_rcp / v_fma / v_div_fmas / v_div_fixup and scaled v_sqrt / v_rsq sequences).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare float @llvm.sqrt.f32(float)
declare double @llvm.sqrt.f64(double)

define amdgpu_kernel void @k(ptr addrspace(1) %x, ptr addrspace(1) %y, ptr addrspace(1) %dx,
                             ptr addrspace(1) %dy, ptr addrspace(1) %q, ptr addrspace(1) %s,
                             ptr addrspace(1) %dq, ptr addrspace(1) %ds) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %bid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %bid, 64
  %gid = add i32 %base, %tid
  %g = zext i32 %gid to i64
  %px = getelementptr float, ptr addrspace(1) %x, i64 %g
  %py = getelementptr float, ptr addrspace(1) %y, i64 %g
  %a = load float, ptr addrspace(1) %px
  %b = load float, ptr addrspace(1) %py
  %qq = fdiv float %a, %b
  %ss = call float @llvm.sqrt.f32(float %a)
  %pq = getelementptr float, ptr addrspace(1) %q, i64 %g
  store float %qq, ptr addrspace(1) %pq
  %ps = getelementptr float, ptr addrspace(1) %s, i64 %g
  store float %ss, ptr addrspace(1) %ps
  %pdx = getelementptr double, ptr addrspace(1) %dx, i64 %g
  %pdy = getelementptr double, ptr addrspace(1) %dy, i64 %g
  %c = load double, ptr addrspace(1) %pdx
  %d = load double, ptr addrspace(1) %pdy
  %dqq = fdiv double %c, %d
  %dss = call double @llvm.sqrt.f64(double %c)
  %pdq = getelementptr double, ptr addrspace(1) %dq, i64 %g
  store double %dqq, ptr addrspace(1) %pdq
  %pds = getelementptr double, ptr addrspace(1) %ds, i64 %g
  store double %dss, ptr addrspace(1) %pds
  ret void
}
