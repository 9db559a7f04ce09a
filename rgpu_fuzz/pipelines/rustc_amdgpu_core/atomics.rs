// ---------------------------------------------------------------- atomics
//
// core::sync::atomic's integer atomics, each method the intrinsic the real `core` 1.95
// calls (`atomic_load`, `atomic_store`, `atomic_xchg`, `atomic_xadd`, `atomic_xsub`,
// `atomic_and`, `atomic_or`, `atomic_xor`, `atomic_min`/`atomic_max` on signed and
// `atomic_umin`/`atomic_umax` on unsigned types, `atomic_cxchg`, `atomic_fence`), with the
// ordering a const generic (rustc 1.95's signatures, checked by compiling them no_core).
// The value lives in an `UnsafeCell`, which makes the atomic `!Freeze`: a `&AtomicU32` is
// then not `readonly noalias` for LLVM, exactly as in the real `core`.

#[lang = "unsafe_cell"]
#[repr(transparent)]
pub struct UnsafeCell<T: PointeeSized> { value: T }
impl<T: PointeeSized> !Freeze for UnsafeCell<T> {}

#[lang = "sync"]
pub unsafe auto trait Sync {}

pub enum Result<T, E> { Ok(T), Err(E) }
impl<T, E> Result<T, E> {
    #[inline(always)]
    pub fn is_ok(&self) -> bool { match self { Result::Ok(_) => true, Result::Err(_) => false } }
    #[inline(always)]
    pub fn is_err(&self) -> bool { match self { Result::Ok(_) => false, Result::Err(_) => true } }
}

pub mod atomic {
    use crate::intrinsics::{self, AtomicOrdering as AO};
    use crate::{Result, UnsafeCell};

    pub enum Ordering { Relaxed, Release, Acquire, AcqRel, SeqCst }
    impl crate::Copy for Ordering {}

    #[inline(always)]
    pub fn fence(order: Ordering) {
        unsafe {
            match order {
                Ordering::Relaxed => crate::trap::raise(0, 0),  // rejected by the checker
                Ordering::Release => intrinsics::atomic_fence::<{ AO::Release }>(),
                Ordering::Acquire => intrinsics::atomic_fence::<{ AO::Acquire }>(),
                Ordering::AcqRel => intrinsics::atomic_fence::<{ AO::AcqRel }>(),
                Ordering::SeqCst => intrinsics::atomic_fence::<{ AO::SeqCst }>(),
            }
        }
    }

    macro_rules! by_order {
        ($o:expr, |$ord:ident| $body:expr) => {
            match $o {
                Ordering::Relaxed => { const $ord: AO = AO::Relaxed; $body }
                Ordering::Release => { const $ord: AO = AO::Release; $body }
                Ordering::Acquire => { const $ord: AO = AO::Acquire; $body }
                Ordering::AcqRel => { const $ord: AO = AO::AcqRel; $body }
                Ordering::SeqCst => { const $ord: AO = AO::SeqCst; $body }
            }
        };
    }

    macro_rules! atomic {
        ($name:ident, $t:ty, $min:ident, $max:ident, $align:literal) => {
            #[repr(C, align($align))]
            pub struct $name { v: UnsafeCell<$t> }
            impl $name {
                #[inline(always)]
                pub const fn new(v: $t) -> $name { $name { v: UnsafeCell { value: v } } }
                #[inline(always)]
                fn p(&self) -> *mut $t { &self.v as *const UnsafeCell<$t> as *mut $t }
                #[inline(always)]
                pub fn load(&self, o: Ordering) -> $t {
                    unsafe {
                        match o {
                            Ordering::Relaxed => intrinsics::atomic_load::<$t, { AO::Relaxed }>(self.p()),
                            Ordering::Acquire => intrinsics::atomic_load::<$t, { AO::Acquire }>(self.p()),
                            _ => intrinsics::atomic_load::<$t, { AO::SeqCst }>(self.p()),
                        }
                    }
                }
                #[inline(always)]
                pub fn store(&self, v: $t, o: Ordering) {
                    unsafe {
                        match o {
                            Ordering::Relaxed => intrinsics::atomic_store::<$t, { AO::Relaxed }>(self.p(), v),
                            Ordering::Release => intrinsics::atomic_store::<$t, { AO::Release }>(self.p(), v),
                            _ => intrinsics::atomic_store::<$t, { AO::SeqCst }>(self.p(), v),
                        }
                    }
                }
                #[inline(always)]
                pub fn swap(&self, v: $t, o: Ordering) -> $t {
                    unsafe { by_order!(o, |ORD| intrinsics::atomic_xchg::<$t, ORD>(self.p(), v)) }
                }
                #[inline(always)]
                pub fn fetch_add(&self, v: $t, o: Ordering) -> $t {
                    unsafe { by_order!(o, |ORD| intrinsics::atomic_xadd::<$t, $t, ORD>(self.p(), v)) }
                }
                #[inline(always)]
                pub fn fetch_sub(&self, v: $t, o: Ordering) -> $t {
                    unsafe { by_order!(o, |ORD| intrinsics::atomic_xsub::<$t, $t, ORD>(self.p(), v)) }
                }
                #[inline(always)]
                pub fn fetch_and(&self, v: $t, o: Ordering) -> $t {
                    unsafe { by_order!(o, |ORD| intrinsics::atomic_and::<$t, $t, ORD>(self.p(), v)) }
                }
                #[inline(always)]
                pub fn fetch_or(&self, v: $t, o: Ordering) -> $t {
                    unsafe { by_order!(o, |ORD| intrinsics::atomic_or::<$t, $t, ORD>(self.p(), v)) }
                }
                #[inline(always)]
                pub fn fetch_xor(&self, v: $t, o: Ordering) -> $t {
                    unsafe { by_order!(o, |ORD| intrinsics::atomic_xor::<$t, $t, ORD>(self.p(), v)) }
                }
                #[inline(always)]
                pub fn fetch_min(&self, v: $t, o: Ordering) -> $t {
                    unsafe { by_order!(o, |ORD| intrinsics::$min::<$t, ORD>(self.p(), v)) }
                }
                #[inline(always)]
                pub fn fetch_max(&self, v: $t, o: Ordering) -> $t {
                    unsafe { by_order!(o, |ORD| intrinsics::$max::<$t, ORD>(self.p(), v)) }
                }
                #[inline(always)]
                pub fn compare_exchange(&self, current: $t, new: $t, success: Ordering,
                                        failure: Ordering) -> Result<$t, $t> {
                    let (old, ok) = unsafe {
                        match failure {
                            Ordering::Relaxed => by_order!(success, |S| intrinsics::atomic_cxchg::<$t, S, { AO::Relaxed }>(self.p(), current, new)),
                            Ordering::Acquire => by_order!(success, |S| intrinsics::atomic_cxchg::<$t, S, { AO::Acquire }>(self.p(), current, new)),
                            _ => by_order!(success, |S| intrinsics::atomic_cxchg::<$t, S, { AO::SeqCst }>(self.p(), current, new)),
                        }
                    };
                    if ok { Result::Ok(old) } else { Result::Err(old) }
                }
            }
        };
    }
    atomic!(AtomicU32, u32, atomic_umin, atomic_umax, 4);
    atomic!(AtomicI32, i32, atomic_min, atomic_max, 4);
    atomic!(AtomicU64, u64, atomic_umin, atomic_umax, 8);
    atomic!(AtomicI64, i64, atomic_min, atomic_max, 8);
}
