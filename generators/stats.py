"""Feature coverage of generated kernels: which productions, operators, methods, types,
casts and control-flow forms a set of modules uses, and which of the language's features it
never reaches (`rgpu-fuzz gen --stats`). Where constructs stand and the combinations that
reach different lowering code are counted by `constructs.py`.

The full feature list is data (`ALL_FEATURES`), derived from docs/language.md, so that
"never generated" is a concrete list rather than an impression. Types of operands (for casts
and operators) come from the checker: untyped trees are checked first.
"""

from __future__ import annotations

import math
import struct
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.features import children, walk
from rgpu_fuzz.lang.methods import NEW_METHODS, WAVE_FUNCTIONS
from rgpu_fuzz.model.case import Case, Launch
from rgpu_fuzz.model.scalars import Scalar

_NUMERIC = [s for s in Scalar if s is not Scalar.BOOL]
_METHODS = (
    "wrapping_add", "wrapping_sub", "wrapping_mul", "wrapping_div", "wrapping_rem",
    "wrapping_neg", "wrapping_shl", "wrapping_shr", "rotate_left", "rotate_right",
    "count_ones", "leading_zeros", "trailing_zeros", "min", "max", "abs", "wrapping_abs",
    "sqrt", "mul_add", "to_bits", "len", *sorted(NEW_METHODS),
)
_FORMS = (
    "stmt:let", "stmt:let-mut", "stmt:let-inferred", "stmt:let-array", "stmt:shadowing",
    "stmt:assign", "stmt:if", "stmt:else", "stmt:else-if", "stmt:while", "stmt:loop",
    "stmt:for", "stmt:for-inclusive", "stmt:break", "stmt:continue", "stmt:return",
    "stmt:return-value", "stmt:block", "stmt:unsafe-block",
    "expr:if", "expr:else-if", "expr:block", "expr:unsafe-block", "expr:array-repeat",
    "expr:array-list", "expr:index-input", "expr:index-output", "expr:index-local",
    "expr:index-shared", "expr:call", "expr:assoc-MIN", "expr:assoc-MAX",
    "expr:from_bits-f32", "expr:from_bits-f64", "expr:from_bits-f16", "value:nan", "value:inf",
    "value:-0.0", "value:subnormal",
    "item:const", "item:shared", "item:helper", "item:inline-never", "item:helper-unit",
    "item:helper-mut-param", "item:shared-len-const",
    "gpu:barrier", "gpu:barrier-in-loop", "gpu:output-store", "gpu:shared-store",
    "gpu:barrier-in-if", "gpu:barrier-in-else", "gpu:barrier-in-while",
    "gpu:barrier-in-nested-loop", "gpu:break-in-barrier-loop", "gpu:continue-in-barrier-loop",
    "gpu:return-in-barrier-loop", "gpu:return-after-barrier", "gpu:pair-store-16",
)
_LAUNCH = ("launch:1d", "launch:2d", "launch:3d", "launch:multi-block")

ALL_FEATURES: tuple[str, ...] = (
    *(f"type:{s}" for s in Scalar),
    *(f"op:{op.value}" for op in ast.BinOp),
    "op:unary-", "op:unary!",
    "assign:=", *(f"assign:{op.value}=" for op in ast.BinOp if op in ast.COMPOUND_OPS),
    *(f"method:{m}" for m in _METHODS),
    *(f"cast:{a}->{b}" for a in _NUMERIC for b in _NUMERIC),
    *(f"cast:bool->{b}" for b in Scalar if b.is_int),
    *(f"prelude:{f}" for f in ast.PRELUDE_FUNCTIONS if f != "sync_threads"),
    *_FORMS,
    *_LAUNCH,
)
"""Every feature of docs/language.md that coverage can see, by category prefix."""

HALF_FEATURES: frozenset[str] = frozenset(
    f for f in ALL_FEATURES
    if "f16" in f or f.removeprefix("method:") in NEW_METHODS or f == "gpu:pair-store-16")
"""The features only the `half` profile writes (`f16` and the methods the default mix
leaves out to keep its kernels unchanged: `lang.methods.NEW_METHODS`)."""

DEFAULT_FEATURES: tuple[str, ...] = tuple(f for f in ALL_FEATURES if f not in HALF_FEATURES)
"""The features the default profile can reach."""




