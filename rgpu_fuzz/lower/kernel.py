"""A checked module → one LLVM module with one kernel entry (`lower_module`).

Helper `fn`s become internal LLVM functions (`noinline` for `#[inline(never)]`) that take the
thread context, the shared-memory base and the trap record after their own parameters; a
caller checks the trap record after every call. The entry follows the host ABI of
`HostTarget`; how threads of a block are run is explained in `rgpu_fuzz.lower.host`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.checker import CheckedModule
from rgpu_fuzz.lang.features import walk
from rgpu_fuzz.lang.types import ArrayTy
from rgpu_fuzz.lower.context import TCTX_BID, LowerError, ModuleState
from rgpu_fuzz.lower.exprs import scalar_of
from rgpu_fuzz.lower.host import (
    BROKE,
    CONTINUED,
    RETURNED,
    RUNNING,
    AllocaState,
    EntryState,
    StructuralLoop,
    barrier_marks,
    grid_loop,
    has_barrier,
    kernel_params,
    load_params,
    lower_thread_fn,
    param_slots,
)
from rgpu_fuzz.lower.host_waves import emit_wave_step, hoist_waves, is_wave_let
from rgpu_fuzz.lower.irapi import ir
from rgpu_fuzz.lower.stmts import BodyLowerer
from rgpu_fuzz.lower.targets import TargetHooks
from rgpu_fuzz.lower.values import (
    I8,
    I32,
    I64,
    PTR,
    VOID,
    Intrinsics,
    byte_size,
    int_const,
    load_scalar,
    store_scalar,
    value_type,
)
from rgpu_fuzz.model.kernel_abi import KernelParam
from rgpu_fuzz.model.scalars import Scalar


@dataclass(frozen=True)
class LoweredKernel:
    """LLVM IR text of one kernel and what a host needs to call it."""

    ir: str
    symbol: str
    params: tuple[KernelParam, ...]
    shared_bytes: int
    frame_bytes: int
    locations: tuple[tuple[int, int], ...]
    """Source (line, col) of each trap site, indexed by the trap record's location id."""
    uses_barrier: bool


class HelperState(AllocaState):
    """A helper fn: `return e` is `ret`; after a trap it returns a dummy value."""

    def emit_return(self, value: ir.Value | None) -> None:
        if value is None:
            self.b.ret_void()
        else:
            self.b.ret(value)

    def _emit_trap_exit(self) -> None:
        ret = self.fn.function_type.return_type
        if isinstance(ret, ir.VoidType):
            self.b.ret_void()
        else:
            self.b.ret(ir.Constant(ret, None))


def _declare_helper(ms: ModuleState, f: ast.Fn) -> ir.Function:
    params = []
    for p in f.params:
        if not isinstance(p.ty, ast.ScalarType):
            raise LowerError("helper with a non-scalar parameter")
        params.append(value_type(p.ty.scalar))
    ret = VOID if f.ret is None else value_type(f.ret.scalar)
    fnty = ir.FunctionType(ret, [*params, PTR, PTR, ms.target.global_ptr])
    fn = ir.Function(ms.module, fnty, name=f.name)
    fn.linkage = "internal"
    if f.inline_never:
        fn.attributes.add("noinline")
    return fn


def _define_helper(ms: ModuleState, f: ast.Fn) -> None:
    fn = ms.helpers[f.name]
    n = len(f.params)
    st = HelperState(ms, fn, fn.args[n], fn.args[n + 1], fn.args[n + 2])
    for p, arg in zip(f.params, fn.args[:n], strict=True):
        assert p.binding is not None and isinstance(p.ty, ast.ScalarType), p
        store_scalar(st.b, arg, st.slot(p.binding, p.ty.scalar), p.ty.scalar)
    value = BodyLowerer(st).block_value(f.body)
    if not st.b.block.is_terminated:
        st.emit_return(value)
    st.finish()


