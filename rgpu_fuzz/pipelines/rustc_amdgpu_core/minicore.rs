// The minimal core every rustc-amdgpu program starts with (rgpu_fuzz.pipelines.rustc_amdgpu).
//
// rust-src is not available, so the kernels' `core` is written here: the lang items that the
// printed kernels need, with Rust's release semantics. Arithmetic, comparisons, casts,
// indexing and the checks of `/`, `%` and `[]` are the compiler's own (rustc lowers operators
// on primitives itself and only asks that the trait impls exist); what this file defines are
// the library methods, each through the same intrinsic the real `core` 1.95 calls, the
// iterator protocol of `for`, the GPU functions and the panic entry points.
//
// Panics: every panic lang item passes its kind (`trap_kind`) and the caller's line
// (`#[track_caller]`) to `trap::raise`, which the target half (gpu_amdgcn.rs, appended after
// this file with the `gpu` module of GPU functions) defines.

#![feature(no_core, lang_items, intrinsics, rustc_attrs, abi_gpu_kernel, link_llvm_intrinsics)]
#![feature(f16, abi_unadjusted, adt_const_params, auto_traits, negative_impls, thread_local, freeze_impls)]
#![no_core]
#![rustc_coherence_is_core]
#![allow(internal_features, incomplete_features, improper_ctypes, improper_ctypes_definitions)]
#![allow(warnings, arithmetic_overflow, unconditional_panic, static_mut_refs)]

// ---------------------------------------------------------------- marker traits

#[lang = "pointee_sized"]
pub trait PointeeSized {}
#[lang = "meta_sized"]
pub trait MetaSized: PointeeSized {}
#[lang = "sized"]
pub trait Sized: MetaSized {}
#[lang = "copy"]
pub trait Copy: Sized {}
#[lang = "legacy_receiver"]
pub trait LegacyReceiver {}
impl<T: PointeeSized> LegacyReceiver for &T {}
impl<T: PointeeSized> LegacyReceiver for &mut T {}
#[lang = "const_param_ty"]
pub trait ConstParamTy_ {}
#[lang = "destruct"]
pub trait Destruct: PointeeSized {}
#[lang = "freeze"]
pub unsafe auto trait Freeze {}
#[lang = "structural_peq"]
pub trait StructuralPartialEq {}
/// Drop glue: every type the kernels use is `Copy`, so there is nothing to drop.
#[lang = "drop_in_place"]
pub unsafe fn drop_in_place<T: PointeeSized>(_to_drop: *mut T) {}
#[lang = "phantom_data"]
pub struct PhantomData<T: PointeeSized>;
impl<T: PointeeSized> Copy for PhantomData<T> {}

macro_rules! each {
    ($m:ident: $($t:ty),*) => { $( $m!($t); )* };
}
macro_rules! copy { ($t:ty) => { impl Copy for $t {} }; }
macro_rules! const_param { ($t:ty) => { impl ConstParamTy_ for $t {} }; }
each!(const_param: bool, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);
each!(copy: bool, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f16, f32, f64);
impl<'a, T: PointeeSized> Copy for &'a T {}
impl<T: PointeeSized> Copy for *const T {}
impl<T: PointeeSized> Copy for *mut T {}
impl<T: Copy, const N: usize> Copy for [T; N] {}

// ---------------------------------------------------------------- intrinsics (as core 1.95)

