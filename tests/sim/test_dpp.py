"""DPP16 and DPP8 on the bound steps (`rgpu_fuzz/sim/bound/dpp.py`).

Expected values are worked by hand from the DPP_CTRL table (CDNA3/CDNA2 ISA "DPP_CTRL
Enumeration"; LLVM AMDGPUModifierSyntax "dpp_ctrl", "dpp16_ctrl", "dpp8_sel", "row_mask",
"bank_mask", "bound_ctrl", "fi"), never from the simulator: v1 holds 100 + lane in every
lane, v0 holds 7 (the "old" value a lane DPP does not write keeps), v2 holds 1000. Rows are
16 lanes, banks 4 lanes of a row. The instructions are encoded by llvm-mc-22
(`tests/sim/asm_steps.py`); on GFX9 the assembler's `bound_ctrl:0` is the encoding's
BOUND_CTRL = 1 ("write 0 for an invalid lane"), which llvm-mc prints back as `bound_ctrl:1`.
"""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.common.fault import SimStop
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import ENV, assemble, encodings, run_steps

ENV32 = Env(lanes=32, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
            waitcnt=lambda simm: ((simm >> 10) & 0x3F, (simm >> 4) & 0x3F), true16=True)


def _wave(lanes: int = 64, exec_mask: int | None = None) -> Wave:
    w = Wave(lanes, 0, 0)
    w.V[:, 1] = 100 + np.arange(lanes)
    w.V[:, 0] = 7
    w.V[:, 2] = 1000
    w.vdef[:, :3] = True
    if exec_mask is not None:
        w.set_exec(exec_mask)
    return w


def _run(line: str, cpu: str = "gfx942", w: Wave | None = None) -> Wave:
    w = w if w is not None else _wave(32 if cpu == "gfx1100" else 64)
    run_steps(assemble([line], cpu), w, ENV32 if w.lanes == 32 else ENV)
    return w


def _expect(lanes: int, rule: dict[int, int]) -> np.ndarray:
    """v0 lane by lane: `rule[l]` is the lane l reads (100 + it), -1 keeps 7, -2 reads 0."""
    return np.array([7 if rule[ln] == -1 else 0 if rule[ln] == -2 else 100 + rule[ln]
                     for ln in range(lanes)], np.uint32)


def _row(ln: int) -> int:
    return ln & ~15


# each: (DPP control, the lane l reads, hand-worked from the table; -1: none, keeps v0 = 7)
GFX9_CONTROLS = [
    ("quad_perm:[1,0,3,2]", lambda ln: ln ^ 1),
    ("quad_perm:[3,3,0,1]", lambda ln: (ln & ~3) + [3, 3, 0, 1][ln & 3]),
    ("row_shl:3", lambda ln: ln + 3 if (ln & 15) + 3 < 16 else -1),
    ("row_shr:2", lambda ln: ln - 2 if (ln & 15) >= 2 else -1),
    ("row_ror:4", lambda ln: _row(ln) + ((ln & 15) - 4) % 16),
    ("row_shl:15", lambda ln: ln + 15 if (ln & 15) == 0 else -1),
    ("wave_shl:1", lambda ln: ln + 1 if ln < 63 else -1),
    ("wave_rol:1", lambda ln: (ln + 1) % 64),
    ("wave_shr:1", lambda ln: ln - 1 if ln > 0 else -1),
    ("wave_ror:1", lambda ln: (ln - 1) % 64),
    ("row_mirror", lambda ln: _row(ln) + 15 - (ln & 15)),
    ("row_half_mirror", lambda ln: (ln & ~7) + 7 - (ln & 7)),
    ("row_bcast:15", lambda ln: _row(ln) - 1 if ln >= 16 else -1),
    ("row_bcast:31", lambda ln: 31 if ln >= 32 else -1),
]


@pytest.mark.parametrize("cpu", ["gfx942", "gfx90a"])
@pytest.mark.parametrize(("ctrl", "rule"), GFX9_CONTROLS, ids=[c for c, _ in GFX9_CONTROLS])
def test_gfx9_dpp_controls(cpu: str, ctrl: str, rule) -> None:  # type: ignore[no-untyped-def]
    """Full EXEC, all rows and banks: lane l reads the table's lane; a lane with none keeps
    the old v0 (BOUND_CTRL = 0)."""
    w = _run(f"v_mov_b32_dpp v0, v1 {ctrl} row_mask:0xf bank_mask:0xf", cpu)
    assert w.V[:, 0].tolist() == _expect(64, {ln: rule(ln) for ln in range(64)}).tolist()
    assert w.vdef[:, 0].all()
    assert w.V[:, 1].tolist() == list(range(100, 164))        # the source is untouched


