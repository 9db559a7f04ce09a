"""Per-bit 32-bit rules (`bitdef32.bitdef_step`, `bitdef32.cndmask_step`) where the partly
defined or undefined lanes lie outside EXEC, as at O0: an SGPR lane mask spilled by
v_writelane leaves a spill VGPR's lanes partly defined, and code under a partial EXEC
reads registers whose inactive lanes were never written. A lane outside EXEC is not
written, so only the lanes in EXEC decide the result's definedness; where they are all
wholly defined every rule defines all 32 bits, and where one is not, the rule's bits.

Expected values by hand from the rules in `bitdef32`'s docstring (memcheck's: an add
defines the bits below the lowest undefined source bit; OR defines a bit both sources
define or a defined 1 decides; a shift by a defined amount defines the bits shifted in)
and the CDNA3 ISA pseudocode (`D.u32 = S0.u32 | S1.u32`, `S0.u32 + S1.u32`,
`S1.u32 << S0[4:0]`, `VCC[laneId] ? S1.u32 : S0.u32`); llvm-mc-22 encodes the
instructions (gfx942, wave64)."""

from __future__ import annotations

from rgpu_fuzz.sim.state.halves import defined_bits
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import assemble, run_steps

M32 = 0xFFFF_FFFF
EXEC_RUN = 0xFF             # lanes 0-7: one run (slices)
EXEC_SPLIT = 0b1100_0000_1111  # lanes 0-3 and 10-11: not one run (a lane mask)
OUTSIDE = 40                # a lane outside either EXEC


def _wave(exec_mask: int) -> Wave:
    """v0 = 0x00F0_0000 and v1 = 0x1234 defined in every lane but `OUTSIDE`, where v1 holds
    a partly defined lane (bits 15:0, as a spilled lane mask's low half) and v0 nothing;
    v2, the destination, partly defined (bits 7:0) in lane 5 and in `OUTSIDE`."""
    w = Wave(64, 0, 0)
    w.V[:, 0], w.vdef[:, 0] = 0x00F0_0000, True
    w.V[:, 1], w.vdef[:, 1] = 0x1234, True
    w.vdef[OUTSIDE, 0] = w.vdef[OUTSIDE, 1] = False
    w.vpart[1] = {OUTSIDE: 0x0000_FFFF}
    w.V[:, 2], w.vdef[:, 2] = 7, True
    w.vdef[5, 2] = w.vdef[OUTSIDE, 2] = False
    w.vpart[2] = {5: 0xFF, OUTSIDE: 0xFF}
    w.set_exec(exec_mask)
    return w


def _lanes(mask: int) -> list[int]:
    return [ln for ln in range(64) if mask >> ln & 1]


def _check_untouched(w: Wave, exec_mask: int) -> None:
    """Lanes outside EXEC keep v2's value and state (lane 5 in `EXEC_SPLIT` is outside)."""
    for ln in range(64):
        if not exec_mask >> ln & 1:
            assert w.V[ln, 2] == 7
            want = 0xFF if ln in (5, OUTSIDE) else M32
            assert defined_bits(w, 2)[ln] == want, ln


def test_or_defined_in_exec_is_defined_whatever_lies_outside() -> None:
    for exec_mask in (EXEC_RUN, EXEC_SPLIT):
        w = _wave(exec_mask)
        run_steps(assemble(["v_or_b32_e32 v2, v0, v1"]), w)
        bits = defined_bits(w, 2)
        for ln in _lanes(exec_mask):
            assert w.V[ln, 2] == 0x00F0_1234 and bits[ln] == M32 and w.vdef[ln, 2]
        _check_untouched(w, exec_mask)
        # lane 5's partly defined entry is replaced where EXEC wrote it
        assert (5 in w.vpart[2]) == (not exec_mask >> 5 & 1)
        assert w.vpart[2][OUTSIDE] == 0xFF


def test_or_with_a_partly_defined_lane_in_exec_keeps_per_bit_rule() -> None:
    # lane 3 of v1 defined in bits 15:0 only: OR's result bits are those both define
    # (15:0) and those v0's defined 1s decide (23:20): 0x00F0_FFFF
    for exec_mask in (EXEC_RUN, EXEC_SPLIT):
        w = _wave(exec_mask)
        w.vdef[3, 1] = False
        w.vpart[1][3] = 0x0000_FFFF
        run_steps(assemble(["v_or_b32_e32 v2, v0, v1"]), w)
        bits = defined_bits(w, 2)
        assert bits[3] == 0x00F0_FFFF and not w.vdef[3, 2]
        for ln in _lanes(exec_mask):
            if ln != 3:
                assert bits[ln] == M32, ln
        _check_untouched(w, exec_mask)


