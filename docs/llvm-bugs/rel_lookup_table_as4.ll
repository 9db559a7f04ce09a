; LLVM 22.1.8: RelLookupTableConverterPass builds llvm.load.relative on the p0 overload for a
; constant table of addrspace(4) pointers: 'Call parameter type does not match function
; signature', module broken (opt aborts; llvmlite's assertions build asserts).
;   opt -passes=rel-lookup-table-converter -S rel_lookup_table_as4.ll
target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

@s0 = internal addrspace(4) constant i32 10
@s1 = internal addrspace(4) constant i32 50
@ptrs = internal addrspace(4) constant [2 x ptr addrspace(4)] [ptr addrspace(4) @s0, ptr addrspace(4) @s1]

define i32 @f(i32 %j) {
  %c = icmp ult i32 %j, 2
  br i1 %c, label %in, label %out
in:
  %pp = getelementptr [2 x ptr addrspace(4)], ptr addrspace(4) @ptrs, i32 0, i32 %j
  %p = load ptr addrspace(4), ptr addrspace(4) %pp
  %b = load i32, ptr addrspace(4) %p
  ret i32 %b
out:
  ret i32 0
}
