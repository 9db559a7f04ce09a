"""The `half` profile's productions: `f16`, the methods GPUs have instructions for, and pairs
of 16-bit values side by side.

Why pairs: AMDGPU has packed 16-bit instructions (`v_pk_add_f16`, `v_pk_fma_f16`,
`v_pk_max_i16`, ...), and LLVM reaches them when its SLP vectoriser packs two isomorphic
scalar computations whose results are stored next to each other. `pair_store` writes the
same expression tree twice, once per lane, over adjacent input elements, into a thread's two
adjacent output slots (`out[gid * slots + 2k]` and `+ 1`), which is the shape SLP looks for.

Everything stays well-defined by construction (generators/expr.py): `div_euclid`/
`rem_euclid` get the same never-zero, positive divisor as `wrapping_div`; `clamp` gets
literal bounds with `lo <= hi`; `pow` a small literal exponent. The default profile gives
every production here weight 0, so its kernels do not change (`DEFAULT_SEEDS_0_49_SHA256`).
"""

from __future__ import annotations

from generators.context import Buffer, Builder, Pos
from generators.values import int_literal, usize
from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.literals import float_literal
from rgpu_fuzz.lang.methods import NEW_METHODS
from rgpu_fuzz.model.scalars import Scalar

INT_COUNT_NEW = ("count_zeros", "leading_ones", "trailing_ones")
INT_UNARY_NEW = ("swap_bytes", "reverse_bits")
INT_SAME_NEW = ("saturating_add", "saturating_sub", "saturating_mul")
INT_DIV_NEW = ("div_euclid", "rem_euclid")
INT_POW = ("pow", "wrapping_pow")
FLOAT_UNARY_NEW = ("signum", "floor", "ceil", "round", "trunc")
FLOAT_BOOL = ("is_nan", "is_sign_negative")

__all__ = ["NEW_METHODS", "final_pair", "method_names", "new_method", "pair_store"]

_SIGNED_OF = {Scalar.U8: Scalar.I8, Scalar.U16: Scalar.I16, Scalar.U32: Scalar.I32,
              Scalar.U64: Scalar.I64}
_SIXTEEN = (Scalar.F16, Scalar.I16, Scalar.U16)


def method_names(b: Builder, ty: Scalar) -> list[str]:
    """The methods of this module that can give a value of `ty` (weights come from the
    profile; the default gives each 0)."""
    if ty is Scalar.BOOL:
        return list(FLOAT_BOOL) if b.features.floats else []
    if ty.is_float:
        return [*FLOAT_UNARY_NEW, "copysign", "clamp"]
    names = [*INT_COUNT_NEW, *INT_UNARY_NEW, *INT_SAME_NEW, *INT_DIV_NEW, *INT_POW]
    if ty in _SIGNED_OF or ty is Scalar.USIZE:
        names.append("abs_diff")
    if ty in _SIGNED_OF:
        names.append("unsigned_abs")
    return names


def bool_methods_on(b: Builder) -> bool:
    """Whether `expr` may build a `bool` through `is_nan`/`is_sign_negative`."""
    return b.features.floats and any(b.profile.methods.get(n, 0) for n in FLOAT_BOOL)


def new_method(b: Builder, ty: Scalar, name: str, depth: int, pos: Pos) -> ast.Expr:
    """`recv.name(args)` of type `ty` for a method of `method_names`."""
    from generators.expr import convert, expr, nonzero_divisor

    call = ast.MethodCall
    if name in FLOAT_BOOL:
        ft = b.src.choice([t for t in b.types if t.is_float] or [Scalar.F32])
        return call(receiver=expr(b, ft, depth, pos), method=name)
    if name in INT_COUNT_NEW:
        recv_ty = b.int_type()
        return convert(call(receiver=expr(b, recv_ty, depth, pos), method=name), Scalar.U32, ty)
    if name == "abs_diff":
        recv_ty = b.src.choice((ty, _SIGNED_OF[ty])) if ty in _SIGNED_OF else ty
        return call(receiver=expr(b, recv_ty, depth, pos), method=name,
                    args=(expr(b, recv_ty, depth, pos),))
    if name == "unsigned_abs":
        return call(receiver=expr(b, _SIGNED_OF[ty], depth, pos), method=name)
    recv = expr(b, ty, depth, pos)
    if name in INT_DIV_NEW:
        return call(receiver=recv, method=name, args=(nonzero_divisor(b, ty, depth, pos),))
    if name in INT_SAME_NEW or name == "copysign":
        return call(receiver=recv, method=name, args=(expr(b, ty, depth, pos),))
    if name in INT_POW:
        return call(receiver=recv, method=name,
                    args=(int_literal(b.src.integer(0, 9), Scalar.U32),))
    if name == "clamp":
        lo = -float(b.src.choice((0.0, 0.5, 1.0, 100.0)))
        hi = float(b.src.choice((0.0, 0.25, 2.0, 1000.0)))
        return call(receiver=recv, method=name,
                    args=(float_literal(lo, ty), float_literal(hi, ty)))
    return call(receiver=recv, method=name)


# ---------------------------------------------------------------- pairs side by side

_FLOAT_PAIR_OPS = ("+", "-", "*", "min", "max", "mul_add", "abs", "copysign", "floor", "sqrt")
_INT_PAIR_OPS = ("+", "-", "*", "min", "max", "saturating_add", "saturating_sub", "&", "^",
                 ">>")


def pair_output(b: Builder) -> Buffer | None:
    """An output of a 16-bit type with at least two slots per thread, if there is one."""
    outs = [o for o in b.outputs if o.elem in _SIXTEEN and o.slots >= 2]
    return b.src.choice(outs) if outs else None


