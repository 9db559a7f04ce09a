"""The Pipeline contract (docs/design.md §3): a Case in, an Outcome out.

A pipeline is named by a spec string, `name[:option...]` (`llvm-cpu:O3`,
`amdgpu-sim:gfx942:O3:llc=PATH`). Subclasses implement `_run`; `run` is final so every
pipeline keeps the same rules: availability is checked first, a kernel using a feature the
pipeline does not declare gets `Unsupported`, and the total time is always recorded.

Options are data. A pipeline class declares them in `options`, a tuple of declarations
from `rgpu_fuzz.pipelines.options`; the spec's options are parsed once, in `__init__`, into
`self.option_values`, and an unknown, malformed or out-of-range option is a `PipelineError`
(one line; `rgpu-fuzz run` exits 2). Every pipeline also takes `timeout=SECONDS`, the
wall-clock limit of one case (default: the class attribute `timeout`):

```python
class MySim(Pipeline):
    name = "my-sim"
    TARGET = Choice(name="target", choices=("gfx942", "gfx90a", "gfx1100"),
                    help="GPU to simulate")
    OPT = OptLevel(level=2)
    LLC = PathOption(name="llc", executable=True, help="an external llc instead of llvmlite")
    STEPS = Int(name="steps", value=1_000_000, min=1, help="instruction budget")
    DET = Flag(name="det", execution=True, help="compile twice and compare")
    options = (TARGET, OPT, LLC, STEPS, DET)

    def _run(self, case):
        target = self.option(self.TARGET)   # "gfx942" for `my-sim`, "gfx90a" for `my-sim:gfx90a`
        level = self.option(self.OPT)       # an int
        ...
```

`my-sim:gfx90a:O3:steps=10` parses; `my-sim:O9`, `my-sim:steps=abc`, `my-sim:steps=-5`,
`my-sim:bogus` and `my-sim:O2:O3` are errors. The label (how outcomes and signatures name
the pipeline) is the name plus the given options in declaration order, written canonically,
without execution settings (`timeout=`, `det`).
"""

from __future__ import annotations

import abc
import queue
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, TypeVar, final

from rgpu_fuzz.lang.ast import SliceType
from rgpu_fuzz.lang.features import case_features, case_module
from rgpu_fuzz.model.case import BufferArg, Case
from rgpu_fuzz.model.errors import HarnessBug
from rgpu_fuzz.model.outcome import (
    OUTCOME_TYPES,
    Buffer,
    Ok,
    Outcome,
    PipelineFailure,
    Stats,
    Timeout,
    Unavailable,
    Unsupported,
)
from rgpu_fuzz.pipelines.options import (
    Float,
    Option,
    OptionValues,
    PipelineError,
    options_help,
    parse_options,
)
from rgpu_fuzz.targets import DEFAULT_WAVE_SIZE, by_name

T = TypeVar("T")

DEFAULT_TIMEOUT = 60.0
"""Seconds one case may take in a pipeline unless its class or `timeout=` says otherwise."""


@dataclass(frozen=True, slots=True)
class PipelineSpec:
    """A split spec string: `llvm-cpu:O3` is name `llvm-cpu`, option tokens `("O3",)`.
    The tokens are read against the pipeline's declarations when the pipeline is made."""

    name: str
    options: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> PipelineSpec:
        parts = [p.strip() for p in text.strip().split(":")]
        if not parts[0] or any(not p for p in parts):
            raise PipelineError(f"bad pipeline spec \"{text}\" (expected name[:option...])")
        return cls(parts[0], tuple(parts[1:]))

    def __str__(self) -> str:
        return ":".join((self.name, *self.options))


def spec_name(label: str) -> str:
    """The pipeline name of a spec or label (`ref:steps=10` → `ref`): the one way to ask
    which pipeline a label belongs to."""
    return label.split(":", 1)[0].strip()


