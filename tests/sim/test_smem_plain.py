"""SMEM loads from a plain SGPR pair plus a constant (`bound.smem.bind_smem`'s closure-free
step: kernel arguments at O3) against values worked out by hand: dwords are little-endian,
the destination is written at the covering `s_waitcnt` (CDNA3 ISA §4.4), and the
checks come in the general step's order: an undefined base (`sim-uninit-read`) before a
pending one (`sim-waitcnt-hazard`), then the bounds (`sim-oob-access`). Bytes of a padded
mapping past its contents load as undefined bits."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rgpu_fuzz.sim.bound.mem import drain
from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.bound.smem import bind_smem
from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics.memops import memop
from rgpu_fuzz.sim.state.memory import AddressSpace
from rgpu_fuzz.sim.state.wave import Pending, Wave

ENV = Env(lanes=4, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))
M32 = 0xFFFF_FFFF


def s_load(offset: int, n: int = 2, soffset: int | None = None):  # type: ignore[no-untyped-def]
    """`s_load_dword{x<n>} s[0:n-1], s[4:5], offset`; with `soffset`, gfx11's form
    `s_load_b{32n} s[0:n-1], s[4:5], s<soffset>, offset` (LLVM prints `null` for 125)."""
    opcode = "S_LOAD_DWORD" if n == 1 else f"S_LOAD_DWORDX{n}"
    ops: tuple[Opnd, ...] = (Opnd(OpKind.SGPR, 0, n), Opnd(OpKind.SGPR, 4, 2))
    if soffset is not None:
        ops += (Opnd(OpKind.SGPR, soffset, 1),)
    ops += (Opnd(OpKind.INT, 0, 1, value=offset),)
    inst = Inst(0, 8, opcode, "SMEM", opcode.lower(), ops)
    return bind_smem(inst, memop(opcode), ENV, None)  # type: ignore[arg-type]


def test_gfx11_null_soffset_takes_the_plain_step() -> None:
    """RDNA3 SMEM always has an SOFFSET field; `null` (SGPR 125, a constant 0 in `Env`)
    adds nothing, so the load is a plain SGPR pair plus a constant: the closure-free step,
    same bytes as without it. An SGPR that is not a constant keeps the general step."""
    step = s_load(8, soffset=125)
    assert step.__name__ == "plain"
    w = wave(bytes(range(16)))
    step(w)
    drain(w)
    assert (w.S[0], w.S[1]) == (0x0B0A_0908, 0x0F0E_0D0C)
    assert s_load(8, soffset=6).__name__ != "plain"


def wave(data: bytes, pad_to: int = 0) -> Wave:
    w = Wave(4, 0, 0)
    glob = AddressSpace()
    m = glob.map("args", data, pad_to=pad_to)
    w.mem = SimpleNamespace(glob=glob)
    w.S[4], w.S[5] = m.base & M32, m.base >> 32
    w.sdef[4] = w.sdef[5] = M32
    return w


def test_two_dwords_little_endian_written_at_the_wait() -> None:
    w = wave(bytes(range(16)))
    s_load(8)(w)                      # bytes 8..15
    assert w.S[0] == 0 and sorted(w.pend_s) == [0, 1]
    drain(w)
    assert (w.S[0], w.S[1]) == (0x0B0A_0908, 0x0F0E_0D0C)
    assert (w.sdef[0], w.sdef[1]) == (M32, M32)


def test_past_the_contents_of_a_padded_mapping_the_bits_are_undefined() -> None:
    w = wave(bytes(range(10)), pad_to=16)
    s_load(8)(w)                      # bytes 8, 9 hold contents; 10..15 padding
    drain(w)
    assert (w.S[0], w.sdef[0], w.sdef[1]) == (0x0000_0908, 0x0000_FFFF, 0)


@pytest.mark.parametrize(("setup", "kind"), [
    ("undefined-and-pending", FaultKind.UNINIT_READ),
    ("pending", FaultKind.WAITCNT_HAZARD),
    ("bounds", FaultKind.OOB_ACCESS),
])
def test_checks_in_the_general_steps_order(setup: str, kind: FaultKind) -> None:
    w = wave(bytes(16))
    if setup == "undefined-and-pending":
        w.sdef[5] = 0xFFFF_FFFE
    if setup != "bounds":
        w.pend_s[5] = Pending(vm=False, lgkm=True, smem=True)
    with pytest.raises(SimStop) as got:
        s_load(12 if setup == "bounds" else 0)(w)      # bytes 12..19 of 16
    assert got.value.fault.kind is kind
