"""The executor on hand-written amdgcn kernels (`data/*.ll`) compiled by LLVM for gfx942 at
O0 and O3: expected values come from the launch itself (ids), numpy's IEEE arithmetic
(division, square root), or plain Python on the inputs (LDS, private memory, calls)."""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.sim.common.fault import FaultKind
from rgpu_fuzz.sim.launch.engine import Arg, Status
from tests.sim.kernels import build, out, run

OPTS = (0, 3)


@pytest.mark.parametrize("opt", OPTS)
def test_initial_state_follows_the_launch(opt: int) -> None:
    """Work-item ids (packed in v0 on gfx942), work-group ids (system SGPRs), the dispatch
    packet (dispatch ptr user SGPR) and the v5 hidden kernargs (kernarg ptr) all carry the
    launch's values."""
    grid, block = (2, 3, 2), (4, 2, 3)
    threads = 4 * 2 * 3
    n = 2 * 3 * 2 * threads
    res = run(build("ids.ll", opt=opt), grid, block,
              [Arg("out"), Arg(data=(10).to_bytes(4, "little"))],
              {"out": np.zeros(n * 10, np.uint32)})
    assert res.status is Status.OK, res.fault
    got = out(res, "out", np.uint32).reshape(n, 10)
    rows = []
    for bz in range(2):
        for by in range(3):
            for bx in range(2):
                for tz in range(3):
                    for ty in range(2):
                        for tx in range(4):
                            rows.append((tx, ty, tz, bx, by, bz, 4, 2 * 4, 2, threads))
    assert got.tolist() == [list(r) for r in rows]


@pytest.mark.parametrize("opt", OPTS)
def test_lds_and_barrier_across_waves(opt: int) -> None:
    n, groups = 256, 2  # four waves per work-group meet at the barrier
    a = (np.arange(n * groups, dtype=np.uint64) * 2654435761 % 2**32).astype(np.uint32)
    res = run(build("lds.ll", opt=opt), (groups, 1, 1), (n, 1, 1),
              [Arg("a"), Arg("out"), Arg(data=n.to_bytes(4, "little"))],
              {"a": a.astype(np.uint32), "out": np.zeros(n * groups, np.uint32)})
    assert res.status is Status.OK, res.fault
    expect = a.reshape(groups, n)[:, ::-1].ravel()
    assert out(res, "out", np.uint32).tolist() == expect.tolist()


@pytest.mark.parametrize("opt", OPTS)
def test_private_array_with_dynamic_index(opt: int) -> None:
    a = np.array([(7 * i + 3) % 97 for i in range(128)], np.uint32)
    res = run(build("private.ll", opt=opt), (2, 1, 1), (64, 1, 1), [Arg("a"), Arg("out")],
              {"a": a, "out": np.zeros(128, np.uint32)})
    assert res.status is Status.OK, res.fault
    assert out(res, "out", np.uint32).tolist() == [g * 16 + int(a[g]) % 16 for g in range(128)]


@pytest.mark.parametrize("opt", OPTS)
def test_call_with_a_stack_frame(opt: int) -> None:
    a = np.arange(128, dtype=np.uint32) * 40503 + 17

    def mix(x: int, i: int) -> int:
        r = (x * (i % 8)) % 2**32
        rot = ((r << 5) | (r >> 27)) % 2**32
        return rot ^ 0x9E3779B9

    res = run(build("call.ll", opt=opt), (2, 1, 1), (64, 1, 1), [Arg("a"), Arg("out")],
              {"a": a, "out": np.zeros(128, np.uint32)})
    assert res.status is Status.OK, res.fault
    assert out(res, "out", np.uint32).tolist() == [mix(int(a[g]), g) for g in range(128)]


def _edge_floats(dtype: type, n: int, seed: int) -> np.ndarray:
    fi = np.finfo(dtype)
    edges = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, fi.max, -fi.max,
                      fi.tiny, fi.tiny / 8, -fi.smallest_subnormal, 3.0, 1e-30, 7e30], dtype)
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**63, n, dtype=np.uint64)
    vals = (bits.astype(np.uint32) if dtype == np.float32 else bits).view(dtype).copy()
    vals[: len(edges)] = edges
    vals[len(edges): 3 * len(edges)] = rng.choice(edges, 2 * len(edges))
    return vals


