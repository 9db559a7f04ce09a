"""Work through the findings store: list buckets, show one, promote its best reproducer into
the regression corpus, merge stores from other machines, set a bucket's status, and recheck
buckets on today's pipelines (fixed-verification).

A bucket is named by its id (10 hex digits) or any unique prefix of it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from rich.syntax import Syntax
from rich.table import Table

from rgpu_fuzz import casefile
from rgpu_fuzz.cli.console import make_console
from rgpu_fuzz.cli.pipelines import add_plugin_argument
from rgpu_fuzz.cli.reproduce import add_store_argument, bits_widths, replay_options, store_path
from rgpu_fuzz.model.case import Expect, ExpectStatus
from rgpu_fuzz.pipelines.base import PipelineSpec
from triage.lookup import Where

if TYPE_CHECKING:
    from triage.store import Bucket, FindingStore

EXAMPLE = "rgpu-fuzz triage list --sort count   |   rgpu-fuzz triage show 3fa2"
STATUSES = ("new", "filed", "fixed", "flaky", "wontfix")
PIPED_WIDTH = 240
"""`triage list` into a pipe: wide enough for every column and a long signature."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    fmt = argparse.RawDescriptionHelpFormatter
    ls = sub.add_parser("list", help="list the buckets", formatter_class=fmt,
                        epilog="example: rgpu-fuzz triage list --sort count --status new")
    ls.add_argument("--sort", choices=("newest", "count", "last-seen"), default="newest")
    ls.add_argument("--status", choices=STATUSES, default=None, help="only buckets with it")
    add_store_argument(ls)
    show = sub.add_parser("show", help="one bucket: signature, best kernel, first diffs",
                          formatter_class=fmt, epilog="example: rgpu-fuzz triage show 3fa2")
    show.add_argument("id", help="bucket id or a unique prefix")
    add_store_argument(show)
    promote = sub.add_parser(
        "promote", help="write a bucket's best case into the corpus", formatter_class=fmt,
        epilog="example: rgpu-fuzz triage promote 3fa2 --issue https://tracker/issues/12\n\n"
               "A bucket that is not fixed becomes a known divergence (its pipelines and the\n"
               "issue link), so the corpus test fails loudly once the bug is fixed.")
    promote.add_argument("id", help="bucket id or a unique prefix")
    promote.add_argument("--corpus", type=Path, default=Path("corpus"), metavar="DIR")
    promote.add_argument("--expect", choices=("agree", "known-divergence"), default=None,
                         help="default: agree when the bucket is fixed, else known-divergence")
    promote.add_argument("--issue", default="", metavar="URL", help="the upstream issue")
    promote.add_argument("--force", action="store_true", help="overwrite an existing file")
    add_store_argument(promote)
    merge = sub.add_parser("merge", help="add other stores' findings into this one",
                           formatter_class=fmt,
                           epilog="example: rgpu-fuzz triage merge node*/findings.sqlite")
    merge.add_argument("others", nargs="+", type=Path, metavar="OTHER.sqlite")
    add_store_argument(merge)
    recheck = sub.add_parser(
        "recheck", help="rerun buckets' best reproducers: mark fixed, reopen regressions",
        formatter_class=fmt, description=RECHECK_HELP,
        epilog="example: rgpu-fuzz triage recheck --store runs/nightly/merged.sqlite --json")
    recheck.add_argument("ids", nargs="*", metavar="ID",
                         help="only these buckets (ids or unique prefixes)")
    recheck.add_argument("--status", action="append", choices=STATUSES, default=None,
                         help="recheck buckets with this status (repeatable; default: new, "
                              "filed, flaky, fixed)")
    recheck.add_argument("--tries", type=int, default=1,
                         help="runs that must all agree before a bucket counts as fixed "
                              "(default: %(default)s)")
    recheck.add_argument("--policy", default=None,
                         help="oracle policy, a name or TOML file (default: the one the "
                              "store's latest campaign recorded, else `default`)")
    recheck.add_argument("--corpus", type=Path, default=None, metavar="DIR",
                         help="corpus folder whose known divergences follow (default: "
                              "corpus, when it exists)")
    recheck.add_argument("--update-corpus", action="store_true",
                         help="rewrite the known divergences of fixed buckets as `agree` "
                              "(without it, they are only listed)")
    recheck.add_argument("--jobs", type=int, default=1,
                         help="reruns at once, in worker processes (default: %(default)s)")
    recheck.add_argument("--json", action="store_true", help="one JSON object on stdout")
    add_plugin_argument(recheck)
    add_store_argument(recheck)
    status = sub.add_parser("status", help="set a bucket's triage status", formatter_class=fmt,
                            epilog="example: rgpu-fuzz triage status 3fa2 filed --note 'bug 12'")
    status.add_argument("id", help="bucket id or a unique prefix")
    status.add_argument("status", choices=STATUSES)
    status.add_argument("--note", default=None, help="replace the bucket's note")
    add_store_argument(status)


