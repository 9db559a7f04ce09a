"""Replay a filed case: find it (corpus or findings store; a unique id prefix is enough),
rerun the pipelines it was recorded on, and show what each computed and the first differing
elements.

Exit status: 1 while the case still diverges (any finding), 0 once it no longer does, 2 for
an unknown or ambiguous id. When the case belongs to a bucket of the store, the attempt is
counted in the bucket's reproduction rate (`--no-record` to skip).

`--show ir|asm` prints a pipeline's artefacts where the pipeline exposes them (a method
`artefact_text(case, kind) -> str | None` on the pipeline class).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from oracles import Policy, PolicyError, Verdict, kernel_operations, load_policy
from rgpu_fuzz import casefile
from rgpu_fuzz.cli.console import make_console
from rgpu_fuzz.cli.pipelines import DEFAULT_PIPELINES, add_plugin_argument, registry_from
from rgpu_fuzz.cli.run import outcome_json, print_verdict, verdict_json
from rgpu_fuzz.lang.ast import Module
from rgpu_fuzz.lang.features import case_module
from rgpu_fuzz.model.case import BufferArg, Case
from rgpu_fuzz.model.outcome import Ok, Outcome, detail
from rgpu_fuzz.pipelines.base import Pipeline
from rgpu_fuzz.pipelines.registry import PipelineError, Registry
from triage.classify import same_bug

if TYPE_CHECKING:
    from triage.lookup import Where

EXAMPLE = "rgpu-fuzz reproduce 3fa2c1 --show ir"
FALLBACK_PIPELINES = tuple(DEFAULT_PIPELINES.split(","))


def add_store_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", type=Path, default=None, metavar="PATH",
                   help="findings store (default: $RGPU_FUZZ_STORE or "
                        "runs/campaign/findings.sqlite, where `campaign` writes by default)")


def add_locate_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments every command that finds and reruns a case shares."""
    p.add_argument("id", help="case id, bucket id, a unique prefix of either, or a case file")
    p.add_argument("--pipelines", default=None,
                   help="comma-separated specs (default: the pipelines the case was recorded on)")
    add_store_argument(p)
    p.add_argument("--corpus", type=Path, action="append", default=None, metavar="DIR",
                   help="corpus folder to search (repeatable; default: corpus)")
    p.add_argument("--policy", default="default",
                   help="oracle policy: a name in oracles/policies or a TOML path")
    add_plugin_argument(p)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_locate_arguments(p)
    p.add_argument("--show", choices=("ir", "asm"), default=None,
                   help="also print each pipeline's LLVM IR or assembly, where it exposes them")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--no-record", action="store_true",
                   help="do not count this attempt in the bucket's reproduction rate")


def store_path(args: argparse.Namespace) -> Path:
    from triage.store import default_store_path

    return args.store if args.store is not None else default_store_path()


def locate(args: argparse.Namespace) -> tuple[Case, Where]:
    """The case `args.id` names, and where it was found."""
    from rgpu_fuzz.cli import UserError
    from triage.lookup import find_case
    from triage.store import IdLookupError, StoreError

    corpus = args.corpus if args.corpus is not None else [Path("corpus")]
    try:
        return find_case(args.id, corpus_dirs=corpus, store_paths=[store_path(args)])
    except (IdLookupError, StoreError, casefile.CaseError) as e:
        raise UserError(str(e)) from None


def pipeline_specs(case: Case, where: Where, override: str | None, arbiter: str) -> list[str]:
    """What to rerun: `--pipelines`, else the case's recorded pipelines, else the bucket's,
    else the pipelines a known divergence names; always with the arbiter first."""
    if override is not None:
        specs = [s.strip() for s in override.split(",") if s.strip()]
    elif case.pipelines:
        specs = list(case.pipelines)
    elif where.bucket is not None and where.bucket.pipelines:
        specs = list(where.bucket.pipelines)
    elif case.expect is not None and case.expect.pipelines:
        specs = list(case.expect.pipelines)
    else:
        specs = list(FALLBACK_PIPELINES)
    if override is None and arbiter not in specs:
        specs.insert(0, arbiter)
    return list(dict.fromkeys(specs))


def rerun(args: argparse.Namespace, case: Case,
          where: Where) -> tuple[list[Pipeline], dict[str, Outcome], Verdict, Policy]:
    """Create the pipelines, run the case through them and judge the outcomes
    (`triage.rerun`, the one way every rerun goes)."""
    from rgpu_fuzz.cli import UserError
    from triage.rerun import rerun as rerun_case

    try:
        policy = load_policy(args.policy)
    except PolicyError as e:
        raise UserError(str(e)) from None
    reg = registry_from(args)
    specs = pipeline_specs(case, where, args.pipelines, policy.arbiter)
    if not specs:
        raise UserError("--pipelines is empty")
    args.recorded_plugins = load_recorded_plugins(reg, specs, where)
    try:
        pipelines = reg.create_all(specs)
    except PipelineError as e:
        raise UserError(f"case {case.id}: {e}") from None
    got = rerun_case(case, pipelines, policy)
    return pipelines, dict(got.outcomes), got.verdict, policy