class StructuralLowerer(BodyLowerer):
    """Statements of a kernel with barriers at the uniform level (see `lower.host`)."""

    st: EntryState

    def __init__(self, st: EntryState, marks: dict[int, bool]) -> None:
        super().__init__(st)
        self.marks = marks
        self.wave_depth = 0
        """How many wave-uniform `if`s enclose the statement being lowered (`_wave_if`)."""
        """`barrier_marks` of the kernel's body (statements made here are not in it)."""

    def run(self, stmts: list[ast.Stmt]) -> None:
        pending: list[ast.Stmt] = []
        for s in stmts:
            known = self.marks.get(id(s))
            if has_barrier(s) if known is None else known:
                self._flush(pending)
                pending = []
                self._structural(s)
            else:
                pending.append(s)
        self._flush(pending)

    def _flush(self, stmts: list[ast.Stmt]) -> None:
        if stmts:
            def emit() -> None:
                for s in stmts:
                    self.stmt(s)

            self.st.region(emit)

    def _block_stmts(self, block: ast.Block) -> list[ast.Stmt]:
        tail = [] if block.tail is None else [ast.ExprStmt(expr=block.tail)]
        return [*block.stmts, *tail]

    def _uniform(self, cond: ast.Expr, park: int | None = None) -> ir.Value:
        """A condition every running thread evaluates. Block-uniform (`park` None): the
        first running thread's value. Wave-uniform (`park` a state): a thread whose value is
        false takes state `park`; the answer is whether any thread still runs."""
        def emit() -> None:
            v = self.expr(cond)
            frame = self.st.frame
            assert frame is not None
            store_scalar(self.b, v, self.b.gep(frame, [ir.Constant(I64, 1)],
                                               source_etype=I8), Scalar.BOOL)
            if park is not None:
                state = self.b.load(frame, typ=I8)
                self.b.store(self.b.select(v, state, ir.Constant(I8, park)), frame)

        self.st.region(emit)
        return self.st.first_running(read_cond=park is None)

    def _per_thread(self, s: ast.Stmt) -> bool:
        """Whether `s`'s conditions may differ between the block's threads: it holds wave
        operations but no barrier, so the checker proved its control flow wave-uniform
        only, and waves may go different ways (`_wave_if`, and loops whose threads leave
        one by one as `break` does)."""
        return not any(isinstance(n, ast.Call) and n.func == "sync_threads" for n in walk(s))

    def _when_running(self, emit: Callable[[], None]) -> None:
        run_bb = self.st.fn.append_basic_block("wave.run")
        skip_bb = self.st.fn.append_basic_block("wave.skip")
        self.b.cbranch(self.st.first_running(read_cond=False), run_bb, skip_bb)
        self.b.position_at_end(run_bb)
        emit()
        self.b.branch(skip_bb)
        self.b.position_at_end(skip_bb)

    def _restate(self, moves: dict[int, int]) -> None:
        """Every thread in a state of `moves` takes the state it maps to (all at once)."""
        def emit() -> None:
            frame = self.st.frame
            assert frame is not None
            state = self.b.load(frame, typ=I8)
            new = state
            for old, to in moves.items():
                hit = self.b.icmp_unsigned("==", state, ir.Constant(I8, old))
                new = self.b.select(hit, ir.Constant(I8, to), new)
            self.b.store(new, frame)

        self.st.region(emit, all_threads=True)

    def _wave_if(self, e: ast.If) -> None:
        """An `if` whose condition is wave-uniform: threads whose condition is false are
        parked while the `then` arm runs, the others parked while the `else` arm runs
        (two states per nesting depth, after `RETURNED`); a thread that leaves an arm by
        `break`/`continue`/`return` keeps that state."""
        depth = self.wave_depth
        self.wave_depth += 1
        park_else, park_done = RETURNED + 1 + 2 * depth, RETURNED + 2 + 2 * depth
        self._uniform(e.cond, park_else)
        self._when_running(lambda: self.run(self._block_stmts(e.then)))
        self._restate({RUNNING: park_done, park_else: RUNNING})
        if e.else_ is not None:
            stmts: list[ast.Stmt] = [ast.ExprStmt(expr=e.else_, semi=False)] \
                if isinstance(e.else_, ast.If) else self._block_stmts(e.else_)
            self._when_running(lambda: self.run(stmts))
        self._restate({park_done: RUNNING})
        self.wave_depth -= 1

    def _structural(self, s: ast.Stmt) -> None:
        """A statement containing a barrier, lowered once for the whole block — and skipped
        when no thread is running. Barrier control flow is uniform (the checker proves it),
        so a `break`, `continue` or `return` leaves either every thread running or none; a
        statement entered with none running must not run at all: a barrier loop's exit
        makes every `broke` thread running again, which would undo a `break` out of an
        enclosing loop (found by the `barriers` generator profile: a `loop` with a `break`
        followed by an inner `while` with a barrier never ended)."""
        if isinstance(s, ast.ExprStmt) and isinstance(s.expr, ast.Call) \
                and s.expr.func == "sync_threads":
            return  # the boundary between two regions is the barrier
        fn = self.st.fn
        run_bb = fn.append_basic_block("structural.run")
        skip_bb = fn.append_basic_block("structural.skip")
        self.b.cbranch(self.st.first_running(read_cond=False), run_bb, skip_bb)
        self.b.position_at_end(run_bb)
        self._structural_stmt(s)
        self.b.branch(skip_bb)
        self.b.position_at_end(skip_bb)

    def _structural_stmt(self, s: ast.Stmt) -> None:
        fn = self.st.fn
        b = self.b
        match s:
            case ast.Let() if is_wave_let(s):
                emit_wave_step(self.st, s, self.st.ms.target.lanes)
            case ast.ExprStmt(expr=ast.BlockExpr(block=block)):
                self.run(self._block_stmts(block))
            case ast.ExprStmt(expr=ast.If() as e):
                if self._per_thread(s):
                    self._wave_if(e)
                else:
                    self._structural_if(e)
            case ast.While(cond=cond, body=body):
                head = fn.append_basic_block("swhile.head")
                work = fn.append_basic_block("swhile.body")
                done = fn.append_basic_block("swhile.end")
                b.branch(head)
                b.position_at_end(head)
                park = BROKE if self._per_thread(s) else None
                b.cbranch(self._uniform(cond, park), work, done)
                b.position_at_end(work)
                self._loop_body(body)
                b.branch(head)
                b.position_at_end(done)
                self.st.reset_state(BROKE)
            case ast.Loop(body=body):
                head = fn.append_basic_block("sloop.head")
                done = fn.append_basic_block("sloop.end")
                work = fn.append_basic_block("sloop.body")
                b.branch(head)
                b.position_at_end(head)
                b.cbranch(self.st.first_running(read_cond=False), work, done)
                b.position_at_end(work)
                self._loop_body(body)
                b.branch(head)
                b.position_at_end(done)
                self.st.reset_state(BROKE)
            case ast.For():
                self._structural_for(s)
            case _:
                raise LowerError(f"sync_threads inside {type(s).__name__}")

    def _loop_body(self, body: ast.Block) -> None:
        self.st.loops.append(StructuralLoop())
        self.run(self._block_stmts(body))
        self.st.loops.pop()
        self.st.reset_state(CONTINUED)

    def _structural_if(self, e: ast.If) -> None:
        fn = self.st.fn
        then_bb = fn.append_basic_block("sif.then")
        else_bb = fn.append_basic_block("sif.else")
        end_bb = fn.append_basic_block("sif.end")
        self.b.cbranch(self._uniform(e.cond), then_bb, else_bb)
        self.b.position_at_end(then_bb)
        self.run(self._block_stmts(e.then))
        self.b.branch(end_bb)
        self.b.position_at_end(else_bb)
        if isinstance(e.else_, ast.If):
            self._structural_if(e.else_)
        elif e.else_ is not None:
            self.run(self._block_stmts(e.else_))
        self.b.branch(end_bb)
        self.b.position_at_end(end_bb)

    def _structural_for(self, s: ast.For) -> None:
        """The per-thread `for` of `stmts.py`, split: init, condition, body, step regions.
        The range end lives in the for variable's frame slot's neighbour (`_for_end`)."""
        assert s.binding is not None
        binding = s.binding  # a local name: the closures below keep its narrowed type
        sc = scalar_of(s.start.ty)
        st = self.st
        end_slot = st.offsets[s.binding] + 8  # reserved by `EntryState._layout` for loops
        b = self.b

        def end_ptr() -> ir.Value:
            assert st.frame is not None
            return self.b.gep(st.frame, [ir.Constant(I64, end_slot)], source_etype=I8)

        def init() -> None:
            b = self.b
            start = self.expr(s.start)
            end = self.expr(s.end)
            store_scalar(b, start, st.slot(binding, sc), sc)
            store_scalar(b, end, end_ptr(), sc)
            b.store(ir.Constant(I8, 0), b.gep(end_ptr(), [ir.Constant(I64, 8)],
                                              source_etype=I8))

        st.region(init)
        fn = st.fn
        head = fn.append_basic_block("sfor.head")
        work = fn.append_basic_block("sfor.body")
        done = fn.append_basic_block("sfor.end")
        b.branch(head)
        b.position_at_end(head)

        def cond() -> None:
            b = self.b
            i = load_scalar(b, st.slot(binding, sc), sc)
            end = load_scalar(b, end_ptr(), sc)
            cmp = b.icmp_signed if sc.is_signed else b.icmp_unsigned
            ok = cmp("<=" if s.inclusive else "<", i, end)
            exhausted = b.load(b.gep(end_ptr(), [ir.Constant(I64, 8)], source_etype=I8),
                               typ=I8)
            ok = b.and_(ok, b.icmp_unsigned("==", exhausted, ir.Constant(I8, 0)))
            assert st.frame is not None
            store_scalar(b, ok, b.gep(st.frame, [ir.Constant(I64, 1)], source_etype=I8),
                         Scalar.BOOL)
            if per_thread:  # a thread whose range is done leaves the loop as `break` does
                state = b.load(st.frame, typ=I8)
                b.store(b.select(ok, state, ir.Constant(I8, BROKE)), st.frame)

        per_thread = self._per_thread(s)
        st.region(cond)
        b.cbranch(st.first_running(read_cond=not per_thread), work, done)
        b.position_at_end(work)
        self._loop_body(s.body)

        def step() -> None:
            b = self.b
            var = st.slot(binding, sc)
            i = load_scalar(b, var, sc)
            if s.inclusive:
                last = b.icmp_unsigned("==", i, load_scalar(b, end_ptr(), sc))
                b.store(b.zext(last, I8), b.gep(end_ptr(), [ir.Constant(I64, 8)],
                                                 source_etype=I8))
                i = b.select(last, i, b.add(i, int_const(sc, 1)))
                store_scalar(b, i, var, sc)
            else:
                store_scalar(b, b.add(i, int_const(sc, 1)), var, sc)

        st.region(step)
        b.branch(head)
        b.position_at_end(done)
        st.reset_state(BROKE)