@dataclass(frozen=True, slots=True)
class Coverage:
    """How often each feature occurs over `modules` kernels (and in how many of them)."""

    modules: int
    counts: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    kernels_with: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    def missing(self, all_features: Iterable[str] = ALL_FEATURES) -> list[str]:
        """The features never generated, in the order of `all_features`."""
        return [f for f in all_features if not self.counts.get(f)]

    def render(self, all_features: Iterable[str] = ALL_FEATURES) -> str:
        """A plain-text table: per category, each feature with its count and the share of
        kernels that use it; then the features never reached."""
        feats = list(all_features)
        extra = sorted(set(self.counts) - set(feats))
        rows = [f"{'feature':<34} {'count':>8} {'kernels':>8}"]
        last = ""
        for f in [*feats, *extra]:
            cat = f.split(":", 1)[0]
            if cat != last and len(rows) > 1:
                rows.append("")
            last = cat
            n = self.counts.get(f, 0)
            share = 100.0 * self.kernels_with.get(f, 0) / max(1, self.modules)
            rows.append(f"{f:<34} {n:>8} {share:>7.1f}%")
        missing = self.missing(feats)
        reached = len(feats) - len(missing)
        rows.append("")
        rows.append(f"{self.modules} kernels; {reached}/{len(feats)} features reached")
        if missing:
            rows.append("never generated: " + ", ".join(missing))
        return "\n".join(rows)


def _typed(module: ast.Module) -> ast.Module:
    """The checker's annotated tree when `module` has no types yet (and checks)."""
    from rgpu_fuzz.lang.checker import check_source
    from rgpu_fuzz.lang.printer import print_module
    from rgpu_fuzz.lang.source import DiagnosticError

    for n in walk(module):
        if isinstance(n, ast.IntLit | ast.FloatLit | ast.BoolLit | ast.Name):
            if n.ty is not None:
                return module
            break
    try:
        return check_source(print_module(module), "<generated>").module
    except DiagnosticError:
        return module


def _float_value_features(bits: int, ty: Scalar) -> list[str]:
    if ty is Scalar.F32:
        v = struct.unpack("<f", struct.pack("<I", bits & 0xFFFF_FFFF))[0]
        tiny = 2.0**-126
    elif ty is Scalar.F16:
        v = struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0]
        tiny = 2.0**-14
    else:
        v = struct.unpack("<d", struct.pack("<Q", bits & (2**64 - 1)))[0]
        tiny = 2.0**-1022
    if math.isnan(v):
        return ["value:nan"]
    if math.isinf(v):
        return ["value:inf"]
    if v == 0 and math.copysign(1.0, v) < 0:
        return ["value:-0.0"]
    if 0 < abs(v) < tiny:
        return ["value:subnormal"]
    return []


def _fn_features(fn: ast.Fn, shared: set[str], found: Counter[str]) -> None:
    slices = {p.name: p.ty.mutable for p in fn.params if isinstance(p.ty, ast.SliceType)}
    arrays = {n.name for n in walk(fn.body) if isinstance(n, ast.Let) and (
        isinstance(n.ty, ast.ArrayType) or isinstance(n.init, ast.ArrayRepeat | ast.ArrayList))}
    declared = {p.name for p in fn.params}
    loop_nodes = [n for n in walk(fn.body) if isinstance(n, ast.For | ast.While | ast.Loop)]
    for loop in loop_nodes:
        if any(isinstance(n, ast.Call) and n.func == "sync_threads" for n in walk(loop)):
            found["gpu:barrier-in-loop"] += 1
    if fn.kernel:
        _barrier_features(fn.body, found)
    for n in walk(fn.body):
        match n:
            case ast.Let(name=name, mutable=mut, ty=ty, init=init):
                is_array = isinstance(ty, ast.ArrayType) or isinstance(
                    init, ast.ArrayRepeat | ast.ArrayList)
                found["stmt:let-array" if is_array else "stmt:let"] += 1
                if mut:
                    found["stmt:let-mut"] += 1
                if ty is None:
                    found["stmt:let-inferred"] += 1
                if name in declared:
                    found["stmt:shadowing"] += 1
                declared.add(name)
            case ast.Assign(op=op, target=target):
                found[f"assign:{op.value}=" if op else "assign:="] += 1
                found["stmt:assign"] += 1
                if isinstance(target, ast.Index) and isinstance(target.base, ast.Name):
                    base = target.base.ident
                    if base in shared:
                        found["gpu:shared-store"] += 1
                    elif slices.get(base):
                        found["gpu:output-store"] += 1
            case ast.ExprStmt(expr=ast.If() as e, semi=False):
                found["stmt:if"] += 1
                _else_features(e, "stmt", found)
                if _pair_store(e):
                    found["gpu:pair-store-16"] += 1
            case ast.ExprStmt(expr=ast.BlockExpr(unsafe=u), semi=False):
                found["stmt:unsafe-block" if u else "stmt:block"] += 1
            case ast.While():
                found["stmt:while"] += 1
            case ast.Loop():
                found["stmt:loop"] += 1
            case ast.For(inclusive=inc):
                found["stmt:for"] += 1
                if inc:
                    found["stmt:for-inclusive"] += 1
            case ast.Break():
                found["stmt:break"] += 1
            case ast.Continue():
                found["stmt:continue"] += 1
            case ast.Return(value=v):
                found["stmt:return-value" if v is not None else "stmt:return"] += 1
            case ast.Index(base=ast.Name(ident=base)):
                kind = ("shared" if base in shared else "local" if base in arrays
                        else "output" if slices.get(base) else "input")
                found[f"expr:index-{kind}"] += 1
    _expr_features(fn.body, found)