pub mod intrinsics {
    use crate::{Copy, PointeeSized, Sized};
    #[rustc_intrinsic] pub const unsafe fn transmute<Src, Dst>(src: Src) -> Dst;
    #[rustc_intrinsic] pub fn abort() -> !;
    #[rustc_intrinsic] pub const fn caller_location() -> &'static crate::panic::Location<'static>;
    #[rustc_intrinsic] pub const fn wrapping_add<T: Copy>(a: T, b: T) -> T;
    #[rustc_intrinsic] pub const fn wrapping_sub<T: Copy>(a: T, b: T) -> T;
    #[rustc_intrinsic] pub const fn wrapping_mul<T: Copy>(a: T, b: T) -> T;
    #[rustc_intrinsic] pub const unsafe fn unchecked_shl<T: Copy, U: Copy>(x: T, y: U) -> T;
    #[rustc_intrinsic] pub const unsafe fn unchecked_shr<T: Copy, U: Copy>(x: T, y: U) -> T;
    #[rustc_intrinsic] pub const unsafe fn unchecked_div<T: Copy>(x: T, y: T) -> T;
    #[rustc_intrinsic] pub const fn ctpop<T: Copy>(x: T) -> u32;
    #[rustc_intrinsic] pub const fn ctlz<T: Copy>(x: T) -> u32;
    #[rustc_intrinsic] pub const fn cttz<T: Copy>(x: T) -> u32;
    #[rustc_intrinsic] pub const unsafe fn unchecked_funnel_shl<T: Copy>(a: T, b: T, shift: u32) -> T;
    #[rustc_intrinsic] pub const unsafe fn unchecked_funnel_shr<T: Copy>(a: T, b: T, shift: u32) -> T;
    #[rustc_intrinsic] pub const fn fabsf32(x: f32) -> f32;
    #[rustc_intrinsic] pub const fn fabsf64(x: f64) -> f64;
    #[rustc_intrinsic] pub fn sqrtf32(x: f32) -> f32;
    #[rustc_intrinsic] pub fn sqrtf64(x: f64) -> f64;
    #[rustc_intrinsic] pub const fn fmaf32(a: f32, b: f32, c: f32) -> f32;
    #[rustc_intrinsic] pub const fn fmaf64(a: f64, b: f64, c: f64) -> f64;
    #[rustc_intrinsic] pub const fn minnumf32(x: f32, y: f32) -> f32;
    #[rustc_intrinsic] pub const fn minnumf64(x: f64, y: f64) -> f64;
    #[rustc_intrinsic] pub const fn maxnumf32(x: f32, y: f32) -> f32;
    #[rustc_intrinsic] pub const fn maxnumf64(x: f64, y: f64) -> f64;
    #[rustc_intrinsic] pub const fn fabsf16(x: f16) -> f16;
    #[rustc_intrinsic] pub fn sqrtf16(x: f16) -> f16;
    #[rustc_intrinsic] pub const fn fmaf16(a: f16, b: f16, c: f16) -> f16;
    #[rustc_intrinsic] pub const fn minnumf16(x: f16, y: f16) -> f16;
    #[rustc_intrinsic] pub const fn maxnumf16(x: f16, y: f16) -> f16;
    #[rustc_intrinsic] pub const fn copysignf16(x: f16, y: f16) -> f16;
    #[rustc_intrinsic] pub const fn copysignf32(x: f32, y: f32) -> f32;
    #[rustc_intrinsic] pub const fn copysignf64(x: f64, y: f64) -> f64;
    #[rustc_intrinsic] pub const fn floorf16(x: f16) -> f16;
    #[rustc_intrinsic] pub const fn floorf32(x: f32) -> f32;
    #[rustc_intrinsic] pub const fn floorf64(x: f64) -> f64;
    #[rustc_intrinsic] pub const fn ceilf16(x: f16) -> f16;
    #[rustc_intrinsic] pub const fn ceilf32(x: f32) -> f32;
    #[rustc_intrinsic] pub const fn ceilf64(x: f64) -> f64;
    #[rustc_intrinsic] pub const fn roundf16(x: f16) -> f16;
    #[rustc_intrinsic] pub const fn roundf32(x: f32) -> f32;
    #[rustc_intrinsic] pub const fn roundf64(x: f64) -> f64;
    #[rustc_intrinsic] pub const fn truncf16(x: f16) -> f16;
    #[rustc_intrinsic] pub const fn truncf32(x: f32) -> f32;
    #[rustc_intrinsic] pub const fn truncf64(x: f64) -> f64;
    #[rustc_intrinsic] pub const fn bswap<T: Copy>(x: T) -> T;
    #[rustc_intrinsic] pub const fn bitreverse<T: Copy>(x: T) -> T;
    #[rustc_intrinsic] pub const fn saturating_add<T: Copy>(a: T, b: T) -> T;
    #[rustc_intrinsic] pub const fn saturating_sub<T: Copy>(a: T, b: T) -> T;
    #[rustc_intrinsic] pub const fn mul_with_overflow<T: Copy>(x: T, y: T) -> (T, bool);
    #[rustc_intrinsic] pub const fn ptr_metadata<P: crate::Pointee<Metadata = M> + PointeeSized, M>(ptr: *const P) -> M;
    #[rustc_intrinsic] pub const unsafe fn offset<Ptr, Delta>(dst: Ptr, offset: Delta) -> Ptr;
    #[rustc_intrinsic] pub unsafe fn volatile_store<T>(dst: *mut T, val: T);
    #[rustc_intrinsic] pub unsafe fn atomic_fence<const ORD: AtomicOrdering>();
    #[rustc_intrinsic] pub unsafe fn atomic_load<T: Copy, const ORD: AtomicOrdering>(src: *const T) -> T;
    #[rustc_intrinsic] pub unsafe fn atomic_store<T: Copy, const ORD: AtomicOrdering>(dst: *mut T, val: T);
    #[rustc_intrinsic] pub unsafe fn atomic_xchg<T: Copy, const ORD: AtomicOrdering>(dst: *mut T, src: T) -> T;
    #[rustc_intrinsic] pub unsafe fn atomic_xadd<T: Copy, U: Copy, const ORD: AtomicOrdering>(dst: *mut T, src: U) -> T;
    #[rustc_intrinsic] pub unsafe fn atomic_xsub<T: Copy, U: Copy, const ORD: AtomicOrdering>(dst: *mut T, src: U) -> T;
    #[rustc_intrinsic] pub unsafe fn atomic_and<T: Copy, U: Copy, const ORD: AtomicOrdering>(dst: *mut T, src: U) -> T;
    #[rustc_intrinsic] pub unsafe fn atomic_or<T: Copy, U: Copy, const ORD: AtomicOrdering>(dst: *mut T, src: U) -> T;
    #[rustc_intrinsic] pub unsafe fn atomic_xor<T: Copy, U: Copy, const ORD: AtomicOrdering>(dst: *mut T, src: U) -> T;
    #[rustc_intrinsic] pub unsafe fn atomic_min<T: Copy, const ORD: AtomicOrdering>(dst: *mut T, src: T) -> T;
    #[rustc_intrinsic] pub unsafe fn atomic_max<T: Copy, const ORD: AtomicOrdering>(dst: *mut T, src: T) -> T;
    #[rustc_intrinsic] pub unsafe fn atomic_umin<T: Copy, const ORD: AtomicOrdering>(dst: *mut T, src: T) -> T;
    #[rustc_intrinsic] pub unsafe fn atomic_umax<T: Copy, const ORD: AtomicOrdering>(dst: *mut T, src: T) -> T;
    #[rustc_intrinsic] pub unsafe fn atomic_cxchg<T: Copy, const ORD_SUCC: AtomicOrdering, const ORD_FAIL: AtomicOrdering>(dst: *mut T, old: T, src: T) -> (T, bool);
    #[rustc_intrinsic] pub fn amdgpu_dispatch_ptr() -> *const ();

