; At gfx1100 -O0 LLVM 22.1 aborts emitting this kernel's object (trap-gfx1100-O0 in
; tests/unit/test_codeobj.py): llvm/llvm-project#208912, an unexpanded V_ADD_U64_PSEUDO in
; the block after llvm.trap; reduced in docs/llvm-bugs/simulated_trap_skips_pseudo_expansion.ll.
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @trap(ptr addrspace(1) %a, i64 %a.len, i32 %d, ptr addrspace(1) %rgpu.trap) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %z = icmp eq i32 %d, 0
  br i1 %z, label %fail, label %ok
fail:
  store i32 1, ptr addrspace(1) %rgpu.trap
  %t1 = getelementptr i32, ptr addrspace(1) %rgpu.trap, i64 1
  store i32 %tid, ptr addrspace(1) %t1
  call void @llvm.trap()
  unreachable
ok:
  %q = udiv i32 %tid, %d
  %ix = zext i32 %tid to i64
  %p = getelementptr i32, ptr addrspace(1) %a, i64 %ix
  store i32 %q, ptr addrspace(1) %p
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.trap()
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
