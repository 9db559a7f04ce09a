"""The work a campaign hands to its worker processes: run a chunk of seeds, reduce a finding,
judge stored cases again.

All are top-level functions over frozen jobs of plain data, so they run in any process. Each
worker process keeps its pipelines, profile, policy and bug-key probe answers between jobs
(start-up is the expensive part of a small job).

Bug keys (`triage/bugkey.py`) are computed here, in the worker that found the finding, not
in the campaign's process: a probe compiles and runs a kernel, and in the campaign's single
loop every probe held up every other job's bookkeeping (probes cost 6-30 s of a
60-s campaign). A job carries the probe answers the campaign knows (from earlier jobs and
its store) and its result returns the answers it probed, so each operation is probed about
once per campaign, whichever worker meets it first.
"""

from __future__ import annotations

import time
import traceback
from collections import Counter
from dataclasses import dataclass, field, replace

from campaigns.stats import SimOpcodeCapture
from oracles import Policy, Signature, Verdict, judge, kernel_operations, load_policy
from rgpu_fuzz import casefile
from rgpu_fuzz.lang.ast import Module
from rgpu_fuzz.lang.features import case_features, case_module
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import Outcome, Rejected
from rgpu_fuzz.pipelines.base import Pipeline, spec_name
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.runner import run_case, run_cases
from triage.bugkey import BugKeys, ProbeAnswer, ProbeStats
from triage.classify import is_bug_key
from triage.known_bugs import KnownBugs, is_known_bug
from triage.rerun import rerun

NO_PROBES = ProbeStats(0, 0.0)


@dataclass(frozen=True, slots=True)
class Setup:
    """What every job of one campaign shares; the key of the per-process cache."""

    pipelines: tuple[str, ...]
    profile: str
    policy: str
    plugins: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Keying:
    """Whether a job keys its wrong-code findings, and the probe answers already known."""

    enabled: bool = False
    known: tuple[ProbeAnswer, ...] = ()
    attribute: bool = False
    """Key a kernel with several broken families by the one it shows alone
    (`BugKeys.shown`): for a campaign that does not reduce its findings."""


@dataclass(frozen=True, slots=True)
class ChunkJob:
    setup: Setup
    index: int
    seeds: tuple[int, ...]
    keying: Keying = Keying()


@dataclass(frozen=True, slots=True)
class Found:
    """A case with at least one finding, with everything needed to record and reduce it."""

    case_toml: str
    outcomes: dict[str, Outcome]
    verdict: Verdict
    ops: tuple[str, ...]
    bug_keys: dict[Signature, Signature] = field(default_factory=dict)
    """Finding signature -> its bug key, for the wrong-code findings that have one (only
    when the job asked for keys)."""


@dataclass(frozen=True, slots=True)
class Probed:
    """What a job's bug keys cost and learnt: the answers it probed itself."""

    answers: list[ProbeAnswer] = field(default_factory=list)
    stats: ProbeStats = NO_PROBES


@dataclass(frozen=True, slots=True)
class ChunkResult:
    index: int
    cases: int
    gen_seconds: float
    seconds: dict[str, list[float]]
    statuses: dict[str, Counter[str]]
    invalid: Counter[str]
    found: list[Found] = field(default_factory=list)
    harness_errors: list[tuple[int, str]] = field(default_factory=list)
    """(seed, traceback) for seeds on which rgpu-fuzz itself raised: bugs to fix, kept so
    the campaign goes on and nothing is lost."""
    features: Counter[str] = field(default_factory=Counter)
    """Cases of the chunk using each language feature (`lang/features.py`; campaign_stats)."""
    opcodes: dict[str, Counter[str]] | None = None
    """Simulator opcodes executed in the chunk, per pipeline spec (campaign_stats)."""
    probed: Probed = Probed()


@dataclass(frozen=True, slots=True)
class ReduceJob:
    setup: Setup
    case_toml: str
    signature: Signature
    budget_s: float
    keying: Keying = Keying()
    tested: dict[str, bool] = field(default_factory=dict)
    """Candidates an earlier slice of this reduction tested (`reduce.case_key` ->
    interesting): a slice resumes the passes from their start, and without these it tested
    again what the slice before had (one reduction took 43 s in 3 slices, 14 s in one)."""


