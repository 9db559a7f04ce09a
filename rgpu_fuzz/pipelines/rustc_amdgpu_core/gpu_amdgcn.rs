// The target half of the minicore for amdgcn-amd-amdhsa: the GPU functions and how a panic
// becomes a trap. Appended after minicore.rs (rgpu_fuzz.pipelines.rustc_amdgpu_program).

/// The trap record (8 little-endian u32 words, the first argument of every kernel):
/// kind (1 div-by-zero, 2 div-overflow, 3 out-of-bounds, 4 other panic, 5 a failed
/// `assert!` of `clamp`; 0 none), program line
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
    pub use crate::wave::{
        ballot, lane_id, read_first_lane, read_lane, shuffle, shuffle_down, shuffle_xor,
        wave_all, wave_and, wave_any, wave_max, wave_min, wave_or, wave_prefix_sum, wave_size,
        wave_sum, wave_xor,
    };
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

/// The prelude's wave functions on amdgcn (docs/language.md "Wave operations"), re-exported
/// through `gpu`. The intrinsics are declared as Rust's `core::arch::amdgpu` declares them
/// (`extern "unadjusted"` + `link_name`, same names and types), except where noted: the
/// `wave.reduce` family, which `core::arch::amdgpu` does not declare, and `readlane.i64`,
/// whose lane is an i32 in LLVM (`core::arch::amdgpu` gives it a u64). Reductions use
/// `llvm.amdgcn.wave.reduce.*` (strategy 0, the back end's choice) after widening 8/16-bit
/// values to 32 bits (sign-extended when signed); the scan is a Hillis–Steele ladder of
/// `ds_bpermute` reading lower lanes (active: a wave's inactive lanes are its last ones);
/// `shuffle_down` past the last active lane keeps its own value.
pub mod wave {
    use crate::intrinsics;
    extern "unadjusted" {
        #[link_name = "llvm.amdgcn.wavefrontsize"] fn wavefrontsize() -> u32;
        #[link_name = "llvm.amdgcn.mbcnt.lo"] fn mbcnt_lo(value: u32, init: u32) -> u32;
        #[link_name = "llvm.amdgcn.mbcnt.hi"] fn mbcnt_hi(value: u32, init: u32) -> u32;
        #[link_name = "llvm.amdgcn.ballot"] fn ballot_(b: bool) -> u64;
        #[link_name = "llvm.amdgcn.readfirstlane.i32"] fn readfirstlane_u32(value: u32) -> u32;
        #[link_name = "llvm.amdgcn.readfirstlane.i64"] fn readfirstlane_u64(value: u64) -> u64;
        #[link_name = "llvm.amdgcn.readlane.i32"] fn readlane_u32(value: u32, lane: u32) -> u32;
        #[link_name = "llvm.amdgcn.readlane.i64"] fn readlane_u64(value: u64, lane: u32) -> u64;
        #[link_name = "llvm.amdgcn.ds.bpermute"] fn ds_bpermute(lane: u32, value: u32) -> u32;
        // not in core::arch::amdgpu
        #[link_name = "llvm.amdgcn.wave.reduce.add.i32"] fn add32(v: u32, s: u32) -> u32;
        #[link_name = "llvm.amdgcn.wave.reduce.add.i64"] fn add64(v: u64, s: u32) -> u64;
        #[link_name = "llvm.amdgcn.wave.reduce.and.i32"] fn and32(v: u32, s: u32) -> u32;
        #[link_name = "llvm.amdgcn.wave.reduce.and.i64"] fn and64(v: u64, s: u32) -> u64;
        #[link_name = "llvm.amdgcn.wave.reduce.or.i32"] fn or32(v: u32, s: u32) -> u32;
        #[link_name = "llvm.amdgcn.wave.reduce.or.i64"] fn or64(v: u64, s: u32) -> u64;
        #[link_name = "llvm.amdgcn.wave.reduce.xor.i32"] fn xor32(v: u32, s: u32) -> u32;
        #[link_name = "llvm.amdgcn.wave.reduce.xor.i64"] fn xor64(v: u64, s: u32) -> u64;
        #[link_name = "llvm.amdgcn.wave.reduce.umin.i32"] fn umin32(v: u32, s: u32) -> u32;
        #[link_name = "llvm.amdgcn.wave.reduce.umin.i64"] fn umin64(v: u64, s: u32) -> u64;
        #[link_name = "llvm.amdgcn.wave.reduce.umax.i32"] fn umax32(v: u32, s: u32) -> u32;
        #[link_name = "llvm.amdgcn.wave.reduce.umax.i64"] fn umax64(v: u64, s: u32) -> u64;
        #[link_name = "llvm.amdgcn.wave.reduce.min.i32"] fn smin32(v: i32, s: u32) -> i32;
        #[link_name = "llvm.amdgcn.wave.reduce.min.i64"] fn smin64(v: i64, s: u32) -> i64;
        #[link_name = "llvm.amdgcn.wave.reduce.max.i32"] fn smax32(v: i32, s: u32) -> i32;
        #[link_name = "llvm.amdgcn.wave.reduce.max.i64"] fn smax64(v: i64, s: u32) -> i64;
    }