def load_recorded_plugins(reg: Registry, specs: list[str], where: Where) -> list[str]:
    """Load the plugin files the store recorded for the pipelines of `specs` that no
    `--plugin` defined (`triage.plugins.load_recorded`: only a file whose content is the
    one recorded); the files loaded. A pipeline that stays unknown because its recorded
    file is gone or changed is a `UserError` that says what to pass."""
    from rgpu_fuzz.cli import UserError
    from rgpu_fuzz.pipelines.base import PipelineSpec
    from triage.rerun import RerunError, load_plugins_for
    from triage.store import FindingStore, StoreError

    names = {n for n in (PipelineSpec.parse(s).name for s in specs) if n not in reg.names()}
    if not names or where.store is None:
        return []
    try:
        with FindingStore(where.store, readonly=True) as store:
            recorded = store.plugins()
    except StoreError:
        return []
    try:
        return load_plugins_for(reg, specs, recorded)
    except RerunError as e:
        raise UserError(str(e)) from None


def replay_options(where: Where, plugins: list[str]) -> str:
    """The options that make `rgpu-fuzz reproduce ID` find this case again when pasted:
    `--store` unless it is the default store, and each plugin file."""
    from triage.store import default_store_path

    opts = ""
    if where.store is not None and where.store.resolve() != default_store_path().resolve():
        opts += f" --store {shlex.quote(str(where.store))}"
    for path in dict.fromkeys(plugins):
        opts += f" --plugin {shlex.quote(str(path))}"
    return opts


def parsed_kernel(case: Case) -> Module | None:
    """The kernel's AST for the oracle's signatures; None when it does not parse (the
    pipelines then report that themselves)."""
    return case_module(case)


def bits_widths(case: Case) -> dict[str, int]:
    return {a.name: 1 if a.elem.bits == 1 else (a.elem.bits + 3) // 4
            for a in case.args if isinstance(a, BufferArg)}


def print_outcomes(console: Console, title: str, outcomes: dict[str, Outcome]) -> None:
    """Every pipeline side by side: status, time, result, artefact hashes."""
    table = Table("pipeline", "status", "seconds", "result", "artefacts", title=escape(title),
                  title_justify="left")
    for label, o in outcomes.items():
        result = detail(o)
        if isinstance(o, Ok):
            result = ", ".join(f"{n}: {len(b.values)} {b.ty}" for n, b in o.outputs.items())
        arts = "\n".join(f"{k} {v[:12]}" for k, v in sorted(o.stats.artefacts.items()))
        table.add_row(escape(label), str(o.status), f"{o.stats.seconds.get('total', 0.0):.4f}",
                      escape(result), arts)
    console.print(table)


def show_artefacts(console: Console, case: Case, pipelines: list[Pipeline], kind: str) -> None:
    for p in pipelines:
        getter = getattr(p, "artefact_text", None)
        text = getter(case, kind) if callable(getter) else None
        if text is None:
            console.print(f"{kind} not available for {p.label}", highlight=False, markup=False)
            continue
        console.rule(f"{p.label}: {kind}")
        console.print(text, highlight=False, markup=False, soft_wrap=True)


def execute(args: argparse.Namespace) -> int:
    case, where = locate(args)
    pipelines, outcomes, verdict, _policy = rerun(args, case, where)
    diverges = not verdict.agree
    bucket = where.bucket
    # The bucket's bug by recheck's rule: a bug-keyed (`probe=`) or known-bug bucket never
    # equals its reproducer's own `ops=` signature.
    module = case_module(case)
    ops = kernel_operations(module) if module is not None else ()
    still = bucket is not None and any(same_bug(bucket.signature, f, ops)
                                       for f in verdict.findings)
    if bucket is not None and where.store is not None and not args.no_record:
        import sqlite3

        from triage.store import FindingStore, StoreError

        try:
            with FindingStore(where.store) as store:
                store.record_reproduction(bucket.signature, still)
        except (StoreError, sqlite3.Error) as e:  # a read-only store is still reproducible
            print(f"note: attempt not counted in {where.store}: {e}", file=sys.stderr)
    if args.json:
        obj: dict[str, Any] = {"case": case.id, "where": str(where),
                               "bucket": bucket.id if bucket else None,
                               "outcomes": {k: outcome_json(o) for k, o in outcomes.items()},
                               "verdict": verdict_json(verdict), "diverges": diverges}
        print(json.dumps(obj))
        return 1 if diverges else 0
    console = make_console()
    print_outcomes(console, f"case {case.id} from {where}", outcomes)
    print_verdict(console, verdict, bits_widths(case))
    if args.show:
        show_artefacts(console, case, pipelines, args.show)
    if bucket is not None and diverges and not still:
        console.print(f"note: bucket {bucket.id}'s signature did not reproduce "
                      f"({bucket.signature}); the findings above are different",
                      highlight=False, markup=False)
    if diverges:
        console.print(f"[bold red]still diverges[/]: case {case.id}", highlight=False)
        return 1
    console.print(f"[bold green]no divergence[/]: case {case.id} agrees on "
                  f"{', '.join(outcomes)}", highlight=False)
    return 0
