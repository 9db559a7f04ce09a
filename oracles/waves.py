"""Judging kernels with wave functions: one reference per wave size (docs/design.md §5,
docs/language.md "Wave operations").

A kernel's wave functions compute different things at wave 32 and wave 64 (`wave_sum` adds 32
or 64 lanes), so a pipeline is compared only with the reference run at its own wave size. Each
outcome of such a kernel carries that size (`Stats.wave_size`, stamped by `Pipeline.run`);
the outcomes are split into one group per size, each group judged as a whole case, and the
verdicts joined. A kernel without wave functions has no stamps: one group, judged as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from oracles.verdict import Verdict
from rgpu_fuzz.model.outcome import Outcome
from rgpu_fuzz.pipelines.base import spec_name

__all__ = ["arbiter_outcome", "join_verdicts", "wave_groups"]


def wave_groups(outcomes: Mapping[str, Outcome], arbiter: str) -> list[dict[str, Outcome]]:
    """The outcomes split by wave size, each group in the given order, groups in the order
    of their first member. An outcome without a size (an `Unsupported`, any outcome of a
    kernel without wave functions) joins the group of the first arbiter outcome (`arbiter`
    is the arbiter's pipeline name); a size with no arbiter outcome of its own is a group
    without an arbiter, judged by agreement among its pipelines."""
    sizes = {label: o.stats.wave_size for label, o in outcomes.items()}
    if all(w is None for w in sizes.values()):
        return [dict(outcomes)]
    first_ref = next((label for label in outcomes if spec_name(label) == arbiter), None)
    main = sizes[first_ref] if first_ref is not None else None
    groups: dict[int | None, dict[str, Outcome]] = {}
    for label, o in outcomes.items():
        w = sizes[label]
        groups.setdefault(main if w is None else w, {})[label] = o
    return [g for g in groups.values() if g]


def join_verdicts(verdicts: Sequence[Verdict]) -> Verdict:
    """One verdict from the verdicts of the wave-size groups of one case."""
    compared: list[str] = []
    for v in verdicts:
        compared += [label for label in v.compared if label not in compared]
    return Verdict(findings=tuple(f for v in verdicts for f in v.findings),
                   classes=tuple(c for v in verdicts for c in v.classes),
                   compared=tuple(compared))


def arbiter_outcome(outcomes: Mapping[str, Outcome], arbiter: str,
                    wave_size: int | None) -> tuple[str, Outcome] | None:
    """The arbiter's outcome (label and outcome) to judge an outcome of wave size
    `wave_size` against: the first arbiter outcome at that size, else (a kernel without wave
    functions, `wave_size` None) the first arbiter outcome; None when there is none."""
    refs = [(label, o) for label, o in outcomes.items() if spec_name(label) == arbiter]
    if wave_size is not None:
        refs = [(label, o) for label, o in refs if o.stats.wave_size in (wave_size, None)]
    return refs[0] if refs else None