    /// A scalar as the bits a lane move carries: `to_u64` zero-extends unsigned values and
    /// bools, sign-extends signed ones, and takes a float's IEEE bits.
    pub trait WaveScalar: crate::Copy {
        const WIDE: bool;
        const SIGNED: bool;
        fn to_u64(self) -> u64;
        fn from_u64(v: u64) -> Self;
    }
    macro_rules! int_scalar {
        ($t:ty, $wide:literal, $signed:literal) => {
            impl WaveScalar for $t {
                const WIDE: bool = $wide;
                const SIGNED: bool = $signed;
                #[inline(always)] fn to_u64(self) -> u64 { self as u64 }
                #[inline(always)] fn from_u64(v: u64) -> $t { v as $t }
            }
        };
    }
    int_scalar!(u8, false, false);
    int_scalar!(u16, false, false);
    int_scalar!(u32, false, false);
    int_scalar!(u64, true, false);
    int_scalar!(i8, false, true);
    int_scalar!(i16, false, true);
    int_scalar!(i32, false, true);
    int_scalar!(i64, true, true);
    int_scalar!(usize, true, false);
    impl WaveScalar for bool {
        const WIDE: bool = false;
        const SIGNED: bool = false;
        #[inline(always)] fn to_u64(self) -> u64 { self as u64 }
        #[inline(always)] fn from_u64(v: u64) -> bool { (v & 1u64) != 0u64 }
    }
    impl WaveScalar for f32 {
        const WIDE: bool = false;
        const SIGNED: bool = false;
        #[inline(always)]
        fn to_u64(self) -> u64 { unsafe { intrinsics::transmute::<f32, u32>(self) as u64 } }
        #[inline(always)]
        fn from_u64(v: u64) -> f32 { unsafe { intrinsics::transmute::<u32, f32>(v as u32) } }
    }
    impl WaveScalar for f16 {
        const WIDE: bool = false;
        const SIGNED: bool = false;
        #[inline(always)]
        fn to_u64(self) -> u64 { unsafe { intrinsics::transmute::<f16, u16>(self) as u64 } }
        #[inline(always)]
        fn from_u64(v: u64) -> f16 { unsafe { intrinsics::transmute::<u16, f16>(v as u16) } }
    }
    impl WaveScalar for f64 {
        const WIDE: bool = true;
        const SIGNED: bool = false;
        #[inline(always)]
        fn to_u64(self) -> u64 { unsafe { intrinsics::transmute::<f64, u64>(self) } }
        #[inline(always)]
        fn from_u64(v: u64) -> f64 { unsafe { intrinsics::transmute::<u64, f64>(v) } }
    }