class Pipeline(abc.ABC):
    """Turns a Case into an Outcome. Subclasses set `name`, `description`, `options` and
    `features` and implement `_run`; they never override `run`.

    Rules `run` keeps for every pipeline, built-in or plugin:
    * the case runs under a wall-clock limit (`timeout=`, default the class's `timeout`).
      A plugin's `_run` (a class defined outside `rgpu_fuzz`) runs on a runner thread and,
      past the limit, the outcome is `Timeout` whatever it is doing (a `_run` that never
      returns is abandoned in its daemon thread). Built-ins bound themselves — `ref` with
      its step and time budgets, the others with worker and subprocess timeouts — and run
      on the caller's thread: the hand-off to a runner thread costs 1–3 ms per case on a
      loaded machine, more than `ref` itself on a small case;
    * a plugin's failure is the plugin's: a plugin `_run` that raises, returns something
      that is not an `Outcome`, or an `Ok` whose buffers do not match the case's `&mut`
      arguments gives a `PipelineFailure` outcome of that pipeline, with the traceback;
      a built-in pipeline that does so is a bug in rgpu-fuzz (`HarnessBug`).
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    option_help: ClassVar[str] = ""
    """Free text shown by `rgpu-fuzz pipelines`; empty: generated from `options`."""
    options: ClassVar[tuple[Option[Any], ...]] = ()
    """The options a spec may carry (see `rgpu_fuzz.pipelines.options`)."""
    features: ClassVar[frozenset[str] | None] = None
    """Language features (see `rgpu_fuzz.lang.features`) this pipeline runs; None: all."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds per case; a class may change the default, `timeout=` a spec."""
    watchdog_grace: ClassVar[float] = 1.0
    """Seconds past `timeout` before `run` gives up on `_run`: pipelines that bound their
    own work (a worker with its own timeout and start-up allowance) set more, so their own,
    more precise `Timeout` (with the stage) is the one reported."""

    def __init__(self, spec: PipelineSpec | str) -> None:
        if isinstance(spec, str):
            spec = PipelineSpec.parse(spec)
        self.spec = spec
        self.option_values: OptionValues = parse_options(str(spec), spec.options,
                                                         self.declared_options())
        self.timeout = float(self.option_values["timeout"])

    @classmethod
    def declared_options(cls) -> tuple[Option[Any], ...]:
        """`options` plus the `timeout=` every pipeline takes (unless it declares its own)."""
        if any(d.name == "timeout" for d in cls.options):
            return cls.options
        return (*cls.options, Float(name="timeout", value=cls.timeout, execution=True,
                                    help="wall-clock seconds per case"))

    @classmethod
    def options_text(cls) -> str:
        """What `rgpu-fuzz pipelines` shows in its options column."""
        return cls.option_help or options_help(cls.declared_options())

    def option(self, decl: Option[T]) -> T:
        """The parsed value of one declared option."""
        return self.option_values.get(decl)

    @property
    def label(self) -> str:
        """How outcomes and signatures name this pipeline: the name and the given options in
        declaration order, canonically written, without execution settings (`timeout=`,
        `det`), which change how it is run and checked, not what is computed, so
        `llvm-cpu:O2:timeout=30` and `llvm-cpu:O2` bucket together."""
        return ":".join((self.spec.name, *self.option_values.tokens(execution=False)))

    @property
    def wave_size(self) -> int:
        """The wave size this pipeline runs the wave functions at (docs/language.md "Wave
        operations"); the oracle compares it with the reference run at this size. Default:
        the default wave size of the GPU its `target` option names (the target table,
        `rgpu_fuzz.targets`), else `DEFAULT_WAVE_SIZE`. A pipeline with another rule (a
        wave-size option, a fixed warp) overrides this."""
        for decl in self.declared_options():
            if decl.name == "target":
                target = by_name(str(self.option(decl)))
                if target is not None:
                    return target.wave_size
        return DEFAULT_WAVE_SIZE

    @property
    def is_plugin(self) -> bool:
        """Whether this class comes from outside rgpu-fuzz (a plugin file, another package)."""
        return not type(self).__module__.startswith("rgpu_fuzz.")

    @property
    def batches(self) -> bool:
        """Whether `run_many` runs cases together (the class overrides `_run_many`), so an
        outcome may depend on the batch it ran in."""
        return type(self)._run_many is not Pipeline._run_many

    def unavailable_reason(self) -> str | None:
        """One line saying why this pipeline cannot run here, or None when it can."""
        return None

    @final
    def run(self, case: Case, case_features: frozenset[str] = frozenset()) -> Outcome:
        start = time.perf_counter()
        reason = self.unavailable_reason()
        if reason is not None:
            return Unavailable(reason=reason)
        if self.features is not None and (missing := case_features - self.features):
            return Unsupported(features=tuple(sorted(missing)))
        outcome = self._guarded([case], lambda: [self._run(case)])[0]
        return self._stamped(case, _with_total(outcome, time.perf_counter() - start))

    @final
    def run_many(self, cases: Sequence[Case],
                 case_features: Sequence[frozenset[str]] | None = None) -> list[Outcome]:
        """`run` over several cases, letting a pipeline share work between them (one rustc
        crate for a whole batch); the same rules as `run` for every case."""
        feats = case_features if case_features is not None else [frozenset()] * len(cases)
        reason = self.unavailable_reason()
        if reason is not None:
            return [Unavailable(reason=reason) for _ in cases]
        out: list[Outcome | None] = [None] * len(cases)
        todo = []
        for i, f in enumerate(feats):
            if self.features is not None and (missing := f - self.features):
                out[i] = Unsupported(features=tuple(sorted(missing)))
            else:
                todo.append(i)
        if not self.batches:  # no shared work: each case alone
            for i in todo:
                out[i] = self.run(cases[i], feats[i])
            return [o for o in out if o is not None]
        start = time.perf_counter()
        batch = [cases[i] for i in todo]
        results = self._guarded(batch, lambda: list(self._run_many(batch)))
        share = (time.perf_counter() - start) / max(1, len(todo))
        for i, outcome in zip(todo, results, strict=True):
            out[i] = self._stamped(cases[i], _with_total(outcome, share))
        return [o for o in out if o is not None]

    def with_wave_size(self, size: int) -> Pipeline | None:
        """This pipeline at another wave size, for a pipeline the oracle may judge with (the
        reference: `runner` runs it once per wave size other pipelines declare); None for
        the others."""
        return None

    def _stamped(self, case: Case, outcome: Outcome) -> Outcome:
        """`outcome` with the wave size it ran at when the kernel uses wave functions (the
        oracle judges each wave size on its own, `oracles.waves`)."""
        if "wave" not in case_features(case):
            return outcome
        return replace(outcome, stats=replace(outcome.stats, wave_size=self.wave_size))

    def _guarded(self, cases: Sequence[Case], work: Any) -> list[Outcome]:
        """`work()` under the wall-clock limit, its results checked against `cases`."""
        if not cases:
            return []
        if self.is_plugin:
            limit = self.timeout * len(cases) + self.watchdog_grace
            got = _call_bounded(work, limit)
            if got is None:
                return [Timeout(stage="run", seconds=self.timeout) for _ in cases]
        else:  # built-ins bound themselves: no thread hand-off (see the class docstring)
            got = ("ok", work())
        box = [got]
        if box[0][0] == "raised":
            exc, tb = box[0][1], box[0][2]
            if not self.is_plugin or not isinstance(exc, Exception):
                raise exc
            return [PipelineFailure(error=f"{type(exc).__name__}: {exc}".splitlines()[0][:300],
                                    traceback=tb) for _ in cases]
        results = box[0][1]
        if not isinstance(results, list) or len(results) != len(cases):
            what = f"{len(results)} outcomes" if isinstance(results, list) else repr(results)
            if not self.is_plugin:
                raise HarnessBug(f"{self.label}: {what} for {len(cases)} cases")
            return [PipelineFailure(error=f"returned the wrong number of outcomes: {what[:200]} "
                                    f"for {len(cases)} cases") for _ in cases]
        checked: list[Outcome] = []
        for case, result in zip(cases, results, strict=True):
            problem = check_outcome(case, result)
            if problem is not None:
                if not self.is_plugin:
                    raise HarnessBug(f"{self.label}: {problem}")
                checked.append(PipelineFailure(error=problem))
            else:
                checked.append(result)
        return checked

    def _run_many(self, cases: Sequence[Case]) -> list[Outcome]:
        """Override to share work between cases; by default each case runs alone."""
        return [self._run(c) for c in cases]

    @abc.abstractmethod
    def _run(self, case: Case) -> Outcome: ...


