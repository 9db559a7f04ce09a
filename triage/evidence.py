"""The evidence line of a finding: which independent pipelines show the same divergence and
which agree with the arbiter, so a reader knows how far the bug reaches before filing it.

The finding's case is rerun on variants of its pipeline, each changing one thing: the LLVM
(Debian llc-22, llc-19 through `llc=`), the instruction selector (`isel=`), the GPU target,
the optimisation level; and on the independent pipelines: rustc's own AMDGPU code
generation (`rustc-amdgpu`), the host (`llvm-cpu`, `rustc-cpu`) and hardware (`hip`,
`nvptx-gpu`, reported as not run where they are unavailable). One line sums it up:

    amdgpu-sim:gfx942:O3 wrong; also wrong: llc-22, llc-19, gfx90a O3, ...; agree with
    ref: GlobalISel, O0, rustc-amdgpu O2, ...; simulator only (hip, nvptx-gpu: not here)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rgpu_fuzz.model.outcome import CompileCrash, Outcome
from rgpu_fuzz.pipelines.base import PipelineSpec
from rgpu_fuzz.pipelines.toolchain import normalise_error_line
from triage.trials import Trial, Trials

LLC = {"llc-22": "/usr/lib/llvm-22/bin/llc", "llc-19": "/usr/lib/llvm-19/bin/llc"}
TARGETS = ("gfx942", "gfx90a", "gfx1100")
HARDWARE = ("hip", "nvptx-gpu")


@dataclass(frozen=True)
class Probe:
    """One variant: a short name for the line (`llc-19`, `GlobalISel`, `gfx90a O3`), its
    spec, and what it gave (`Trial.agrees`: True, False, None for no answer)."""

    name: str
    spec: str
    agrees: bool | None
    why: str = ""


@dataclass(frozen=True)
class Evidence:
    spec: str
    arbiter: str
    probes: tuple[Probe, ...]
    verb: str = "wrong"
    """`wrong`, or `crashes` for a compile crash (a variant that crashes with the same
    error line shows it too)."""

    def line(self) -> str:
        sim = [p for p in self.probes if p.name not in HARDWARE]
        hw = [p for p in self.probes if p.name in HARDWARE]
        wrong = [p.name for p in sim if p.agrees is False]
        right = [p.name for p in sim if p.agrees is True]
        none = [f"{p.name} ({_short(p.why)})" for p in sim if p.agrees is None]
        parts = [f"{self.spec} {self.verb}"]
        parts.append(f"also {self.verb}: " + (", ".join(wrong) if wrong
                                               else "none of the variants"))
        if right:
            parts.append(f"agree with {self.arbiter}: " + ", ".join(right))
        if none:
            parts.append("no answer: " + ", ".join(none))
        parts.append(_hardware(hw))
        return "; ".join(parts)


def _short(why: str) -> str:
    """A no-answer reason in a few words: LLVM's error without its prefix and registers
    (`unable to legalize instruction: G_FPTOUI_SAT`)."""
    if why.startswith("compiles; "):
        return why.split("|", 1)[0]
    why = re.sub(r"^(\w+: )?(LLVM ERROR: )?", "", why.strip())
    why = re.sub(r"%\w+:_\(\w+\) = ", "", why)
    why = re.sub(r" %.*$", "", why)
    return why[:70] or "no answer"


def _hardware(hw: list[Probe]) -> str:
    seen = [p.name for p in hw if p.agrees is False]
    if seen:
        return "seen on hardware (" + ", ".join(seen) + ")"
    agree = [p.name for p in hw if p.agrees is True]
    if agree:
        return "hardware agrees (" + ", ".join(agree) + ")"
    return "not run on hardware (" + ", ".join(p.name for p in hw) + ": not available here)"


def _with(spec: PipelineSpec, drop: str, add: str | None) -> str:
    """`spec` with `add` in place of the option matching the regex `drop` (appended when
    none matches; the option dropped when `add` is None)."""
    opts = list(spec.options)
    at = next((i for i, o in enumerate(opts) if re.fullmatch(drop, o)), None)
    if at is None:
        opts += [add] if add else []
    elif add:
        opts[at] = add
    else:
        del opts[at]
    return str(PipelineSpec(spec.name, tuple(opts)))


def variants(spec_text: str) -> list[tuple[str, str]]:
    """(name, spec) of every variant of the finding's pipeline worth a run."""
    spec = PipelineSpec.parse(spec_text)
    opts = spec.options
    level = next((o for o in opts if re.fullmatch(r"O[0-3]", o)), "O2")
    target = next((o for o in opts if o in TARGETS), "gfx942")
    llc = next((o.split("=", 1)[1] for o in opts if o.startswith("llc=")), None)
    isel = next((o.split("=", 1)[1] for o in opts if o.startswith("isel=")), "dag")
    out: list[tuple[str, str]] = []
    if spec.name in ("amdgpu-sim", "llvm-cpu"):
        for name, path in LLC.items():
            if path != llc and Path(path).exists():
                out.append((name, _with(spec, r"llc=.*", f"llc={path}")))
        if llc is not None:
            out.append(("llvmlite", _with(spec, r"llc=.*", None)))
        other = "global" if isel == "dag" else "dag"
        out.append(("GlobalISel" if other == "global" else "SelectionDAG",
                    _with(spec, r"isel=.*", None if other == "dag" else "isel=global")))
        for o in ("O0", "O1", "O2", "O3"):
            if o != level:
                out.append((o, _with(spec, r"O[0-3]", o)))
    if spec.name in ("amdgpu-sim", "rustc-amdgpu"):
        for t in TARGETS:
            if t != target:
                out.append((f"{t} {level}", _with(spec, r"gfx\w+", t)))
    rustc_level = "O0" if level == "O0" else "O2"
    if spec.name != "rustc-amdgpu":
        out.append((f"rustc-amdgpu {rustc_level}", f"rustc-amdgpu:{target}:{rustc_level}"))
    if spec.name != "amdgpu-sim":
        out.append((f"amdgpu-sim {target} {level}", f"amdgpu-sim:{target}:{level}"))
    if spec.name != "llvm-cpu":
        out.append((f"host llvm-cpu {level}", f"llvm-cpu:{level}"))
    out.append(("host rustc-cpu O2", "rustc-cpu:O2"))
    out += [(h, f"{h}:{level}") for h in HARDWARE if h != spec.name]
    return out


def gather(trials: Trials, spec: str, outcome: Outcome | None = None) -> Evidence:
    """The case of `trials` on every variant of `spec` (`outcome`: the spec's own, when
    known; a compile crash there makes a variant that crashes alike a "shows it")."""
    crash = (normalise_error_line(outcome.signature) if isinstance(outcome, CompileCrash)
             else None)
    probes = []
    for name, variant in variants(spec):
        t: Trial = trials.run(variant)
        agrees, why = t.agrees, t.why
        if crash is not None and isinstance(t.outcome, CompileCrash):
            same = normalise_error_line(t.outcome.signature) == crash
            agrees = False if same else None
        elif crash is not None and t.agrees is False:  # compiles, wrong: another finding
            agrees, why = None, f"compiles; another finding: {t.why}"
        probes.append(Probe(name, variant, agrees, why[:200]))
    return Evidence(spec, trials.policy.arbiter, tuple(probes),
                    "crashes" if crash is not None else "wrong")


__all__ = ["Evidence", "Probe", "gather", "variants"]
