"""GFX9 VGPR indexing mode (`s_set_gpr_idx_on` … `s_set_gpr_idx_off`),
`rgpu_fuzz.sim.bound.gpr_idx`.

Expected values are worked out by hand from the ISA's rules (Vega/CDNA ISA, SOPC
S_SET_GPR_IDX_ON: M0[7:0] = S0[7:0], M0[15:12] = the 4-bit mode, other bits unchanged; a
VALU instruction's VGPR operands selected by the mode — bit 0 src0, bit 1 src1, bit 2 src2,
bit 3 dst — are offset by M0[7:0]) and, for the kernel, from what the IR computes
(`data/gpr_idx.ll`: insertelement and extractelement at a dynamic index). A 30-minute
campaign met four generated cases LLVM compiled this way at O3; before this
module they were `unsupported-instruction:s_set_gpr_idx_on`.

llvm-mc-22 (`-mcpu=gfx942 --show-encoding`) encodes the hand-written sequences.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

import numpy as np
import pytest

from rgpu_fuzz.codeobj.reader import read_code_object
from rgpu_fuzz.sim.bound.program import bind_one
from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.isa.code import decode_text
from rgpu_fuzz.sim.launch import engine, tiers
from rgpu_fuzz.sim.launch.engine import Arg, Status
from rgpu_fuzz.sim.state.wave import M0, Wave
from tests.sim.asm_steps import ENV, assemble, run_steps
from tests.sim.kernels import build, out, run

FULL = 0xFFFF_FFFF


def _wave(m0: int = 0, m0_def: int = FULL) -> Wave:
    w = Wave(64, 0, 0)
    w.vdef[:, :] = True
    for col in range(64):
        w.V[:, col] = col * 1000 + np.arange(64, dtype=np.uint32)
    w.S[M0], w.sdef[M0] = m0, m0_def
    w.S[5], w.sdef[5] = 0x1234_5603, FULL
    return w


def test_on_sets_the_index_and_mode_bits_of_m0_and_keeps_the_rest() -> None:
    w = _wave(m0=0xFFFF_0F00)
    run_steps(assemble(["s_set_gpr_idx_on s5, gpr_idx(DST)", "s_set_gpr_idx_off"]), w)
    # 0xFFFF0F00 with [7:0] = 0x03 (s5's low byte) and [15:12] = 0b1000 (DST)
    assert w.S[M0] == 0xFFFF_8F03
    assert w.sdef[M0] == FULL


def test_idx_and_mode_write_their_fields_only() -> None:
    w = _wave(m0=0xAAAA_AAAA)
    run_steps(assemble(["s_set_gpr_idx_idx s5", "s_set_gpr_idx_mode gpr_idx(SRC0,SRC2)"]), w)
    # [7:0] = 0x03, [15:12] = 0b0101, the rest of 0xAAAAAAAA
    assert w.S[M0] == 0xAAAA_5A03


def test_dst_indexing_moves_the_destination_only() -> None:
    w = _wave()
    run_steps(assemble(["s_set_gpr_idx_on s5, gpr_idx(DST)", "v_mov_b32 v10, v2",
                "v_add_u32 v11, v1, v2", "s_set_gpr_idx_off"]), w)
    lanes = np.arange(64, dtype=np.uint32)
    # index 3: v13 = v2, v14 = v1 + v2; v10 and v11 untouched
    assert w.V[:, 13].tolist() == (2000 + lanes).tolist()
    assert w.V[:, 14].tolist() == (1000 + 2000 + 2 * lanes).tolist()
    assert w.V[:, 10].tolist() == (10000 + lanes).tolist()
    assert w.V[:, 11].tolist() == (11000 + lanes).tolist()


def test_source_indexing_moves_the_selected_sources_only() -> None:
    w = _wave()
    run_steps(assemble(["s_set_gpr_idx_on s5, gpr_idx(SRC1)", "v_sub_u32 v20, v1, v2",
                "s_set_gpr_idx_off", "v_sub_u32 v21, v1, v2"]), w)
    lanes = np.arange(64, dtype=np.uint32)
    # inside: v20 = v1 - v5 (src1 moved by 3), the destination not moved
    assert w.V[:, 20].tolist() == ((1000 + lanes) - (5000 + lanes)).astype(np.uint32).tolist()
    # after OFF: plain v1 - v2
    assert w.V[:, 21].tolist() == [(1000 - 2000) % 2**32] * 64


def test_the_same_words_outside_a_region_are_not_indexed() -> None:
    """Steps are shared by instruction words: the v_mov inside the region must not be the
    step the same words get elsewhere, in either order of binding."""
    code = assemble(["v_mov_b32 v10, v2", "s_set_gpr_idx_on s5, gpr_idx(DST)",
                  "v_mov_b32 v10, v2", "s_set_gpr_idx_off", "v_mov_b32 v10, v2"])
    assert code.templates[0].share_key and code.templates[4].share_key
    assert not code.templates[2].share_key
    w = _wave()
    run_steps(code, w)
    assert w.V[:, 13].tolist() == w.V[:, 2].tolist()
    assert w.V[:, 10].tolist() == w.V[:, 2].tolist()
    assert w.V[:, 11].tolist() == (11000 + np.arange(64)).tolist()


def test_an_undefined_index_is_an_uninit_read() -> None:
    code = assemble(["s_set_gpr_idx_idx s6", "v_mov_b32 v10, v2"])
    w = _wave()
    w.S[6], w.sdef[6] = 3, FULL & ~0x4  # bit 2 of the index never written
    # no ON: the v_mov is not in a region; IDX alone writes M0 bits
    run_steps(code, w)
    assert w.sdef[M0] & 0xFF == 0xFB
    region = assemble(["s_set_gpr_idx_on s6, gpr_idx(DST)", "v_mov_b32 v10, v2",
                    "s_set_gpr_idx_off"])
    with pytest.raises(SimStop) as stop:
        run_steps(region, w)
    assert stop.value.fault.kind is FaultKind.UNINIT_READ


def test_an_index_past_v255_is_an_oob_access() -> None:
    w = _wave()
    w.S[5] = 0xF0  # v20 + 240 = v260
    with pytest.raises(SimStop) as stop:
        run_steps(assemble(["s_set_gpr_idx_on s5, gpr_idx(DST)", "v_mov_b32 v20, v2",
                    "s_set_gpr_idx_off"]), w)
    assert stop.value.fault.kind is FaultKind.OOB_ACCESS
    assert "v260" in stop.value.fault.detail


@pytest.mark.parametrize("between", ["s_branch 0", "s_cbranch_scc1 0", "s_endpgm",
                                     "s_set_gpr_idx_mode gpr_idx(SRC0)"])
def test_a_region_that_is_not_straight_line_is_unsupported(between: str) -> None:
    code = assemble(["s_set_gpr_idx_on s5, gpr_idx(DST)", between, "v_mov_b32 v10, v2",
                  "s_set_gpr_idx_off"])
    step = bind_one(code.templates[0], ENV, None, lambda address: 0)
    with pytest.raises(SimStop) as stop:
        step(_wave())
    assert stop.value.fault.signature == "unsupported-instruction:s_set_gpr_idx_on"


def test_on_without_off_is_unsupported() -> None:
    code = assemble(["s_set_gpr_idx_on s5, gpr_idx(DST)", "v_mov_b32 v10, v2"])
    with pytest.raises(SimStop) as stop:
        run_steps(code, _wave())
    assert stop.value.fault.signature == "unsupported-instruction:s_set_gpr_idx_on"


@pytest.fixture(params=["bound", "fused"])
def tier(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The kernel on the bound steps, and with every run fused at its first execution."""
    if request.param == "fused":
        monkeypatch.setattr(tiers, "HOT", 1)
    engine._PROGRAMS.clear()
    yield request.param
    engine._PROGRAMS.clear()