@dataclass(frozen=True, slots=True)
class ReduceResult:
    signature: Signature
    """The signature the reduction kept (as given in the job)."""
    original_id: str
    reduced_toml: str | None
    """None when the original no longer showed the finding (flaky)."""
    reduced_signature: Signature
    outcomes: dict[str, Outcome]
    verdict: Verdict | None
    lines_before: int
    lines_after: int
    tokens_before: int
    tokens_after: int
    tried: int
    seconds: float
    out_of_time: bool = False
    """The budget ran out before the reducer reached a fixpoint (more may be removable)."""
    bug_key: Signature | None = None
    """The bug key of the reduced kernel's finding (asked for when the job's signature is
    not a bug key already)."""
    probed: Probed = Probed()
    tested: dict[str, bool] = field(default_factory=dict)
    """The job's `tested` and every candidate this slice tested (for the next slice)."""
    known_key: Signature | None = None
    """The known-LLVM-bug signature that explains the reduced kernel's finding
    (`triage/known_bugs.py`), rechecked on the reduced kernel: the recheck of the unreduced
    one can fail where this succeeds (llc-22 crashed on the MIR round trip of a large
    kernel, bucket 8081e0ac57)."""


@dataclass(frozen=True, slots=True)
class JudgeJob:
    """Cases run and judged again: the findings a stopped campaign had not placed yet."""

    setup: Setup
    cases: tuple[str, ...]
    """Case files (TOML text)."""
    keying: Keying = Keying()


@dataclass(frozen=True, slots=True)
class JudgeResult:
    judged: list[str]
    """The ids of every case of the job, in its order."""
    found: list[Found]
    """The cases that still have findings."""
    probed: Probed = Probed()


_cache: dict[Setup, tuple[Registry, list[Pipeline], Policy, object]] = {}


def _prepared(setup: Setup) -> tuple[Registry, list[Pipeline], Policy, object]:
    got = _cache.get(setup)
    if got is None:
        from generators import load_profile

        reg = Registry()
        for path in setup.plugins:
            reg.load_plugin(path)
        got = (reg, reg.create_all(setup.pipelines), load_policy(setup.policy),
               load_profile(setup.profile))
        _cache[setup] = got
    return got


def _parse(case: Case) -> Module | None:
    return case_module(case)


_keys: dict[Setup, BugKeys] = {}


def _bug_keys(setup: Setup, keying: Keying) -> BugKeys | None:
    """This process's bug keys for `setup` (probe answers kept between jobs), told what the
    campaign knows; None when the job asks for no keys."""
    if not keying.enabled:
        return None
    keys = _keys.get(setup)
    if keys is None:
        _, pipelines, policy, _ = _prepared(setup)
        keys = _keys[setup] = BugKeys(pipelines, policy)
    keys.learn(keying.known)
    return keys


def _key_findings(keys: BugKeys | None, case: Case, verdict: Verdict,
                  attribute: bool = False) -> dict[Signature, Signature]:
    out: dict[Signature, Signature] = {}
    if keys is None:
        return out
    for f in verdict.findings:
        if f.signature not in out:
            # None for anything but wrong code
            key = keys.key(f.signature, case, attribute=attribute)
            if key is not None:
                out[f.signature] = key
    return out


_known: dict[Setup, KnownBugs] = {}


def _known_keys(setup: Setup, case: Case, outcomes: dict[str, Outcome], verdict: Verdict,
                module: Module | None,
                keyed: dict[Signature, Signature]) -> dict[Signature, Signature]:
    """`keyed` with the findings a known LLVM bug explains keyed by that bug
    (`triage/known_bugs.py`: one extra run of the finding's pipeline each, where one applies)."""
    reg, pipelines, policy, _ = _prepared(setup)
    known = _known.get(setup)
    if known is None:
        known = _known[setup] = KnownBugs(reg, policy)
    by_label = {p.label: p for p in pipelines}
    out = dict(keyed)
    for f in verdict.findings:
        key = known.key(f, case, outcomes, by_label, module)
        if key is not None:
            out[f.signature] = key
    return out


def _probed(keys: BugKeys | None, before: ProbeStats) -> Probed:
    if keys is None:
        return Probed()
    after = keys.stats
    return Probed(keys.take_fresh(), ProbeStats(after.probes - before.probes,
                                                round(after.seconds - before.seconds, 3)))


