"""Typing and ordering rules of atomics (docs/language.md "Atomics").

The language has core::sync::atomic's integer atomics: buffers `&[AtomicU32]` and
`#[shared]` statics `[AtomicU32; N]`, whose elements are reached only through the methods
below (an atomic element is never a plain value, so a plain access can never touch the
element an atomic access touches: the mixed race is excluded by typing). Every stage reads
the tables here.

The ordering rules are rustc's `invalid_atomic_ordering` lint (deny by default; checked
against rustc 1.95, which reports each at the ordering argument):
* a load with `Release` or `AcqRel`;
* a store with `Acquire` or `AcqRel`;
* a `compare_exchange` failure ordering `Release` or `AcqRel`;
* `fence(Ordering::Relaxed)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.ast import AtomicOrdering, evolve
from rgpu_fuzz.lang.env import Infer
from rgpu_fuzz.lang.types import ORDERING, UNIT, ArrayTy, AtomicTy, SliceTy, Type
from rgpu_fuzz.model.scalars import Scalar

if TYPE_CHECKING:
    from rgpu_fuzz.lang.exprs import ExprChecker

LOAD = "load"
STORE = "store"
CAS = "compare_exchange"
FENCE = "fence"
CAS_TESTS = ("is_ok", "is_err")
RMW_METHODS: tuple[str, ...] = (
    "swap", "fetch_add", "fetch_sub", "fetch_and", "fetch_or", "fetch_xor", "fetch_min",
    "fetch_max")
"""Read-modify-writes `(v, o) -> T` returning the old value."""
METHODS: tuple[str, ...] = (LOAD, STORE, *RMW_METHODS, CAS)

_REL = (AtomicOrdering.RELEASE, AtomicOrdering.ACQ_REL)
_ACQ = (AtomicOrdering.ACQUIRE, AtomicOrdering.ACQ_REL)
BAD_LOAD = "atomic loads cannot have `Release` or `AcqRel` ordering"
BAD_STORE = "atomic stores cannot have `Acquire` or `AcqRel` ordering"
BAD_FAILURE = ("`compare_exchange`'s failure ordering may not be `Release` or `AcqRel`, since "
               "a failed `compare_exchange` does not result in a write")
BAD_FENCE = "memory fences cannot have `Relaxed` ordering"


@dataclass(frozen=True, slots=True)
class AtomicOp:
    """A checked atomic method call, as the later stages read it."""

    method: str
    base: ast.Name
    index: ast.Expr
    values: tuple[ast.Expr, ...]
    orderings: tuple[AtomicOrdering, ...]
    elem: Scalar
    shared: bool


def atomic_op(e: ast.MethodCall) -> AtomicOp | None:
    """The atomic operation a checked method call is (None: an ordinary method). For
    `compare_exchange(..)` under `.is_ok()`/`.is_err()` it is the inner call."""
    recv = e.receiver
    if not isinstance(recv, ast.Index) or not isinstance(recv.ty, AtomicTy):
        return None
    base = recv.base
    assert isinstance(base, ast.Name)
    values = tuple(a for a in e.args if not isinstance(a, ast.OrderingLit))
    orderings = tuple(a.ordering for a in e.args if isinstance(a, ast.OrderingLit))
    return AtomicOp(e.method, base, recv.index, values, orderings, recv.ty.elem,
                    base.kind is ast.NameKind.SHARED)


def uses_atomics(module: ast.Module) -> bool:
    """Whether a module declares an atomic buffer or shared array (only then can a kernel
    depend on the order of its threads)."""
    for item in module.items:
        if isinstance(item, ast.Shared) and item.atomic:
            return True
        if isinstance(item, ast.Fn) and any(
                isinstance(p.ty, ast.SliceType) and p.ty.atomic for p in item.params):
            return True
    return False


# ---------------------------------------------------------------- checking


def stray_ordering(ck: ExprChecker, e: ast.OrderingLit) -> ast.OrderingLit:
    ck.env.error("an `Ordering` is only an argument of an atomic method or `fence`", e.span)
    return evolve(e, ty=Infer.ERR)


def _ordering(ck: ExprChecker, a: ast.Expr) -> ast.Expr:
    if isinstance(a, ast.OrderingLit):
        return evolve(a, ty=ORDERING)
    typed = ck.expr(a)
    if typed.ty is not Infer.ERR:
        ck.env.error(f"mismatched types: expected `Ordering`, found `{typed.ty}`", a.span,
                     "write `Ordering::Relaxed`, `Acquire`, `Release`, `AcqRel` or `SeqCst`")
    return typed


def _rule(ck: ExprChecker, a: ast.Expr, bad: tuple[AtomicOrdering, ...], msg: str) -> None:
    if isinstance(a, ast.OrderingLit) and a.ordering in bad:
        ck.env.error(msg, a.span)


def check_method(ck: ExprChecker, e: ast.MethodCall) -> ast.MethodCall | None:
    """Type an atomic method call (None: `e` is not one; the ordinary rules apply)."""
    if e.method in CAS_TESTS and isinstance(e.receiver, ast.MethodCall) \
            and e.receiver.method == CAS and _atomic_place(ck, e.receiver.receiver):
        inner = _check_call(ck, e.receiver)
        if inner is None:
            return None
        if e.args:
            ck._arity(e.span, "method", 0, len(e.args))
        return evolve(e, receiver=inner, args=(), ty=Scalar.BOOL)
    if not _atomic_place(ck, e.receiver):
        return None
    typed = _check_call(ck, e)
    if typed is not None and e.method == CAS:
        ck.env.error("the `Result` of `compare_exchange` is used only through `.is_ok()` "
                     "or `.is_err()`", e.span)
        return evolve(typed, ty=Infer.ERR)
    return typed


def _atomic_place(ck: ExprChecker, e: ast.Expr) -> bool:
    """Whether `e` is `name[i]` of an atomic buffer or shared array in scope (decided before
    typing it, so that nothing is typed, and reported, twice)."""
    if not isinstance(e, ast.Index) or not isinstance(e.base, ast.Name):
        return False
    local = ck.lookup(e.base.ident)
    if local is not None:
        return isinstance(local.ty, SliceTy) and local.ty.atomic
    shared = ck.env.shared.get(e.base.ident)
    return shared is not None and shared.atomic


def _check_call(ck: ExprChecker, e: ast.MethodCall) -> ast.MethodCall | None:
    recv = e.receiver
    if not isinstance(recv, ast.Index):
        return None
    typed_recv = ck.index(recv)
    at = typed_recv.ty
    if not isinstance(at, AtomicTy):
        return None
    elem = at.elem
    n_values = {LOAD: 0, STORE: 1, CAS: 2}.get(e.method, 1)
    n_orders = 2 if e.method == CAS else 1
    if e.method not in METHODS:
        ck.env.error(f"no method named `{e.method}` found for `{at}`", e.span)
        return evolve(e, receiver=typed_recv, ty=Infer.ERR)
    if len(e.args) != n_values + n_orders:
        ck._arity(e.span, "method", n_values + n_orders, len(e.args))
        return evolve(e, receiver=typed_recv, args=tuple(ck.expr(a) for a in e.args),
                      ty=Infer.ERR)
    values = ck.args(e.args[:n_values], (elem,) * n_values, e.span, "method")
    orders = tuple(_ordering(ck, a) for a in e.args[n_values:])
    if e.method == LOAD:
        _rule(ck, orders[0], _REL, BAD_LOAD)
    elif e.method == STORE:
        _rule(ck, orders[0], _ACQ, BAD_STORE)
    elif e.method == CAS:
        _rule(ck, orders[1], _REL, BAD_FAILURE)
    result: Type = UNIT if e.method == STORE else Scalar.BOOL if e.method == CAS else elem
    return evolve(e, receiver=typed_recv, args=(*values, *orders), ty=result)


def check_fence(ck: ExprChecker, e: ast.Call) -> ast.Call:
    """`fence(o)`: core::sync::atomic::fence, brought in by `use rgpu::*`."""
    if len(e.args) != 1:
        ck._arity(e.span, "function", 1, len(e.args))
        return evolve(e, args=tuple(ck.expr(a) for a in e.args), ty=UNIT)
    order = _ordering(ck, e.args[0])
    _rule(ck, order, (AtomicOrdering.RELAXED,), BAD_FENCE)
    return evolve(e, args=(order,), ty=UNIT)


def check_shared_init(ck: ExprChecker, s: ast.Shared, length: ast.Expr,
                      n: int | None) -> tuple[ast.Expr, Type | None]:
    """The initialiser `[const { AtomicU32::new(v) }; N]` of a static of atomics: `v` a
    constant of the value type, `N` the declared length. Returns it typed, and the static's
    type (None after an error in the length)."""
    init = s.init
    assert isinstance(init, ast.ArrayRepeat)
    value = ck.coerce(ck.expr(init.value, s.elem), s.elem)
    init_len, m = ck.array_len(init.len)
    if n is not None and m is not None and n != m:
        ck.env.error(f"mismatched types: expected an array with a size of {n}, found one with "
                     f"a size of {m}", init.span)
    ty = None if n is None else ArrayTy(s.elem, n, atomic=True)
    return evolve(init, value=value, len=init_len, ty=ty), ty

