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
* both get the same wall-clock budget and one core (`--n 1`);
* by default (`server=True`) the script C-Vise runs is a thin client: it sends the
  candidate's path over a Unix socket to a predicate served from this process, so C-Vise,
  like our reducer, pays for the pipelines and not for a Python start plus imports and
  pipeline set-up per candidate (about 1.3 s, several times the test itself). With
  `server=False` the script is standalone (`check_kernel` in a fresh interpreter), which is
  how C-Vise is normally used and is kept to measure that cost.

C-Vise is an optional tool (Debian/Ubuntu package `cvise`). When it is not on PATH,
`reduce_with_cvise` returns an unavailable `CviseResult` instead of raising.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from oracles import KnownDifference, Policy, Signature, ZeroSign
from rgpu_fuzz import casefile
from rgpu_fuzz.model.case import Case
from triage.reduce.size import token_count

__all__ = [
    "CVISE", "SEEDED_PIPELINE", "CviseResult", "SeededFinding", "check_kernel",
    "compare_reducers", "cvise_available", "find_wrong_code", "kernel_size",
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
    harness_errors: int = 0
    """Candidates on which our harness raised (server mode); should be 0."""
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


def _policy_from_json(doc: dict[str, Any]) -> Policy:
    """The inverse of `_policy_to_json`; `doc` is parsed JSON, hence `Any` values."""
    known = tuple(KnownDifference(**k) for k in doc.pop("known", ()))
    zero = ZeroSign(doc.pop("zero_sign"))
    return Policy(**doc, zero_sign=zero, known=known)


def write_interestingness_test(directory: Path, case: Case, signature: Signature,
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
        "signature": str(signature),  # text in the file, parsed by `_load_predicate`
        "pipelines": list(pipelines),
        "policy": _policy_to_json(policy),
        "plugins": [str(Path(p).resolve()) for p in plugins],
    }
    (directory / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    script = directory / TEST_FILE
    script.write_text(
        f"#!{sys.executable}\n"
        '"""C-Vise interestingness test written by triage.cvise."""\n'
        "import sys\n\n"
        "from triage.cvise import check_kernel\n\n"
        f"sys.exit(0 if check_kernel({str(directory / CONFIG_FILE)!r}, {KERNEL_FILE!r}) "
        "else 1)\n",
        encoding="utf-8")
    script.chmod(0o755)
    return script


def _load_predicate(config: dict[str, Any]) -> tuple[Case, Callable[[Case], bool]]:
    """The original case and the predicate a config names (plugins loaded first). `config` is
    the parsed JSON that `write_interestingness_test` wrote, hence `Any` values."""
    from rgpu_fuzz.pipelines.registry import Registry
    from triage.reduce import signature_predicate

    registry = Registry()
    for plugin in config["plugins"]:
        registry.load_plugin(plugin)
    policy = _policy_from_json(dict(config["policy"]))
    interesting = signature_predicate(Signature.parse(config["signature"]), config["pipelines"],
                                      policy, registry=registry)
    return casefile.load(config["case"]), interesting


def _candidate_holds(case: Case, interesting: Callable[[Case], bool], kernel_path: Path) -> bool:
    try:
        text = kernel_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if not text.strip():
        return False
    return bool(interesting(replace(case, kernel=text)))


def check_kernel(config_path: str | Path, kernel_path: str | Path) -> bool:
    """The interestingness test itself: the case from `config_path` with its kernel replaced
    by the text of `kernel_path` satisfies `signature_predicate`. Any failure to read,
    decode or run the candidate means "not interesting" — C-Vise produces broken text by
    design, and a harness error here must not look like the bug."""
    config = json.loads(Path(config_path).read_text(encoding="utf-8"))
    case, interesting = _load_predicate(config)
    return _candidate_holds(case, interesting, Path(kernel_path))


CLIENT_SCRIPT = """\
#!{python} -S
# C-Vise interestingness test written by triage.cvise (server mode): asks the
# predicate served on {socket} about ./{kernel}; exit 0 iff it still shows the finding.
import os, socket, sys
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect({socket!r})
    s.sendall(os.path.abspath({kernel!r}).encode() + b"\\n")
    sys.exit(0 if s.recv(1) == b"1" else 1)
except OSError:
    sys.exit(1)
"""


@contextmanager
def _serve_predicate(config_path: Path, socket_path: Path,
                     errors: list[str]) -> Iterator[Callable[[Path], bool]]:
    """Serve `check_kernel` for one config on a Unix socket, one request at a time (the
    pipelines are built once, here); yields the same check for in-process use. A candidate
    on which the harness raises answers "not interesting" (as the standalone script's
    traceback exit would) and its error line is appended to `errors`, to be reported."""
    case, interesting = _load_predicate(json.loads(config_path.read_text(encoding="utf-8")))
    lock = threading.Lock()

    def check(path: Path) -> bool:
        with lock:
            try:
                return _candidate_holds(case, interesting, path)
            except Exception as e:  # a harness bug: recorded and reported, never the bug
                errors.append(f"{type(e).__name__}: {e}".splitlines()[0])
                return False

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            path = Path(self.rfile.readline().decode(errors="replace").strip())
            answer = b"1" if check(path) else b"0"
            try:
                self.wfile.write(answer)
            except BrokenPipeError:       # C-Vise timed the client out or was stopped
                pass

    server = socketserver.ThreadingUnixStreamServer(str(socket_path), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield check
    finally:
        server.shutdown()
        server.server_close()


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


def reduce_with_cvise(case: Case, signature: Signature, pipelines: Sequence[str], policy: Policy, *,
                      budget_s: float, plugins: Sequence[str | Path] = (),
                      test_timeout_s: float = 30.0, not_c: bool = True, server: bool = True,
                      keep_dir: Path | None = None) -> CviseResult:
    """Reduce `case.kernel` with C-Vise while the finding `signature` holds.

    Runs `cvise --n 1 --timeout T --tidy [--not-c] interesting.py kernel.rs` for at most
    `budget_s` seconds of wall clock, then stops it; C-Vise writes each improvement back to
    `kernel.rs` as it goes, so what is there when it stops is its best so far. `--not-c`
    (default) leaves out the clang_delta passes, which parse C/C++ and only fail on Rust.
    `server` picks the thin-client script (see module docstring). `keep_dir` keeps the
    work files (script, config, `cvise.log`) for inspection."""
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
        scratch = work / "tmp"            # C-Vise's own cvise-* dirs go here, not /tmp
        scratch.mkdir(exist_ok=True)
        script = write_interestingness_test(work, case, signature, pipelines, policy,
                                            plugins=plugins)
        kernel_file = work / KERNEL_FILE
        kernel_file.write_text(case.kernel, encoding="utf-8")
        errors: list[str] = []
        with ExitStack() as stack:
            if server:
                # A short socket path: AF_UNIX paths are limited to about 100 bytes.
                sock_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="rc-")))
                sock = sock_dir / "s"
                check = stack.enter_context(_serve_predicate(work / CONFIG_FILE, sock,
                                                             errors))
                script = work / "client.py"
                script.write_text(CLIENT_SCRIPT.format(python=sys.executable, socket=str(sock),
                                                       kernel=KERNEL_FILE), encoding="utf-8")
                script.chmod(0o755)
            else:
                config = work / CONFIG_FILE

                def check(path: Path) -> bool:
                    return check_kernel(config, path)
            returncode, out_of_time, seconds = _run_cvise(exe, script, kernel_file, work,
                                                          scratch, budget_s=budget_s,
                                                          test_timeout_s=test_timeout_s,
                                                          not_c=not_c)
            reduced = kernel_file.read_text(encoding="utf-8", errors="replace")
            interesting = check(kernel_file)
        detail = ""
        if returncode not in (0, None):
            tail = (work / "cvise.log").read_text(errors="replace").strip().splitlines()
            detail = f"cvise exited {returncode}: {tail[-1] if tail else ''}"
        if errors:
            detail = detail or f"{len(errors)} candidates raised in the harness: {errors[0]}"
        if not interesting:                # never report a kernel that lost the bug
            detail = detail or "C-Vise's last kernel no longer shows the finding"
            reduced = case.kernel
    lines1, tokens1 = kernel_size(reduced)
    return CviseResult(available=True, kernel=reduced, lines_before=lines0,
                       tokens_before=tokens0, lines_after=lines1, tokens_after=tokens1,
                       seconds=seconds, out_of_time=out_of_time, interesting=interesting,
                       returncode=returncode, harness_errors=len(errors), detail=detail)


