"""Running the threads of a block inside the generated code (host target).

The code is split so that O2/O3 optimise the kernel's code, not the harness around it:
* the kernel's code lives in functions of its own, optimised like any function: the
  per-thread function `<kernel>.thread` of a kernel without `sync_threads` (locals in
  allocas), or for a kernel with barriers one function per *region* (below),
  `<kernel>.region.<n>`, and the helper `fn`s;
* the harness is `optnone` (and `noinline`): the entry (`grid_loop`), a loop over the grid's
  blocks calling `<kernel>.block` for each; and `<kernel>.block`, one block's loop over its
  threads calling the thread function, or the structural code of a kernel with barriers.
Inlined into the harness's loops, the kernel's code was optimised as the body of a four-deep
loop nest (blocks z, y, x, threads) that no GPU compiler sees: the loop passes worked on the
harness (O3 optimisation CPU on 50 default cases in process, mean 39.4 → 10.5 ms; the
kernel's code and the order in which threads run are the same).

A kernel with barriers is lowered *structurally* in the block function:
* The checker proves barriers sit in uniform control flow: the kernel's top level, or inside
  `if`/`while`/`for`/`loop`/blocks whose conditions every thread of the block evaluates alike.
  A statement that (transitively) contains a barrier is lowered once per block, not per thread.
* Every maximal run of barrier-free statements becomes a *region*: a loop over the block's
  threads calling the region's function (those statements) for each running thread. A
  barrier is the boundary between two regions, so every thread finishes the code before a
  barrier before any thread starts the code after it — the ordering `sync_threads`
  promises (for shared and global memory alike, since threads run one after another).
* All locals of the kernel live in a per-thread *frame* (`frame_bytes` per thread, passed by
  the host), so values survive from one region to the next.
* A condition of a structural `if`/`while`/`for` is evaluated by every active thread (its side
  effects, e.g. assignments in a block expression, are per-thread) and the branch taken is
  the value of the first active thread — sound because the condition is uniform.
* Byte 0 of a frame is the thread's state: running, broke, continued, or returned. `return`
  and a `break`/`continue` that leaves a region for a structural loop set it; regions skip
  threads that are not running; a structural loop turns `continue` back into running at the
  end of each iteration and `break` at its exit, and exits when no thread is running.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.features import children, walk
from rgpu_fuzz.lang.types import ArrayTy, Type
from rgpu_fuzz.lower.context import (
    TCTX_BDIM,
    TCTX_BID,
    TCTX_GDIM,
    TCTX_TID,
    FnState,
    LoopTarget,
    LowerError,
    ModuleState,
    storage_type,
)
from rgpu_fuzz.lower.irapi import ir
from rgpu_fuzz.lower.stmts import BodyLowerer
from rgpu_fuzz.lower.values import (
    I8,
    I32,
    I64,
    PTR,
    VOID,
    load_scalar,
    private_alloca,
    store_scalar,
)
from rgpu_fuzz.lower.waves import CROSS_LANE
from rgpu_fuzz.model.kernel_abi import KernelParam, flatten
from rgpu_fuzz.model.scalars import Scalar

RUNNING, BROKE, CONTINUED, RETURNED = 0, 1, 2, 3
_STATE, _COND = 0, 1          # byte offsets in a frame
_FRAME_HEADER = 8


def _sync_point(n: object) -> bool:
    """`sync_threads()` or a cross-lane wave operation: both end a region (`host_waves`)."""
    return isinstance(n, ast.Call) and (n.func == "sync_threads" or n.func in CROSS_LANE)


def has_barrier(node: object) -> bool:
    """Whether `node` contains a sync point (`sync_threads()` or a cross-lane wave call)."""
    return any(_sync_point(n) for n in walk(node))


def barrier_marks(node: object) -> dict[int, bool]:
    """Whether each node under `node` (keyed by `id`; the tree must outlive the answer)
    contains a sync point (`has_barrier`): one pass for every `has_barrier` question the
    structural lowering asks (of each statement, again at each level it is nested in)."""
    marks: dict[int, bool] = {}

    def mark(n: object) -> bool:
        hit = _sync_point(n)
        for c in children(n):
            hit = mark(c) or hit
        marks[id(n)] = hit
        return hit

    mark(node)
    return marks


def kernel_params(kernel: ast.Fn) -> tuple[KernelParam, ...]:
    """The kernel's signature as the ABI model sees it (`rgpu_fuzz.model.kernel_abi`)."""
    out: list[KernelParam] = []
    for p in kernel.params:
        if isinstance(p.ty, ast.SliceType):
            out.append(KernelParam(p.name, p.ty.elem, True, p.ty.mutable))
        else:
            assert isinstance(p.ty, ast.ScalarType), p
            out.append(KernelParam(p.name, p.ty.scalar, False))
    return tuple(out)


