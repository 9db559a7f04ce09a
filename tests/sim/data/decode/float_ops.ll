; f32 and f64 arithmetic: fma, sqrt, min/max, division, conversions (incl. saturating),
; rounding, compares; f16 too.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare float @llvm.fma.f32(float, float, float)
declare double @llvm.fma.f64(double, double, double)
declare float @llvm.sqrt.f32(float)
declare double @llvm.sqrt.f64(double)
declare float @llvm.minnum.f32(float, float)
declare double @llvm.maxnum.f64(double, double)
declare float @llvm.floor.f32(float)
declare double @llvm.trunc.f64(double)
declare float @llvm.fabs.f32(float)
declare i32 @llvm.fptosi.sat.i32.f32(float)
declare i64 @llvm.fptoui.sat.i64.f64(double)
declare half @llvm.fma.f16(half, half, half)
declare float @llvm.exp2.f32(float)
declare float @llvm.log2.f32(float)

define amdgpu_kernel void @f32(ptr addrspace(1) %out, ptr addrspace(1) %a, float %k) {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr float, ptr addrspace(1) %a, i32 %id
  %x = load float, ptr addrspace(1) %pa
  %s = fadd float %x, %k
  %m = fmul float %s, 0.5
  %f = call float @llvm.fma.f32(float %m, float %x, float 1.0)
  %q = fdiv float %f, %x
  %r = call float @llvm.sqrt.f32(float %q)
  %mn = call float @llvm.minnum.f32(float %r, float %k)
  %fl = call float @llvm.floor.f32(float %mn)
  %ab = call float @llvm.fabs.f32(float %fl)
  %ng = fneg float %ab
  %e = call float @llvm.exp2.f32(float %ng)
  %lg = call float @llvm.log2.f32(float %e)
  %c = fcmp olt float %lg, 3.0e+00
  %sel = select i1 %c, float %lg, float 0x3FC45F3060000000
  %i = fptosi float %sel to i32
  %is = call i32 @llvm.fptosi.sat.i32.f32(float %q)
  %u = uitofp i32 %is to float
  %t = fadd float %u, 1.234500e+04
  %ti = bitcast float %t to i32
  %o = add i32 %ti, %i
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %id
  store i32 %o, ptr addrspace(1) %po
  ret void
}

define amdgpu_kernel void @f64(ptr addrspace(1) %out, ptr addrspace(1) %a, double %k) {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr double, ptr addrspace(1) %a, i32 %id
  %x = load double, ptr addrspace(1) %pa
  %s = fsub double %x, %k
  %m = fmul double %s, 4.0
  %f = call double @llvm.fma.f64(double %m, double %x, double -2.0)
  %q = fdiv double %f, %x
  %r = call double @llvm.sqrt.f64(double %q)
  %mx = call double @llvm.maxnum.f64(double %r, double %k)
  %tr = call double @llvm.trunc.f64(double %mx)
  %c = fcmp ugt double %tr, 1.0e+10
  %sel = select i1 %c, double %tr, double 0.1
  %i = fptosi double %sel to i64
  %us = call i64 @llvm.fptoui.sat.i64.f64(double %q)
  %fs = fptrunc double %sel to float
  %fe = fpext float %fs to double
  %ad = fadd double %fe, 0x400921FB54442D18
  %ai = bitcast double %ad to i64
  %t = add i64 %ai, %i
  %t2 = xor i64 %t, %us
  %po = getelementptr i64, ptr addrspace(1) %out, i32 %id
  store i64 %t2, ptr addrspace(1) %po
  %ii = sitofp i32 %id to double
  %ui = uitofp i64 %t to double
  %sum = fadd double %ii, %ui
  %pd = getelementptr double, ptr addrspace(1) %a, i32 %id
  store double %sum, ptr addrspace(1) %pd
  ret void
}

define amdgpu_kernel void @f16(ptr addrspace(1) %out, ptr addrspace(1) %a) {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr half, ptr addrspace(1) %a, i32 %id
  %x = load half, ptr addrspace(1) %pa
  %m = fmul half %x, 0xH3C00
  %f = call half @llvm.fma.f16(half %m, half %x, half 0xH4000)
  %s = fadd half %f, 0xH5640
  %c = fcmp olt half %s, %x
  %sel = select i1 %c, half %s, half %x
  %w = fpext half %sel to float
  %po = getelementptr float, ptr addrspace(1) %out, i32 %id
  store float %w, ptr addrspace(1) %po
  ret void
}
