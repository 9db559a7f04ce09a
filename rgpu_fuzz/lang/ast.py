"""The kernel-language AST: frozen dataclasses with a `Span` on every node.

Two things ride along without taking part in equality (`compare=False`), so that
`parse(print(m)) == m` holds for parsed, generated and checked trees alike:
* `span` — where the node came from (`NO_SPAN` for generated nodes);
* the checker's annotations — `ty` on every expression, `binding` on names and on the
  statements that introduce them. The parser leaves them `None`; `check` returns a new tree
  with them filled in, and the interpreter and the lowering rely on them.

`binding` numbers every local variable, parameter and `for` variable of one function
uniquely (from 0), so later stages never resolve scopes or shadowing again. A `Name` that
refers to a `const` or a `#[shared]` static has `binding = None` and `kind` saying which.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import TypeAlias, TypeVar

from rgpu_fuzz.lang.source import NO_SPAN, Span
from rgpu_fuzz.lang.types import Type
from rgpu_fuzz.model.scalars import Scalar


class UnOp(StrEnum):
    NEG = "-"
    NOT = "!"


class BinOp(StrEnum):
    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"
    REM = "%"
    AND = "&"
    OR = "|"
    XOR = "^"
    SHL = "<<"
    SHR = ">>"
    EQ = "=="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    LAND = "&&"
    LOR = "||"


COMPOUND_OPS: frozenset[BinOp] = frozenset(
    {BinOp.ADD, BinOp.SUB, BinOp.MUL, BinOp.DIV, BinOp.REM, BinOp.AND, BinOp.OR, BinOp.XOR,
     BinOp.SHL, BinOp.SHR}
)
"""Operators that have a compound-assignment form (`+=` ... `>>=`)."""


class AtomicOrdering(StrEnum):
    """`core::sync::atomic::Ordering`'s variants, written `Ordering::Relaxed` (lang/atomics.py
    has the rules on which operation takes which)."""

    RELAXED = "Relaxed"
    ACQUIRE = "Acquire"
    RELEASE = "Release"
    ACQ_REL = "AcqRel"
    SEQ_CST = "SeqCst"


class NameKind(StrEnum):
    """What a `Name` resolved to (filled in by the checker)."""

    LOCAL = "local"      # let binding, parameter or for variable: see `binding`
    CONST = "const"      # a `const` item
    SHARED = "shared"    # a `#[shared] static mut` array


# ---------------------------------------------------------------- type expressions (syntax)


@dataclass(frozen=True, slots=True, kw_only=True)
class ScalarType:
    """A scalar type as written: `u32`."""

    scalar: Scalar
    span: Span = field(default=NO_SPAN, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ArrayType:
    """`[elem; len]`; `len` is an integer literal or the name of a `usize` const."""

    elem: Scalar
    len: Expr
    atomic: bool = False
    span: Span = field(default=NO_SPAN, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class SliceType:
    """`&[elem]` or `&mut [elem]` — kernel parameters only. `atomic`: `&[AtomicU32]`, with
    `mutable` True (the kernel writes it; its final contents are an output)."""

    elem: Scalar
    mutable: bool
    atomic: bool = False
    span: Span = field(default=NO_SPAN, compare=False)


TypeExpr: TypeAlias = ScalarType | ArrayType | SliceType


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True, kw_only=True)
class IntLit:
    """An integer literal; `value` is non-negative (a `-` in front is a `Unary`)."""

    value: int
    suffix: Scalar | None = None
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class FloatLit:
    """A float literal. `text` is its decimal digits, normalised by the lexer (no `_`,
    `1.` becomes `1.0`, `1f32` becomes `1.0`...): the exact value depends on the type the
    checker gives it, because `0.1f32` rounds the decimal straight to binary32."""

    text: str
    suffix: Scalar | None = None
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class BoolLit:
    value: bool
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Name:
    """A use of a local, parameter, `const` or `#[shared]` static."""

    ident: str
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)
    kind: NameKind | None = field(default=None, compare=False)
    binding: int | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Unary:
    op: UnOp
    operand: Expr
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Binary:
    op: BinOp
    lhs: Expr
    rhs: Expr
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Cast:
    """`expr as to`."""

    expr: Expr
    to: Scalar
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Index:
    """`base[index]`; `base` is a local array, a slice parameter or a shared static."""

    base: Expr
    index: Expr
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class MethodCall:
    """`receiver.method(args)`: the integer and float methods of docs/language.md, and `len`."""

    receiver: Expr
    method: str
    args: tuple[Expr, ...] = ()
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Call:
    """`func(args)`: a helper `fn` or a prelude function (`thread_idx_x`, `sync_threads`...)."""

    func: str
    args: tuple[Expr, ...] = ()
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class AssocCall:
    """`scalar::name(args)`, e.g. `f32::from_bits(0x7fc0_0000u32)`."""

    scalar: Scalar
    name: str
    args: tuple[Expr, ...] = ()
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class AssocConst:
    """`scalar::NAME`: `MIN` and `MAX` of the integer types."""

    scalar: Scalar
    name: str
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ArrayRepeat:
    """`[value; len]`; `len` is an integer literal or a `usize` const name."""

    value: Expr
    len: Expr
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ArrayList:
    """`[a, b, c]` (at least one element)."""

    elems: tuple[Expr, ...]
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class If:
    """`if cond { then } else { ... }`; `else_` is a `Block`, another `If` (else if) or None.
    Used as a statement (type `()`) or as an expression (both branches, same type)."""

    cond: Expr
    then: Block
    else_: Block | If | None = None
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockExpr:
    """`{ ... }` or `unsafe { ... }` in expression or statement position."""

    block: Block
    unsafe: bool = False
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderingLit:
    """`Ordering::Relaxed` ...: an argument of an atomic method or of `fence` only."""

    ordering: AtomicOrdering
    span: Span = field(default=NO_SPAN, compare=False)
    ty: Type | None = field(default=None, compare=False)


Expr: TypeAlias = (
    IntLit | FloatLit | BoolLit | Name | Unary | Binary | Cast | Index | MethodCall | Call
    | AssocCall | AssocConst | ArrayRepeat | ArrayList | If | BlockExpr | OrderingLit
)

# ---------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True, kw_only=True)
class Block:
    """`{ stmts; tail }` — `tail` is the value of the block (None: the block is `()`)."""

    stmts: tuple[Stmt, ...] = ()
    tail: Expr | None = None
    span: Span = field(default=NO_SPAN, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Let:
    """`let [mut] name[: ty] = init;` — an initialiser is required in this language."""

    name: str
    mutable: bool
    ty: TypeExpr | None
    init: Expr
    span: Span = field(default=NO_SPAN, compare=False)
    binding: int | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Assign:
    """`target = value;` or `target op= value;` (`op` set); target is a Name or an Index."""

    target: Expr
    value: Expr
    op: BinOp | None = None
    span: Span = field(default=NO_SPAN, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExprStmt:
    """An expression in statement position. `semi` says whether a `;` followed it: block-like
    expressions (`if`, blocks) may stand without one and must then be `()`."""

    expr: Expr
    semi: bool = True
    span: Span = field(default=NO_SPAN, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class While:
    cond: Expr
    body: Block
    span: Span = field(default=NO_SPAN, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Loop:
    body: Block
    span: Span = field(default=NO_SPAN, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class For:
    """`for var in start..end { body }` (`..=` when `inclusive`); integer ranges only."""

    var: str
    start: Expr
    end: Expr
    body: Block
    inclusive: bool = False
    span: Span = field(default=NO_SPAN, compare=False)
    binding: int | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Break:
    span: Span = field(default=NO_SPAN, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Continue:
    span: Span = field(default=NO_SPAN, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Return:
    value: Expr | None = None
    span: Span = field(default=NO_SPAN, compare=False)


Stmt: TypeAlias = Let | Assign | ExprStmt | While | Loop | For | Break | Continue | Return

# ---------------------------------------------------------------- items


@dataclass(frozen=True, slots=True, kw_only=True)
class Param:
    name: str
    ty: TypeExpr
    mutable: bool = False
    span: Span = field(default=NO_SPAN, compare=False)
    binding: int | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Use:
    """`use rgpu::*;` — the prelude import every kernel file starts with."""

    span: Span = field(default=NO_SPAN, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Const:
    """`const NAME: ty = value;` with a scalar type and a constant expression."""

    name: str
    ty: ScalarType
    value: Expr
    span: Span = field(default=NO_SPAN, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Shared:
    """`#[shared] static mut NAME: [elem; len] = init;` — workgroup-shared memory. The
    initialiser is required by Rust but has no meaning here: shared memory is uninitialised at
    block start (docs/language.md).

    `atomic`: `#[shared] static NAME: [AtomicU32; len] = [const { AtomicU32::new(v) }; len];`
    (no `mut`); `init` is then `ArrayRepeat(value=v, len=len)`, printed in that form."""

    name: str
    elem: Scalar
    len: Expr
    init: Expr
    atomic: bool = False
    span: Span = field(default=NO_SPAN, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Fn:
    """A helper `fn`, or (`kernel`) a `#[kernel] pub fn` entry point returning `()`."""

    name: str
    params: tuple[Param, ...]
    ret: ScalarType | None
    body: Block
    kernel: bool = False
    public: bool = False
    inline_never: bool = False
    span: Span = field(default=NO_SPAN, compare=False)


Item: TypeAlias = Use | Const | Shared | Fn


@dataclass(frozen=True, slots=True, kw_only=True)
class Module:
    items: tuple[Item, ...]
    span: Span = field(default=NO_SPAN, compare=False)

    def fns(self) -> dict[str, Fn]:
        return {i.name: i for i in self.items if isinstance(i, Fn)}

    def kernels(self) -> list[Fn]:
        return [i for i in self.items if isinstance(i, Fn) and i.kernel]


PRELUDE_FUNCTIONS: dict[str, Scalar | None] = {
    **{f"{kind}_{axis}": Scalar.U32
       for kind in ("thread_idx", "block_idx", "block_dim", "grid_dim") for axis in "xyz"},
    "sync_threads": None,
}
"""The functions `use rgpu::*` brings in, with their return types (None: returns `()`)."""


_Node = TypeVar("_Node")
_NODE_FIELDS: dict[type, tuple[tuple[str, ...], frozenset[str]]] = {}
_new = object.__new__
_set = object.__setattr__


def evolve(node: _Node, **changes: object) -> _Node:
    """`dataclasses.replace` for AST nodes at ~60 % of its cost: the checker builds a typed
    copy of every node it visits (~200 per default kernel, on every case of a campaign).
    Nodes have no `__post_init__` and no init-only fields, so copying the slots is what
    `replace` does; an unknown field name fails as it does there."""
    cls = type(node)
    known = _NODE_FIELDS.get(cls)
    if known is None:
        names = tuple(f.name for f in fields(cls))  # type: ignore[arg-type]
        known = _NODE_FIELDS[cls] = (names, frozenset(names))
    if not known[1].issuperset(changes):
        raise TypeError(f"{cls.__name__} has no field {sorted(set(changes) - known[1])}")
    new = _new(cls)
    for name in known[0]:
        _set(new, name, changes[name] if name in changes else getattr(node, name))
    return new
