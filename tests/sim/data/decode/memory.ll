; Global memory of every width, flat (generic) pointers, global atomics, uniform loads.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @mem(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr %flat, i32 %n) {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %p8 = getelementptr i8, ptr addrspace(1) %a, i32 %id
  %b = load i8, ptr addrspace(1) %p8
  %p16 = getelementptr i16, ptr addrspace(1) %a, i32 %id
  %h = load i16, ptr addrspace(1) %p16
  %p128 = getelementptr <4 x i32>, ptr addrspace(1) %a, i32 %id
  %v = load <4 x i32>, ptr addrspace(1) %p128
  %p96 = getelementptr <3 x i32>, ptr addrspace(1) %a, i32 %n
  %w = load <3 x i32>, ptr addrspace(1) %p96
  %pf = getelementptr i32, ptr %flat, i32 %id
  %f = load i32, ptr %pf
  %e0 = extractelement <4 x i32> %v, i32 0
  %e3 = extractelement <4 x i32> %v, i32 3
  %w1 = extractelement <3 x i32> %w, i32 1
  %bz = sext i8 %b to i32
  %hz = zext i16 %h to i32
  %s1 = add i32 %e0, %e3
  %s2 = add i32 %s1, %w1
  %s3 = add i32 %s2, %bz
  %s4 = add i32 %s3, %hz
  %s5 = add i32 %s4, %f
  %old = atomicrmw add ptr addrspace(1) %out, i32 %s5 syncscope("agent") seq_cst
  %x = atomicrmw xchg ptr addrspace(1) %a, i32 %id syncscope("agent") monotonic
  %cx = cmpxchg ptr addrspace(1) %a, i32 %x, i32 %old syncscope("agent") acq_rel monotonic
  %cv = extractvalue { i32, i1 } %cx, 0
  %fo = atomicrmw add ptr %pf, i32 1 syncscope("agent") monotonic
  store i32 %fo, ptr %pf
  %po = getelementptr <4 x i32>, ptr addrspace(1) %out, i32 %id
  %v2 = insertelement <4 x i32> %v, i32 %cv, i32 2
  store <4 x i32> %v2, ptr addrspace(1) %po
  %po8 = getelementptr i8, ptr addrspace(1) %out, i32 %n
  %t8 = trunc i32 %s5 to i8
  store i8 %t8, ptr addrspace(1) %po8
  %po16 = getelementptr i16, ptr addrspace(1) %out, i32 %s5
  %t16 = trunc i32 %s5 to i16
  store i16 %t16, ptr addrspace(1) %po16, align 2
  %po64 = getelementptr i64, ptr addrspace(1) %out, i32 7
  %z = zext i32 %s5 to i64
  store i64 %z, ptr addrspace(1) %po64
  ret void
}
