"""Generic addressing and rewriting of frozen AST trees, for the reduction passes.

A pass names the node it rewrites by its *path* from the module root: a tuple of steps, each
a field name and, for tuple fields, an index. Paths come out of `nodes` in pre-order, so a
pass that walks them tries outer (coarse) rewrites before inner (fine) ones. Rewriting
rebuilds only the spine above the node (`dataclasses.replace`); every other subtree is shared.

Checker annotations (`ty`, `kind`, `binding`) and spans are `compare=False` fields; the walk
skips them, so a syntactic `Let.ty` or `Param.ty` (a type expression) is still visited.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields, is_dataclass, replace
from typing import Any, TypeAlias

from rgpu_fuzz.lang import ast
from rgpu_fuzz.model.scalars import Scalar

Step: TypeAlias = tuple[str, int | None]
Path: TypeAlias = tuple[Step, ...]

_NODE_TYPES = (
    ast.IntLit, ast.FloatLit, ast.BoolLit, ast.Name, ast.Unary, ast.Binary, ast.Cast, ast.Index,
    ast.MethodCall, ast.Call, ast.AssocCall, ast.AssocConst, ast.ArrayRepeat, ast.ArrayList,
    ast.If, ast.BlockExpr,
)
EXPR_TYPES: tuple[type, ...] = _NODE_TYPES
"""Every expression node class (`isinstance(n, EXPR_TYPES)`)."""

STMT_TYPES: tuple[type, ...] = (ast.Let, ast.Assign, ast.ExprStmt, ast.While, ast.Loop, ast.For,
                                ast.Break, ast.Continue, ast.Return)


def _structural_fields(node: object) -> Iterator[str]:
    for f in fields(node):  # type: ignore[arg-type]
        if f.compare:
            yield f.name


def children(node: object) -> Iterator[tuple[Step, object]]:
    """The AST children of `node` (dataclass fields and tuple elements), in field order."""
    for name in _structural_fields(node):
        value = getattr(node, name)
        if isinstance(value, tuple):
            for i, v in enumerate(value):
                if is_dataclass(v):
                    yield (name, i), v
        elif is_dataclass(value):
            yield (name, None), value


def nodes(root: object, path: Path = ()) -> Iterator[tuple[Path, object]]:
    """Every node below and including `root` with its path, pre-order (parents first)."""
    stack: list[tuple[Path, object]] = [(path, root)]
    while stack:
        p, n = stack.pop()
        yield p, n
        kids = [((*p, step), child) for step, child in children(n)]
        stack.extend(reversed(kids))


def get(root: object, path: Path) -> Any:
    """The node at `path`."""
    node: Any = root
    for name, index in path:
        node = getattr(node, name)
        if index is not None:
            node = node[index]
    return node


def put(root: Any, path: Path, new: object) -> Any:
    """A copy of `root` with the node at `path` replaced by `new`."""
    if not path:
        return new
    (name, index), rest = path[0], path[1:]
    value = getattr(root, name)
    if index is None:
        return replace(root, **{name: put(value, rest, new)})
    items = list(value)
    items[index] = put(items[index], rest, new)
    return replace(root, **{name: tuple(items)})


def splice(root: Any, path: Path, new: tuple[object, ...]) -> Any:
    """Replace the tuple element at `path` (whose last step has an index) by zero or more
    elements: removal (`()`) or expansion (a statement into several)."""
    assert path and path[-1][1] is not None, path
    *parent_steps, (name, index) = path
    parent = get(root, tuple(parent_steps))
    items = list(getattr(parent, name))
    assert index is not None
    items[index:index + 1] = list(new)
    return put(root, tuple(parent_steps), replace(parent, **{name: tuple(items)}))


def is_expr(node: object) -> bool:
    return isinstance(node, EXPR_TYPES)


def scalar_ty(node: object) -> Scalar | None:
    """The checker's scalar type of an expression, or None (arrays, slices, `()`, `!`)."""
    ty = getattr(node, "ty", None) if is_expr(node) else None
    return ty if isinstance(ty, Scalar) else None


def pin_literals(node: Any) -> Any:
    """`node` with every unsuffixed literal given its checked type as suffix, so that moving
    it to another context (a replacement, an inlined argument) cannot change its type or
    leave it uninferable."""

    def pin(n: Any) -> Any:
        if isinstance(n, ast.IntLit | ast.FloatLit) and n.suffix is None \
                and isinstance(n.ty, Scalar):
            return replace(n, suffix=n.ty)
        return n

    return rebuild(node, pin)


def referenced_names(root: object) -> set[str]:
    """Every identifier used as a `Name`, a call target, or a length (items, locals)."""
    found: set[str] = set()
    for _, n in nodes(root):
        if isinstance(n, ast.Name):
            found.add(n.ident)
        elif isinstance(n, ast.Call):
            found.add(n.func)
    return found


def contains(root: object, kinds: tuple[type, ...]) -> bool:
    """True when a node of one of `kinds` occurs below `root`."""
    return any(isinstance(n, kinds) for _, n in nodes(root))


def rebuild(node: Any, f: Any) -> Any:
    """Bottom-up rewrite: children first, then `f(node)` on the node with new children.
    Unchanged subtrees are returned as they were (identity preserved)."""
    if not is_dataclass(node) or isinstance(node, type):
        return node
    changes: dict[str, Any] = {}
    for name in _structural_fields(node):
        value = getattr(node, name)
        if isinstance(value, tuple):
            new_t = tuple(rebuild(v, f) for v in value)
            if any(a is not b for a, b in zip(new_t, value, strict=True)):
                changes[name] = new_t
        elif is_dataclass(value):
            new_v = rebuild(value, f)
            if new_v is not value:
                changes[name] = new_v
    return f(replace(node, **changes) if changes else node)