RECHECK_HELP = """\
Rerun the best reproducer of every open bucket (and every fixed one) on today's pipelines:
the bucket's own pipelines and the policy's arbiter, judged by the oracle, matched by the
bucket's signature. One line per bucket, then a summary:

  reproduces  still there                 fixed      all its pipelines agree now
  regressed   was fixed, back: reopened   changed    diverges, other signature
  skipped     cannot rerun here (a pipeline or plugin missing, no stored case)

Each recheck is a run in the store with the versions of every pipeline's tools; a fixed
bucket names that run, and each line shows the versions that changed since the bucket last
reproduced. Plugin pipelines are loaded from --plugin, else from the file the campaign
recorded, as it is today.

Exit status: 0 when no bucket regressed, 1 when any did, 2 for a usage error."""


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t))


def _short_when(t: float) -> str:
    """Month, day and time: what tells buckets of one campaign apart in a narrow table."""
    return time.strftime("%m-%d %H:%M", time.localtime(t))


def _open(args: argparse.Namespace, create: bool = False,
          readonly: bool = False) -> FindingStore:
    """The store `--store` names; `readonly` for the actions that only read it (so they
    work on a read-only disk and never write into a file that is not a store)."""
    from rgpu_fuzz.cli import UserError
    from triage.store import FindingStore, StoreError

    path = store_path(args)
    if not create and not path.is_file():
        raise UserError(f"no findings store at {path} (run a campaign, or pass --store PATH)")
    try:
        return FindingStore(path, readonly=readonly)
    except StoreError as e:
        raise UserError(str(e)) from None


def _bucket(store: FindingStore, prefix: str) -> Bucket:
    from rgpu_fuzz.cli import UserError
    from triage.store import IdLookupError

    try:
        return store.bucket(prefix)
    except IdLookupError as e:
        raise UserError(str(e)) from None


def _list(args: argparse.Namespace) -> int:
    with _open(args, readonly=True) as store:
        buckets = store.buckets(order_by=args.sort, status=args.status)
    # a terminal's own width; piped into a file or `less -S`, lines are not cut at 80
    console = make_console() if sys.stdout.isatty() or os.environ.get("COLUMNS") else make_console(
        width=PIPED_WIDTH)
    if not buckets:
        console.print(f"no buckets in {store.path}" + (f" with status {args.status}"
                                                       if args.status else ""))
        return 0
    table = Table(title=str(store.path), title_justify="left")
    wide = console.width >= 110  # narrow terminals drop "first" and "repro", never crop ids
    columns = ["bucket", "kind", "count", *(["first"] if wide else []), "last", "tokens",
               *(["repro"] if wide else []), "status", "signature"]
    for name in columns:
        table.add_column(name, no_wrap=name != "signature", min_width=len(name),
                         overflow="fold" if name == "signature" else "ellipsis",
                         justify="right" if name in ("count", "tokens") else "left")
    for b in buckets:
        size = str(b.best_size[0]) if b.best_size else "–"
        repro = f"{b.reproduced}/{b.tries}" if b.tries else "–"
        # the signature after its kind: the pipeline, and `ops=` (what the bug needs) or the
        # stage and error line
        rest = b.signature.after_kind
        cells = {"bucket": b.id, "kind": b.kind, "count": str(b.count),
                 "first": _short_when(b.first_seen), "last": _short_when(b.last_seen),
                 "tokens": size, "repro": repro,
                 "status": f"{b.status} (regression)" if b.regression else str(b.status),
                 "signature": rest}
        table.add_row(*(cells[c] for c in columns))
    console.print(table)
    return 0


