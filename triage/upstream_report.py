"""An LLVM issue from a fuzzer finding (`rgpu-fuzz report <id> --upstream DIR`): the LLVM IR
our lowering and llvmlite's optimiser hand to code generation for the divergent pipeline,
reduced by `llvm-reduce` with a FileCheck predicate, as an upstream test with RUN and CHECK
lines, its version matrix, and a Markdown report shaped like an llvm/llvm-project issue.

The predicate is one RUN line of a reproducer that pins the bug (`docs/llvm-bugs/*.ll`, named
by the case's `[expect] issue` or by `--check`): a reduction candidate is interesting when that
RUN line, run with Debian's llc-22 on the candidate, passes against the reproducer's CHECK
lines. A wrong-code finding without such a reproducer cannot be reduced this way (its symptom
is a value on the simulator, not text in llc's output): write the CHECK lines first.

Files in DIR: `<case>.opt.ll` (the IR before reduction), `interesting.sh` (llvm-reduce's
test, runnable by hand), `<case>.reduced.ll` (the upstream test), `issue.md`.
"""

from __future__ import annotations

import re
import shutil
import sys
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path

from rgpu_fuzz.process import run_bounded
from triage.lane_padding import MAX_WIDTH, add_padding, script_loop, settle
from triage.upstream import (
    MATRIX_BEGIN,
    MATRIX_END,
    Matrix,
    Repro,
    RunLine,
    debian_variant,
    run_line,
    run_lines,
    version_matrix,
    write_matrix,
)

LLVM_REDUCE = Path("/usr/lib/llvm-22/bin/llvm-reduce")
LLC_22 = Path("/usr/lib/llvm-22/bin/llc")


class UpstreamError(Exception):
    """Why no upstream report could be made (one line for the user)."""


@dataclass(frozen=True)
class UpstreamReport:
    case_id: str
    pipeline: str
    reduced: Path
    issue: Path
    matrix: Matrix
    lines_before: int
    lines_after: int


def check_prefixes(command: str) -> tuple[str, ...]:
    """The FileCheck prefixes a RUN line uses (`CHECK` when it names none)."""
    m = re.search(r"--check-prefix(?:es)?[= ](\S+)", command)
    return tuple(m.group(1).split(",")) if m else ("CHECK",)


def check_lines(text: str, prefixes: tuple[str, ...]) -> list[str]:
    """The directive lines of `prefixes` (`; P:`, `; P-NEXT:`, ...), in file order."""
    alt = "|".join(re.escape(p) for p in prefixes)
    pat = re.compile(rf"^\s*;\s*({alt})(-[A-Z]+)?:")
    return [ln for ln in text.splitlines() if pat.match(ln)]


def reduce_run_index(text: str) -> int:
    """Which RUN line guides a reduction: the reproducer's `; Reduce: RUN N` line, else 1.
    A RUN line whose CHECK lines only say what is absent (CHECK-NOT) matches trivial code,
    so such a reproducer names a positive one."""
    m = re.search(r"^;\s*Reduce:\s*RUN\s+(\d+)", text, re.M)
    return int(m.group(1)) if m else 1


def reduce_with_padding(text: str) -> bool:
    """Whether the reproducer's `; Reduce:` line asks for lane padding (`pad`): a bug that
    shows only when some count (SGPR spill lanes, registers) crosses a boundary."""
    m = re.search(r"^;\s*Reduce:(.*)$", text, re.M)
    return m is not None and re.search(r"\bpad\b", m.group(1)) is not None


def retarget(run: RunLine, cpu: str) -> RunLine:
    """`run` with its `-mcpu=` naming `cpu` (a RUN line without one gains none)."""
    return replace(run, command=re.sub(r"-mcpu=\S+", f"-mcpu={cpu}", run.command))


