"""Python source for a fused run of instructions (`rgpu_fuzz.sim.fused.runs`): which emitter each
instruction takes, and the run's function around their code.

What an emitter writes is the binder's step with definedness settled by the run's checks
(operand access and guards: `fused.code`; per operand layout of the tables: `fused.valu`,
`fused.salu`; `s_waitcnt` and uniform SCRATCH accesses: `fused.scratch`). Any other instruction
without an emitter but with a bound step that may run inside a run (memory, atomics, VOPD,
...) runs as that bound step between two guarded segments. Control flow raises
`NotFusible` and ends the run before it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from rgpu_fuzz.sim.bound.alu import Unbindable
from rgpu_fuzz.sim.bound.dpp import is_dpp
from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.bound.program import ALIASES, NOPS, SHARED, bind_one, waitcnt_counts
from rgpu_fuzz.sim.fused.code import RUN_BASE, NotFusible, RunCode, RunStop
from rgpu_fuzz.sim.fused.salu import SALU_EMITTERS
from rgpu_fuzz.sim.fused.scratch import emit_load, emit_store, emit_wait, park
from rgpu_fuzz.sim.fused.scratch import finish as finish_parked
from rgpu_fuzz.sim.fused.valu import VALU_EMITTERS
from rgpu_fuzz.sim.isa.inst import Inst
from rgpu_fuzz.sim.semantics.memops import atomicop, memop
from rgpu_fuzz.sim.semantics.salu import SALU
from rgpu_fuzz.sim.semantics.valu import VALU


class Emitter(RunCode):
    """Builds the source of one run; `compile` returns its factory `make(steps, i)`."""

    def emit(self, inst: Inst) -> None:
        if not inst.share_key:
            raise NotFusible("address-dependent")
        name = ALIASES.get(inst.opcode, inst.opcode)
        if name != inst.opcode:
            inst = replace(inst, opcode=name)
        if not inst.halves:
            if name in NOPS or (name == "S_SENDMSG" and "DEALLOC" in inst.text.upper()):
                return
            if name == "S_WAITCNT":
                emit_wait(self, *waitcnt_counts(inst, self.env))
                return
            if emit_store(self, inst, name) or emit_load(self, inst, name):
                return
            if is_dpp(inst):
                # reads other lanes of SRC0 and narrows the lanes written: only its bound
                # step (`bound.dpp`) knows how, so it runs as one between two segments
                self.opaque_step()
                return
            mark = (len(self.body), set(self.vregs), set(self.sregs), set(self.lanewise),
                    set(self.live_in), set(self.known), set(self.written), set(self.active))
            self.fd_ok = True
            try:
                self.emit_alu(inst, name)
                return
            except NotFusible:
                del self.body[mark[0]:]
                self.vregs, self.sregs, self.lanewise = mark[1], mark[2], mark[3]
                self.live_in, self.known, self.written = mark[4], mark[5], mark[6]
                self.active = mark[7]
        if not _opaque(inst, name):
            raise NotFusible(name)
        self.opaque_step()

    def opaque_step(self) -> None:
        """The instruction's bound step inside the run."""
        # the bound step itself, between segments: it checks and faults as it always does,
        # and the next segment's guards see what it changed
        self.close_segment()
        self.may_raise()
        self.line(f"_steps[_i + {self.at}](w)")
        # a bound step may write EXEC (a load completed into it, a lane write): the rest
        # of the run reads it again rather than keep its lane vector from before
        self.refresh_exec()
        self.open_segment(self.at + 1)

    def emit_alu(self, inst: Inst, name: str) -> None:
        self.vector = False
        try:
            if name in VALU:
                vspec = VALU[name]
                emitter = VALU_EMITTERS.get(vspec.shape)
                if emitter is None:
                    raise NotFusible(f"VALU shape {vspec.shape}")
                emitter(self, inst, vspec)
                return
            if name in SALU:
                sspec = SALU[name]
                emitter = SALU_EMITTERS.get(sspec.shape)
                if emitter is None:
                    raise NotFusible(f"SALU shape {sspec.shape}")
                emitter(self, inst, sspec)
                return
        except (Unbindable, ValueError, KeyError, IndexError) as e:
            raise NotFusible(str(e)) from None
        raise NotFusible(name)

    def source(self) -> str:
        self.open_segment(0)
        for n, inst in enumerate(self.insts):
            self.at = n
            self.line(f"# {n}: {inst.opcode}")
            self.emit(inst)
        self.close_segment()
        out = ["def make(_steps, _i):", "    def run(w):",
               "        S = w.S", "        SD = w.sdef", "        V = w.V", "        VD = w.vdef",
               "        X = w.views", "        ef = w.exec_full", "        E = w.exec",
               "        j = 0", "        try:"]
        out += [f"            {text}" for text in self.body] or ["            pass"]
        out += ["        except SimStop as e:", "            if w.deferred: _park(w)",
                "            raise _RunStop(e.fault, j) from None",
                "        return _RET", "    return run"]
        return "\n".join(out) + "\n"

    def compile(self) -> Callable[..., Any]:
        text = self.source()
        k = len(self.insts)
        # `fused.scratch.finish`: `fused.code.finish` after parking the loads of a window
        self.ns.update({"_finish": finish_parked, "_park": park, "_RunStop": RunStop, "_K": k,
                        "_RET": RUN_BASE - k})
        exec(compile(text, f"<fused run: {', '.join(i.opcode for i in self.insts)}>", "exec"),
             self.ns)
        make: Callable[..., Any] = self.ns["make"]
        make.source = text  # type: ignore[attr-defined]
        return make

FLOW = frozenset({"S_ENDPGM", "S_BARRIER", "S_BARRIER_WAIT", "S_TRAP", "S_SETPC_B64",
                  "S_SWAPPC_B64", "S_GETPC_B64", "S_CALL_B64"})


def _opaque(inst: Inst, name: str) -> bool:
    """Whether the bound step of `inst` may run inside a fused run: anything but control
    flow (branches, the end of the program, barriers, traps, calls)."""
    if name in FLOW or name.startswith(("S_BRANCH", "S_CBRANCH")):
        return False
    return bool(inst.halves) or name in VALU or name in SALU or memop(name) is not None \
        or atomicop(name) is not None


_KINDS: dict[tuple[Env, tuple[Any, ...]], bool] = {}


def fusible_kind(inst: Inst, env: Env) -> bool | None:
    """True when `inst` can be part of a fused run (memoised per instruction words)."""
    if not inst.share_key:
        return None
    key = (env, inst.share_key)
    got = _KINDS.get(key)
    if got is None:
        got = _fusible(inst, env)
        if len(_KINDS) > 200_000:
            _KINDS.clear()
        _KINDS[key] = got
    return got or None


def _fusible(inst: Inst, env: Env) -> bool:
    step = SHARED.get(env, {}).get(inst.share_key) or \
        bind_one(inst, env, None, lambda address: 0)
    if getattr(step, "unsupported", False) or getattr(step, "bound_only", False):
        return False
    try:
        Emitter([inst], env).emit(inst)
    except NotFusible:
        return False
    return True


__all__ = ["Emitter", "fusible_kind"]
