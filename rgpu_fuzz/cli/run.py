"""Run case files through pipelines and show what each computed.

Human output is a short table per case; `--json` prints one JSON object per case, e.g.
`{"case": "<id>", "outcomes": {"ref": {"status": "ok", "detail": "", "seconds": 0.01,
"outputs": {"out": {"type": "u32", "bits": [1, 2, 3]}}}}}` where `bits` are the unsigned bit
patterns of the elements (two's complement, IEEE bits, 0/1 for bool).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from oracles import PolicyError, Verdict, judge, load_policy
from rgpu_fuzz import casefile
from rgpu_fuzz.cli.console import make_console
from rgpu_fuzz.cli.pipelines import DEFAULT_PIPELINES, add_plugin_argument, registry_from
from rgpu_fuzz.lang.ast import Module
from rgpu_fuzz.lang.features import case_module
from rgpu_fuzz.model.case import BufferArg, Case
from rgpu_fuzz.model.outcome import Buffer, Ok, Outcome, detail
from rgpu_fuzz.pipelines.registry import PipelineError
from rgpu_fuzz.pipelines.runner import run_case

EXAMPLE = "rgpu-fuzz run corpus/*.toml --pipelines ref --json"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("cases", nargs="+", metavar="CASE.toml", help="case files (rgpu-case/1)")
    p.add_argument("--pipelines", default=DEFAULT_PIPELINES,
                   help=f"comma-separated pipeline specs (default: {DEFAULT_PIPELINES})")
    p.add_argument("--json", action="store_true", help="one JSON object per case on stdout")
    p.add_argument("--trace", action="store_true",
                   help="print an instruction trace of one wave (pc, instruction, exec mask, "
                        "registers changed) for pipelines that simulate (amdgpu-sim)")
    p.add_argument("--policy", default="default",
                   help="oracle policy: a name in oracles/policies or a TOML path")
    add_plugin_argument(p)


def outcome_json(outcome: Outcome) -> dict[str, Any]:
    """The per-pipeline object of `run --json`."""
    obj: dict[str, Any] = {"status": str(outcome.status), "detail": detail(outcome),
                           "seconds": round(outcome.stats.seconds.get("total", 0.0), 6)}
    if isinstance(outcome, Ok):
        obj["outputs"] = {name: {"type": str(buf.ty), "bits": buf.bits()}
                          for name, buf in outcome.outputs.items()}
    if outcome.stats.artefacts:
        obj["artefacts"] = dict(outcome.stats.artefacts)
    return obj


def _preview(buf: Buffer, limit: int = 6) -> str:
    vals = buf.values.tolist()
    shown = ", ".join(_fmt(v) for v in vals[:limit])
    more = ", …" if len(vals) > limit else ""
    return f"[{shown}{more}] ({len(vals)} {buf.ty})"


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def verdict_json(verdict: Verdict) -> str | list[dict[str, Any]]:
    if verdict.agree:
        return "agree"
    return [{"kind": str(f.kind), "pipelines": list(f.pipelines), "signature": str(f.signature),
             "detail": f.detail, "known_issue": f.known_issue, "suspects": list(f.suspects),
             "differing_elements": f.differing_elements,
             "first_diffs": [{"buffer": d.buffer, "index": d.index, "expected": d.expected,
                              "expected_bits": d.expected_bits, "actual": d.actual,
                              "actual_bits": d.actual_bits} for d in f.diffs]}
            for f in verdict.findings]


def print_verdict(console: Console, verdict: Verdict, bits_width: dict[str, int]) -> None:
    if verdict.agree:
        console.print(f"verdict: agree ({len(verdict.compared)} pipelines compared)")
        return
    for f in verdict.findings:
        known = f" (known: {f.known_issue})" if f.known_issue else ""
        console.print(f"[bold red]finding[/] {f.kind}{known}: {escape(f.detail)}",
                      highlight=False)
        console.print(f"  signature: {f.signature}", highlight=False, markup=False)
        if f.suspects:
            console.print(f"  suspect: {', '.join(f.suspects)}", highlight=False, markup=False)
        if f.diffs:
            t = Table("buffer", "index", f.pipelines[0], "bits", f.pipelines[-1], "bits")
            for d in f.diffs:
                w = bits_width.get(d.buffer, 8)
                t.add_row(d.buffer, str(d.index), d.expected, f"0x{d.expected_bits:0{w}x}",
                          d.actual, f"0x{d.actual_bits:0{w}x}")
            console.print(t)


def execute(args: argparse.Namespace) -> int:
    from rgpu_fuzz.cli import UserError

    reg = registry_from(args)
    try:
        pipelines = reg.create_all(s for s in args.pipelines.split(",") if s.strip())
    except PipelineError as e:
        raise UserError(str(e)) from None
    if not pipelines:
        raise UserError("--pipelines is empty")
    cases: list[Case] = []
    for path in args.cases:
        try:
            cases.append(casefile.load_checked(path))
        except casefile.CaseError as e:
            raise UserError(str(e)) from None
    try:
        policy = load_policy(args.policy)
    except PolicyError as e:
        raise UserError(str(e)) from None
    console = make_console()
    status = 0
    for path, case in zip(args.cases, cases, strict=True):
        outcomes = run_case(case, pipelines)
        verdict = judge(case, outcomes, policy, _parsed(case))
        if verdict.new_findings:
            status = 1
        if args.json:
            print(json.dumps({"case": case.id,
                              "outcomes": {k: outcome_json(o) for k, o in outcomes.items()},
                              "verdict": verdict_json(verdict)}))
            continue
        table = Table(title=escape(f"{path}  (case {case.id}, entry {case.entry})"),
                      title_justify="left")
        for col in ("pipeline", "status", "seconds", "result"):
            table.add_column(col)
        for label, o in outcomes.items():
            result = detail(o)
            if isinstance(o, Ok):
                result = "\n".join(f"{n}: {_preview(b)}" for n, b in o.outputs.items())
            table.add_row(escape(label), str(o.status), f"{o.stats.seconds.get('total', 0.0):.4f}",
                          escape(result))
        console.print(table)
        widths = {a.name: (a.elem.bits + 3) // 4 for a in case.args if isinstance(a, BufferArg)}
        print_verdict(console, verdict, widths)
        if args.trace:
            for p in pipelines:
                tracer = getattr(p, "trace_text", None)
                if tracer is not None:
                    console.rule(escape(f"trace: {p.label}"))
                    print(tracer(case), end="")
    return status


def _parsed(case: Case) -> Module | None:
    return case_module(case)