def test_bound_ctrl_writes_zero_for_an_invalid_lane() -> None:
    """row_shr:2 with `bound_ctrl:0` (BOUND_CTRL = 1): lanes 0 and 1 of each row read no lane
    and get a defined 0."""
    w = _run("v_mov_b32_dpp v0, v1 row_shr:2 row_mask:0xf bank_mask:0xf bound_ctrl:0")
    rule = {ln: ln - 2 if (ln & 15) >= 2 else -2 for ln in range(64)}
    assert w.V[:, 0].tolist() == _expect(64, rule).tolist()
    assert w.vdef[:, 0].all()


def test_row_and_bank_masks_disable_writes() -> None:
    """row_mask 0x6 (rows 1, 2) and bank_mask 0x5 (banks 0, 2: lanes 0-3 and 8-11 of a row)
    with the identity quad_perm: only those lanes are written (with their own v1)."""
    w = _run("v_mov_b32_dpp v0, v1 quad_perm:[0,1,2,3] row_mask:0x6 bank_mask:0x5")
    rule = {ln: ln if (ln >> 4) in (1, 2) and ((ln & 15) >> 2) in (0, 2) else -1
            for ln in range(64)}
    assert w.V[:, 0].tolist() == _expect(64, rule).tolist()


def test_src1_reads_its_own_lane_when_it_names_src0s_register() -> None:
    """`v_add_u32_dpp v1, v1, v1 row_shr:1 bound_ctrl:0` (the atomic optimizer's scan step):
    SRC0 is v1 of lane l-1 (0 for lane 0 of a row), SRC1 v1 of lane l itself, so lane l gets
    (100 + l - 1) + (100 + l), and lane 16r gets 0 + 100 + 16r."""
    w = _run("v_add_u32_dpp v1, v1, v1 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:0")
    want = [(0 if ln % 16 == 0 else 100 + ln - 1) + 100 + ln for ln in range(64)]
    assert w.V[:, 1].tolist() == want


def test_inactive_source_lane_is_invalid_on_gfx9() -> None:
    """EXEC without lane 5: lane 6 (row_shr:1 reads lane 5) reads a disabled lane, so it is
    invalid: not written with BOUND_CTRL = 0 (keeps 7), 0 with BOUND_CTRL = 1; lane 5
    itself is not written (EXEC)."""
    full = (1 << 64) - 1
    w = _run("v_mov_b32_dpp v0, v1 row_shr:1 row_mask:0xf bank_mask:0xf",
             w=_wave(64, full & ~(1 << 5)))
    assert (w.V[4:8, 0].tolist()) == [103, 7, 7, 106]
    w = _run("v_mov_b32_dpp v0, v1 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:0",
             w=_wave(64, full & ~(1 << 5)))
    assert (w.V[4:8, 0].tolist()) == [103, 7, 0, 106]


def test_definedness_moves_with_the_source_lane() -> None:
    """v1 lane 3 undefined: quad_perm:[1,0,3,2] moves it to lane 2; lane 3 (reading lane 2)
    is defined; a bound_ctrl zero is defined."""
    w = _wave()
    w.vdef[3, 1] = False
    _run("v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf", w=w)
    assert w.vdef[:4, 0].tolist() == [True, True, False, True]
    w = _wave()
    w.vdef[0, 1] = False
    _run("v_mov_b32_dpp v0, v1 wave_shl:1 row_mask:0xf bank_mask:0xf bound_ctrl:0", w=w)
    assert w.vdef[63, 0] and w.V[63, 0] == 0 and w.vdef[:63, 0].all()


def test_add_with_float_modifiers_applies_them_to_the_moved_value() -> None:
    """`v_add_f32_dpp v0, -v1, v2 row_mirror`: lane 0 reads lane 15's v1 as f32, negated,
    plus its own v2. v1 = 2.0 + lane, v2 = 0.5: lane 0 = -(17.0) + 0.5 = -16.5."""
    w = _wave()
    w.V[:, 1] = np.arange(64, dtype=np.float32).__add__(2).view(np.uint32)
    w.V[:, 2] = np.float32(0.5).view(np.uint32)
    _run("v_add_f32_dpp v0, -v1, v2 row_mirror row_mask:0xf bank_mask:0xf", w=w)
    assert w.V[0, 0].view(np.float32) == np.float32(-16.5)
    assert w.V[16, 0].view(np.float32) == np.float32(-(2.0 + 31) + 0.5)


GFX11_CONTROLS = [
    ("row_share:3", lambda ln: _row(ln) + 3),
    ("row_xmask:5", lambda ln: _row(ln) + ((ln & 15) ^ 5)),
    ("row_shr:1", lambda ln: ln - 1 if ln & 15 else -1),
    ("row_mirror", lambda ln: _row(ln) + 15 - (ln & 15)),
]


