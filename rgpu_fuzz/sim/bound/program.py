"""A kernel's code bound once: every instruction of `.text` decoded and turned into a
closure, keyed by address, cached per code-object hash ("decode once per code
object"). Control flow (SOPP, `s_setpc`/`s_swappc`) is bound here: a step returns None to
fall through, the index of the next instruction to jump, or one of `END`, `BARRIER`,
`TRAP`."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.alu import Step, Unbindable, bind_valu
from rgpu_fuzz.sim.bound.atomic import bind_ds_atomic
from rgpu_fuzz.sim.bound.dpp import LANE_PERMUTING, bind_dpp, is_dpp
from rgpu_fuzz.sim.bound.ds import bind_ds
from rgpu_fuzz.sim.bound.gpr_idx import bind_gpr_idx
from rgpu_fuzz.sim.bound.inflight import SPLIT_WAITS, split_wait_counts, wait_split
from rgpu_fuzz.sim.bound.lane_xfer import LANE_XFER, bind_lane_xfer
from rgpu_fuzz.sim.bound.mem import (
    bind_atomic,
    bind_buffer,
    bind_vmem,
    drain,
    wait,
)
from rgpu_fuzz.sim.bound.movrel import MOVREL, bind_movrel
from rgpu_fuzz.sim.bound.operands import Env, scalar_dest, scalar_source, uninit
from rgpu_fuzz.sim.bound.salu import bind_salu
from rgpu_fuzz.sim.bound.smem import bind_smem
from rgpu_fuzz.sim.bound.wave64 import guard_passes
from rgpu_fuzz.sim.common.fault import Fault, FaultKind, SimStop
from rgpu_fuzz.sim.isa.inst import Inst, OpKind
from rgpu_fuzz.sim.semantics.memops import atomicop, dsatomicop, memop
from rgpu_fuzz.sim.semantics.rdna4 import ALIASES as RDNA4_ALIASES
from rgpu_fuzz.sim.semantics.salu import SALU
from rgpu_fuzz.sim.semantics.valu import VALU
from rgpu_fuzz.sim.state.wave import VCC, Wave

END = -1
BARRIER = -2
TRAP = -3

NOPS = frozenset({"S_NOP", "S_SETPRIO", "S_SLEEP", "S_ICACHE_INV", "S_DCACHE_WB",
                  "S_DCACHE_INV", "S_DCACHE_WB_VOL", "S_DCACHE_INV_VOL", "BUFFER_WBL2",
                  "BUFFER_INVL2", "BUFFER_WBINVL1", "BUFFER_WBINVL1_VOL", "BUFFER_GL0_INV",
                  "BUFFER_GL1_INV", "S_WAITCNT_VSCNT", "S_WAITCNT_VMCNT", "S_WAITCNT_LGKMCNT",
                  "S_WAITCNT_EXPCNT", "S_DELAY_ALU", "S_CLAUSE", "S_INST_PREFETCH",
                  "S_SET_INST_PREFETCH_DISTANCE", "S_TTRACEDATA", "S_CODE_END", "V_NOP",
                  "S_WAITCNT_DEPCTR", "BUFFER_INV",
                  # GFX12: counters nothing in flight is kept for, the depctr wait (renamed),
                  # the barrier's signal half (the wave synchronises at s_barrier_wait)
                  "S_WAIT_STORECNT", "S_WAIT_SAMPLECNT", "S_WAIT_BVHCNT", "S_WAIT_EXPCNT",
                  "S_WAIT_ALU", "S_BARRIER_SIGNAL", "GLOBAL_WB", "GLOBAL_INV"})
"""Scheduling hints and cache maintenance with no effect on a sequentially consistent,
cache-less simulation (an s_waitcnt_depctr orders VALU writes the simulator completes at
once)."""


@dataclass(slots=True)
class Program:
    """Bound steps in address order; `index` maps a byte address to its step. A step is
    bound when it first runs (most of a kernel's `.text` never runs at O3: trap paths,
    other kernels' helpers), and steps of instructions that do not depend on their address
    are shared by every program of the process (`SHARED`)."""

    insts: Sequence[Inst]
    """The instructions at their addresses (made on demand by `rgpu_fuzz.sim.isa.code.Code`)."""
    templates: Sequence[Inst]
    """The same instructions as bound: a shared one may carry another copy's address."""
    steps: list[Step]
    index: dict[int, int]
    fast: list[Step] = field(default_factory=list)
    """What the engine runs at each index: the bound step, or a fused run starting there
    (`rgpu_fuzz.sim.fused.runs`)."""
    run_len: dict[int, int] = field(default_factory=dict)
    """Index → instructions of the fused run installed there."""
    env: Env | None = None
    heat: list[int] = field(default_factory=list)
    """Executions of each index on the engine's fused tier, over launches (`tier_up`)."""
    heads: dict[tuple[Any, ...], tuple[int, ...]] = field(default_factory=dict)
    """`fused.runs.heads(env)`: the runs compiled for this program's env, by first words."""
    executed: list[int] = field(default_factory=list)
    """Every index executed on the fused tier so far, once each, in the order of its first
    execution (`tier_up`): the engine gathers a launch's per-opcode counts from these, not
    from a pass over every index of `.text` (a batch's code object holds eight kernels)."""
    seen: bytearray = field(default_factory=bytearray)
    """1 at the indices in `executed` (`bench sim` sets heat back to 0 when it lowers
    `HOT`: an index reaches heat 1 again, and must not be listed twice)."""


    def release(self) -> None:
        """Drop the steps (a program evicted from the engine's cache): unbound steps refer
        to the lists that hold them, a cycle only the garbage collector would break, and
        never does once `gc.freeze` has moved it out of reach."""
        self.steps.clear()
        self.fast.clear()


def _unsupported(inst: Inst, why: str) -> Step:
    fault = Fault(FaultKind.UNSUPPORTED, f"{inst.text or inst.mnemonic}: {why}", inst.address,
                  inst.mnemonic)

    def step(w: Wave) -> None:
        raise SimStop(fault)
    step.unsupported = True  # type: ignore[attr-defined]
    return step


def _branch_target(inst: Inst) -> int:
    if "target" in inst.mods:
        return int(inst.mods["target"])
    imm = inst.operands[0].value & 0xFFFF if inst.operands else 0
    if imm >= 0x8000:
        imm -= 0x10000
    return inst.address + 4 + 4 * imm


def _flow(inst: Inst, env: Env, index_of: Callable[[int], int]) -> Step | None:
    name = inst.opcode
    if name == "S_ENDPGM":
        def endpgm(w: Wave) -> int:
            drain(w)
            return END
        return endpgm
    if name == "S_BARRIER":
        def barrier(w: Wave) -> int:
            return BARRIER
        return barrier
    if name == "S_TRAP":
        def trap(w: Wave) -> int:
            drain(w)
            return TRAP
        return trap
    if name == "S_WAITCNT":
        vm, lgkm = waitcnt_counts(inst, env)
        return lambda w: wait(w, vm, lgkm)
    if name in SPLIT_WAITS:
        load, ds, km = split_wait_counts(name, inst.operands[0].value & 0xFFFF
                                         if inst.operands else 0)
        return lambda w: wait_split(w, load, ds, km)
    if name == "S_BARRIER_WAIT":             # GFX12: s_barrier_signal -1; s_barrier_wait -1
        def barrier_wait(w: Wave) -> int:
            return BARRIER
        return barrier_wait
    if name.startswith("S_BRANCH") or name.startswith("S_CBRANCH"):
        target = _branch_target(inst)
        cond = name.removeprefix("S_CBRANCH_").removeprefix("S_BRANCH")
        nxt_of = index_of

        def jump_index() -> int:
            return nxt_of(target)
        tgt: list[int] = []

        def to(w: Wave) -> int:
            if not tgt:
                tgt.append(jump_index())
            return tgt[0]
        if cond == "":
            return to
        test = _CONDITIONS.get(cond)
        if test is None:
            return None
        check, _ = test

        def cbranch(w: Wave) -> int | None:
            taken = check(w)
            return to(w) if taken else None
        return cbranch
    if name in ("S_SETPC_B64", "S_SWAPPC_B64"):
        ops = inst.operands
        src = ops[-1]
        get, defined = scalar_source(src, 64, env)
        put = None
        if name == "S_SWAPPC_B64":
            put = scalar_dest(ops[0], 64)
        ret = env.code_base + inst.address + inst.size
        base = env.code_base

        def setpc(w: Wave) -> int:
            if not defined(w):
                raise uninit(w, f"{inst.mnemonic}: jump to an undefined address")
            target = get(w)
            if put is not None:
                put(w, ret, True)
            return index_of(target - base)
        return setpc
    return None


def _vccz(w: Wave) -> bool:
    lanes = (1 << w.lanes) - 1
    vcc = (w.S[VCC] | w.S[VCC + 1] << 32) & lanes
    defined = (w.sdef[VCC] | w.sdef[VCC + 1] << 32) & lanes
    if defined != lanes and not vcc & defined:
        raise uninit(w, "branch on an undefined VCC")
    return vcc == 0


def _scc(w: Wave) -> int:
    if not w.scc_def:
        raise uninit(w, "branch on an undefined SCC")
    return w.scc


_CONDITIONS: dict[str, tuple[Callable[[Wave], bool], str]] = {
    "SCC0": (lambda w: not _scc(w), "scc0"),
    "SCC1": (lambda w: bool(_scc(w)), "scc1"),
    "VCCZ": (_vccz, "vccz"),
    "VCCNZ": (lambda w: not _vccz(w), "vccnz"),
    # `Wave.exec_bits` is the mask `Wave.exec` is made from: no reduction over the lanes
    "EXECZ": (lambda w: w.exec_bits == 0, "execz"),
    "EXECNZ": (lambda w: w.exec_bits != 0, "execnz"),
}


def waitcnt_counts(inst: Inst, env: Env) -> tuple[int, int]:
    mods = inst.mods
    if "vmcnt" in mods or "lgkmcnt" in mods or "expcnt" in mods:
        return int(mods.get("vmcnt", 1 << 30)), int(mods.get("lgkmcnt", 1 << 30))
    if inst.operands:
        return env.waitcnt(inst.operands[0].value & 0xFFFF)
    return 0, 0


ALIASES: dict[str, str] = {
    # RDNA3 (gfx1100) names of operations the tables implement under their CDNA names
    # (RDNA3 ISA guide, "Instruction renames"): same semantics, different spelling
    "V_ADD_NC_U32": "V_ADD_U32", "V_SUB_NC_U32": "V_SUB_U32",
    "V_SUBREV_NC_U32": "V_SUBREV_U32", "V_ADD_CO_CI_U32": "V_ADDC_CO_U32",
    "V_SUB_CO_CI_U32": "V_SUBB_CO_U32", "V_SUBREV_CO_CI_U32": "V_SUBBREV_CO_U32",
    "V_ADD_NC_I32": "V_ADD_I32", "V_SUB_NC_I32": "V_SUB_I32",
    "V_ADD_NC_U16": "V_ADD_U16", "V_SUB_NC_U16": "V_SUB_U16",
    "V_MUL_LO_U32": "V_MUL_LO_U32", "V_LSHLREV_B16": "V_LSHLREV_B16",
    "S_AND_NOT1_B32": "S_ANDN2_B32", "S_AND_NOT1_B64": "S_ANDN2_B64",
    "S_OR_NOT1_B32": "S_ORN2_B32", "S_OR_NOT1_B64": "S_ORN2_B64",
    "S_AND_NOT1_SAVEEXEC_B32": "S_ANDN2_SAVEEXEC_B32",
    "S_AND_NOT1_SAVEEXEC_B64": "S_ANDN2_SAVEEXEC_B64",
    "S_OR_NOT1_SAVEEXEC_B32": "S_ORN2_SAVEEXEC_B32",
    "S_OR_NOT1_SAVEEXEC_B64": "S_ORN2_SAVEEXEC_B64",
    "S_AND_NOT0_SAVEEXEC_B32": "S_ANDN1_SAVEEXEC_B32",
    "S_AND_NOT0_SAVEEXEC_B64": "S_ANDN1_SAVEEXEC_B64",
    "S_OR_NOT0_SAVEEXEC_B32": "S_ORN1_SAVEEXEC_B32",
    "S_OR_NOT0_SAVEEXEC_B64": "S_ORN1_SAVEEXEC_B64",
    "S_BCNT1_I32_B32": "S_BCNT1_I32_B32", "S_CTZ_I32_B32": "S_FF1_I32_B32",
    "S_CLZ_I32_U32": "S_FLBIT_I32_B32", "S_CLS_I32": "S_FLBIT_I32",
    "S_CTZ_I32_B64": "S_FF1_I32_B64", "S_CLZ_I32_U64": "S_FLBIT_I32_B64",
    "V_CLZ_I32_U32": "V_FFBH_U32", "V_CTZ_I32_B32": "V_FFBL_B32", "V_CLS_I32": "V_FFBH_I32",
    "V_LDEXP_F32": "V_LDEXP_F32", "V_FMAC_F32": "V_FMAC_F32",
    "V_DUAL_MOV_B32": "V_MOV_B32", "V_DUAL_ADD_NC_U32": "V_ADD_U32",
    "V_DUAL_AND_B32": "V_AND_B32", "V_DUAL_LSHLREV_B32": "V_LSHLREV_B32",
    "V_DUAL_ADD_F32": "V_ADD_F32", "V_DUAL_SUB_F32": "V_SUB_F32",
    "V_DUAL_SUBREV_F32": "V_SUBREV_F32", "V_DUAL_MUL_F32": "V_MUL_F32",
    "V_DUAL_FMAC_F32": "V_FMAC_F32", "V_DUAL_FMAAK_F32": "V_FMAAK_F32",
    "V_DUAL_FMAMK_F32": "V_FMAMK_F32", "V_DUAL_MAX_F32": "V_MAX_F32",
    "V_DUAL_MIN_F32": "V_MIN_F32", "V_DUAL_CNDMASK_B32": "V_CNDMASK_B32",
}
"""Other targets' names for operations implemented once (the semantic tables are keyed by
the CDNA name)."""
ALIASES.update(RDNA4_ALIASES)


def _vgprs(ops: Sequence[Any]) -> set[int]:
    return {o.index for o in ops if o.kind is OpKind.VGPR}


def _dual(inst: Inst, first: Step, second: Step) -> Step:
    """VOPD: X and Y issue together and read their sources before either writes (RDNA3 ISA
    §7.6 "Dual issue"); LLVM pairs `v_dual_mov_b32 v0, v3 :: v_dual_add_nc_u32 v5, v0, v5`,
    where Y must see the old v0. Y runs first when it reads X's destination; when each reads
    the other's destination, X's result is held back until Y has read."""
    x, y = inst.halves
    x_dst, y_dst = _vgprs(x.operands[:1]), _vgprs(y.operands[:1])
    y_reads_x = bool(x_dst & _vgprs(y.operands[1:]))
    x_reads_y = bool(y_dst & _vgprs(x.operands[1:]))
    if not y_reads_x:
        def dual(w: Wave) -> None:
            first(w)
            second(w)
        return dual
    if not x_reads_y:
        def dual_yx(w: Wave) -> None:
            second(w)
            first(w)
        return dual_yx
    col = next(iter(x_dst))

    def dual_swap(w: Wave) -> None:
        old_v, old_d = w.V[:, col].copy(), w.vdef[:, col].copy()
        first(w)
        new_v, new_d = w.V[:, col].copy(), w.vdef[:, col].copy()
        w.V[:, col], w.vdef[:, col] = old_v, old_d
        second(w)
        w.V[:, col], w.vdef[:, col] = new_v, new_d
    return dual_swap


def bind_one(inst: Inst, env: Env, mem: Any, index_of: Callable[[int], int]) -> Step:
    name = ALIASES.get(inst.opcode, inst.opcode)
    if name != inst.opcode:
        inst = replace(inst, opcode=name)
    if inst.halves:
        return _dual(inst, *(bind_one(h, env, mem, index_of) for h in inst.halves))
    if is_dpp(inst):
        try:
            return bind_dpp(inst, env, lambda i: bind_one(i, env, mem, index_of))
        except (Unbindable, ValueError, KeyError, IndexError) as e:
            return _unsupported(inst, f"DPP: {e}")
    if name in LANE_XFER:
        try:
            return bind_lane_xfer(inst, env)
        except (Unbindable, ValueError, KeyError, IndexError) as e:
            return _unsupported(inst, f"cannot bind: {e}")
    if name == "S_SENDMSG" and "DEALLOC" in inst.text.upper():
        return lambda w: None
    try:
        if name in NOPS:
            return lambda w: None
        indexed = bind_gpr_idx(inst, env, lambda i: bind_one(i, env, mem, index_of),
                               _unsupported)
        if indexed is not None:
            return indexed
        if name in MOVREL:
            return bind_movrel(inst, lambda i: bind_one(i, env, mem, index_of),
                               _unsupported) or _unsupported(inst, "not implemented")
        if name in VALU:
            # before `_flow`, which binds only scalar (`S_`) opcodes: no VALU name is one
            return guard_passes(inst, env, bind_valu(inst, env))
        flow = _flow(inst, env, index_of)
        if flow is not None:
            return flow
        if name in SALU:
            return bind_salu(inst, env)
        op = memop(name)
        if op is not None:
            binder = {"smem": bind_smem, "global": bind_vmem, "flat": bind_vmem,
                      "scratch": bind_vmem, "ds": bind_ds, "buffer": bind_buffer}[op.segment]
            return binder(inst, op, env, mem)
        aop = atomicop(name)
        if aop is not None:
            return bind_atomic(inst, aop, env, mem)
        dop = dsatomicop(name)
        if dop is not None:
            return bind_ds_atomic(inst, dop, env, mem)
    except (Unbindable, ValueError, KeyError, IndexError) as e:
        return _unsupported(inst, f"cannot bind: {type(e).__name__}: {e}")
    return _unsupported(inst, "not implemented")


SHARED: dict[Env, dict[tuple[Any, ...], Step]] = {}
"""Bound steps by (float mode and target, instruction): a campaign's code objects repeat
most of their instructions, and a step depends on nothing else (launch state is the
wave's)."""
_SHARED_LIMIT = 100_000


def bind_program(insts: Sequence[Inst], env: Env, mem: Any,
                 heads: dict[tuple[Any, ...], tuple[int, ...]] | None = None) -> Program:
    """Every instruction of `insts` as a lazily bound step. `heads` is the fused tier's
    index of the runs compiled for `env` (`launch.tiers.bind` passes it; the bound tier
    knows nothing of fused runs)."""
    templates: Sequence[Inst] = getattr(insts, "templates", insts)
    addresses = getattr(insts, "addresses", None)
    if addresses is None:
        addresses = [inst.address for inst in insts]
    index = {address: i for i, address in enumerate(addresses)}

    def index_of(address: int) -> int:
        i = index.get(address)
        if i is None:
            raise SimStop(Fault(FaultKind.OOB_ACCESS,
                                f"jump to {address:#x}, not the start of an instruction",
                                address))
        return i

    shared = SHARED.get(env)
    if shared is None or len(shared) > _SHARED_LIMIT:
        shared = SHARED[env] = {}
    steps: list[Step] = []
    fast: list[Step] = []

    def bind_then_run(i: int, w: Wave) -> Any:
        # `steps[i]` until it runs: the lazy step is `partial(bind_then_run, i)`, made at C
        # speed for every index of `.text`, and nothing refers to it once replaced (a
        # closure that named itself was cyclic garbage, ~440 per O0 case)
        me = steps[i]
        inst = templates[i]
        if not inst.share_key:
            inst = inst.at(addresses[i])
        step = bind_one(inst, env, mem, index_of)
        steps[i] = step
        if fast[i] is me:
            fast[i] = step
        if inst.share_key:
            shared[inst.share_key] = step
        return step(w)

    get = shared.get
    for i, inst in enumerate(templates):
        step = get(inst.share_key) if inst.share_key else None
        steps.append(step if step is not None else partial(bind_then_run, i))
    fast.extend(steps)
    return Program(insts, templates, steps, index, fast, {}, env, [0] * len(steps),
                   {} if heads is None else heads, [],
                   bytearray(len(steps)))


_CACHE: OrderedDict[tuple[str, str], list[Inst]] = OrderedDict()
_CACHE_SIZE = 64


def decoded(code_object: bytes, kernel: str,
            decode: Callable[[], list[Inst]]) -> list[Inst]:
    """The decoded instructions of `code_object`, decoded once per content hash."""
    key = (hashlib.sha256(code_object).hexdigest(), kernel)
    got = _CACHE.get(key)
    if got is None:
        got = decode()
        _CACHE[key] = got
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return got


__all__ = ["ALIASES", "BARRIER", "END", "LANE_PERMUTING", "NOPS", "SHARED", "TRAP", "Program",
           "bind_one", "bind_program", "decoded", "np", "waitcnt_counts"]
