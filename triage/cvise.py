"""C-Vise as a second reducer, run on the same findings as ours so the two can be compared.

C-Vise (the Python successor of C-Reduce) reduces a text file while an external
interestingness script exits 0. It knows nothing of our language: its passes are C-oriented
(line, token and balanced-bracket deletions, peephole rewrites), so what it is good at here
says how much of our reducer's result comes from being type-aware.

Fairness rules, so the comparison with `reduce_case` means something:
* the interestingness script builds exactly the test our reducer uses,
  `signature_predicate(signature, pipelines, policy)` — the same definition of "still the
  same bug" (ref still well-defined, same `kind|pipeline`), with the same `--plugin` files
  loaded so a seeded-bug pipeline exists in the script's process too;
* C-Vise only rewrites the kernel text, never the launch or the arguments, so results are
  compared on kernel-only sizes (`token_count`, lines of the kernel) for both reducers;
* both get the same wall-clock budget and one core (`--n 1`); C-Vise pays a process start
  per candidate, which is how it is meant to be used and is part of what is measured.

C-Vise is an optional tool (Debian/Ubuntu package `cvise`). When it is not on PATH,
`reduce_with_cvise` returns an unavailable `CviseResult` instead of raising.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from rgpu_fuzz import casefile
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.oracles import KnownDifference, Policy, ZeroSign
from rgpu_fuzz.triage.reduce.size import token_count

__all__ = [
    "CVISE", "CviseResult", "check_kernel", "cvise_available", "kernel_size",
    "reduce_with_cvise", "write_interestingness_test",
]

CVISE = "cvise"
"""The executable looked up on PATH."""
KERNEL_FILE = "kernel.rs"
TEST_FILE = "interesting.py"
CONFIG_FILE = "config.json"
CASE_FILE = "case.toml"
_GRACE_S = 5.0
"""How long C-Vise gets to stop after SIGTERM before its process group is killed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CviseResult:
    """What one C-Vise run produced; sizes are kernel-only (see module docstring)."""

    available: bool
    """False when C-Vise is not installed: nothing else but `detail` is meaningful."""
    kernel: str
    """The reduced kernel text (the original one when nothing was reduced)."""
    lines_before: int
    tokens_before: int
    lines_after: int
    tokens_after: int
    seconds: float
    """Wall-clock seconds C-Vise ran, start to exit (or to being stopped at the budget)."""
    out_of_time: bool
    """True when the budget stopped C-Vise before it reached its own fixpoint."""
    interesting: bool
    """The reduced kernel re-checked with the predicate in this process after C-Vise ended
    (C-Vise is stopped from outside at the budget, so this is verified, not assumed)."""
    returncode: int | None = None
    detail: str = ""
    """One line: why C-Vise was unavailable or failed, empty when it ran normally."""


def cvise_available() -> bool:
    """Whether the `cvise` executable is on PATH."""
    return shutil.which(CVISE) is not None


def kernel_size(kernel: str) -> tuple[int, int]:
    """(lines, tokens) of a kernel text — the kernel-only part of `measure`'s `Size`."""
    return len(kernel.splitlines()), token_count(kernel)


def _policy_to_json(policy: Policy) -> dict[str, object]:
    return asdict(policy)


def _policy_from_json(doc: dict[str, object]) -> Policy:
    known = tuple(KnownDifference(**k) for k in doc.pop("known", ()))  # type: ignore[arg-type,attr-defined]
    zero = ZeroSign(doc.pop("zero_sign"))
    return Policy(**doc, zero_sign=zero, known=known)  # type: ignore[arg-type]


