"""The nightly run's Markdown summary (`ci/nightly.sh finish` calls it): OUT/nightly.md from
the shard summaries (OUT/shard-*/summary.json), the recheck (OUT/recheck.json) and the merged
store (OUT/merged/findings.sqlite), plus one `rgpu-fuzz report` per bucket worth a look
(OUT/buckets/<id>.md): regressions first, then buckets new tonight, then by count.

    python ci/nightly_report.py OUT [--reports N] [--plugin FILE ...]
    python ci/nightly_report.py OUT --join-shards

`--join-shards` makes OUT/merged a campaign directory `rgpu-fuzz report campaign` reads: the
shards' per-chunk statistics in one `stats.jsonl` (shards run disjoint chunks, so no chunk
appears twice) and one `checkpoint.json` (shard 0's settings with the shard set to all of
them, the finished chunks and totals of every shard).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
from pathlib import Path
from typing import Any

from rgpu_fuzz.cli import main as rgpu_fuzz
from triage.store import Bucket, FindingStore

MERGED = Path("merged") / "findings.sqlite"


def join_shards(out: Path) -> None:
    shards = sorted(out.glob("shard-*-of-*"))
    with open(out / "merged" / "stats.jsonl", "w", encoding="utf-8") as joined:
        for d in shards:
            if (d / "stats.jsonl").is_file():
                joined.write((d / "stats.jsonl").read_text(encoding="utf-8", errors="replace"))
    docs = []
    for d in shards:
        try:
            docs.append(json.loads((d / "checkpoint.json").read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    if not docs:
        return
    identity = dict(docs[0].get("identity") or {})
    total = (identity.get("shard") or [0, len(shards)])[-1]
    identity["shard"] = [f"0..{int(total) - 1}", total]
    totals: dict[str, int] = {}
    for doc in docs:
        for k, v in (doc.get("totals") or {}).items():
            totals[k] = totals.get(k, 0) + int(v)
    done = sorted({c for doc in docs for c in doc.get("done", [])})
    (out / "merged" / "checkpoint.json").write_text(json.dumps(
        {"identity": identity, "done": done, "totals": totals}), encoding="utf-8")


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t)) if t else "–"


def shard_rows(out: Path) -> list[tuple[str, dict[str, Any]]]:
    rows = []
    for path in sorted(out.glob("shard-*/summary.json")):
        try:
            rows.append((path.parent.name, json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError) as e:
            rows.append((path.parent.name, {"error": str(e)}))
    return rows


def write_bucket_reports(out: Path, store_path: Path, buckets: list[Bucket], limit: int,
                         plugins: list[str]) -> dict[str, str]:
    """`rgpu-fuzz report` for up to `limit` buckets; bucket id → the report's file name, or
    the one-line reason it could not be written."""
    written: dict[str, str] = {}
    for b in buckets[:limit]:
        target = out / "buckets" / f"{b.id}.md"
        err = io.StringIO()
        argv = ["report", b.id, "--store", str(store_path), "--out", str(target)]
        for p in plugins:
            argv += ["--plugin", p]
        with contextlib.redirect_stderr(err):
            rc = rgpu_fuzz(argv)
        written[b.id] = (f"buckets/{b.id}.md" if rc == 0 and target.exists()
                         else "no report: " + (err.getvalue().strip().splitlines() or ["?"])[-1])
    return written


def render(out: Path, reports: int, plugins: list[str]) -> str:
    store_path = out / MERGED
    recheck = json.loads((out / "recheck.json").read_text(encoding="utf-8")) if (
        out / "recheck.json").exists() else {}
    shards = shard_rows(out)
    with FindingStore(store_path, readonly=True) as store:
        campaign_runs = store.runs("campaign")
        buckets = store.buckets(order_by="count")
    latest = campaign_runs[-1] if campaign_runs else None
    # one night's shards share a first seed (ci/nightly.sh): tonight's runs are the latest's
    seed = latest.settings.get("seed_start") if latest else None
    tonight = {r.id for r in campaign_runs if r.settings.get("seed_start") == seed}
    newest_night = latest.started if latest else 0.0

    def rank(b: Bucket) -> tuple[int, int]:
        return (0 if b.regression else 1 if b.first_run in tonight else 2, -b.count)

    ordered = sorted(buckets, key=rank)
    links = write_bucket_reports(out, store_path, ordered, reports, plugins)
    lines = [f"# rgpu-fuzz nightly — {_when(newest_night or None)}", "",
             f"Merged store: `{store_path}` ({len(buckets)} buckets); tonight's first seed "
             f"{seed}, {len(tonight)} campaign runs.", "", "## Campaigns", "",
             "| shard | cases | seconds | cases/s | findings | new buckets | harness errors |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, s in shards:
        lines.append(f"| {name} | {s.get('cases', '–')} | {s.get('seconds', '–')} | "
                     f"{s.get('cases_per_s', '–')} | {s.get('findings', '–')} | "
                     f"{s.get('new_buckets', '–')} | {s.get('harness_errors', '–')} |")
    summary = recheck.get("summary", {})
    lines += ["", f"## Recheck ({recheck.get('run', {}).get('id', 'not run')})", "",
              ", ".join(f"{n} {k}" for k, n in summary.items()) or "not run", ""]
    for event, title in (("regressed", "Regressions (fixed buckets that came back)"),
                         ("fixed", "Fixed since the last run"),
                         ("changed", "Changed (diverge with another signature)"),
                         ("skipped", "Not rechecked here")):
        rows = [b for b in recheck.get("buckets", []) if b["event"] == event
                and not (event == "fixed" and b["before"] == "fixed")]
        if not rows:
            continue
        lines += [f"### {title}", ""]
        for b in rows:
            changed = "; ".join(f"{k}: {v[0]} → {v[1]}" for k, v in
                                b.get("versions_changed", {}).items())
            lines.append(f"- `{b['id']}` `{_cell(b['signature'][:120])}` — {_cell(b['detail'])}"
                         + (f" (versions: {_cell(changed)})" if changed else ""))
        lines.append("")
    lines += ["## Buckets", "", "| bucket | kind | count | status | first seen | tonight | "
              "signature | report |", "|---|---|---:|---|---|---|---|---|"]
    for b in ordered:
        status = f"{b.status} (regression)" if b.regression else str(b.status)
        link = links.get(b.id, "")
        link = f"[{b.id}]({link})" if link.startswith("buckets/") else _cell(link or "–")
        lines.append(f"| `{b.id}` | {b.kind} | {b.count} | {status} | {_when(b.first_seen)} "
                     f"| {'new' if b.first_run in tonight else ''} | "
                     f"`{_cell(str(b.signature)[:100])}` | {link} |")
    if latest is not None:
        lines += ["", f"## Versions (campaign run {latest.id}, {latest.host})", "",
                  "| tool | version |", "|---|---|"]
        lines += [f"| {k} | {_cell(v)} |" for k, v in sorted(latest.versions.items())]
    if (out / "report" / "index.html").is_file():
        lines += ["", "The campaign report (plots, coverage, top buckets): "
                  "[report/index.html](report/index.html), [report/report.md](report/report.md)."]
    lines += ["", "## Next steps", "",
              f"- a bucket: `rgpu-fuzz triage show ID --store {store_path}`",
              f"- rerun it: `rgpu-fuzz reproduce ID --store {store_path}`",
              f"- its Markdown issue: `rgpu-fuzz report ID --store {store_path}`",
              "- into the corpus: `rgpu-fuzz triage promote ID --store "
              f"{store_path} --issue URL`", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--reports", type=int, default=20)
    ap.add_argument("--plugin", action="append", default=[])
    ap.add_argument("--join-shards", action="store_true")
    args = ap.parse_args(argv)
    if not (args.out / MERGED).is_file():
        print(f"nightly_report: {args.out / MERGED}: no merged store", file=sys.stderr)
        return 2
    if args.join_shards:
        join_shards(args.out)
        return 0
    (args.out / "buckets").mkdir(exist_ok=True)
    text = render(args.out, args.reports, args.plugin)
    (args.out / "nightly.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