    /// The ordering parameter of the atomic intrinsics; the discriminants are rustc's
    /// (`rustc_middle::ty::consts::int::AtomicOrdering`).
    pub enum AtomicOrdering { Relaxed = 0, Release = 1, Acquire = 2, AcqRel = 3, SeqCst = 4 }
    impl crate::ConstParamTy_ for AtomicOrdering {}
    impl crate::StructuralPartialEq for AtomicOrdering {}
}

#[lang = "pointee_trait"]
pub trait Pointee: PointeeSized {
    #[lang = "metadata_type"]
    type Metadata: Copy;
}

// ---------------------------------------------------------------- operators

macro_rules! binary_trait {
    ($lang:literal $Trait:ident $method:ident, $alang:literal $ATrait:ident $amethod:ident) => {
        #[lang = $lang]
        pub trait $Trait<Rhs = Self> {
            type Output;
            fn $method(self, rhs: Rhs) -> Self::Output;
        }
        #[lang = $alang]
        pub trait $ATrait<Rhs = Self> {
            fn $amethod(&mut self, rhs: Rhs);
        }
    };
}
binary_trait!("add" Add add, "add_assign" AddAssign add_assign);
binary_trait!("sub" Sub sub, "sub_assign" SubAssign sub_assign);
binary_trait!("mul" Mul mul, "mul_assign" MulAssign mul_assign);
binary_trait!("div" Div div, "div_assign" DivAssign div_assign);
binary_trait!("rem" Rem rem, "rem_assign" RemAssign rem_assign);
binary_trait!("bitand" BitAnd bitand, "bitand_assign" BitAndAssign bitand_assign);
binary_trait!("bitor" BitOr bitor, "bitor_assign" BitOrAssign bitor_assign);
binary_trait!("bitxor" BitXor bitxor, "bitxor_assign" BitXorAssign bitxor_assign);
binary_trait!("shl" Shl shl, "shl_assign" ShlAssign shl_assign);
binary_trait!("shr" Shr shr, "shr_assign" ShrAssign shr_assign);

#[lang = "neg"]
pub trait Neg { type Output; fn neg(self) -> Self::Output; }
#[lang = "not"]
pub trait Not { type Output; fn not(self) -> Self::Output; }

#[lang = "eq"]
pub trait PartialEq<Rhs: PointeeSized = Self>: PointeeSized {
    fn eq(&self, other: &Rhs) -> bool;
    fn ne(&self, other: &Rhs) -> bool { !self.eq(other) }
}
#[lang = "partial_ord"]
pub trait PartialOrd<Rhs: PointeeSized = Self>: PartialEq<Rhs> + PointeeSized {
    fn lt(&self, other: &Rhs) -> bool;
    fn le(&self, other: &Rhs) -> bool;
    fn gt(&self, other: &Rhs) -> bool;
    fn ge(&self, other: &Rhs) -> bool;
}

