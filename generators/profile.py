"""Generator profiles: what to generate and how much, as data (TOML), not code.

A profile weighs the productions of the grammar (statement kinds, expression kinds, types,
operators, methods), bounds the size of a kernel, and switches whole features on or off.
`default.toml` is complete; every other profile says `extends = "default"` and overrides a
few fields, so adding a knob means adding it to `default.toml` and to the dataclass here.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from rgpu_fuzz.lang.limits import MAX_BUFFER_LEN, MAX_LAUNCH_THREADS, MAX_THREADS_PER_BLOCK
from rgpu_fuzz.model.errors import RgpuError

PROFILE_DIR = Path(__file__).resolve().parent / "profiles"

STATEMENT_KINDS: tuple[str, ...] = (
    "let", "let_array", "assign", "compound", "array_store", "output_store", "shared_store",
    "if", "for", "while", "loop", "block", "call", "break", "continue", "return",
    "pair_store",
)
EXPRESSION_KINDS: tuple[str, ...] = (
    "literal", "var", "unary", "arith", "bitwise", "shift", "divrem", "compare", "logic",
    "cast", "method", "call", "if", "block", "index", "assoc", "prelude",
)
TYPE_NAMES: tuple[str, ...] = (
    "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "usize", "f32", "f64",
    "f16",
)
OPERATOR_NAMES: tuple[str, ...] = (
    "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", ">", ">=",
    "&&", "||", "neg", "not",
)
METHOD_NAMES: tuple[str, ...] = (
    "wrapping_add", "wrapping_sub", "wrapping_mul", "wrapping_div", "wrapping_rem",
    "wrapping_neg", "wrapping_shl", "wrapping_shr", "rotate_left", "rotate_right",
    "count_ones", "leading_zeros", "trailing_zeros", "min", "max", "abs", "wrapping_abs",
    "sqrt", "mul_add", "to_bits",
    "count_zeros", "leading_ones", "trailing_ones", "swap_bytes", "reverse_bits",
    "saturating_add", "saturating_sub", "saturating_mul", "abs_diff", "unsigned_abs",
    "div_euclid", "rem_euclid", "pow", "wrapping_pow", "copysign", "signum", "floor", "ceil",
    "round", "trunc", "is_nan", "is_sign_negative", "clamp",
)


WAVE_KINDS: tuple[str, ...] = (
    "read_first_lane", "read_lane", "ballot", "shuffle", "shuffle_xor", "shuffle_down",
    "wave_sum", "wave_min", "wave_max", "wave_and", "wave_or", "wave_xor", "wave_prefix_sum",
    "wave_all", "wave_any", "if", "for",
)
"""The productions of a wave section (`generators/waves.py`): the collective wave functions
and wave-uniform `if`/`for` around more of them."""

_LIMIT_MAX: dict[str, int] = {
    "expr_depth": 16, "block_depth": 16, "loop_depth": 8,
    "threads_max": MAX_LAUNCH_THREADS, "block_threads_max": MAX_THREADS_PER_BLOCK,
    "buffer_len_max": MAX_BUFFER_LEN, "wave_share": 100,
}
"""Upper bounds of `[limits]`: the generator recurses per level of depth, and a generated
case must stay inside the documented case limits (docs/language.md "Limits")."""
_LIMIT_MAX_OTHER = 1000


class ProfileError(RgpuError, ValueError):
    """A profile file is not valid; the message is one line naming the file and the field."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Size bounds. They keep kernels small enough for the interpreter to run every case
    and bound every loop, so termination holds by construction."""

    expr_depth: int            # nesting of expressions
    block_depth: int           # nesting of statement blocks (if/loop/block bodies)
    loop_depth: int            # nesting of loops inside one function
    loop_iters: int            # most iterations of any generated loop
    work_max: int              # most product of trip counts of nested loops (and calls)
    top_stmts_min: int         # statements per phase of the kernel body
    top_stmts_max: int
    block_stmts_max: int       # statements in a nested block
    max_stmts: int             # statement budget of one function
    helpers_max: int
    helper_params_max: int
    inputs_max: int
    outputs_max: int
    scalars_max: int
    consts_max: int
    shared_max: int            # `#[shared]` arrays
    shared_phases_max: int     # write/barrier/read/barrier phases at the top level
    slots_max: int             # output/shared slots per thread
    threads_max: int           # grid × block
    block_threads_max: int     # threads per block
    block_x_min: int           # smallest x extent of a block (of the sizes kernel.py draws)
    buffer_len_max: int        # input buffer length
    wave_share: int            # percent of kernels with wave sections (generators/waves.py)
    wave_stmts_max: int        # wave statements per section
    atomics_percent: int       # share of cases with atomics (generators/atomics.py; 0: none)


@dataclass(frozen=True, slots=True, kw_only=True)
class Features:
    """Whole language features, switched on or off."""

    floats: bool
    float_specials: bool       # NaN, ±inf, subnormals via `f32::from_bits`
    shared: bool               # `#[shared]` arrays and `sync_threads()`
    barrier_loops: bool        # barriers inside uniform `for` loops
    # Wider barrier structures (generators/barriers.py); all off in default.toml, and while
    # all are off the default layout of kernel.py is used unchanged (seeds keep their cases).
    barrier_ifs: bool          # phases inside `if`/`else` with conditions uniform by construction
    barrier_whiles: bool       # phases inside `while`/`loop` with a uniform counter bound
    barrier_nested: bool       # uniform loops with barriers nested two deep
    barrier_exits: bool        # `break`/`continue`/`return` under uniform conditions among phases
    return_after_barrier: bool  # early `return` (uniform or not) after the kernel's last barrier
    always_shared: bool        # every kernel has shared memory (otherwise about half)
    helpers: bool
    inline_never: bool
    loops: bool
    local_arrays: bool
    early_return: bool
    launch_2d: bool
    launch_3d: bool
    guarded_outputs: bool      # `if gid < n { out[gid] = ... }` with fewer slots than threads
    # Off in default.toml, and then no choice is spent on it (seeds keep their cases):
    shared_helpers: bool       # helpers reading/writing shared arrays, `op=` on shared slots,
    #                            `.len()` of shared arrays, thread ids read inside helpers


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """One generator configuration; `weights(kind)` gives a production's weight table."""

    name: str
    limits: Limits
    features: Features
    types: Mapping[str, int]
    statements: Mapping[str, int]
    expressions: Mapping[str, int]
    operators: Mapping[str, int]
    methods: Mapping[str, int]
    waves: Mapping[str, int]