class _Runner:
    """A thread that runs one callable at a time for `_call_bounded`. Runners are reused:
    the caller blocks until the reply (or the limit), so no thread switch happens during
    the work itself (starting a thread per call cost ~5 ms, one GIL switch interval)."""

    def __init__(self) -> None:
        self.requests: queue.Queue[tuple[Callable[[], Any], queue.Queue[Any]]] = queue.Queue()
        threading.Thread(target=self._serve, name="rgpu-pipeline-runner", daemon=True).start()

    def _serve(self) -> None:
        while True:
            work, reply = self.requests.get()
            try:
                reply.put(("ok", work()))
            except BaseException as e:
                reply.put(("raised", e, traceback.format_exc()))


_idle_runners: list[_Runner] = []
_idle_lock = threading.Lock()


def _call_bounded(work: Callable[[], Any], limit: float) -> tuple[Any, ...] | None:
    """`("ok", value)` or `("raised", exception, traceback)` of `work()`, run on a runner
    thread; None when it did not finish within `limit` seconds. A runner that overran is
    abandoned (a daemon thread, left to finish or not); the caller's thread is never held,
    and Ctrl-C reaches it while it waits."""
    with _idle_lock:
        runner = _idle_runners.pop() if _idle_runners else None
    if runner is None:
        runner = _Runner()
    reply: queue.Queue[Any] = queue.Queue()
    runner.requests.put((work, reply))
    try:
        got = reply.get(timeout=limit)
    except queue.Empty:
        return None
    with _idle_lock:
        _idle_runners.append(runner)
    return got  # type: ignore[no-any-return]


