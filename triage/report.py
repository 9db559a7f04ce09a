"""A Markdown report of one case, ready to paste into an issue tracker (docs/design.md §2 "File").

It says what diverged, shows the first differing elements with their exact bit patterns,
and gives everything another engineer needs to see it fail: the kernel, the inputs, the
launch, the commands to reproduce, the versions involved and the case file itself.
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence

from oracles import Verdict
from rgpu_fuzz import __version__, casefile
from rgpu_fuzz.model.case import BufferArg, Case, Fill, Random, ScalarArg, Values
from rgpu_fuzz.model.outcome import Outcome, detail
from rgpu_fuzz.model.scalars import Scalar, from_bits

MAX_VALUES_SHOWN = 32


def collect_versions() -> dict[str, str]:
    """The versions a report records: rgpu-fuzz, Python, numpy, llvmlite and its LLVM, and
    rustc when it is on PATH."""
    import numpy

    versions = {"rgpu-fuzz": __version__, "python": platform.python_version(),
                "numpy": numpy.__version__}
    try:
        import llvmlite
        import llvmlite.binding as llvm

        versions["llvmlite"] = llvmlite.__version__
        versions["llvm"] = ".".join(str(v) for v in llvm.llvm_version_info)
    except Exception:  # an unusable llvmlite is worth a line in the report, not a crash
        versions.setdefault("llvmlite", "not available")
    rustc = shutil.which("rustc")
    if rustc:
        try:
            out = subprocess.run([rustc, "--version"], capture_output=True, text=True,
                                 timeout=20, check=False)
            versions["rustc"] = out.stdout.strip() or out.stderr.strip()
        except (OSError, subprocess.SubprocessError):
            versions["rustc"] = "not runnable"
    else:
        versions["rustc"] = "not on PATH"
    versions["platform"] = f"{platform.system()} {platform.machine()}"
    return versions


def _fence(text: str, lang: str = "") -> str:
    """A fenced block that the text cannot close early."""
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    ticks = "`" * (longest + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ") or "–"


def _hex_width(ty: Scalar) -> int:
    return 1 if ty is Scalar.BOOL else (ty.bits + 3) // 4


def _value_text(bits: int, ty: Scalar) -> str:
    v = from_bits([bits], ty)[0]
    if ty is Scalar.BOOL:
        return "true" if v else "false"
    return repr(float(v)) if ty.is_float else str(int(v))


def _input_line(arg: BufferArg | ScalarArg) -> str:
    match arg:
        case ScalarArg(name=n, ty=t, bits=b):
            return f"- `{n}: {t}` = {_value_text(b, t)} (`0x{b:0{_hex_width(t)}x}`)"
        case BufferArg(name=n, elem=e, len=ln, init=Fill(bits=b)):
            w = _hex_width(e)
            return f"- `{n}: [{e}; {ln}]` filled with {_value_text(b, e)} (`0x{b:0{w}x}`)"
        case BufferArg(name=n, elem=e, len=ln, init=Random(seed=s, dist=d)):
            return f"- `{n}: [{e}; {ln}]` random, seed {s}, dist `{d}` (see the case file)"
        case BufferArg(name=n, elem=e, len=ln, init=Values(bits=bs)):
            shown = ", ".join(_value_text(b, e) for b in bs[:MAX_VALUES_SHOWN])
            more = f", … ({ln - MAX_VALUES_SHOWN} more)" if ln > MAX_VALUES_SHOWN else ""
            return f"- `{n}: [{e}; {ln}]` = [{shown}{more}]"
    raise AssertionError(arg)


def _title(case: Case, verdict: Verdict, outcomes: Mapping[str, Outcome]) -> str:
    if verdict.agree:
        return f"# agree: {', '.join(outcomes)} (case {case.id})"
    kinds = ", ".join(dict.fromkeys(str(f.kind) for f in verdict.findings))
    pipes = ", ".join(dict.fromkeys(p for f in verdict.findings for p in f.pipelines))
    return f"# {kinds}: {pipes} (case {case.id})"


def _outcome_table(outcomes: Mapping[str, Outcome]) -> list[str]:
    rows = ["| pipeline | status | detail | seconds | artefacts |", "|---|---|---|---|---|"]
    for label, o in outcomes.items():
        arts = ", ".join(f"{k} `{v[:16]}`" for k, v in sorted(o.stats.artefacts.items()))
        secs = o.stats.seconds.get("total", o.stats.total_seconds)
        rows.append(f"| `{_cell(label)}` | {o.status} | {_cell(detail(o))} | {secs:.4f} | "
                    f"{_cell(arts) if arts else '–'} |")
    return rows


def _findings(case: Case, verdict: Verdict) -> list[str]:
    widths = {a.name: _hex_width(a.elem) for a in case.args if isinstance(a, BufferArg)}
    out: list[str] = []
    for f in verdict.findings:
        known = f" (known: {f.known_issue})" if f.known_issue else ""
        out += [f"### {f.kind}: {', '.join(f.pipelines)}{known}", "",
                f"- signature: `{f.signature}`"]
        if f.detail:
            out.append(f"- {f.detail}")
        if f.diffs:
            expected, actual = f.pipelines[0], f.pipelines[-1]
            out += ["", f"First differing elements ({f.differing_elements} in all):", "",
                    f"| buffer | index | {_cell(expected)} | bits | {_cell(actual)} | bits |",
                    "|---|---:|---:|---|---:|---|"]
            for d in f.diffs:
                w = widths.get(d.buffer, 8)
                out.append(f"| `{d.buffer}` | {d.index} | {_cell(d.expected)} | "
                           f"`0x{d.expected_bits:0{w}x}` | {_cell(d.actual)} | "
                           f"`0x{d.actual_bits:0{w}x}` |")
        out.append("")
    return out


def render_report(case: Case, outcomes: Mapping[str, Outcome], verdict: Verdict, *,
                  versions: Mapping[str, str], sections: Sequence[str] = (),
                  reproduce_options: str = "", run_options: str = "") -> str:
    """The Markdown report of one case and what each pipeline made of it. `sections` are
    Markdown sections that pipelines add about their own findings (a pipeline method
    `report_section(case, outcomes, verdict, pipelines) -> str | None`, e.g. where to look
    and the IR of `rustc-amdgpu`), placed after the findings. The options (`--store`,
    `--plugin`) make the printed `reproduce` and `run` commands work when pasted."""
    g, b = case.launch.grid, case.launch.block
    pipelines = ",".join(outcomes) or ",".join(case.pipelines) or "ref"
    lines = [_title(case, verdict, outcomes), ""]
    lines += ["## Kernel", "", f"Entry point `{case.entry}`.", "", _fence(case.kernel, "rust"),
              "", "## Inputs", ""]
    lines += [_input_line(a) for a in case.args] or ["(no arguments)"]
    lines += ["", "## Launch", "",
              f"grid = [{g[0]}, {g[1]}, {g[2]}], block = [{b[0]}, {b[1]}, {b[2]}] "
              f"({case.launch.blocks} blocks of {case.launch.threads_per_block} threads)", "",
              "## Outcomes", "", *_outcome_table(outcomes), ""]
    if verdict.agree:
        lines += ["All pipelines agree.", ""]
    else:
        lines += ["## Findings", "", *_findings(case, verdict)]
        for section in sections:
            lines += [section.rstrip("\n"), ""]
    lines += ["## Reproduce", "", _fence(
        f"rgpu-fuzz reproduce {case.id}{reproduce_options}\n"
        f"rgpu-fuzz run {case.id}.toml --pipelines {pipelines}{run_options}", "sh"), "",
        f"(save the case file below as `{case.id}.toml` for the second command)", "",
        "## Versions", ""]
    lines += [f"- {name}: {value}" for name, value in versions.items()]
    lines += ["", "<details><summary>case file</summary>", "",
              _fence(casefile.dumps(case), "toml"), "", "</details>", ""]
    return "\n".join(lines)


__all__ = ["collect_versions", "render_report"]