def _show(args: argparse.Namespace) -> int:
    from triage.finding_facts import shown_lines
    from triage.store import BucketStatus

    console = make_console()
    with _open(args, readonly=True) as store:
        b = _bucket(store, args.id)
        examples = store.examples(b.signature)
        history = store.history(b.signature)[-5:]
        case = store.case(b.best_case_id) if b.best_case_id else None
        outcomes = store.outcomes(b.best_case_id) if b.best_case_id else {}
        names = {PipelineSpec.parse(p).name for p in b.pipelines}
        plugins = [str(path) for name, (path, _) in sorted(store.plugins().items())
                   if name in names]
    rate = f"{b.reproduced}/{b.tries}" if b.tries else "not tried"
    facts = [("bucket", b.id), ("signature", str(b.signature)), ("kind", b.kind),
             ("pipelines", ", ".join(b.pipelines)), ("status", str(b.status)),
             ("count", str(b.count)), ("first seen", _when(b.first_seen)),
             ("last seen", _when(b.last_seen)), ("reproduced", rate)]
    if b.note:
        facts.append(("note", b.note))
    if b.regressions:
        facts.append(("regressed", f"{b.regressions} time{'s' if b.regressions != 1 else ''} "
                                   "after being fixed"))
    if b.status is BucketStatus.FIXED and b.fixed_run and b.fixed_at:
        facts.append(("fixed by", f"{b.fixed_run} ({_when(b.fixed_at)})"))
    for h in history:
        facts.append(("history", f"{_when(h.at)} {h.event} ({h.run}) {h.detail}"[:200]))
    if case is not None and b.best_size:
        facts.append(("best case", f"{case.id} ({b.best_size[0]} tokens, "
                                   f"{b.best_size[1]} characters)"))
    facts += shown_lines(store.path, str(b.signature))  # kept by `rgpu-fuzz report <bucket>`
    for key, value in facts:
        console.print(f"{key:>10}: {value}", highlight=False, markup=False)
    if case is None:
        return 0
    console.rule("best reproducer")
    console.print(Syntax(case.kernel.rstrip(), "rust", line_numbers=True))
    if outcomes:
        table = Table("pipeline", "status", "detail", "seconds", title="recorded outcomes",
                      title_justify="left")
        for label, o in outcomes.items():
            table.add_row(label, o["status"], o["detail"], f"{o['seconds']:.4f}")
        console.print(table)
    example = next((e for e in examples if e.case_id == case.id), None)
    if example is not None and example.diffs:
        widths = bits_widths(case)
        pipes = b.pipelines if len(b.pipelines) >= 2 else ("expected", "actual")
        table = Table("buffer", "index", pipes[0], "bits", pipes[-1], "bits",
                      title=f"first differing elements ({example.detail})", title_justify="left")
        for d in example.diffs:
            w = widths.get(d.buffer, 8)
            table.add_row(d.buffer, str(d.index), d.expected, f"0x{d.expected_bits:0{w}x}",
                          d.actual, f"0x{d.actual_bits:0{w}x}")
        console.print(table)
    elif example is not None and example.detail:
        console.print(f"detail: {example.detail}", highlight=False, markup=False)
    replay = replay_options(Where(store=store.path), plugins)
    console.print(f"reproduce: rgpu-fuzz reproduce {b.id}{replay}", highlight=False,
                  markup=False)
    return 0