// rustc lowers an operator on primitives to its own MIR operation (with Rust's checks) and
// only needs the impl to exist; the bodies below are those same built-in operations.
macro_rules! impl_binary {
    ($t:ty: $($Trait:ident $method:ident $ATrait:ident $amethod:ident $op:tt),*) => {$(
        impl $Trait for $t {
            type Output = $t;
            #[inline(always)] #[track_caller]
            fn $method(self, rhs: $t) -> $t { self $op rhs }
        }
        impl $ATrait for $t {
            #[inline(always)] #[track_caller]
            fn $amethod(&mut self, rhs: $t) { *self = *self $op rhs; }
        }
    )*};
}
macro_rules! impl_compare {
    ($t:ty) => {
        impl PartialEq for $t {
            #[inline(always)] fn eq(&self, other: &$t) -> bool { *self == *other }
            #[inline(always)] fn ne(&self, other: &$t) -> bool { *self != *other }
        }
        impl PartialOrd for $t {
            #[inline(always)] fn lt(&self, other: &$t) -> bool { *self < *other }
            #[inline(always)] fn le(&self, other: &$t) -> bool { *self <= *other }
            #[inline(always)] fn gt(&self, other: &$t) -> bool { *self > *other }
            #[inline(always)] fn ge(&self, other: &$t) -> bool { *self >= *other }
        }
    };
}
macro_rules! impl_arith {
    ($t:ty) => {
        impl_binary!($t: Add add AddAssign add_assign +, Sub sub SubAssign sub_assign -,
                     Mul mul MulAssign mul_assign *, Div div DivAssign div_assign /,
                     Rem rem RemAssign rem_assign %);
        impl_compare!($t);
    };
}
macro_rules! impl_bits {
    ($t:ty) => {
        impl_binary!($t: BitAnd bitand BitAndAssign bitand_assign &,
                     BitOr bitor BitOrAssign bitor_assign |,
                     BitXor bitxor BitXorAssign bitxor_assign ^);
        impl Not for $t { type Output = $t; #[inline(always)] fn not(self) -> $t { !self } }
    };
}
macro_rules! impl_neg {
    ($t:ty) => {
        impl Neg for $t { type Output = $t; #[inline(always)] fn neg(self) -> $t { -self } }
    };
}
macro_rules! impl_shifts {
    ($t:ty) => {
        impl_shift!($t: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);
    };
}
macro_rules! impl_shift {
    ($t:ty: $($r:ty),*) => {$(
        impl Shl<$r> for $t {
            type Output = $t;
            #[inline(always)] fn shl(self, rhs: $r) -> $t { self << rhs }
        }
        impl Shr<$r> for $t {
            type Output = $t;
            #[inline(always)] fn shr(self, rhs: $r) -> $t { self >> rhs }
        }
        impl ShlAssign<$r> for $t {
            #[inline(always)] fn shl_assign(&mut self, rhs: $r) { *self = *self << rhs; }
        }
        impl ShrAssign<$r> for $t {
            #[inline(always)] fn shr_assign(&mut self, rhs: $r) { *self = *self >> rhs; }
        }
    )*};
}
each!(impl_arith: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f16, f32, f64);
each!(impl_bits: bool, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);
each!(impl_neg: i8, i16, i32, i64, isize, f16, f32, f64);
each!(impl_shifts: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);
impl_compare!(bool);

// ---------------------------------------------------------------- integer and float methods

macro_rules! int_methods {
    ($t:ty, $bits:literal, $min:expr, $max:expr) => {
        impl $t {
            pub const MIN: $t = $min;
            pub const MAX: $t = $max;
            pub const BITS: u32 = $bits;
            #[inline(always)] pub const fn wrapping_add(self, rhs: $t) -> $t { intrinsics::wrapping_add(self, rhs) }
            #[inline(always)] pub const fn wrapping_sub(self, rhs: $t) -> $t { intrinsics::wrapping_sub(self, rhs) }
            #[inline(always)] pub const fn wrapping_mul(self, rhs: $t) -> $t { intrinsics::wrapping_mul(self, rhs) }
            #[inline(always)] pub const fn wrapping_neg(self) -> $t { (0 as $t).wrapping_sub(self) }
            #[inline(always)]
            pub const fn wrapping_shl(self, rhs: u32) -> $t {
                unsafe { intrinsics::unchecked_shl(self, rhs & ($bits - 1)) }
            }
            #[inline(always)]
            pub const fn wrapping_shr(self, rhs: u32) -> $t {
                unsafe { intrinsics::unchecked_shr(self, rhs & ($bits - 1)) }
            }
            #[inline(always)]
            pub const fn rotate_left(self, n: u32) -> $t {
                unsafe { intrinsics::unchecked_funnel_shl(self, self, n & ($bits - 1)) }
            }
            #[inline(always)]
            pub const fn rotate_right(self, n: u32) -> $t {
                unsafe { intrinsics::unchecked_funnel_shr(self, self, n & ($bits - 1)) }
            }
            #[inline(always)] pub const fn count_ones(self) -> u32 { intrinsics::ctpop(self) }
            #[inline(always)] pub const fn leading_zeros(self) -> u32 { intrinsics::ctlz(self) }
            #[inline(always)] pub const fn trailing_zeros(self) -> u32 { intrinsics::cttz(self) }
            #[inline(always)] pub fn min(self, other: $t) -> $t { if other < self { other } else { self } }
            #[inline(always)] pub fn max(self, other: $t) -> $t { if other < self { self } else { other } }
            #[inline(always)] pub const fn count_zeros(self) -> u32 { (!self).count_ones() }
            #[inline(always)] pub const fn leading_ones(self) -> u32 { (!self).leading_zeros() }
            #[inline(always)] pub const fn trailing_ones(self) -> u32 { (!self).trailing_zeros() }
            #[inline(always)] pub const fn swap_bytes(self) -> $t { intrinsics::bswap(self) }
            #[inline(always)] pub const fn reverse_bits(self) -> $t { intrinsics::bitreverse(self) }
            #[inline(always)] pub const fn saturating_add(self, rhs: $t) -> $t { intrinsics::saturating_add(self, rhs) }
            #[inline(always)] pub const fn saturating_sub(self, rhs: $t) -> $t { intrinsics::saturating_sub(self, rhs) }
            /// core's loop (`wrapping_pow`; `pow` with overflow checks off is the same).
            #[inline(always)]
            pub const fn wrapping_pow(self, mut exp: u32) -> $t {
                if exp == 0 { return 1; }
                let mut base = self;
                let mut acc: $t = 1;
                loop {
                    if (exp & 1) == 1 {
                        acc = acc.wrapping_mul(base);
                        if exp == 1 { return acc; }
                    }
                    exp /= 2;
                    base = base.wrapping_mul(base);
                }
            }
            #[inline(always)] pub const fn pow(self, exp: u32) -> $t { self.wrapping_pow(exp) }
        }
    };
}
// `wrapping_div`/`wrapping_rem` as core defines them: `/` and `%` keep their zero check; the
// one overflowing case of a signed type (MIN / -1) gives MIN and 0.
macro_rules! unsigned_methods {
    ($t:ty) => {
        impl $t {
            #[inline(always)]
            pub const fn saturating_mul(self, rhs: $t) -> $t {
                let (v, o) = intrinsics::mul_with_overflow(self, rhs);
                if o { <$t>::MAX } else { v }
            }
            #[inline(always)]
            pub const fn abs_diff(self, other: $t) -> $t {
                if self < other { other - self } else { self - other }
            }
            #[inline(always)] #[track_caller] pub const fn div_euclid(self, rhs: $t) -> $t { self / rhs }
            #[inline(always)] #[track_caller] pub const fn rem_euclid(self, rhs: $t) -> $t { self % rhs }
            #[inline(always)] #[track_caller] pub const fn wrapping_div(self, rhs: $t) -> $t { self / rhs }
            #[inline(always)] #[track_caller] pub const fn wrapping_rem(self, rhs: $t) -> $t { self % rhs }
        }
    };
}
macro_rules! signed_methods {
    ($t:ty, $u:ty) => {
        impl $t {
            #[inline(always)]
            pub const fn saturating_mul(self, rhs: $t) -> $t {
                let (v, o) = intrinsics::mul_with_overflow(self, rhs);
                if !o { v } else if (self < 0) == (rhs < 0) { <$t>::MAX } else { <$t>::MIN }
            }
            #[inline(always)]
            pub const fn abs_diff(self, other: $t) -> $u {
                if self < other { (other as $u).wrapping_sub(self as $u) }
                else { (self as $u).wrapping_sub(other as $u) }
            }
            #[inline(always)] pub const fn unsigned_abs(self) -> $u { self.wrapping_abs() as $u }
            #[inline(always)] #[track_caller]
            pub const fn div_euclid(self, rhs: $t) -> $t {
                let q = self / rhs;
                if self % rhs < 0 { return if rhs > 0 { q - 1 } else { q + 1 }; }
                q
            }
            #[inline(always)] #[track_caller]
            pub const fn rem_euclid(self, rhs: $t) -> $t {
                let r = self % rhs;
                if r < 0 { r.wrapping_add(rhs.wrapping_abs()) } else { r }
            }
            #[inline(always)] #[track_caller]
            pub const fn wrapping_div(self, rhs: $t) -> $t {
                if self == <$t>::MIN && rhs == -1 { self } else { self / rhs }
            }
            #[inline(always)] #[track_caller]
            pub const fn wrapping_rem(self, rhs: $t) -> $t {
                if rhs == -1 { 0 } else { self % rhs }
            }
            #[inline(always)]
            pub const fn wrapping_abs(self) -> $t { if self < 0 { self.wrapping_neg() } else { self } }
            #[inline(always)]
            pub const fn abs(self) -> $t { if self < 0 { -self } else { self } }
        }
    };
}
int_methods!(i8, 8, -128, 127);
int_methods!(i16, 16, -32768, 32767);
int_methods!(i32, 32, -2147483648, 2147483647);
int_methods!(i64, 64, -9223372036854775808, 9223372036854775807);
int_methods!(u8, 8, 0, 0xff);
int_methods!(u16, 16, 0, 0xffff);
int_methods!(u32, 32, 0, 0xffff_ffff);
int_methods!(u64, 64, 0, 0xffff_ffff_ffff_ffff);
int_methods!(usize, 64, 0, 0xffff_ffff_ffff_ffff);
signed_methods!(i8, u8);
signed_methods!(i16, u16);
signed_methods!(i32, u32);
signed_methods!(i64, u64);
each!(unsigned_methods: u8, u16, u32, u64, usize);

macro_rules! float_methods {
    ($t:ty, $bits:ty, $abs:ident, $sqrt:ident, $fma:ident, $min:ident, $max:ident,
     $copysign:ident, $floor:ident, $ceil:ident, $round:ident, $trunc:ident, $one:expr) => {
        impl $t {
            #[inline(always)] pub const fn copysign(self, sign: $t) -> $t { intrinsics::$copysign(self, sign) }
            #[inline(always)] pub const fn floor(self) -> $t { intrinsics::$floor(self) }
            #[inline(always)] pub const fn ceil(self) -> $t { intrinsics::$ceil(self) }
            #[inline(always)] pub const fn round(self) -> $t { intrinsics::$round(self) }
            #[inline(always)] pub const fn trunc(self) -> $t { intrinsics::$trunc(self) }
            #[inline(always)] pub const fn is_nan(self) -> bool { self != self }
            #[inline(always)]
            pub const fn is_sign_negative(self) -> bool {
                let b: $bits = unsafe { intrinsics::transmute(self) };
                (b >> (<$bits>::BITS - 1)) != 0
            }
            /// core: `NAN` for a NaN (`0.0 / 0.0`), else `1.0.copysign(self)`.
            #[inline(always)]
            pub const fn signum(self) -> $t {
                if self.is_nan() { (0.0 as $t) / (0.0 as $t) } else { intrinsics::$copysign($one, self) }
            }
            /// core's `assert!(min <= max, "min > max, or either was NaN ...")`, then two
            /// compare-and-moves.
            #[inline(always)] #[track_caller]
            pub fn clamp(mut self, min: $t, max: $t) -> $t {
                if !(min <= max) { panic_clamp(); }
                if self < min { self = min; }
                if self > max { self = max; }
                self
            }
            #[inline(always)] pub const fn abs(self) -> $t { intrinsics::$abs(self) }
            #[inline(always)] pub fn sqrt(self) -> $t { intrinsics::$sqrt(self) }
            #[inline(always)] pub const fn mul_add(self, a: $t, b: $t) -> $t { intrinsics::$fma(self, a, b) }
            #[inline(always)] pub const fn min(self, other: $t) -> $t { intrinsics::$min(self, other) }
            #[inline(always)] pub const fn max(self, other: $t) -> $t { intrinsics::$max(self, other) }
            #[inline(always)] pub const fn to_bits(self) -> $bits { unsafe { intrinsics::transmute(self) } }
            #[inline(always)] pub const fn from_bits(v: $bits) -> $t { unsafe { intrinsics::transmute(v) } }
        }
    };
}
float_methods!(f16, u16, fabsf16, sqrtf16, fmaf16, minnumf16, maxnumf16,
               copysignf16, floorf16, ceilf16, roundf16, truncf16, 1.0f16);
float_methods!(f32, u32, fabsf32, sqrtf32, fmaf32, minnumf32, maxnumf32,
               copysignf32, floorf32, ceilf32, roundf32, truncf32, 1.0f32);
float_methods!(f64, u64, fabsf64, sqrtf64, fmaf64, minnumf64, maxnumf64,
               copysignf64, floorf64, ceilf64, roundf64, truncf64, 1.0f64);

// ---------------------------------------------------------------- slices and indexing

impl<T> [T] {
    #[inline(always)]
    pub const fn len(&self) -> usize { intrinsics::ptr_metadata(self) }
}

// `array.len()` finds `[T]::len` by unsizing `&[T; N]` to `&[T]`, as with the real core.
#[lang = "unsize"]
pub trait Unsize<T: PointeeSized>: PointeeSized {}
#[lang = "coerce_unsized"]
pub trait CoerceUnsized<T: PointeeSized> {}
impl<'a, 'b: 'a, T: PointeeSized + Unsize<U>, U: PointeeSized> CoerceUnsized<&'a U> for &'b T {}
impl<'a, T: PointeeSized + Unsize<U>, U: PointeeSized> CoerceUnsized<&'a mut U> for &'a mut T {}

#[lang = "index"]
pub trait Index<Idx: PointeeSized> {
    type Output: PointeeSized;
    #[track_caller]
    fn index(&self, index: Idx) -> &Self::Output;
}
#[lang = "index_mut"]
pub trait IndexMut<Idx: PointeeSized>: Index<Idx> {
    #[track_caller]
    fn index_mut(&mut self, index: Idx) -> &mut Self::Output;
}
// Indexing a slice or an array by `usize` is built into rustc (bounds check and
// `panic_bounds_check` included); these impls only let the type checker find it.
impl<T> Index<usize> for [T] {
    type Output = T;
    #[inline(always)] #[track_caller]
    fn index(&self, index: usize) -> &T { &self[index] }
}
impl<T> IndexMut<usize> for [T] {
    #[inline(always)] #[track_caller]
    fn index_mut(&mut self, index: usize) -> &mut T { &mut self[index] }
}

// ---------------------------------------------------------------- `#[shared]` arrays

#[lang = "deref"]
pub trait Deref: PointeeSized {
    #[lang = "deref_target"]
    type Target: ?Sized;
    fn deref(&self) -> &Self::Target;
}
#[lang = "deref_mut"]
pub trait DerefMut: Deref + PointeeSized {
    fn deref_mut(&mut self) -> &mut Self::Target;
}

/// A kernel's `#[shared] static mut NAME: [T; N]` becomes
/// `static mut NAME: Shared<[T; N], OFFSET> = Shared::NEW;` (`rustc_amdgpu_program`): a
/// zero-sized static whose array lives `OFFSET` bytes into the work-group's dynamically
/// allocated group segment (`gpu::dynamic_group_segment`). rustc 1.95 cannot place a static
/// in the group address space, so the array is reached through this handle. `NAME[i]` and
/// `NAME.len()` dereference it to the array: indexing, its bounds check and its panic are
/// then rustc's own, exactly as for the real static.
pub struct Shared<T, const OFFSET: usize>(PhantomData<T>);
impl<T, const OFFSET: usize> Shared<T, OFFSET> {
    pub const NEW: Self = Shared(PhantomData);
    #[inline(always)]
    fn place(&self) -> *mut T {
        unsafe { intrinsics::offset(crate::gpu::dynamic_group_segment(), OFFSET) as *mut T }
    }
}
impl<T, const OFFSET: usize> Deref for Shared<T, OFFSET> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T { unsafe { &*self.place() } }
}
impl<T, const OFFSET: usize> DerefMut for Shared<T, OFFSET> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T { unsafe { &mut *self.place() } }
}

