"""The walk behind `constructs.module_constructs`: one pass over a checked module's AST that
names every construct of `constructs.CONSTRUCTS` it contains, with the context each needs
(enclosing loops and whether they hold barriers, the function kind, an `if` above).

Only the checked tree is read (names resolved to locals, parameters, consts or shared arrays;
every expression typed), never the generator's bookkeeping."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.features import children
from rgpu_fuzz.lang.methods import WAVE_FUNCTIONS
from rgpu_fuzz.lang.types import ArrayTy, Special
from rgpu_fuzz.model.scalars import Scalar


@dataclass
class _Fn:
    """What the visitor knows about the function it is in."""

    fn: ast.Fn
    params: set[int] = field(default_factory=set)
    mut_params: set[int] = field(default_factory=set)
    arrays: set[int] = field(default_factory=set)
    barrier_kernel: bool = False


def _has_barrier(n: object) -> bool:
    return any(isinstance(c, ast.Call) and c.func == "sync_threads" for c in _walk(n))


def _walk(n: object) -> Iterator[object]:
    stack = [n]
    while stack:
        x = stack.pop()
        yield x
        stack += children(x)


def _touches_shared(fn: ast.Fn) -> bool:
    return any(isinstance(n, ast.Name) and n.kind is ast.NameKind.SHARED for n in _walk(fn.body))


class _Visitor:
    """One walk over a checked module; `found` collects construct names."""

    def __init__(self, module: ast.Module) -> None:
        self.found: set[str] = set()
        self.fns = module.fns()
        self.reachable = self._reachable()
        """Kernels and the helpers they call, directly or not: a helper no kernel calls is
        lowered but never runs, so its constructs do not count."""
        self.shared_helpers = {n for n, f in self.fns.items() if not f.kernel
                               and self._reaches_shared(f, set())}
        self.mut_helpers = {n for n, f in self.fns.items() if any(p.mutable for p in f.params)}
        self._names: set[str] = set()   # names bound so far in the current function
        self._under_if = False           # inside an `if` statement's branch
        self._seen_barrier = False       # a barrier stands earlier in the current kernel
        self._in_loop = False            # inside a loop body

    def _reachable(self) -> set[str]:
        todo = [n for n, f in self.fns.items() if f.kernel]
        seen = set(todo)
        while todo:
            for c in _walk(self.fns[todo.pop()].body):
                if isinstance(c, ast.Call) and c.func in self.fns and c.func not in seen:
                    seen.add(c.func)
                    todo.append(c.func)
        return seen

    def _reaches_shared(self, fn: ast.Fn, seen: set[str]) -> bool:
        if _touches_shared(fn):
            return True
        seen.add(fn.name)
        return any(isinstance(c, ast.Call) and c.func in self.fns and c.func not in seen
                   and self._reaches_shared(self.fns[c.func], seen) for c in _walk(fn.body))

    def add(self, name: str) -> None:
        self.found.add(name)

    # ------------------------------------------------------------------ items
    def items(self, module: ast.Module) -> None:
        shared = [i for i in module.items if isinstance(i, ast.Shared)]
        consts = {i.name for i in module.items if isinstance(i, ast.Const)}
        kernels = [i for i in module.items if isinstance(i, ast.Fn) and i.kernel]
        if len(kernels) > 1:
            self.add("item:second-kernel")
        if len(shared) > 1:
            self.add("item:shared-several")
        for item in module.items:
            match item:
                case ast.Const(ty=ty, value=v):
                    self.add("item:const")
                    if ty.scalar.is_float:
                        self.add("item:const-float")
                    if any(isinstance(n, ast.Name) and n.ident in consts for n in _walk(v)):
                        self.add("item:const-of-const")
                    self.expr_tree(v, None)
                case ast.Shared(elem=elem, len=length):
                    self.add("item:shared")
                    if isinstance(length, ast.Name):
                        self.add("item:shared-len-const")
                    if elem is Scalar.BOOL or elem.bits < 32:
                        self.add("item:shared-subword")
                    if elem.bits == 64:
                        self.add("item:shared-64bit")
                    if elem.is_float:
                        self.add("item:shared-float")
                case ast.Fn() as fn if fn.name in self.reachable:
                    self.function(fn)

    def function(self, fn: ast.Fn) -> None:
        st = _Fn(fn, barrier_kernel=fn.kernel and _has_barrier(fn.body))
        self._seen_barrier = False
        self._under_if = False
        self._names = {p.name for p in fn.params}
        for p in fn.params:
            assert p.binding is not None
            st.params.add(p.binding)
            if p.mutable:
                st.mut_params.add(p.binding)
        if fn.kernel:
            if any(isinstance(p.ty, ast.ScalarType) for p in fn.params):
                self.add("item:kernel-scalar-param")
        else:
            self._helper_item(fn)
        self.stmts(fn.body, st, loops=(), barrier_loop=False)

    def _helper_item(self, fn: ast.Fn) -> None:
        self.add("item:helper")
        if fn.ret is None:
            self.add("item:helper-unit")
        if fn.inline_never:
            self.add("item:helper-inline-never")
        if any(p.mutable for p in fn.params):
            self.add("item:helper-mut-param")
        if any(isinstance(p.ty, ast.ScalarType) and p.ty.scalar is Scalar.BOOL
               for p in fn.params):
            self.add("item:helper-bool-param")
        for n in _walk(fn.body):
            match n:
                case ast.Call(func=f) if f in self.fns:
                    self.add("helper:calls-helper")
                    if f in self.shared_helpers:
                        self.add("helper:calls-shared-helper")
                case ast.Call(func=f) if f in ast.PRELUDE_FUNCTIONS:
                    self.add("helper:prelude")
                case ast.While() | ast.Loop() | ast.For():
                    self.add("helper:loop")
                    if any(isinstance(r, ast.Return) for r in _walk(n)):
                        self.add("helper:return-in-loop")
                case ast.Return():
                    self.add("helper:early-return")
                case ast.Let(init=ast.ArrayRepeat() | ast.ArrayList()):
                    self.add("helper:local-array")
                case ast.Assign(target=ast.Index(base=ast.Name(kind=ast.NameKind.SHARED)),
                                op=op):
                    self.add("helper:shared-write")
                    if op is not None:
                        self.add("helper:shared-compound")
                case ast.Index(base=ast.Name(kind=ast.NameKind.SHARED)):
                    self.add("helper:shared-read")
                case ast.MethodCall(receiver=ast.Name(kind=ast.NameKind.SHARED), method="len"):
                    self.add("helper:shared-len")

    # ------------------------------------------------------------- statements
    def stmts(self, block: ast.Block, st: _Fn, loops: tuple[object, ...],
              barrier_loop: bool) -> None:
        for s in block.stmts:
            self.stmt(s, st, loops, barrier_loop)
        tail = block.tail
        if isinstance(tail, ast.If | ast.BlockExpr) and tail.ty in (Special.UNIT, Special.NEVER):
            self._expr_stmt(tail, st, loops, barrier_loop)  # `if` ending a block: a statement
        elif tail is not None:
            self.expr_tree(tail, st)

    def stmt(self, s: ast.Stmt, st: _Fn, loops: tuple[object, ...], barrier_loop: bool) -> None:
        match s:
            case ast.Let(mutable=mut, ty=ty, init=init, binding=binding):
                self._let(s, st, mut, ty, init, binding)
                self.expr_tree(init, st)
            case ast.Assign(target=target, value=value, op=op):
                self._assign(target, op, st)
                self.expr_tree(target, st)
                self.expr_tree(value, st)
            case ast.ExprStmt(expr=e):
                self._expr_stmt(e, st, loops, barrier_loop)
            case ast.While(cond=c, body=body):
                self.add("stmt:while")
                self._condition(c, st)
                self._loop_body(s, body, st, loops, barrier_loop)
            case ast.Loop(body=body):
                self.add("stmt:loop")
                self._loop_body(s, body, st, loops, barrier_loop)
            case ast.For():
                self._for(s, st, loops, barrier_loop)
            case ast.Break() | ast.Continue():
                self._exit(s, st, loops, barrier_loop)
            case ast.Return(value=v):
                if st.fn.kernel:
                    self.add("stmt:return-kernel")
                    if loops:
                        self.add("stmt:return-in-kernel-loop")
                    if barrier_loop:
                        self.add("gpu:return-in-barrier-loop")
                    if self._seen_barrier:
                        self.add("gpu:return-after-barrier")
                if v is not None:
                    self.expr_tree(v, st)

    def _let(self, s: ast.Let, st: _Fn, mut: bool, ty: object, init: ast.Expr,
             binding: int | None) -> None:
        if isinstance(init.ty, ArrayTy):
            if binding is not None:
                st.arrays.add(binding)
            self.add("stmt:let-array-list" if isinstance(init, ast.ArrayList)
                     else "stmt:let-array-repeat")
        else:
            self.add("stmt:let")
        if mut:
            self.add("stmt:let-mut")
        if ty is None:
            self.add("stmt:let-inferred")
        if s.name in self._names:
            self.add("stmt:shadowing")
        self._names.add(s.name)

    def _assign(self, target: ast.Expr, op: ast.BinOp | None, st: _Fn) -> None:
        kind = "compound" if op is not None else "assign"
        match target:
            case ast.Name(binding=b) if b in st.mut_params:
                where = "mut-param"
                if not st.fn.kernel:
                    self.add("helper:assign-mut-param")
            case ast.Name():
                where = "local"
            case ast.Index(base=ast.Name(kind=ast.NameKind.SHARED)):
                where = "shared"
            case ast.Index(base=ast.Name(binding=b)) if b in st.params:
                where = "slice"
                if self._under_if and st.fn.kernel:
                    self.add("gpu:guarded-output")
            case _:
                where = "local-array"
        self.add(f"{kind}:{where}")

    def _expr_stmt(self, e: ast.Expr, st: _Fn, loops: tuple[object, ...],
                   barrier_loop: bool) -> None:
        match e:
            case ast.Call(func="sync_threads"):
                self.add("gpu:barrier")
                self._seen_barrier = True
            case ast.Call(func=f, args=args):
                self.add("stmt:call")
                for a in args:
                    self.expr_tree(a, st)
                if f in self.fns:
                    self._called(f, st)
            case ast.If():
                self._if_stmt(e, st, loops, barrier_loop, first=True)
            case ast.BlockExpr(block=blk, unsafe=u):
                self.add("stmt:unsafe-block" if u else "stmt:block")
                self.stmts(blk, st, loops, barrier_loop)
            case _:
                self.expr_tree(e, st)

    def _if_stmt(self, e: ast.If, st: _Fn, loops: tuple[object, ...], barrier_loop: bool,
                 first: bool) -> None:
        if first:
            self.add("stmt:if")
        self._condition(e.cond, st)
        if st.barrier_kernel and _has_barrier(e.then):
            self.add("gpu:barrier-in-if")
        outer, self._under_if = self._under_if, True
        self.stmts(e.then, st, loops, barrier_loop)
        if isinstance(e.else_, ast.If):
            self.add("stmt:else-if")
            self._if_stmt(e.else_, st, loops, barrier_loop, first=False)
        elif e.else_ is not None:
            self.add("stmt:if-else")
            if st.barrier_kernel and _has_barrier(e.else_):
                self.add("gpu:barrier-in-else")
            self.stmts(e.else_, st, loops, barrier_loop)
        self._under_if = outer

    def _for(self, s: ast.For, st: _Fn, loops: tuple[object, ...], barrier_loop: bool) -> None:
        self.add("stmt:for-inclusive" if s.inclusive else "stmt:for")
        if isinstance(s.end, ast.AssocConst) and s.end.name == "MAX" and s.inclusive:
            self.add("stmt:for-to-max")
        if isinstance(s.start.ty, Scalar) and s.start.ty.is_signed:
            self.add("stmt:for-signed")
        if any((isinstance(n, ast.Name) and n.kind is ast.NameKind.LOCAL)
               or isinstance(n, ast.Call | ast.Index) for n in _walk(s.end)):
            self.add("stmt:for-computed-end")
        self.expr_tree(s.start, st)
        self.expr_tree(s.end, st)
        self._loop_body(s, s.body, st, loops, barrier_loop)

    def _loop_body(self, s: ast.Stmt, body: ast.Block, st: _Fn, loops: tuple[object, ...],
                   barrier_loop: bool) -> None:
        has = st.barrier_kernel and _has_barrier(body)
        if has:
            word = {ast.For: "for", ast.While: "while", ast.Loop: "loop"}[type(s)]
            self.add(f"gpu:barrier-in-{word}")
            if any(_has_barrier(outer) for outer in loops):
                self.add("gpu:barrier-in-nested-loop")
        outer, self._in_loop = self._in_loop, True
        self.stmts(body, st, (*loops, s), has)
        self._in_loop = outer

    def _exit(self, s: ast.Stmt, st: _Fn, loops: tuple[object, ...], barrier_loop: bool) -> None:
        word = "break" if isinstance(s, ast.Break) else "continue"
        if not loops:
            return
        inner = loops[-1]
        kind = {ast.For: "for", ast.While: "while", ast.Loop: "loop"}[type(inner)]
        self.add(f"stmt:{word}-{kind}")
        if word == "break" and len(loops) > 1:
            self.add("stmt:break-inner-loop")
        if barrier_loop:
            self.add(f"gpu:{word}-in-barrier-loop")
        elif st.barrier_kernel:
            self.add(f"gpu:{word}-in-region-loop")

    def _called(self, f: str, st: _Fn) -> None:
        if st.barrier_kernel:
            self.add("gpu:call-in-barrier-kernel")
            if f in self.shared_helpers:
                self.add("gpu:shared-helper-in-barrier-kernel")

    def _condition(self, c: ast.Expr, st: _Fn) -> None:
        for n in _walk(c):
            if isinstance(n, ast.Call) and n.func in self.fns:
                self.add("expr:call-in-condition")
                if n.func in self.mut_helpers:
                    self.add("expr:call-mut-param-in-condition")
            if isinstance(n, ast.Index) and isinstance(n.base, ast.Name) \
                    and n.base.kind is ast.NameKind.SHARED:
                self.add("expr:shared-in-condition")
        self.expr_tree(c, st)

    # ------------------------------------------------------------ expressions
    def expr_tree(self, root: ast.Expr, st: _Fn | None) -> None:
        """Every expression node under `root` (statements inside block expressions are
        visited as statements)."""
        stack: list[tuple[object, bool]] = [(root, False)]
        while stack:
            n, in_index = stack.pop()
            if isinstance(n, ast.Block):
                if st is not None:
                    self.stmts(n, st, (), False)
                continue
            self._expr(n, st, in_index)
            if isinstance(n, ast.Index):
                stack.append((n.base, in_index))
                stack.append((n.index, True))
                continue
            if isinstance(n, ast.If) and st is not None:
                self._condition(n.cond, st)
                stack += [(n.then, in_index)] + ([(n.else_, in_index)] if n.else_ else [])
                continue
            stack += [(c, in_index) for c in children(n)]

    def _wave(self, f: str) -> None:
        """A wave function, and where it stands (`generators/waves.py`)."""
        self.add(f"wave:{f}")
        if not WAVE_FUNCTIONS[f].collective:
            return
        if self._under_if:
            self.add("wave:in-if")
        if self._in_loop:
            self.add("wave:in-loop")
        if self._seen_barrier:
            self.add("wave:after-barrier")

    def _expr(self, n: object, st: _Fn | None, in_index: bool) -> None:
        match n:
            case ast.If(else_=e):
                self.add("expr:if")
                if isinstance(e, ast.If):
                    self.add("expr:else-if")
            case ast.BlockExpr(unsafe=u):
                self.add("expr:unsafe-block" if u else "expr:block")
            case ast.ArrayRepeat():
                self.add("expr:array-repeat")
            case ast.ArrayList():
                self.add("expr:array-list")
            case ast.Index(base=base):
                if in_index:
                    self.add("expr:index-in-index")
                self.add(f"expr:index-{self._index_kind(base, st)}")
            case ast.Call(func=f) if self.fns.get(f) is not None:
                self.add("expr:call")
                if in_index:
                    self.add("expr:call-in-index")
                if st is not None:
                    self._called(f, st)
            case ast.Call(func=f) if f in WAVE_FUNCTIONS:
                self._wave(f)
            case ast.Binary(op=ast.BinOp.DIV, lhs=ast.Call(func="thread_idx_x"),
                            rhs=ast.Call(func="wave_size")):
                self.add("wave:index-of-wave")
            case ast.Binary(op=ast.BinOp.LAND | ast.BinOp.LOR, rhs=rhs):
                if any(isinstance(c, ast.Call) and c.func in self.fns for c in _walk(rhs)):
                    self.add("expr:call-in-short-circuit")
            case ast.Binary(op=op, lhs=lhs, rhs=rhs):
                self._binary(op, lhs, rhs)
            case ast.Unary(op=op, operand=x):
                if op is ast.UnOp.NEG:
                    self.add("expr:neg-float" if x.ty in (Scalar.F32, Scalar.F64)
                             else "expr:neg-int")
                else:
                    self.add("expr:not-bool" if x.ty is Scalar.BOOL else "expr:not-int")
            case ast.Cast(expr=inner):
                if isinstance(inner, ast.Cast):
                    self.add("expr:cast-chain")
                if inner.ty is Scalar.BOOL:
                    self.add("expr:cast-from-bool")
            case ast.AssocConst(name=name):
                self.add(f"expr:assoc-{name}")
            case ast.AssocCall(scalar=s, name="from_bits"):
                self.add(f"expr:from_bits-{s}")
            case ast.MethodCall(receiver=r, method=m):
                self._method(r, m, st)

    def _index_kind(self, base: ast.Expr, st: _Fn | None) -> str:
        if isinstance(base, ast.Name) and base.kind is ast.NameKind.SHARED:
            return "shared"
        if st is not None and isinstance(base, ast.Name) and base.binding in st.params:
            slice_ty = next(p.ty for p in st.fn.params if p.binding == base.binding)
            return "output" if isinstance(slice_ty, ast.SliceType) and slice_ty.mutable \
                else "input"
        return "local"

    def _binary(self, op: ast.BinOp, lhs: ast.Expr, rhs: ast.Expr) -> None:
        if op in (ast.BinOp.SHL, ast.BinOp.SHR) and lhs.ty != rhs.ty:
            self.add("expr:shift-mixed")
        if op in (ast.BinOp.AND, ast.BinOp.OR, ast.BinOp.XOR) and lhs.ty is Scalar.BOOL:
            self.add("expr:bitwise-bool")
        if op is ast.BinOp.REM and lhs.ty in (Scalar.F32, Scalar.F64):
            self.add("expr:float-rem")

    def _method(self, r: ast.Expr, m: str, st: _Fn | None) -> None:
        if isinstance(r, ast.MethodCall):
            self.add("expr:method-chain")
        if m == "len":
            if isinstance(r, ast.Name) and r.kind is ast.NameKind.SHARED:
                self.add("expr:len-shared")
            elif isinstance(r.ty, ArrayTy):
                self.add("expr:len-array")
            else:
                self.add("expr:len-slice")
        elif m in ("min", "max", "abs"):
            self.add(f"method:{m}-{'float' if r.ty in (Scalar.F32, Scalar.F64) else 'int'}")


def module_constructs(module: ast.Module) -> set[str]:
    """The constructs of a checked module (`CheckedModule.module`: names resolved, types set)."""
    v = _Visitor(module)
    v.items(module)
    return v.found


__all__ = ["module_constructs"]
