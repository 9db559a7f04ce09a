"""Typing of blocks, statements and function bodies (docs/language.md "Statements",
"Typing"): scopes and shadowing, binding numbers, mutability, loops, `return`, and `!`.

A block's type is its tail's, `()` without one, or `!` when one of its statements diverges
(`return`, `break`, `continue`, a `loop` without `break`, an expression of type `!`), as in
rustc — so `fn g() -> u32 { return 2u32; }` checks.
"""

from __future__ import annotations

from dataclasses import dataclass

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.ast import evolve
from rgpu_fuzz.lang.env import (
    AnyTy,
    Env,
    FnSig,
    Infer,
    Local,
    concrete,
    describe,
    fits,
    is_int,
)
from rgpu_fuzz.lang.exprs import SHIFTS, ExprChecker, op_accepts
from rgpu_fuzz.lang.source import Span
from rgpu_fuzz.lang.types import NEVER, UNIT, ArrayTy, SliceTy, Type
from rgpu_fuzz.model.scalars import Scalar

_ERR = Infer.ERR


@dataclass
class _LoopFrame:
    has_break: bool = False


class BodyChecker(ExprChecker):
    """Checks one function body (or, with `fn=None`, one constant expression) against the
    module's items, reporting into `env`. Results: the typed tree, `calls` (call edges for
    the recursion check), `barriers` (spans of `sync_threads()`), `waves` (spans of
    collective wave calls), `next_binding`."""

    def __init__(self, env: Env, fn: FnSig | None) -> None:
        self.env = env
        self.fn = fn
        self.scopes = [{}]
        self.unsafe_depth = 0
        self.calls = []
        self.barriers = []
        self.waves = []
        self.next_binding = 0
        self.loops: list[_LoopFrame] = []

    # -------------------------------------------------------------- functions

    def resolve_type(self, t: ast.TypeExpr) -> tuple[ast.TypeExpr, AnyTy]:
        """A type as written, with array lengths typed, and its semantic type."""
        match t:
            case ast.ScalarType():
                return t, t.scalar
            case ast.SliceType():
                return t, SliceTy(t.elem, t.mutable)
            case ast.ArrayType():
                length, n = self.array_len(t.len)
                return evolve(t, len=length), _ERR if n is None else ArrayTy(t.elem, n)
        raise AssertionError(f"unknown type expression {t!r}")

    def declare(self, name: str, ty: AnyTy, mutable: bool, kind: str) -> int:
        binding = self.next_binding
        self.next_binding += 1
        self.scopes[-1][name] = Local(name, binding, ty, mutable, kind)
        return binding

    def check_fn(self, fn: ast.Fn) -> ast.Fn:
        assert self.fn is not None
        params: list[ast.Param] = []
        seen: set[str] = set()
        for p, ty in zip(fn.params, self.fn.params, strict=True):
            if p.name in seen:
                self.env.error(f"identifier `{p.name}` is bound more than once in this "
                               "parameter list", p.span)
            seen.add(p.name)
            ty_expr, _ = self.resolve_type(p.ty)
            binding = self.declare(p.name, ty, p.mutable, "param")
            params.append(evolve(p, ty=ty_expr, binding=binding))
        ret = self.fn.ret
        body, body_ty = self.block(fn.body, ret)
        if body_ty is UNIT and ret not in (UNIT, _ERR):
            span = fn.ret.span if fn.ret is not None else fn.span
            self.env.error(f"mismatched types: expected `{ret}`, found `()`", span,
                           "implicitly returns `()` as its body has no tail or `return` "
                           "expression")
        return evolve(fn, params=tuple(params), body=body)

    # -------------------------------------------------------------- blocks and branches

    def block(self, b: ast.Block, hint: AnyTy | None) -> tuple[ast.Block, AnyTy]:
        """A block in a new scope; with a real `hint`, its tail is coerced to it."""
        self.scopes.append({})
        stmts: list[ast.Stmt] = []
        diverges = False
        for s in b.stmts:
            typed, div = self.stmt(s)
            stmts.append(typed)
            diverges = diverges or div
        tail = None
        ty: AnyTy = NEVER if diverges else UNIT
        if b.tail is not None:
            want = concrete(hint) if hint is not None and hint is not NEVER else None
            tail = self.expr(b.tail, want)
            if want is not None:
                tail = self.coerce(tail, want)
            assert tail.ty is not None
            ty = tail.ty
            if diverges and ty is UNIT:
                ty = NEVER
        self.scopes.pop()
        return evolve(b, stmts=tuple(stmts), tail=tail), ty

    def check_block_expr(self, e: ast.BlockExpr, hint: Type | None) -> ast.BlockExpr:
        self.unsafe_depth += e.unsafe
        block, ty = self.block(e.block, hint)
        self.unsafe_depth -= e.unsafe
        return evolve(e, block=block, ty=ty)

    def check_if(self, e: ast.If, hint: Type | None) -> ast.If:
        cond = self.coerce(self.expr(e.cond), Scalar.BOOL)
        then, tt = self.block(e.then, hint)
        if e.else_ is None:
            wants_value = hint not in (None, UNIT, NEVER)
            if tt not in (UNIT, NEVER, _ERR) or wants_value:
                self.env.error("`if` may be missing an `else` clause", e.span,
                               "an `if` without `else` has type `()`; add an `else` branch "
                               f"that gives a value (expected {describe(hint or tt)})")
            return evolve(e, cond=cond, then=then, ty=UNIT)
        else_: ast.Block | ast.If
        et: AnyTy | None
        if isinstance(e.else_, ast.If):
            else_if = self.check_if(e.else_, hint)
            else_, et, else_span = else_if, else_if.ty, else_if.span
        else:
            else_, et = self.block(e.else_, hint)
            else_span = else_.tail.span if else_.tail is not None else else_.span
        assert et is not None
        result = self._join(tt, et, else_span)
        if isinstance(tt, Infer) and not isinstance(result, Infer):
            then = self.settle_block(then, result)
        if isinstance(et, Infer) and not isinstance(result, Infer):
            else_ = (self.settle_if(else_, result) if isinstance(else_, ast.If)
                     else self.settle_block(else_, result))
        return evolve(e, cond=cond, then=then, else_=else_, ty=result)

    def _join(self, tt: AnyTy, et: AnyTy, else_span: Span) -> AnyTy:
        """The type of an `if` from its branches' types."""
        if tt is _ERR or et is _ERR:
            return _ERR
        if tt is NEVER or tt == et:
            return et
        if et is NEVER:
            return tt
        if isinstance(et, Infer) and not isinstance(tt, Infer) and fits(et, tt):
            return tt
        if isinstance(tt, Infer) and not isinstance(et, Infer) and fits(tt, et):
            return et
        self.env.error(f"`if` and `else` have incompatible types: expected {describe(tt)}, "
                       f"found {describe(et)}", else_span)
        return _ERR

    # -------------------------------------------------------------- statements

    def stmt(self, s: ast.Stmt) -> tuple[ast.Stmt, bool]:
        """The typed statement and whether it diverges (control never reaches what follows)."""
        match s:
            case ast.Let():
                return self.let(s)
            case ast.Assign():
                return self.assign(s)
            case ast.ExprStmt():
                e = self.expr(s.expr, None if s.semi else UNIT)
                e = self.need_known(e) if s.semi else self.coerce(e, UNIT)
                return evolve(s, expr=e), e.ty is NEVER
            case ast.While():
                cond = self.coerce(self.expr(s.cond), Scalar.BOOL)
                body = self.loop_body(s.body)
                return evolve(s, cond=cond, body=body), False
            case ast.Loop():
                self.loops.append(_LoopFrame())
                body, _ = self.block(s.body, UNIT)
                frame = self.loops.pop()
                return evolve(s, body=body), not frame.has_break
            case ast.For():
                return self.for_(s), False
            case ast.Break() | ast.Continue():
                word = "break" if isinstance(s, ast.Break) else "continue"
                if not self.loops:
                    self.env.error(f"`{word}` outside of a loop", s.span)
                elif isinstance(s, ast.Break):
                    self.loops[-1].has_break = True
                return s, True
            case ast.Return():
                return self.return_(s), True
        raise AssertionError(f"unknown statement {s!r}")

    def loop_body(self, body: ast.Block) -> ast.Block:
        self.loops.append(_LoopFrame())
        typed, _ = self.block(body, UNIT)
        self.loops.pop()
        return typed

    def let(self, s: ast.Let) -> tuple[ast.Let, bool]:
        ty_expr: ast.TypeExpr | None = None
        ty: AnyTy
        if s.ty is not None:
            ty_expr, ty = self.resolve_type(s.ty)
            if isinstance(ty, SliceTy):
                self.env.error("slices are only allowed as kernel parameters", s.ty.span)
                ty = _ERR
            init = self.coerce(self.expr(s.init, concrete(ty)), ty)
        else:
            init = self.need_known(self.expr(s.init))
            assert init.ty is not None
            ty = init.ty
            if ty is UNIT:
                self.env.error("a `let` binding of type `()` is not supported", s.init.span)
                ty = _ERR
            elif ty is NEVER:
                ty = _ERR
        # the initialiser saw the old binding; the new one shadows from the next statement on
        binding = self.declare(s.name, ty, s.mutable, "let")
        return evolve(s, ty=ty_expr, init=init, binding=binding), init.ty is NEVER

    def for_(self, s: ast.For) -> ast.For:
        start, end = self.expr(s.start), self.expr(s.end)
        st, et = start.ty, end.ty
        assert st is not None and et is not None
        if isinstance(st, Infer) and not isinstance(et, Infer):
            start = self.coerce(start, et)
        else:
            end = self.coerce(end, st)
        if isinstance(start.ty, Infer) and isinstance(end.ty, Infer):
            start = self.need_known(start)
            end = evolve(end, ty=_ERR)
        var_ty: AnyTy | None = start.ty if start.ty is not _ERR else end.ty
        assert var_ty is not None
        if var_ty not in (_ERR, NEVER) and not (isinstance(var_ty, Scalar) and var_ty.is_int):
            self.env.error(f"`for` ranges must have an integer type, found {describe(var_ty)}",
                           start.span)
            var_ty = _ERR
        self.scopes.append({})
        binding = self.declare(s.var, var_ty, False, "for")
        body = self.loop_body(s.body)
        self.scopes.pop()
        return evolve(s, start=start, end=end, body=body, binding=binding)

    def return_(self, s: ast.Return) -> ast.Return:
        ret: AnyTy = self.fn.ret if self.fn is not None else _ERR
        if s.value is None:
            if ret not in (UNIT, _ERR):
                self.env.error(f"mismatched types: expected {describe(ret)}, found `()`",
                               s.span, "`return;` gives `()`: return a value")
            return s
        value = self.coerce(self.expr(s.value, concrete(ret)), ret)
        return evolve(s, value=value)

    # -------------------------------------------------------------- assignment

    def assign(self, s: ast.Assign) -> tuple[ast.Assign, bool]:
        target = self.assign_target(s)
        tt = target.ty
        assert tt is not None
        if s.op is None:
            value = self.coerce(self.expr(s.value, concrete(tt)), tt)
        elif s.op in SHIFTS:
            value = self.expr(s.value)
            if value.ty is Infer.INT:
                value = self.settle(value, Scalar.I32)
            vt = value.ty
            if tt is not _ERR and vt is not _ERR and not (
                    is_int(tt) and vt is not None and is_int(vt)):
                self.env.error(f"no implementation for `{tt} {s.op.value}= {vt}`", s.span)
        else:
            value = self.coerce(self.expr(s.value, concrete(tt)), tt)
            if tt is not _ERR and not op_accepts(s.op, tt):
                self.env.error(f"binary assignment operation `{s.op.value}=` cannot be applied "
                               f"to type `{tt}`", s.span)
        return evolve(s, target=target, value=value), value.ty is NEVER

    def assign_target(self, s: ast.Assign) -> ast.Expr:
        t = s.target
        if isinstance(t, ast.Name):
            local = self.lookup(t.ident)
            if local is None:
                if t.ident in self.env.const_types:
                    self.env.error("invalid left-hand side of assignment", s.span,
                                   f"`{t.ident}` is a constant")
                    return evolve(self.name(t, "value"), ty=_ERR)
                typed = self.name(t, "place")
                if typed.ty is not _ERR:  # a shared array as a whole
                    self.env.error(f"`{t.ident}` is a shared array; it can only be indexed "
                                   "or used with `.len()`", t.span)
                return evolve(typed, ty=_ERR)
            typed = self.name(t, "place")
            if isinstance(local.ty, SliceTy):
                self.env.error(f"`{t.ident}` is a buffer (`{local.ty}`); assign to its "
                               "elements instead", t.span)
                return evolve(typed, ty=_ERR)
            if not local.mutable:
                self._immutable(local, s.span)
            return typed
        if isinstance(t, ast.Index):
            typed_index = self.index(t)
            base = typed_index.base
            if isinstance(base, ast.Name) and base.kind is ast.NameKind.LOCAL:
                local = self.lookup(base.ident)
                assert local is not None
                if isinstance(local.ty, SliceTy) and not local.ty.mutable:
                    self.env.error(f"cannot assign to `{base.ident}[_]`, which is behind a `&` "
                                   "reference", s.span,
                                   f"declare the parameter as `{base.ident}: &mut "
                                   f"[{local.ty.elem}]` to write to it")
                elif isinstance(local.ty, ArrayTy) and not local.mutable:
                    self.env.error(f"cannot assign to `{base.ident}[_]`, as `{base.ident}` is "
                                   "not declared as mutable", s.span,
                                   f"declare it with `let mut {base.ident}`")
            elif isinstance(base, ast.Name) and base.kind is ast.NameKind.CONST:
                self.env.error("invalid left-hand side of assignment", s.span)
            return typed_index
        self.env.error("invalid left-hand side of assignment", t.span)
        return evolve(self.expr(t), ty=_ERR)

    def _immutable(self, local: Local, span: Span) -> None:
        if local.kind == "param":
            self.env.error(f"cannot assign to immutable argument `{local.name}`", span,
                           f"declare the parameter as `mut {local.name}`")
        else:
            self.env.error(f"cannot assign twice to immutable variable `{local.name}`", span,
                           f"declare it with `let mut {local.name}`" if local.kind == "let"
                           else "a `for` variable cannot be assigned")