def test_add_with_a_partly_defined_lane_in_exec_defines_bits_below_it() -> None:
    # lane 2 of v1 defined in bits 15:0: the add defines bits 15:0 (carries move up)
    w = _wave(EXEC_RUN)
    w.vdef[2, 1] = False
    w.vpart[1][2] = 0x0000_FFFF
    run_steps(assemble(["v_add_u32_e32 v2, v0, v1"]), w)
    bits = defined_bits(w, 2)
    assert bits[2] == 0x0000_FFFF
    assert w.V[2, 2] == 0x00F0_1234
    assert all(bits[ln] == M32 for ln in _lanes(EXEC_RUN) if ln != 2)
    _check_untouched(w, EXEC_RUN)


def test_shift_of_an_undefined_lane_in_exec_defines_the_bits_shifted_in() -> None:
    # lane 6 of v1 wholly undefined (no partly defined entry) while v1 has one elsewhere:
    # `v1 << 4` defines bits 3:0 (shifted-in zeros), not all or none
    w = _wave(EXEC_RUN)
    w.vdef[6, 1] = False
    run_steps(assemble(["v_lshlrev_b32_e32 v2, 4, v1"]), w)
    bits = defined_bits(w, 2)
    assert bits[6] == 0xF and w.V[6, 2] == 0x12340
    assert all(bits[ln] == M32 for ln in _lanes(EXEC_RUN) if ln != 6)
    _check_untouched(w, EXEC_RUN)


def test_or_of_an_undefined_lane_in_exec_without_partly_defined_sources() -> None:
    # no source column partly defined, lane 4 of v0 wholly undefined: OR still takes the
    # bits v1's defined 1s decide (0x1234), as `bitdef32.DECIDING` says
    w = _wave(EXEC_RUN)
    del w.vpart[1]
    w.vdef[4, 0] = False
    run_steps(assemble(["v_or_b32_e32 v2, v0, v1"]), w)
    bits = defined_bits(w, 2)
    assert bits[4] == 0x1234
    assert all(bits[ln] == M32 for ln in _lanes(EXEC_RUN) if ln != 4)


def test_cndmask_defined_in_exec_is_all_or_none_by_the_mask_bit() -> None:
    # s[4:5] selects v1 in odd lanes; lane 7's mask bit undefined: that lane is undefined
    # even though both sources are defined there; v1's partly defined lane is outside EXEC
    w = _wave(EXEC_RUN)
    sel = int("10" * 32, 2)
    w.S[4], w.S[5] = sel & M32, sel >> 32
    w.sdef[4], w.sdef[5] = M32 & ~(1 << 7), M32
    run_steps(assemble(["v_cndmask_b32_e64 v2, v0, v1, s[4:5]"]), w)
    bits = defined_bits(w, 2)
    for ln in range(7):
        assert w.V[ln, 2] == (0x1234 if ln & 1 else 0x00F0_0000)
        assert bits[ln] == M32
    assert bits[7] == 0 and not w.vdef[7, 2]
    assert 5 not in w.vpart[2] and w.vpart[2][OUTSIDE] == 0xFF
    _check_untouched(w, EXEC_RUN)


def test_cndmask_copies_a_selected_partly_defined_lane_in_exec() -> None:
    w = _wave(EXEC_RUN)
    w.vdef[1, 1] = False
    w.vpart[1][1] = 0x0000_FFFF
    sel = int("10" * 32, 2)
    w.S[4], w.S[5] = sel & M32, sel >> 32
    w.sdef[4], w.sdef[5] = M32, M32
    run_steps(assemble(["v_cndmask_b32_e64 v2, v0, v1, s[4:5]"]), w)
    bits = defined_bits(w, 2)
    assert bits[1] == 0x0000_FFFF and w.V[1, 2] == 0x1234
    assert all(bits[ln] == M32 for ln in range(8) if ln != 1)


def test_or_under_partial_exec_over_never_written_inactive_lanes() -> None:
    # no partly defined source; v0 undefined in every lane outside EXEC (never written
    # there): the lanes in EXEC are wholly defined, the others keep v2 as it was
    for exec_mask in (EXEC_RUN, EXEC_SPLIT):
        w = _wave(exec_mask)
        del w.vpart[1]
        for ln in range(64):
            if not exec_mask >> ln & 1:
                w.vdef[ln, 0] = False
        run_steps(assemble(["v_or_b32_e32 v2, v0, v1"]), w)
        bits = defined_bits(w, 2)
        for ln in _lanes(exec_mask):
            assert w.V[ln, 2] == 0x00F0_1234 and bits[ln] == M32, ln
        _check_untouched(w, exec_mask)