def param_slots(kernel: ast.Fn) -> tuple[tuple[KernelParam, int], ...]:
    """Each parameter with the index of its first 64-bit slot in the host `args` array:
    the position of its first flattened argument (`kernel_abi.flatten`)."""
    params = kernel_params(kernel)
    first: dict[str, int] = {}
    for i, a in enumerate(flatten(params)):
        first.setdefault(a.param, i)
    return tuple((p, first[p.name]) for p in params)


def load_params(st: FnState, kernel: ast.Fn, args: ir.Value,
                 store_scalars: bool) -> list[tuple[int, ir.Value, Scalar]]:
    """Load slices into `st.slices`; return scalar params as (binding, value, type)."""
    b = st.b
    scalars = []
    for p, (ps, slot) in zip(kernel.params, param_slots(kernel), strict=True):
        assert p.binding is not None, p
        at = b.gep(args, [ir.Constant(I64, slot)], source_etype=I64)
        if ps.slice:
            nxt = b.gep(args, [ir.Constant(I64, slot + 1)], source_etype=I64)
            st.slices[p.binding] = (b.load(at, typ=PTR), b.load(nxt, typ=I64))
        else:
            value = load_scalar(b, at, ps.elem)
            scalars.append((p.binding, value, ps.elem))
            if store_scalars:
                store_scalar(b, value, st.slot(p.binding, ps.elem), ps.elem)
    return scalars


class AllocaState(FnState):
    """Locals in entry-block allocas (helpers and per-thread kernel functions)."""

    def __init__(self, ms: ModuleState, fn: ir.Function, tctx: ir.Value, shared: ir.Value,
                 trap: ir.Value) -> None:
        super().__init__(ms, fn, tctx, shared, trap)
        self._slots: dict[int, ir.Value] = {}

    def slot(self, binding: int, ty: Scalar | ArrayTy) -> ir.Value:
        if binding not in self._slots:
            self._slots[binding] = self.temp(storage_type(ty), f"local{binding}")
        return self._slots[binding]


class ThreadFnState(AllocaState):
    """The per-thread function of a kernel without barriers: `return` is `ret void`."""

    def emit_return(self, value: ir.Value | None) -> None:
        self.b.ret_void()

    def _emit_trap_exit(self) -> None:
        self.b.ret_void()


def lower_thread_fn(ms: ModuleState, kernel: ast.Fn) -> ir.Function:
    fnty = ir.FunctionType(VOID, [PTR, PTR, PTR, PTR])
    fn = ir.Function(ms.module, fnty, name=f"{kernel.name}.thread")
    fn.linkage = "internal"
    args, tctx, shared, trap = fn.args
    st = ThreadFnState(ms, fn, tctx, shared, trap)
    load_params(st, kernel, args, store_scalars=True)
    BodyLowerer(st).block_value(kernel.body)
    if not st.b.block.is_terminated:
        st.b.ret_void()
    st.finish()
    return fn


class StructuralLoop(LoopTarget):
    """A loop lowered once per block: `break`/`continue` mark the thread and end its turn."""

    def emit_break(self, st: FnState) -> None:
        assert isinstance(st, EntryState)
        st.set_state(BROKE)

    def emit_continue(self, st: FnState) -> None:
        assert isinstance(st, EntryState)
        st.set_state(CONTINUED)


