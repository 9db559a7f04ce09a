; Divergent control flow: if/else on lane values, a loop with a lane-dependent trip count,
; a uniform loop, and a switch.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()

define amdgpu_kernel void @divergent(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) {
entry:
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %g0 = mul i32 %wg, 256
  %g = add i32 %g0, %id
  %pa = getelementptr i32, ptr addrspace(1) %a, i32 %g
  %x = load i32, ptr addrspace(1) %pa
  %odd = and i32 %x, 1
  %c = icmp eq i32 %odd, 0
  br i1 %c, label %then, label %else
then:
  %t = mul i32 %x, 3
  br label %loop
else:
  %e = sub i32 0, %x
  br label %loop
loop:
  %i = phi i32 [ 0, %then ], [ 0, %else ], [ %i1, %loop ]
  %acc = phi i32 [ %t, %then ], [ %e, %else ], [ %acc1, %loop ]
  %acc1 = add i32 %acc, %i
  %i1 = add i32 %i, 1
  %lim = and i32 %x, 15
  %more = icmp ult i32 %i1, %lim
  br i1 %more, label %loop, label %uniform
uniform:
  %j = phi i32 [ 0, %loop ], [ %j1, %uniform ]
  %acc2 = phi i32 [ %acc1, %loop ], [ %acc3, %uniform ]
  %acc3 = xor i32 %acc2, %j
  %j1 = add i32 %j, 1
  %umore = icmp slt i32 %j1, %n
  br i1 %umore, label %uniform, label %sw
sw:
  %k = urem i32 %acc3, 4
  switch i32 %k, label %d [ i32 0, label %s0
                            i32 1, label %s1
                            i32 2, label %s2 ]
s0:
  br label %done
s1:
  br label %done
s2:
  br label %done
d:
  br label %done
done:
  %v = phi i32 [ 10, %s0 ], [ %acc3, %s1 ], [ %x, %s2 ], [ -1, %d ]
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %g
  store i32 %v, ptr addrspace(1) %po
  ret void
}