def write_interestingness_test(directory: Path, case: Case, signature: str,
                               pipelines: Sequence[str], policy: Policy, *,
                               plugins: Sequence[str | Path] = ()) -> Path:
    """Write `interesting.py` (and the case and config it reads) into `directory`.

    The script is run by C-Vise with no arguments in a scratch directory holding a candidate
    `kernel.rs`; it exits 0 iff `check_kernel` says the candidate still shows the finding.
    Everything it needs is named by absolute path, since C-Vise runs it elsewhere."""
    directory = directory.resolve()
    casefile.save(case, directory / CASE_FILE)
    config = {
        "case": str(directory / CASE_FILE),
        "signature": signature,
        "pipelines": list(pipelines),
        "policy": _policy_to_json(policy),
        "plugins": [str(Path(p).resolve()) for p in plugins],
    }
    (directory / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    script = directory / TEST_FILE
    script.write_text(
        f"#!{sys.executable}\n"
        '"""C-Vise interestingness test written by rgpu_fuzz.triage.cvise."""\n'
        "import sys\n\n"
        "from rgpu_fuzz.triage.cvise import check_kernel\n\n"
        f"sys.exit(0 if check_kernel({str(directory / CONFIG_FILE)!r}, {KERNEL_FILE!r}) "
        "else 1)\n",
        encoding="utf-8")
    script.chmod(0o755)
    return script


def check_kernel(config_path: str | Path, kernel_path: str | Path) -> bool:
    """The interestingness test itself: the case from `config_path` with its kernel replaced
    by the text of `kernel_path` satisfies `signature_predicate`. Any failure to read,
    decode or run the candidate means "not interesting" — C-Vise produces broken text by
    design, and a harness error here must not look like the bug."""
    from rgpu_fuzz.pipelines.registry import Registry
    from rgpu_fuzz.triage.reduce import signature_predicate

    config = json.loads(Path(config_path).read_text(encoding="utf-8"))
    try:
        text = Path(kernel_path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if not text.strip():
        return False
    registry = Registry()
    for plugin in config["plugins"]:
        registry.load_plugin(plugin)
    policy = _policy_from_json(config["policy"])
    interesting = signature_predicate(config["signature"], config["pipelines"], policy,
                                      registry=registry)
    case = replace(casefile.load(config["case"]), kernel=text)
    return bool(interesting(case))


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop C-Vise and every process it started (its own process group, which we created)."""
    for sig, wait_s in ((signal.SIGTERM, _GRACE_S), (signal.SIGKILL, _GRACE_S)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def reduce_with_cvise(case: Case, signature: str, pipelines: Sequence[str], policy: Policy, *,
                      budget_s: float, plugins: Sequence[str | Path] = (),
                      test_timeout_s: float = 60.0, not_c: bool = True,
                      keep_dir: Path | None = None) -> CviseResult:
    """Reduce `case.kernel` with C-Vise while the finding `signature` holds.

    Runs `cvise --n 1 --timeout T [--not-c] interesting.py kernel.rs` for at most `budget_s`
    seconds of wall clock, then stops it; C-Vise writes each improvement back to `kernel.rs`
    as it goes, so what is there when it stops is its best so far. `--not-c` (default) skips
    the clang_delta passes, which only apply to C/C++ and would just burn the budget on
    parse failures. `keep_dir` keeps the work files (script, log) for inspection."""
    lines0, tokens0 = kernel_size(case.kernel)
    exe = shutil.which(CVISE)
    if exe is None:
        return CviseResult(available=False, kernel=case.kernel, lines_before=lines0,
                           tokens_before=tokens0, lines_after=lines0, tokens_after=tokens0,
                           seconds=0.0, out_of_time=False, interesting=False,
                           detail="cvise not installed (apt-get install cvise)")
    with tempfile.TemporaryDirectory(prefix="rgpu-cvise-") as tmp:
        work = keep_dir.resolve() if keep_dir is not None else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        scratch = work / "tmp"            # C-Vise's own /tmp/cvise-* dirs go here, not /tmp
        scratch.mkdir(exist_ok=True)
        script = write_interestingness_test(work, case, signature, pipelines, policy,
                                            plugins=plugins)
        kernel_file = work / KERNEL_FILE
        kernel_file.write_text(case.kernel, encoding="utf-8")
        cmd = [exe, "--n", "1", "--timeout", str(max(1, round(test_timeout_s))), "--tidy"]
        if not_c:
            cmd.append("--not-c")
        cmd += [str(script), str(kernel_file)]
        env = dict(os.environ, TMPDIR=str(scratch))
        t0 = time.monotonic()
        with open(work / "cvise.log", "wb") as log:
            proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            try:
                returncode: int | None = proc.wait(timeout=budget_s)
                out_of_time = False
            except subprocess.TimeoutExpired:
                _stop(proc)
                returncode, out_of_time = None, True
        seconds = time.monotonic() - t0
        reduced = kernel_file.read_text(encoding="utf-8", errors="replace")
        interesting = check_kernel(work / CONFIG_FILE, kernel_file)
        detail = ""
        if returncode not in (0, None):
            tail = (work / "cvise.log").read_text(errors="replace").strip().splitlines()
            detail = f"cvise exited {returncode}: {tail[-1] if tail else ''}"
        if not interesting:                # never report a kernel that lost the bug
            detail = detail or "C-Vise's last kernel no longer shows the finding"
            reduced = case.kernel
    lines1, tokens1 = kernel_size(reduced)
    return CviseResult(available=True, kernel=reduced, lines_before=lines0,
                       tokens_before=tokens0, lines_after=lines1, tokens_after=tokens1,
                       seconds=seconds, out_of_time=out_of_time, interesting=interesting,
                       returncode=returncode, detail=detail)
