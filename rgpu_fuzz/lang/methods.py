"""Signatures of the language's methods, associated items and prelude functions, as data
(docs/language.md "Method table", "Associated items", "Prelude functions").

The checker types calls from these tables; the interpreter, the lowering and the generator
read the same tables, so a method added here is added everywhere or nowhere. `len` is not
here: its receiver is an array or a slice, never a scalar, and the checker handles it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Final, TypeAlias

from rgpu_fuzz.lang.ast import PRELUDE_FUNCTIONS
from rgpu_fuzz.model.scalars import FLOAT_TYPES, INT_TYPES, Scalar

__all__ = [
    "ASSOC_CONSTS",
    "ASSOC_FUNCTIONS",
    "BARRIER",
    "LEN",
    "LITERAL_EXPONENT",
    "METHODS",
    "NEW_METHODS",
    "PRELUDE_FUNCTIONS",
    "TRAPPING_METHODS",
    "UNIFORM_PRELUDE",
    "WAVE_FUNCTIONS",
    "AssocFnSig",
    "MethodSig",
    "Operand",
    "ResolvedMethod",
    "WaveSig",
    "assoc_const_value",
    "method_signature",
]


class Operand(Enum):
    """A parameter or result type that depends on the receiver type `T`."""

    SELF = "T"
    """The receiver type itself."""
    BITS = "bits"
    """The unsigned integer of the receiver's width (`f16` → `u16`, `f32` → `u32`, ...)."""
    UNSIGNED = "unsigned"
    """The unsigned integer of the receiver's width, `usize` for `usize` (`abs_diff`,
    `unsigned_abs`: Rust's `Self::Unsigned`)."""


ParamTy: TypeAlias = Scalar | Operand

_SIGNED: frozenset[Scalar] = frozenset(s for s in INT_TYPES if s.is_signed)
_INTS: frozenset[Scalar] = frozenset(INT_TYPES)
_FLOATS: frozenset[Scalar] = frozenset(FLOAT_TYPES)
_BITS_OF: Mapping[Scalar, Scalar] = {f: f.uint for f in FLOAT_TYPES}


@dataclass(frozen=True, slots=True)
class ResolvedMethod:
    """A method signature for one concrete receiver type."""

    name: str
    receiver: Scalar
    params: tuple[Scalar, ...]
    result: Scalar


@dataclass(frozen=True, slots=True)
class MethodSig:
    """One method: the receiver types it exists on, its parameters and result."""

    name: str
    receivers: frozenset[Scalar]
    params: tuple[ParamTy, ...]
    result: ParamTy

    def resolve(self, receiver: Scalar) -> ResolvedMethod:
        """The signature with `T` replaced by `receiver` (which must be one of `receivers`)."""
        if receiver not in self.receivers:
            raise ValueError(f"`{self.name}` does not exist on `{receiver}`")
        return ResolvedMethod(
            self.name, receiver, tuple(_subst(p, receiver) for p in self.params),
            _subst(self.result, receiver),
        )


def _subst(p: ParamTy, receiver: Scalar) -> Scalar:
    if p is Operand.SELF:
        return receiver
    if p is Operand.BITS:
        return _BITS_OF[receiver]
    if p is Operand.UNSIGNED:
        return Scalar.USIZE if receiver is Scalar.USIZE else receiver.uint
    assert isinstance(p, Scalar)
    return p


def _table(*sigs: MethodSig) -> Mapping[str, MethodSig]:
    return MappingProxyType({s.name: s for s in sigs})


_T = Operand.SELF