def interestingness_script(reproducer: Path, run: RunLine, allow_undef: bool,
                           pad_hint: Path | None = None, spread: int = 8) -> str:
    """llvm-reduce's test: `run`, with the candidate ("$1") as input and `reproducer`'s CHECK
    lines, Debian llc-22 first on PATH; exit 0 when it passes. Unless the original IR had
    them (`allow_undef`), a candidate with `undef` or `poison` is not interesting: llvm-reduce
    puts them in place of operands, and wrong code from an undefined value is no bug.
    With `pad_hint` (a file), the candidate is tried at several padding widths
    (`triage.lane_padding`) within `spread` of the last one that worked."""
    command = re.sub(r"(FileCheck\b[^|]*?)%s",
                     lambda m: m.group(1) + _shell_quote(str(reproducer.resolve())),
                     run.command)
    head = ("#!/bin/bash\n"
            f"# llvm-reduce's interestingness test: RUN {run.index} of {reproducer.name}\n"
            "set -o pipefail\n"
            + ("" if allow_undef else
               "grep -qwE 'undef|poison' \"$1\" && exit 1\n")
            + f"export PATH={_shell_quote(str(LLC_22.parent))}:\"$PATH\"\n")
    if pad_hint is not None:
        padded = command.replace("%s", '"$t"')
        return head + script_loop(f"( {padded} )", _shell_quote(str(pad_hint.resolve())),
                                  spread)
    plain = command.replace("%s", '"$1"')
    return head + f"{plain} >/dev/null 2>&1\n"