// ---------------------------------------------------------------- Option, ranges, `for`

#[lang = "Option"]
pub enum Option<T> {
    #[lang = "None"]
    None,
    #[lang = "Some"]
    Some(T),
}
pub use Option::{None, Some};

#[lang = "Range"]
pub struct Range<Idx> {
    pub start: Idx,
    pub end: Idx,
}
#[lang = "RangeInclusive"]
pub struct RangeInclusive<Idx> {
    pub start: Idx,
    pub end: Idx,
    exhausted: bool,
}
impl<Idx> RangeInclusive<Idx> {
    #[lang = "range_inclusive_new"]
    #[inline(always)]
    pub const fn new(start: Idx, end: Idx) -> Self { RangeInclusive { start, end, exhausted: false } }
}

#[lang = "iterator"]
pub trait Iterator {
    type Item;
    #[lang = "next"]
    fn next(&mut self) -> Option<Self::Item>;
}
pub trait IntoIterator {
    type Item;
    type IntoIter: Iterator<Item = Self::Item>;
    #[lang = "into_iter"]
    fn into_iter(self) -> Self::IntoIter;
}
impl<I: Iterator> IntoIterator for I {
    type Item = I::Item;
    type IntoIter = I;
    #[inline(always)]
    fn into_iter(self) -> I { self }
}