def _run_cvise(exe: str, script: Path, kernel_file: Path, work: Path, scratch: Path, *,
               budget_s: float, test_timeout_s: float,
               not_c: bool) -> tuple[int | None, bool, float]:
    """Run C-Vise in its own process group; (returncode or None if stopped, out_of_time,
    seconds)."""
    cmd = [exe, "--n", "1", "--timeout", str(max(1, round(test_timeout_s))), "--tidy"]
    if not_c:
        cmd.append("--not-c")
    cmd += [str(script), kernel_file.name]       # C-Vise wants a bare name in its cwd
    env = dict(os.environ, TMPDIR=str(scratch))
    t0 = time.monotonic()
    with open(work / "cvise.log", "wb") as log:
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            return proc.wait(timeout=budget_s), False, time.monotonic() - t0
        except subprocess.TimeoutExpired:
            seconds = time.monotonic() - t0
            _stop(proc)
            return None, True, seconds


# --- Side-by-side comparison (used by `rgpu-fuzz bench reduce`) ------------------------------

SEEDED_PIPELINE = "llvm-cpu-xor2or"


@dataclass(frozen=True, slots=True)
class SeededFinding:
    """A generated case on which the seeded-bug pipeline computes wrong code."""

    seed: int
    case: Case
    signature: Signature