def _barrier_features(body: ast.Block, found: Counter[str]) -> None:
    """Where a kernel's barriers stand in its control flow (generators/barriers.py): in `if`
    and `else` branches, in `while`/`loop`, in loops nested in loops with barriers; and the
    exits of loops with barriers, and `return`s after a barrier in the text."""
    barrier: dict[int, bool] = {}

    def has(n: object) -> bool:
        got = barrier.get(id(n))
        if got is None:
            got = (isinstance(n, ast.Call) and n.func == "sync_threads") or any(
                [has(c) for c in children(n)])
            barrier[id(n)] = got
        return got

    seen = False

    def visit(n: object, loop: object | None, barrier_loops: int) -> None:
        nonlocal seen
        match n:
            case ast.Call(func="sync_threads"):
                seen = True
            case ast.If(then=then, else_=else_):
                if has(then):
                    found["gpu:barrier-in-if"] += 1
                if else_ is not None and has(else_):
                    found["gpu:barrier-in-else"] += 1
            case ast.While() | ast.Loop() if has(n):
                found["gpu:barrier-in-while"] += 1
            case ast.Break() | ast.Continue() | ast.Return() if loop is not None and has(loop):
                word = {ast.Break: "break", ast.Continue: "continue"}.get(type(n), "return")
                found[f"gpu:{word}-in-barrier-loop"] += 1
        if isinstance(n, ast.Return) and seen:
            found["gpu:return-after-barrier"] += 1
        if isinstance(n, ast.For | ast.While | ast.Loop):
            if has(n) and barrier_loops:
                found["gpu:barrier-in-nested-loop"] += 1
            loop, barrier_loops = n, barrier_loops + int(has(n))
        for c in children(n):
            visit(c, loop, barrier_loops)

    visit(body, None, 0)


def _pair_store(e: ast.If) -> bool:
    """`if ... { o[x + k] = a; o[x + k + 1] = b; }` on a 16-bit output: two adjacent
    elements in one block, the shape `generators/half.py` writes for LLVM's SLP vectoriser."""
    stmts = e.then.stmts
    if e.else_ is not None or len(stmts) != 2:
        return False
    slots = []
    for st in stmts:
        match st:
            case ast.Assign(op=None, target=ast.Index(
                    base=ast.Name(ident=base), index=ast.Binary(
                        op=ast.BinOp.ADD, lhs=lhs, rhs=ast.IntLit(value=k)))):
                slots.append((base, lhs, k, st.target.ty))
            case _:
                return False
    (b0, x0, k0, t0), (b1, x1, k1, _) = slots
    sixteen = t0 in (Scalar.F16, Scalar.I16, Scalar.U16) or t0 is None
    return b0 == b1 and x0 == x1 and k1 == k0 + 1 and sixteen


def _else_features(e: ast.If, where: str, found: Counter[str]) -> None:
    if isinstance(e.else_, ast.If):
        found[f"{where}:else-if"] += 1
        _else_features(e.else_, where, found)
    elif e.else_ is not None and where == "stmt":
        found["stmt:else"] += 1