def pair_store(b: Builder, pos: Pos, out: Buffer | None = None,
               k: int | None = None) -> list[ast.Stmt] | None:
    """`out[g*s + 2k] = T(x[(g*2 + 0) % n]); out[g*s + 2k + 1] = T(x[(g*2 + 1) % n]);`
    with one random expression tree `T` (the same operators and constants in both lanes),
    `x` an input of the output's type (or a conversion of one); None when the kernel has no
    16-bit output with two slots. `out` and `k` name the output and the slot pair (the final
    writes, `final_pair`); else both are drawn."""
    out = out or pair_output(b)
    assert b.gid is not None
    if out is None:
        return None
    ty = out.elem
    same = [i for i in b.inputs if i.elem is ty]
    inputs = same or list(b.inputs)
    sources = [b.src.choice(inputs) for _ in range(b.src.integer(1, 2))]
    ops = [b.src.choice(_FLOAT_PAIR_OPS if ty.is_float else _INT_PAIR_OPS)
           for _ in range(b.src.integer(1, 3))]
    consts = [_pair_constant(b, ty) for _ in ops]
    k = b.src.integer(0, out.slots // 2 - 1) if k is None else k
    names = (b.fresh("pair"), b.fresh("pair"))
    stmts: list[ast.Stmt] = []
    stores: list[ast.Stmt] = []
    for lane in (0, 1):
        leaves = [_lane_read(b, src, ty, lane) for src in sources]
        value = leaves[0]
        for i, (op, c) in enumerate(zip(ops, consts, strict=True)):
            other = leaves[(i + 1) % len(leaves)] if len(leaves) > 1 else c
            value = _apply(op, ty, value, other, c)
        stmts.append(ast.Let(name=names[lane], mutable=False, ty=ast.ScalarType(scalar=ty),
                             init=value))
        stores.append(ast.Assign(target=ast.Index(base=ast.Name(ident=out.name),
                                                  index=_slot(b.gid, out.slots, 2 * k + lane)),
                                 value=ast.Name(ident=names[lane])))
    # one guard for both stores (always true: outputs hold every thread's slots), so that
    # no bounds check's branch splits them and the pair lands in one basic block
    last = _slot(b.gid, out.slots, 2 * k + 1)
    guard = ast.Binary(op=ast.BinOp.LT, lhs=last, rhs=ast.MethodCall(
        receiver=ast.Name(ident=out.name), method="len"))
    stmts.append(ast.ExprStmt(expr=ast.If(cond=guard, then=ast.Block(stmts=tuple(stores)),
                                          else_=None), semi=False))
    return stmts


def final_pair(b: Builder, pos: Pos, out: Buffer, j: int) -> list[ast.Stmt] | None:
    """The final writes of slots `j` and `j + 1` of `out` as one pair (`pair_store`), when
    the profile writes pairs, `out` is 16-bit, `j` is even and both slots exist; else None.
    Why: the final writes store to every slot of every output after all other statements
    (generators/kernel.py), so a pair stored before them is dead and whatever LLVM packs for
    it never reaches an output; a pair among the final writes is what the kernel returns,
    so a wrong packed instruction (a seeded op_sel flip, `rgpu_fuzz/bench/seeded/op_sel.py`)
    changes the outputs. Half of the eligible slot pairs, drawn."""
    if (not b.profile.statements.get("pair_store", 0) or out.elem not in _SIXTEEN
            or j % 2 or j + 1 >= out.slots or not b.src.boolean(0.5)):
        return None
    return pair_store(b, pos, out, j // 2)


def _slot(gid: str, slots: int, j: int) -> ast.Expr:
    return ast.Binary(op=ast.BinOp.ADD, lhs=ast.Binary(
        op=ast.BinOp.MUL, lhs=ast.Name(ident=gid), rhs=usize(slots)), rhs=usize(j))


def _pair_constant(b: Builder, ty: Scalar) -> ast.Expr:
    if ty.is_float:
        return float_literal(b.src.choice((0.5, 1.5, -2.0, 0.1, 3.0, 65504.0)), ty)
    return int_literal(b.src.choice((1, 3, 7, 255, ty.max_value)), ty)


def _lane_read(b: Builder, src: Buffer, ty: Scalar, lane: int) -> ast.Expr:
    """`src[(gid * 2 + lane) % src.len()]` as a value of `ty`."""
    from generators.expr import convert

    assert b.gid is not None
    pos = ast.Binary(op=ast.BinOp.ADD, lhs=ast.Binary(
        op=ast.BinOp.MUL, lhs=ast.Name(ident=b.gid), rhs=usize(2)), rhs=usize(lane))
    length = ast.MethodCall(receiver=ast.Name(ident=src.name), method="len")
    index = ast.Binary(op=ast.BinOp.REM, lhs=pos, rhs=length)
    return convert(ast.Index(base=ast.Name(ident=src.name), index=index), src.elem, ty)


def _apply(op: str, ty: Scalar, a: ast.Expr, other: ast.Expr, c: ast.Expr) -> ast.Expr:
    call = ast.MethodCall
    match op:
        case "+" | "-" | "*" | "&" | "^":
            return ast.Binary(op=ast.BinOp(op), lhs=a, rhs=other)
        case ">>":
            return ast.Binary(op=ast.BinOp.SHR, lhs=a, rhs=int_literal(3, Scalar.U32))
        case "mul_add":
            return call(receiver=a, method=op, args=(other, c))
        case "abs" | "floor" | "sqrt":
            return call(receiver=a, method=op)
    return call(receiver=a, method=op, args=(other,))