@pytest.mark.parametrize("opt", OPTS)
def test_division_and_sqrt_are_ieee(opt: int) -> None:
    """LLVM's fdiv/sqrt expansions, run on the simulated V_DIV_SCALE/V_DIV_FMAS/V_DIV_FIXUP,
    V_RCP, V_RSQ, V_SQRT and exact FMA, give the correctly rounded IEEE results numpy computes
    (NaN payloads aside)."""
    n = 128
    x, y = _edge_floats(np.float32, n, 1), _edge_floats(np.float32, n, 2)[::-1].copy()
    dx, dy = _edge_floats(np.float64, n, 3), _edge_floats(np.float64, n, 4)[::-1].copy()
    bufs = {"x": x, "y": y, "dx": dx, "dy": dy, "q": np.zeros(n, np.float32),
            "s": np.zeros(n, np.float32), "dq": np.zeros(n), "ds": np.zeros(n)}
    res = run(build("fdiv.ll", opt=opt), (2, 1, 1), (64, 1, 1),
              [Arg(k) for k in bufs], bufs)
    assert res.status is Status.OK, res.fault
    with np.errstate(all="ignore"):
        expect = {"q": x / y, "s": np.sqrt(x), "dq": dx / dy, "ds": np.sqrt(dx)}
    for name, want in expect.items():
        got = out(res, name, want.dtype)
        same = (got.view(f"u{want.itemsize}") == want.view(f"u{want.itemsize}")) | (
            np.isnan(got) & np.isnan(want))
        bad = np.nonzero(~same)[0]
        assert not len(bad), (name, [(i, got[i], want[i]) for i in bad[:5]])


def test_trap_ends_the_launch_with_the_record() -> None:
    a = np.arange(1, 129, dtype=np.uint32)
    a[70] = 0  # block 1, thread 6
    res = run(build("trap.ll", opt=3), (2, 1, 1), (64, 1, 1),
              [Arg("a"), Arg("out"), Arg("trap")],
              {"a": a, "out": np.zeros(128, np.uint32), "trap": np.zeros(8, np.uint32)})
    assert res.status is Status.TRAP
    assert out(res, "trap", np.uint32).tolist() == [3, 7, 1, 0, 0, 6, 0, 0]


def test_store_past_a_buffer_is_an_oob_finding() -> None:
    res = run(build("oob.ll", opt=3), (1, 1, 1), (64, 1, 1),
              [Arg("out"), Arg(data=(1).to_bytes(4, "little"))], {"out": np.zeros(64, np.uint32)})
    assert res.status is Status.FAULT and res.fault is not None
    assert res.fault.kind is FaultKind.OOB_ACCESS
    assert "+0x100 from out of 256 bytes" in res.fault.detail


def test_storing_an_unwritten_private_value_is_an_uninit_finding() -> None:
    res = run(build("uninit.ll", opt=0), (1, 1, 1), (64, 1, 1), [Arg("out")],
              {"out": np.zeros(64, np.uint32)})
    assert res.status is Status.FAULT and res.fault is not None
    assert res.fault.kind is FaultKind.UNINIT_READ, res.fault


def test_removing_the_first_waitcnt_is_a_hazard() -> None:
    """The seeded plugin's transformation: the load the wait covered is read too early."""
    from tests.plugins.sim_no_waitcnt import replace_first, s_nop0

    code = build("lds.ll", opt=3)
    broken = replace_first(code, "S_WAITCNT", s_nop0("gfx942"))
    assert broken != code
    args = [Arg("a"), Arg("out"), Arg(data=(64).to_bytes(4, "little"))]
    bufs = {"a": np.arange(64, dtype=np.uint32), "out": np.zeros(64, np.uint32)}
    assert run(code, (1, 1, 1), (64, 1, 1), args, bufs).status is Status.OK
    res = run(broken, (1, 1, 1), (64, 1, 1), args, bufs)
    assert res.fault is not None and res.fault.kind is FaultKind.WAITCNT_HAZARD, res.fault


def test_an_unimplemented_instruction_is_reported_not_raised() -> None:
    from rgpu_fuzz.sim.isa.tables import tables
    from tests.plugins.sim_no_waitcnt import replace_first

    spec = tables("gfx942")
    sopp = next(f for f in spec.spec.formats if f.op_table == "SOPPOp")
    sendmsg = next(v for v, i in spec.ops["SOPPOp"].items() if i.name == "S_SENDMSG")
    code = replace_first(build("lds.ll", opt=3), "S_BARRIER",
                         sopp.match | (sendmsg << sopp.op.lo))
    res = run(code, (1, 1, 1), (64, 1, 1),
              [Arg("a"), Arg("out"), Arg(data=(64).to_bytes(4, "little"))],
              {"a": np.zeros(64, np.uint32), "out": np.zeros(64, np.uint32)})
    assert res.fault is not None and res.fault.signature == "unsupported-instruction:s_sendmsg"
