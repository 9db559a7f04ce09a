"""`const` items: the constant-expression restriction and evaluation (docs/language.md
"Items").

Values are computed with `rgpu_fuzz.lang.semantics` on one-lane arrays, so a const means
exactly what the same expression means at run time. Like rustc, whose MIR for consts always
carries overflow checks whatever `-C overflow-checks` says, evaluation fails on integer
overflow (`+ - *`, unary `-`, shift amounts out of range) as well as on `/ %` traps:
`const A: u32 = u32::MAX + 1u32;` is an error, not 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import Enum, auto

import numpy as np

from rgpu_fuzz.lang import ast, semantics
from rgpu_fuzz.lang.ast import BinOp, UnOp
from rgpu_fuzz.lang.env import ConstValue, Env
from rgpu_fuzz.lang.literals import float_literal_value
from rgpu_fuzz.lang.methods import assoc_const_value
from rgpu_fuzz.lang.source import Span
from rgpu_fuzz.model.scalars import Scalar

__all__ = ["ConstEvalError", "check_const_expr", "evaluate_consts"]


class ConstEvalError(Exception):
    """Internal: unwinds a failed evaluation to the item that started it."""

    def __init__(self, message: str, span: Span) -> None:
        super().__init__(message)
        self.message = message
        self.span = span


_NOT_CONST: Mapping[type, str] = {
    ast.Index: "indexing",
    ast.MethodCall: "method calls",
    ast.If: "`if` expressions",
    ast.BlockExpr: "blocks",
    ast.ArrayRepeat: "arrays",
    ast.ArrayList: "arrays",
}


def check_const_expr(e: ast.Expr, env: Env, *, array_ok: bool = False) -> bool:
    """Report what a constant expression may not contain; True when nothing was reported.
    `array_ok`: the initialiser of a `#[shared]` static, an array of constants."""
    if array_ok and isinstance(e, ast.ArrayRepeat):
        return check_const_expr(e.value, env)
    if array_ok and isinstance(e, ast.ArrayList):
        return all([check_const_expr(x, env) for x in e.elems])
    match e:
        case ast.IntLit() | ast.FloatLit() | ast.BoolLit() | ast.AssocConst():
            return True
        case ast.Name():
            return True  # typing reports statics and unknown names
        case ast.Unary():
            return check_const_expr(e.operand, env)
        case ast.Binary():
            return all([check_const_expr(e.lhs, env), check_const_expr(e.rhs, env)])
        case ast.Cast():
            return check_const_expr(e.expr, env)
        case ast.AssocCall():
            return all([check_const_expr(a, env) for a in e.args])
        case ast.Call():
            env.error(f"cannot call non-const fn `{e.func}` in constants", e.span,
                      "constant expressions are literals, consts, operators, casts, "
                      "`T::MIN`/`T::MAX` and `f32::from_bits`/`f64::from_bits`")
            return False
    what = _NOT_CONST.get(type(e), "this expression")
    env.error(f"{what} are not allowed in constant expressions"
              if what.endswith("s") else f"{what} is not allowed in constant expressions",
              e.span)
    return False


class _Pending(Enum):
    """The mark of a const being evaluated: meeting it again is a cycle."""

    IN_PROGRESS = auto()


def evaluate_consts(consts: Mapping[str, ast.Const], env: Env) -> dict[str, ConstValue]:
    """Evaluate every (typed) const in any order, following references; reports traps,
    overflow and cycles into `env`. Consts that fail are absent from the result."""
    state: dict[str, ConstValue | _Pending | None] = {}

    def value_of(name: str, chain: tuple[str, ...]) -> ConstValue | None:
        if name not in consts:
            raise _Abort  # a const with an error of its own
        st = state.get(name)
        if st is _Pending.IN_PROGRESS:
            cycle = [*chain[chain.index(name):], name]
            env.error(f"cycle detected when evaluating constant `{name}`: "
                      f"{' -> '.join(cycle)}", consts[name].span)
            raise _Abort
        if name in state:
            return st
        state[name] = _Pending.IN_PROGRESS
        c = consts[name]
        try:
            arr = _Evaluator(lambda n: value_of(n, (*chain, name)), consts).eval(c.value)
            result: ConstValue | None = _python_value(arr, c.ty.scalar)
        except ConstEvalError as err:
            env.error(f"evaluation of constant value failed: {err.message}", err.span)
            result = None
        except _Abort:
            result = None
        state[name] = result
        return result

    out: dict[str, ConstValue] = {}
    for name in consts:
        try:
            v = value_of(name, ())
        except _Abort:
            v = None
        if v is not None:
            out[name] = v
    return out


class _Abort(Exception):
    """A const this one depends on failed; its own error is already reported."""


def _python_value(a: np.ndarray, ty: Scalar) -> ConstValue:
    """The value of a one-lane result: a Python bool or int, and for floats the numpy scalar
    itself, never a Python `float`: widening an f32 to f64 sets a signalling NaN's quiet bit,
    and a const keeps its exact bits in Rust (`f32::from_bits(0x7f80_0001)`)."""
    v = a[0]
    if ty is Scalar.BOOL:
        return bool(v)
    return v if ty.is_float else int(v)  # type: ignore[no-any-return]


def _lane(value: ConstValue | float, ty: Scalar) -> np.ndarray:
    """A one-lane array of `ty` holding `value` (integers wrapped to the type's width); a
    Python float is a literal's value, already exact in `ty` (`float_literal_value`)."""
    if ty.is_int:
        v = int(value) & ((1 << ty.bits) - 1)
        if ty.is_signed and v >= 1 << (ty.bits - 1):
            v -= 1 << ty.bits
        return np.array([v], dtype=ty.dtype)
    return np.array([value], dtype=ty.dtype)


_OVERFLOW_WORDS: Mapping[BinOp, str] = {
    BinOp.ADD: "add", BinOp.SUB: "subtract", BinOp.MUL: "multiply",
}
_EXACT: Mapping[BinOp, Callable[[int, int], int]] = {
    BinOp.ADD: lambda a, b: a + b, BinOp.SUB: lambda a, b: a - b, BinOp.MUL: lambda a, b: a * b,
}


class _Evaluator:
    def __init__(self, lookup: Callable[[str], ConstValue | None],
                 consts: Mapping[str, ast.Const]) -> None:
        self.lookup = lookup
        self.consts = consts

    def eval(self, e: ast.Expr) -> np.ndarray:
        ty = e.ty
        assert isinstance(ty, Scalar), f"untyped constant expression {e!r}"
        match e:
            case ast.IntLit():
                return _lane(e.value, ty)
            case ast.FloatLit():
                return _lane(float_literal_value(e.text, ty), ty)
            case ast.BoolLit():
                return _lane(e.value, ty)
            case ast.Name():
                v = self.lookup(e.ident)
                if v is None:
                    raise _Abort
                return _lane(v, ty)
            case ast.AssocConst():
                c = assoc_const_value(e.scalar, e.name)
                assert c is not None
                return _lane(c, ty)
            case ast.AssocCall():
                return semantics.from_bits(self.eval(e.args[0]), ty)
            case ast.Cast():
                src = e.expr.ty
                assert isinstance(src, Scalar)
                return semantics.cast(self.eval(e.expr), src, ty)
            case ast.Unary():
                return self.unary(e, ty)
            case ast.Binary():
                return self.binary(e, ty)
        raise AssertionError(f"not a constant expression: {e!r}")

    def unary(self, e: ast.Unary, ty: Scalar) -> np.ndarray:
        if e.op is UnOp.NEG and isinstance(e.operand, ast.IntLit):
            return _lane(-e.operand.value, ty)  # `-128i8`: the literal is negative
        a = self.eval(e.operand)
        if e.op is UnOp.NEG and ty.is_int and int(a[0]) == ty.min_value:
            raise ConstEvalError("attempt to negate with overflow", e.span)
        return semantics.unary(e.op, ty, a)

    def binary(self, e: ast.Binary, ty: Scalar) -> np.ndarray:
        lt = e.lhs.ty
        assert isinstance(lt, Scalar)
        a = self.eval(e.lhs)
        if e.op in (BinOp.LAND, BinOp.LOR):
            if bool(a[0]) is (e.op is BinOp.LOR):
                return a  # short-circuit: the right side is not evaluated, as in Rust
            return self.eval(e.rhs)
        b = self.eval(e.rhs)
        if lt.is_int:
            self._check_int(e, lt, a, b)
        return semantics.binary(e.op, lt, a, b)

    def _check_int(self, e: ast.Binary, ty: Scalar, a: np.ndarray, b: np.ndarray) -> None:
        if e.op in (BinOp.DIV, BinOp.REM):
            zero, overflow = semantics.trap_lanes(e.op.value, ty, a, b)
            if zero[0]:
                raise ConstEvalError(
                    "attempt to divide by zero" if e.op is BinOp.DIV
                    else "attempt to calculate the remainder with a divisor of zero", e.span)
            if overflow[0]:
                raise ConstEvalError(
                    "attempt to divide with overflow" if e.op is BinOp.DIV
                    else "attempt to calculate the remainder with overflow", e.span)
        elif e.op in _EXACT:
            exact = _EXACT[e.op](int(a[0]), int(b[0]))
            if not ty.min_value <= exact <= ty.max_value:
                raise ConstEvalError(f"attempt to {_OVERFLOW_WORDS[e.op]} with overflow",
                                     e.span)
        elif e.op in (BinOp.SHL, BinOp.SHR):
            amount = int(b[0])
            if not 0 <= amount < ty.bits:
                word = "left" if e.op is BinOp.SHL else "right"
                raise ConstEvalError(f"attempt to shift {word} with overflow", e.span)