METHODS: Final[Mapping[str, MethodSig]] = _table(
    *(MethodSig(f"wrapping_{op}", _INTS, (_T,), _T) for op in ("add", "sub", "mul", "div", "rem")),
    MethodSig("wrapping_neg", _INTS, (), _T),
    *(MethodSig(name, _INTS, (Scalar.U32,), _T)
      for name in ("wrapping_shl", "wrapping_shr", "rotate_left", "rotate_right")),
    *(MethodSig(name, _INTS, (), Scalar.U32)
      for name in ("count_ones", "leading_zeros", "trailing_zeros")),
    MethodSig("min", _INTS | _FLOATS, (_T,), _T),
    MethodSig("max", _INTS | _FLOATS, (_T,), _T),
    MethodSig("abs", _SIGNED | _FLOATS, (), _T),
    MethodSig("wrapping_abs", _SIGNED, (), _T),
    MethodSig("sqrt", _FLOATS, (), _T),
    MethodSig("mul_add", _FLOATS, (_T, _T), _T),
    MethodSig("to_bits", _FLOATS, (), Operand.BITS),
    # integer methods with GPU instructions behind them (v_bfrev, v_perm, v_*_sat, ...)
    *(MethodSig(name, _INTS, (), Scalar.U32)
      for name in ("count_zeros", "leading_ones", "trailing_ones")),
    *(MethodSig(name, _INTS, (), _T) for name in ("swap_bytes", "reverse_bits")),
    *(MethodSig(f"saturating_{op}", _INTS, (_T,), _T) for op in ("add", "sub", "mul")),
    MethodSig("abs_diff", _INTS, (_T,), Operand.UNSIGNED),
    MethodSig("unsigned_abs", _SIGNED, (), Operand.UNSIGNED),
    MethodSig("div_euclid", _INTS, (_T,), _T),
    MethodSig("rem_euclid", _INTS, (_T,), _T),
    MethodSig("pow", _INTS, (Scalar.U32,), _T),
    MethodSig("wrapping_pow", _INTS, (Scalar.U32,), _T),
    # float methods
    MethodSig("copysign", _FLOATS, (_T,), _T),
    *(MethodSig(name, _FLOATS, (), _T) for name in ("signum", "floor", "ceil", "round", "trunc")),
    *(MethodSig(name, _FLOATS, (), Scalar.BOOL) for name in ("is_nan", "is_sign_negative")),
    MethodSig("clamp", _FLOATS, (_T, _T), _T),
)
"""Every scalar method, by name."""

LITERAL_EXPONENT: Final[frozenset[str]] = frozenset({"pow", "wrapping_pow"})
"""Methods whose argument must be an integer literal (docs/language.md: the exponent is a
constant, so the compiled pipelines see the unrolled multiplications LLVM makes of it)."""

TRAPPING_METHODS: Final[frozenset[str]] = frozenset({"div_euclid", "rem_euclid", "clamp"})
"""Methods that panic on some operands: `div_euclid`/`rem_euclid` as `/` and `%` do,
`clamp` when `min > max` or a bound is NaN."""

NEW_METHODS: Final[frozenset[str]] = frozenset({
    "count_zeros", "leading_ones", "trailing_ones", "swap_bytes", "reverse_bits",
    "saturating_add", "saturating_sub", "saturating_mul", "abs_diff", "unsigned_abs",
    "div_euclid", "rem_euclid", "pow", "wrapping_pow", "copysign", "signum", "floor", "ceil",
    "round", "trunc", "is_nan", "is_sign_negative", "clamp"})
"""The methods the generator's default mix never writes (the `half` profile does): adding
them to its choices would change every default-profile kernel."""

LEN: Final = "len"
"""`.len()` on a local array, a slice parameter or a shared array; gives `usize`."""


def method_signature(name: str, receiver: Scalar) -> ResolvedMethod | None:
    """The signature of `receiver.name(...)`, or None when no such method exists on that type."""
    sig = METHODS.get(name)
    if sig is None or receiver not in sig.receivers:
        return None
    return sig.resolve(receiver)


@dataclass(frozen=True, slots=True)
class AssocFnSig:
    """`scalar::name(params) -> result`."""

    scalar: Scalar
    name: str
    params: tuple[Scalar, ...]
    result: Scalar


ASSOC_FUNCTIONS: Final[Mapping[tuple[Scalar, str], AssocFnSig]] = MappingProxyType({
    (f, "from_bits"): AssocFnSig(f, "from_bits", (_BITS_OF[f],), f) for f in FLOAT_TYPES
})
"""`f16::from_bits(u16)`, `f32::from_bits(u32)` and `f64::from_bits(u64)`."""

