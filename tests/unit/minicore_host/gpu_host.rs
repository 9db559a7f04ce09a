// Test double of the minicore's amdgcn half (rgpu_fuzz/pipelines/rustc_amdgpu_core/
// gpu_amdgcn.rs) for the host CPU, so the target-neutral minicore can be checked against the
// real core without a GPU or simulator (tests/unit/test_rustc_amdgpu_minicore.py). Ids live
// in thread-locals the driver sets; `sync_threads` and a trap call back into the driver; the
// dynamic group segment is a buffer the driver allocates for each block.

pub mod gpu {
    #[thread_local]
    static mut IDS: [u32; 12] = [0; 12];
    static mut LDS: usize = 0;
    static mut BARRIER: usize = 0;
    static mut TRAPPED: usize = 0;

    /// Thread idx x, y, z, block idx x, y, z, block dim x, y, z, grid dim x, y, z.
    #[no_mangle]
    pub extern "C" fn rgpu_host_set_ids(ids: *const u32) {
        let mut i = 0usize;
        while i < 12 {
            unsafe { IDS[i] = *crate::intrinsics::offset(ids, i); }
            i = i + 1;
        }
    }
    #[no_mangle]
    pub extern "C" fn rgpu_host_set_hooks(barrier: usize, trapped: usize) {
        unsafe { BARRIER = barrier; TRAPPED = trapped; }
    }
    /// The current block's shared memory (the driver allocates it fresh for every block).
    #[no_mangle]
    pub extern "C" fn rgpu_host_set_lds(base: usize) {
        unsafe { LDS = base; }
    }
    #[inline(always)]
    pub fn dynamic_group_segment() -> *mut u8 { unsafe { LDS as *mut u8 } }
    pub(crate) fn trapped(words: *const u32) -> ! {
        unsafe {
            let f: extern "C" fn(*const u32) -> ! = crate::intrinsics::transmute(TRAPPED);
            f(words)
        }
    }
    #[inline(always)] fn id(i: usize) -> u32 { unsafe { IDS[i] } }
    #[inline(always)] pub fn thread_idx_x() -> u32 { id(0) }
    #[inline(always)] pub fn thread_idx_y() -> u32 { id(1) }
    #[inline(always)] pub fn thread_idx_z() -> u32 { id(2) }
    #[inline(always)] pub fn block_idx_x() -> u32 { id(3) }
    #[inline(always)] pub fn block_idx_y() -> u32 { id(4) }
    #[inline(always)] pub fn block_idx_z() -> u32 { id(5) }
    #[inline(always)] pub fn block_dim_x() -> u32 { id(6) }
    #[inline(always)] pub fn block_dim_y() -> u32 { id(7) }
    #[inline(always)] pub fn block_dim_z() -> u32 { id(8) }
    #[inline(always)] pub fn grid_dim_x() -> u32 { id(9) }
    #[inline(always)] pub fn grid_dim_y() -> u32 { id(10) }
    #[inline(always)] pub fn grid_dim_z() -> u32 { id(11) }
    pub fn sync_threads() {
        unsafe {
            let f: extern "C" fn() = crate::intrinsics::transmute(BARRIER);
            f()
        }
    }
}

pub mod trap {
    use crate::gpu;
    #[inline(never)] #[cold]
    pub fn raise(kind: u32, line: u32) -> ! {
        let words = [kind, line, gpu::block_idx_x(), gpu::block_idx_y(), gpu::block_idx_z(),
                     gpu::thread_idx_x(), gpu::thread_idx_y(), gpu::thread_idx_z()];
        gpu::trapped(&words as *const [u32; 8] as *const u32)
    }
}
