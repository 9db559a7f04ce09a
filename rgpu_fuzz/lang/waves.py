"""Typing of the prelude's wave functions (docs/language.md "Wave operations").

The generic ones (`read_lane`, `shuffle`, `wave_sum`, ...) take `T` from their first
argument, as rustc infers a generic parameter: a literal without a suffix takes the type the
context asks for (`let s: u32 = wave_sum(1);`), and with no such context it needs a suffix.
Where a collective call may stand (kernels only, statement-level values, wave-uniform control)
is checked later, by `uniformity.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.ast import evolve
from rgpu_fuzz.lang.env import Infer, describe, fits
from rgpu_fuzz.lang.methods import WAVE_FUNCTIONS, WaveSig
from rgpu_fuzz.lang.types import Type
from rgpu_fuzz.model.scalars import Scalar

if TYPE_CHECKING:
    from rgpu_fuzz.lang.exprs import ExprChecker

__all__ = ["check_wave_call", "is_collective", "operand_words"]


def is_collective(e: ast.Expr) -> bool:
    """True for a call of a wave function that reads other lanes (all but `wave_size()` and
    `lane_id()`)."""
    return isinstance(e, ast.Call) and (sig := WAVE_FUNCTIONS.get(e.func)) is not None \
        and sig.collective


def operand_words(sig: WaveSig) -> str:
    """The types `T` may be, for a diagnostic."""
    if sig.operands == frozenset(Scalar):
        return "any scalar type"
    return "an integer type"


def check_wave_call(c: ExprChecker, e: ast.Call, hint: Type | None) -> ast.Call:
    """Type a call of a wave function; collective calls are recorded in `c.waves`."""
    sig = WAVE_FUNCTIONS[e.func]
    if sig.collective:
        if c.fn is None or not c.fn.kernel:
            c.env.error(f"`{e.func}` can only be called in a kernel", e.span,
                        "a wave operation in a helper would hide it from the wave-uniformity "
                        "check; call it in the `#[kernel]` function")
        else:
            c.waves.append(e.span)
    if not sig.operands:
        params, result = sig.resolve(None)
        return evolve(e, args=c.args(e.args, params, e.span, "function"), ty=result)
    if len(e.args) != len(sig.params):
        c._arity(e.span, "function", len(sig.params), len(e.args))
        return evolve(e, args=tuple(c.need_known(c.expr(a)) for a in e.args), ty=Infer.ERR)
    first = c.expr(e.args[0], hint)
    t = first.ty
    if isinstance(t, Infer) and t is not Infer.ERR:
        if isinstance(hint, Scalar) and fits(t, hint):
            first = c.settle(first, hint)
        else:
            first = c.need_known(first)
        t = first.ty
    if t is Infer.ERR:
        rest = tuple(c.need_known(c.expr(a)) for a in e.args[1:])
        return evolve(e, args=(first, *rest), ty=Infer.ERR)
    assert t is not None
    if not isinstance(t, Scalar) or t not in sig.operands:
        c.env.error(f"`{e.func}` takes {operand_words(sig)} as its first argument, found "
                    f"{describe(t)}", first.span)
        rest = tuple(c.need_known(c.expr(a)) for a in e.args[1:])
        return evolve(e, args=(first, *rest), ty=Infer.ERR)
    params, result = sig.resolve(t)
    rest = c.args(e.args[1:], params[1:], e.span, "function")
    return evolve(e, args=(first, *rest), ty=result)
