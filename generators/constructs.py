"""The constructs of the language and where each may stand, detected on a kernel's typed AST
(`rgpu-fuzz gen --stats`).

`stats.py` counts operators, methods, casts and types; this catalogue adds what those counts
cannot see: the *position* of a construct and the combinations that reach different lowering
code — shared memory touched inside a helper (its own address computation on SIMT targets),
compound assignment to a shared or slice element (a read-modify-write of memory), `break` in a
loop that stands in a barrier region (lowered per region on the host), a helper with `mut`
parameters called in a condition, a 3-D launch whose blocks leave a wave partly empty.

Every construct is found by walking the kernel text's checked AST (`module_constructs`), never
from the generator's own bookkeeping, so a share reported for a profile is what its kernels
contain. `CONSTRUCTS` lists docs/language.md's constructs; `EXCLUDED` names the ones no
profile generates on purpose, each with the reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from generators.construct_walk import module_constructs
from rgpu_fuzz.lang.methods import WAVE_FUNCTIONS
from rgpu_fuzz.model.case import Case, Launch

CONSTRUCTS: dict[str, str] = {
    # items
    "item:const": "a `const` item",
    "item:const-of-const": "a `const` whose initialiser names another const",
    "item:const-float": "a float `const`",
    "item:shared": "a `#[shared] static mut` array",
    "item:shared-several": "two or more shared arrays",
    "item:shared-len-const": "a shared array whose length is a usize const",
    "item:shared-subword": "a shared array of 8- or 16-bit elements or bool",
    "item:shared-64bit": "a shared array of 64-bit elements",
    "item:shared-float": "a shared array of floats",
    "item:helper": "a helper fn",
    "item:helper-unit": "a helper returning ()",
    "item:helper-inline-never": "an #[inline(never)] helper",
    "item:helper-mut-param": "a helper with a `mut` parameter",
    "item:helper-bool-param": "a helper with a bool parameter",
    "item:kernel-scalar-param": "a kernel with a scalar parameter",
    "item:second-kernel": "a second #[kernel] fn beside the entry",
    # what helper bodies contain
    "helper:calls-helper": "a helper calling another helper",
    "helper:loop": "a loop in a helper",
    "helper:early-return": "a `return` in a helper before its end",
    "helper:return-in-loop": "a `return` inside a loop of a helper",
    "helper:prelude": "thread/block ids or sizes read inside a helper",
    "helper:local-array": "a local array in a helper",
    "helper:assign-mut-param": "a helper assigning its `mut` parameter",
    "helper:shared-read": "a helper reading a shared array",
    "helper:shared-write": "a helper storing to a shared array",
    "helper:shared-compound": "a helper's compound assignment to a shared element",
    "helper:shared-len": "`.len()` of a shared array in a helper",
    "helper:calls-shared-helper": "a helper calling a helper that touches shared memory",
    # statements
    "stmt:let": "`let x: T = e;`",
    "stmt:let-mut": "`let mut`",
    "stmt:let-inferred": "`let` without a type annotation",
    "stmt:let-array-repeat": "`let a = [e; N];`",
    "stmt:let-array-list": "`let a = [e1, e2];`",
    "stmt:shadowing": "a `let` shadowing a name in scope",
    "stmt:if": "`if` statement",
    "stmt:if-else": "`if … else` statement",
    "stmt:else-if": "`else if` statement",
    "stmt:while": "`while`",
    "stmt:loop": "`loop`",
    "stmt:for": "`for i in a..b`",
    "stmt:for-inclusive": "`for i in a..=b`",
    "stmt:for-to-max": "`for i in a..=T::MAX`",
    "stmt:for-signed": "a `for` over a signed type",
    "stmt:for-computed-end": "a `for` whose end is computed at run time",
    "stmt:block": "`{ … }` statement",
    "stmt:unsafe-block": "`unsafe { … }` statement",
    "stmt:call": "a call as a statement",
    "stmt:break-for": "`break` in a `for`",
    "stmt:break-while": "`break` in a `while`",
    "stmt:break-loop": "`break` in a `loop`",
    "stmt:continue-for": "`continue` in a `for`",
    "stmt:continue-while": "`continue` in a `while`",
    "stmt:continue-loop": "`continue` in a `loop`",
    "stmt:break-inner-loop": "`break` in a loop nested in a loop",
    "stmt:return-kernel": "`return;` in a kernel",
    "stmt:return-in-kernel-loop": "`return;` inside a loop of a kernel",
    # assignment targets
    "assign:local": "`x = e` to a `let mut` local",
    "assign:mut-param": "`x = e` to a `mut` parameter",
    "assign:local-array": "`a[i] = e` to a local array",
    "assign:slice": "`out[i] = e` to a `&mut` slice",
    "assign:shared": "`S[i] = e` to a shared array",
    "compound:local": "`x op= e` on a local",
    "compound:mut-param": "`x op= e` on a `mut` parameter",
    "compound:local-array": "`a[i] op= e` on a local array element",
    "compound:slice": "`out[i] op= e` on a slice element",
    "compound:shared": "`S[i] op= e` on a shared element",
    # expressions and where they stand
    "expr:if": "`if` as a value",
    "expr:else-if": "`else if` as a value",
    "expr:block": "a block as a value",
    "expr:unsafe-block": "`unsafe { … }` as a value",
    "expr:array-repeat": "`[e; N]`",
    "expr:array-list": "`[a, b, …]`",
    "expr:index-input": "indexing a `&[T]` slice",
    "expr:index-output": "reading a `&mut [T]` slice",
    "expr:index-local": "indexing a local array",
    "expr:index-shared": "indexing a shared array",
    "expr:index-in-index": "an index expression inside an index",
    "expr:call": "a helper call as a value",
    "expr:call-in-condition": "a helper call in an `if`/`while` condition",
    "expr:call-mut-param-in-condition": "a helper with `mut` parameters called in a condition",
    "expr:call-in-short-circuit": "a helper call as the right operand of `&&`/`||`",
    "expr:call-in-index": "a helper call inside an index",
    "expr:shared-in-condition": "a shared read in an `if`/`while` condition",
    "expr:assoc-MIN": "`T::MIN`",
    "expr:assoc-MAX": "`T::MAX`",
    "expr:from_bits-f32": "`f32::from_bits`",
    "expr:from_bits-f64": "`f64::from_bits`",
    "expr:method-chain": "a method called on a method's result",
    "expr:cast-chain": "`e as A as B`",
    "expr:cast-from-bool": "`b as T`",
    "expr:shift-mixed": "a shift whose amount has another type than its operand",
    "expr:neg-int": "unary `-` on a signed integer",
    "expr:neg-float": "unary `-` on a float",
    "expr:not-bool": "`!` on bool",
    "expr:not-int": "`!` on an integer (bitwise)",
    "expr:bitwise-bool": "`&`, `|` or `^` on bool",
    "expr:float-rem": "`%` on floats",
    "expr:len-slice": "`.len()` of a slice",
    "expr:len-array": "`.len()` of a local array",
    "expr:len-shared": "`.len()` of a shared array",
    "method:min-float": "`min` on a float", "method:min-int": "`min` on an integer",
    "method:max-float": "`max` on a float", "method:max-int": "`max` on an integer",
    "method:abs-float": "`abs` on a float", "method:abs-int": "`abs` on a signed integer",
    # barriers and the GPU model
    "gpu:barrier": "`sync_threads()`",
    "gpu:barrier-in-if": "a barrier in an `if` branch",
    "gpu:barrier-in-else": "a barrier in an `else` branch",
    "gpu:barrier-in-for": "a barrier in a `for`",
    "gpu:barrier-in-while": "a barrier in a `while`",
    "gpu:barrier-in-loop": "a barrier in a `loop`",
    "gpu:barrier-in-nested-loop": "a barrier in a loop nested in a loop with barriers",
    "gpu:break-in-barrier-loop": "`break` out of a loop with barriers",
    "gpu:continue-in-barrier-loop": "`continue` in a loop with barriers",
    "gpu:return-in-barrier-loop": "`return` inside a loop with barriers",
    "gpu:return-after-barrier": "`return` after a barrier",
    "gpu:break-in-region-loop": "`break` in a barrier-free loop of a kernel with barriers",
    "gpu:continue-in-region-loop": "`continue` in a barrier-free loop of a kernel with "
                                   "barriers",
    "gpu:call-in-barrier-kernel": "a helper call in a kernel with barriers",
    "gpu:shared-helper-in-barrier-kernel": "a helper touching shared memory, called in a "
                                           "kernel with barriers",
    "gpu:guarded-output": "an output store under an `if`",
    # wave functions (docs/language.md "Wave operations"; generators/waves.py)
    **{f"wave:{f}": f"`{f}(…)`" for f in WAVE_FUNCTIONS},
    "wave:in-if": "a wave operation in a wave-uniform `if`",
    "wave:in-loop": "a wave operation in a loop",
    "wave:after-barrier": "a wave operation after a barrier (reading what other waves wrote)",
    "wave:index-of-wave": "`thread_idx_x() / wave_size()`: the wave's index in a 1-D block",
    # launch shapes
    "launch:1d": "a 1-D launch", "launch:2d": "a 2-D launch", "launch:3d": "a 3-D launch",
    "launch:multi-block": "more than one block",
    "launch:grid-y": "a grid with y > 1", "launch:grid-z": "a grid with z > 1",
    "launch:partial-wave": "blocks whose thread count is not a multiple of 32",
    "launch:3d-partial-wave": "a 3-D launch whose blocks are not a multiple of 32 threads",
    "launch:partial-wave64": "blocks whose thread count is a multiple of 32 but not of 64 (a "
                             "partial wave at wave 64 only)",
}
"""Construct → what it is (docs/language.md). Scalar types, operators, methods and casts are
counted by `stats.ALL_FEATURES`."""

EXCLUDED: dict[str, str] = {
    "item:second-kernel": "only the entry kernel is lowered and run; a second one would reach "
                          "the parser and checker only, which their unit tests cover",
}
"""Constructs no shipped profile produces on purpose, with the reason."""


def launch_constructs(launch: Launch) -> set[str]:
    """The launch-shape constructs of a case."""
    out = set()
    three = launch.block[2] > 1 or launch.grid[2] > 1
    two = launch.block[1] > 1 or launch.grid[1] > 1
    out.add("launch:3d" if three else "launch:2d" if two else "launch:1d")
    if launch.blocks > 1:
        out.add("launch:multi-block")
    if launch.grid[1] > 1:
        out.add("launch:grid-y")
    if launch.grid[2] > 1:
        out.add("launch:grid-z")
    if launch.threads_per_block % 64 and not launch.threads_per_block % 32:
        out.add("launch:partial-wave64")
    if launch.threads_per_block % 32:
        out.add("launch:partial-wave")
        if three:
            out.add("launch:3d-partial-wave")
    return out




def case_constructs(case: Case) -> set[str]:
    """The constructs of a case: its kernel text checked afresh, and its launch."""
    from rgpu_fuzz.lang.checker import check_source

    module = check_source(case.kernel, f"<case {case.id}>").module
    return module_constructs(module) | launch_constructs(case.launch)


@dataclass(frozen=True, slots=True)
class ConstructCoverage:
    """In how many of `kernels` cases each construct occurs."""

    kernels: int
    counts: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    def share(self, construct: str) -> float:
        return self.counts.get(construct, 0) / max(1, self.kernels)

    def missing(self) -> list[str]:
        """The constructs of `CONSTRUCTS` never produced, in catalogue order."""
        return [c for c in CONSTRUCTS if not self.counts.get(c)]


def construct_coverage(cases: Iterable[Case]) -> ConstructCoverage:
    counts: Counter[str] = Counter()
    n = 0
    for case in cases:
        n += 1
        counts.update(case_constructs(case))
    return ConstructCoverage(n, MappingProxyType(dict(counts)))


def profile_coverage(profiles: Sequence[str], seeds: range) -> dict[str, ConstructCoverage]:
    """Coverage of each named profile over the same seeds (`from_seed`)."""
    from generators.grammar import from_seed

    return {p: construct_coverage(from_seed(s, p) for s in seeds) for p in profiles}


def render_table(by_profile: Mapping[str, ConstructCoverage]) -> str:
    """Construct → share of kernels (%) per profile; then what no profile produced, apart
    from the constructs left out by design (listed with their reason)."""
    names = list(by_profile)
    width = max(len(c) for c in CONSTRUCTS)
    cols = [n[:9] for n in names]
    rows = [f"{'construct':<{width}} " + " ".join(f"{c:>9}" for c in cols)]
    last = ""
    for c in CONSTRUCTS:
        cat = c.split(":", 1)[0]
        if cat != last and len(rows) > 1:
            rows.append("")
        last = cat
        cells = []
        for n in names:
            cov = by_profile[n]
            cells.append(f"{100 * cov.share(c):>8.1f}%" if cov.counts.get(c) else f"{'-':>9}")
        rows.append(f"{c:<{width}} " + " ".join(cells))
    rows.append("")
    kernels = ", ".join(f"{n} {by_profile[n].kernels}" for n in names)
    rows.append(f"kernels per profile: {kernels}")
    wanted = [c for c in CONSTRUCTS if c not in EXCLUDED]
    for n in names:
        miss = [c for c in by_profile[n].missing() if c not in EXCLUDED]
        rows.append(f"{n}: {len(wanted) - len(miss)}/{len(wanted)} reached"
                    + (f"; never: {', '.join(miss)}" if miss else ""))
    never = [c for c in CONSTRUCTS if c not in EXCLUDED
             and not any(cov.counts.get(c) for cov in by_profile.values())]
    rows.append("never produced by any profile: " + (", ".join(never) or "none"))
    rows.append("left out by design:")
    rows += [f"  {c}: {why}" for c, why in EXCLUDED.items()]
    return "\n".join(rows)


__all__ = ["CONSTRUCTS", "EXCLUDED", "ConstructCoverage", "case_constructs",
           "construct_coverage", "launch_constructs", "module_constructs", "profile_coverage",
           "render_table"]
