"""Which of several broken operation families an *unreduced* wrong-code finding shows,
without reducing it (docs/design.md §5 "a signature names a bug, not a case").

A bug key (`triage/bugkey.py`) names the families of a kernel's operations that the pipeline
computes wrong on their own. A whole generated kernel often holds two: `xor` on `bool` and
on integers (one seeded bug), or a float→int cast and a shift (two bugs of one pipeline).
Presence is not cause, so a campaign that reduces leaves that to the reduction. A campaign
that does not (`--no-reduce`) asks instead, for each family F of the key: does the kernel
with every operation of the *other* broken families knocked out still show wrong code on the
pipeline? The first (in name order) for which it does is the family the finding is keyed
by (`BugKeys.shown`).

A knocked-out operation is replaced, where one is at hand, by an *equivalent* expression
made of other families (so the rest of the kernel computes exactly what it did):
* `!x` on `bool` → `x == false`, `a ^ b` on `bool` → `a != b` (LangRef: our `!` and `^` are
  `xor`; `icmp` is another instruction);
* `!x` on integers → `ALL_ONES - x`, `a ^ b` → `(a | b) - (a & b)` (bitwise identities: no
  borrow occurs, since `a & b` ⊆ `a | b`);
* `x << n` → `x.wrapping_mul(1.rotate_left(n as u32))` (`<<` masks the amount to the width,
  docs/language.md; `rotate_left` rotates modulo the width, so `1.rotate_left(n)` is `2^(n mod w)`);
* `x op= y` → `x = <the above of x op y>`.
An equivalent that would use one of the kernel's broken families is not taken. Otherwise the
value keeps flowing where it can: an operation whose first operand has the result's type
becomes that operand (`a.min(b)` → `a`), a float→int cast `x as T` becomes
`x.to_bits() as T` (an integer cast), anything else a literal of its type (`1`, never a zero
divisor; `false`, which ends a loop rather than spinning). Both sides run the knocked-out
kernel, so a changed meaning does not matter: only whether the pipeline still disagrees with
the arbiter. A changed meaning can mask the other bug, though (a condition inverted by
`!x` → `x` hid a wrong `!C` behind it): hence the equivalents first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.literals import int_literal
from rgpu_fuzz.lang.printer import print_module
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.frontend import prepare
from triage.reduce.passes.exprs import simple_literals
from triage.reduce.tree import pin_literals, rebuild

if TYPE_CHECKING:
    from triage.bugkey import TypedOp

Typing = Callable[[object], "TypedOp | None"]
"""The operation a node is, with its family and types (`bugkey.typed_op`)."""


def _ty(node: object) -> Scalar | None:
    ty = getattr(node, "ty", None)
    return ty if isinstance(ty, Scalar) else None


def _literal(ty: Scalar) -> ast.Expr:
    lit = simple_literals(ty)[0 if ty is Scalar.BOOL else 1]
    return replace(lit, ty=ty)  # typed, so an enclosing operation is still recognised


def _first_operand(n: Any) -> ast.Expr | None:
    match n:
        case ast.Binary(lhs=x) | ast.Unary(operand=x) | ast.Cast(expr=x) | \
                ast.MethodCall(receiver=x):
            return x  # type: ignore[no-any-return]
        case ast.AssocCall(args=(x, *_)):
            return x  # type: ignore[no-any-return]
    return None


def _ints(ty: Scalar, value: int) -> ast.Expr:
    return replace(int_literal(value, ty), ty=ty)


def _bin(op: ast.BinOp, lhs: ast.Expr, rhs: ast.Expr, ty: Scalar) -> ast.Expr:
    return ast.Binary(op=op, lhs=lhs, rhs=rhs, ty=ty)


def _equivalent(n: Any, family: str, ty: Scalar) -> tuple[ast.Expr, frozenset[str]] | None:
    """An expression computing what operation `n` (of `family`, result type `ty`) does, and
    the families it uses; None when there is none here (module doc)."""
    B = ast.BinOp
    match n:
        case ast.Unary(op=ast.UnOp.NOT, operand=x) if ty is Scalar.BOOL:
            false = ast.BoolLit(value=False, ty=ty)
            return _bin(B.EQ, pin_literals(x), false, ty), frozenset({"eq:bool"})
        case ast.Unary(op=ast.UnOp.NOT, operand=x) if ty.is_int:
            ones = _ints(ty, -1 if ty.is_signed else ty.max_value)
            return _bin(B.SUB, ones, pin_literals(x), ty), frozenset({"sub:int"})
        case ast.Binary(op=ast.BinOp.XOR, lhs=a, rhs=b) if ty is Scalar.BOOL:
            return _bin(B.NE, pin_literals(a), pin_literals(b), ty), frozenset({"ne:bool"})
        case ast.Binary(op=ast.BinOp.XOR, lhs=a, rhs=b) if ty.is_int:
            a, b = pin_literals(a), pin_literals(b)
            return (_bin(B.SUB, _bin(B.OR, a, b, ty), _bin(B.AND, a, b, ty), ty),
                    frozenset({"or:int", "and:int", "sub:int"}))
        case ast.Binary(op=ast.BinOp.SHL, lhs=x, rhs=amount) if ty.is_int and \
                family == "shl:int":
            amount = pin_literals(amount)
            used = {"mul:int", "rotate_left:int"}
            if _ty(amount) is not Scalar.U32:
                amount = ast.Cast(expr=amount, to=Scalar.U32, ty=Scalar.U32)
                used.add("as:int->int")
            power = ast.MethodCall(receiver=_ints(ty, 1), method="rotate_left", args=(amount,),
                                   ty=ty)
            return (ast.MethodCall(receiver=pin_literals(x), method="wrapping_mul",
                                   args=(power,), ty=ty), frozenset(used))
    return None


def _approximate(n: Any, ty: Scalar, operands: tuple[Scalar, ...]) -> ast.Expr:
    """What replaces operation `n` when no equivalent does: its first operand, the bits of
    a float cast to an integer, or a literal (module doc)."""
    first = _first_operand(n)
    if first is not None and _ty(first) is ty:
        return pin_literals(first)
    if isinstance(n, ast.Cast) and operands[0].is_float and ty.is_int:
        bits = Scalar.U32 if operands[0] is Scalar.F32 else Scalar.U64
        return ast.Cast(expr=ast.MethodCall(receiver=pin_literals(n.expr), method="to_bits",
                                            ty=bits), to=ty, ty=ty)
    return _literal(ty)


def _substitute(n: Any, families: frozenset[str], avoid: frozenset[str], typed: Typing) -> Any:
    """`n` knocked out when it is an operation of one of `families`, by nothing that uses
    a family of `avoid` where an equivalent allows (module doc)."""
    op = typed(n)
    if op is None or op.family not in families:
        return n
    if isinstance(n, ast.Assign):
        assert op.operands[0] is op.result and n.op is not None
        whole = ast.Binary(op=n.op, lhs=n.target, rhs=n.value, ty=op.result)
        same = _equivalent(whole, op.family, op.result)
        value = same[0] if same is not None and not same[1] & avoid else n.target
        return replace(n, op=None, value=value)
    same = _equivalent(n, op.family, op.result)
    if same is not None and not same[1] & avoid:
        return same[0]
    return _approximate(n, op.result, op.operands)


def knock_out(case: Case, families: frozenset[str], typed: Typing,
              avoid: frozenset[str] = frozenset()) -> Case | None:
    """`case` with every operation of `families` knocked out (module doc), by equivalents
    using none of the families `families | avoid` where one exists; None when the kernel
    does not check, or the knocked-out one does not (such a test decides nothing)."""
    prepared = prepare(case)
    if not isinstance(prepared, tuple):
        return None
    avoid = families | avoid
    module = rebuild(prepared[0].module, lambda n: _substitute(n, families, avoid, typed))
    out = Case(entry=case.entry, kernel=print_module(module), launch=case.launch,
               args=case.args, provenance=case.provenance, pipelines=case.pipelines)
    return out if isinstance(prepare(out), tuple) else None


__all__ = ["knock_out"]