    #[inline(always)] pub fn wave_size() -> u32 { unsafe { wavefrontsize() } }
    #[inline(always)]
    pub fn lane_id() -> u32 {
        unsafe {
            let lo = mbcnt_lo(0xffff_ffffu32, 0u32);
            if wavefrontsize() == 32u32 { lo } else { mbcnt_hi(0xffff_ffffu32, lo) }
        }
    }
    #[inline(always)] pub fn ballot(c: bool) -> u64 { unsafe { ballot_(c) } }
    #[inline(always)]
    pub fn wave_all(c: bool) -> bool { unsafe { ballot_(c) == ballot_(true) } }
    #[inline(always)] pub fn wave_any(c: bool) -> bool { unsafe { ballot_(c) != 0u64 } }
    #[inline(always)]
    pub fn read_first_lane<T: WaveScalar>(x: T) -> T {
        unsafe {
            if T::WIDE { T::from_u64(readfirstlane_u64(x.to_u64())) }
            else { T::from_u64(readfirstlane_u32(x.to_u64() as u32) as u64) }
        }
    }
    #[inline(always)]
    pub fn read_lane<T: WaveScalar>(x: T, lane: u32) -> T {
        unsafe {
            if T::WIDE { T::from_u64(readlane_u64(x.to_u64(), lane)) }
            else { T::from_u64(readlane_u32(x.to_u64() as u32, lane) as u64) }
        }
    }
    /// Lane `src`'s `x` (`ds_bpermute`: byte address = lane × 4), one call per 32-bit word.
    #[inline(always)]
    fn bpermute<T: WaveScalar>(x: T, src: u32) -> T {
        unsafe {
            let v = x.to_u64();
            let addr = src.wrapping_shl(2u32);
            let lo = ds_bpermute(addr, v as u32) as u64;
            if T::WIDE {
                T::from_u64(lo | (ds_bpermute(addr, v.wrapping_shr(32u32) as u32) as u64)
                    .wrapping_shl(32u32))
            } else {
                T::from_u64(lo)
            }
        }
    }
    #[inline(always)]
    pub fn shuffle<T: WaveScalar>(x: T, src: u32) -> T {
        bpermute(x, src & (wave_size() - 1u32))
    }
    #[inline(always)]
    pub fn shuffle_xor<T: WaveScalar>(x: T, mask: u32) -> T {
        bpermute(x, (lane_id() ^ mask) & (wave_size() - 1u32))
    }
    #[inline(always)]
    pub fn shuffle_down<T: WaveScalar>(x: T, delta: u32) -> T {
        let lane = lane_id();
        let last = 63u32 - ballot(true).leading_zeros();
        bpermute(x, if delta <= last - lane { lane + delta } else { lane })
    }
    macro_rules! fold {
        ($name:ident, $f32:ident, $f64:ident) => {
            #[inline(always)]
            pub fn $name<T: WaveScalar>(x: T) -> T {
                unsafe {
                    let v = x.to_u64();
                    if T::WIDE { T::from_u64($f64(v, 0u32)) }
                    else { T::from_u64($f32(v as u32, 0u32) as u64) }
                }
            }
        };
    }
    macro_rules! order {
        ($name:ident, $u32:ident, $u64:ident, $i32:ident, $i64:ident) => {
            #[inline(always)]
            pub fn $name<T: WaveScalar>(x: T) -> T {
                unsafe {
                    let v = x.to_u64();
                    T::from_u64(if T::WIDE {
                        if T::SIGNED { $i64(v as i64, 0u32) as u64 } else { $u64(v, 0u32) }
                    } else if T::SIGNED {
                        $i32(v as u32 as i32, 0u32) as u32 as u64
                    } else {
                        $u32(v as u32, 0u32) as u64
                    })
                }
            }
        };
    }
    fold!(wave_sum, add32, add64);
    fold!(wave_and, and32, and64);
    fold!(wave_or, or32, or64);
    fold!(wave_xor, xor32, xor64);
    order!(wave_min, umin32, umin64, smin32, smin64);
    order!(wave_max, umax32, umax64, smax32, smax64);
    #[inline(always)]
    pub fn wave_prefix_sum<T: WaveScalar>(x: T) -> T {
        let lane = lane_id();
        let mut acc = x;
        let mut step = 1u32;
        while step < wave_size() {
            let below = bpermute(acc, lane.wrapping_sub(step));
            let sum = T::from_u64(acc.to_u64().wrapping_add(below.to_u64()));
            if lane >= step { acc = sum; }
            step = step * 2u32;
        }
        acc
    }
}
