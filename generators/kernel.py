"""Whole cases: launch shape, consts, helpers, shared arrays, the kernel and its arguments.

The kernel body is laid out in phases so that shared memory is race-free and fully
initialised by construction:

    let tid: usize = <flat thread index in the block>;
    let gid: usize = <flat block index> * <threads per block> + tid;
    ...ordinary statements...                          (no shared access)
    unsafe { S[tid * K + j] = e; }  for every j < K    (write phase: every slot written)
    sync_threads();
    ...statements that may read any shared slot...     (read phase: nobody writes)
    sync_threads(); <write phase> sync_threads(); <read phase>          (more phases), or
    sync_threads(); for r in 0u32..R { <write> sync_threads(); <read> sync_threads(); }
    out[gid * K + j] = e;  for every output and j < K  (each thread writes only its slots)

Barriers stand only at the top level or in `for` loops whose bounds are literals, consts or
scalar parameters, whose bodies hold no `break`/`continue`, in kernels with no `return`.
Profiles that switch on `barrier_ifs`/`barrier_whiles`/`barrier_nested`/`barrier_exits`/
`return_after_barrier` get the wider layout of `barriers.py` instead (uniform `if`/`else`,
`while`/`loop`, nested loops, uniform exits, returns after the last barrier).
"""

from __future__ import annotations

from generators import atomics, barriers, half, waves
from generators.context import Buffer, Builder, Helper, Pos, SharedArray, Var
from generators.expr import convert, expr, shared_read
from generators.stmt import (
    depth,
    shared_helper_call,
    shared_store,
    shared_update,
    stmts,
)
from generators.values import int_literal, literal, usize, value_bits, zero
from generators.waves import WaveGen
from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.printer import print_module
from rgpu_fuzz.model.case import (
    Arg,
    BufferArg,
    Case,
    Dist,
    Fill,
    Launch,
    Provenance,
    Random,
    ScalarArg,
)
from rgpu_fuzz.model.scalars import Scalar

GENERATOR = "grammar/1"
ENTRY = "k"

_BLOCK_X = (1, 2, 4, 8, 16, 32, 64, 3, 5, 7, 12, 24, 48)
_SMALL = (1, 2, 3, 4, 8)


