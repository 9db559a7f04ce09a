"""A kernel descriptor asking for a float mode the simulator does not model is refused as
`unsupported-instruction:float-mode`, not simulated (`rgpu_fuzz.sim.launch.float_mode`):
FLOAT_ROUND_MODE_32 at bits 13:12 and FLOAT_ROUND_MODE_16_64 at bits 15:14 of
COMPUTE_PGM_RSRC1, descriptor bytes 48..51 (AMDGPUUsage "Kernel Descriptor"). A binary16
instruction under a flushing FLOAT_DENORM_MODE_16_64 (bits 19:18) is refused where it runs;
the same code object without f16 still runs. Writes of the MODE register at run time are
unsupported instructions."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rgpu_fuzz.codeobj.reader import read_code_object
from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.launch.engine import Arg, SimResult, Status
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import ENV, assemble, run_steps
from tests.sim.kernels import build, run
from tests.sim.packed_kernels import Kernel

RSRC1 = 48
ADD_F16 = Kernel("fadd_f16", "half", "half", "  %r = fadd half %a, %b")
ADD_I32 = Kernel("add_i32", "i32", "i32", "  %r = add i32 %a, %b")


def _with_rsrc1_bits(code: bytes, shift: int, value: int) -> bytes:
    """`code` with the 2-bit field at `shift` of every descriptor's COMPUTE_PGM_RSRC1 set to
    `value`."""
    co = read_code_object(code)
    out = bytearray(code)
    for k in co.kernels:
        sym = k.descriptor_symbol
        sec = next(s for s in co.elf.sections if s.addr and s.contains(sym.value, 64))
        at = sec.offset + sym.value - sec.addr + RSRC1
        word = int.from_bytes(out[at:at + 4], "little")
        word = (word & ~(3 << shift)) | (value << shift)
        out[at:at + 4] = word.to_bytes(4, "little")
    return bytes(out)


def _launch(code: bytes, dtype: type) -> SimResult:
    names = ("a", "b", "c", "out")
    bufs: dict[str, np.ndarray] = {n: np.arange(1, 65).astype(dtype) for n in names}
    return run(code, (1, 1, 1), (64, 1, 1), [Arg(buffer=n) for n in ("a", "b", "c", "out")],
               bufs)


@pytest.mark.parametrize(("shift", "value"), [(12, 1), (12, 3), (14, 2)])
def test_a_rounding_mode_other_than_nearest_even_is_refused(shift: int, value: int) -> None:
    code = _with_rsrc1_bits(build(ADD_I32.ir(), "gfx942", 3), shift, value)
    res = _launch(code, np.int32)
    assert res.status is Status.FAULT
    fault = res.fault
    assert fault is not None
    assert fault.kind is FaultKind.UNSUPPORTED
    assert fault.signature == "unsupported-instruction:float-mode"
    assert "FLOAT_ROUND_MODE" in fault.detail


@pytest.mark.parametrize("cpu", ["gfx942", "gfx1100"])
def test_flushing_f16_denormals_refuses_f16_code_only(cpu: str) -> None:
    res = _launch(_with_rsrc1_bits(build(ADD_F16.ir(), cpu, 3), 18, 0), np.float16)
    assert res.status is Status.FAULT and res.fault is not None
    assert res.fault.kind is FaultKind.UNSUPPORTED
    assert "FLOAT_DENORM_MODE_16_64" in res.fault.detail
    ok = _launch(_with_rsrc1_bits(build(ADD_I32.ir(), cpu, 3), 18, 0), np.int32)
    assert ok.status is Status.OK
    assert np.frombuffer(ok.buffers["out"], np.int32).tolist() == \
        [2 * i for i in range(1, 65)]


@pytest.mark.parametrize(("cpu", "line"), [
    ("gfx942", "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 4), 0xf"),
    ("gfx90a", "s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s2"),
    ("gfx1100", "s_denorm_mode 0xf"),
    ("gfx1100", "s_round_mode 0x1"),
])
def test_a_float_mode_written_at_run_time_is_unsupported(cpu: str, line: str) -> None:
    """The MODE register's FP_ROUND (bits 3:0) and FP_DENORM (bits 7:4) fields written by
    `s_setreg` or GFX11's `s_denorm_mode`/`s_round_mode` would change what every later float
    row computes: not modelled, so the instruction is unsupported, not ignored."""
    w = Wave(32 if cpu == "gfx1100" else 64, 0, 0)
    w.sdef[2] = 0xFFFF_FFFF
    with pytest.raises(SimStop) as stop:
        run_steps(assemble([line], cpu), w, replace(ENV, lanes=w.lanes))
    assert stop.value.fault.kind is FaultKind.UNSUPPORTED