ASSOC_CONSTS: Final[frozenset[str]] = frozenset({"MIN", "MAX"})
"""`T::MIN` and `T::MAX`, on the integer types only."""


def assoc_const_value(scalar: Scalar, name: str) -> int | None:
    """The value of `scalar::name`, or None when that associated constant does not exist."""
    if not scalar.is_int or name not in ASSOC_CONSTS:
        return None
    return scalar.min_value if name == "MIN" else scalar.max_value


BARRIER: Final = "sync_threads"
"""The workgroup barrier: kernels only, uniform control flow only."""

UNIFORM_PRELUDE: Final[frozenset[str]] = frozenset(
    name for name in PRELUDE_FUNCTIONS
    if name.startswith(("block_idx_", "block_dim_", "grid_dim_"))
)
"""Prelude functions whose value is the same for every thread of a block (`thread_idx_*`
differs per thread; `sync_threads` has no value)."""


_SCALARS: frozenset[Scalar] = frozenset(Scalar)


@dataclass(frozen=True, slots=True)
class WaveSig:
    """One wave function of the prelude (docs/language.md "Wave operations").

    `operands` are the types `T` may be (empty: the function is not generic); `params` and
    `result` are as for methods, with `Operand.SELF` standing for `T`. A *collective*
    function reads other lanes' values, so it may stand only where control flow is
    wave-uniform, and only as a statement-level value (the checker's placement rule);
    `uniform_args` are the positions of arguments that must be wave-uniform, and
    `uniform_result` says the result is the same on every lane of the wave."""

    name: str
    operands: frozenset[Scalar]
    params: tuple[ParamTy, ...]
    result: ParamTy
    collective: bool = True
    uniform_args: tuple[int, ...] = ()
    uniform_result: bool = False

    def resolve(self, operand: Scalar | None) -> tuple[tuple[Scalar, ...], Scalar]:
        """Parameter and result types with `T` = `operand` (None for non-generic ones)."""

        def subst(p: ParamTy) -> Scalar:
            if p is Operand.SELF:
                assert operand is not None
                return operand
            assert isinstance(p, Scalar)
            return p

        return tuple(subst(p) for p in self.params), subst(self.result)


def _wave_table(*sigs: WaveSig) -> Mapping[str, WaveSig]:
    return MappingProxyType({s.name: s for s in sigs})


_U32 = Scalar.U32
WAVE_FUNCTIONS: Final[Mapping[str, WaveSig]] = _wave_table(
    WaveSig("wave_size", frozenset(), (), _U32, collective=False, uniform_result=True),
    WaveSig("lane_id", frozenset(), (), _U32, collective=False),
    WaveSig("read_first_lane", _SCALARS, (_T,), _T, uniform_result=True),
    WaveSig("read_lane", _SCALARS, (_T, _U32), _T, uniform_args=(1,), uniform_result=True),
    WaveSig("ballot", frozenset(), (Scalar.BOOL,), Scalar.U64, uniform_result=True),
    WaveSig("shuffle", _SCALARS, (_T, _U32), _T),
    WaveSig("shuffle_xor", _SCALARS, (_T, _U32), _T, uniform_args=(1,)),
    WaveSig("shuffle_down", _SCALARS, (_T, _U32), _T, uniform_args=(1,)),
    *(WaveSig(f"wave_{op}", _INTS, (_T,), _T, uniform_result=True)
      for op in ("sum", "min", "max", "and", "or", "xor")),
    WaveSig("wave_prefix_sum", _INTS, (_T,), _T),
    WaveSig("wave_all", frozenset(), (Scalar.BOOL,), Scalar.BOOL, uniform_result=True),
    WaveSig("wave_any", frozenset(), (Scalar.BOOL,), Scalar.BOOL, uniform_result=True),
)
"""The wave functions `use rgpu::*` brings in, by name. `wave_size()` and `lane_id()` read
no other lane and may stand anywhere; every other one is collective."""
