"""The campaign: generate → run → judge → reduce new buckets → store, on all cores.

Rules it keeps:
* **Nothing found is lost.** A case with a finding is written to `OUT/cases/` the moment its
  chunk returns, before anything else happens to it; a finding whose bucket is not known yet
  (wrong code awaiting reduction) is also listed in `OUT/pending/` until it is recorded, and
  a restarted campaign records those first.
* **Resumable and deterministic.** Seeds are cut into chunks; chunk `c` holds seeds
  `start + c*chunk ... start + (c+1)*chunk - 1`, and shard `i/N` runs the chunks with
  `c % N == i`. A chunk is checkpointed (`OUT/checkpoint.json`, written atomically) only after
  its findings are written, so a kill at any moment at worst re-runs a chunk; recording a
  case a second time is skipped.
* **The store is written by this process only** (workers return values), so one campaign
  never contends with itself; stores of several machines are combined with `triage merge`.
* **Bug keys are the workers' business**: a job keys its own wrong-code findings
  (`campaign_jobs.py`), with the probe answers this process knows; the answers it probed come
  back with its result and are kept in the store (`triage/store/probes.py`, per toolchain), so a
  probe runs about once per campaign and a resumed campaign probes nothing it knew.
* **Where jobs run is the executor's business** (`campaigns/executors/`: a local process pool,
  or Ray actors on a cluster). A job whose worker died comes back `lost` and is queued again
  (at most twice); since nothing of it was recorded, nothing is counted twice.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from campaigns.config import (
    CampaignConfig,
    CampaignError,
    Checkpoint,
    Progress,
    Summary,
    Tally,
    config_as_dict,
    parse_duration,
)
from campaigns.executors import Done, Executor, LocalExecutor
from campaigns.jobs import (
    ChunkJob,
    ChunkResult,
    Found,
    JudgeJob,
    JudgeResult,
    Keying,
    Probed,
    ReduceJob,
    ReduceResult,
    Slices,
    _parse,
)
from campaigns.stats import append_chunk_stats
from oracles import Finding, FindingKind, Signature, Verdict, kernel_operations
from rgpu_fuzz import casefile
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.errors import HarnessBug
from triage.bugkey import ProbeAnswer, TypedOp
from triage.classify import (
    is_bug_key,
    place,
    reduction_slot,
    slot_text,
    unreduced_bucket,
)
from triage.known_bugs import is_known_bug
from triage.store import FindingStore, StoreError, bucket_id, probe_toolchain
from triage.toolchains import begin_run

Job = ChunkJob | ReduceJob | JudgeJob

MAX_TRIES = 3
"""A job whose worker died is run again, at most this many times in all."""


class Campaign:
    """One campaign run into `config.out` (store, checkpoint, cases, reduced cases)."""

    def __init__(self, config: CampaignConfig,
                 on_progress: Callable[[Campaign], None] | None = None,
                 executor: Executor | None = None) -> None:
        self.config = config
        self.executor = executor or LocalExecutor(config.jobs)
        self.inflight: dict[int, Job] = {}   # executor ticket -> the job
        self.tries: Counter[Job] = Counter()
        self.out = config.out
        try:
            for sub in ("cases", "pending", "reduced", "reducing"):
                (self.out / sub).mkdir(parents=True, exist_ok=True)
            probe = self.out / ".write-test"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as e:
            raise CampaignError(f"--out {self.out}: cannot write a campaign folder there: "
                                f"{e.strerror or e}") from None
        # the checkpoint first: it refuses other settings before the store is opened
        self.checkpoint = Checkpoint(self.out / "checkpoint.json", config.identity())
        try:
            self.store = FindingStore(self.out / "findings.sqlite")
        except StoreError as e:
            raise CampaignError(str(e)) from None
        self.store.record_plugins(_plugin_names(config.setup.plugins))
        run = begin_run(self.store, "campaign", config.setup.pipelines, config.setup.plugins,
                        {**config.identity(), "time_s": config.time_s,
                         "max_cases": config.max_cases})
        self.toolchain = probe_toolchain(run.versions, config.setup.policy)
        self.probe_answers: dict[tuple[str, TypedOp], bool] = {
            (a.pipeline, a.op): a.broken for a in self.store.probe_answers(self.toolchain)}
        if config.probes_from is not None:
            known = [a for a in self._answers_in(config.probes_from)
                     if (a.pipeline, a.op) not in self.probe_answers]
            for a in known:
                self.probe_answers[(a.pipeline, a.op)] = a.broken
            if known:
                self.store.record_probes(self.toolchain, known)
        self.tally = Tally()
        self.on_progress = on_progress
        self.started = time.monotonic()
        self.pending_reductions: dict[Signature, Found] = {}   # reduction slot -> the case
        self.waiting: dict[Signature, list[Found]] = defaultdict(list)  # coarse key -> unplaced
        self.recorded: set[tuple[Signature, str]] = set()  # (finding's signature, case id)
        self.slices: dict[Signature, Slices] = {}
        """Reduction key -> the slices of that reduction so far."""
        self.resume_markers: dict[str, list[tuple[Path, Signature]]] = {}
        """Case id -> the `reducing/` markers (file, signature) of a resumed campaign."""
        # `max_cases` counts the whole campaign (a resumed one included) and cases as they
        # are submitted, so chunks in flight are not submitted past it.
        self.submitted_cases = int(self.checkpoint.totals.get("cases", 0))

    # ------------------------------------------------------------ chunks and seeds

    def chunk_indices(self) -> Iterator[int]:
        i, n = self.config.shard
        c = i
        while True:
            if c not in self.checkpoint.done:
                yield c
            c += n

    def seeds(self, chunk: int) -> tuple[int, ...]:
        start = self.config.seed_start + chunk * self.config.chunk
        return tuple(range(start, start + self.config.chunk))

    def out_of_budget(self) -> bool:
        cfg = self.config
        if cfg.time_s is not None and time.monotonic() - self.started >= cfg.time_s:
            return True
        return cfg.max_cases is not None and self.submitted_cases >= cfg.max_cases

    # ------------------------------------------------------------ the loop

    def run(self) -> Summary:
        """Run until the time or case budget is spent. Chunks still running when the time
        budget is spent get `overrun_grace_s()` to finish; then their workers are killed
        (their seeds were not checkpointed, so a resumed campaign runs them again), so a
        pipeline that hangs can never hold a campaign past its `--time`."""
        ex = self.executor
        t0 = time.monotonic()
        ex.start()
        self.tally.executor_start_s = time.monotonic() - t0
        chunks = self.chunk_indices()
        try:
            self._resume_pending()
            while True:
                while (not self.out_of_budget()
                       and self._chunks_in_flight() < 2 * ex.workers):
                    c = next(chunks)
                    job = ChunkJob(self.config.setup, c, self.seeds(c), self._keying())
                    self.submitted_cases += len(job.seeds)
                    self._submit(job)
                if not self.inflight:
                    break
                if self.overrun():
                    self._log(f"time budget spent: abandoned {len(self.inflight)} running "
                              "jobs (their chunks run again on resume)")
                    self.tally.abandoned_jobs += len(self.inflight)
                    break
                for done in ex.wait(timeout=1.0):
                    self._job_done(done)
                if self.on_progress:
                    self.on_progress(self)
        finally:
            ex.stop(kill=bool(self.inflight))
        self._flush_waiting()
        return self.summary()

    def _submit(self, job: Job) -> None:
        self.inflight[self.executor.submit(job)] = job

    def _answers_in(self, path: Path) -> list[ProbeAnswer]:
        try:
            with FindingStore(path, readonly=True) as other:
                return other.probe_answers(self.toolchain)
        except StoreError as e:
            raise CampaignError(f"--probes-from {path}: {e}") from None

    def _keying(self) -> Keying:
        """What a job needs to key its findings: every probe answer known so far."""
        if not self.config.keys_findings:
            return Keying()
        return Keying(True, tuple(ProbeAnswer(label, op, broken) for (label, op), broken
                                  in self.probe_answers.items()),
                      attribute=not self.config.reduce)

    def _learn(self, probed: Probed) -> None:
        """Keep the answers a job probed (for later jobs and, in the store, later runs)."""
        self.tally.probes += probed.stats.probes
        self.tally.probe_seconds += probed.stats.seconds
        fresh = [a for a in probed.answers if (a.pipeline, a.op) not in self.probe_answers]
        for a in fresh:
            self.probe_answers[(a.pipeline, a.op)] = a.broken
        if fresh:
            self.store.record_probes(self.toolchain, fresh)

    def _chunks_in_flight(self) -> int:
        return sum(1 for j in self.inflight.values() if isinstance(j, ChunkJob))

    def _job_done(self, done: Done) -> None:
        job = self.inflight.pop(done.ticket)
        if done.lost:
            # the worker died: nothing of this job was recorded, so running it again
            # counts nothing twice
            self.tally.lost_jobs += 1
            self.tries[job] += 1
            if self.tries[job] < MAX_TRIES:
                self._log(f"worker died: running {_describe(job)} again")
                self._submit(job)
            else:
                self._log(f"giving up on {_describe(job)} after {MAX_TRIES} worker deaths")
            return
        if done.error is not None:
            if isinstance(job, ReduceJob):  # a harness bug in a reduction: keep the finding
                self._reduction_failed(job, done.error)
                return
            raise HarnessBug(f"a worker raised running {_describe(job)}:\n{done.error}")
        assert done.result is not None
        self._learn(done.result.probed)
        if isinstance(done.result, ChunkResult):
            self._chunk_done(done.result)
        elif isinstance(done.result, JudgeResult):
            assert isinstance(job, JudgeJob)
            self._judged(job, done.result)
        else:
            assert isinstance(done.result, ReduceResult)
            self._reduction_done(done.result)

    def overrun_grace_s(self) -> float:
        """How long running jobs may go on once the time budget is spent."""
        return min(30.0, max(2.0, 0.1 * (self.config.time_s or 0.0)))

    def overrun(self) -> bool:
        """The time budget is spent and so is the grace for jobs still running."""
        t = self.config.time_s
        return t is not None and time.monotonic() - self.started >= t + self.overrun_grace_s()

    def _log(self, line: str) -> None:
        with open(self.out / "campaign.log", "a", encoding="utf-8") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")

    # ------------------------------------------------------------ results

    def _chunk_done(self, result: ChunkResult) -> None:
        t = self.tally
        t.cases += result.cases
        t.chunks += 1
        t.gen_seconds += result.gen_seconds
        for label, secs in result.seconds.items():
            t.seconds[label].extend(secs)
        for label, counts in result.statuses.items():
            t.statuses[label].update(counts)
        t.invalid.update(result.invalid)
        for found in result.found:
            case = casefile.loads(found.case_toml)
            casefile.save(case, self.out / "cases" / f"{case.id}.toml")
        if result.harness_errors:
            (self.out / "harness-errors").mkdir(exist_ok=True)
        for seed, tb in result.harness_errors:
            t.harness_errors += 1
            (self.out / "harness-errors" / f"seed-{seed}.txt").write_text(
                f"profile {self.config.setup.profile}, seed {seed}\n{tb}", encoding="utf-8")
        for found in result.found:
            t.cases_with_findings += 1
            t.findings += len(found.verdict.findings)
            self._classify(found)
        self.checkpoint.mark(result.index, result.cases, sum(len(f.verdict.findings)
                                                              for f in result.found))
        append_chunk_stats(self.out, result, self.started)  # OUT/stats.jsonl for the report

    def _known(self) -> list[Signature]:
        return [b.signature for b in self.store.buckets()]

    def _classify(self, found: Found) -> None:
        case = casefile.loads(found.case_toml)
        known = self._known()
        for finding in found.verdict.findings:
            bug_key = found.bug_keys.get(finding.signature)
            sig = place(finding, found.ops, known, bug_key=bug_key,
                        keyed=self.config.keys_findings) \
                if self.config.reduce else unreduced_bucket(finding, bug_key)
            if sig is not None:
                new = self._record(case, found, finding, sig)
                if new and self.config.reduce and finding.kind is not FindingKind.INVALID_CASE \
                        and not is_known_bug(sig):  # a known bug needs no reduction
                    # a bug-keyed bucket keeps its key whatever the reduction leaves
                    self._submit_reduction(found, sig if is_bug_key(sig) else finding.signature)
                continue
            key = finding.signature.coarse
            (self.out / "pending" / f"{case.id}.toml").write_text(found.case_toml,
                                                                  encoding="utf-8")
            if key in self.pending_reductions:
                self.waiting[key].append(found)
            else:
                self._submit_reduction(found, finding.signature)

    def _record(self, case: Case, found: Found, finding: Finding, signature: Signature) -> bool:
        """Count the finding in bucket `signature`; True when that bucket is new. A finding
        is counted once, whatever bucket a later step (a reduction, the end of the
        campaign) would give it: a bug-keyed one is counted before its reduction ends."""
        marker = (finding.signature, case.id)
        if marker in self.recorded:
            return False
        self.recorded.add(marker)
        if any(b.signature == signature for b in self.store.buckets_of_case(case.id)):
            # counted before a restart (its chunk re-ran after a kill): not again
            (self.out / "pending" / f"{case.id}.toml").unlink(missing_ok=True)
            return False
        verdict = Verdict(findings=(replace(finding, signature=signature),),
                          compared=found.verdict.compared)
        updates = self.store.record(case, verdict, found.outcomes)
        new = any(u.new for u in updates)
        if new:
            self.tally.new_buckets.append(str(signature))
        pending = self.out / "pending" / f"{case.id}.toml"
        if pending.exists():
            pending.unlink()
        return new

    def _submit_reduction(self, found: Found, signature: Signature) -> None:
        key = reduction_slot(signature)
        self.pending_reductions[key] = found
        # listed until it finishes, so a killed campaign redoes it when resumed
        (self.out / "reducing" / f"{bucket_id(slot_text(key))}.json").write_text(json.dumps(
            {"signature": str(signature), "case_toml": found.case_toml}), encoding="utf-8")
        self.slices[key] = Slices()
        self._submit(ReduceJob(self.config.setup, found.case_toml, signature,
                               min(self.config.reduce_slice_s, self.config.reduce_budget_s),
                               self._keying()))

    def _reduction_done(self, result: ReduceResult) -> None:
        key = reduction_slot(result.signature)
        slices = self.slices.setdefault(key, Slices())
        slices.add(result)
        left = self.config.reduce_budget_s - slices.seconds
        if result.reduced_toml is not None and result.out_of_time and left >= 1.0:
            # go on from where this slice stopped, behind the jobs queued meanwhile
            self._submit(ReduceJob(self.config.setup, result.reduced_toml, result.signature,
                                   min(self.config.reduce_slice_s, left), self._keying(),
                                   result.tested))
            return
        del self.slices[key]
        result = slices.whole(result)
        found = self.pending_reductions.pop(key)
        (self.out / "reducing" / f"{bucket_id(slot_text(key))}.json").unlink(missing_ok=True)
        original = casefile.loads(found.case_toml)
        finding = next(f for f in found.verdict.findings
                       if f.signature.coarse == key.coarse)
        self.tally.reductions.append({
            "signature": str(result.reduced_signature), "lines_before": result.lines_before,
            "lines_after": result.lines_after, "tokens_before": result.tokens_before,
            "tokens_after": result.tokens_after, "candidates": result.tried,
            "seconds": round(result.seconds, 3), "reproduced": result.reduced_toml is not None,
            "slices": slices.count})
        sig = result.reduced_signature
        if result.known_key is not None:
            sig = result.known_key  # a known LLVM bug, rechecked on the reduced kernel
        elif is_bug_key(result.signature):
            sig = result.signature
        elif result.reduced_toml is not None:
            # A reduction that stopped early (budget, local minimum) may keep operations an
            # existing bucket of the same bug does without: it belongs to that bucket.
            module = _parse(casefile.loads(result.reduced_toml))
            ops = kernel_operations(module) if module is not None else ()
            reduced_finding = replace(finding, signature=sig)
            sig = place(reduced_finding, ops, self._known(), reduced=True,
                        bug_key=result.bug_key, keyed=self.config.keys_findings) or sig
        self._record(original, found, finding, sig)
        # the reduction's first step re-ran the original: that is one reproduction attempt
        self.store.record_reproduction(sig, result.reduced_toml is not None)
        if result.reduced_toml is not None and result.verdict is not None:
            reduced = casefile.loads(result.reduced_toml)
            casefile.save(reduced, self.out / "reduced" / f"{bucket_id(sig)}.toml")
            found_as = result.reduced_signature if result.known_key else sig
            best = next((f for f in result.verdict.findings
                         if f.signature.coarse == found_as.coarse), None)
            self.store.set_best(sig, reduced, finding=best, outcomes=result.outcomes)
        else:
            self.store.set_status(bucket_id(sig), "flaky",
                                  note="did not reproduce when reduction started")
        self._release_waiting(key)

    def _reduction_failed(self, job: ReduceJob, tb: str) -> None:
        """rgpu-fuzz raised while reducing: keep the traceback, record the finding under its
        unreduced signature (nothing found is lost), and let the findings that waited go on."""
        key = reduction_slot(job.signature)
        self.slices.pop(key, None)
        found = self.pending_reductions.pop(key)
        (self.out / "reducing" / f"{bucket_id(slot_text(key))}.json").unlink(missing_ok=True)
        case = casefile.loads(found.case_toml)
        self.tally.harness_errors += 1
        (self.out / "harness-errors").mkdir(exist_ok=True)
        (self.out / "harness-errors" / f"reduce-{case.id}.txt").write_text(
            f"reducing case {case.id} for {job.signature}\n{tb}", encoding="utf-8")
        for f in found.verdict.findings:
            if f.signature.coarse == key.coarse:
                self._record(case, found, f, f.signature)
        self._release_waiting(key)

    def _release_waiting(self, key: Signature) -> None:
        """Findings that waited for bucket `key`: place them now, or reduce the next one."""
        waiting = self.waiting.pop(key, [])
        known = self._known()
        for other in waiting:
            case = casefile.loads(other.case_toml)
            f = next(x for x in other.verdict.findings if x.signature.coarse == key)
            placed = place(f, other.ops, known, bug_key=other.bug_keys.get(f.signature),
                           keyed=self.config.keys_findings)
            if placed is not None:
                self._record(case, other, f, placed)
            elif key in self.pending_reductions:
                self.waiting[key].append(other)
            else:
                self._submit_reduction(other, f.signature)

    def _flush_waiting(self) -> None:
        """At the end, findings still waiting for a reduction are recorded under their own
        unreduced signature, so none is lost."""
        for key, founds in list(self.waiting.items()) + [
                (k, [f]) for k, f in self.pending_reductions.items()]:
            for found in founds:
                case = casefile.loads(found.case_toml)
                for f in found.verdict.findings:
                    if f.signature.coarse == key.coarse:
                        self._record(case, found, f, f.signature)
        self.waiting.clear()
        self.pending_reductions.clear()

    def _resume_pending(self) -> None:
        """Finish what a stopped campaign left: the cases of the reductions listed in
        `reducing/` and the findings in `pending/` (never placed in a bucket) are judged
        again in one job, like any other job on the executor; `_judged` then restarts the
        reductions that still reproduce and classifies the rest."""
        markers = sorted((self.out / "reducing").glob("*.json"))
        files = sorted((self.out / "pending").glob("*.toml"))
        if not markers and not files:
            return
        self.resume_markers = {}
        texts: list[str] = []
        for marker in markers:
            job = json.loads(marker.read_text(encoding="utf-8"))
            case = casefile.loads(job["case_toml"])
            self.resume_markers.setdefault(case.id, []).append(
                (marker, Signature.parse(job["signature"])))
            texts.append(casefile.dumps(case))
        for path in files:
            case = casefile.load(path)
            if case.id not in self.resume_markers:  # recorded when its reduction finishes
                texts.append(casefile.dumps(case))
        self._submit(JudgeJob(self.config.setup, tuple(dict.fromkeys(texts)), self._keying()))

    def _judged(self, job: JudgeJob, result: JudgeResult) -> None:
        found = {casefile.loads(f.case_toml).id: f for f in result.found}
        for case_id in result.judged:
            for marker, signature in self.resume_markers.get(case_id, []):
                key = reduction_slot(signature)
                again = found.get(case_id)
                if again is None or not any(f.signature.coarse == key.coarse
                                            for f in again.verdict.findings):
                    marker.unlink(missing_ok=True)  # no longer reproduces: nothing to reduce
                elif key in self.pending_reductions:
                    self.waiting[key].append(again)
                else:
                    self._submit_reduction(again, signature)
        for case_id in result.judged:
            if case_id in self.resume_markers:
                continue
            again = found.get(case_id)
            if again is None:
                (self.out / "pending" / f"{case_id}.toml").unlink(missing_ok=True)
            else:
                self._classify(again)
        self.resume_markers = {}

    # ------------------------------------------------------------ summary

    def progress(self) -> Progress:
        """The live line's figures; cheap enough to call after every finished job."""
        t = self.tally
        elapsed = time.monotonic() - self.started
        rate = t.cases / elapsed if elapsed > 0 else 0.0
        left: float | None = None
        if self.config.time_s is not None:
            left = max(0.0, self.config.time_s - elapsed)
        if self.config.max_cases is not None and rate > 0:
            done = int(self.checkpoint.totals.get("cases", 0))
            by_cases = max(0, self.config.max_cases - done) / rate
            left = by_cases if left is None else min(left, by_cases)
        return Progress(elapsed_s=elapsed, cases=t.cases, cases_per_s=rate,
                        findings=t.findings, buckets=len(self.store.buckets()),
                        reductions_running=len(self.pending_reductions), left_s=left)

    def summary(self) -> Summary:
        t = self.tally
        elapsed = time.monotonic() - self.started
        workers = self.executor.workers or self.config.jobs
        pipes = {}
        for label, secs in t.seconds.items():
            pipes[label] = {"median_s": statistics.median(secs) if secs else None,
                            "total_s": round(sum(secs), 3),
                            "statuses": dict(t.statuses[label])}
        buckets = [{"id": b.id, "signature": str(b.signature), "count": b.count,
                    "status": str(b.status), "best_size": b.best_size}
                   for b in self.store.buckets(order_by="count")]
        data = {
            "out": str(self.out), "config": self.config.identity(), "jobs": workers,
            "executor": self.executor.name,
            "seconds": round(elapsed, 3), "cases": t.cases, "chunks": t.chunks,
            "cases_per_s": round(t.cases / elapsed, 3) if elapsed else 0.0,
            "cases_per_s_per_core": round(t.cases / elapsed / workers, 3)
            if elapsed else 0.0,
            "generation_s_per_case": round(t.gen_seconds / t.cases, 5) if t.cases else None,
            "pipelines": pipes, "invalid_cases": dict(t.invalid),
            "cases_with_findings": t.cases_with_findings, "findings": t.findings,
            "new_buckets": len(t.new_buckets), "buckets": buckets,
            "reductions": t.reductions, "harness_errors": t.harness_errors,
            "pipeline_errors": {label: c["pipeline-error"] for label, c in t.statuses.items()
                                if c["pipeline-error"]},
            "timeouts": {label: c["timeout"] for label, c in t.statuses.items()
                         if c["timeout"]},
            "abandoned_jobs": t.abandoned_jobs, "lost_jobs": t.lost_jobs,
            "executor_start_s": round(t.executor_start_s, 3),
            "probes": t.probes, "probe_seconds": round(t.probe_seconds, 3),
            "resumed_totals": self.checkpoint.totals,
        }
        return Summary(data)

    def close(self) -> None:
        self.store.end_run()
        self.store.close()


def _describe(job: Job) -> str:
    if isinstance(job, ChunkJob):
        return f"chunk {job.index} (seeds {job.seeds[0]}..{job.seeds[-1]})" if job.seeds \
            else f"chunk {job.index}"
    if isinstance(job, JudgeJob):
        return f"judging again the {len(job.cases)} findings a stopped run left"
    return f"the reduction for {str(job.signature)[:80]}"


def _plugin_names(files: tuple[str, ...]) -> dict[str, str]:
    """Pipeline name -> the `--plugin` file that defines it (recorded in the store)."""
    from rgpu_fuzz.pipelines.registry import Registry

    reg = Registry()
    return {name: path for path in files for name in reg.load_plugin(path)}


__all__ = ["Campaign", "CampaignConfig", "CampaignError", "Progress", "Summary",
           "config_as_dict", "parse_duration"]
