"""What the pipelines that compile a chunk's cases together (`llvm-cpu`, `amdgpu-sim`) share:
one module of many cases' modules (`link_modules`), and what a failure of a batch job in its
worker means for each case (`run_batch`).

The rule is that nothing of one case is lost to another: a worker that dies in a case's own
stage (reported as `<index>:<stage>`) is that case's concern — it runs alone for its own
outcome, or, when it overstayed its share of the time in its execution stage, it is its own
`Timeout` — and the rest runs as a batch again; a failure of the batch as a whole (a stage
without an index: no case to blame) runs every case alone, as without batches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rgpu_fuzz.model.errors import HarnessBug
from rgpu_fuzz.model.outcome import Outcome, Timeout
from rgpu_fuzz.pipelines import toolchain
from rgpu_fuzz.pipelines.stages import last_stage
from rgpu_fuzz.pipelines.toolchain import LlvmError
from rgpu_fuzz.pipelines.workers import Died, Done, JobResult, Raised, TimedOut

BATCH_PREFIX = "k{}."
"""Put before every symbol the `i`-th case of a batch defines (`link_modules`)."""


def link_modules(texts: dict[int, str]) -> str:
    """One module of the cases' modules, every symbol case `i` defines renamed with
    `BATCH_PREFIX` (after `transform_ir`, which sees the IR a case has alone; renaming an
    LLVM value renames its uses); declarations (intrinsics) are shared."""
    main = None
    for i, text in texts.items():
        mod = toolchain.parse(text)
        for value in (*mod.functions, *mod.global_variables):
            if not value.is_declaration:
                value.name = BATCH_PREFIX.format(i) + value.name
        if main is None:
            main = mod
            continue
        try:
            main.link_in(mod)
        except RuntimeError as e:
            raise LlvmError("link", str(e)) from e
    return str(main)


def run_batch(idx: Sequence[int], out: list[Outcome | None], *,
              call: Callable[[list[int]], JobResult], alone: Callable[[int], Outcome],
              hang: tuple[str, Timeout], label: str, is_plugin: bool) -> None:
    """Fill `out[i]` for every case `i` of `idx`: `call(indices)` runs those cases as one
    worker job, whose value is one outcome per case (anything else, such as a
    `BatchFailed`, is a failure of the batch as a whole); `alone(i)` runs case `i` by
    itself; `hang` is (the execution stage, the outcome of a case that overstays its time
    there)."""
    idx = list(idx)
    if len(idx) == 1:
        out[idx[0]] = alone(idx[0])
        return
    result = call(idx)
    if isinstance(result, Done) and isinstance(result.value, list):
        for i, outcome in zip(idx, result.value, strict=True):
            out[i] = outcome
        return
    if isinstance(result, Raised) and not is_plugin:
        raise HarnessBug(f"{label} worker raised:\n{result.traceback}")
    stage = last_stage(result.log) if isinstance(result, Died | TimedOut) else ""
    k, sep, what = stage.partition(":")
    if sep and k.isdigit() and int(k) < len(idx):
        blamed = idx[int(k)]
        hung = isinstance(result, TimedOut) or (
            isinstance(result, Died) and result.signal == "SIGALRM")
        out[blamed] = hang[1] if hung and what == hang[0] else alone(blamed)
        rest = [i for i in idx if i != blamed]
        if rest:
            run_batch(rest, out, call=call, alone=alone, hang=hang, label=label,
                      is_plugin=is_plugin)
        return
    for i in idx:  # the batch failed as a whole (or a plugin raised): every case alone
        out[i] = alone(i)


__all__ = ["BATCH_PREFIX", "link_modules", "run_batch"]
