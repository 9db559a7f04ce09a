; A recursive device function: LLVM cannot bound the stack (`.uses_dynamic_stack`), so
; private_segment_fixed_size covers the kernel and one frame of @rec only; the runtime
; gives such a launch more scratch (sim loader's private_segment_size).
; out[0] = rec(n) = n + (n - 1) + ... + 1, each frame keeping its term in a volatile slot.
target triple = "amdgcn-amd-amdhsa"

define internal i32 @rec(i32 %n) noinline {
entry:
  %slot = alloca [4 x i32], align 4, addrspace(5)
  %z = icmp eq i32 %n, 0
  br i1 %z, label %done, label %more
more:
  %i = and i32 %n, 3
  %p = getelementptr [4 x i32], ptr addrspace(5) %slot, i32 0, i32 %i
  store volatile i32 %n, ptr addrspace(5) %p
  %m = sub i32 %n, 1
  %r = call i32 @rec(i32 %m)
  %v = load volatile i32, ptr addrspace(5) %p
  %s = add i32 %v, %r
  ret i32 %s
done:
  ret i32 0
}

define amdgpu_kernel void @k(ptr addrspace(1) %out, i32 %n) {
  %r = call i32 @rec(i32 %n)
  store i32 %r, ptr addrspace(1) %out
  ret void
}
