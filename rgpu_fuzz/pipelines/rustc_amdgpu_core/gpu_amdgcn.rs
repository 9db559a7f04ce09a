// The target half of the minicore for amdgcn-amd-amdhsa: the GPU functions and how a panic
// becomes a trap. Appended after minicore.rs (rgpu_fuzz.pipelines.rustc_amdgpu_program).

/// The trap record (8 little-endian u32 words, the first argument of every kernel):
/// kind (1 div-by-zero, 2 div-overflow, 3 out-of-bounds, 4 other panic; 0 none), program line
/// of the failing operation, block x, y, z, thread x, y, z.
pub mod trap {
    use crate::gpu;

    /// Records the trap and stops the wave. The record's address is the kernel's first
    /// argument, read back through the dispatch packet's `kernarg_address` (HSA
    /// `hsa_kernel_dispatch_packet_t`, offset 40), so a panic anywhere finds it. The words
    /// are stored one by one, without indexing: an indexed store has a bounds check whose
    /// panic calls this function, a cycle LLVM reports as recursion (`uses_dynamic_stack`)
    /// and sizes the private segment without this function's frame (at O0 the trap path
    /// then overran the kernel's fixed private segment).
    #[inline(always)]
    unsafe fn put(record: *mut u32, i: usize, v: u32) {
        crate::intrinsics::volatile_store(crate::intrinsics::offset(record, i), v)
    }
    #[inline(never)] #[cold]
    pub fn raise(kind: u32, line: u32) -> ! {
        unsafe {
            let packet = crate::intrinsics::amdgpu_dispatch_ptr() as *const u8;
            let kernargs = *(crate::intrinsics::offset(packet, 40usize) as *const *const *mut u32);
            let record = *kernargs;
            put(record, 0usize, kind);
            put(record, 1usize, line);
            put(record, 2usize, gpu::block_idx_x());
            put(record, 3usize, gpu::block_idx_y());
            put(record, 4usize, gpu::block_idx_z());
            put(record, 5usize, gpu::thread_idx_x());
            put(record, 6usize, gpu::thread_idx_y());
            put(record, 7usize, gpu::thread_idx_z());
            crate::intrinsics::abort()
        }
    }
}

/// The kernels' `rgpu` prelude on amdgcn. Ids come from the amdgcn intrinsics; block and grid
/// sizes from the HSA dispatch packet (`hsa_kernel_dispatch_packet_t`: workgroup_size_x/y/z
/// u16 at 4/6/8, grid_size_x/y/z u32 at 12/16/20; grid_size counts work-items).
pub mod gpu {
    use crate::intrinsics;
    extern "unadjusted" {
        #[link_name = "llvm.amdgcn.workitem.id.x"] fn workitem_id_x() -> u32;
        #[link_name = "llvm.amdgcn.workitem.id.y"] fn workitem_id_y() -> u32;
        #[link_name = "llvm.amdgcn.workitem.id.z"] fn workitem_id_z() -> u32;
        #[link_name = "llvm.amdgcn.workgroup.id.x"] fn workgroup_id_x() -> u32;
        #[link_name = "llvm.amdgcn.workgroup.id.y"] fn workgroup_id_y() -> u32;
        #[link_name = "llvm.amdgcn.workgroup.id.z"] fn workgroup_id_z() -> u32;
        #[link_name = "llvm.amdgcn.s.barrier"] fn s_barrier();
        #[link_name = "llvm.amdgcn.s.getreg"] fn s_getreg(hwreg: u32) -> u32;
        #[link_name = "llvm.amdgcn.groupstaticsize"] fn groupstaticsize() -> u32;
    }
    /// `hwreg(HW_REG_SH_MEM_BASES, 16, 16)`: id 15 | offset 16 << 6 | (size 16 - 1) << 11,
    /// the SHARED_BASE field, the high 16 bits of the shared (LDS) aperture.
    const HWREG_SH_MEM_BASES_SHARED: u32 = 31759;
    /// The flat address of the work-group's dynamically allocated group segment: the shared
    /// aperture (`SH_MEM_BASES.SHARED_BASE << 48`, as LLVM read it on GFX9 before it used
    /// `src_shared_base`) plus the kernel's static group segment size rounded up to 16 (where
    /// HIP's dynamic `extern __shared__` memory starts). The launch gives the dynamic size
    /// (the dispatch packet's group_segment_size = the code object's fixed size + it, as
    /// `hipModuleLaunchKernel`'s sharedMemBytes). rustc 1.95 has no other route to LDS: no
    /// static in address space 3, no `asm!` on amdgcn (E0472), and an intrinsic returning an
    /// `addrspace(3)`/`(4)` pointer declared with Rust's flat pointer fails instruction
    /// selection ("Cannot select: intrinsic").
    #[inline(always)]
    pub fn dynamic_group_segment() -> *mut u8 {
        unsafe {
            let aperture = (s_getreg(HWREG_SH_MEM_BASES_SHARED) as u64) << 48u64;
            let start = (groupstaticsize() + 15u32) & !15u32;
            (aperture | start as u64) as *mut u8
        }
    }
    #[inline(always)]
    fn packet_u16(offset: usize) -> u32 {
        unsafe {
            let p = intrinsics::amdgpu_dispatch_ptr() as *const u8;
            *(intrinsics::offset(p, offset) as *const u16) as u32
        }
    }
    #[inline(always)]
    fn packet_u32(offset: usize) -> u32 {
        unsafe {
            let p = intrinsics::amdgpu_dispatch_ptr() as *const u8;
            *(intrinsics::offset(p, offset) as *const u32)
        }
    }
    #[inline(always)]
    fn blocks(grid_size: u32, block: u32) -> u32 {
        unsafe { intrinsics::unchecked_div(grid_size + (block - 1), block) }
    }
    #[inline(always)] pub fn thread_idx_x() -> u32 { unsafe { workitem_id_x() } }
    #[inline(always)] pub fn thread_idx_y() -> u32 { unsafe { workitem_id_y() } }
    #[inline(always)] pub fn thread_idx_z() -> u32 { unsafe { workitem_id_z() } }
    #[inline(always)] pub fn block_idx_x() -> u32 { unsafe { workgroup_id_x() } }
    #[inline(always)] pub fn block_idx_y() -> u32 { unsafe { workgroup_id_y() } }
    #[inline(always)] pub fn block_idx_z() -> u32 { unsafe { workgroup_id_z() } }
    #[inline(always)] pub fn block_dim_x() -> u32 { packet_u16(4) }
    #[inline(always)] pub fn block_dim_y() -> u32 { packet_u16(6) }
    #[inline(always)] pub fn block_dim_z() -> u32 { packet_u16(8) }
    #[inline(always)] pub fn grid_dim_x() -> u32 { blocks(packet_u32(12), block_dim_x()) }
    #[inline(always)] pub fn grid_dim_y() -> u32 { blocks(packet_u32(16), block_dim_y()) }
    #[inline(always)] pub fn grid_dim_z() -> u32 { blocks(packet_u32(20), block_dim_z()) }
    /// A workgroup barrier between a release and an acquire fence (Rust's fences are
    /// system scope, stronger than the workgroup scope the language asks for).
    #[inline(always)]
    pub fn sync_threads() {
        unsafe {
            intrinsics::atomic_fence::<{ intrinsics::AtomicOrdering::Release }>();
            s_barrier();
            intrinsics::atomic_fence::<{ intrinsics::AtomicOrdering::Acquire }>();
        }
    }
}
