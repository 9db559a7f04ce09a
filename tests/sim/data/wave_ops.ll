; Wave intrinsics, one kernel each, all reading x = a[tid] and writing out[tid]
; (tests/sim/test_wave_kernels.py works the expected values by hand).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32 immarg, i32 immarg, i32 immarg, i1 immarg)
declare i32 @llvm.amdgcn.mov.dpp.i32(i32, i32 immarg, i32 immarg, i32 immarg, i1 immarg)
declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)
declare i32 @llvm.amdgcn.mbcnt.lo(i32, i32)
declare i32 @llvm.amdgcn.mbcnt.hi(i32, i32)
declare i32 @llvm.amdgcn.wave.reduce.umax.i32(i32, i32 immarg)
declare i32 @llvm.amdgcn.wave.reduce.umin.i32(i32, i32 immarg)
declare i32 @llvm.amdgcn.set.inactive.i32(i32, i32)
declare i32 @llvm.amdgcn.strict.wwm.i32(i32)
declare i32 @llvm.amdgcn.readlane.i32(i32, i32)
declare i32 @llvm.amdgcn.readfirstlane.i32(i32)

define internal ptr addrspace(1) @slot(ptr addrspace(1) %p, i32 %tid) alwaysinline {
  %g = zext i32 %tid to i64
  %q = getelementptr i32, ptr addrspace(1) %p, i64 %g
  ret ptr addrspace(1) %q
}

; out = update.dpp(old = 1000 + tid, x, row_shr:1, row_mask 0xf, bank_mask 0xf, bound_ctrl 0)
define amdgpu_kernel void @shr1(ptr addrspace(1) %a, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = call ptr addrspace(1) @slot(ptr addrspace(1) %a, i32 %tid)
  %x = load i32, ptr addrspace(1) %pa
  %old = add i32 %tid, 1000
  %r = call i32 @llvm.amdgcn.update.dpp.i32(i32 %old, i32 %x, i32 273, i32 15, i32 15, i1 false)
  %po = call ptr addrspace(1) @slot(ptr addrspace(1) %out, i32 %tid)
  store i32 %r, ptr addrspace(1) %po
  ret void
}

; out = mov.dpp(x, row_mirror, bound_ctrl 1) + x: the DPP combiner folds the add
define amdgpu_kernel void @mirror_add(ptr addrspace(1) %a, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = call ptr addrspace(1) @slot(ptr addrspace(1) %a, i32 %tid)
  %x = load i32, ptr addrspace(1) %pa
  %m = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %x, i32 320, i32 15, i32 15, i1 true)
  %r = add i32 %m, %x
  %po = call ptr addrspace(1) @slot(ptr addrspace(1) %out, i32 %tid)
  store i32 %r, ptr addrspace(1) %po
  ret void
}

; out = x of lane (tid + 3) mod wave (ds_bpermute with byte address 4 * (tid + 3))
define amdgpu_kernel void @bperm(ptr addrspace(1) %a, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = call ptr addrspace(1) @slot(ptr addrspace(1) %a, i32 %tid)
  %x = load i32, ptr addrspace(1) %pa
  %t3 = add i32 %tid, 3
  %addr = shl i32 %t3, 2
  %r = call i32 @llvm.amdgcn.ds.bpermute(i32 %addr, i32 %x)
  %po = call ptr addrspace(1) @slot(ptr addrspace(1) %out, i32 %tid)
  store i32 %r, ptr addrspace(1) %po
  ret void
}

; out = number of active lanes below this one whose x is odd (ballot + mbcnt)
define amdgpu_kernel void @count_below(ptr addrspace(1) %a, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = call ptr addrspace(1) @slot(ptr addrspace(1) %a, i32 %tid)
  %x = load i32, ptr addrspace(1) %pa
  %odd = trunc i32 %x to i1
  %b = call i64 @llvm.amdgcn.ballot.i64(i1 %odd)
  %lo = trunc i64 %b to i32
  %hi64 = lshr i64 %b, 32
  %hi = trunc i64 %hi64 to i32
  %c0 = call i32 @llvm.amdgcn.mbcnt.lo(i32 %lo, i32 0)
  %c = call i32 @llvm.amdgcn.mbcnt.hi(i32 %hi, i32 %c0)
  %po = call ptr addrspace(1) @slot(ptr addrspace(1) %out, i32 %tid)
  store i32 %c, ptr addrspace(1) %po
  ret void
}
declare i64 @llvm.amdgcn.ballot.i64(i1)

; out = umax over the wave's active lanes of x, DPP strategy (2) + umin, iterative (1)
define amdgpu_kernel void @reduce(ptr addrspace(1) %a, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = call ptr addrspace(1) @slot(ptr addrspace(1) %a, i32 %tid)
  %x = load i32, ptr addrspace(1) %pa
  %mx = call i32 @llvm.amdgcn.wave.reduce.umax.i32(i32 %x, i32 2)
  %mn = call i32 @llvm.amdgcn.wave.reduce.umin.i32(i32 %x, i32 1)
  %r = sub i32 %mx, %mn
  %po = call ptr addrspace(1) @slot(ptr addrspace(1) %out, i32 %tid)
  store i32 %r, ptr addrspace(1) %po
  ret void
}

; out = the wave's sum of x over active lanes, by set.inactive(x, 0) and a strict-WWM DPP
; scan read at the last lane (the shape of LLVM's own scans)
define amdgpu_kernel void @wwm_sum(ptr addrspace(1) %a, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = call ptr addrspace(1) @slot(ptr addrspace(1) %a, i32 %tid)
  %x = load i32, ptr addrspace(1) %pa
  %v = call i32 @llvm.amdgcn.set.inactive.i32(i32 %x, i32 0)
  %s1 = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %v, i32 273, i32 15, i32 15, i1 false)
  %v1 = add i32 %v, %s1
  %s2 = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %v1, i32 274, i32 15, i32 15, i1 false)
  %v2 = add i32 %v1, %s2
  %s3 = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %v2, i32 276, i32 15, i32 14, i1 false)
  %v3 = add i32 %v2, %s3
  %s4 = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %v3, i32 280, i32 15, i32 12, i1 false)
  %v4 = add i32 %v3, %s4
  %row = call i32 @llvm.amdgcn.strict.wwm.i32(i32 %v4)
  %r0 = call i32 @llvm.amdgcn.readlane.i32(i32 %row, i32 15)
  %r1 = call i32 @llvm.amdgcn.readlane.i32(i32 %row, i32 31)
  %s = add i32 %r0, %r1
  %po = call ptr addrspace(1) @slot(ptr addrspace(1) %out, i32 %tid)
  store i32 %s, ptr addrspace(1) %po
  ret void
}
