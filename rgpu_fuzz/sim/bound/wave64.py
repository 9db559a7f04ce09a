"""RDNA wave64's two VALU passes, where a program can tell them apart.

RDNA3 ISA §7.2.3.2 (RDNA2 ISA §6.2.4) "Wave64 Destination Restrictions": "When a VALU
instruction is issued from a wave64, it may issue twice as two wave32 instructions ... it
does impose a prohibition on wave64 VALU instructions that both write and read the same
SGPR value. Doing this may lead to unpredictable results. Specifically, the first pass of a
wave64 VALU instruction may not overwrite a scalar value used by the second half."

The SGPR results of a VALU instruction are lane masks (a VOPC SDST or VCC, a VOP3SD
carry-out), one dword per pass: the first pass writes the low dword, lanes 0-31. The second
pass reads every SGPR source again, except a carry-in mask, of which each pass reads its own
dword (§7.2.6). So the instruction is unpredictable where its SDST's low dword is one of its
SGPR sources' dwords (the carry-in left out), and lanes 32-63 run (a lane of EXEC[63:32]:
with none, no result of the second pass depends on what it reads). The simulator computes
every lane from the values before the instruction, which is what the program meant but not
what the hardware promises, so such an instruction stops the launch with
`sim-wave64-sgpr-overlap` rather than give an answer (docs/simulator.md "RDNA wave64"). Mesa's
ACO keeps the rule by allocating such sources "late kill"; LLVM 22 does not
(docs/findings/wave64-sgpr-overlap.md).
"""

from __future__ import annotations

from rgpu_fuzz.sim.bound.alu import Step
from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.common.fault import Fault, FaultKind, SimStop
from rgpu_fuzz.sim.isa.inst import Inst, OpKind
from rgpu_fuzz.sim.isa.tables import TARGETS
from rgpu_fuzz.sim.state.wave import Wave

CARRY_IN = frozenset({"V_ADD_CO_CI_U32", "V_SUB_CO_CI_U32", "V_SUBREV_CO_CI_U32"})
"""VOP3SD/VOP2 forms whose last source is a carry-in mask."""
SDST_SECOND = CARRY_IN | {"V_ADD_CO_U32", "V_SUB_CO_U32", "V_SUBREV_CO_U32", "V_MAD_U64_U32",
                          "V_MAD_I64_I32", "V_DIV_SCALE_F32", "V_DIV_SCALE_F64"}
"""VOP3SD forms: VDST, then the SDST lane mask."""


def overlapping_sgpr(inst: Inst) -> int | None:
    """The SGPR the first pass of `inst` writes and the second pass reads, or None."""
    name = inst.opcode
    if name.startswith("V_CMP_"):
        at = 0                       # V_CMPX_ writes EXEC, which the passes share
    elif name in SDST_SECOND:
        at = 1
    else:
        return None
    ops = inst.operands
    if len(ops) <= at or ops[at].kind is not OpKind.SGPR:
        return None
    low = ops[at].index
    sources = ops[at + 1:-1] if name in CARRY_IN else ops[at + 1:]
    for s in sources:
        if s.kind is OpKind.SGPR and s.index <= low < s.index + s.count:
            return low
    return None


def guard_passes(inst: Inst, env: Env, step: Step) -> Step:
    """`step`, stopping first with `sim-wave64-sgpr-overlap` where `inst` runs its second
    pass on RDNA in wave64 with an SDST its first pass writes over a source (module
    docstring); `step` itself elsewhere."""
    if env.lanes != 64:
        return step
    sgpr = overlapping_sgpr(inst)
    key = inst.share_key or inst.origin     # (target, words) of a decoded instruction
    tables = TARGETS.get(str(key[0])) if key else None
    if sgpr is None or tables is None or tables.family == "cdna":
        return step                          # GFX9/CDNA issues wave64 at once
    what = (f"{inst.text}: wave64 writes s{sgpr} in its first pass (lanes 0-31) and reads it "
            "in its second (RDNA3 ISA 7.2.3.2: unpredictable)")

    def guarded(w: Wave) -> None:
        if w.exec_bits >> 32:
            raise SimStop(Fault(FaultKind.WAVE64_SGPR_OVERLAP, what, w.pc))
        step(w)
    guarded.bound_only = True  # type: ignore[attr-defined]
    return guarded


__all__ = ["guard_passes", "overlapping_sgpr"]
