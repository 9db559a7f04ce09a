"""VOP3 abs/neg source modifiers on untyped (bNN) operands. LLVM folds `fneg`/`fabs` of a
select's operands into `v_cndmask_b32_e64` (`v_cndmask_b32_e64 v0, -v2, v1, vcc` in the
f32 sqrt expansion): the hardware clears / flips the sign bit of the moved bits (abs before
neg), with no denormal flush. The simulator applied modifiers to float-typed sources only,
so `(-p1).sqrt()` became sqrt(p1) = NaN (campaign buckets add71f0160 at O0 and 1b682c54bf
at O3, 2026-12-01). Expected values: sign bits by hand; numpy's IEEE square root."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from oracles import judge, load_policy
from rgpu_fuzz import casefile
from rgpu_fuzz.lang.features import case_module
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.runner import run_case
from rgpu_fuzz.sim.bound.operands import vector_source
from rgpu_fuzz.sim.isa.inst import OpKind, Opnd
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.test_definedness import CASES


@pytest.mark.parametrize(("bits", "neg", "abs_", "want"), [
    (0x3F80_0000, True, False, 0xBF80_0000),   # -(1.0)
    (0xBF80_0000, False, True, 0x3F80_0000),   # |-1.0|
    (0x3F80_0000, True, True, 0xBF80_0000),    # -|1.0|
    (0x7FC0_0000, True, False, 0xFFC0_0000),   # a NaN's sign flips too
    (0x0000_0001, True, False, 0x8000_0001),   # a denormal is not flushed
])
def test_b32_modifiers_act_on_the_sign_bit(bits: int, neg: bool, abs_: bool,
                                           want: int) -> None:
    w = Wave(4, 0, 0)
    w.V[:, 3] = bits
    w.vdef[:, 3] = True
    env = SimpleNamespace(flush32=True, flush64=True, lanes=4)
    get, _ = vector_source(Opnd(OpKind.VGPR, 3, 1, neg=neg, abs=abs_), "b32", env)
    assert np.asarray(get(w)).astype(np.uint32).tolist() == [want] * 4


@pytest.mark.parametrize("opt", ["O0", "O3"])
def test_sqrt_of_a_negated_argument(opt: str) -> None:
    """`out1[0] = (-p1).sqrt()` with p1 = -2.825044678317088e+29: sqrt(2.825e29) in f32."""
    case = casefile.load_checked(CASES / "sqrt_of_negated_kernarg.toml")
    spec = f"amdgpu-sim:gfx942:{opt}"
    outcomes = run_case(case, Registry().create_all(["ref", spec]))
    got = outcomes[spec]
    assert isinstance(got, Ok), got
    want = np.sqrt(np.float32(2.825044678317088e+29))
    assert got.outputs["out1"].values.tolist() == [float(want)]
    assert not judge(case, outcomes, load_policy("default"), case_module(case)).findings
