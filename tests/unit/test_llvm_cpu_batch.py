"""`llvm-cpu` batches (`LlvmCpuPipeline._run_many`, `execute_batch`): a chunk's kernels in one
module, optimised once, run from one MCJIT engine. Each case must come out as it does alone
(the single-case path, `run`), a fault in one case must lose nothing of the others, and the
campaign must check a batch's finding alone and report one that shows only in a batch.
Expected values are by hand where a kernel computes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from campaigns.jobs import ChunkJob, Setup, run_chunk
from rgpu_fuzz import casefile
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import CompileCrash, Ok, Outcome, Timeout, Trap, TrapKind
from rgpu_fuzz.pipelines import llvm_cpu, toolchain
from rgpu_fuzz.pipelines.registry import Registry
from tests.unit.test_llvm_cpu import bits, make_case

PLUGINS = Path(__file__).resolve().parent.parent / "plugins"

LOOKUP = """
    let t: u32 = a[0usize] % 8u32;
    out[0usize] = if t == 0u32 { 13u32 } else if t == 1u32 { 71u32 } else if t == 2u32 { 5u32 }
        else if t == 3u32 { 99u32 } else if t == 4u32 { 1234u32 } else if t == 5u32 { 77u32 }
        else if t == 6u32 { 8u32 } else { 41u32 };
