"""Recompute `tests/semantics/expected/<name>.json` with the real rustc.

    python tests/semantics/regen_expected.py [NAME ...]

Each case is compiled and run at -O0 and -O2; the two must agree (a difference means
undefined behaviour in the host program or a rustc bug, and nothing is written for that
case). The stored values are the -O2 ones, with the rustc version and the case id, so a
stale file (the case changed since) is detected by the tests.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from rgpu_fuzz.casefile import load  # noqa: E402
from rgpu_fuzz.pipelines.rustc_program import (  # noqa: E402
    RustcResult,
    compile_and_run,
    rustc_version,
)

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
EXPECTED = HERE / "expected"
OPT_LEVELS = (0, 2)


def expected_doc(result: RustcResult) -> dict[str, object]:
    """The part of an expected file that a pipeline's result is compared with."""
    if result.outputs is not None:
        return {"outputs": result.outputs}
    if result.trap is not None:
        return {"trap": str(result.trap), "trap_message": result.trap_message}
    raise RuntimeError(result.compile_error or result.run_error or "no result")


def dump_expected(doc: dict[str, object]) -> str:
    """JSON with one line per output buffer: diffs stay readable, files stay small."""
    lines = [f" {json.dumps(k)}: {json.dumps(v)}" for k, v in doc.items() if k != "outputs"]
    outputs = doc.get("outputs")
    if isinstance(outputs, dict):
        body = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in outputs.items())
        lines.append(f' "outputs": {{\n{body}\n }}')
    return "{\n" + ",\n".join(lines) + "\n}\n"


def run_case(path: Path, workroot: Path) -> tuple[str, dict[str, object] | str, list[float]]:
    """(name, expected document or an error line, [compile s, run s] at -O2)."""
    case = load(path)
    docs, timing = [], [0.0, 0.0]
    for opt in OPT_LEVELS:
        r = compile_and_run(case, opt_level=opt, workdir=workroot / f"{path.stem}-O{opt}")
        if r.compile_error or r.run_error:
            return path.stem, f"-O{opt}: {r.compile_error or r.run_error}\n{r.log[-3000:]}", timing
        docs.append(expected_doc(r))
        if opt == 2:
            timing = [r.compile_seconds, r.run_seconds]
    if any(d != docs[0] for d in docs):
        return path.stem, "-O0 and -O2 disagree", timing
    return path.stem, docs[0], timing


def main(argv: list[str]) -> int:
    paths = sorted(CASES.glob("*.toml"))
    if argv:
        paths = [p for p in paths if p.stem in argv]
    version = rustc_version()
    EXPECTED.mkdir(exist_ok=True)
    failed = 0
    times: list[list[float]] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="rgpu-semantics-") as tmp, ThreadPoolExecutor(2) as ex:
        for name, doc, timing in ex.map(lambda p: run_case(p, Path(tmp)), paths):
            if isinstance(doc, str):
                failed += 1
                print(f"FAIL {name}: {doc}", file=sys.stderr)
                continue
            times.append(timing)
            case_id = load(CASES / f"{name}.toml").id
            full = {"case": name, "case_id": case_id, "rustc": version,
                    "opt_level": OPT_LEVELS[-1], **doc}
            (EXPECTED / f"{name}.json").write_text(dump_expected(full), encoding="utf-8")
    if times:
        comp = sorted(t[0] for t in times)
        run = sorted(t[1] for t in times)
        print(f"{len(times)} cases in {time.perf_counter() - started:.1f}s; -O2 compile "
              f"median {comp[len(comp) // 2]:.2f}s max {comp[-1]:.2f}s; run median "
              f"{run[len(run) // 2] * 1000:.0f}ms max {run[-1] * 1000:.0f}ms ({version})")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
