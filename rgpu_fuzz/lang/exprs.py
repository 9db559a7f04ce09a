"""Typing of expressions (docs/language.md "Typing"): bidirectional, with rustc's literal
inference.

An unsuffixed literal is typed `Infer.INT`/`Infer.FLOAT` until its context fixes the type;
`coerce` then `settle`s the provisional subtree (the literal and the unary/binary operators,
`if` branches and block tails over it) to the real type and checks each literal's range
there. An expression that is still provisional where nothing can fix it (`let x = 1;`,
`1 == 1`) is "cannot infer type" — rustc would default it to `i32`/`f64`, which the language
refuses so that every pipeline reads the same type from the source.
"""

from __future__ import annotations

from rgpu_fuzz.lang import ast, atomics
from rgpu_fuzz.lang.ast import BinOp, NameKind, UnOp, evolve
from rgpu_fuzz.lang.env import (
    AnyTy,
    Env,
    FnSig,
    Infer,
    Local,
    concrete,
    describe,
    fits,
    is_float,
    is_int,
)
from rgpu_fuzz.lang.limits import MAX_LOCAL_ARRAY_LEN
from rgpu_fuzz.lang.literals import first_literal, float_literal_value, is_literal
from rgpu_fuzz.lang.methods import (
    ASSOC_FUNCTIONS,
    BARRIER,
    LEN,
    LITERAL_EXPONENT,
    PRELUDE_FUNCTIONS,
    WAVE_FUNCTIONS,
    assoc_const_value,
    method_signature,
)
from rgpu_fuzz.lang.source import Span
from rgpu_fuzz.lang.types import NEVER, UNIT, ArrayTy, AtomicTy, SliceTy, Type
from rgpu_fuzz.lang.waves import check_wave_call
from rgpu_fuzz.model.scalars import Scalar

ARITH = frozenset({BinOp.ADD, BinOp.SUB, BinOp.MUL, BinOp.DIV, BinOp.REM})
BITWISE = frozenset({BinOp.AND, BinOp.OR, BinOp.XOR})
SHIFTS = frozenset({BinOp.SHL, BinOp.SHR})
LOGICAL = frozenset({BinOp.LAND, BinOp.LOR})
COMPARISONS = frozenset({BinOp.EQ, BinOp.NE, BinOp.LT, BinOp.LE, BinOp.GT, BinOp.GE})

_ERR = Infer.ERR


def op_accepts(op: BinOp, t: AnyTy) -> bool:
    """Whether binary `op` is defined on operands of type `t` (same type on both sides)."""
    if op in ARITH:
        return is_int(t) or is_float(t)
    if op in BITWISE:
        return is_int(t) or t is Scalar.BOOL
    if op in LOGICAL:
        return t is Scalar.BOOL
    return isinstance(t, Scalar) or t in (Infer.INT, Infer.FLOAT)