def _promote(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from rgpu_fuzz.cli import UserError

    with _open(args, readonly=True) as store:
        b = _bucket(store, args.id)
        if b.best_case_id is None:
            raise UserError(f"bucket {b.id} has no stored case")
        case = store.case(b.best_case_id)
    if b.kind == "invalid-case":
        raise UserError(f"bucket {b.id} is an invalid case (the arbiter rejects it): a "
                        "generator bug, not a regression test")
    fixed = str(b.status) == "fixed"
    status = ExpectStatus(args.expect) if args.expect else (
        ExpectStatus.AGREE if fixed else ExpectStatus.KNOWN_DIVERGENCE)
    pipelines: tuple[str, ...] = ()
    if status is ExpectStatus.KNOWN_DIVERGENCE:
        if not args.issue:
            raise UserError(f"bucket {b.id} ({b.kind}, status {b.status}) is not fixed: "
                            "promote it as a known divergence with --issue URL "
                            "(or --expect agree once it is fixed)")
        pipelines = tuple(p for p in b.pipelines if p != "ref") or b.pipelines
        from rgpu_fuzz.pipelines.registry import Registry

        known = Registry().names()  # built in or installed: what the corpus test can run
        plugins = [p for p in pipelines if PipelineSpec.parse(p).name not in known]
        if plugins:
            raise UserError(f"bucket {b.id} diverges on {', '.join(plugins)}, from a --plugin "
                            "file the corpus test cannot load (it would pass as if fixed); "
                            "install the plugin as a package (entry point rgpu_fuzz.pipelines) "
                            "to promote it")
    case = replace(case, expect=Expect(status=status, pipelines=pipelines, issue=args.issue))
    path = args.corpus / f"{case.id}.toml"
    if path.exists() and not args.force:
        raise UserError(f"{path} exists (pass --force to overwrite it)")
    try:
        args.corpus.mkdir(parents=True, exist_ok=True)
        casefile.save(case, path)
    except OSError as e:
        raise UserError(f"{path}: cannot write: {e.strerror}") from None
    what = f"known divergence on {', '.join(pipelines)}" if pipelines else "agree"
    print(f"wrote {path} (bucket {b.id}, expect {what})")
    return 0


def _merge(args: argparse.Namespace) -> int:
    from rgpu_fuzz.cli import UserError
    from triage.store import StoreError

    with _open(args, create=True) as store:
        for other in args.others:
            if other.is_file() and other.resolve() == store.path.resolve():
                raise UserError(f"{other}: is the store being merged into")
            try:
                summary = store.merge_from(other)
            except StoreError as e:
                raise UserError(str(e)) from None
            print(f"merged {other}: {summary.buckets} buckets ({summary.new_buckets} new), "
                  f"{summary.cases} cases")
    return 0


def _status(args: argparse.Namespace) -> int:
    with _open(args) as store:
        before = _bucket(store, args.id)
        after = store.set_status(before.id, args.status, note=args.note)
    print(f"bucket {after.id}: {before.status} -> {after.status}")
    return 0


def _recheck(args: argparse.Namespace) -> int:
    from campaigns.recheck import DEFAULT_STATUSES, recheck, update_corpus
    from oracles import PolicyError, load_policy
    from rgpu_fuzz.cli import UserError
    from rgpu_fuzz.cli.pipelines import registry_from
    from triage.store import BucketStatus, IdLookupError

    if args.tries < 1 or args.jobs < 1:
        raise UserError("--tries and --jobs must be >= 1")
    name = args.policy
    if name is None:
        with _open(args, readonly=True) as store:
            name = next((r.settings["policy"] for r in reversed(store.runs("campaign"))
                         if r.settings.get("policy")), "default")
    try:
        policy = load_policy(name)
    except PolicyError as e:
        raise UserError(str(e)) from None
    corpus = args.corpus if args.corpus is not None else (
        Path("corpus") if Path("corpus").is_dir() else None)
    if corpus is not None and not corpus.is_dir():
        raise UserError(f"--corpus {corpus}: no such folder")
    reg = registry_from(args)
    statuses = tuple(BucketStatus(s) for s in args.status) if args.status else DEFAULT_STATUSES
    console = make_console() if not args.json else None

    def line(r: object) -> None:
        if console is not None:
            console.print(_recheck_line(r), highlight=False, markup=False, soft_wrap=True)

    with _open(args) as store:
        try:
            report = recheck(store, reg, policy, statuses=statuses, ids=args.ids,
                             tries=args.tries, jobs=args.jobs, on_result=line)
        except IdLookupError as e:
            raise UserError(str(e)) from None
        updates = (update_corpus(store, reg, policy, corpus, write=args.update_corpus)
                   if corpus is not None else [])
    counts = report.counts()
    if args.json:
        print(json.dumps({
            "store": str(store.path), "run": _run_json(report.run), "summary": counts,
            "buckets": [_result_json(r) for r in report.results],
            "corpus": [{"path": str(u.path), "bucket": u.bucket, "written": u.written,
                        "detail": u.detail} for u in updates]}, indent=2))
    else:
        assert console is not None
        for u in updates:
            console.print(f"corpus {u.path}: bucket {u.bucket} fixed: {u.detail}",
                          highlight=False, markup=False, soft_wrap=True)
        pending = [u for u in updates if not u.written and u.detail.startswith("agrees")]
        if pending:
            console.print(f"to stop expecting these divergences: rgpu-fuzz triage recheck "
                          f"{' '.join(u.bucket for u in pending)} --store {store.path} "
                          f"--corpus {corpus} --update-corpus", highlight=False, markup=False,
                          soft_wrap=True)
        took = (report.run.ended or time.time()) - report.run.started
        n = len(report.results)
        console.print(f"rechecked {n} bucket{'s' if n != 1 else ''} in {took:.1f}s (run "
                      f"{report.run.id}): " + ", ".join(f"{n} {k}" for k, n in counts.items()),
                      highlight=False, markup=False, soft_wrap=True)
    return 1 if report.regressions else 0


def _recheck_line(r: object) -> str:
    from campaigns.recheck import BucketRecheck

    assert isinstance(r, BucketRecheck)
    b = r.bucket
    move = f"{r.before} -> {b.status}" if r.before != b.status else str(b.status)
    text = f"{b.id}  {r.event!s:<10} {move:<14} {str(b.signature)[:90]}\n    {r.detail}"
    if r.versions_changed:
        text += "\n    versions: " + "; ".join(f"{k} {old} -> {new}" for k, (old, new)
                                               in r.versions_changed.items())
    return text


def _run_json(run: object) -> dict[str, object]:
    from dataclasses import asdict

    return asdict(run)  # type: ignore[call-overload, no-any-return]


def _result_json(r: object) -> dict[str, object]:
    from campaigns.recheck import BucketRecheck

    assert isinstance(r, BucketRecheck)
    b = r.bucket
    return {"id": b.id, "signature": str(b.signature), "event": str(r.event),
            "before": str(r.before), "status": str(b.status), "regression": b.regression,
            "regressions": b.regressions, "fixed_run": b.fixed_run, "detail": r.detail,
            "versions_changed": {k: list(v) for k, v in r.versions_changed.items()},
            "seconds": round(r.seconds, 3)}


def execute(args: argparse.Namespace) -> int:
    actions = {"list": _list, "show": _show, "promote": _promote, "merge": _merge,
               "status": _status, "recheck": _recheck}
    return actions[args.action](args)