def find_wrong_code(count: int, pipelines: Sequence[str], policy: Policy, *,
                    plugins: Sequence[str | Path] = (), target: str = SEEDED_PIPELINE,
                    start_seed: int = 0, max_seeds: int = 5000) -> list[SeededFinding]:
    """The first `count` generated seeds (default profile) whose verdict has a wrong-code
    finding on `target`: the findings a reducer comparison runs on."""
    from generators import SeededChoices, generate, load_profile
    from oracles import FindingKind
    from rgpu_fuzz.lang.parser import parse
    from rgpu_fuzz.lang.source import DiagnosticError
    from rgpu_fuzz.pipelines.registry import Registry
    from triage.rerun import rerun

    registry = Registry()
    for plugin in plugins:
        registry.load_plugin(plugin)
    runners = registry.create_all(pipelines)
    profile = load_profile("default")
    found: list[SeededFinding] = []
    for seed in range(start_seed, start_seed + max_seeds):
        case = generate(SeededChoices(seed), profile, seed=seed)
        try:
            parse(case.kernel, f"<seed {seed}>")  # a kernel that does not parse is skipped
        except DiagnosticError:
            continue
        verdict = rerun(case, runners, policy).verdict
        sig = next((f.signature for f in verdict.findings
                    if f.kind is FindingKind.WRONG_CODE and target in f.pipelines), None)
        if sig is not None:
            found.append(SeededFinding(seed, case, sig))
            if len(found) == count:
                break
    return found


def compare_reducers(finding: SeededFinding, pipelines: Sequence[str], policy: Policy, *,
                     budget_s: float, plugins: Sequence[str | Path] = (),
                     server: bool = True) -> dict[str, Any]:
    """Reduce one finding with `reduce_case` and with C-Vise under the same budget and the
    same predicate; kernel-only sizes for both (C-Vise never touches launch or args)."""
    from rgpu_fuzz.pipelines.registry import Registry
    from triage.reduce import reduce_case, signature_predicate

    registry = Registry()
    for plugin in plugins:
        registry.load_plugin(plugin)
    interesting = signature_predicate(finding.signature, pipelines, policy, registry=registry)
    ours = reduce_case(finding.case, interesting, budget_s=budget_s, jobs=1)
    theirs = reduce_with_cvise(finding.case, finding.signature, pipelines, policy,
                               budget_s=budget_s, plugins=plugins, server=server)
    lines0, tokens0 = kernel_size(finding.case.kernel)
    ours_lines, ours_tokens = kernel_size(ours.case.kernel)
    return {
        "seed": finding.seed, "signature": str(finding.signature),
        "original": {"lines": lines0, "tokens": tokens0},
        "ours": {"lines": ours_lines, "tokens": ours_tokens, "seconds": ours.seconds,
                 "out_of_time": ours.out_of_time, "tried": ours.tried,
                 "interesting_at_start": ours.interesting_at_start,
                 "kernel": ours.case.kernel},
        "cvise": {"available": theirs.available, "lines": theirs.lines_after,
                  "tokens": theirs.tokens_after, "seconds": theirs.seconds,
                  "out_of_time": theirs.out_of_time, "interesting": theirs.interesting,
                  "harness_errors": theirs.harness_errors, "detail": theirs.detail,
                  "kernel": theirs.kernel},
    }
