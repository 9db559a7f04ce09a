; LDS with barriers: each lane stores, the workgroup synchronises, lanes read a neighbour,
; a tree reduction with barriers in a loop, and LDS atomics.
target triple = "amdgcn-amd-amdhsa"

@tile = internal addrspace(3) global [256 x i32] poison, align 4
@tile64 = internal addrspace(3) global [128 x double] poison, align 8

declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()

define amdgpu_kernel void @reduce(ptr addrspace(1) %out, ptr addrspace(1) %a) {
entry:
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr i32, ptr addrspace(1) %a, i32 %id
  %x = load i32, ptr addrspace(1) %pa
  %slot = getelementptr [256 x i32], ptr addrspace(3) @tile, i32 0, i32 %id
  store i32 %x, ptr addrspace(3) %slot
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  br label %loop
loop:
  %s = phi i32 [ 128, %entry ], [ %s1, %next ]
  %c = icmp ult i32 %id, %s
  br i1 %c, label %add, label %next
add:
  %o = add i32 %id, %s
  %po = getelementptr [256 x i32], ptr addrspace(3) @tile, i32 0, i32 %o
  %v1 = load i32, ptr addrspace(3) %po
  %v0 = load i32, ptr addrspace(3) %slot
  %sum = add i32 %v0, %v1
  store i32 %sum, ptr addrspace(3) %slot
  br label %next
next:
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %s1 = lshr i32 %s, 1
  %more = icmp ne i32 %s1, 0
  br i1 %more, label %loop, label %done
done:
  %first = getelementptr [256 x i32], ptr addrspace(3) @tile, i32 0, i32 0
  %r = load i32, ptr addrspace(3) %first
  %old = atomicrmw add ptr addrspace(3) %first, i32 1 syncscope("workgroup") monotonic
  %mx = atomicrmw max ptr addrspace(3) %slot, i32 %x syncscope("workgroup") monotonic
  %d = getelementptr [128 x double], ptr addrspace(3) @tile64, i32 0, i32 %id
  %fd = sitofp i32 %r to double
  store double %fd, ptr addrspace(3) %d
  %d2 = getelementptr [128 x double], ptr addrspace(3) @tile64, i32 0, i32 5
  %ld = load double, ptr addrspace(3) %d2
  %li = fptosi double %ld to i32
  %t = add i32 %r, %old
  %t2 = add i32 %t, %mx
  %t3 = add i32 %t2, %li
  %pout = getelementptr i32, ptr addrspace(1) %out, i32 %id
  store i32 %t3, ptr addrspace(1) %pout
  ret void
}