class ExprChecker:
    """Types expressions of one body; `BodyChecker` adds blocks and statements."""

    env: Env
    scopes: list[dict[str, Local]]
    unsafe_depth: int
    fn: FnSig | None
    calls: list[tuple[str, Span]]
    barriers: list[Span]
    waves: list[Span]
    """Spans of the collective wave-function calls (`waves.py`)."""
    array_limit: int | None = MAX_LOCAL_ARRAY_LEN
    """The most elements an array of this body may have (None: a `#[shared]` static's,
    limited in bytes by the checker)."""
    _neg_marked: bool = False
    """Set by a `-` for its operand, itself a `-`, just before typing it: rustc's
    `overflowing_literals` lint counts a literal as negated only under a `-` that is not the
    direct operand of another counting `-` (`-128i8` is fine, `--128i8` is an error,
    `---128i8` fine again; rustc_lint `TypeLimits::negated_expr_id`)."""

    # -------------------------------------------------------------- provided by BodyChecker

    def check_if(self, e: ast.If, hint: Type | None) -> ast.If:
        raise NotImplementedError

    def check_block_expr(self, e: ast.BlockExpr, hint: Type | None) -> ast.BlockExpr:
        raise NotImplementedError

    # -------------------------------------------------------------- inference plumbing

    def coerce(self, e: ast.Expr, expected: AnyTy) -> ast.Expr:
        """`e` where a value of type `expected` is required: settles a provisional literal
        type, accepts `!`, and reports a mismatch otherwise."""
        t = e.ty
        assert t is not None
        if t is _ERR or expected is _ERR or t == expected or t is NEVER:
            return e
        if isinstance(t, Infer) and not isinstance(expected, Infer) and fits(t, expected):
            return self.settle(e, expected)
        self.env.error(
            f"mismatched types: expected {describe(expected)}, found {describe(t)}", e.span)
        return evolve(e, ty=_ERR) if isinstance(t, Infer) else e

    def settle(self, e: ast.Expr, ty: Type) -> ast.Expr:
        """Give the provisional subtree of `e` the real type `ty` (checking literal ranges)."""
        if e.ty not in (Infer.INT, Infer.FLOAT):
            return e
        assert isinstance(ty, Scalar)
        match e:
            case ast.IntLit():
                self.check_int_range(e, ty, negated=False)
                return evolve(e, ty=ty)
            case ast.FloatLit():
                self.check_float_range(e, ty)
                return evolve(e, ty=ty)
            case ast.Unary(op=UnOp.NEG):
                if ty.is_int and not ty.is_signed:
                    self.env.error(f"cannot apply unary operator `-` to type `{ty}`", e.span,
                                   "unsigned values cannot be negated")
                    return evolve(e, ty=ty)
                return self.settle_negations(e, ty)
            case ast.Unary():
                return evolve(e, operand=self.settle(e.operand, ty), ty=ty)
            case ast.Binary(op=op) if op in SHIFTS:
                return evolve(e, lhs=self.settle(e.lhs, ty), ty=ty)
            case ast.Binary():
                return evolve(e, lhs=self.settle(e.lhs, ty), rhs=self.settle(e.rhs, ty), ty=ty)
            case ast.If():
                return self.settle_if(e, ty)
            case ast.BlockExpr():
                return evolve(e, block=self.settle_block(e.block, ty), ty=ty)
        return evolve(e, ty=ty)

    def settle_block(self, b: ast.Block, ty: Type) -> ast.Block:
        return b if b.tail is None else evolve(b, tail=self.settle(b.tail, ty))

    def settle_if(self, e: ast.If, ty: Type) -> ast.If:
        else_: ast.Block | ast.If | None = e.else_
        if isinstance(else_, ast.If):
            else_ = self.settle_if(else_, ty)
        elif isinstance(else_, ast.Block):
            else_ = self.settle_block(else_, ty)
        return evolve(e, then=self.settle_block(e.then, ty), else_=else_, ty=ty)

    def need_known(self, e: ast.Expr) -> ast.Expr:
        """`e` where nothing fixes a provisional type: "cannot infer type" at its literal."""
        if e.ty not in (Infer.INT, Infer.FLOAT):
            return e
        lit = first_literal(e)
        text = self.env.snippet(lit.span) or "literal"
        example = "1u32" if e.ty is Infer.INT else "1.0f32"
        self.env.error(f"type annotations needed: cannot infer type of numeric literal `{text}`",
                       lit.span, f"give the literal a suffix, e.g. `{example}`, or annotate "
                       "the type")
        return evolve(e, ty=_ERR)

    def settle_negations(self, e: ast.Unary, ty: Type) -> ast.Expr:
        """Settle a chain of `-` as a whole: a literal at its bottom counts as negated when
        the chain is odd (see `_neg_marked`)."""
        chain: list[ast.Unary] = []
        inner: ast.Expr = e
        while isinstance(inner, ast.Unary) and inner.op is UnOp.NEG:
            chain.append(inner)
            inner = inner.operand
        if isinstance(inner, ast.IntLit):
            assert isinstance(ty, Scalar)
            self.check_int_range(inner, ty, negated=len(chain) % 2 == 1)
            out: ast.Expr = evolve(inner, ty=ty)
        else:
            out = self.settle(inner, ty)
        for neg in reversed(chain):
            out = evolve(neg, operand=out, ty=ty)
        return out

    def check_int_range(self, lit: ast.IntLit, ty: Scalar, *, negated: bool) -> None:
        if not ty.is_int:
            return
        ok = -lit.value >= ty.min_value if negated else lit.value <= ty.max_value
        if not ok:
            text = self.env.snippet(lit.span) or f"{lit.value}"
            sign = "-" if negated else ""
            self.env.error(
                f"literal out of range for `{ty}`", lit.span,
                f"the literal `{sign}{text}` does not fit into the type `{ty}` whose range "
                f"is `{ty.min_value}..={ty.max_value}`")

    def check_float_range(self, lit: ast.FloatLit, ty: Scalar) -> None:
        if not ty.is_float:
            return
        value = float_literal_value(lit.text, ty)
        if value in (float("inf"), float("-inf")):
            self.env.error(f"literal out of range for `{ty}`", lit.span,
                           f"the literal `{lit.text}` does not fit into the type `{ty}` and "
                           "will be converted to `inf`")

    # -------------------------------------------------------------- expressions

    def expr(self, e: ast.Expr, hint: Type | None = None) -> ast.Expr:
        """Type `e`. `hint` is the type the context expects; it only steers array
        expressions, `if`/block tails and literals under casts — callers still `coerce`."""
        match e:
            case ast.IntLit(suffix=None):
                return evolve(e, ty=Infer.INT)
            case ast.IntLit(suffix=s):
                assert s is not None
                if s.is_float:  # the lexer makes `2f32` a FloatLit; be safe anyway
                    return evolve(e, ty=s)
                self.check_int_range(e, s, negated=False)
                return evolve(e, ty=s)
            case ast.FloatLit(suffix=None):
                return evolve(e, ty=Infer.FLOAT)
            case ast.FloatLit(suffix=s):
                assert s is not None
                self.check_float_range(e, s)
                return evolve(e, ty=s)
            case ast.BoolLit():
                return evolve(e, ty=Scalar.BOOL)
            case ast.Name():
                return self.name(e, "value")
            case ast.Unary():
                return self.unary(e)
            case ast.Binary():
                return self.binary(e)
            case ast.Cast():
                return self.cast(e)
            case ast.Index():
                typed = self.index(e)
                if isinstance(typed.ty, AtomicTy):
                    self.env.error(f"`{typed.ty}` is not a value: use its methods (`load`, "
                                   "`store`, `fetch_add`...)", e.span)
                    return evolve(typed, ty=_ERR)
                return typed
            case ast.MethodCall():
                return atomics.check_method(self, e) or self.method_call(e)
            case ast.OrderingLit():
                return atomics.stray_ordering(self, e)
            case ast.Call():
                return self.call(e, hint)
            case ast.AssocCall():
                return self.assoc_call(e)
            case ast.AssocConst():
                if assoc_const_value(e.scalar, e.name) is None:
                    self.env.error(f"no associated item named `{e.name}` found for type "
                                   f"`{e.scalar}` in the current scope", e.span)
                    return evolve(e, ty=_ERR)
                return evolve(e, ty=e.scalar)
            case ast.ArrayRepeat():
                return self.array_repeat(e, hint)
            case ast.ArrayList():
                return self.array_list(e, hint)
            case ast.If():
                return self.check_if(e, hint)
            case ast.BlockExpr():
                return self.check_block_expr(e, hint)
        raise AssertionError(f"unknown expression {e!r}")

    def lookup(self, ident: str) -> Local | None:
        for scope in reversed(self.scopes):
            if ident in scope:
                return scope[ident]
        return None

    def name(self, e: ast.Name, usage: str) -> ast.Name:
        """Resolve a name. `usage` is "value", "place" (indexed, `.len()`, assigned): buffers
        and shared arrays may only be used as places."""
        local = self.lookup(e.ident)
        if local is not None:
            if isinstance(local.ty, SliceTy) and usage == "value":
                self.env.error(f"`{e.ident}` is a buffer (`{local.ty}`); it can only be "
                               "indexed or used with `.len()`", e.span)
                return evolve(e, kind=NameKind.LOCAL, binding=local.binding, ty=_ERR)
            return evolve(e, kind=NameKind.LOCAL, binding=local.binding, ty=local.ty)
        if e.ident in self.env.const_types:
            return evolve(e, kind=NameKind.CONST, ty=self.env.const_types[e.ident])
        if e.ident in self.env.shared:
            ty: AnyTy = self.env.shared[e.ident]
            if self.fn is None:
                self.env.error("constants cannot refer to statics", e.span)
                ty = _ERR
            elif self.unsafe_depth == 0 and not self.env.shared[e.ident].atomic:
                self.env.error("use of mutable static is unsafe and requires unsafe block",
                               e.span, "mutable statics can be mutated by multiple threads: "
                               "wrap the access in `unsafe { ... }`")
            if usage == "value":
                self.env.error(f"`{e.ident}` is a shared array; it can only be indexed or "
                               "used with `.len()`", e.span)
                ty = _ERR
            return evolve(e, kind=NameKind.SHARED, ty=ty)
        self.env.error(f"cannot find value `{e.ident}` in this scope", e.span)
        return evolve(e, ty=_ERR)

    def unary(self, e: ast.Unary) -> ast.Unary:
        marks_child = not self._neg_marked
        self._neg_marked = False
        if e.op is UnOp.NEG and isinstance(e.operand, ast.IntLit) and e.operand.suffix:
            s = e.operand.suffix
            operand: ast.Expr = evolve(e.operand, ty=s)
            if s.is_signed or not marks_child:
                self.check_int_range(e.operand, s, negated=marks_child)
        else:
            self._neg_marked = (e.op is UnOp.NEG and marks_child
                                and isinstance(e.operand, ast.Unary)
                                and e.operand.op is UnOp.NEG)
            operand = self.expr(e.operand)
            self._neg_marked = False
        t = operand.ty
        assert t is not None
        if t is _ERR or t is NEVER:
            return evolve(e, operand=operand, ty=t)
        if e.op is UnOp.NEG:
            ok = t in (Infer.INT, Infer.FLOAT) or (
                isinstance(t, Scalar) and (t.is_signed or t.is_float))
        else:
            ok = is_int(t) or t is Scalar.BOOL
        if not ok:
            shown = t.value if isinstance(t, Infer) else str(t)
            notes = ("unsigned values cannot be negated",) if is_int(t) else ()
            self.env.error(f"cannot apply unary operator `{e.op.value}` to type `{shown}`",
                           e.span, *notes)
            return evolve(e, operand=operand, ty=_ERR)
        return evolve(e, operand=operand, ty=t)

    def binary(self, e: ast.Binary) -> ast.Binary:
        lhs, rhs = self.expr(e.lhs), self.expr(e.rhs)
        lt, rt = lhs.ty, rhs.ty
        assert lt is not None and rt is not None
        if e.op in LOGICAL:
            return evolve(e, lhs=self.coerce(lhs, Scalar.BOOL),
                           rhs=self.coerce(rhs, Scalar.BOOL), ty=Scalar.BOOL)
        if e.op in SHIFTS:
            if rt is Infer.INT:
                rhs = self.settle(rhs, Scalar.I32)  # rustc defaults a shift amount to i32
                rt = Scalar.I32
            if _ERR in (lt, rt):
                return evolve(e, lhs=lhs, rhs=rhs, ty=lt if lt is _ERR else _ERR)
            if not (is_int(lt) and is_int(rt)):
                self.env.error(f"no implementation for `{_show(lt)} {e.op.value} {_show(rt)}`",
                               e.span)
                return evolve(e, lhs=lhs, rhs=rhs, ty=_ERR)
            return evolve(e, lhs=lhs, rhs=rhs, ty=lt)
        result: AnyTy = Scalar.BOOL if e.op in COMPARISONS else _ERR
        if _ERR in (lt, rt):
            return evolve(e, lhs=lhs, rhs=rhs, ty=result)
        if lt is NEVER or rt is NEVER:
            t: AnyTy = rt if lt is NEVER else lt
        elif isinstance(lt, Infer) and not isinstance(rt, Infer):
            lhs, t = self.coerce(lhs, rt), rt
        elif isinstance(rt, Infer) or lt == rt:
            rhs, t = self.coerce(rhs, lt), lt
        else:
            self.env.error(f"mismatched types: expected {describe(lt)}, found {describe(rt)}",
                           rhs.span)
            return evolve(e, lhs=lhs, rhs=rhs, ty=result)
        if lhs.ty is _ERR or rhs.ty is _ERR:
            return evolve(e, lhs=lhs, rhs=rhs, ty=result)
        if not op_accepts(e.op, t):
            self.env.error(f"binary operation `{e.op.value}` cannot be applied to type "
                           f"`{_show(t)}`", e.span)
            return evolve(e, lhs=lhs, rhs=rhs, ty=result)
        if e.op in COMPARISONS:
            if isinstance(t, Infer):
                lhs, rhs = self.need_known(lhs), rhs
            return evolve(e, lhs=lhs, rhs=rhs, ty=Scalar.BOOL)
        return evolve(e, lhs=lhs, rhs=rhs, ty=t)

    def cast(self, e: ast.Cast) -> ast.Cast:
        operand = self.expr(e.expr)
        t = operand.ty
        if t in (Infer.INT, Infer.FLOAT):
            # rustc types a literal directly under `as` with the target type when it can
            if is_literal(operand) and fits(t, e.to):
                operand = self.settle(operand, e.to)
            else:
                operand = self.need_known(operand)
            t = operand.ty
        if t is _ERR or t is NEVER:
            return evolve(e, expr=operand, ty=e.to)
        if not isinstance(t, Scalar):
            self.env.error(f"non-primitive cast: `{t}` as `{e.to}`", e.span)
        elif e.to is Scalar.BOOL:
            self.env.error(f"cannot cast `{t}` as `bool`", e.span,
                           "compare with zero instead, e.g. `x != 0`")
        elif t is Scalar.BOOL and e.to.is_float:
            self.env.error(f"casting `bool` as `{e.to}` is invalid", e.span,
                           "cast through an integer first, e.g. `b as u8 as f32`")
        return evolve(e, expr=operand, ty=e.to)

    def index(self, e: ast.Index) -> ast.Index:
        base = self.place(e.base)
        index = self.expr(e.index)
        bt = base.ty
        elem: AnyTy = _ERR
        if isinstance(bt, ArrayTy | SliceTy):
            elem = AtomicTy(bt.elem) if bt.atomic else bt.elem
        elif bt is not _ERR:
            self.env.error(f"cannot index into a value of type `{_show(bt)}`", base.span)
        it = index.ty
        if it is Infer.INT:
            index = self.settle(index, Scalar.USIZE)
        elif it not in (Scalar.USIZE, _ERR, NEVER) and bt is not _ERR:
            shown = f"[{bt.elem}]" if isinstance(bt, SliceTy) else _show(bt)
            self.env.error(f"the type `{shown}` cannot be indexed by `{_show(it)}`",
                           index.span, "indices are `usize`: cast with `as usize`")
        return evolve(e, base=base, index=index, ty=elem)

    def place(self, e: ast.Expr) -> ast.Expr:
        """The base of an indexing or `.len()`: a named array, buffer or shared array."""
        if isinstance(e, ast.Name):
            return self.name(e, "place")
        typed = self.expr(e)
        if typed.ty is not _ERR:
            self.env.error("only named arrays, buffers and shared arrays can be indexed or "
                           "used with `.len()`", e.span)
        return evolve(typed, ty=_ERR)

    def method_call(self, e: ast.MethodCall) -> ast.MethodCall:
        if e.method == LEN:
            recv = self.place(e.receiver) if isinstance(e.receiver, ast.Name) \
                else self.expr(e.receiver)
            rt = recv.ty
            if not isinstance(rt, ArrayTy | SliceTy):
                return self._no_method(e, recv)
            if e.args:
                self._arity(e.span, "method", 0, len(e.args))
            return evolve(e, receiver=recv, args=tuple(self.expr(a) for a in e.args),
                           ty=Scalar.USIZE)
        recv = self.expr(e.receiver)
        rt = recv.ty
        if rt in (Infer.INT, Infer.FLOAT):
            assert isinstance(rt, Infer)
            self.env.error(f"can't call method `{e.method}` on ambiguous numeric type "
                           f"`{rt.value}`", recv.span, "give the literal a suffix, e.g. `1u32`")
            return evolve(e, receiver=evolve(recv, ty=_ERR),
                           args=tuple(self.need_known(self.expr(a)) for a in e.args), ty=_ERR)
        sig = method_signature(e.method, rt) if isinstance(rt, Scalar) else None
        if sig is None:
            return self._no_method(e, recv)
        args = self.args(e.args, sig.params, e.span, "method")
        if e.method in LITERAL_EXPONENT and args and not isinstance(args[0], ast.IntLit):
            self.env.error(f"the exponent of `{e.method}` must be an integer literal",
                           args[0].span, "write the exponent as a literal, e.g. `x.pow(3)`")
        return evolve(e, receiver=recv, args=args, ty=sig.result)

    def _no_method(self, e: ast.MethodCall, recv: ast.Expr) -> ast.MethodCall:
        args = tuple(self.need_known(self.expr(a)) for a in e.args)
        if recv.ty is not _ERR:
            self.env.error(f"no method named `{e.method}` found for type `{_show(recv.ty)}` "
                           "in the current scope", e.span)
        return evolve(e, receiver=recv, args=args, ty=_ERR)

    def args(self, args: tuple[ast.Expr, ...], params: tuple[AnyTy, ...], span: Span,
             what: str) -> tuple[ast.Expr, ...]:
        """Arguments checked against parameter types (extra ones typed on their own)."""
        if len(args) != len(params):
            self._arity(span, what, len(params), len(args))
        out: list[ast.Expr] = []
        for i, a in enumerate(args):
            if i < len(params):
                p = params[i]
                out.append(self.coerce(self.expr(a, concrete(p)), p))
            else:
                out.append(self.need_known(self.expr(a)))
        return tuple(out)

    def _arity(self, span: Span, what: str, want: int, got: int) -> None:
        def n(k: int) -> str:
            return f"{k} argument" + ("" if k == 1 else "s")
        self.env.error(f"this {what} takes {n(want)} but {n(got)} "
                       f"{'was' if got == 1 else 'were'} supplied", span)

    def call(self, e: ast.Call, hint: Type | None = None) -> ast.Call:
        sig = self.env.fns.get(e.func)
        if sig is not None:
            if sig.kernel:
                self.env.error(f"kernel `{e.func}` cannot be called", e.span,
                               "a `#[kernel]` function is an entry point; move the shared "
                               "code into a helper `fn`")
                return evolve(e, args=tuple(self.need_known(self.expr(a)) for a in e.args),
                               ty=_ERR)
            self.calls.append((e.func, e.span))
            return evolve(e, args=self.args(e.args, sig.params, e.span, "function"),
                           ty=sig.ret)
        if e.func == atomics.FENCE:
            return atomics.check_fence(self, e)
        if e.func in PRELUDE_FUNCTIONS:
            ret = PRELUDE_FUNCTIONS[e.func]
            args = self.args(e.args, (), e.span, "function")
            if e.func == BARRIER:
                if self.fn is None or not self.fn.kernel:
                    self.env.error("`sync_threads()` can only be called in a kernel", e.span,
                                   "a barrier in a helper would hide it from the uniformity "
                                   "check; call it in the `#[kernel]` function")
                else:
                    self.barriers.append(e.span)
            return evolve(e, args=args, ty=UNIT if ret is None else ret)
        if e.func in WAVE_FUNCTIONS:
            return check_wave_call(self, e, hint)
        self.env.error(f"cannot find function `{e.func}` in this scope", e.span)
        return evolve(e, args=tuple(self.need_known(self.expr(a)) for a in e.args), ty=_ERR)

    def assoc_call(self, e: ast.AssocCall) -> ast.AssocCall:
        sig = ASSOC_FUNCTIONS.get((e.scalar, e.name))
        if sig is None:
            self.env.error(f"no function or associated item named `{e.name}` found for type "
                           f"`{e.scalar}` in the current scope", e.span)
            return evolve(e, args=tuple(self.need_known(self.expr(a)) for a in e.args),
                           ty=_ERR)
        return evolve(e, args=self.args(e.args, sig.params, e.span, "function"),
                       ty=sig.result)

    # -------------------------------------------------------------- arrays

    def array_len(self, e: ast.Expr) -> tuple[ast.Expr, int | None]:
        """An array length: an integer literal or a `usize` const, at least 1 and at most
        `array_limit` (docs/language.md "Limits")."""
        n: int | None = None
        if isinstance(e, ast.IntLit) and e.suffix in (None, Scalar.USIZE):
            typed: ast.Expr = evolve(e, ty=Scalar.USIZE)
            n = e.value
        elif isinstance(e, ast.Name) and self.env.const_types.get(e.ident) is Scalar.USIZE:
            typed = evolve(e, kind=NameKind.CONST, ty=Scalar.USIZE)
            value = self.env.const_values.get(e.ident)
            if value is None:
                return typed, None  # the const has an error of its own
            assert isinstance(value, int)
            n = value
        else:
            self.env.error("array length must be an integer literal or a `usize` const",
                           e.span)
            return evolve(e, ty=_ERR), None
        if n < 1:
            self.env.error(f"array length must be at least 1, found {n}", e.span)
            return typed, None
        if (limit := self.array_limit) is not None and n > limit:
            self.env.error(f"local array of {n} elements; the limit is {limit} "
                           "(docs/language.md \"Limits\")", e.span)
            return typed, None
        return typed, n

    def array_repeat(self, e: ast.ArrayRepeat, hint: Type | None) -> ast.ArrayRepeat:
        length, n = self.array_len(e.len)
        if isinstance(hint, ArrayTy):
            value = self.coerce(self.expr(e.value, hint.elem), hint.elem)
        else:
            value = self.need_known(self.expr(e.value))
        return evolve(e, value=value, len=length, ty=self._array_ty(value, n))

    def array_list(self, e: ast.ArrayList, hint: Type | None) -> ast.ArrayList:
        elems = [self.expr(x, hint.elem if isinstance(hint, ArrayTy) else None)
                 for x in e.elems]
        want: AnyTy | None = hint.elem if isinstance(hint, ArrayTy) else None
        if want is None:
            want = next((x.ty for x in elems if not isinstance(x.ty, Infer) and x.ty is not
                         NEVER), None)
        if want is None:
            first = self.need_known(elems[0])
            elems[0] = first
            want = first.ty
        assert want is not None
        typed = tuple(self.coerce(x, want) for x in elems)
        return evolve(e, elems=typed, ty=self._array_ty(typed[0], len(typed)))

    def _array_ty(self, elem: ast.Expr, n: int | None) -> AnyTy:
        t = elem.ty
        if t is _ERR or n is None:
            return _ERR
        if not isinstance(t, Scalar):
            self.env.error(f"array elements must be scalars, found `{_show(t)}`", elem.span)
            return _ERR
        return ArrayTy(t, n)


def _show(t: AnyTy | None) -> str:
    return t.value if isinstance(t, Infer) else str(t)
