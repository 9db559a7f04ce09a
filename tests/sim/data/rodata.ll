; Constant tables in .rodata read by index, an exported table of pointers into .rodata (dynamic
; R_AMDGPU_RELATIVE64 relocations after ld.lld -shared) and a preemptible global reached
; through the GOT (R_AMDGPU_ABS64 against its dynamic symbol): what rustc's O0 code does with
; panic Locations and constant tables.
target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

@tbl = internal unnamed_addr addrspace(4) constant [8 x i32] [i32 3, i32 1, i32 4, i32 1, i32 5, i32 9, i32 2, i32 6]
@s0 = internal addrspace(4) constant [4 x i32] [i32 10, i32 20, i32 30, i32 40]
@s1 = internal addrspace(4) constant [4 x i32] [i32 50, i32 60, i32 70, i32 80]
@ptrs = addrspace(4) constant [2 x ptr addrspace(4)] [ptr addrspace(4) @s0, ptr addrspace(4) @s1]
@gvar = addrspace(1) global i32 7

declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @k(ptr addrspace(1) %out, i32 %sel) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %i = and i32 %tid, 7
  %pa = getelementptr [8 x i32], ptr addrspace(4) @tbl, i32 0, i32 %i
  %a = load i32, ptr addrspace(4) %pa
  %j0 = lshr i32 %tid, 3
  %j = and i32 %j0, 1
  %pp = getelementptr [2 x ptr addrspace(4)], ptr addrspace(4) @ptrs, i32 0, i32 %j
  %p = load ptr addrspace(4), ptr addrspace(4) %pp
  %m = and i32 %tid, 3
  %pb = getelementptr i32, ptr addrspace(4) %p, i32 %m
  %b = load i32, ptr addrspace(4) %pb
  %c = load i32, ptr addrspace(1) @gvar
  %b100 = mul i32 %b, 100
  %c1 = mul i32 %c, 10000
  %s1 = add i32 %a, %b100
  %s2 = add i32 %s1, %c1
  %s3 = add i32 %s2, %sel
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %s3, ptr addrspace(1) %po
  ret void
}

; tbl[idx] for a by-value index: in range it reads .rodata, far out of range it leaves every
; segment of the code object (sim-oob-access).
define amdgpu_kernel void @k_idx(ptr addrspace(1) %out, i64 %idx) {
  %pa = getelementptr i32, ptr addrspace(4) @tbl, i64 %idx
  %a = load i32, ptr addrspace(4) %pa
  store i32 %a, ptr addrspace(1) %out
  ret void
}