class EntryState(FnState):
    """The block function (one block of the grid, `grid_loop`): the loop over its threads;
    for a kernel with barriers, the structural code and its regions, with locals in
    per-thread frames. Its last three arguments are the block's id (x, y, z)."""

    def __init__(self, ms: ModuleState, fn: ir.Function, kernel: ast.Fn) -> None:
        self.args_p, launch, shared, self.frames, trap, *self.block_id = fn.args
        super().__init__(ms, fn, ir.Constant(PTR, None), shared, trap)
        self.tctx = self.temp(ir.ArrayType(I32, 12), "tctx")
        self.kernel = kernel
        self.offsets: dict[int, int] = {}
        self.frame_bytes = self._layout(kernel)
        self.frame: ir.Value | None = None
        self._regions = 0
        self.region_next: ir.Block | None = None
        b = self.b
        dims = [b.load(b.gep(launch, [ir.Constant(I64, i)], source_etype=I32), typ=I32)
                for i in range(6)]
        for i in range(3):
            self.set_word(TCTX_GDIM + i, dims[i])
            self.set_word(TCTX_BDIM + i, dims[3 + i])
        self.block = dims[3:]
        self.nthreads = b.mul(b.mul(dims[3], dims[4]), dims[5])

    # ---- frames
    def _layout(self, kernel: ast.Fn) -> int:
        offset = _FRAME_HEADER
        types: dict[int, Scalar | ArrayTy] = {}
        loops = set()
        for n in walk(kernel):
            match n:
                case ast.Let(binding=bnd, init=init) if bnd is not None:
                    types[bnd] = _local_type(init.ty)
                case ast.For(binding=bnd, start=start) if bnd is not None:
                    types[bnd] = _local_type(start.ty)
                    loops.add(bnd)
                case ast.Param(binding=bnd, ty=ast.ScalarType(scalar=s)) if bnd is not None:
                    types[bnd] = s
        for bnd in sorted(types):
            self.offsets[bnd] = offset
            offset += (_abi_size(types[bnd]) + 7) // 8 * 8
            if bnd in loops:
                offset += 16  # a structural `for`: its range end, then an exhausted flag
        return offset

    def slot(self, binding: int, ty: Scalar | ArrayTy) -> ir.Value:
        assert self.frame is not None, "a local used outside a region"
        return self.b.gep(self.frame, [ir.Constant(I64, self.offsets[binding])],
                          source_etype=I8)

    def set_state(self, state: int) -> None:
        assert self.frame is not None and self.region_next is not None
        self.b.store(ir.Constant(I8, state), self.frame)
        self.b.branch(self.region_next)

    def emit_return(self, value: ir.Value | None) -> None:
        if self.frame is None:
            raise LowerError("return outside a region")
        self.set_state(RETURNED)

    def _emit_trap_exit(self) -> None:
        self.b.ret_void()

    def set_word(self, index: int, value: ir.Value) -> None:
        self.b.store(value, self.b.gep(self.tctx, [ir.Constant(I32, index)], source_etype=I32))

    # ---- loops
    def counted(self, n: ir.Value, body: Callable[[ir.Value, ir.Block], None],
                name: str) -> None:
        """`for i in 0..n { body(i, next) }` over i32; `body` may branch to `next`."""
        b = self.b
        counter = self.temp(I32, f"{name}.i")
        b.store(ir.Constant(I32, 0), counter)
        head = self.fn.append_basic_block(f"{name}.head")
        work = self.fn.append_basic_block(f"{name}.body")
        nxt = self.fn.append_basic_block(f"{name}.next")
        done = self.fn.append_basic_block(f"{name}.end")
        b.branch(head)
        b.position_at_end(head)
        i = b.load(counter, typ=I32)
        b.cbranch(b.icmp_unsigned("<", i, n), work, done)
        b.position_at_end(work)
        body(i, nxt)
        if not b.block.is_terminated:
            b.branch(nxt)
        b.position_at_end(nxt)
        b.store(b.add(b.load(counter, typ=I32), ir.Constant(I32, 1)), counter)
        b.branch(head)
        b.position_at_end(done)

    def frame_of(self, t: ir.Value) -> ir.Value:
        b = self.b
        return b.gep(self.frames, [b.mul(b.zext(t, I64), ir.Constant(I64, self.frame_bytes))],
                     source_etype=I8)

    def set_thread(self, t: ir.Value) -> None:
        b = self.b
        bx, by = self.block[0], self.block[1]
        self.set_word(TCTX_TID, b.urem(t, bx))
        self.set_word(TCTX_TID + 1, b.urem(b.udiv(t, bx), by))
        self.set_word(TCTX_TID + 2, b.udiv(t, b.mul(bx, by)))

    def region(self, emit: Callable[[], None], *, all_threads: bool = False) -> None:
        """Run `emit`'s code for every running thread (every thread with `all_threads`):
        `emit`'s code becomes a function of its own, `<kernel>.region.<n>(args, tctx,
        shared, frame, trap)`, that this function calls for each thread (the kernel's code
        of one thread from one barrier to the next, optimised as a function)."""
        fn = ir.Function(self.ms.module, ir.FunctionType(VOID, [PTR] * 5),
                         name=f"{self.kernel.name}.region.{self._regions}")
        self._regions += 1
        fn.linkage = "internal"
        fn.attributes.add("noinline")
        outer = (self.fn, self.entry, self.b, self.tctx, self.shared, self.trap_rec,
                 self.trap_exit, self.slices)
        args, tctx, shared, frame, trap = fn.args
        self.fn, self.tctx, self.shared, self.trap_rec = fn, tctx, shared, trap
        self.entry = fn.append_basic_block("entry")
        self.b = ir.IRBuilder(self.entry)
        self.trap_exit = fn.append_basic_block("trap.exit")
        self.slices = {}
        load_params(self, self.kernel, args, store_scalars=False)
        done = fn.append_basic_block("region.done")
        self.frame, self.region_next = frame, done
        emit()
        if not self.b.block.is_terminated:
            self.b.branch(done)
        self.b.position_at_end(done)
        self.b.ret_void()
        self.finish()
        self.frame = self.region_next = None
        (self.fn, self.entry, self.b, self.tctx, self.shared, self.trap_rec,
         self.trap_exit, self.slices) = outer

        def body(t: ir.Value, nxt: ir.Block) -> None:
            frame = self.frame_of(t)
            if not all_threads:
                active = self.fn.append_basic_block("thread.run")
                state = self.b.load(frame, typ=I8)
                self.b.cbranch(self.b.icmp_unsigned("==", state, ir.Constant(I8, RUNNING)),
                               active, nxt)
                self.b.position_at_end(active)
            self.set_thread(t)
            self.b.call(fn, [self.args_p, self.tctx, self.shared, frame, self.trap_rec])
            self.propagate_trap()

        self.counted(self.nthreads, body, "region")

    def first_running(self, read_cond: bool) -> ir.Value:
        """i1: the condition byte of the first running thread (`read_cond`), or whether any
        thread is running; false when none is."""
        b = self.b
        result = self.temp(I8, "uniform")
        b.store(ir.Constant(I8, 0), result)
        exit_bb = self.fn.append_basic_block("uniform.found")

        def body(t: ir.Value, nxt: ir.Block) -> None:
            frame = self.frame_of(t)
            found = self.fn.append_basic_block("uniform.take")
            state = b.load(frame, typ=I8)
            b.cbranch(b.icmp_unsigned("==", state, ir.Constant(I8, RUNNING)), found, nxt)
            b.position_at_end(found)
            value = (b.load(b.gep(frame, [ir.Constant(I64, _COND)], source_etype=I8), typ=I8)
                     if read_cond else ir.Constant(I8, 1))
            b.store(value, result)
            b.branch(exit_bb)

        self.counted(self.nthreads, body, "scan")
        b.branch(exit_bb)
        b.position_at_end(exit_bb)
        return b.icmp_unsigned("!=", b.load(result, typ=I8), ir.Constant(I8, 0))

    def reset_state(self, old: int) -> None:
        """Every thread in state `old` becomes running again."""

        def emit() -> None:
            assert self.frame is not None
            state = self.b.load(self.frame, typ=I8)
            is_old = self.b.icmp_unsigned("==", state, ir.Constant(I8, old))
            self.b.store(self.b.select(is_old, ir.Constant(I8, RUNNING), state), self.frame)

        self.region(emit, all_threads=True)


