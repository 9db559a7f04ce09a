; gfx950's permlane swaps, one kernel each: d = a[tid] (the VDST operand), s = d + 5000
; (SRC0), out[2 tid] = the swap's new VDST, out[2 tid + 1] its new SRC0; a lane that does not
; run the swap writes 7777 to both (tests/sim/test_permlane_swap.py works the values by hand).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare {i32, i32} @llvm.amdgcn.permlane16.swap(i32, i32, i1 immarg, i1 immarg)
declare {i32, i32} @llvm.amdgcn.permlane32.swap(i32, i32, i1 immarg, i1 immarg)

define internal void @put(ptr addrspace(1) %out, i32 %tid, {i32, i32} %r) alwaysinline {
  %g = zext i32 %tid to i64
  %i = shl i64 %g, 1
  %p = getelementptr i32, ptr addrspace(1) %out, i64 %i
  %r0 = extractvalue {i32, i32} %r, 0
  %r1 = extractvalue {i32, i32} %r, 1
  store i32 %r0, ptr addrspace(1) %p
  %q = getelementptr i32, ptr addrspace(1) %p, i64 1
  store i32 %r1, ptr addrspace(1) %q
  ret void
}

define internal i32 @load(ptr addrspace(1) %a, i32 %tid) alwaysinline {
  %g = zext i32 %tid to i64
  %p = getelementptr i32, ptr addrspace(1) %a, i64 %g
  %x = load i32, ptr addrspace(1) %p
  ret i32 %x
}

; permlane16.swap(d, s, fi 0, bound_ctrl 0): v_permlane16_swap_b32_e32
define amdgpu_kernel void @swap16(ptr addrspace(1) %a, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %d = call i32 @load(ptr addrspace(1) %a, i32 %tid)
  %s = add i32 %d, 5000
  %r = call {i32, i32} @llvm.amdgcn.permlane16.swap(i32 %d, i32 %s, i1 false, i1 false)
  call void @put(ptr addrspace(1) %out, i32 %tid, {i32, i32} %r)
  ret void
}

; permlane16.swap(d, s, fi 1, bound_ctrl 0): v_permlane16_swap_b32_e64 ... fi:1
define amdgpu_kernel void @swap16_fi(ptr addrspace(1) %a, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %d = call i32 @load(ptr addrspace(1) %a, i32 %tid)
  %s = add i32 %d, 5000
  %r = call {i32, i32} @llvm.amdgcn.permlane16.swap(i32 %d, i32 %s, i1 true, i1 false)
  call void @put(ptr addrspace(1) %out, i32 %tid, {i32, i32} %r)
  ret void
}

; permlane32.swap(d, s, fi 0, bound_ctrl 0): v_permlane32_swap_b32_e32
define amdgpu_kernel void @swap32(ptr addrspace(1) %a, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %d = call i32 @load(ptr addrspace(1) %a, i32 %tid)
  %s = add i32 %d, 5000
  %r = call {i32, i32} @llvm.amdgcn.permlane32.swap(i32 %d, i32 %s, i1 false, i1 false)
  call void @put(ptr addrspace(1) %out, i32 %tid, {i32, i32} %r)
  ret void
}

; permlane32.swap(d, s, fi 0, bound_ctrl 1): v_permlane32_swap_b32_e64 ... bound_ctrl:1
define amdgpu_kernel void @swap32_bc(ptr addrspace(1) %a, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %d = call i32 @load(ptr addrspace(1) %a, i32 %tid)
  %s = add i32 %d, 5000
  %r = call {i32, i32} @llvm.amdgcn.permlane32.swap(i32 %d, i32 %s, i1 false, i1 true)
  call void @put(ptr addrspace(1) %out, i32 %tid, {i32, i32} %r)
  ret void
}

; the swaps under divergent control flow: only lanes with tid % 3 != 0 run them (EXEC
; narrowed by s_and_saveexec); the others write 7777
define amdgpu_kernel void @swap16_some(ptr addrspace(1) %a, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %m = urem i32 %tid, 3
  %on = icmp ne i32 %m, 0
  br i1 %on, label %then, label %else
then:
  %d = call i32 @load(ptr addrspace(1) %a, i32 %tid)
  %s = add i32 %d, 5000
  %r = call {i32, i32} @llvm.amdgcn.permlane16.swap(i32 %d, i32 %s, i1 false, i1 false)
  br label %done
else:
  br label %done
done:
  %v = phi {i32, i32} [ %r, %then ], [ {i32 7777, i32 7777}, %else ]
  call void @put(ptr addrspace(1) %out, i32 %tid, {i32, i32} %v)
  ret void
}

define amdgpu_kernel void @swap32_some_bc(ptr addrspace(1) %a, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %m = urem i32 %tid, 3
  %on = icmp ne i32 %m, 0
  br i1 %on, label %then, label %else
then:
  %d = call i32 @load(ptr addrspace(1) %a, i32 %tid)
  %s = add i32 %d, 5000
  %r = call {i32, i32} @llvm.amdgcn.permlane32.swap(i32 %d, i32 %s, i1 false, i1 true)
  br label %done
else:
  br label %done
done:
  %v = phi {i32, i32} [ %r, %then ], [ {i32 7777, i32 7777}, %else ]
  call void @put(ptr addrspace(1) %out, i32 %tid, {i32, i32} %v)
  ret void
}
