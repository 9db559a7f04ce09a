#!/usr/bin/env bash
# The nightly rgpu-fuzz run (ci/README.md says what it runs and how to read it).
#
#   ci/nightly.sh                 all shards one after another on this machine, then finish
#   ci/nightly.sh shard I/N       one shard's campaign (a CI matrix job)
#   ci/nightly.sh finish          merge the shard stores (and the history store) into
#                                 OUT/merged/, recheck open and fixed buckets, write the reports
#
# Settings (environment; all optional):
#   NIGHTLY_OUT            output folder (default runs/nightly)
#   NIGHTLY_TIME           campaign time budget per shard (default 30m)
#   NIGHTLY_SHARDS         shards `all` runs (default 1)
#   NIGHTLY_JOBS           worker processes per shard and for the recheck (default: all cores)
#   NIGHTLY_PIPELINES      pipeline specs (default: the campaign's default mix, GlobalISel
#                          for gfx942 at O3, `amdgpu-sim:gfx942:O3:isel=global`: a third
#                          opinion on every AMDGPU finding, and GlobalISel's own crashes; and
#                          the newest targets, `amdgpu-sim:gfx950:O3`, `amdgpu-sim:gfx1200:O3`)
#   NIGHTLY_PLUGINS        plugin files, space-separated
#   NIGHTLY_SEED           first seed; every shard of one night must share it (default: UTC
#                          days since 1970 x 1,000,000, a new seed range every night)
#   NIGHTLY_CASES          stop each shard after this many cases (default: time only)
#   NIGHTLY_REDUCE_BUDGET  time per reduction (default 60s; 0 = store findings unreduced)
#   NIGHTLY_HISTORY        store that carries bucket statuses from night to night: merged in
#                          first, replaced by tonight's merged store at the end (default: none)
#   NIGHTLY_REPORTS        buckets given a `rgpu-fuzz report` (rerun today) in OUT/buckets/ and
#                          shown in full in the campaign report OUT/report/ (default 20)
#   RGPU_FUZZ              the rgpu-fuzz command (default: .venv/bin/rgpu-fuzz, else PATH)
#
# Exit status: 0; 1 when the recheck found a regression (a fixed bucket came back); 2 for a
# usage error; anything else is the failing step's own status. Run the same command again to
# resume: campaigns continue from their checkpoints, `finish` rebuilds everything it writes.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=${NIGHTLY_OUT:-runs/nightly}
budget=${NIGHTLY_TIME:-30m}
seed=${NIGHTLY_SEED:-$(( $(date -u +%s) / 86400 * 1000000 ))}
reports=${NIGHTLY_REPORTS:-20}
# `rgpu-fuzz campaign`'s default mix (rgpu_fuzz/cli/campaign.py, DEFAULT_PIPELINES) and
# GlobalISel. Not `llvm-cpu:...:isel=global`: x86's GlobalISel in LLVM 22 cannot lower the
# `fastcc` calls of every optimised host kernel (one known crash per case, no information).
# The newest targets at O3 as well (gfx950, CDNA4; gfx1200, RDNA4): where the back end's
# least-tested code runs (docs/simulator.md §2).
pipelines=${NIGHTLY_PIPELINES:-ref,llvm-cpu:O0,llvm-cpu:O3:det:detsample=4,amdgpu-sim:gfx942:O0,amdgpu-sim:gfx942:O3,amdgpu-sim:gfx942:O3:isel=global,amdgpu-sim:gfx950:O3,amdgpu-sim:gfx1200:O3}
if [ -n "${RGPU_FUZZ:-}" ]; then
  read -r -a fuzz <<< "$RGPU_FUZZ"
elif [ -x "$root/.venv/bin/rgpu-fuzz" ]; then
  fuzz=("$root/.venv/bin/rgpu-fuzz")
else
  fuzz=(rgpu-fuzz)
fi
py=$(dirname "$(command -v "${fuzz[0]}")")/python
[ -x "$py" ] || py=python3
plugins=()
for p in ${NIGHTLY_PLUGINS:-}; do plugins+=(--plugin "$p"); done