def grid_loop(module: ir.Module, symbol: str, block_fn: ir.Function) -> ir.Function:
    """The entry `symbol` (`HostTarget`'s ABI): `block_fn` called for every block of the
    grid, z outermost and x fastest, with the block's id; it stops after a block whose
    thread trapped (the trap record's code is not 0)."""
    fn = ir.Function(module, ir.FunctionType(VOID, [PTR] * 5), name=symbol)
    fn.attributes.add("noinline")
    fn.attributes.add("optnone")
    args, launch, shared, frames, trap = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    grid = [b.load(b.gep(launch, [ir.Constant(I64, i)], source_etype=I32), typ=I32)
            for i in range(3)]
    done = fn.append_basic_block("grid.end")
    ids: list[ir.Value] = [ir.Constant(I32, 0)] * 3

    def loop(axis: int) -> None:
        counter = private_alloca(b, I32, f"block{'xyz'[axis]}.i", 0)
        b.store(ir.Constant(I32, 0), counter)
        head = fn.append_basic_block(f"block{'xyz'[axis]}.head")
        body = fn.append_basic_block(f"block{'xyz'[axis]}.body")
        end = fn.append_basic_block(f"block{'xyz'[axis]}.end")
        b.branch(head)
        b.position_at_end(head)
        i = b.load(counter, typ=I32)
        b.cbranch(b.icmp_unsigned("<", i, grid[axis]), body, end)
        b.position_at_end(body)
        ids[axis] = i
        if axis == 0:
            b.call(block_fn, [args, launch, shared, frames, trap, *ids])
            go_on = fn.append_basic_block("block.ok")
            trapped = b.icmp_unsigned("!=", b.load(trap, typ=I32), ir.Constant(I32, 0))
            b.cbranch(trapped, done, go_on)
            b.position_at_end(go_on)
        else:
            loop(axis - 1)
        b.store(b.add(b.load(counter, typ=I32), ir.Constant(I32, 1)), counter)
        b.branch(head)
        b.position_at_end(end)

    loop(2)
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()
    return fn


