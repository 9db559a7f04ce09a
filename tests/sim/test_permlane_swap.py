"""gfx950's `v_permlane16_swap_b32` / `v_permlane32_swap_b32` (`bound/lane_xfer.py`).

Expected values are worked by hand from AMD's CDNA4 ISA pseudocode (the ISA XML's, quoted in
`rgpu_fuzz/sim/semantics/dpp.py`): for each pair of lanes l and l ^ 16 (l ^ 32), SRC0's lane
in an even row (the lower half) trades with VDST's lane in the odd row (upper half); the
other lane of each register keeps its value. The pseudocode names no EXEC: the FI and
BOUND_CTRL modifiers are LLVM's DPP16 operands (VOP1Instructions.td `VOP_PERMLANE_SWAP`), so
a lane outside EXEC is not written and, with FI = 0, a partner outside EXEC is invalid (0
with BOUND_CTRL = 1, else the lane keeps its value), as for `v_permlane16_b32`. LLVM's
intrinsic (IntrinsicsAMDGPU.td `int_amdgcn_permlane16_swap`: `{ vdst_new, vsrc_new }
(vdst_old, vsrc_old, fi, bound_control)`) returns both registers. Never from the simulator.

Two levels: instructions encoded by llvm-mc-22 run as bound steps on a prepared wave, and
`data/permlane_swap.ll` compiled by llc-22 for gfx950 (O0 gives the `_e64` form, O3 the
`_e32` form where FI = BOUND_CTRL = 0) run as kernels on the bound and fused tiers."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from rgpu_fuzz.sim.isa.decode import decode
from rgpu_fuzz.sim.isa.render import render
from rgpu_fuzz.sim.launch.engine import Arg
from rgpu_fuzz.sim.state.halves import LOW
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import assemble, encodings, run_steps
from tests.sim.kernels import out, run
from tests.sim.llc_kernels import llc_build

LANES = np.arange(64)


def _wave(exec_mask: int | None = None) -> Wave:
    """v1 (VDST) = 100 + lane, v2 (SRC0) = 200 + lane, every lane defined."""
    w = Wave(64, 0, 0)
    w.V[:, 1] = 100 + LANES
    w.V[:, 2] = 200 + LANES
    w.vdef[:, :4] = True
    if exec_mask is not None:
        w.set_exec(exec_mask)
    return w


def _run(line: str, w: Wave) -> Wave:
    run_steps(assemble([line], "gfx950"), w)
    return w


def test_permlane16_swap_trades_odd_rows_of_vdst_with_even_rows_of_src0() -> None:
    """VGPR[32p + l][SRC0] <-> VGPR[32p + l + 16][VDST], l < 16: v1 rows 1, 3 get v2 rows 0,
    2 (200 + lane - 16) and v2 rows 0, 2 get v1 rows 1, 3 (100 + lane + 16); v1 rows 0, 2
    and v2 rows 1, 3 keep their values."""
    w = _run("v_permlane16_swap_b32 v1, v2", _wave())
    odd = (LANES & 16) != 0
    assert w.V[:, 1].tolist() == np.where(odd, 200 + LANES - 16, 100 + LANES).tolist()
    assert w.V[:, 2].tolist() == np.where(odd, 200 + LANES, 100 + LANES + 16).tolist()


def test_permlane32_swap_trades_upper_half_of_vdst_with_lower_half_of_src0() -> None:
    """VGPR[l][SRC0] <-> VGPR[l + 32][VDST], l < 32."""
    w = _run("v_permlane32_swap_b32_e64 v1, v2", _wave())
    upper = LANES >= 32
    assert w.V[:, 1].tolist() == np.where(upper, 200 + LANES - 32, 100 + LANES).tolist()
    assert w.V[:, 2].tolist() == np.where(upper, 200 + LANES, 100 + LANES + 32).tolist()


def test_permlane16_swap_of_one_register_swaps_its_rows() -> None:
    """VDST = SRC0 = v1: the pseudocode's `tmp` makes it a swap of rows 0/1 and 2/3."""
    w = _run("v_permlane16_swap_b32 v1, v1", _wave())
    assert w.V[:, 1].tolist() == (100 + (LANES ^ 16)).tolist()


@pytest.mark.parametrize(("mods", "lane0", "lane32"), [
    ("", 200, 132), ("bound_ctrl:1", 0, 132), ("fi:1", 132, 132),
    ("bound_ctrl:1 fi:1", 132, 132)])
def test_permlane32_swap_partial_exec(mods: str, lane0: int, lane32: int) -> None:
    """EXEC without lanes 1 and 32. Lane 0 (SRC0's side) reads v1 of lane 32 (disabled):
    FI = 0 and BOUND_CTRL = 0 leave v2 of lane 0 at 200, BOUND_CTRL = 1 writes 0, FI = 1
    reads v1 of lane 32, 132. Lane 32 is disabled: its v1 keeps 132 whatever the
    modifiers. Lane 1 is disabled too, so v2 of lane 1 keeps 201; lane 33 (VDST's side)
    with FI = 0 reads a disabled partner: 133 kept, or 0 with BOUND_CTRL = 1; with FI = 1,
    201. Lane 2 and lane 34 are a full pair: 134 and 202."""
    mask = (1 << 64) - 1 & ~(1 << 1) & ~(1 << 32)
    w = _run(f"v_permlane32_swap_b32_e64 v1, v2 {mods}".strip(), _wave(mask))
    fi, bc = "fi:1" in mods, "bound_ctrl:1" in mods
    assert (int(w.V[0, 2]), int(w.V[32, 1])) == (lane0, lane32)
    assert int(w.V[1, 2]) == 201
    assert int(w.V[33, 1]) == (201 if fi else 0 if bc else 133)
    assert (int(w.V[2, 2]), int(w.V[34, 1])) == (134, 202)
    assert (int(w.V[0, 1]), int(w.V[34, 2])) == (100, 234)     # the sides not traded


