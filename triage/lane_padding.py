"""Lane padding for `report --upstream` reductions of boundary bugs.

Some code-generation bugs show only when a count crosses a boundary: LLVM 22's lane-VGPR bug
(docs/llvm-bugs/lane_vgpr_implicit_def_in_loop_header.ll) needs the SGPR spill lanes of the
code before a loop to fill whole lane VGPRs (64 lanes on wave64, AMDGPUUsage "SGPR spilling")
so that a new one starts inside the loop. llvm-reduce removes one instruction at a time, and
each removal moves that count, so the predicate fails for nearly every candidate and the
reduction stops early, with much unrelated code kept only for its lanes.

Padding gives the count back as one knob: every `amdgpu_kernel` gains an argument
`<K x i32> %rgpu.pad`, stored to a second argument before each `ret void`, so it is live in
every block and takes some SGPR spill lanes from the entry block on. A candidate is
interesting when the predicate holds for some width K in 1..64 (the interestingness script
tries the widths near the last one that worked first); the reduced test gets the one width
that makes it pass, found by trying all. The predicate itself is unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable

PAD = "rgpu.pad"
MAX_WIDTH = 64
_WIDTH = re.compile(r"<\d+ x i32> %rgpu\.pad\b")


def add_padding(ir: str) -> str:
    """`ir` with the padding argument (width 1) in every `amdgpu_kernel` and its store
    before each of their `ret void`."""
    out: list[str] = []
    in_kernel = False
    for line in ir.splitlines():
        if line.startswith("define ") and " amdgpu_kernel " in f" {line} ":
            in_kernel = True
            line = re.sub(r"(@[\w.$\"-]+\()",
                          rf"\1<1 x i32> %{PAD}, ptr addrspace(1) %{PAD}.out, ", line,
                          count=1).replace(", )", ")")
        elif line.startswith("}"):
            in_kernel = False
        if in_kernel and line.strip() == "ret void":
            out.append(f"  store <1 x i32> %{PAD}, ptr addrspace(1) %{PAD}.out, align 4")
        out.append(line)
    return "\n".join(out) + "\n"


def with_width(ir: str, width: int) -> str:
    """`ir` with the padding `width` i32s wide."""
    return _WIDTH.sub(f"<{width} x i32> %{PAD}", ir)


def has_padding(ir: str) -> bool:
    return _WIDTH.search(ir) is not None


def settle(ir: str, interesting: Callable[[str], bool]) -> str | None:
    """`ir` with the first padding width that `interesting` accepts (`ir` as it is when it
    has no padding left and is interesting); None when none is."""
    if not has_padding(ir):
        return ir if interesting(ir) else None
    return next((c for c in (with_width(ir, k) for k in range(1, MAX_WIDTH + 1))
                 if interesting(c)), None)


def script_loop(command: str, hint: str, spread: int = 8) -> str:
    """Bash for the interestingness script: run `command` (which reads "$t") on the candidate
    "$1" at the widths `hint` (a file holding the last good width) +-`spread`; exit 0 at the
    first that passes."""
    steps = " ".join(["0", *(f"{d} -{d}" for d in range(1, spread + 1))])
    return (f't=$(mktemp "${{TMPDIR:-/tmp}}/pad.XXXXXX"); trap \'rm -f "$t"\' EXIT\n'
            f"h=$(cat {hint} 2>/dev/null || echo 1)\n"
            f"for d in {steps}; do\n"
            f"  k=$((h + d)); [ \"$k\" -ge 1 ] && [ \"$k\" -le {MAX_WIDTH} ] || continue\n"
            f"  sed -E 's/<[0-9]+ x i32> %rgpu\\.pad\\b/<'\"$k\"' x i32> %rgpu.pad/g' \"$1\""
            " > \"$t\"\n"
            f"  if {command} >/dev/null 2>&1; then echo \"$k\" > {hint}; exit 0; fi\n"
            "done\nexit 1\n")