def _shared_layout(shared: Mapping[str, ArrayTy]) -> tuple[dict[str, tuple[int, ArrayTy]], int]:
    offsets: dict[str, tuple[int, ArrayTy]] = {}
    at = 0
    for name in sorted(shared):
        ty = shared[name]
        offsets[name] = (at, ty)
        at += (ty.len * byte_size(ty.elem) + 7) // 8 * 8
    return offsets, max(at, 8)


def lower_module(checked: CheckedModule, entry: str, target: TargetHooks) -> LoweredKernel:
    """Lower the kernel `entry` of a checked module (and every helper) for `target`."""
    module = ir.Module(name=entry)
    module.triple = target.triple
    if target.data_layout:
        module.data_layout = target.data_layout
    offsets, shared_bytes = _shared_layout(checked.shared)
    # SIMT targets reach shared arrays only through their globals, which every function
    # body needs: declared before the helpers, and no offsets from a base they do not have
    ms = ModuleState(module, Intrinsics(module), dict(checked.consts),
                     offsets if target.serialises_threads else {}, target)
    ms.trap_fn = target.define_trap_fn(ms)
    if not target.serialises_threads:
        from rgpu_fuzz.lower.amdgcn import declare_shared_globals

        declare_shared_globals(ms, checked.shared)
    kernel: ast.Fn = checked.fns[entry]
    helpers = [f for f in checked.fns.values() if not f.kernel]
    for f in helpers:
        ms.helpers[f.name] = _declare_helper(ms, f)
    for f in helpers:
        _define_helper(ms, f)
    if target.serialises_threads:
        lowered = _lower_host_entry(ms, kernel, shared_bytes)
    else:
        from rgpu_fuzz.lower.amdgcn import lower_simt_entry

        symbol = lower_simt_entry(ms, kernel)
        lowered = LoweredKernel(ir="", symbol=symbol, params=kernel_params(kernel),
                                shared_bytes=shared_bytes, frame_bytes=0,
                                locations=(), uses_barrier=has_barrier(kernel.body))
    for fn in module.functions:
        if fn.blocks:
            target.decorate_function(fn)
    target.finish_module(module)
    return replace(lowered, ir=str(module), locations=tuple(ms.locations))


