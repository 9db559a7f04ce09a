"""Passes over items and declarations: drop unused helpers, consts, shared arrays and
kernel parameters (with their arguments); drop `mut`, type annotations and
`#[inline(never)]` where the kernel still checks without them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from rgpu_fuzz.lang import ast
from rgpu_fuzz.model.case import Case
from triage.reduce.state import Pass, State
from triage.reduce.tree import nodes, put, rebuild, referenced_names


def _item_name(item: ast.Item) -> str | None:
    if isinstance(item, ast.Const | ast.Shared):
        return item.name
    if isinstance(item, ast.Fn) and not item.kernel:
        return item.name
    return None


def remove_items(state: State) -> Iterator[Case]:
    """All unused items at once, then each unused item alone (last first: helpers tend to
    be used by the items after them)."""
    items = state.module.items
    unused: list[int] = []
    for i, item in enumerate(items):
        name = _item_name(item)
        if name is None:
            continue
        others = ast.Module(items=items[:i] + items[i + 1:])
        if name not in referenced_names(others):
            unused.append(i)
    if len(unused) > 1:
        keep = tuple(it for i, it in enumerate(items) if i not in unused)
        yield state.with_module(ast.Module(items=keep))
    for i in reversed(unused):
        yield state.with_module(ast.Module(items=items[:i] + items[i + 1:]))


def _drop_helper_param(module: ast.Module, fn: ast.Fn, index: int) -> ast.Module:
    """`fn` without parameter `index`, and every call to it without that argument."""

    def visit(n: Any) -> Any:
        if isinstance(n, ast.Call) and n.func == fn.name and len(n.args) > index:
            return replace(n, args=n.args[:index] + n.args[index + 1:])
        if isinstance(n, ast.Fn) and n.name == fn.name:
            return replace(n, params=n.params[:index] + n.params[index + 1:])
        return n

    return rebuild(module, visit)  # type: ignore[no-any-return]


def remove_params(state: State) -> Iterator[Case]:
    """Kernel parameters the body never names, with their case arguments; then helper
    parameters the helper never names, with the arguments at every call."""
    yield from _remove_kernel_params(state)
    for item in state.module.items:
        if isinstance(item, ast.Fn) and not item.kernel:
            used = referenced_names(item.body)
            for i in reversed(range(len(item.params))):
                if item.params[i].name not in used:
                    yield state.with_module(_drop_helper_param(state.module, item, i))


def _remove_kernel_params(state: State) -> Iterator[Case]:
    # `state.module`'s kernel, not `state.kernel` (the checker's): the two differ when the
    # body has a unit-typed tail, which `state.module` holds as a statement.
    index, kernel = next((i, n) for i, n in enumerate(state.module.items)
                         if isinstance(n, ast.Fn) and n.name == state.case.entry)
    used = referenced_names(kernel.body)
    unused = [p.name for p in kernel.params if p.name not in used]
    groups = [unused] if len(unused) > 1 else []
    groups += [[name] for name in unused]
    for group in groups:
        fn = replace(kernel, params=tuple(p for p in kernel.params if p.name not in group))
        args = tuple(a for a in state.case.args if a.name not in group)
        module = put(state.module, (("items", index),), fn)
        yield state.with_module(module, args=args)


def simplify_decls(state: State) -> Iterator[Case]:
    """`let mut x` → `let x`, `let x: T = e` → `let x = e`, `mut` helper parameters, and
    `#[inline(never)]`. The checker rejects the ones that were needed."""
    for path, n in nodes(state.module):
        match n:
            case ast.Let(mutable=True):
                yield state.with_module(put(state.module, path, replace(n, mutable=False)))
            case ast.Param(mutable=True):
                yield state.with_module(put(state.module, path, replace(n, mutable=False)))
            case ast.Fn(inline_never=True):
                yield state.with_module(put(state.module, path, replace(n, inline_never=False)))
    for path, n in nodes(state.module):
        if isinstance(n, ast.Let) and n.ty is not None:
            yield state.with_module(put(state.module, path, replace(n, ty=None)))


REMOVE_ITEMS = Pass("remove-items", remove_items)
REMOVE_PARAMS = Pass("remove-params", remove_params)
SIMPLIFY_DECLS = Pass("simplify-decls", simplify_decls)