def _launch(b: Builder) -> Launch:
    dims = 1
    if b.features.launch_2d and b.src.boolean(0.25):
        dims = 2
    if b.features.launch_3d and b.src.boolean(0.15):
        dims = 3
    cap = b.limits.block_threads_max
    lo = b.limits.block_x_min
    block = [b.src.choice([x for x in _BLOCK_X if lo <= x <= cap] or [1]), 1, 1]
    for axis in range(1, dims):
        room = cap // (block[0] * block[1] * block[2])
        block[axis] = b.src.choice([y for y in _SMALL if y <= room] or [1])
    tpb = block[0] * block[1] * block[2]
    room = max(1, b.limits.threads_max // tpb)
    grid = [b.src.integer(1, min(room, 8)), 1, 1]
    for axis in range(1, dims):
        room //= grid[axis - 1]
        grid[axis] = b.src.integer(1, max(1, min(room, 2)))
    return Launch(grid=(grid[0], grid[1], grid[2]), block=(block[0], block[1], block[2]))


def _u32_call(name: str) -> ast.Expr:
    return ast.Call(func=name)


def _flat(idx: str, dim: str, dims: int) -> ast.Expr:
    """`idx_x + dim_x * (idx_y + dim_y * idx_z)` for the axes in use (type u32)."""
    axes = "xyz"[:dims]
    e: ast.Expr = _u32_call(f"{idx}_{axes[-1]}")
    for axis in reversed(axes[:-1]):
        e = ast.Binary(op=ast.BinOp.ADD, lhs=_u32_call(f"{idx}_{axis}"),
                       rhs=ast.Binary(op=ast.BinOp.MUL, lhs=_u32_call(f"{dim}_{axis}"), rhs=e))
    return e


def _thread_ids(b: Builder, launch: Launch) -> list[ast.Stmt]:
    dims = 3 if launch.block[2] > 1 or launch.grid[2] > 1 else \
        2 if launch.block[1] > 1 or launch.grid[1] > 1 else 1
    tid = ast.Cast(expr=_flat("thread_idx", "block_dim", dims), to=Scalar.USIZE)
    tpb: ast.Expr = _u32_call("block_dim_x")
    for axis in "yz"[: dims - 1]:
        tpb = ast.Binary(op=ast.BinOp.MUL, lhs=tpb, rhs=_u32_call(f"block_dim_{axis}"))
    block_flat = ast.Cast(expr=_flat("block_idx", "grid_dim", dims), to=Scalar.USIZE)
    gid = ast.Binary(op=ast.BinOp.ADD,
                     lhs=ast.Binary(op=ast.BinOp.MUL, lhs=block_flat,
                                    rhs=ast.Cast(expr=tpb, to=Scalar.USIZE)),
                     rhs=ast.Name(ident="tid"))
    b.tid, b.gid = "tid", "gid"
    b.bind(Var("tid", Scalar.USIZE, reserved=True))
    b.bind(Var("gid", Scalar.USIZE, reserved=True))
    return [ast.Let(name="tid", mutable=False, ty=ast.ScalarType(scalar=Scalar.USIZE), init=tid),
            ast.Let(name="gid", mutable=False, ty=ast.ScalarType(scalar=Scalar.USIZE), init=gid)]


def _const_value(b: Builder, ty: Scalar) -> ast.Expr:
    """A constant expression that cannot overflow (rustc rejects overflow in consts)."""
    lit = literal(b.src, ty, specials=False)
    if not ty.is_int:
        return lit
    form = b.src.integer(0, 4)
    same = [c for c in b.consts if c.ty is ty]
    if form == 1:
        return ast.AssocConst(scalar=ty, name=b.src.choice(("MIN", "MAX")))
    if form == 2:
        other = ast.Name(ident=b.src.choice(same).name) if same else literal(b.src, ty)
        op = b.src.choice((ast.BinOp.AND, ast.BinOp.OR, ast.BinOp.XOR))
        return ast.Binary(op=op, lhs=lit, rhs=other)
    if form == 3:
        return ast.Unary(op=ast.UnOp.NOT, operand=lit)
    if form == 4:
        frm = b.src.choice([t for t in b.types if t.is_int])
        return ast.Cast(expr=literal(b.src, frm), to=ty)
    return lit


def _consts(b: Builder) -> list[ast.Item]:
    items: list[ast.Item] = []
    for _ in range(b.src.integer(0, b.limits.consts_max)):
        ty = b.scalar_type()
        name = b.fresh("C")
        items.append(ast.Const(name=name, ty=ast.ScalarType(scalar=ty), value=_const_value(b, ty)))
        b.consts.append(Var(name, ty))
    return items


def _helpers(b: Builder) -> list[ast.Item]:
    items: list[ast.Item] = []
    if not b.features.helpers:
        return items
    for i in range(b.src.integer(0, b.limits.helpers_max)):
        name = f"h{i}"
        b.callable_helpers = i
        b.scopes = [{}]
        params = []
        for _ in range(b.src.integer(1, max(1, b.limits.helper_params_max))):
            pty, pname, mutable = b.scalar_type(), b.fresh("x"), b.src.boolean(0.3)
            params.append(ast.Param(name=pname, ty=ast.ScalarType(scalar=pty), mutable=mutable))
            b.bind(Var(pname, pty, assignable=mutable))
        ret = b.scalar_type() if b.src.boolean(0.8) else None
        b.stmts_left = max(2, b.limits.max_stmts // 4)
        b.max_work_seen = 1
        pos = Pos(can_return=b.features.early_return, ret=ret)
        body = stmts(b, pos, b.src.integer(0, b.limits.top_stmts_max))
        tail = expr(b, ret, depth(b), pos) if ret is not None else None
        items.append(ast.Fn(name=name, params=tuple(params),
                            ret=ast.ScalarType(scalar=ret) if ret is not None else None,
                            body=ast.Block(stmts=tuple(body), tail=tail),
                            inline_never=b.features.inline_never and b.src.boolean(0.5)))
        ptypes = tuple(p.ty.scalar for p in params if isinstance(p.ty, ast.ScalarType))
        b.helpers.append(Helper(name, ptypes, ret, b.max_work_seen))
    b.callable_helpers = len(b.helpers)
    b.scopes = []
    return items


def _helper_params(b: Builder, first: list[ast.Param]) -> list[ast.Param]:
    params = list(first)
    for _ in range(b.src.integer(1, max(1, b.limits.helper_params_max)) - len(first)):
        pty, pname, mutable = b.scalar_type(), b.fresh("x"), b.src.boolean(0.3)
        params.append(ast.Param(name=pname, ty=ast.ScalarType(scalar=pty), mutable=mutable))
        b.bind(Var(pname, pty, assignable=mutable))
    return params


def _shared_helpers(b: Builder) -> list[ast.Item]:
    """Helpers that touch the shared arrays (profile switch `shared_helpers`), after the
    ordinary ones so that they may call them and each other (earlier ones only):
    * a reader (`Helper.shared == "read"`) reads any slot; it is called only in a read phase;
    * a writer takes the caller's `tid` first and begins with `S[t * slots + j] = e;
      S[t * slots + j] op= e2;`, then may store to any own slot; it is called only in a
      write phase, with `tid` as that argument, so it writes only the caller's own slots.
    Either may read thread ids (`thread_idx_x()`...) in its body."""
    items: list[ast.Item] = []
    saved_tid = b.tid
    for _ in range(b.src.integer(1, 2)):
        i = len(b.helpers)
        kind = b.src.choice(("read", "write"))
        b.callable_helpers = i
        b.scopes = [{}]
        first: list[ast.Param] = []
        b.tid = None
        if kind == "write":
            b.tid = b.fresh("t")
            first.append(ast.Param(name=b.tid, ty=ast.ScalarType(scalar=Scalar.USIZE)))
            b.bind(Var(b.tid, Scalar.USIZE, reserved=True))
        params = _helper_params(b, first)
        ret = b.scalar_type() if b.src.boolean(0.7) else None
        b.stmts_left = max(2, b.limits.max_stmts // 4)
        b.max_work_seen = 1
        pos = Pos(can_return=b.features.early_return, ret=ret, shared_read=kind == "read",
                  shared_write=kind == "write")
        body: list[ast.Stmt] = []
        if kind == "write":
            body.append(shared_update(b, pos, store=True))
        else:
            ty = b.scalar_type()
            read = shared_read(b, ty, depth(b), pos)
            assert read is not None
            body.append(ast.Let(name=b.fresh("v"), mutable=False,
                                ty=ast.ScalarType(scalar=ty), init=read))
        body += stmts(b, pos, b.src.integer(0, b.limits.top_stmts_max))
        tail = expr(b, ret, depth(b), pos) if ret is not None else None
        items.append(ast.Fn(name=f"h{i}", params=tuple(params),
                            ret=ast.ScalarType(scalar=ret) if ret is not None else None,
                            body=ast.Block(stmts=tuple(body), tail=tail),
                            inline_never=b.features.inline_never and b.src.boolean(0.5)))
        ptypes = tuple(p.ty.scalar for p in params if isinstance(p.ty, ast.ScalarType))
        b.helpers.append(Helper(f"h{i}", ptypes, ret, b.max_work_seen, shared=kind))
    b.tid = saved_tid
    b.callable_helpers = len(b.helpers)
    b.scopes = []
    return items


def _shared_arrays(b: Builder, tpb: int) -> list[ast.Item]:
    items: list[ast.Item] = []
    for _ in range(b.src.integer(1, max(1, b.limits.shared_max))):
        elem, slots, name = b.scalar_type(), b.src.integer(1, b.limits.slots_max), b.fresh("S")
        length = tpb * slots
        len_const = None
        if b.src.boolean(0.3):
            len_const = b.fresh("L")
            items.append(ast.Const(name=len_const, ty=ast.ScalarType(scalar=Scalar.USIZE),
                                   value=ast.IntLit(value=length, suffix=Scalar.USIZE)))
            b.consts.append(Var(len_const, Scalar.USIZE))
        len_expr: ast.Expr = ast.Name(ident=len_const) if len_const else ast.IntLit(value=length)
        items.append(ast.Shared(name=name, elem=elem, len=len_expr,
                                init=ast.ArrayRepeat(value=zero(elem), len=len_expr)))
        b.shared.append(SharedArray(name, elem, slots, length, len_const))
    return items


_SYNC = ast.ExprStmt(expr=ast.Call(func="sync_threads"))


def _phases(b: Builder, base: Pos, rounds_param: str | None) -> tuple[list[ast.Stmt], Pos]:
    """The shared-memory phases; returns them and the position after them (a read phase)."""
    if barriers.enabled(b):
        return barriers.phases(b, base, rounds_param)
    lo, hi = b.limits.top_stmts_min, b.limits.top_stmts_max
    write = base.nested(shared_write=True)
    read = base.nested(shared_read=True)
    out: list[ast.Stmt] = [shared_store(b, write, i, j)
                           for i, s in enumerate(b.shared) for j in range(s.slots)]
    if b.features.shared_helpers:  # every own slot is written now
        if b.src.boolean(0.5):
            out.append(shared_update(b, write, store=False))
        out += shared_helper_call(b, write, "write")
    out += stmts(b, write, b.src.integer(0, lo))
    out.append(_SYNC)
    if b.features.shared_helpers:
        out += shared_helper_call(b, read, "read")
    out += stmts(b, read, b.src.integer(lo, hi))
    for _ in range(b.src.integer(0, max(0, b.limits.shared_phases_max - 1))):
        out.append(_SYNC)
        if b.features.barrier_loops and b.features.loops and b.src.boolean(0.5):
            out.append(_barrier_loop(b, base, rounds_param))
        else:
            out.append(shared_store(b, write))
            out += stmts(b, write, b.src.integer(0, lo))
            out.append(_SYNC)
            out += stmts(b, read, b.src.integer(lo, hi))
    return out, read


def _barrier_loop(b: Builder, base: Pos, rounds_param: str | None) -> ast.For:
    """`for r in 0u32..R { write; sync; read; sync }` with a uniform bound R."""
    rounds = b.src.integer(1, 3)
    bound: ast.Expr = int_literal(rounds, Scalar.U32)
    if rounds_param is not None and b.src.boolean(0.5):
        bound, rounds = ast.Name(ident=rounds_param), 3   # the parameter's value is <= 3
    var = b.fresh("r")
    inner = base.nested(loop_depth=base.loop_depth + 1, work=base.work * rounds)
    b.push()
    b.bind(Var(var, Scalar.U32))
    body: list[ast.Stmt] = [shared_store(b, inner.nested(shared_write=True))]
    body += stmts(b, inner.nested(shared_write=True), b.src.integer(0, 2))
    body.append(_SYNC)
    body += stmts(b, inner.nested(shared_read=True), b.src.integer(1, 3))
    body.append(_SYNC)
    b.pop()
    return ast.For(var=var, start=int_literal(0, Scalar.U32), end=bound,
                   body=ast.Block(stmts=tuple(body)))


def _final_writes(b: Builder, pos: Pos, results: list[Var] | None = None) -> list[ast.Stmt]:
    """Each thread's stores to its own output slots; the first slot of each output stores a
    wave result when there are some (`results`), so the wave functions reach the outputs."""
    out: list[ast.Stmt] = []
    assert b.gid is not None
    for buf in b.outputs:
        skip = -1  # the second slot of a pair written by `half.final_pair`
        for j in range(buf.slots):
            if j == skip:
                continue
            pair = None if results and j == 0 else half.final_pair(b, pos, buf, j)
            if pair is not None:
                out += pair
                skip = j + 1
                continue
            index = ast.Name(ident=b.gid) if buf.slots == 1 else ast.Binary(
                op=ast.BinOp.ADD, lhs=ast.Binary(op=ast.BinOp.MUL, lhs=ast.Name(ident=b.gid),
                                                 rhs=usize(buf.slots)), rhs=usize(j))
            if results and j == 0:
                w = b.src.choice(results)
                value = convert(ast.Name(ident=w.name), w.ty, buf.elem)
            else:
                src_ty = buf.elem if b.src.boolean(0.7) else b.scalar_type()
                value = convert(expr(b, src_ty, depth(b), pos), src_ty, buf.elem)
            out.append(ast.Assign(target=ast.Index(base=ast.Name(ident=buf.name), index=index),
                                  value=value))
    return out


def build(b: Builder, *, seed: int | None = None) -> tuple[ast.Module, Case]:
    """One module and its case, every decision taken from `b.src`."""
    launch = _launch(b)
    total = launch.blocks * launch.threads_per_block
    items: list[ast.Item] = [ast.Use()]
    items += _consts(b)
    helpers = _helpers(b)
    has_shared = b.features.shared and b.limits.shared_max > 0 and (
        b.features.always_shared or b.src.boolean(0.5))
    if has_shared:
        items += _shared_arrays(b, launch.threads_per_block)
    items += helpers
    if has_shared and b.features.shared_helpers and b.features.helpers:
        items += _shared_helpers(b)

    params: list[ast.Param] = []
    args: list[Arg] = []
    b.scopes = [{}]
    for _ in range(b.src.integer(1, max(1, b.limits.inputs_max))):
        elem, name = b.scalar_type(), b.fresh("in")
        n = total if b.src.boolean(0.3) else b.src.integer(1, b.limits.buffer_len_max)
        dist = Dist.EDGES if b.src.boolean(0.85) else Dist.UNIFORM
        b.inputs.append(Buffer(name, elem, n, mutable=False))
        params.append(ast.Param(name=name, ty=ast.SliceType(elem=elem, mutable=False)))
        args.append(BufferArg(name=name, elem=elem, len=n, init=Random(b.src.bits(32), dist)))
    guarded = b.features.guarded_outputs and b.src.boolean(0.2)
    owners = b.src.integer(1, total) if guarded else total
    for _ in range(b.src.integer(1, b.limits.outputs_max)):
        elem, name = b.scalar_type(), b.fresh("out")
        slots = b.src.integer(1, b.limits.slots_max)
        b.outputs.append(Buffer(name, elem, owners * slots, mutable=True, slots=slots))
        params.append(ast.Param(name=name, ty=ast.SliceType(elem=elem, mutable=True)))
        init = Fill(0) if b.src.boolean(0.6) else Random(b.src.bits(32), Dist.EDGES)
        args.append(BufferArg(name=name, elem=elem, len=owners * slots, init=init))
    for _ in range(b.src.integer(0, b.limits.scalars_max)):
        ty, name = b.scalar_type(), b.fresh("p")
        params.append(ast.Param(name=name, ty=ast.ScalarType(scalar=ty)))
        args.append(ScalarArg(name=name, ty=ty, bits=value_bits(b.src, ty)))
        b.bind(param := Var(name, ty))
        b.uniform.append(param)
    rounds_param = None
    if has_shared and b.features.barrier_loops and b.src.boolean(0.4):
        rounds_param = "rounds"
        params.append(ast.Param(name=rounds_param, ty=ast.ScalarType(scalar=Scalar.U32)))
        args.append(ScalarArg(name=rounds_param, ty=Scalar.U32, bits=b.src.integer(0, 3)))
        b.bind(param := Var(rounds_param, Scalar.U32, reserved=True))
        b.uniform.append(param)
    if guarded:
        params.append(ast.Param(name="n", ty=ast.ScalarType(scalar=Scalar.U32)))
        args.append(ScalarArg(name="n", ty=Scalar.U32, bits=owners))
        b.bind(param := Var("n", Scalar.U32, reserved=True))
        b.uniform.append(param)

    atom = atomics.plan(b, total)
    if atom is not None:
        params += atom.params
        args += atom.args
        items += atom.items

    b.stmts_left = b.limits.max_stmts
    b.max_work_seen = 1
    body = _thread_ids(b, launch)
    base = Pos(in_kernel=True, can_return=b.features.early_return and not has_shared,
               output_access=not guarded)
    wave = WaveGen(b, launch) if waves.wanted(b) else None
    if wave is not None:  # before anything that could return: wave-uniform control
        body += wave.section(base, b.src.integer(1, max(1, b.limits.wave_stmts_max)))
    if atom is not None:
        body += atomics.prologue(b, atom, base)
    body += stmts(b, base, b.src.integer(b.limits.top_stmts_min, b.limits.top_stmts_max))
    if atom is not None:
        body += atomics.statements(b, atom, base, b.src.integer(1, 4))
    last = base
    if has_shared:
        phases, last = _phases(b, base, rounds_param)
        body += phases
        if wave is not None and not last.can_return:  # no thread-dependent return so far
            body += wave.section(last, b.src.integer(1, max(1, b.limits.wave_stmts_max)))
    results = wave.stored() if wave is not None else None
    if guarded:
        inside = last.nested(output_access=True)
        cond = ast.Binary(op=ast.BinOp.LT, lhs=ast.Name(ident="gid"),
                          rhs=ast.Cast(expr=ast.Name(ident="n"), to=Scalar.USIZE))
        body.append(ast.ExprStmt(expr=ast.If(cond=cond, then=ast.Block(
            stmts=tuple(_final_writes(b, inside, results)))), semi=False))
    else:
        body += _final_writes(b, last, results)
    kernel = ast.Fn(name=ENTRY, params=tuple(params), ret=None, body=ast.Block(stmts=tuple(body)),
                    kernel=True, public=True)
    module = ast.Module(items=(*items, kernel))
    case = Case(entry=ENTRY, kernel=print_module(module), launch=launch, args=tuple(args),
                provenance=Provenance(generator=GENERATOR, seed=seed, profile=b.profile.name))
    return module, case


__all__ = ["ENTRY", "GENERATOR", "build"]