@pytest.mark.parametrize(("ctrl", "rule"), GFX11_CONTROLS, ids=[c for c, _ in GFX11_CONTROLS])
def test_gfx11_dpp16_controls(ctrl: str, rule) -> None:  # type: ignore[no-untyped-def]
    w = _run(f"v_mov_b32_dpp v0, v1 {ctrl} row_mask:0xf bank_mask:0xf", "gfx1100")
    assert w.V[:, 0].tolist() == _expect(32, {ln: rule(ln) for ln in range(32)}).tolist()


def test_gfx11_fetch_inactive() -> None:
    """EXEC without lane 3, row_share:3 (every lane of row 0 reads lane 3): with fi:1 they
    read its v1 (103); with fi:0 and BOUND_CTRL = 0 they are not written (7); row 1 reads
    lane 19, active, either way. Lane 3 itself is never written."""
    mask = 0xFFFF_FFFF & ~(1 << 3)
    w = _run("v_mov_b32_dpp v0, v1 row_share:3 row_mask:0xf bank_mask:0xf fi:1", "gfx1100",
             _wave(32, mask))
    assert w.V[:, 0].tolist() == [103] * 3 + [7] + [103] * 12 + [119] * 16
    w = _run("v_mov_b32_dpp v0, v1 row_share:3 row_mask:0xf bank_mask:0xf", "gfx1100",
             _wave(32, mask))
    assert w.V[:, 0].tolist() == [7] * 16 + [119] * 16


def test_gfx11_bound_ctrl_zero_and_one() -> None:
    """GFX11 takes `bound_ctrl:0` literally (BOUND_CTRL = 0: not written) and
    `bound_ctrl:1` as BOUND_CTRL = 1 (zero): row_shl:15 leaves only lane 0 of a row valid."""
    w = _run("v_mov_b32_dpp v0, v1 row_shl:15 row_mask:0xf bank_mask:0xf bound_ctrl:1",
             "gfx1100")
    assert w.V[:, 0].tolist() == ([115] + [0] * 15) + ([131] + [0] * 15)


def test_dpp8() -> None:
    """dpp8:[7,6,5,4,3,2,1,0]: lane l reads (l & ~7) + 7 - (l & 7). With lane 6 disabled and
    fi:0 lane 1 (which reads lane 6) fetches 0; with fi:1 it fetches 106."""
    w = _run("v_mov_b32_dpp v0, v1 dpp8:[7,6,5,4,3,2,1,0]", "gfx1100")
    assert w.V[:, 0].tolist() == [100 + (ln & ~7) + 7 - (ln & 7) for ln in range(32)]
    mask = 0xFFFF_FFFF & ~(1 << 6)
    w = _run("v_mov_b32_dpp v0, v1 dpp8:[7,6,5,4,3,2,1,0]", "gfx1100", _wave(32, mask))
    assert w.V[:8, 0].tolist() == [107, 0, 105, 104, 103, 102, 7, 100]
    w = _run("v_mov_b32_dpp v0, v1 dpp8:[7,6,5,4,3,2,1,0] fi:1", "gfx1100", _wave(32, mask))
    assert w.V[:8, 0].tolist() == [107, 106, 105, 104, 103, 102, 7, 100]


def test_a_load_in_flight_to_src0_is_a_hazard() -> None:
    from rgpu_fuzz.sim.bound.inflight import issue_vector_load
    w = _wave()
    issue_vector_load(w, 1, np.zeros((64, 1), np.uint32), np.ones((64, 1), bool), vm=True,
                      lgkm=False)
    with pytest.raises(SimStop) as stop:
        _run("v_mov_b32_dpp v0, v1 row_shr:1 row_mask:0xf bank_mask:0xf", w=w)
    assert stop.value.fault.signature == "sim-waitcnt-hazard"


@pytest.mark.parametrize(("line", "want"), [
    # v1 = (0x3c00 + l) << 16 | (0x4000 + l); v0 = 7. quad_perm:[1,0,3,2]: lane l reads l ^ 1
    ("v_mov_b16_dpp v0.h, v1.h quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
     [0x3C01_0007, 0x3C00_0007, 0x3C03_0007, 0x3C02_0007]),
    ("v_mov_b16_dpp v0.l, v1.l quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
     [0x4001, 0x4000, 0x4003, 0x4002]),
    # row_shr:1: lane 0 reads none (kept: 7), lane l the high half of lane l - 1
    ("v_mov_b16_dpp v0.l, v1.h row_shr:1 row_mask:0xf bank_mask:0xf",
     [0x7, 0x3C00, 0x3C01, 0x3C02]),
])
def test_gfx11_true16_halves(line: str, want: list[int]) -> None:
    """A true16 SRC0 names its half with bit 7 of the DPP dword's SRC0 (RDNA3 ISA §7.3
    "16-bit VGPRs"): `v1.h` is field 0x81, not v129; the result writes only its half of
    v0 (the other keeps 7 or 0)."""
    w = _wave(32)
    lane = np.arange(32, dtype=np.uint32)
    w.V[:, 1] = (lane + 0x3C00) << 16 | (lane + 0x4000)
    assert assemble([line], "gfx1100").templates[0].text == line
    _run(line, "gfx1100", w)
    assert w.V[:4, 0].tolist() == want


