"""Wave intrinsics as LLVM 22 compiles them (`data/wave_ops.ll`, `data/atomic_add_scan.ll`,
compiled by llc-22 for each target), run on the bound tier and with every run fused.

What LLVM emits (llc-22 -O3): `v_mov_b32_dpp` for update.dpp, `v_add_u32_dpp`/
`v_add_nc_u32_dpp` where GCNDPPCombine folds the move into the add, `ds_bpermute_b32` with
the constant folded into its offset, `v_mbcnt_lo/hi` of a ballot, whole-wave mode for
set.inactive/strict.wwm (`s_or_saveexec -1`, `v_cndmask_b32_e64` with the saved EXEC,
`s_mov exec` back), the atomic optimizer's DPP scan (row_shr 1/2/4/8, row_bcast:15/31 and
wave_shr:1 on GFX9; row_shr and `v_permlanex16_b32` and `v_readlane` on gfx1100), and
wave.reduce as a loop over the active lanes (LLVM 22 lowers the DPP strategy the same way).

Expected values are computed from each intrinsic's definition (LLVM AMDGPUUsage and the
DPP_CTRL table as quoted in `rgpu_fuzz/sim/semantics/dpp.py`), lane by lane in plain Python
over the input, never from the simulator. Inputs x[t] = (t * 7919 + 13) mod 1009 (odd and
even, distinct enough that a wrong lane shows)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pytest

from rgpu_fuzz.sim.launch.engine import Arg
from tests.sim.kernels import out, run
from tests.sim.llc_kernels import llc_build

TARGETS = {"gfx942": 64, "gfx90a": 64, "gfx1100": 32, "gfx1100-wave64": 64}
"""Each target's wave size; gfx1100-wave64 is gfx1100 compiled with
`-mattr=+wavefrontsize64` (its kernel descriptor's ENABLE_WAVEFRONT_SIZE32 clear)."""


def _build(ir: str, target: str, opt: int, flags: list[str] | None = None) -> bytes:
    cpu, _, mode = target.partition("-")
    extra = ["-mattr=+wavefrontsize64"] if mode == "wave64" else []
    return llc_build(ir, cpu, opt, [*(flags or []), *extra])


@pytest.fixture(params=[0, 3])
def opt(request: pytest.FixtureRequest) -> int:
    """llc-22's -O level (O0: no DPP combining, values through scratch; O3)."""
    return int(request.param)


@pytest.fixture(params=["bound", "fused"])
def tier(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """"fused": every run is fused at its first execution (`tiers.HOT` = 1) in fresh
    programs, so the DPP instructions run inside fused runs as their bound steps."""
    from rgpu_fuzz.sim.launch import engine, tiers

    engine._PROGRAMS.clear()
    if request.param == "fused":
        monkeypatch.setattr(tiers, "HOT", 1)
    yield request.param
    engine._PROGRAMS.clear()


def _x(n: int) -> list[int]:
    return [(t * 7919 + 13) % 1009 for t in range(n)]


def _launch(kernel: str, cpu: str, block: int, x: list[int], opt: int) -> list[int]:
    code = _build("wave_ops.ll", cpu, opt)
    res = run(code, (1, 1, 1), (block, 1, 1), [Arg(buffer="a"), Arg(buffer="out")],
              {"a": np.array(x, np.uint32), "out": np.zeros(block, np.uint32)}, kernel=kernel)
    assert res.status.value == "ok", res.fault
    return [int(v) for v in out(res, "out", np.uint32)]


def _lanes(block: int, ws: int) -> Callable[[int], tuple[int, int]]:
    """t → (its wave's first t, its lane)."""
    return lambda t: (t - t % ws, t % ws)


@pytest.mark.parametrize("cpu", list(TARGETS))
@pytest.mark.parametrize("block", [64, 40])
def test_update_dpp_row_shr1_keeps_old(cpu: str, block: int, tier: str, opt: int) -> None:
    """update.dpp(old = 1000 + t, x, row_shr:1, bound_ctrl 0): lane 0 of each row reads no
    lane and keeps old; every other lane reads x of lane - 1 (active: it is below an
    active lane)."""
    x = _x(block)
    want = [1000 + t if t % 16 == 0 else x[t - 1] for t in range(block)]
    assert _launch("shr1", cpu, block, x, opt) == want


@pytest.mark.parametrize("cpu", list(TARGETS))
@pytest.mark.parametrize("block", [64, 40])
def test_row_mirror_folded_into_add(cpu: str, block: int, tier: str, opt: int) -> None:
    """update.dpp(0, x, row_mirror, bound_ctrl 1) + x, folded into `v_add_u32_dpp ...
    row_mirror bound_ctrl:1`: lane l reads lane row + 15 - i, 0 where that lane is past the
    block (disabled: invalid, BOUND_CTRL zero)."""
    x = _x(block)

    def mirrored(t: int) -> int:
        s = (t & ~15) + 15 - (t & 15)
        return x[s] if s < block else 0
    assert _launch("mirror_add", cpu, block, x, opt) == [(mirrored(t) + x[t]) % 2**32
                                                    for t in range(block)]


@pytest.mark.parametrize("cpu", list(TARGETS))
@pytest.mark.parametrize("block", [64, 40])
def test_ds_bpermute(cpu: str, block: int, tier: str, opt: int) -> None:
    """ds.bpermute(4 (t + 3), x): lane l reads lane (l + 3) mod wave size of its wave, 0
    where that lane is disabled (past the block). On gfx1100 in wave64 the reach is the
    lane's 32-lane half (RDNA3 ISA DS_BPERMUTE_B32: the index "MOD 32 regardless of wave
    size", once per half): lane l reads lane (l & 32) + (l + 3) mod 32, so lane 30 reads
    lane 1 and lane 62 lane 33."""
    ws = TARGETS[cpu]
    reach = 32 if cpu == "gfx1100-wave64" else ws
    x = _x(block)
    where = _lanes(block, ws)

    def pulled(t: int) -> int:
        base, lane = where(t)
        s = base + (lane & ~(reach - 1)) + (lane + 3) % reach
        return x[s] if s < block else 0
    assert _launch("bperm", cpu, block, x, opt) == [pulled(t) for t in range(block)]


@pytest.mark.parametrize("cpu", list(TARGETS))
@pytest.mark.parametrize("block", [64, 40])
def test_ballot_mbcnt(cpu: str, block: int, tier: str, opt: int) -> None:
    """mbcnt.hi(ballot_hi, mbcnt.lo(ballot_lo, 0)): active lanes below this one, in its
    wave, whose x is odd."""
    ws = TARGETS[cpu]
    x = _x(block)
    want = [sum(x[s] & 1 for s in range(t - t % ws, t)) for t in range(block)]
    assert _launch("count_below", cpu, block, x, opt) == want


@pytest.mark.parametrize("cpu", list(TARGETS))
@pytest.mark.parametrize("block", [64, 40])
def test_wave_reduce(cpu: str, block: int, tier: str, opt: int) -> None:
    """wave.reduce.umax - wave.reduce.umin over the active lanes of the wave."""
    ws = TARGETS[cpu]
    x = _x(block)

    def spread(t: int) -> int:
        wave = x[t - t % ws: min(t - t % ws + ws, block)]
        return max(wave) - min(wave)
    assert _launch("reduce", cpu, block, x, opt) == [spread(t) for t in range(block)]


@pytest.mark.parametrize("cpu", list(TARGETS))
@pytest.mark.parametrize("block", [64, 96])
def test_set_inactive_strict_wwm_scan(cpu: str, block: int, tier: str, opt: int) -> None:
    """set.inactive(x, 0), then row_shr 1/2 (bound_ctrl 1), 4 (bank_mask 0xe), 8 (bank_mask
    0xc) adds in strict WWM: each row's inclusive scan, so lane 15 holds row 0's sum and
    lane 31 row 1's (lanes 0-31 are active in every wave of these blocks): the sum of x over
    the first 32 lanes of the wave, 0 for lanes past the block."""
    ws = TARGETS[cpu]
    x = _x(block)
    want = [sum(x[s] for s in range(t - t % ws, t - t % ws + 32) if s < block)
            for t in range(block)]
    assert _launch("wwm_sum", cpu, block, x, opt) == want


ATOMIC_IR = """target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @k(ptr addrspace(1) %cnt, ptr addrspace(1) %out) {{
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %t = zext i32 %tid to i64
  %m = mul i64 %t, 2654435761
  %w = xor i64 %m, 12345
  {narrow}
  %old = atomicrmw {op} ptr addrspace(1) %cnt, {ty} %v syncscope("agent") monotonic
  %po = getelementptr {ty}, ptr addrspace(1) %out, i64 %t
  store {ty} %old, ptr addrspace(1) %po
  ret void
}}
"""


def _fold(op: str, a: int, b: int, bits: int) -> int:
    """`atomicrmw op` on `bits`-bit values (LLVM LangRef "atomicrmw")."""
    mask = (1 << bits) - 1

    def signed(v: int) -> int:
        return v - (1 << bits) if v >> (bits - 1) else v
    return {"add": (a + b) & mask, "sub": (a - b) & mask, "and": a & b, "or": a | b,
            "xor": a ^ b, "max": a if signed(a) >= signed(b) else b,
            "min": a if signed(a) <= signed(b) else b, "umax": max(a, b),
            "umin": min(a, b)}[op]


@pytest.mark.parametrize("cpu", list(TARGETS))
@pytest.mark.parametrize("op", ["add", "sub", "and", "or", "xor", "max", "min", "umax", "umin"])
@pytest.mark.parametrize("ty", ["i32", "i64"])
def test_atomic_optimizer_dpp_scan_every_operation(cpu: str, op: str, ty: str,
                                                   tier: str) -> None:
    """atomicrmw `op` of v[t] = ((t · 2654435761) xor 12345) truncated to `ty`, block 100 (a
    full and a partial wave on wave64, three full waves and a partial one on wave32), with
    the DPP strategy: each wave's lanes combined by a DPP scan (on gfx1100 i64 add/sub by
    `v_add_co_u32_e64_dpp`, GFX11 VOP3 DPP). The counter ends at the fold of every v[t]
    over its start value, and thread t's old value is the fold of the v[s], s < t (waves in
    order, lanes in order: the simulator's schedule)."""
    bits = 32 if ty == "i32" else 64
    dtype = np.uint32 if ty == "i32" else np.uint64
    narrow = "%v = trunc i64 %w to i32" if ty == "i32" else "%v = or i64 %w, 0"
    code = _build(ATOMIC_IR.format(op=op, ty=ty, narrow=narrow), cpu, 3,
                  ["-amdgpu-atomic-optimizer-strategy=DPP"])
    block = 100
    start = (1 << bits) - 1 if op == "and" else 0x5555
    res = run(code, (1, 1, 1), (block, 1, 1), [Arg(buffer="cnt"), Arg(buffer="out")],
              {"cnt": np.array([start], dtype), "out": np.zeros(block, dtype)})
    assert res.status.value == "ok", res.fault
    acc, want = start, []
    for t in range(block):
        want.append(acc)
        acc = _fold(op, acc, ((t * 2654435761) ^ 12345) & ((1 << bits) - 1), bits)
    assert int(out(res, "cnt", dtype)[0]) == acc
    assert [int(v) for v in out(res, "out", dtype)] == want


@pytest.mark.parametrize("cpu", list(TARGETS))
@pytest.mark.parametrize("block", [64, 40, 100])
def test_atomic_optimizer_dpp_scan(cpu: str, block: int, tier: str) -> None:
    """atomicrmw add 3t with `-amdgpu-atomic-optimizer-strategy=DPP`: the counter ends at
    5 + Σ 3t, and lane t's old value is 5 plus the contributions of every thread before it
    (waves run in order on the simulator, lanes in order within a wave): an exclusive
    prefix sum."""
    code = _build("atomic_add_scan.ll", cpu, 3, ["-amdgpu-atomic-optimizer-strategy=DPP"])
    res = run(code, (1, 1, 1), (block, 1, 1), [Arg(buffer="cnt"), Arg(buffer="out")],
              {"cnt": np.array([5], np.uint32), "out": np.zeros(block, np.uint32)})
    assert res.status.value == "ok", res.fault
    assert int(out(res, "cnt", np.uint32)[0]) == 5 + sum(3 * t for t in range(block))
    assert out(res, "out", np.uint32).tolist() == [5 + sum(3 * s for s in range(t))
                                                   for t in range(block)]
    assert res.opcodes.get("V_ADD_U32", 0) + res.opcodes.get("V_ADD_NC_U32", 0) > 0
