"""Atheris harness: bytes → generated case → pipelines → oracle.

The fuzzer's bytes steer the grammar generator (`AtherisChoices`), so coverage feedback from
the generator and the reference interpreter guides which kernels get tried (lowering and LLVM
run in the pipelines' worker processes, out of atheris's sight). Each case runs
through the pipelines (`$RGPU_FUZZ_PIPELINES`, default `ref,llvm-cpu:O0,llvm-cpu:O3`) and
the oracle judges the outcomes (`$RGPU_FUZZ_POLICY`, default `default`). These are findings,
and stop the fuzzer:
* any finding the policy does not list as known (wrong code, crash, timeout, trap mismatch);
* the arbiter not finishing with outputs — a `Rejected` or a `Trap` means the generator made
  a case that is not well-defined, which it promises never to do;
* an exception while running the pipelines or judging (a harness bug).

The case is written to the crash folder (`$RGPU_FUZZ_CRASH_DIR`, default `fuzz/crashes/`) as
`<case id>.toml` *before* the exception is raised (persist canonical source,
never fuzzer bytes); replay it with `rgpu-fuzz run fuzz/crashes/<id>.toml --pipelines ...`.
An exception inside the generator itself has no case to save; atheris's `crash-*` input file
replays it (`python fuzz/differential.py crash-...`).

Pipelines from `--plugin` files: `$RGPU_FUZZ_PLUGINS` (paths separated by `os.pathsep`).

Without atheris installed, `TestOneInput` reads the bytes with `BytesProvider`, a small
stand-in for `atheris.FuzzedDataProvider` (same methods, different decoding), so tests can
drive the harness; `main` needs atheris.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CRASH_DIR_ENV = "RGPU_FUZZ_CRASH_DIR"
PIPELINES_ENV = "RGPU_FUZZ_PIPELINES"
PLUGINS_ENV = "RGPU_FUZZ_PLUGINS"
POLICY_ENV = "RGPU_FUZZ_POLICY"
PROFILE_ENV = "RGPU_FUZZ_PROFILE"
DEFAULT_PIPELINES = "ref,llvm-cpu:O0,llvm-cpu:O3"
DEFAULT_CRASH_DIR = Path(__file__).resolve().parent / "crashes"
_INSTRUMENTED = ("generators", "rgpu_fuzz.interp", "oracles")


class DifferentialFinding(AssertionError):
    """The oracle found something; `path` is the saved case."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(f"{message}\n  case saved to {path}")
        self.path = path


