"""Reading the rustc-computed expected values and comparing a result with them.

Comparison rule (docs/language.md, docs/design.md §5): bitwise, except that any NaN equals any
NaN, and in float buffers named `min*`/`max*` (the `min`/`max` results, by the cases'
convention) `+0.0` and `-0.0` are interchangeable.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rgpu_fuzz.model.case import BufferArg, Case
from rgpu_fuzz.model.scalars import Scalar

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
EXPECTED = HERE / "expected"


def case_names() -> list[str]:
    return sorted(p.stem for p in CASES.glob("*.toml"))


def load_expected(name: str) -> dict[str, Any]:
    return json.loads((EXPECTED / f"{name}.json").read_text(encoding="utf-8"))


def _is_nan(bits: int, ty: Scalar) -> bool:
    if ty is Scalar.F16:
        return (bits & 0x7C00) == 0x7C00 and bits & 0x03FF != 0
    if ty is Scalar.F32:
        return (bits & 0x7F800000) == 0x7F800000 and bits & 0x007FFFFF != 0
    return (bits & 0x7FF0000000000000) == 0x7FF0000000000000 and bits & ((1 << 52) - 1) != 0


def _is_zero(bits: int, ty: Scalar) -> bool:
    return bits & ~(1 << (ty.bits - 1)) == 0


def _same(got: int, want: int, ty: Scalar, signed_zero_free: bool) -> bool:
    if got == want:
        return True
    if not ty.is_float:
        return False
    if _is_nan(got, ty) and _is_nan(want, ty):
        return True
    return signed_zero_free and _is_zero(got, ty) and _is_zero(want, ty)


def output_mismatches(case: Case, got: dict[str, list[int]],
                      want: dict[str, list[int]], limit: int = 8) -> list[str]:
    """Human-readable differences (empty when the outputs agree)."""
    problems: list[str] = []
    if set(got) != set(want):
        problems.append(f"output buffers {sorted(got)} != expected {sorted(want)}")
    for name in sorted(set(got) & set(want)):
        arg = case.arg(name)
        assert isinstance(arg, BufferArg), name
        lax = name.startswith(("min", "max"))
        g, w = got[name], want[name]
        if len(g) != len(w):
            problems.append(f"{name}: length {len(g)} != {len(w)}")
            continue
        for i, (gb, wb) in enumerate(zip(g, w, strict=True)):
            if not _same(gb, wb, arg.elem, lax):
                problems.append(f"{name}[{i}]: got {gb:#x}, rustc says {wb:#x} ({arg.elem})")
                if len(problems) >= limit:
                    return problems
    return problems