@pytest.mark.parametrize(("cpu", "opt", "indexing"), [
    ("gfx942", 0, ("s_set_gpr_idx_on", "gpr_idx(DST)", "gpr_idx(SRC0)")),
    ("gfx90a", 0, ("s_set_gpr_idx_on", "gpr_idx(DST)", "gpr_idx(SRC0)")),
    # RDNA3 has no indexing mode: M0-relative moves (bound/movrel.py, tests/sim/test_movrel.py)
    ("gfx1100", 0, ("v_movreld_b32", "m0")),
    ("gfx1100", 3, ("v_movreld_b32", "m0")),
])
def test_dynamic_insert_and_extract_compute_what_the_ir_says(
        cpu: str, opt: int, indexing: tuple[str, ...], tier: str) -> None:
    code = build("gpr_idx.ll", cpu=cpu, opt=opt)
    text = " ".join(inst.text for inst in decode_text(read_code_object(code)))
    assert all(word in text for word in indexing)
    for idx in (0, 5, 7):
        for _ in range(2):  # the second launch runs what the first one fused
            res = run(code, (1, 1, 1), (64, 1, 1),
                      [Arg("out"), Arg("got"), Arg(data=struct.pack("<I", idx))],
                      {"out": np.zeros(64 * 8, np.uint32), "got": np.zeros(64, np.uint32)})
            assert res.status is Status.OK, res.fault
            vecs = [[t + 100 if j == idx else j + 1 for j in range(8)] for t in range(64)]
            assert out(res, "out", np.uint32).reshape(64, 8).tolist() == vecs
            assert out(res, "got", np.uint32).tolist() == [vecs[t][t & 7] for t in range(64)]
