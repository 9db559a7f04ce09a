"""Wave operations lowered on their own, without the front end: one function per operation,
argument type and target, each value stored so nothing is dead (the lowering's IR helpers
checked against the real LLVM back ends; tests/unit/test_wave_lowering.py)."""

from __future__ import annotations

from rgpu_fuzz.lower.context import ModuleState
from rgpu_fuzz.lower.irapi import ir
from rgpu_fuzz.lower.kernel import HelperState
from rgpu_fuzz.lower.targets import TargetHooks
from rgpu_fuzz.lower.values import PTR, VOID, Intrinsics, value_type
from rgpu_fuzz.lower.waves import MOVES, QUERIES, REDUCTIONS, SCAN, VOTES
from rgpu_fuzz.model.scalars import Scalar

INTS = (Scalar.I8, Scalar.U16, Scalar.I32, Scalar.U32, Scalar.I64, Scalar.U64)
MOVE_TYPES = (*INTS, Scalar.F32, Scalar.F64, Scalar.BOOL)


def signature(op: str, s: Scalar) -> list[Scalar]:
    """The argument types of `op` on `s` (docs/language.md "Wave operations")."""
    if op in QUERIES:
        return []
    if op in VOTES:
        return [Scalar.BOOL]
    if op in ("read_lane", "shuffle", "shuffle_xor", "shuffle_down"):
        return [s, Scalar.U32]
    return [s]


def cases() -> list[tuple[str, Scalar]]:
    out: list[tuple[str, Scalar]] = [(op, Scalar.U32) for op in sorted(QUERIES | VOTES)]
    out += [(op, s) for op in sorted(MOVES) for s in MOVE_TYPES]
    out += [(op, s) for op in sorted(REDUCTIONS | {SCAN}) for s in INTS]
    return out


def module_ir(target: TargetHooks) -> str:
    """Every (operation, type) of `cases` as one function `@w<i>(args..., ptr out)`."""
    module = ir.Module(name="waves")
    module.triple = target.triple
    if target.data_layout:
        module.data_layout = target.data_layout
    ms = ModuleState(module, Intrinsics(module), {}, {}, target)
    ms.trap_fn = target.define_trap_fn(ms)
    gptr = target.global_ptr
    for i, (op, s) in enumerate(cases()):
        types = signature(op, s)
        fnty = ir.FunctionType(VOID, [value_type(t) for t in types] + [gptr, PTR, PTR, gptr])
        fn = ir.Function(module, fnty, name=f"w{i}")
        st = HelperState(ms, fn, fn.args[-3], fn.args[-2], fn.args[-1])
        got = target.wave_op(st, op, list(fn.args[:len(types)]), types)
        t = got.type
        if t == ir.IntType(1):
            got = st.b.zext(got, ir.IntType(8))
        st.b.store(got, fn.args[len(types)])
        st.b.ret_void()
        st.finish()
        fn.attributes.add("convergent")
    target.finish_module(module)
    return str(module)