log() { printf '%s nightly: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { printf 'ci/nightly.sh: error: %s\n' "$*" >&2; exit 2; }

run_shard() {  # I/N
  local spec=$1 i n dir args
  [[ $spec =~ ^([0-9]+)/([0-9]+)$ ]] || die "shard: expected I/N, e.g. 0/4, got \"$spec\""
  i=${BASH_REMATCH[1]}; n=${BASH_REMATCH[2]}
  (( n >= 1 && i < n )) || die "shard: need 0 <= I < N, got $spec"
  dir="$out/shard-$i-of-$n"
  mkdir -p "$dir"
  args=(campaign --time "$budget" --shard "$i/$n" --seed-start "$seed" --out "$dir" --json
        --pipelines "$pipelines" "${plugins[@]}")
  [ -n "${NIGHTLY_JOBS:-}" ] && args+=(--jobs "$NIGHTLY_JOBS")
  [ -n "${NIGHTLY_CASES:-}" ] && args+=(--cases "$NIGHTLY_CASES")
  # the bug-key probe answers of earlier nights (same toolchain only): not probed again
  [ -n "${NIGHTLY_HISTORY:-}" ] && [ -f "$NIGHTLY_HISTORY" ] && \
    args+=(--probes-from "$NIGHTLY_HISTORY")
  case ${NIGHTLY_REDUCE_BUDGET:-60s} in
    0|0s) args+=(--no-reduce) ;;
    *) args+=(--reduce-budget "${NIGHTLY_REDUCE_BUDGET:-60s}") ;;
  esac
  log "shard $i/$n: ${fuzz[*]} ${args[*]}"
  "${fuzz[@]}" "${args[@]}" > "$dir/summary.json.tmp"
  mv "$dir/summary.json.tmp" "$dir/summary.json"
  single_file "$dir/findings.sqlite"
  log "shard $i/$n: done ($dir)"
}

single_file() {  # a store as one self-contained file (no -wal/-shm beside it): an artefact
  "$py" -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
c.execute("PRAGMA journal_mode = DELETE")
c.close()' "$1"
}

finish() {
  local stores=() merged="$out/merged/findings.sqlite" rc=0
  shopt -s nullglob
  stores=("$out"/shard-*/findings.sqlite)
  shopt -u nullglob
  [ ${#stores[@]} -gt 0 ] || die "finish: no shard stores under $out (run the shards first)"
  rm -rf "$out/merged"
  mkdir -p "$out/merged"
  if [ -n "${NIGHTLY_HISTORY:-}" ] && [ -f "$NIGHTLY_HISTORY" ]; then
    log "finish: history $NIGHTLY_HISTORY"
    "${fuzz[@]}" triage merge --store "$merged" "$NIGHTLY_HISTORY" >&2
  fi
  log "finish: merging ${#stores[@]} shard stores into $merged"
  "${fuzz[@]}" triage merge --store "$merged" "${stores[@]}" >&2

  log "finish: rechecking open and fixed buckets"
  "${fuzz[@]}" triage recheck --store "$merged" --json --jobs "${NIGHTLY_JOBS:-$(nproc)}" \
    "${plugins[@]}" > "$out/recheck.json.tmp" || rc=$?
  [ $rc -le 1 ] || { log "finish: recheck failed (exit $rc)"; exit $rc; }
  mv "$out/recheck.json.tmp" "$out/recheck.json"
  "${fuzz[@]}" triage list --store "$merged" --sort count > "$out/buckets.txt"

  log "finish: reports"
  rm -rf "$out/buckets" "$out/report"
  mkdir -p "$out/buckets"
  # OUT/merged as one campaign directory: the shards' statistics and checkpoints joined
  "$py" "$here/nightly_report.py" "$out" --join-shards
  if "${fuzz[@]}" report campaign --help 2> /dev/null | grep -q -- --html; then
    # the campaign report: self-contained HTML, Markdown, plots, the top buckets
    "${fuzz[@]}" report campaign "$out/merged" --html "$out/report/index.html" \
      --md "$out/report/report.md" --top "$reports" >&2 \
      || log "finish: report campaign failed; $out/nightly.md has the summary"
  fi
  "$py" "$here/nightly_report.py" "$out" --reports "$reports" "${plugins[@]}"

  single_file "$merged"
  if [ -n "${NIGHTLY_HISTORY:-}" ]; then
    mkdir -p "$(dirname "$NIGHTLY_HISTORY")"
    rm -f "$NIGHTLY_HISTORY.tmp"
    "${fuzz[@]}" triage merge --store "$NIGHTLY_HISTORY.tmp" "$merged" >&2
    single_file "$NIGHTLY_HISTORY.tmp"
    mv "$NIGHTLY_HISTORY.tmp" "$NIGHTLY_HISTORY"
    log "finish: history updated ($NIGHTLY_HISTORY)"
  fi
  log "finish: $out/nightly.md"
  [ $rc -eq 0 ] || log "finish: a fixed bucket came back (see $out/recheck.json)"
  return $rc
}

case ${1:-all} in
  shard) [ $# -eq 2 ] || die "usage: ci/nightly.sh shard I/N"; run_shard "$2" ;;
  finish) finish ;;
  all)
    shards=${NIGHTLY_SHARDS:-1}
    [[ $shards =~ ^[1-9][0-9]*$ ]] || die "NIGHTLY_SHARDS: expected a count, got \"$shards\""
    for (( i = 0; i < shards; i++ )); do run_shard "$i/$shards"; done
    finish ;;
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
  *) die "unknown step \"$1\" (all, shard I/N, finish)" ;;
esac