def host_trap_fn(module: ir.Module) -> ir.Function:
    """`rgpu.trap(record, tctx, code, loc)`: fills the trap record (`HostTarget`)."""
    fn = ir.Function(module, ir.FunctionType(VOID, [PTR, PTR, I32, I32]), name="rgpu.trap")
    fn.linkage = "internal"
    fn.attributes.add("cold")
    fn.attributes.add("noinline")
    rec, tctx, code, loc = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def put(i: int, v: ir.Value) -> None:
        b.store(v, b.gep(rec, [ir.Constant(I32, i)], source_etype=I32))

    put(0, code)
    put(1, loc)
    for i in range(3):
        put(2 + i, b.load(b.gep(tctx, [ir.Constant(I32, TCTX_BID + i)], source_etype=I32),
                          typ=I32))
        put(5 + i, b.load(b.gep(tctx, [ir.Constant(I32, TCTX_TID + i)], source_etype=I32),
                          typ=I32))
    b.ret_void()
    return fn


@cache
def _local_type(ty: Type | None) -> Scalar | ArrayTy:
    """A local's type as the frame stores it: the checker gives every local a scalar or an
    array type; anything else has no storage (`storage_type`)."""
    assert isinstance(ty, Scalar | ArrayTy), f"a local of type {ty}"
    return ty


def _abi_size(ty: Scalar | ArrayTy) -> int:
    """Bytes a local of `ty` takes in a thread's frame. Cached: llvmlite answers by printing
    and parsing a module (~40 µs), and a kernel has dozens of locals of a few types."""
    return int(storage_type(ty).get_abi_size(_target_data()))


@cache
def _target_data():  # type: ignore[no-untyped-def]
    import llvmlite.binding as llvm

    return llvm.create_target_data("e-m:e-i64:64-f80:128-n8:16:32:64-S128")


