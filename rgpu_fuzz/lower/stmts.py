"""Statements and blocks → LLVM IR, for code that one thread runs from start to end.

Locals are read and written through `FnState.slot`, which decides where a binding lives
(an alloca, or a per-thread frame in a kernel with barriers); loops push a `LoopTarget` so
`break`/`continue` reach the right place even when that place is outside this thread's code.
"""

from __future__ import annotations

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.types import ArrayTy, Special
from rgpu_fuzz.lower.context import BranchTarget, storage_type
from rgpu_fuzz.lower.exprs import ExprLowerer, scalar_of
from rgpu_fuzz.lower.irapi import ir
from rgpu_fuzz.lower.values import (
    I1,
    I64,
    byte_size,
    int_const,
    load_scalar,
    memcpy,
    store_scalar,
)


class BodyLowerer(ExprLowerer):
    """Lowers statements and blocks (and, through `ExprLowerer`, expressions)."""

    def block_value(self, block: ast.Block) -> ir.Value | None:
        for s in block.stmts:
            self.stmt(s)
        if block.tail is None:
            return None
        if isinstance(block.tail.ty, ArrayTy):
            self.array_into(block.tail, self.st.temp(storage_type(block.tail.ty), "discard"))
            return None
        return self.expr(block.tail)

    def block_into(self, block: ast.Block, dst: ir.Value) -> None:
        for s in block.stmts:
            self.stmt(s)
        assert block.tail is not None, block
        self.array_into(block.tail, dst)

    def stmt(self, s: ast.Stmt) -> None:
        match s:
            case ast.Let():
                self._let(s)
            case ast.Assign():
                self._assign(s)
            case ast.ExprStmt(expr=e):
                if isinstance(e.ty, ArrayTy):
                    self.array_into(e, self.st.temp(storage_type(e.ty), "discard"))
                else:
                    self.expr(e)
                    if e.ty is Special.NEVER and not self.b.block.is_terminated:
                        self.b.unreachable()
                        self.st.dead()
            case ast.While():
                self._while(s)
            case ast.Loop():
                self._loop(s)
            case ast.For():
                self._for(s)
            case ast.Break():
                self.st.loops[-1].emit_break(self.st)
                self.st.dead()
            case ast.Continue():
                self.st.loops[-1].emit_continue(self.st)
                self.st.dead()
            case ast.Return(value=v):
                value = None if v is None else self.expr(v)
                self.st.emit_return(value)
                self.st.dead()

    def _let(self, s: ast.Let) -> None:
        assert s.binding is not None, s
        ty = s.init.ty
        if isinstance(ty, ArrayTy):
            tmp = self.st.temp(storage_type(ty), "let.tmp")
            self.array_into(s.init, tmp)
            self._copy_array(self.st.slot(s.binding, ty), tmp, ty)
            return
        sc = scalar_of(ty)
        v = self.expr(s.init)
        store_scalar(self.b, v, self.st.slot(s.binding, sc), sc)

    def _copy_array(self, dst: ir.Value, src: ir.Value, ty: ArrayTy) -> None:
        size = ir.Constant(I64, ty.len * byte_size(ty.elem))
        self.b.call(memcpy(self.st.ms.intrinsics, dst, src),
                    [dst, src, size, ir.Constant(I1, 0)])

    def _assign(self, s: ast.Assign) -> None:
        target = s.target
        ty = target.ty
        if isinstance(ty, ArrayTy):
            assert isinstance(target, ast.Name) and target.binding is not None
            tmp = self.st.temp(storage_type(ty), "assign.tmp")
            self.array_into(s.value, tmp)
            self._copy_array(self.st.slot(target.binding, ty), tmp, ty)
            return
        sc = scalar_of(ty)
        # Rust evaluates the value before the place (Reference, "Assignment expressions";
        # "Compound assignment expressions" with primitive operands): value, index, bounds
        # check. Only traps make the order observable, and then the first trap wins.
        value = self.expr(s.value)
        if isinstance(target, ast.Index):
            ptr, _ = self.element_ptr(target)
        else:
            assert isinstance(target, ast.Name) and target.binding is not None, target
            ptr = self.st.slot(target.binding, sc)
        if s.op is not None:
            current = load_scalar(self.b, ptr, sc)
            value = self.apply(s.op, sc, current, value, s.span, scalar_of(s.value.ty))
        store_scalar(self.b, value, ptr, sc)

    def _while(self, s: ast.While) -> None:
        fn = self.st.fn
        head = fn.append_basic_block("while.head")
        body = fn.append_basic_block("while.body")
        done = fn.append_basic_block("while.end")
        self.b.branch(head)
        self.b.position_at_end(head)
        self.b.cbranch(self.expr(s.cond), body, done)
        self.b.position_at_end(body)
        self.st.loops.append(BranchTarget(done, head))
        self.block_value(s.body)
        self.st.loops.pop()
        if not self.b.block.is_terminated:
            self.b.branch(head)
        self.b.position_at_end(done)

    def _loop(self, s: ast.Loop) -> None:
        fn = self.st.fn
        body = fn.append_basic_block("loop.body")
        done = fn.append_basic_block("loop.end")
        self.b.branch(body)
        self.b.position_at_end(body)
        self.st.loops.append(BranchTarget(done, body))
        self.block_value(s.body)
        self.st.loops.pop()
        if not self.b.block.is_terminated:
            self.b.branch(body)
        self.b.position_at_end(done)

    def _for(self, s: ast.For) -> None:
        """`for i in a..b` / `a..=b`: the range is evaluated once; the inclusive form stops
        after `i == b` without incrementing, so `..=T::MAX` never overflows."""
        assert s.binding is not None, s
        sc = scalar_of(s.start.ty)
        start = self.expr(s.start)
        end = self.expr(s.end)
        var = self.st.slot(s.binding, sc)
        store_scalar(self.b, start, var, sc)
        fn = self.st.fn
        head = fn.append_basic_block("for.head")
        body = fn.append_basic_block("for.body")
        latch = fn.append_basic_block("for.latch")
        step = fn.append_basic_block("for.step")
        done = fn.append_basic_block("for.end")
        self.b.branch(head)
        self.b.position_at_end(head)
        i = load_scalar(self.b, var, sc)
        cmp = self.b.icmp_signed if sc.is_signed else self.b.icmp_unsigned
        self.b.cbranch(cmp("<=" if s.inclusive else "<", i, end), body, done)
        self.b.position_at_end(body)
        self.st.loops.append(BranchTarget(done, latch))
        self.block_value(s.body)
        self.st.loops.pop()
        if not self.b.block.is_terminated:
            self.b.branch(latch)
        self.b.position_at_end(latch)
        i = load_scalar(self.b, var, sc)
        if s.inclusive:
            self.b.cbranch(self.b.icmp_unsigned("==", i, end), done, step)
        else:
            self.b.branch(step)
        self.b.position_at_end(step)
        store_scalar(self.b, self.b.add(i, int_const(sc, 1)), var, sc)
        self.b.branch(head)
        self.b.position_at_end(done)