def _shell_quote(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def reduce_ir(source: Path, script: Path, out: Path, timeout: float,
              keep_partial: bool = False) -> bool:
    """`llvm-reduce --test=script source -o out`; raises UpstreamError when it fails.
    llvm-reduce writes each new best candidate to `out` as it goes: with `keep_partial`, a
    run stopped by `timeout` leaves that one (False returned; True when it finished)."""
    if not LLVM_REDUCE.exists():
        raise UpstreamError(f"{LLVM_REDUCE} not found (apt-get install llvm-22)")
    out.unlink(missing_ok=True)
    proc = run_bounded([str(LLVM_REDUCE), f"--test={script}", "-j", "2", str(source),
                        "-o", str(out)], timeout=timeout, cwd=out.parent)
    if keep_partial and proc.ended_by == "timeout" and out.exists():
        return False
    if proc.returncode != 0 or not out.exists():
        last = (proc.stderr or proc.stdout or proc.ended_by).strip().splitlines()
        raise UpstreamError(f"llvm-reduce failed ({proc.ended_by}): "
                            f"{last[-1] if last else ''}")
    return True


PAD_SPREADS = (8, MAX_WIDTH)
"""The padded rounds' width searches: near the last good width while the IR is large (each
candidate is slow to compile), then every width on the much smaller IR."""


def _padded_rounds(stem: Path, reduced: Path, reproducer: Path, run: RunLine,
                   allow_undef: bool, timeout: float) -> Path:
    """The padded llvm-reduce rounds (`PAD_SPREADS`): `reduced` with lane padding, reduced
    again with the padding-width search in the test, then settled at the first width that
    passes."""
    out = stem.with_name(stem.name + ".padded.ll")
    out.write_text(add_padding(reduced.read_text()))
    hint = stem.with_name("padding-width")
    for n, spread in enumerate(PAD_SPREADS, start=2):
        script = stem.with_name(f"interesting-round{n}.sh")
        script.write_text(interestingness_script(reproducer, run, allow_undef,
                                                 pad_hint=hint, spread=spread))
        script.chmod(0o755)
        source, out = out, stem.with_name(f"{stem.name}.llvm-reduce-round{n}.ll")
        if not reduce_ir(source, script, out, timeout, keep_partial=True):
            print(f"rgpu-fuzz report: note: llvm-reduce round {n} stopped after "
                  f"{timeout:.0f} s; its best candidate so far is kept", file=sys.stderr)
    probe = stem.with_name(stem.name + ".probe.ll")
    llc22 = debian_variant(22)

    def passes(ir: str) -> bool:
        probe.write_text(ir)
        return llc22 is not None and run_line(
            run, probe, llc22, check_file=reproducer).result is Repro.YES

    settled = settle(out.read_text(), passes)
    if settled is None:
        raise UpstreamError(f"{out}: no padding width makes RUN {run.index} pass")
    out.write_text(settled)
    probe.unlink(missing_ok=True)
    return out


def tidy_ir(ir: str) -> list[str]:
    """llvm-reduce's output without what carries no meaning for llc: the ModuleID,
    source_filename, `target datalayout` (llc takes the target's own) and `; Function Attrs:`
    lines, blank and comment lines inside a function, `; preds =` comments."""
    out: list[str] = []
    in_body = False
    for ln in ir.splitlines():
        if ln.startswith(("; ModuleID", "source_filename", "target datalayout",
                          "; Function Attrs:")):
            continue
        in_body = (in_body or ln.startswith("define ")) and not ln.startswith("}")
        if in_body and (not ln.strip() or ln.lstrip().startswith(";")):
            continue
        out.append(re.sub(r"\s+; preds = .*$", "", ln))
    while out and not out[-1].strip():
        out.pop()
    return _drop_intrinsic_attributes(out)


def _drop_intrinsic_attributes(lines: list[str]) -> list[str]:
    """Without the attribute groups only `llvm.*` declarations use: an intrinsic's
    attributes come from LLVM's intrinsic table whatever the declaration says (LangRef,
    "Intrinsic Functions")."""
    groups = {m.group(1) for ln in lines for m in re.finditer(r" #(\d+)\b", ln)
              if not ln.startswith("attributes ")}
    own = {g for g in groups
           if all(ln.startswith("declare ") and "@llvm." in ln
                  for ln in lines if re.search(rf" #{g}\b", ln)
                  and not ln.startswith("attributes "))}
    if not own:
        return lines
    out = [re.sub(r" #(\d+)\b", lambda m: "" if m.group(1) in own else m.group(0), ln)
           if ln.startswith("declare ") else ln
           for ln in lines if not re.match(rf"attributes #({'|'.join(own)}) ", ln)]
    while out and not out[-1].strip():
        out.pop()
    return out


def upstream_test(reduced_ir: str, reproducer: Path, run: RunLine, origin: str,
                  culprit: str = "", rounds: int = 1) -> str:
    """The reduced IR as an upstream test: the RUN line, a header (the matrix, where it
    came from, the culprit pass when known), the CHECK lines."""
    repro_text = reproducer.read_text()
    prefixes = check_prefixes(run.command)
    body = tidy_ir(reduced_ir)
    head = [f"; RUN: {run.command}", "; REQUIRES: amdgpu-registered-target", ";",
            MATRIX_BEGIN, MATRIX_END, ";",
            f"; {origin}",
            *("; " + ln for ln in textwrap.wrap(culprit[:1].upper() + culprit[1:], 110,
                                                      break_on_hyphens=False)),
            "; Reduced by llvm-reduce-22"
            + (f" ({rounds} rounds, all but the first with lane padding)"
               if rounds > 1 else "")
            + f"; predicate: RUN {run.index} of {reproducer.name}"
            " (Debian llc-22) with its CHECK lines, copied below."]
    return "\n".join([*head, *body, "", *check_lines(repro_text, prefixes)]) + "\n"


def header_prose(text: str) -> list[str]:
    """The reproducer's explanation: its leading comment lines, without RUN/REQUIRES lines
    and the matrix block."""
    out: list[str] = []
    in_matrix = False
    for ln in text.splitlines():
        if not ln.startswith(";"):
            break
        if ln.startswith(MATRIX_BEGIN):
            in_matrix = True
        if in_matrix:
            in_matrix = not ln.startswith(MATRIX_END)
            continue
        if re.match(r";\s*(RUN|REQUIRES):", ln):
            continue
        out.append(ln[1:].removeprefix(" "))
    while out and not out[0].strip():
        out.pop(0)
    return out


def matrix_table(matrix: Matrix) -> list[str]:
    """The matrix as a Markdown table: a row per RUN line, a column per LLVM."""
    names = [v.name for v in matrix.variants]
    rows = ["| RUN | " + " | ".join(f"{v.name} ({v.version})" for v in matrix.variants) + " |",
            "|---" * (len(names) + 1) + "|"]
    for run in sorted({c.run for c in matrix.cells}, key=lambda r: r.index):
        rows.append(f"| {run.index} | " + " | ".join(
            str(matrix.result(run.index, n)) for n in names) + " |")
    return rows


def llc_excerpt(test: Path, run: RunLine, limit: int = 60) -> list[str]:
    """What llc-22 prints for the reduced test with the RUN line's llc arguments (the part
    before FileCheck): the first function's label through its end, at most `limit` lines
    (the whole output's first lines when it has no function, e.g. a crash)."""
    stage = run.command.split("|")[0].replace("not --crash", "").strip()
    command = stage.replace("%s", _shell_quote(str(test.resolve())))
    proc = run_bounded(["bash", "-c", command + " 2>&1"], timeout=120,
                       env={"PATH": f"{LLC_22.parent}:/usr/bin:/bin"})
    lines = proc.stdout.splitlines()
    start = next((i for i, ln in enumerate(lines) if re.match(r"[A-Za-z_][\w.$]*:", ln)),
                 None)
    if start is None:
        return lines[:limit]
    out: list[str] = []
    for ln in lines[start:]:
        if ln.startswith(".Lfunc_end") or ln.lstrip().startswith(".section"):
            break
        if ln.strip() and not ln.lstrip().startswith(("; ", ".p2align", ".set")):
            out.append(ln)
    return out[:limit]


def _title(prose: list[str]) -> str:
    """The issue's title: the reproducer's `Title:` line, else the first sentence of its
    explanation."""
    named = next((ln.split(":", 1)[1].strip() for ln in prose if ln.startswith("Title:")),
                 None)
    if named:
        return named.removeprefix("[AMDGPU]").strip()
    para: list[str] = []
    for ln in prose:
        if not ln.strip():
            break
        para.append(ln.strip())
    first = re.split(r"(?<=[.:])\s", " ".join(para), maxsplit=1)[0].rstrip(".:")
    first = first.removeprefix("AMDGPU ").strip() or "wrong code"
    return first if len(first) <= 140 else first[:137] + "..."


def render_issue(case_id: str, pipeline: str, kernel: str, reproducer: Path, test: Path,
                 run: RunLine, matrix: Matrix, observed: tuple[str, ...] = (),
                 facts: str = "") -> str:
    """The Markdown issue: what, reproducer, command, output, versions, evidence (culprit
    pass, other pipelines, duplicates: `facts`, Markdown), origin."""
    prose = header_prose(reproducer.read_text())
    title = _title(prose)
    cmd = run.command.replace("%s", test.name)
    out = [f"# [AMDGPU] {title}", "",
           "## Reproducer", "", f"`{test.name}` (reduced by llvm-reduce-22 from a "
           "differential-fuzzing finding; RUN and CHECK lines as in LLVM's tests):", "",
           "```llvm", test.read_text().rstrip(), "```", "",
           f"`{cmd}` passes while the bug is there (`lit {test.name}` runs it).", "",
           "## Output (Debian llc-22)", "", "```", *llc_excerpt(test, run), "```", "",
           "## Which LLVMs", "",
           "yes: the RUN line passes, i.e. the CHECK lines that pin the wrong code match.", "",
           *matrix_table(matrix), "",
           "## Analysis", "", f"From the hand-reduced reproducer `{reproducer.name}`:", "",
           "```", *prose, "```", "",
           *([facts.rstrip("\n"), ""] if facts else []),
           "## Origin", "",
           f"rgpu-fuzz case `{case_id}`, pipeline `{pipeline}` (our Rust-subset kernel, "
           "lowered to LLVM IR, optimised by llvmlite's LLVM, code generation by LLVM, run "
           "on our AMDGPU ISA simulator; it disagrees with the reference interpreter and "
           "with real rustc on the host):", "", "```rust", kernel.strip(), "```", ""]
    if observed:
        out += ["What it computed, rerun now:", "", *(f"- {o}" for o in observed), ""]
    return "\n".join(out)


def _first_error(detail: str) -> str:
    """FileCheck's `error:` line from a failed RUN line's output (else its last line)."""
    lines = detail.splitlines()
    return next((ln.strip() for ln in lines if "error:" in ln), lines[-1] if lines else "")


def make_upstream_report(case_id: str, pipeline: str, kernel: str, ir_opt: str,
                         reproducer: Path, run_index: int | None, out_dir: Path,
                         reduce_timeout: float = 900,
                         observed: tuple[str, ...] = (), culprit: str = "",
                         facts: str = "", cpu: str | None = None) -> UpstreamReport:
    """Reduce `ir_opt` against RUN `run_index` (default: `reduce_run_index`) of
    `reproducer` and write the report files (`culprit`: the culprit line for the test's
    header; `facts`: the evidence section of the issue). When the RUN line as written does
    not match and names another processor than `cpu` (the finding's), it is retargeted.
    A reproducer whose `; Reduce:` line says `pad` gets two more llvm-reduce rounds on the
    first one's output with lane padding (`triage.lane_padding`)."""
    text = reproducer.read_text()
    run_index = reduce_run_index(text) if run_index is None else run_index
    runs = [r for r in run_lines(text) if r.index == run_index]
    if not runs:
        raise UpstreamError(f"{reproducer}: no RUN {run_index}")
    run = runs[0]
    llc22 = debian_variant(22)
    if llc22 is None or shutil.which("bash") is None:
        raise UpstreamError("Debian llc-22 (/usr/lib/llvm-22/bin/llc) and bash are needed")
    out_dir.mkdir(parents=True, exist_ok=True)
    source = out_dir / f"{case_id}.opt.ll"
    source.write_text(ir_opt)
    before = run_line(run, source, llc22, check_file=reproducer)
    if before.result is not Repro.YES and cpu and f"-mcpu={cpu}" not in run.command:
        moved = retarget(run, cpu)
        if run_line(moved, source, llc22, check_file=reproducer).result is Repro.YES:
            run, before = moved, run_line(moved, source, llc22, check_file=reproducer)
    if before.result is not Repro.YES:
        raise UpstreamError(
            f"RUN {run.index} of {reproducer.name} does not match case {case_id}'s IR with "
            f"llc-22, so it cannot guide the reduction: {_first_error(before.detail)}")
    script = out_dir / "interesting.sh"
    allow_undef = re.search(r"\b(undef|poison)\b", ir_opt) is not None
    script.write_text(interestingness_script(reproducer, run, allow_undef))
    script.chmod(0o755)
    reduced_ir = out_dir / f"{case_id}.llvm-reduce.ll"
    reduce_ir(source, script, reduced_ir, reduce_timeout)
    rounds = 1
    if reduce_with_padding(text):
        reduced_ir = _padded_rounds(out_dir / case_id, reduced_ir, reproducer, run,
                                    allow_undef, reduce_timeout)
        rounds += len(PAD_SPREADS)
    test = out_dir / f"{case_id}.reduced.ll"
    test.write_text(upstream_test(reduced_ir.read_text(), reproducer, run,
                                  f"From rgpu-fuzz case {case_id} ({pipeline}).", culprit,
                                  rounds))
    test_run = run_lines(test.read_text())[0]
    if run_line(test_run, test, llc22).result is not Repro.YES:
        raise UpstreamError(f"{test}: the reduced test does not pass its own RUN line")
    matrix = version_matrix(test)
    write_matrix(test, matrix)
    issue = out_dir / "issue.md"
    issue.write_text(render_issue(case_id, pipeline, kernel, reproducer, test, test_run,
                                  matrix, observed, facts))
    return UpstreamReport(case_id, pipeline, test, issue, matrix,
                          len(ir_opt.splitlines()), len(reduced_ir.read_text().splitlines()))