def test_permlane_swap_moves_definedness() -> None:
    """An undefined VDST lane 17 lands in SRC0 lane 1; a bound_ctrl zero is defined."""
    w = _wave()
    w.vdef[17, 1] = False
    _run("v_permlane16_swap_b32 v1, v2", w)
    assert not w.vdef[1, 2] and w.vdef[17, 1] and w.vdef[:, 1].all()
    assert w.vdef[:, 2].sum() == 63


def test_permlane_swap_moves_partial_definedness_bit_by_bit() -> None:
    """VDST lane 48 has only its low half defined (as a D16 load into an undefined register
    leaves it): it lands in SRC0 lane 32 with the same bits defined; lane 48 itself takes
    SRC0 lane 32 (defined) and becomes whole."""
    w = _wave()
    w.vdef[48, 1] = False
    w.vpart[1] = {48: LOW}
    _run("v_permlane16_swap_b32 v1, v2", w)
    assert int(w.V[32, 2]) == 148 and not w.vdef[32, 2] and w.vpart[2] == {32: LOW}
    assert int(w.V[48, 1]) == 232 and w.vdef[48, 1] and 1 not in w.vpart


@pytest.mark.parametrize("line", [
    "v_permlane16_swap_b32_e32 v1, v2", "v_permlane16_swap_b32_e64 v1, v2",
    "v_permlane16_swap_b32_e64 v1, v2 bound_ctrl:1", "v_permlane16_swap_b32_e64 v1, v2 fi:1",
    "v_permlane32_swap_b32_e64 v255, v200 bound_ctrl:1 fi:1",
    "v_permlane32_swap_b32_e32 v0, v131"])
def test_decoder_renders_as_llvm(line: str) -> None:
    """FI and BOUND_CTRL are VOP3's OP_SEL[0] and OP_SEL[1] (llvm-mc-22's encodings):
    printed as LLVM prints them, not as `op_sel`."""
    ((text, data),) = encodings(line + "\n", "gfx950")
    (inst,) = decode(data, "gfx950")
    assert render(inst) == text


def _x(n: int) -> list[int]:
    return [(t * 7919 + 13) % 1009 for t in range(n)]


@pytest.fixture(params=["bound", "fused"])
def tier(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """"fused": every run fused at its first execution (`tiers.HOT` = 1)."""
    from rgpu_fuzz.sim.launch import engine, tiers

    engine._PROGRAMS.clear()
    if request.param == "fused":
        monkeypatch.setattr(tiers, "HOT", 1)
    yield request.param
    engine._PROGRAMS.clear()


def _expected(distance: int, block: int, fi: bool, bc: bool,
              runs: list[bool]) -> list[int]:
    """(new VDST, new SRC0) per thread from the pseudocode: d = x, s = x + 5000; a thread
    that does not run the swap writes 7777 twice."""
    x = _x(block)
    d = [*x, *[0] * (64 - block)]
    s = [v + 5000 for v in d]
    active = [*runs, *[False] * (64 - block)]
    want: list[int] = []
    for t in range(block):
        if not active[t]:
            want += [7777, 7777]
            continue
        p = t ^ distance
        valid = fi or active[p]
        if t & distance == 0:     # SRC0's side: new SRC0 = VDST of the partner
            want += [d[t], d[p] if valid else 0 if bc else s[t]]
        else:                     # VDST's side: new VDST = SRC0 of the partner
            want += [s[p] if valid else 0 if bc else d[t], s[t]]
    return want


KERNELS = [(k, d, fi, bc, some, block)
           for k, d, fi, bc, some in [
               ("swap16", 16, False, False, False), ("swap16_fi", 16, True, False, False),
               ("swap32", 32, False, False, False), ("swap32_bc", 32, False, True, False),
               ("swap16_some", 16, False, False, True),
               ("swap32_some_bc", 32, False, True, True)]
           for block in ([64] if fi else [64, 40])]
"""(kernel, distance, FI, BOUND_CTRL, divergent, block). FI only with every partner enabled:
with FI = 1 a disabled partner's registers hold nothing the IR defines."""


@pytest.mark.parametrize(("kernel", "distance", "fi", "bc", "some", "block"), KERNELS)
@pytest.mark.parametrize("opt", [0, 3])
def test_llc_kernels(kernel: str, distance: int, fi: bool, bc: bool, some: bool, block: int,
                     opt: int, tier: str) -> None:
    """A block of 40 disables lanes 40-63; the `_some` kernels also leave out every thread
    t with t % 3 = 0 (EXEC narrowed by the branch)."""
    code = llc_build("permlane_swap.ll", "gfx950", opt)
    res = run(code, (1, 1, 1), (block, 1, 1), [Arg(buffer="a"), Arg(buffer="out")],
              {"a": np.array(_x(block), np.uint32), "out": np.zeros(2 * block, np.uint32)},
              kernel=kernel)
    assert res.status.value == "ok", res.fault
    runs = [t % 3 != 0 or not some for t in range(block)]
    got = [int(v) for v in out(res, "out", np.uint32)]
    assert got == _expected(distance, block, fi, bc, runs)
