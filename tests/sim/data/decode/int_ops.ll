; Integer arithmetic of every width: add/sub/mul, signed and unsigned div/rem, shifts,
; bitwise ops, min/max, compares and selects, on i8, i16, i32 and i64 lanes.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.smin.i32(i32, i32)
declare i64 @llvm.umax.i64(i64, i64)
declare i16 @llvm.smax.i16(i16, i16)
declare i32 @llvm.ctpop.i32(i32)
declare i64 @llvm.ctlz.i64(i64, i1)
declare i32 @llvm.cttz.i32(i32, i1)
declare i32 @llvm.bitreverse.i32(i32)
declare i64 @llvm.bswap.i64(i64)

define amdgpu_kernel void @int32(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b) {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr i32, ptr addrspace(1) %a, i32 %id
  %pb = getelementptr i32, ptr addrspace(1) %b, i32 %id
  %x = load i32, ptr addrspace(1) %pa
  %y = load i32, ptr addrspace(1) %pb
  %y1 = or i32 %y, 1
  %s = add i32 %x, %y
  %d = sub i32 %x, %y
  %m = mul i32 %x, %y
  %q = sdiv i32 %x, %y1
  %r = srem i32 %x, %y1
  %uq = udiv i32 %x, %y1
  %ur = urem i32 %x, %y1
  %sh = and i32 %y, 31
  %l = shl i32 %x, %sh
  %ar = ashr i32 %x, %sh
  %lr = lshr i32 %x, %sh
  %an = and i32 %x, %y
  %o = or i32 %x, 12345
  %xo = xor i32 %x, -7
  %mn = call i32 @llvm.smin.i32(i32 %x, i32 %y)
  %pc = call i32 @llvm.ctpop.i32(i32 %x)
  %tz = call i32 @llvm.cttz.i32(i32 %x, i1 false)
  %br = call i32 @llvm.bitreverse.i32(i32 %y)
  %c = icmp ult i32 %x, %y
  %sel = select i1 %c, i32 %s, i32 %d
  %t1 = add i32 %m, %q
  %t2 = add i32 %t1, %r
  %t3 = xor i32 %t2, %uq
  %t4 = add i32 %t3, %ur
  %t5 = add i32 %t4, %l
  %t6 = xor i32 %t5, %ar
  %t7 = add i32 %t6, %lr
  %t8 = sub i32 %t7, %an
  %t9 = add i32 %t8, %o
  %t10 = add i32 %t9, %xo
  %t11 = add i32 %t10, %mn
  %t12 = add i32 %t11, %sel
  %t13 = add i32 %t12, %pc
  %t14 = xor i32 %t13, %tz
  %t15 = add i32 %t14, %br
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %id
  store i32 %t15, ptr addrspace(1) %po
  ret void
}

define amdgpu_kernel void @int64(ptr addrspace(1) %out, ptr addrspace(1) %a, i64 %k) {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr i64, ptr addrspace(1) %a, i32 %id
  %x = load i64, ptr addrspace(1) %pa
  %k1 = or i64 %k, 1
  %s = add i64 %x, %k
  %m = mul i64 %x, %s
  %q = sdiv i64 %m, %k1
  %r = urem i64 %x, %k1
  %sh = and i64 %x, 63
  %l = shl i64 %s, %sh
  %ar = ashr i64 %m, %sh
  %lr = lshr i64 %q, 7
  %mx = call i64 @llvm.umax.i64(i64 %l, i64 %ar)
  %lz = call i64 @llvm.ctlz.i64(i64 %x, i1 false)
  %bs = call i64 @llvm.bswap.i64(i64 %r)
  %t1 = xor i64 %mx, %lr
  %t2 = add i64 %t1, %lz
  %t3 = sub i64 %t2, %bs
  %t4 = add i64 %t3, 81985529216486895
  %po = getelementptr i64, ptr addrspace(1) %out, i32 %id
  store i64 %t4, ptr addrspace(1) %po
  ret void
}

define amdgpu_kernel void @int_narrow(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b) {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr i8, ptr addrspace(1) %a, i32 %id
  %pb = getelementptr i16, ptr addrspace(1) %b, i32 %id
  %x = load i8, ptr addrspace(1) %pa
  %y = load i16, ptr addrspace(1) %pb
  %x16 = sext i8 %x to i16
  %s = add i16 %x16, %y
  %m = mul i16 %s, %y
  %y1 = or i16 %y, 1
  %q = sdiv i16 %m, %y1
  %r = urem i16 %m, %y1
  %sh = and i16 %y, 15
  %l = shl i16 %q, %sh
  %ar = ashr i16 %r, 3
  %mx = call i16 @llvm.smax.i16(i16 %l, i16 %ar)
  %x8 = trunc i16 %mx to i8
  %d8 = udiv i8 %x8, 3
  %e8 = mul i8 %d8, %x
  %z = zext i8 %e8 to i32
  %w = sext i16 %mx to i32
  %t = add i32 %z, %w
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %id
  store i32 %t, ptr addrspace(1) %po
  %po8 = getelementptr i8, ptr addrspace(1) %out, i32 %t
  store i8 %e8, ptr addrspace(1) %po8
  %po16 = getelementptr i16, ptr addrspace(1) %out, i32 %z
  store i16 %mx, ptr addrspace(1) %po16
  ret void
}
