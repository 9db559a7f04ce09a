"""The type checker: from a parsed `Module` to a `CheckedModule` whose tree every later stage
can trust (docs/language.md "Items", "Typing").

`check` reports every error it finds in one `DiagnosticError`: each item and each function
body is checked even after an earlier one failed, and an expression that already failed is
typed `Infer.ERR` so that nothing built on it reports again. Passes, in order:
1. items: `use rgpu::*;`, unique names, kernel and helper signatures;
2. `const` items: the constant-expression restriction, types, evaluation (`consts.py`);
3. `#[shared]` statics, whose lengths may name consts;
4. function bodies (`bodies.py`, `exprs.py`), giving the call graph and the barriers;
5. no recursion (`callgraph.py`); barriers as statements, in uniform control flow only;
   collective wave calls as statement-level values, in wave-uniform control flow only
   (`uniformity.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.ast import evolve
from rgpu_fuzz.lang.bodies import BodyChecker
from rgpu_fuzz.lang.callgraph import find_cycles
from rgpu_fuzz.lang.consts import check_const_expr, evaluate_consts
from rgpu_fuzz.lang.env import AnyTy, ConstValue, Env, FnSig, Infer
from rgpu_fuzz.lang.limits import MAX_SHARED_BYTES
from rgpu_fuzz.lang.methods import PRELUDE_FUNCTIONS, WAVE_FUNCTIONS
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.lang.source import DiagnosticError, SourceFile, Span
from rgpu_fuzz.lang.types import UNIT, ArrayTy, SliceTy
from rgpu_fuzz.lang.uniformity import (
    check_barrier_placement,
    check_uniformity,
    check_wave_placement,
    varying_helpers,
)
from rgpu_fuzz.model.scalars import Scalar

__all__ = ["CheckedModule", "ConstValue", "check", "check_source"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckedModule:
    """A module that is in the language, with everything later stages need resolved.

    Invariants: every `Expr` of `module` has `ty` set (a `Scalar`, `ArrayTy`, `SliceTy`,
    `UNIT` or `NEVER`); every `Name` has `kind`, and locals their `binding`; every `Let`,
    `For` and `Param` has `binding`, numbered from 0 per function (parameters first).
    """

    module: ast.Module
    source: SourceFile
    consts: Mapping[str, ConstValue]
    """Evaluated `const` items (ints as Python ints, floats exact in their type)."""
    const_types: Mapping[str, Scalar]
    shared: Mapping[str, ArrayTy]
    fns: Mapping[str, ast.Fn]
    """Every function, typed, by name (kernels and helpers)."""
    kernels: tuple[str, ...]
    """The `#[kernel]` entry points, in file order."""
    bindings: Mapping[str, int]
    """How many bindings each function numbers (locals are `0..bindings[f]`)."""
    uses_barrier: frozenset[str]
    """The kernels that call `sync_threads()`."""
    uses_waves: frozenset[str] = frozenset()
    """The kernels that call a collective wave function (docs/language.md "Wave
    operations")."""


_FILE_START = Span(0, 0, 1, 1)


def check_source(text: str, filename: str = "<input>") -> CheckedModule:
    """Parse and check a kernel file; raises `DiagnosticError` for anything outside the
    language."""
    return check(parse(text, filename), SourceFile(filename, text))


def check(module: ast.Module, file: SourceFile) -> CheckedModule:
    """Type-check `module` (parsed from `file`); raises `DiagnosticError` with every error."""
    env = Env(file)
    items = _unique_items(module, env)
    consts = {i.name: i for i in items if isinstance(i, ast.Const)}
    shared = {i.name: i for i in items if isinstance(i, ast.Shared)}
    fns = {i.name: i for i in items if isinstance(i, ast.Fn)}

    env.const_types = {name: c.ty.scalar for name, c in consts.items()}
    typed: dict[int, ast.Item] = {}
    clean_consts: dict[str, ast.Const] = {}
    for name, c in consts.items():
        before = len(env.errors)
        check_const_expr(c.value, env)
        checker = BodyChecker(env, None)
        value = checker.coerce(checker.expr(c.value, c.ty.scalar), c.ty.scalar)
        typed[id(c)] = typed_const = evolve(c, value=value)
        if len(env.errors) == before:
            clean_consts[name] = typed_const
    env.const_values = evaluate_consts(clean_consts, env)

    shared_bytes = 0
    for s in shared.values():
        typed[id(s)] = _check_shared(s, env)
        if (ty := env.shared.get(s.name)) is not None:
            shared_bytes += ty.len * _elem_bytes(ty.elem)
            if shared_bytes > MAX_SHARED_BYTES:
                env.error(f"`#[shared]` statics take {shared_bytes} bytes up to here; the "
                          f"limit is {MAX_SHARED_BYTES} (docs/language.md \"Limits\")", s.span)
                del env.shared[s.name]

    sigs = {name: _signature(fn, env) for name, fn in fns.items()}
    env.fns = dict(sigs)
    typed_fns: dict[str, ast.Fn] = {}
    bindings: dict[str, int] = {}
    calls: dict[str, list[tuple[str, Span]]] = {}
    barrier_users: dict[str, int] = {}
    wave_users: dict[str, int] = {}
    clean_kernels: list[str] = []
    for name, fn in fns.items():
        before = len(env.errors)
        checker = BodyChecker(env, sigs[name])
        typed[id(fn)] = typed_fns[name] = checker.check_fn(fn)
        bindings[name] = checker.next_binding
        calls[name] = checker.calls
        if checker.barriers:
            barrier_users[name] = len(checker.barriers)
        if checker.waves:
            wave_users[name] = len(checker.waves)
        if fn.kernel and len(env.errors) == before:
            clean_kernels.append(name)

    helpers = [name for name, fn in fns.items() if not fn.kernel]
    for path, span in find_cycles(helpers, {h: calls[h] for h in helpers}):
        env.error(f"recursion is not allowed: {' -> '.join(path)}", span,
                  "GPU code has no call stack to recurse on; rewrite the recursion as a loop")

    varying = varying_helpers({h: typed_fns[h] for h in helpers})
    for name in clean_kernels:
        if name in barrier_users:
            check_barrier_placement(typed_fns[name], env, barrier_users[name])
            check_uniformity(typed_fns[name], env, varying)
        if name in wave_users:
            check_wave_placement(typed_fns[name], env, wave_users[name])
            check_uniformity(typed_fns[name], env, varying, wave=True)

    kernels = tuple(name for name, fn in fns.items() if fn.kernel)
    if not kernels:
        env.error("no `#[kernel]` function in this file", _FILE_START,
                  "every kernel file needs an entry point: `#[kernel] pub fn k(...) { ... }`")

    if env.errors:
        raise DiagnosticError(sorted(env.errors, key=lambda d: d.span.start))
    return CheckedModule(
        module=evolve(module, items=tuple(typed.get(id(i), i) for i in module.items)),
        source=file,
        consts=MappingProxyType(dict(env.const_values)),
        const_types=MappingProxyType(dict(env.const_types)),
        shared=MappingProxyType(dict(env.shared)),
        fns=MappingProxyType(typed_fns),
        kernels=kernels,
        bindings=MappingProxyType(bindings),
        uses_barrier=frozenset(barrier_users),
        uses_waves=frozenset(wave_users),
    )


def _unique_items(module: ast.Module, env: Env) -> list[ast.Item]:
    """The items to check: `use` checked here, later duplicates reported and dropped."""
    if not any(isinstance(i, ast.Use) for i in module.items):
        env.error("missing `use rgpu::*;`", _FILE_START,
                  "every kernel file starts with `use rgpu::*;` (the prelude)")
    seen: dict[str, Span] = {}
    out: list[ast.Item] = []
    for item in module.items:
        if isinstance(item, ast.Use):
            continue
        if item.name in PRELUDE_FUNCTIONS or item.name in WAVE_FUNCTIONS:
            env.error(f"the name `{item.name}` is defined multiple times", item.span,
                      f"`{item.name}` is a prelude function brought in by `use rgpu::*;`")
            continue
        if item.name in seen:
            env.error(f"the name `{item.name}` is defined multiple times", item.span,
                      f"previous definition at {env.where(seen[item.name])}")
            continue
        seen[item.name] = item.span
        out.append(item)
    return out


def _check_shared(s: ast.Shared, env: Env) -> ast.Shared:
    checker = BodyChecker(env, None)
    checker.array_limit = None
    length, n = checker.array_len(s.len)
    ty = ArrayTy(s.elem, n) if n is not None else None
    check_const_expr(s.init, env, array_ok=True)
    init = checker.expr(s.init, ty)
    if ty is not None:
        init = checker.coerce(init, ty)
        env.shared[s.name] = ty
    return evolve(s, len=length, init=init)


def _elem_bytes(s: Scalar) -> int:
    """Bytes of one element in memory (`bool` takes a byte, as in Rust)."""
    return max(1, s.bits // 8)


def _signature(fn: ast.Fn, env: Env) -> FnSig:
    """A function's signature; reports the kernel and helper rules on parameters and result."""
    checker = BodyChecker(env, None)
    params: list[AnyTy] = []
    for p in fn.params:
        _, ty = checker.resolve_type(p.ty)
        if fn.kernel and not isinstance(ty, Scalar | SliceTy | Infer):
            env.error(f"kernel parameters must be scalars or slices, found `{ty}`", p.ty.span)
            ty = Infer.ERR
        elif not fn.kernel and not isinstance(ty, Scalar | Infer):
            env.error(f"helper function parameters must be scalars, found `{ty}`", p.ty.span,
                      "only `#[kernel]` functions take buffers")
            ty = Infer.ERR
        params.append(ty)
    if fn.kernel:
        if not fn.public:
            env.error("a `#[kernel]` function must be `pub`", fn.span,
                      f"write `#[kernel] pub fn {fn.name}(...)`")
        if fn.ret is not None:
            env.error("a `#[kernel]` function must return `()`", fn.ret.span,
                      "kernels return their results through `&mut` buffers")
    ret = UNIT if fn.ret is None else fn.ret.scalar
    return FnSig(fn.name, tuple(params), Infer.ERR if fn.kernel and fn.ret else ret,
                 fn.kernel, fn.span)