class BytesProvider:
    """A deterministic stand-in for `atheris.FuzzedDataProvider` when atheris is absent.

    Reads the input front to back; once it is used up every answer is the smallest one
    (the generator's simplest choice), so any input, even empty, gives a case."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def _take(self, n: int) -> int:
        chunk = self._data[self._pos:self._pos + n]
        self._pos += len(chunk)
        return int.from_bytes(chunk, "little")

    def ConsumeIntInRange(self, lo: int, hi: int) -> int:  # atheris's method names
        span = hi - lo + 1
        return lo + self._take(((span - 1).bit_length() + 7) // 8) % span

    def ConsumeProbability(self) -> float:
        return self._take(4) / 2**32

    def ConsumeUInt(self, n: int) -> int:
        return self._take(n)


def crash_dir() -> Path:
    """Where finding cases go: `$RGPU_FUZZ_CRASH_DIR`, else `fuzz/crashes/`."""
    env = os.environ.get(CRASH_DIR_ENV)
    return Path(env) if env else DEFAULT_CRASH_DIR


def _provider(data: bytes) -> Any:
    try:
        import atheris
    except ImportError:
        return BytesProvider(data)
    return atheris.FuzzedDataProvider(data)


_setup_cache: dict[tuple[str, ...], tuple[list[Any], Any, Any]] = {}


def _setup() -> tuple[list[Any], Any, Any]:
    """(pipelines, policy, profile) for the current environment, built once per setting."""
    key = tuple(os.environ.get(k, "") for k in (PIPELINES_ENV, PLUGINS_ENV, POLICY_ENV,
                                                 PROFILE_ENV))
    got = _setup_cache.get(key)
    if got is None:
        from generators import load_profile
        from oracles import load_policy
        from rgpu_fuzz.pipelines.registry import Registry

        specs = [s.strip() for s in (key[0] or DEFAULT_PIPELINES).split(",") if s.strip()]
        reg = Registry()
        for plugin in filter(None, key[1].split(os.pathsep)):
            reg.load_plugin(plugin)
        got = (reg.create_all(specs), load_policy(key[2] or "default"),
               load_profile(key[3] or "default"))
        _setup_cache[key] = got
    return got


def _save(case: Any) -> Path:
    from rgpu_fuzz import casefile

    folder = crash_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return casefile.save(case, folder / f"{case.id}.toml")


def _problems(outcomes: dict[str, Any], verdict: Any, arbiter: str) -> list[str]:
    """Why this case stops the fuzzer (empty: it does not)."""
    from rgpu_fuzz.model.outcome import Ok, detail

    out = [f"{f.kind} [{', '.join(f.pipelines)}]: {f.signature}" for f in verdict.new_findings]
    ref = outcomes.get(arbiter)
    if ref is not None and not isinstance(ref, Ok) and not out:
        # Rejected and Unavailable/Unsupported: the generator promised a well-defined case
        # the arbiter can run; a Trap is not a finding for `judge`, but it is one here.
        out.append(f"arbiter {arbiter} gave {ref.status}: {detail(ref)}")
    return out


def run_one(case: Any, pipelines: Sequence[Any], policy: Any) -> None:
    """Run and judge one case; on a finding or an exception, save the case, then raise."""
    from oracles import judge
    from rgpu_fuzz.lang.parser import parse
    from rgpu_fuzz.lang.source import DiagnosticError
    from rgpu_fuzz.pipelines.runner import run_case

    try:
        outcomes = run_case(case, pipelines)
        try:
            module = parse(case.kernel, f"<case {case.id}>")
        except DiagnosticError:
            module = None  # the arbiter's outcome says why; judge without operation names
        problems = _problems(outcomes, judge(case, outcomes, policy, module), policy.arbiter)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt | SystemExit):
            raise
        _save(case)
        raise
    if problems:
        raise DifferentialFinding("; ".join(problems), _save(case))


def TestOneInput(data: bytes) -> None:  # the name atheris expects
    """The atheris entry point: one generated case through every pipeline."""
    from generators import AtherisChoices, generate

    pipelines, policy, profile = _setup()
    case = generate(AtherisChoices(_provider(data)), profile)
    run_one(case, pipelines, policy)


def write_seeds(folder: Path, count: int = 32, size: int = 4096) -> int:
    """Write `count` seeded random inputs of `size` bytes into `folder` (a libFuzzer corpus
    directory). libFuzzer starts from short inputs, which give tiny kernels; long random
    inputs give the generator's full range from the first run."""
    import random

    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    for i in range(count):
        (folder / f"seed-{i:03d}").write_bytes(rng.randbytes(size))
    return count


def main(argv: list[str] | None = None) -> None:
    """`python fuzz/differential.py [libFuzzer flags] [CORPUS_DIR...]`, or
    `--write-seeds DIR`."""
    args = list(sys.argv if argv is None else argv)
    if len(args) >= 3 and args[1] == "--write-seeds":
        print(f"wrote {write_seeds(Path(args[2]))} seed inputs to {args[2]}")
        return
    import atheris

    with atheris.instrument_imports(include=["rgpu_fuzz"]):
        # The grammar, the reference interpreter and the oracle. Lowering and LLVM run in
        # the pipelines' worker processes, which atheris does not see.
        for name in _INSTRUMENTED:
            importlib.import_module(name)
        _setup()
    atheris.Setup(args, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
