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
from typing import Any, Protocol

from rgpu_fuzz.model.errors import HarnessBug
from rgpu_fuzz.model.outcome import Outcome, Timeout
from rgpu_fuzz.pipelines import toolchain
from rgpu_fuzz.pipelines.stages import last_stage
from rgpu_fuzz.pipelines.toolchain import LlvmError
from rgpu_fuzz.pipelines.workers import Died, Done, JobResult, Raised, TimedOut, call_in_worker

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


class Batching(Protocol):
    """What `run_in_batches` needs of a pipeline that batches (llvm-cpu, amdgpu-sim)."""

    @property
    def timeout(self) -> float: ...

    @property
    def label(self) -> str: ...

    @property
    def is_plugin(self) -> bool: ...

    def batch_job(self, cases: Sequence[Any]) -> Any: ...

    def _run(self, case: Any) -> Outcome: ...


def run_in_batches(pipeline: Batching, cases: Sequence[Any], *, entry: str, hang_stage: str,
                   max_batch: int) -> list[Outcome]:
    """`pipeline`'s outcome for every case, its cases run `max_batch` at a time as one job of
    the worker function `entry` (`run_batch` says what happens on a failure); a case that
    overstays its time in `hang_stage` is that stage's `Timeout`."""
    out: list[Outcome | None] = [None] * len(cases)
    for start in range(0, len(cases), max_batch):
        run_batch(range(start, min(len(cases), start + max_batch)), out,
                  call=lambda some: call_in_worker(
                      entry, pipeline.batch_job([cases[i] for i in some]),
                      timeout=pipeline.timeout * len(some)),
                  alone=lambda i: pipeline._run(cases[i]),
                  hang=(hang_stage, Timeout(stage=hang_stage, seconds=pipeline.timeout)),
                  label=pipeline.label, is_plugin=pipeline.is_plugin)
    assert all(o is not None for o in out)
    return out  # type: ignore[return-value]


__all__ = ["BATCH_PREFIX", "Batching", "link_modules", "run_batch", "run_in_batches"]
