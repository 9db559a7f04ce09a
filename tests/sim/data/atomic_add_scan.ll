; out[tid] = atomicrmw add (agent, monotonic) of 3 * tid on cnt[0]: with the atomic
; optimizer's DPP strategy, one atomic per wave of the wave's sum and each lane's old value
; from an exclusive DPP scan (tests/sim/test_wave_kernels.py).
target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @k(ptr addrspace(1) %cnt, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %v = mul i32 %tid, 3
  %old = atomicrmw add ptr addrspace(1) %cnt, i32 %v syncscope("agent") monotonic
  %g = zext i32 %tid to i64
  %po = getelementptr i32, ptr addrspace(1) %out, i64 %g
  store i32 %old, ptr addrspace(1) %po
  ret void
}