// `start..end` yields start, start+1, ... while below end; `start..=end` also yields `end`
// (once, even when end is MAX), as core's `Step`-based iterators do.
macro_rules! range_iter {
    ($t:ty) => {
        impl Iterator for Range<$t> {
            type Item = $t;
            #[inline(always)]
            fn next(&mut self) -> Option<$t> {
                if self.start < self.end {
                    let n = self.start;
                    self.start = n + 1;
                    Some(n)
                } else {
                    None
                }
            }
        }
        impl Iterator for RangeInclusive<$t> {
            type Item = $t;
            #[inline(always)]
            fn next(&mut self) -> Option<$t> {
                if self.exhausted || !(self.start <= self.end) {
                    None
                } else if self.start < self.end {
                    let n = self.start;
                    self.start = n + 1;
                    Some(n)
                } else {
                    self.exhausted = true;
                    Some(self.start)
                }
            }
        }
    };
}
each!(range_iter: i8, i16, i32, i64, u8, u16, u32, u64, usize);

// ---------------------------------------------------------------- panics become traps

pub mod panic {
    /// rustc fills this for `#[track_caller]` functions; field order is rustc's (file, line,
    /// column).
    #[lang = "panic_location"]
    pub struct Location<'a> {
        file: &'a str,
        line: u32,
        col: u32,
    }
    impl<'a> Location<'a> {
        #[inline(always)] #[track_caller]
        pub const fn caller() -> &'static Location<'static> { crate::intrinsics::caller_location() }
        #[inline(always)] pub const fn line(&self) -> u32 { self.line }
        #[inline(always)] pub const fn column(&self) -> u32 { self.col }
    }
}

