"""`amdgpu-sim` batches (`AmdgpuSimPipeline._run_many`, `amdgpu_sim_batch`): a chunk's kernels
in one amdgcn module, one code object, decoded once. Each case must come out as it does
alone (`run`, the single-case path), a fault in one case must lose nothing of the others,
and the seeded bugs must be found on the same cases. Expected values are by hand where a
kernel computes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from campaigns.jobs import ChunkJob, Setup, run_chunk
from rgpu_fuzz import casefile
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import CompileCrash, Ok, Outcome, Timeout, Trap, TrapKind
from rgpu_fuzz.pipelines import batching
from rgpu_fuzz.pipelines.registry import Registry
from tests.unit.test_llvm_cpu import bits, make_case
from tests.unit.test_llvm_cpu_batch import CASES

PLUGINS = Path(__file__).resolve().parent.parent / "plugins"

SHARED = make_case("""
    let t: usize = thread_idx_x() as usize;
    unsafe { S[t] = (t as u32) * 3u32; }
    sync_threads();
    unsafe { out[t] = S[7usize - t]; }
""", items="#[shared] static mut S: [u32; 8] = [0u32; 8];", block=8)
"""LDS in a batch (each kernel's own `addrspace(3)` variable): out[t] = 3 * (7 - t)."""

LOOP = make_case("let mut i: u32 = 0u32;\nwhile i < a[0usize] { i += 1u32; }\nout[0usize] = i;",
                 inputs=(1_000_000_000,))
"""A billion iterations: past any step budget here."""

MARKED = make_case("out[0usize] = a[0usize] + 0xbeefu32;", inputs=(1,))
"""Struck by `tests/plugins/sim_batch_faults.py`'s marked faults: 1 + 0xBEEF alone."""

HAND: list[tuple[Case, list[int] | TrapKind]] = [
    *CASES, (SHARED, [21, 18, 15, 12, 9, 6, 3, 0])]


def _same(a: Outcome, b: Outcome) -> bool:
    if isinstance(a, Ok) and isinstance(b, Ok):
        return bits(a) == bits(b)
    if isinstance(a, Trap) and isinstance(b, Trap):
        return (a.kind, a.where) == (b.kind, b.where)
    if isinstance(a, CompileCrash) and isinstance(b, CompileCrash):
        return (a.stage, a.signature) == (b.stage, b.signature)
    return type(a) is type(b)


def _expected(outcome: Outcome, want: list[int] | TrapKind) -> bool:
    if isinstance(want, TrapKind):
        return isinstance(outcome, Trap) and outcome.kind is want
    return isinstance(outcome, Ok) and bits(outcome) == want


def _registry() -> Registry:
    reg = Registry()
    for name in ("sim_batch_faults.py", "sim_no_waitcnt.py", "sim_add_to_sub.py",
                 "sim_bad_kernarg_size.py"):
        reg.load_plugin(PLUGINS / name)
    return reg


@pytest.mark.parametrize("spec", ["amdgpu-sim:gfx942:O0:steps=200000", "amdgpu-sim:gfx942:O3",
                                  "amdgpu-sim:gfx1100:O0:steps=200000"])
def test_a_batch_computes_what_each_case_computes_alone(spec: str) -> None:
    """Hand values (xor, traps, a lookup table, a helper, LDS across a barrier) and a launch
    past the step budget, in one batch: each case's own outcome, the same as alone."""
    pipeline = Registry().create(spec)
    assert pipeline.batches
    cases = [c for c, _ in HAND] + [LOOP]
    batch = pipeline.run_many(cases)
    for (case, want), got in zip(HAND, batch[:-1], strict=True):
        assert _expected(got, want), (want, got)
        assert _same(got, pipeline.run(case))
        assert len(got.stats.artefacts["batch-code-object"]) == 64
    if "steps" in spec:  # O3 computes the loop's trip count in closed form
        assert isinstance(batch[-1], Timeout) and batch[-1].stage == "simulate"


def test_an_llvm_abort_in_one_case_loses_nothing_of_the_others() -> None:
    """LLVM aborts in the batch's code generation (no case to blame): every case runs
    alone, the marked one gets the CompileCrash it gets alone, the others their values."""
    pipeline = _registry().create("amdgpu-sim-abort-marked:gfx942:O0")
    assert pipeline.batches
    got = pipeline.run_many([CASES[0][0], MARKED, CASES[4][0]])
    assert _expected(got[0], CASES[0][1]) and _expected(got[2], CASES[4][1]), got
    crash = got[1]
    assert isinstance(crash, CompileCrash) and crash.stage == "codegen", crash
    assert crash.signature.startswith("LLVM ERROR: Cannot select: intrinsic"), crash
    assert _same(crash, pipeline.run(MARKED))


def test_a_broken_descriptor_fails_its_own_launch_only() -> None:
    """A hook that takes batches breaks kernel `k1.k`'s descriptor: the second case is
    refused by the verifier (`codeobj-invalid:kernarg-size`), the others run; alone (one
    kernel, named `k`) nothing is broken."""
    pipeline = _registry().create("amdgpu-sim-badkd-k1:gfx942:O0")
    assert pipeline.batches
    got = pipeline.run_many([CASES[0][0], CASES[2][0], CASES[4][0]])
    assert _expected(got[0], CASES[0][1]) and _expected(got[2], CASES[4][1]), got
    assert isinstance(got[1], CompileCrash), got[1]
    assert (got[1].stage, got[1].signature) == ("codeobj", "codeobj-invalid:kernarg-size")
    assert _expected(pipeline.run(CASES[2][0]), CASES[2][1])


def test_a_hang_in_one_case_is_its_own_timeout() -> None:
    """A launch that overstays the case's timeout (2 s; steps not the limit) is stopped in
    the worker and is that case's `Timeout` in `simulate`; the others keep their values."""
    pipeline = _registry().create("amdgpu-sim-2s:gfx942:O0:steps=100000000000")
    got = pipeline.run_many([CASES[0][0], LOOP, CASES[2][0]])
    assert _expected(got[0], CASES[0][1]) and _expected(got[2], CASES[2][1]), got
    assert isinstance(got[1], Timeout) and got[1].stage == "simulate", got[1]
    assert got[1].seconds == 2.0


def test_code_object_hooks_see_their_own_case_unless_they_take_batches() -> None:
    """The seeded plugins rewrite "the first s_waitcnt / v_add_u32 of .text": on a batch's
    code object that would strike one case of the batch. They run case by case, so each
    case gets exactly its outcome alone; `det` and a subclass's own `_run` do not batch."""
    reg = _registry()
    for spec in ("amdgpu-sim-nowait:gfx942:O3", "amdgpu-sim-add2sub:gfx942:O3",
                 "amdgpu-sim-badkd:gfx942:O3", "amdgpu-sim:gfx942:O3:det"):
        assert not reg.create(spec).batches, spec
    for spec in ("amdgpu-sim:gfx942:O3", "amdgpu-sim-xor2or:gfx942:O0",
                 "amdgpu-sim-badkd-k1:gfx942:O0"):
        assert reg.create(spec).batches, spec
    case = casefile.load_checked(PLUGINS.parent.parent / "corpus" / "254dd5a67c19.toml")
    cases = [CASES[0][0], case, CASES[4][0]]
    for spec in ("amdgpu-sim-nowait:gfx942:O3", "amdgpu-sim-add2sub:gfx942:O3"):
        pipeline = reg.create(spec)
        many = pipeline.run_many(cases)
        assert all(_same(m, pipeline.run(c)) for m, c in zip(many, cases, strict=True)), spec
    nowait = reg.create("amdgpu-sim-nowait:gfx942:O3").run_many(cases)[1]
    assert getattr(nowait, "signal", None) == "sim-waitcnt-hazard", nowait


def test_seeded_bugs_are_found_on_the_same_seeds_in_batches() -> None:
    """Detection power on a fixed seed range (56-63), in a campaign chunk: the batched IR
    hook (`amdgpu-sim-xor2or`, O0) and the code-object hook (`amdgpu-sim-nowait`, case by
    case) are found on exactly the seeds on which each case alone, judged against ref, has
    a finding (59 and 62: xor2or, 60: nowait, when this was written), and nothing shows
    only in a batch."""
    from generators import SeededChoices, generate, load_profile
    from oracles import judge, load_policy
    from rgpu_fuzz.lang.features import case_module

    specs = ("ref", "amdgpu-sim-xor2or:gfx942:O0", "amdgpu-sim-nowait:gfx942:O0")
    plugins = tuple(str(PLUGINS / n) for n in ("sim_batch_faults.py", "sim_no_waitcnt.py"))
    seeds = tuple(range(56, 64))
    result = run_chunk(ChunkJob(Setup(specs, "default", "default", plugins), 0, seeds))
    assert result.harness_errors == []
    found = {casefile.loads(f.case_toml).provenance.seed: {
        str(x.signature).split("|")[1] for x in f.verdict.findings} for f in result.found}
    reg = _registry()
    pipelines, policy = reg.create_all(list(specs)), load_policy("default")
    alone = {}
    for seed in seeds:
        case = generate(SeededChoices(seed), load_profile("default"), seed=seed)
        verdict = judge(case, {p.label: p.run(case) for p in pipelines}, policy,
                        case_module(case))
        if not verdict.agree:
            alone[seed] = {str(x.signature).split("|")[1] for x in verdict.findings}
    assert found == alone
    assert {label for labels in alone.values() for label in labels} == set(specs[1:])


def test_link_ir_renames_every_definition() -> None:
    """Two cases' modules as one: each kernel, helper and LDS variable renamed `k<i>.`,
    declarations (intrinsics) shared."""
    from rgpu_fuzz.lower import AmdgcnTarget
    from rgpu_fuzz.pipelines.gpu_build import gpu_target
    from rgpu_fuzz.pipelines.llvm_stages import StageClock, lower_and_optimise

    irs = {}
    for i, case in enumerate((SHARED, CASES[4][0])):
        got = lower_and_optimise(case, AmdgcnTarget(), gpu_target("gfx942"), 0,
                                 clock=StageClock(), upto="llvm-ir")
        irs[i] = got.ir  # type: ignore[union-attr]
    text = batching.link_modules(irs)
    assert "define amdgpu_kernel void @k0.k(" in text
    assert "define amdgpu_kernel void @k1.k(" in text
    assert "@k0.rgpu.shared.S = internal addrspace(3) global" in text
    assert "define internal void @k0.rgpu.trap(" in text
    assert "define internal void @k1.rgpu.trap(" in text
    assert text.count("@llvm.amdgcn.workitem.id.x() #") == 1  # one declaration