def run_chunk(job: ChunkJob) -> ChunkResult:
    """Generate and run every seed of the chunk; keep only what has findings."""
    from generators import SeededChoices, generate

    _, pipelines, policy, profile = _prepared(job.setup)
    keys = _bug_keys(job.setup, job.keying)
    probes_before = keys.stats if keys is not None else NO_PROBES
    batching = [p for p in pipelines if p.batches]
    seconds: dict[str, list[float]] = {p.label: [] for p in pipelines}
    statuses: dict[str, Counter[str]] = {p.label: Counter() for p in pipelines}
    invalid: Counter[str] = Counter()
    features: Counter[str] = Counter()
    found: list[Found] = []
    errors: list[tuple[int, str]] = []
    gen = 0.0
    cases: list[Case] = []
    for seed in job.seeds:
        t0 = time.perf_counter()
        try:
            cases.append(generate(SeededChoices(seed), profile, seed=seed))  # type: ignore[arg-type]
        except Exception:  # a harness bug on this seed: report it, keep going
            errors.append((seed, traceback.format_exc()))
        gen += time.perf_counter() - t0
    capture = SimOpcodeCapture.start()
    try:
        all_outcomes = run_cases(cases, pipelines)  # batching pipelines share work
    except Exception:
        all_outcomes = []
        for case in cases:  # find the case that breaks the harness; run the others
            try:
                all_outcomes.append(run_case(case, pipelines))
            except Exception:
                errors.append((case.provenance.seed or -1, traceback.format_exc()))
                all_outcomes.append({})
    for case, outcomes in zip(cases, all_outcomes, strict=True):
        if not outcomes:
            continue
        for label, o in outcomes.items():  # also the reference at other wave sizes (runner)
            seconds.setdefault(label, []).append(o.stats.seconds.get("total", 0.0))
            statuses.setdefault(label, Counter())[str(o.status)] += 1
        arbiter = outcomes.get(policy.arbiter)
        if isinstance(arbiter, Rejected):
            invalid[str(arbiter.reason)] += 1
        features.update(case_features(case))
        module = _parse(case)
        verdict = judge(case, outcomes, policy, module)
        if not verdict.agree and _implicates(verdict, batching, policy):
            outcomes, verdict, note = _alone(case, outcomes, verdict, batching, policy, module,
                                             len(cases))
            if note:
                errors.append((case.provenance.seed or -1, note))
        if not verdict.agree:
            ops = kernel_operations(module) if module is not None else ()
            found.append(Found(casefile.dumps(case), outcomes, verdict, ops,
                               _known_keys(job.setup, case, outcomes, verdict, module,
                                           _key_findings(keys, case, verdict,
                                                         job.keying.attribute))))
    return ChunkResult(job.index, len(job.seeds), gen, seconds, statuses, invalid, found,
                       errors, features, capture.collect(), _probed(keys, probes_before))


def judge_cases(job: JudgeJob) -> JudgeResult:
    """Run and judge each case of the job again, as `run_chunk` judges a generated one."""
    _, pipelines, policy, _ = _prepared(job.setup)
    keys = _bug_keys(job.setup, job.keying)
    before = keys.stats if keys is not None else NO_PROBES
    judged: list[str] = []
    found: list[Found] = []
    for text in job.cases:
        case = casefile.loads(text)
        judged.append(case.id)
        got = rerun(case, pipelines, policy)
        outcomes, verdict, module = dict(got.outcomes), got.verdict, _parse(case)
        if not verdict.agree:
            ops = kernel_operations(module) if module is not None else ()
            found.append(Found(casefile.dumps(case), outcomes, verdict, ops,
                               _known_keys(job.setup, case, outcomes, verdict, module,
                                           _key_findings(keys, case, verdict,
                                                         job.keying.attribute))))
    return JudgeResult(judged, found, _probed(keys, before))


def _implicates(verdict: Verdict, batching: list[Pipeline], policy: Policy) -> bool:
    """Whether a batching pipeline's outcome may be part of a finding: it is named by one,
    or the arbiter is (then every other outcome is evidence), or one names no pipeline. A
    finding only on pipelines that ran each case alone (a simulator's crash) needs no second
    run of the batching ones."""
    if not batching:
        return False
    labels = {p.label for p in batching}
    arbiter = spec_name(policy.arbiter)
    for f in verdict.findings:
        named = set(f.pipelines)
        if not named or named & labels or any(spec_name(n) == arbiter for n in named):
            return True
    return False