def _expr_features(root: object, found: Counter[str]) -> None:
    stmt_level = {id(n.expr) for n in walk(root) if isinstance(n, ast.ExprStmt) and not n.semi}
    for n in walk(root):
        ty = getattr(n, "ty", None)
        if isinstance(ty, Scalar) and not isinstance(n, ast.If | ast.BlockExpr):
            found[f"type:{ty}"] += 1
        match n:
            case ast.ScalarType(scalar=s) | ast.SliceType(elem=s) | ast.ArrayType(elem=s):
                found[f"type:{s}"] += 1
            case ast.Binary(op=op):
                found[f"op:{op.value}"] += 1
            case ast.Unary(op=op, operand=operand):
                found[f"op:unary{op.value}"] += 1
                if op is ast.UnOp.NEG and isinstance(operand, ast.FloatLit) \
                        and float(operand.text) == 0:
                    found["value:-0.0"] += 1
            case ast.Cast(expr=inner, to=to):
                frm = inner.ty
                found[f"cast:{frm}->{to}" if isinstance(frm, Scalar) else f"cast:?->{to}"] += 1
            case ast.MethodCall(method=m):
                found[f"method:{m}"] += 1
            case ast.Call(func=f):
                if f == "sync_threads":
                    found["gpu:barrier"] += 1
                elif f in ast.PRELUDE_FUNCTIONS:
                    found[f"prelude:{f}"] += 1
                elif f in WAVE_FUNCTIONS:  # counted per construct (constructs.py "wave:")
                    found[f"wave:{f}"] += 1
                else:
                    found["expr:call"] += 1
            case ast.AssocConst(name=name):
                found[f"expr:assoc-{name}"] += 1
            case ast.AssocCall(scalar=s, name="from_bits", args=args):
                found[f"expr:from_bits-{s}"] += 1
                if args and isinstance(args[0], ast.IntLit):
                    for f in _float_value_features(args[0].value, s):
                        found[f] += 1
            case ast.If() if id(n) not in stmt_level:
                found["expr:if"] += 1
                _else_features(n, "expr", found)
            case ast.BlockExpr(unsafe=u) if id(n) not in stmt_level:
                found["expr:unsafe-block" if u else "expr:block"] += 1
            case ast.ArrayRepeat():
                found["expr:array-repeat"] += 1
            case ast.ArrayList():
                found["expr:array-list"] += 1


def module_features(module: ast.Module) -> Counter[str]:
    """Feature counts of one module (typed by the checker when it is not yet)."""
    module = _typed(module)
    found: Counter[str] = Counter()
    shared = {i.name for i in module.items if isinstance(i, ast.Shared)}
    for item in module.items:
        match item:
            case ast.Const(ty=ty, value=v):
                found["item:const"] += 1
                _expr_features(v, found)
                found[f"type:{ty.scalar}"] += 1
            case ast.Shared(elem=elem, len=length):
                found["item:shared"] += 1
                found[f"type:{elem}"] += 1
                if isinstance(length, ast.Name):
                    found["item:shared-len-const"] += 1
            case ast.Fn(kernel=False) as fn:
                found["item:helper"] += 1
                if fn.inline_never:
                    found["item:inline-never"] += 1
                if fn.ret is None:
                    found["item:helper-unit"] += 1
                if any(p.mutable for p in fn.params):
                    found["item:helper-mut-param"] += 1
                _fn_features(fn, shared, found)
            case ast.Fn() as fn:
                _fn_features(fn, shared, found)
    return found


def launch_features(launch: Launch) -> list[str]:
    dims = 3 if launch.block[2] > 1 or launch.grid[2] > 1 else \
        2 if launch.block[1] > 1 or launch.grid[1] > 1 else 1
    out = [f"launch:{dims}d"]
    if launch.blocks > 1:
        out.append("launch:multi-block")
    return out


def coverage(modules: Iterable[ast.Module], launches: Iterable[Launch] = ()) -> Coverage:
    """Feature coverage over `modules` (and, when given, their launch shapes)."""
    counts: Counter[str] = Counter()
    kernels_with: Counter[str] = Counter()
    n = 0
    for m in modules:
        n += 1
        found = module_features(m)
        counts.update(found)
        kernels_with.update(set(found))
    for launch in launches:
        feats = launch_features(launch)
        counts.update(feats)
        kernels_with.update(feats)
    return Coverage(n, MappingProxyType(dict(counts)), MappingProxyType(dict(kernels_with)))


def case_coverage(cases: Iterable[Case]) -> Coverage:
    """Coverage of cases: their kernels (parsed and checked) and their launches."""
    from rgpu_fuzz.lang.checker import check_source
    from rgpu_fuzz.lang.parser import parse
    from rgpu_fuzz.lang.source import DiagnosticError

    def typed(c: Case) -> ast.Module:
        try:
            return check_source(c.kernel, f"<case {c.id}>").module
        except DiagnosticError:
            return parse(c.kernel, f"<case {c.id}>")

    cases = list(cases)
    return coverage((typed(c) for c in cases), [c.launch for c in cases])