_WEIGHT_TABLES: dict[str, tuple[str, ...]] = {
    "types": TYPE_NAMES,
    "statements": STATEMENT_KINDS,
    "expressions": EXPRESSION_KINDS,
    "operators": OPERATOR_NAMES,
    "methods": METHOD_NAMES,
    "waves": WAVE_KINDS,
}


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _resolve(name_or_path: str | Path) -> Path:
    p = Path(name_or_path)
    if p.suffix == ".toml" or p.parent != Path("."):
        return p
    return PROFILE_DIR / f"{name_or_path}.toml"


def _read(path: Path, seen: tuple[Path, ...]) -> dict[str, Any]:
    if path in seen:
        raise ProfileError(f"{path}: 'extends' cycle")
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProfileError(f"{path}: no such profile") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ProfileError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ProfileError(f"{path}: {e}") from None
    except RecursionError:
        raise ProfileError(f"{path}: invalid TOML: nested too deeply") from None
    base = doc.pop("extends", None)
    if base is None:
        return doc
    if not isinstance(base, str):
        raise ProfileError(f"{path}: field 'extends' must be a profile name")
    target = path.parent / base if base.endswith(".toml") else PROFILE_DIR / f"{base}.toml"
    return _merge(_read(target, (*seen, path)), doc)


def _section(path: Path, doc: Mapping[str, Any], key: str, cls: type) -> Any:
    table = doc.get(key)
    if not isinstance(table, Mapping):
        raise ProfileError(f"{path}: missing table [{key}]")
    names = {f.name: f for f in fields(cls)}
    for k in table:
        if k not in names:
            raise ProfileError(f"{path}: unknown field '{key}.{k}'")
    values: dict[str, Any] = {}
    for fname, f in names.items():
        if fname not in table:
            raise ProfileError(f"{path}: missing field '{key}.{fname}'")
        v = table[fname]
        want = bool if f.type in ("bool", bool) else int
        if type(v) is not want:
            raise ProfileError(f"{path}: field '{key}.{fname}' must be {want.__name__}")
        if want is int and v < 0:
            raise ProfileError(f"{path}: field '{key}.{fname}' must be >= 0")
        if want is int and v > (top := _LIMIT_MAX.get(fname, _LIMIT_MAX_OTHER)):
            raise ProfileError(f"{path}: field '{key}.{fname}' must be <= {top}")
        values[fname] = v
    return cls(**values)


def _weights(path: Path, doc: Mapping[str, Any], key: str) -> Mapping[str, int]:
    table = doc.get(key)
    if not isinstance(table, Mapping):
        raise ProfileError(f"{path}: missing table [{key}]")
    known = _WEIGHT_TABLES[key]
    for k, v in table.items():
        if k not in known:
            raise ProfileError(f"{path}: unknown field '{key}.{k}'")
        if type(v) is not int or v < 0:
            raise ProfileError(f"{path}: field '{key}.{k}' must be a non-negative integer")
    # Canonical order (the order of the known names), so that shrinking order and the
    # meaning of a seed do not depend on how a profile file orders its keys.
    return MappingProxyType({k: int(table.get(k, 0)) for k in known})


def load_profile(name_or_path: str | Path = "default") -> Profile:
    """A profile by name (`"floats"` → `generators/profiles/floats.toml`) or by path.
    Raises `ProfileError` with one line naming the file and the bad field."""
    path = _resolve(name_or_path)
    doc = _read(path, ())
    top = set(doc) - {"name", "limits", "features", *_WEIGHT_TABLES}
    if top:
        raise ProfileError(f"{path}: unknown field '{sorted(top)[0]}'")
    name = doc.get("name", path.stem)
    if not isinstance(name, str):
        raise ProfileError(f"{path}: field 'name' must be a string")
    limits = _section(path, doc, "limits", Limits)
    if limits.top_stmts_min > limits.top_stmts_max:
        raise ProfileError(f"{path}: field 'limits.top_stmts_min' exceeds top_stmts_max")
    for fname in ("loop_iters", "work_max", "threads_max", "block_threads_max", "buffer_len_max",
                  "slots_max", "outputs_max"):
        if getattr(limits, fname) < 1:
            raise ProfileError(f"{path}: field 'limits.{fname}' must be >= 1")
    return Profile(
        name=name,
        limits=limits,
        features=_section(path, doc, "features", Features),
        **{key: _weights(path, doc, key) for key in _WEIGHT_TABLES},
    )


def profile_names() -> list[str]:
    """The profiles shipped in `generators/profiles/`."""
    return sorted(p.stem for p in PROFILE_DIR.glob("*.toml"))