"""
"""An if-chain on a small index: SimplifyCFG turns it into a switch and then into a lookup
table, addressed with a 32-bit absolute relocation under the static relocation model."""

CASES: list[tuple[Case, list[int] | TrapKind]] = [
    (make_case("out[0usize] = a[0usize] ^ 5u32;", inputs=(3,)), [6, 0, 0, 0, 0, 0, 0, 0]),
    (make_case("out[0usize] = a[0usize] / a[1usize];", inputs=(7, 0)), TrapKind.DIV_BY_ZERO),
    (make_case(LOOKUP, inputs=(5,)), [77, 0, 0, 0, 0, 0, 0, 0]),
    (make_case("out[a[0usize] as usize] = 1u32;", inputs=(9,)), TrapKind.OUT_OF_BOUNDS),
    (make_case("let t: usize = thread_idx_x() as usize;\nout[t] = h(t as u32);",
               items="fn h(x: u32) -> u32 { x * x + 1u32 }", block=8),
     [1, 2, 5, 10, 17, 26, 37, 50]),
]


def _same(a: Outcome, b: Outcome) -> bool:
    if isinstance(a, Ok) and isinstance(b, Ok):
        return bits(a) == bits(b)
    if isinstance(a, Trap) and isinstance(b, Trap):
        return (a.kind, a.where) == (b.kind, b.where)
    return type(a) is type(b)


def _expected(outcome: Outcome, want: list[int] | TrapKind) -> bool:
    if isinstance(want, TrapKind):
        return isinstance(outcome, Trap) and outcome.kind is want
    return isinstance(outcome, Ok) and bits(outcome) == want


@pytest.mark.parametrize("spec", ["llvm-cpu:O0", "llvm-cpu:O3:det:detsample=1"])
def test_a_batch_computes_what_each_case_computes_alone(spec: str) -> None:
    pipeline = Registry().create(spec)
    cases = [c for c, _ in CASES]
    batch = pipeline.run_many(cases)
    for (case, want), got in zip(CASES, batch, strict=True):
        assert _expected(got, want), (want, got)
        assert _same(got, pipeline.run(case))
    if ":det" in spec:
        assert all(len(o.stats.artefacts["batch-object"]) == 64 for o in batch)
        assert not any(k.endswith("-again") for o in batch for k in o.stats.artefacts)


def test_o0_batches_skip_only_a_no_op_optimise() -> None:
    """At O0 without `det` a batch emits the linked text as it is: what `optimise` would
    return is LLVM's parse-and-print of it, and LLVM's printer must give the same text back
    (it does; if it ever stops, the skipped stage would change the batch's hashes)."""
    got = Registry().create("llvm-cpu:O0").run_many([c for c, _ in CASES])
    assert all("optimise" not in o.stats.seconds and "codegen" in o.stats.seconds for o in got)
    from rgpu_fuzz.lower import HostTarget
    from rgpu_fuzz.pipelines.llvm_stages import LlvmBuild, StageClock, lower_and_optimise

    irs = {}
    for i, (case, _) in enumerate(CASES):
        b = lower_and_optimise(case, HostTarget(), toolchain.Target.host(), 0,
                               clock=StageClock(), upto="llvm-ir")
        assert isinstance(b, LlvmBuild)
        irs[i] = b.ir
    from rgpu_fuzz.pipelines.batching import link_modules

    text = link_modules(irs)
    assert toolchain.optimise(text, toolchain.Target.host(), 0) == text


def test_a_lookup_table_at_O3_runs() -> None:
    """MCJIT maps code above 4 GiB; with the static relocation model the table's
    R_X86_64_32S relocation did not reach and RuntimeDyldELF asserted
    (`resolveX86_64Relocation`, a CompileCrash in codegen on every such kernel at O3).
    The host target is position-independent now."""
    assert toolchain.Target.host().reloc == "pic"
    got = Registry().create("llvm-cpu:O3").run(make_case(LOOKUP, inputs=(5,)))
    assert bits(got)[0] == 77  # t = 5 % 8 = 5 → 77, by hand


def _plugin(name: str) -> llvm_cpu.LlvmCpuPipeline:
    reg = Registry()
    reg.load_plugin(PLUGINS / "batch_faults.py")
    pipeline = reg.create(name)
    assert isinstance(pipeline, llvm_cpu.LlvmCpuPipeline)
    return pipeline


MARKED = make_case("out[0usize] = a[0usize] + 0xbeefu32;", inputs=(1,))


def test_an_abort_in_one_case_loses_nothing_of_the_others() -> None:
    pipeline = _plugin("llvm-cpu-abort-marked:O0")
    cases = [c for c, _ in CASES[:3]] + [MARKED] + [CASES[4][0]]
    got = pipeline.run_many(cases)
    for i in (0, 1, 2):
        assert _expected(got[i], CASES[i][1]), got[i]
    assert _expected(got[4], CASES[4][1]), got[4]
    crash = got[3]
    assert isinstance(crash, CompileCrash) and crash.stage == "codegen"
    assert crash.signature.startswith("LLVM ERROR: Cannot select: intrinsic")
    alone = pipeline.run(MARKED)
    assert isinstance(alone, CompileCrash) and alone.signature == crash.signature


def test_a_hang_in_one_case_is_its_own_timeout() -> None:
    pipeline = _plugin("llvm-cpu-hang-marked:O0")
    cases = [CASES[0][0], MARKED, CASES[2][0]]
    got = pipeline.run_many(cases)
    assert _expected(got[0], CASES[0][1]) and _expected(got[2], CASES[2][1]), got
    assert isinstance(got[1], Timeout) and got[1].stage == "run"
    assert got[1].seconds == 2.0


def _nondeterministic_emit(monkeypatch: pytest.MonkeyPatch, when: str) -> None:
    """Make object emission differ between calls on IR holding `when` (LLVM itself is
    deterministic here, so the fault is injected at the one place objects are made)."""
    emit, calls = toolchain.emit, [0]

    def flaky(ir_text: str, *args: object, **kwargs: object) -> bytes:
        out = emit(ir_text, *args, **kwargs)  # type: ignore[arg-type]
        calls[0] += 1
        return out + bytes([calls[0] % 256]) if when in ir_text else out

    monkeypatch.setattr(toolchain, "emit", flaky)


def _batch_job(spec: str, cases: list[Case]) -> llvm_cpu.BatchJob:
    pipeline = Registry().create(spec)
    assert isinstance(pipeline, llvm_cpu.LlvmCpuPipeline)
    return pipeline.batch_job(cases)


def test_nondeterminism_in_a_batch_is_charged_to_the_case_that_shows_it_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _nondeterministic_emit(monkeypatch, "48879")
    got = llvm_cpu.execute_batch(_batch_job("llvm-cpu:O0:det:detsample=1", [CASES[0][0], MARKED]))
    assert isinstance(got, list)
    clean, marked = got
    assert isinstance(marked, Ok) and "object-again" in marked.stats.artefacts
    assert isinstance(clean, Ok) and not any(k.endswith("-again")
                                             for k in clean.stats.artefacts)


def test_nondeterminism_only_in_a_batch_is_its_own_bucket(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _nondeterministic_emit(monkeypatch, "k1.rgpu_kernel_")  # a second kernel: batches only
    got = llvm_cpu.execute_batch(_batch_job("llvm-cpu:O0:det:detsample=1",
                                            [CASES[0][0], CASES[2][0]]))
    assert isinstance(got, list)
    for o in got:
        assert isinstance(o, Ok)
        assert "batch-object-again" in o.stats.artefacts
        assert "object-again" not in o.stats.artefacts


def test_a_finding_only_in_a_batch_is_reported_and_not_recorded() -> None:
    setup = Setup(("ref", "llvm-cpu-batch-bug:O0"), "default", "default",
                  (str(PLUGINS / "batch_faults.py"),))
    result = run_chunk(ChunkJob(setup, 0, (5_550_000, 5_550_001)))
    assert result.found == []  # alone, the case agrees with ref
    notes = [text for _, text in result.harness_errors]
    assert len(notes) == 2 and all(n.startswith("batch-only finding: wrong-code|") for n in notes)
    assert all("kernel = " in n for n in notes)  # the case travels with the note


def test_seeded_miscompile_is_found_on_the_same_seeds_in_batches() -> None:
    """Detection power: `llvm-cpu-xor2or` (rgpu_fuzz/bench/seeded/miscompile.py) is found on exactly
    the seeds on which each case, run alone through `run`, disagrees with ref."""
    from generators import SeededChoices, generate, load_profile
    from oracles import judge, load_policy
    from rgpu_fuzz.lang.features import case_module

    seeds = tuple(range(48, 64))  # 59 and 62 miscompile (tests/unit/test_campaign.py)
    plugin = str(seeded_plugin("miscompile.py"))
    result = run_chunk(ChunkJob(Setup(("ref", "llvm-cpu-xor2or:O0"), "default", "default",
                                      (plugin,)), 0, seeds))
    reg = Registry()
    reg.load_plugin(plugin)
    ref, broken, policy = reg.create("ref"), reg.create("llvm-cpu-xor2or:O0"), load_policy(
        "default")
    alone = set()
    for seed in seeds:
        case = generate(SeededChoices(seed), load_profile("default"), seed=seed)
        verdict = judge(case, {"ref": ref.run(case), broken.label: broken.run(case)}, policy,
                        case_module(case))
        if not verdict.agree:
            alone.add(case.id)
    found = {casefile.loads(f.case_toml).id for f in result.found}
    assert len(alone) == 2
    assert found == alone and result.harness_errors == []


def test_a_finding_on_pipelines_that_ran_alone_is_not_run_again() -> None:
    """A simulator crash (its pipeline runs each case alone) needs no second run of the
    batching `llvm-cpu`; a finding naming `llvm-cpu`, or the arbiter, or no pipeline does."""
    from campaigns.jobs import _implicates
    from oracles import Policy
    from oracles.signature import Signature
    from oracles.verdict import Finding, FindingKind, Verdict

    batching = [Registry().create("llvm-cpu:O3")]
    policy = Policy(name="t", arbiter="ref:steps=100000")

    def verdict(*pipelines: str) -> Verdict:
        return Verdict(findings=(Finding(kind=FindingKind.RUN_CRASH, pipelines=pipelines,
                                         signature=Signature(kind="run-crash",
                                                             detail="x")),))

    assert not _implicates(verdict("amdgpu-sim:gfx942:O0"), batching, policy)
    assert _implicates(verdict("llvm-cpu:O3"), batching, policy)
    assert _implicates(verdict("ref"), batching, policy)
    assert _implicates(verdict(), batching, policy)
    assert not _implicates(verdict("llvm-cpu:O3"), [], policy)


def test_a_subclass_with_its_own_run_is_not_batched() -> None:
    """A batch would bypass an overridden `_run`: such a subclass runs case by case."""
    from rgpu_fuzz.model.outcome import Unsupported
    from rgpu_fuzz.pipelines.base import PipelineSpec

    class OwnRun(llvm_cpu.LlvmCpuPipeline):
        name = "llvm-cpu-own-run"

        def _run(self, case: Case) -> Outcome:
            return Unsupported(features=("own-run",))

    got = OwnRun(PipelineSpec.parse("llvm-cpu-own-run")).run_many([CASES[0][0], CASES[2][0]])
    assert [o.features for o in got if isinstance(o, Unsupported)] == [("own-run",)] * 2