def check_outcome(case: Case, result: object) -> str | None:
    """What is wrong with `result` as an outcome of `case`, or None: it must be an
    `Outcome`, and an `Ok` must hold exactly the entry kernel's `&mut` buffers, each with
    the element type and length the case gives it."""
    if not isinstance(result, OUTCOME_TYPES):
        return f"returned a {type(result).__name__}, not an Outcome: {str(result)[:80]!r}"
    if not isinstance(result, Ok):
        return None
    module = case_module(case)
    entry = module.fns().get(case.entry) if module is not None else None
    if entry is None:
        return "returned Ok for a case whose kernel does not check"
    want = {p.name for p in entry.params if isinstance(p.ty, SliceType) and p.ty.mutable}
    outputs = result.outputs
    if not isinstance(outputs, dict) or set(outputs) != want:
        got = sorted(outputs) if isinstance(outputs, dict) else type(outputs).__name__
        return (f"returned Ok with other buffers than the kernel's &mut ones: {got}, "
                f"want {sorted(want)}")
    for name, buf in outputs.items():
        try:
            problem = _buffer_problem(case, name, buf)
        except Exception as e:  # a plugin's odd value: say what it was, do not crash
            problem = f"returned Ok with a malformed buffer: {name}: {type(e).__name__}: {e}"
        if problem is not None:
            return problem
    return None


def _buffer_problem(case: Case, name: str, buf: object) -> str | None:
    arg = case.arg(name)
    if not isinstance(buf, Buffer) or not isinstance(arg, BufferArg):
        return f"returned Ok with a value that is not a Buffer: {name} = {type(buf).__name__}"
    if buf.ty is not arg.elem or getattr(buf.values, "ndim", 0) != 1 \
            or len(buf.values) != arg.len:
        return (f"returned Ok with a buffer of the wrong type or length: {name} has "
                f"{len(buf.values)} {buf.ty}, the case gives {arg.len} {arg.elem}")
    return None


def _with_total(outcome: Outcome, seconds: float) -> Outcome:
    times = dict(outcome.stats.seconds)
    times.setdefault("total", seconds)
    return replace(outcome, stats=Stats(seconds=times, artefacts=outcome.stats.artefacts))


__all__ = ["DEFAULT_TIMEOUT", "Pipeline", "PipelineError", "PipelineSpec", "check_outcome",
           "spec_name"]