@pytest.mark.parametrize(("line", "want"), [
    # lane l: SRC0 from row_shr:1 (0 for lane 0 of a row: bound_ctrl:1) + v2 (1000) + v3 (5)
    ("v_add3_u32_e64_dpp v0, v1, v2, v3 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1",
     [(0 if ln % 16 == 0 else 100 + ln - 1) + 1005 for ln in range(32)]),
    # DPP8 reversal of each group of 8 for SRC0; SRC2 names v1 and reads its own lane
    ("v_add3_u32_e64_dpp v0, v1, v2, v1 dpp8:[7,6,5,4,3,2,1,0]",
     [100 + (ln & ~7) + 7 - (ln & 7) + 1000 + 100 + ln for ln in range(32)]),
    # VOP3SD carry-out: lane l = v1 of lane l ^ 1 + v2; no carry
    ("v_add_co_u32_e64_dpp v0, s6, v1, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
     [100 + (ln ^ 1) + 1000 for ln in range(32)]),
])
def test_gfx11_vop3_dpp(line: str, want: list[int]) -> None:
    """GFX11 VOP3 with a DPP dword (`rgpu_fuzz/sim/isa/vop3_dpp.py`): decoded and printed as
    llvm-mc-22 prints it, SRC0 read through the DPP lane map, the other sources from their
    own lanes."""
    w = _wave(32)
    w.V[:, 3], w.vdef[:, 3] = 5, True
    (text, _), = encodings(line + "\n", "gfx1100")
    assert assemble([line], "gfx1100").templates[0].text == text
    _run(line, "gfx1100", w)
    assert w.V[:, 0].tolist() == want


@pytest.mark.parametrize("cpu", ["gfx90a", "gfx942"])
def test_row_newbcast(cpu: str) -> None:
    """row_newbcast:5 (DPP_CTRL 0x155, GFX90A+: "broadcast a thread within a row to the
    whole row"): every lane of row r reads lane 16r + 5; printed as llvm-mc-22 prints it."""
    line = "v_mov_b32_dpp v0, v1 row_newbcast:5 row_mask:0xf bank_mask:0xf"
    (text, _), = encodings(line + "\n", cpu)
    assert assemble([line], cpu).templates[0].text == text
    w = _run(line, cpu)
    assert w.V[:, 0].tolist() == [100 + (ln & ~15) + 5 for ln in range(64)]


def test_64_bit_dpp_moves_both_halves() -> None:
    """gfx942 `v_mov_b64_dpp v[4:5], v[2:3] row_newbcast:1` (DP ALU DPP takes row_newbcast
    only): lane l gets the 64-bit pair of lane 16r + 1, both halves."""
    line = "v_mov_b64_dpp v[4:5], v[2:3] row_newbcast:1 row_mask:0xf bank_mask:0xf"
    (text, _), = encodings(line + "\n", "gfx942")
    assert assemble([line], "gfx942").templates[0].text == text
    w = _wave()
    w.V[:, 2] = np.arange(64)
    w.V[:, 3] = 5000 + np.arange(64)
    w.vdef[:, 2:4] = True
    _run(line, "gfx942", w)
    assert w.V[:, 4].tolist() == [(ln & ~15) + 1 for ln in range(64)]
    assert w.V[:, 5].tolist() == [5000 + (ln & ~15) + 1 for ln in range(64)]


def test_vopc_dpp_disabled_lanes_write_zero_mask_bits() -> None:
    """`v_cmp_eq_u32 vcc_lo, v1, v2 row_share:0 row_mask:0x1` with v2 = 100: row 0 compares
    v1 of lane 0 (100) with 100 in every lane: bits 0-15 are 1; row 1 is disabled by
    ROW_MASK and its bits are written as a lane outside EXEC's are, 0 (the assumption LLVM's
    gfx1100 64-bit scans rely on: `bound/dpp.py`). llvm-mc-22 prints the form without
    `_dpp`; the decoder prints `v_cmp_eq_u32_dpp`."""
    w = _wave(32)
    w.V[:, 2] = 100
    _run("v_cmp_eq_u32 vcc_lo, v1, v2 row_share:0 row_mask:0x1 bank_mask:0xf", "gfx1100", w)
    assert (w.S[106], w.sdef[106]) == (0x0000_FFFF, 0xFFFF_FFFF)
