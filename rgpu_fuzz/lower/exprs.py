"""Expressions → LLVM IR, with exactly the semantics of docs/language.md (Rust release).

Rules kept everywhere here:
* integer `+ - *` are plain `add/sub/mul` — no `nsw`/`nuw`, since wrapping is defined;
* no fast-math flags on any float instruction (no contraction, NaN and signed zero kept);
* every operation Rust panics on (`/ %` by zero or `MIN / -1`, an index out of bounds) is
  guarded by an explicit check that branches to a trap path, so no `udiv`/`sdiv`/`gep` ever
  sees an operand for which LLVM would make it poison or undefined behaviour.
"""

from __future__ import annotations

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.ast import BinOp, NameKind, UnOp
from rgpu_fuzz.lang.literals import float_literal_value
from rgpu_fuzz.lang.source import Span
from rgpu_fuzz.lang.types import ArrayTy, SliceTy, Special, Type
from rgpu_fuzz.lower.context import (
    TCTX_BDIM,
    TCTX_BID,
    TCTX_GDIM,
    TCTX_TID,
    FnState,
    LowerError,
    shared_ptr,
    storage_type,
)
from rgpu_fuzz.lower.irapi import ir
from rgpu_fuzz.lower.values import (
    I1,
    I64,
    byte_size,
    int_const,
    load_scalar,
    memcpy,
    memory_type,
    scalar_const,
    store_scalar,
    type_suffix,
    value_type,
)
from rgpu_fuzz.lower.waves import WAVE_OPS, lower_wave_call
from rgpu_fuzz.model.outcome import TrapKind
from rgpu_fuzz.model.scalars import Scalar

_PRELUDE_WORD = {"thread_idx": TCTX_TID, "block_idx": TCTX_BID, "block_dim": TCTX_BDIM,
                 "grid_dim": TCTX_GDIM}

_ICMP = {BinOp.EQ: "==", BinOp.NE: "!=", BinOp.LT: "<", BinOp.LE: "<=", BinOp.GT: ">",
         BinOp.GE: ">="}
# Rust's float comparisons: ordered, except `!=`, which is true when either side is NaN.
_FCMP = {BinOp.EQ: "oeq", BinOp.NE: "une", BinOp.LT: "olt", BinOp.LE: "ole", BinOp.GT: "ogt",
         BinOp.GE: "oge"}


def scalar_of(t: Type | None) -> Scalar:
    assert isinstance(t, Scalar), f"expected a scalar type, got {t}"
    return t