/// The trap codes the target's `trap::raise` records (see its file); 0 is "no trap".
pub mod trap_kind {
    pub const DIV_BY_ZERO: u32 = 1;
    pub const DIV_OVERFLOW: u32 = 2;
    pub const OUT_OF_BOUNDS: u32 = 3;
    pub const OTHER: u32 = 4;
    pub const ASSERT: u32 = 5;
}

/// `clamp`'s failed `assert!` (core's `panic_fmt` with its message; no formatting here).
#[track_caller] #[inline(never)] #[cold]
pub fn panic_clamp() -> ! { trap::raise(trap_kind::ASSERT, panic::Location::caller().line()) }

#[lang = "panic_bounds_check"] #[track_caller] #[inline(never)] #[cold]
fn panic_bounds_check(index: usize, len: usize) -> ! {
    trap::raise(trap_kind::OUT_OF_BOUNDS, panic::Location::caller().line())
}
#[lang = "panic_const_div_by_zero"] #[track_caller] #[inline(never)] #[cold]
pub fn panic_const_div_by_zero() -> ! { trap::raise(trap_kind::DIV_BY_ZERO, panic::Location::caller().line()) }
#[lang = "panic_const_rem_by_zero"] #[track_caller] #[inline(never)] #[cold]
pub fn panic_const_rem_by_zero() -> ! { trap::raise(trap_kind::DIV_BY_ZERO, panic::Location::caller().line()) }
#[lang = "panic_const_div_overflow"] #[track_caller] #[inline(never)] #[cold]
pub fn panic_const_div_overflow() -> ! { trap::raise(trap_kind::DIV_OVERFLOW, panic::Location::caller().line()) }
#[lang = "panic_const_rem_overflow"] #[track_caller] #[inline(never)] #[cold]
pub fn panic_const_rem_overflow() -> ! { trap::raise(trap_kind::DIV_OVERFLOW, panic::Location::caller().line()) }
#[lang = "panic_const_add_overflow"] #[track_caller] #[inline(never)] #[cold]
pub fn panic_const_add_overflow() -> ! { trap::raise(trap_kind::OTHER, panic::Location::caller().line()) }
#[lang = "panic_const_sub_overflow"] #[track_caller] #[inline(never)] #[cold]
pub fn panic_const_sub_overflow() -> ! { trap::raise(trap_kind::OTHER, panic::Location::caller().line()) }
#[lang = "panic_const_mul_overflow"] #[track_caller] #[inline(never)] #[cold]
pub fn panic_const_mul_overflow() -> ! { trap::raise(trap_kind::OTHER, panic::Location::caller().line()) }
#[lang = "panic_const_neg_overflow"] #[track_caller] #[inline(never)] #[cold]
pub fn panic_const_neg_overflow() -> ! { trap::raise(trap_kind::OTHER, panic::Location::caller().line()) }
#[lang = "panic_const_shl_overflow"] #[track_caller] #[inline(never)] #[cold]
pub fn panic_const_shl_overflow() -> ! { trap::raise(trap_kind::OTHER, panic::Location::caller().line()) }
#[lang = "panic_const_shr_overflow"] #[track_caller] #[inline(never)] #[cold]
pub fn panic_const_shr_overflow() -> ! { trap::raise(trap_kind::OTHER, panic::Location::caller().line()) }
