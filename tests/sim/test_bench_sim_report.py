"""`bench sim`'s summary and identity check on hand-made measurements: the first-launch
figure is the first pass's wave-instructions over its simulated seconds (1,000 + 3,000
instructions in 0.5 + 1.5 s: 2,000 per second), the warm figure the same over the warm
seconds (and over its CPU seconds: 2,000), the first launches' CPU figure over their CPU
seconds (1 + 1 s: 2,000), and a launch whose per-opcode counts differ
from the baseline's is reported even when everything else agrees."""

from __future__ import annotations

from typing import Any

from rgpu_fuzz.bench.sim import _same_outputs, _summary


def _launch(case: str, wi: int, opcodes: str = "o1", **extra: Any) -> dict[str, Any]:
    return {"case": case, "wave_instructions": wi, "status": "ok", "fault": None,
            "outputs": "h-" + case, "opcodes": opcodes, **extra}


def _measured(opcodes_b: str = "o1") -> dict[str, Any]:
    first = [_launch("a", 1000, decode=0.1, bind=0.0, simulate=0.5, cpu_seconds=1.0),
             _launch("b", 3000, opcodes_b, decode=0.1, bind=0.0, simulate=1.5, cpu_seconds=1.0)]
    warm = [_launch("a", 1000, seconds=0.25, cpu_seconds=0.5),
            _launch("b", 3000, opcodes_b, seconds=0.25, cpu_seconds=1.5)]
    return {"first": first, "warm": warm}


def test_first_launch_and_warm_rates() -> None:
    got = _summary([_measured()])
    assert got["first_launch_wips"] == 2000.0
    assert got["first_launch_cpu_wips"] == 2000.0
    assert got["wave_instructions_per_second"] == 8000.0
    assert got["cpu_wips"] == 2000.0
    assert got["wave_instructions"] == 4000


def test_opcode_counts_are_part_of_identity() -> None:
    assert _same_outputs(_measured(), _measured()) == {"identical": 4, "differ": []}
    got = _same_outputs(_measured("o2"), _measured())
    assert got == {"identical": 2, "differ": ["first:b", "warm:b"]}


def test_sim_specs_must_name_amdgpu_sim(capsys: Any) -> None:
    """`gfx1100:O0` without the pipeline name was measured as amdgpu-sim's default target
    (gfx942): the "gfx1100" figures were gfx942's. Now one line and the usage exit, before
    anything is compiled; a valid list passes the check."""
    from rgpu_fuzz.bench.sim import check_sim_specs
    from rgpu_fuzz.cli import EXIT_USAGE, main

    for bad, says in (("gfx1100:O0", "not an amdgpu-sim spec"),
                      ("amdgpu-sim:gfx942:O0,amdgpu-sim:gfx9999:O0", "gfx9999"),
                      ("amdgpu-sim:gfx1100:O7", "O7")):
        assert main(["bench", "sim", "--sim-specs", bad]) == EXIT_USAGE
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and says in err[0], err
    check_sim_specs("amdgpu-sim:gfx942:O0,amdgpu-sim:gfx1100:O0,amdgpu-sim:gfx90a:O3")


def test_portable_launch_replays_as_the_pipeline_launch() -> None:
    """`bench sim` hands a baseline revision each launch as plain data (`portable`): it
    unpickles without any class (so an older tree can read it), and replayed through
    `replayable` it launches exactly as the pipeline's own `Launch` does: same status,
    output bytes, wave-instructions and opcode counts; every buffer's address slot was
    found (each buffer of the launch, the trap record's among them)."""
    import io
    import pickle
    from pathlib import Path

    from rgpu_fuzz import casefile
    from rgpu_fuzz.bench.sim import portable, replayable
    from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline, prepare_launch
    from rgpu_fuzz.pipelines.base import PipelineSpec
    from rgpu_fuzz.sim import decode_text, simulate

    class Plain(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            raise AssertionError(f"{module}.{name} in a portable launch")

    case = casefile.load(Path(__file__).parents[1] / "semantics/cases/atomic_rmw_global.toml")
    pipeline = AmdgpuSimPipeline(PipelineSpec.parse("amdgpu-sim:gfx942:O3"))
    lc = prepare_launch(pipeline.job(case))
    assert lc is not None
    p = Plain(io.BytesIO(pickle.dumps(portable(lc)))).load()
    assert {name for _, name in p[6][2]} == set(lc.buffers)
    again = replayable(p)
    a, b = (simulate(x.code_object, x.kernel, x.grid, x.block, x.args, x.buffers,
                     decode=decode_text, target=x.target) for x in (lc, again))
    assert (a.status, a.buffers, a.wave_instructions, a.opcodes) == \
        (b.status, b.buffers, b.wave_instructions, b.opcodes)
    assert a.wave_instructions > 0