class ExprLowerer:
    """Lowers expressions of one function body; `stmts.BodyLowerer` adds statements."""

    def __init__(self, st: FnState) -> None:
        self.st = st

    @property
    def b(self) -> ir.IRBuilder:
        return self.st.b

    # ------------------------------------------------------------------ entry points
    def block_value(self, block: ast.Block) -> ir.Value | None:  # implemented in stmts
        raise NotImplementedError

    def block_into(self, block: ast.Block, dst: ir.Value) -> None:  # implemented in stmts
        raise NotImplementedError

    def expr(self, e: ast.Expr) -> ir.Value | None:
        """The SSA value of a scalar expression (None for `()` and `!`)."""
        if isinstance(e.ty, ArrayTy):
            raise LowerError("array value in scalar position")
        match e:
            case ast.IntLit(value=v):
                return int_const(scalar_of(e.ty), v)
            case ast.FloatLit(text=text):
                s = scalar_of(e.ty)
                return scalar_const(s, float_literal_value(text, s))
            case ast.BoolLit(value=v):
                return ir.Constant(I1, int(v))
            case ast.Name():
                return self._name(e)
            case ast.Unary():
                return self._unary(e)
            case ast.Binary():
                return self._binary(e)
            case ast.Cast():
                return self._cast(e)
            case ast.Index():
                ptr, elem = self.element_ptr(e)
                return load_scalar(self.b, ptr, elem)
            case ast.MethodCall():
                return self._method(e)
            case ast.Call():
                return self._call(e)
            case ast.AssocCall(name="from_bits", args=(arg,)):
                return self.b.bitcast(self.expr(arg), value_type(scalar_of(e.ty)))
            case ast.AssocConst(scalar=s, name=name):
                return int_const(s, s.min_value if name == "MIN" else s.max_value)
            case ast.If():
                return self._if_value(e)
            case ast.BlockExpr(block=block):
                return self.block_value(block)
        raise LowerError(f"expression {type(e).__name__}")

    # ------------------------------------------------------------------ names and places
    def _name(self, e: ast.Name) -> ir.Value:
        s = scalar_of(e.ty)
        if e.kind is NameKind.CONST:
            return scalar_const(s, self.st.ms.consts[e.ident])  # type: ignore[arg-type]
        assert e.binding is not None, e
        return load_scalar(self.b, self.st.slot(e.binding, s), s)

    def array_place(self, base: ast.Expr) -> tuple[ir.Value, ir.Value, Scalar]:
        """Pointer to the first element, length (i64) and element type of an indexable."""
        ty = base.ty
        if isinstance(ty, SliceTy):
            assert isinstance(base, ast.Name) and base.binding is not None, base
            data, length = self.st.slices[base.binding]
            return data, length, ty.elem
        assert isinstance(ty, ArrayTy), base
        if isinstance(base, ast.Name) and base.kind is NameKind.SHARED:
            ptr, _ = shared_ptr(self.st, base.ident)
        elif isinstance(base, ast.Name):
            assert base.binding is not None
            ptr = self.st.slot(base.binding, ty)
        else:
            ptr = self.st.temp(storage_type(ty), "arr.tmp")
            self.array_into(base, ptr)
        return ptr, ir.Constant(I64, ty.len), ty.elem

    def element_ptr(self, e: ast.Index) -> tuple[ir.Value, Scalar]:
        """Evaluate base then index, check bounds (trap), give the element's address."""
        data, length, elem = self.array_place(e.base)
        index = self.expr(e.index)
        self.st.trap_if(self.b.icmp_unsigned(">=", index, length), TrapKind.OUT_OF_BOUNDS,
                        e.span)
        return self.b.gep(data, [index], source_etype=memory_type(elem)), elem

    def array_into(self, e: ast.Expr, dst: ir.Value) -> None:
        """Write the value of an array-typed expression to `dst`."""
        ty = e.ty
        assert isinstance(ty, ArrayTy), e
        elem_t = memory_type(ty.elem)
        match e:
            case ast.ArrayList(elems=elems):
                for i, x in enumerate(elems):
                    v = self.expr(x)
                    store_scalar(self.b, v, self.b.gep(dst, [ir.Constant(I64, i)],
                                                       source_etype=elem_t), ty.elem)
            case ast.ArrayRepeat(value=x):
                v = self.expr(x)
                self._fill(dst, v, ty)
            case ast.Name():
                src, _, _ = self.array_place(e)
                size = ty.len * byte_size(ty.elem)
                self.b.call(memcpy(self.st.ms.intrinsics, dst, src),
                            [dst, src, ir.Constant(I64, size), ir.Constant(I1, 0)])
            case ast.If():
                self._if(e, lambda blk: self.block_into(blk, dst))
            case ast.BlockExpr(block=block):
                self.block_into(block, dst)
            case _:
                raise LowerError(f"array expression {type(e).__name__}")

    def _fill(self, dst: ir.Value, v: ir.Value, ty: ArrayTy) -> None:
        elem_t = memory_type(ty.elem)
        if ty.len <= 8:
            for i in range(ty.len):
                store_scalar(self.b, v, self.b.gep(dst, [ir.Constant(I64, i)],
                                                   source_etype=elem_t), ty.elem)
            return
        counter = self.st.temp(I64, "fill.i")
        self.b.store(ir.Constant(I64, 0), counter)
        head = self.st.fn.append_basic_block("fill.head")
        body = self.st.fn.append_basic_block("fill.body")
        done = self.st.fn.append_basic_block("fill.done")
        self.b.branch(head)
        self.b.position_at_end(head)
        i = self.b.load(counter, typ=I64)
        self.b.cbranch(self.b.icmp_unsigned("<", i, ir.Constant(I64, ty.len)), body, done)
        self.b.position_at_end(body)
        store_scalar(self.b, v, self.b.gep(dst, [i], source_etype=elem_t), ty.elem)
        self.b.store(self.b.add(i, ir.Constant(I64, 1)), counter)
        self.b.branch(head)
        self.b.position_at_end(done)

    # ------------------------------------------------------------------ control flow values
    def _if(self, e: ast.If, arm) -> None:  # type: ignore[no-untyped-def]
        """Branch on `e.cond`; `arm(block)` lowers each branch; else-if chains recurse."""
        cond = self.expr(e.cond)
        then_bb = self.st.fn.append_basic_block("if.then")
        else_bb = self.st.fn.append_basic_block("if.else")
        end_bb = self.st.fn.append_basic_block("if.end")
        self.b.cbranch(cond, then_bb, else_bb)
        self.b.position_at_end(then_bb)
        arm(e.then)
        if not self.b.block.is_terminated:
            self.b.branch(end_bb)
        self.b.position_at_end(else_bb)
        if isinstance(e.else_, ast.If):
            self._if(e.else_, arm)
        elif e.else_ is not None:
            arm(e.else_)
        if not self.b.block.is_terminated:
            self.b.branch(end_bb)
        self.b.position_at_end(end_bb)

    def _if_value(self, e: ast.If) -> ir.Value | None:
        if not isinstance(e.ty, Scalar):
            self._if(e, self.block_value)
            if e.ty is Special.NEVER:
                self.b.unreachable()
                self.st.dead()
            return None
        s = e.ty
        slot = self.st.temp(memory_type(s), "if.val")

        def arm(block: ast.Block) -> None:
            v = self.block_value(block)
            if not self.b.block.is_terminated and v is not None:
                store_scalar(self.b, v, slot, s)

        self._if(e, arm)
        return load_scalar(self.b, slot, s)

    # ------------------------------------------------------------------ operators
    def _unary(self, e: ast.Unary) -> ir.Value:
        s = scalar_of(e.ty)
        v = self.expr(e.operand)
        if e.op is UnOp.NEG:
            return self.b.fneg(v) if s.is_float else self.b.sub(int_const(s, 0), v)
        if s is Scalar.BOOL:
            return self.b.xor(v, ir.Constant(I1, 1))
        return self.b.xor(v, int_const(s, -1))

    def _binary(self, e: ast.Binary) -> ir.Value:
        if e.op in (BinOp.LAND, BinOp.LOR):
            return self._short_circuit(e)
        s = scalar_of(e.lhs.ty)
        a = self.expr(e.lhs)
        c = self.expr(e.rhs)
        return self.apply(e.op, s, a, c, e.span, scalar_of(e.rhs.ty))

    def apply(self, op: BinOp, s: Scalar, a: ir.Value, c: ir.Value, span: Span,
              rhs_ty: Scalar) -> ir.Value:
        """`a op c` for operands of type `s` (also used by compound assignment)."""
        b = self.b
        if op in _ICMP:
            if s.is_float:
                return _fcmp(b, _FCMP[op], a, c)
            if s.is_signed:
                return b.icmp_signed(_ICMP[op], a, c)
            return b.icmp_unsigned(_ICMP[op], a, c)
        if s.is_float:
            fop = {BinOp.ADD: b.fadd, BinOp.SUB: b.fsub, BinOp.MUL: b.fmul, BinOp.DIV: b.fdiv,
                   BinOp.REM: b.frem}.get(op)
            if fop is None:
                raise LowerError(f"float operator {op}")
            return fop(a, c)
        match op:
            case BinOp.ADD:
                return b.add(a, c)
            case BinOp.SUB:
                return b.sub(a, c)
            case BinOp.MUL:
                return b.mul(a, c)
            case BinOp.AND:
                return b.and_(a, c)
            case BinOp.OR:
                return b.or_(a, c)
            case BinOp.XOR:
                return b.xor(a, c)
            case BinOp.SHL:
                return b.shl(a, self.shift_amount(s, c, rhs_ty))
            case BinOp.SHR:
                amount = self.shift_amount(s, c, rhs_ty)
                return b.ashr(a, amount) if s.is_signed else b.lshr(a, amount)
            case BinOp.DIV | BinOp.REM:
                return self.divide(op, s, a, c, span, wrapping=False)
        raise LowerError(f"integer operator {op}")

    def shift_amount(self, s: Scalar, amount: ir.Value, amount_ty: Scalar) -> ir.Value:
        """The amount's unsigned bits modulo the width: zext/trunc to `s`, then `and bits-1`
        (LangRef `shl`: an amount >= the width would be poison)."""
        target = value_type(s)
        if amount_ty.bits < s.bits:
            amount = self.b.zext(amount, target)
        elif amount_ty.bits > s.bits:
            amount = self.b.trunc(amount, target)
        return self.b.and_(amount, int_const(s, s.bits - 1))

    def divide(self, op: BinOp, s: Scalar, a: ir.Value, c: ir.Value, span: Span, *,
               wrapping: bool) -> ir.Value:
        """`/` or `%` with Rust's checks: zero traps; `MIN / -1` traps, or with `wrapping`
        gives `MIN` / `0` (LangRef `sdiv`: that case is undefined behaviour)."""
        b = self.b
        self.st.trap_if(b.icmp_unsigned("==", c, int_const(s, 0)), TrapKind.DIV_BY_ZERO, span)
        if not s.is_signed:
            return b.udiv(a, c) if op is BinOp.DIV else b.urem(a, c)
        overflow = b.and_(b.icmp_signed("==", a, int_const(s, s.min_value)),
                          b.icmp_signed("==", c, int_const(s, -1)))
        if not wrapping:
            self.st.trap_if(overflow, TrapKind.DIV_OVERFLOW, span)
            return b.sdiv(a, c) if op is BinOp.DIV else b.srem(a, c)
        safe = b.select(overflow, int_const(s, 1), c)
        # MIN / 1 == MIN and MIN % 1 == 0: exactly the wrapping results
        return b.sdiv(a, safe) if op is BinOp.DIV else b.srem(a, safe)

    def _short_circuit(self, e: ast.Binary) -> ir.Value:
        slot = self.st.temp(ir.IntType(8), "sc")
        lhs = self.expr(e.lhs)
        store_scalar(self.b, lhs, slot, Scalar.BOOL)
        rhs_bb = self.st.fn.append_basic_block("sc.rhs")
        end_bb = self.st.fn.append_basic_block("sc.end")
        if e.op is BinOp.LAND:
            self.b.cbranch(lhs, rhs_bb, end_bb)
        else:
            self.b.cbranch(lhs, end_bb, rhs_bb)
        self.b.position_at_end(rhs_bb)
        rhs = self.expr(e.rhs)
        if not self.b.block.is_terminated:
            store_scalar(self.b, rhs, slot, Scalar.BOOL)
            self.b.branch(end_bb)
        self.b.position_at_end(end_bb)
        return load_scalar(self.b, slot, Scalar.BOOL)

    def _cast(self, e: ast.Cast) -> ir.Value:
        src = scalar_of(e.expr.ty)
        v = self.expr(e.expr)
        return self.convert(v, src, e.to)

    def convert(self, v: ir.Value, src: Scalar, dst: Scalar) -> ir.Value:
        b = self.b
        t = value_type(dst)
        if src is dst:
            return v
        if src is Scalar.BOOL:
            return b.zext(v, t)
        if src.is_float and dst.is_float:
            return b.fpext(v, t) if dst.bits > src.bits else b.fptrunc(v, t)
        if src.is_float:
            # LangRef: llvm.fpto[su]i.sat saturates and maps NaN to 0, as Rust's `as` does
            kind = "fptosi" if dst.is_signed else "fptoui"
            name = f"llvm.{kind}.sat.{type_suffix(t)}.{type_suffix(v.type)}"
            return b.call(self.st.ms.intrinsics.get(name, t, [v.type]), [v])
        if dst.is_float:
            return b.sitofp(v, t) if src.is_signed else b.uitofp(v, t)
        if dst.bits < src.bits:
            return b.trunc(v, t)
        if dst.bits > src.bits:
            return b.sext(v, t) if src.is_signed else b.zext(v, t)
        return v

    # ------------------------------------------------------------------ calls
    def _call(self, e: ast.Call) -> ir.Value | None:
        if e.func == "sync_threads":
            self.st.ms.target.emit_barrier(self.st)
            return None
        if e.func == "fence" and e.func not in self.st.ms.helpers:
            from rgpu_fuzz.lower.atomics import lower_fence
            lower_fence(self, e)
            return None
        if e.func in WAVE_OPS:
            return lower_wave_call(self, e)
        kind, _, axis = e.func.rpartition("_")
        if kind in _PRELUDE_WORD and axis in ("x", "y", "z"):
            return self.st.tctx_word(_PRELUDE_WORD[kind] + "xyz".index(axis))
        fn = self.st.ms.helpers.get(e.func)
        if fn is None:
            raise LowerError(f"call of unknown function {e.func}")
        args = [self.expr(a) for a in e.args]
        result = self.b.call(fn, [*args, self.st.tctx, self.st.shared, self.st.trap_rec])
        self.st.propagate_trap()
        if e.ty is Special.NEVER:
            self.b.unreachable()
            self.st.dead()
        return None if isinstance(fn.function_type.return_type, ir.VoidType) else result

    def _method(self, e: ast.MethodCall) -> ir.Value:
        from rgpu_fuzz.lower.atomics import is_atomic, lower_atomic
        from rgpu_fuzz.lower.methods import lower_method

        if e.method == "len":
            ty = e.receiver.ty
            if isinstance(ty, ArrayTy):
                return ir.Constant(I64, ty.len)
            _, length, _ = self.array_place(e.receiver)
            return length
        if is_atomic(e):
            return lower_atomic(self, e)  # None for `store`, whose type is `()`
        return lower_method(self, e)


def _fcmp(b: ir.IRBuilder, pred: str, a: ir.Value, c: ir.Value) -> ir.Value:
    op = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[pred[1:]]
    if pred[0] == "u":
        return b.fcmp_unordered(op, a, c)
    return b.fcmp_ordered(op, a, c)


__all__ = ["ExprLowerer", "scalar_of"]