def _alone(case: Case, outcomes: dict[str, Outcome], verdict: Verdict,
           batching: list[Pipeline], policy: Policy, module: Module | None, batch: int,
           ) -> tuple[dict[str, Outcome], Verdict, str]:
    """A case with findings, run again alone on every pipeline that ran it in a batch: what
    is recorded (and reduced, and reproduced) is what the case does by itself. A finding
    that shows only one way — in the batch and not alone, or the other way round — is a
    divergence of its own, returned as a note for the campaign's harness errors (with the
    case), not dropped."""
    feats = case_features(case)
    single = {**outcomes, **{p.label: p.run(case, feats) for p in batching}}
    again = judge(case, single, policy, module)
    before = {f.signature for f in verdict.findings}
    after = {f.signature for f in again.findings}
    if before == after:
        return single, again, ""
    lines = [f"batch-only finding: {s}" for s in sorted(before - after)]
    lines += [f"alone-only finding: {s}" for s in sorted(after - before)]
    return single, again, (
        "\n".join(lines) + f"\n(in a batch of {batch} cases on "
        f"{', '.join(p.label for p in batching)}, and alone; the case:)\n{casefile.dumps(case)}")


def reduce_finding(job: ReduceJob) -> ReduceResult:
    """Reduce one finding's case while its signature (ops aside) holds; then judge the
    reduced case to learn the full signature it is bucketed under."""
    from triage.reduce import reduce_case, signature_predicate

    reg, pipelines, policy, _ = _prepared(job.setup)
    keys = _bug_keys(job.setup, job.keying)
    before = keys.stats if keys is not None else NO_PROBES
    case = casefile.loads(job.case_toml)
    interesting = signature_predicate(job.signature, pipelines, policy, registry=reg)
    tested = dict(job.tested)
    red = reduce_case(case, interesting, budget_s=job.budget_s, cache=tested)
    if not red.interesting_at_start:
        return ReduceResult(job.signature, case.id, None, job.signature, {}, None,
                            red.lines_before, red.lines_before, red.tokens_before,
                            red.tokens_before, red.tried, red.seconds,
                            probed=_probed(keys, before), tested=tested)
    reduced = red.case
    got = rerun(reduced, pipelines, policy)
    outcomes, verdict, module = dict(got.outcomes), got.verdict, _parse(reduced)
    want = job.signature.coarse
    finding = next((f for f in verdict.findings if f.signature.coarse == want), None)
    sig = job.signature if finding is None else finding.signature
    known = None if finding is None or is_known_bug(job.signature) else \
        _known_keys(job.setup, reduced, outcomes, replace(verdict, findings=(finding,)),
                    module, {}).get(sig)
    # a bug-keyed bucket keeps its key whatever the reduction leaves (campaign.py)
    key = keys.key(sig, reduced) if keys is not None and not is_bug_key(job.signature) \
        else None
    return ReduceResult(job.signature, case.id, casefile.dumps(reduced), sig, outcomes, verdict,
                        red.lines_before, red.lines_after, red.tokens_before, red.tokens_after,
                        red.tried, red.seconds, red.out_of_time, key, _probed(keys, before),
                        tested, known)


class Slices:
    """The jobs of one reduction so far (`CampaignConfig.reduce_slice_s`)."""

    def __init__(self) -> None:
        self.first: ReduceResult | None = None
        self.last_good: ReduceResult | None = None
        self.seconds = 0.0
        self.tried = 0
        self.count = 0

    def add(self, result: ReduceResult) -> None:
        self.first = self.first or result
        if result.reduced_toml is not None:
            self.last_good = result
        self.seconds += result.seconds
        self.tried += result.tried
        self.count += 1

    def whole(self, last: ReduceResult) -> ReduceResult:
        """The reduction as one result: from the first slice's case to the smallest case
        any slice reproduced (a slice whose start no longer reproduced — flaky — is passed
        over), with the sums of all slices."""
        assert self.first is not None
        best = self.last_good or last
        reduced = best.reduced_toml
        if reduced is not None and self.count > 1:  # parent: the original, not a slice's case
            case = casefile.loads(reduced)
            reduced = casefile.dumps(replace(case, provenance=replace(
                case.provenance, parent=self.first.original_id)))
        return replace(best, original_id=self.first.original_id, reduced_toml=reduced,
                       lines_before=self.first.lines_before,
                       tokens_before=self.first.tokens_before, tried=self.tried,
                       seconds=self.seconds)