def _lower_host_entry(ms: ModuleState, kernel: ast.Fn, shared_bytes: int) -> LoweredKernel:
    """The host entry (`HostTarget`): a loop over the grid's blocks calling `<kernel>.block`,
    which runs one block's threads (`lower.host`)."""
    module = ms.module
    entry = kernel.name
    symbol = f"rgpu_kernel_{entry}"
    kernel = hoist_waves(kernel)
    marks = barrier_marks(kernel.body)
    barrier = marks[id(kernel.body)]
    thread_fn = None if barrier else lower_thread_fn(ms, kernel)
    fn = ir.Function(module, ir.FunctionType(VOID, [PTR] * 5 + [I32] * 3), name=f"{entry}.block")
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    fn.attributes.add("optnone")
    st = EntryState(ms, fn, kernel)
    for axis in range(3):
        st.set_word(TCTX_BID + axis, st.block_id[axis])
    if barrier:
        load_params(st, kernel, st.args_p, store_scalars=False)
    if thread_fn is not None:
        def call(t: ir.Value, _nxt: ir.Block) -> None:
            st.set_thread(t)
            st.b.call(thread_fn, [st.args_p, st.tctx, st.shared, st.trap_rec])
            st.propagate_trap()

        st.counted(st.nthreads, call, "thread")
    else:
        scalars = [(p, ps, slot) for p, (ps, slot) in zip(kernel.params, param_slots(kernel),
                                                          strict=True) if not ps.slice]

        def init() -> None:
            assert st.frame is not None
            st.b.store(ir.Constant(I8, 0), st.frame)
            for p, ps, slot in scalars:
                assert p.binding is not None, "a parameter the checker left unbound"
                at = st.b.gep(st.args_p, [ir.Constant(I64, slot)], source_etype=I64)
                store_scalar(st.b, load_scalar(st.b, at, ps.elem),
                             st.slot(p.binding, ps.elem), ps.elem)

        st.region(init, all_threads=True)
        lowerer = StructuralLowerer(st, marks)
        lowerer.run(lowerer._block_stmts(kernel.body))
    st.b.ret_void()
    st.finish()
    grid_loop(module, symbol, fn)
    return LoweredKernel(ir="", symbol=symbol, params=kernel_params(kernel),
                         shared_bytes=shared_bytes, frame_bytes=st.frame_bytes,
                         locations=(), uses_barrier=barrier)
