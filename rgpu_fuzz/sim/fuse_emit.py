"""Python source for a fused run of instructions (`rgpu_fuzz.sim.fuse`): one emitter per
operand layout of the semantic tables, as `bind_alu` has one binder per layout.

What an emitter writes is the binder's step with definedness settled by the run's checks:
the operand access of `operands` (a VGPR source is a column of `Wave.V`, an SGPR a Python
int of `Wave.S`; a source with modifiers, a 16-bit or SDWA source is read through the very
getter `operands.vector_source` returns), a call of the table's function, and the write of
`operands.vector_dest` / `operands.scalar_dest` with the result marked defined. Each check
the bound step makes on definedness becomes a guard that, where it fails, hands the rest of
the run to the bound steps (`bail`). An instruction no emitter covers exactly raises
`NotFusible` and ends the run before it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bind_alu import (
    COPIES,
    LOW_HALF_OPS,
    VCC_OP,
    Unbindable,
    _hwreg_field,
    _omod_clamp,
    _with_vcc,
)
from rgpu_fuzz.sim.bind_mem import wait
from rgpu_fuzz.sim.bitdef32 import RULES as BITDEF_RULES
from rgpu_fuzz.sim.defined64 import SHIFT64_OPS
from rgpu_fuzz.sim.fault import SimStop
from rgpu_fuzz.sim.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.memops import atomicop, memop
from rgpu_fuzz.sim.operands import (
    DTYPES,
    EXECZ_SRC,
    SCC_SRC,
    VCCZ_SRC,
    Env,
    _check_exec,
    _consts,
    _forget,
    scalar_bits_source,
    vcol,
    vector_source,
)
from rgpu_fuzz.sim.partial import READS
from rgpu_fuzz.sim.salu import SALU
from rgpu_fuzz.sim.valu import INT_CLAMP, VALU
from rgpu_fuzz.sim.wave import EXEC, Wave, lanes_of, mask_of

M32 = 0xFFFF_FFFF
NULL_SGPR = 125


class NotFusible(Exception):
    """No emitter reproduces this instruction's bound step exactly."""


def _move_part(w: Wave, part: dict[int, int], dst: int) -> None:
    """`bind_alu.bind_valu`'s copy of partly defined lanes along with a move."""
    moved = {ln: m for ln, m in part.items() if w.exec[ln]}
    if moved:
        w.vpart.setdefault(dst, {}).update(moved)


def _helpers(env: Env) -> dict[str, Any]:
    return {"np": np, "_U32": np.uint32, "_U64": np.uint64, "SimStop": SimStop,
            "_forget": _forget, "_check_exec": _check_exec, "_lanes_of": lanes_of,
            "_mask_of": mask_of, "_wait": wait, "_move_part": _move_part,
            "_FULLV": np.ones(env.lanes, bool)}


class Emitter:
    """Builds the source of one run; `compile` returns its factory `make(steps, i)`."""

    def __init__(self, insts: Sequence[Inst], env: Env) -> None:
        self.insts = list(insts)
        self.env = env
        self.lanes = env.lanes
        self.ns: dict[str, Any] = _helpers(env)
        self.body: list[str] = []
        self.lanewise: set[int] = set()
        """Columns whose every lane must be defined where the segment starts (operations
        whose definedness rules the run does not reproduce: 64-bit halves, shifts)."""
        self.vregs: set[int] = set()
        self.sregs: set[int] = set()
        """Registers the current segment touches: none may wait for a load at its start."""
        self.at = 0
        self.vector = False
        """The current instruction reads a VGPR: its results have one value per lane."""
        self.seg_at = 0
        self.seg_line = 0
        self.n_guards = 0
        self._names: dict[int, str] = {}

    # ------------------------------------------------------------------ plumbing
    def name(self, value: Any) -> str:
        key = id(value)
        got = self._names.get(key)
        if got is None:
            got = self._names[key] = f"_k{len(self._names)}"
            self.ns[got] = value
        return got

    def line(self, text: str) -> None:
        self.body.append(text)

    @property
    def bail(self) -> str:
        return f"return _finish(w, _steps, _i, {self.at}, _K)"

    def may_raise(self) -> None:
        self.line(f"j = {self.at}")

    def refresh_exec(self) -> None:
        self.line("ef = w.exec_full")
        self.line("E = w.exec")

    # ------------------------------------------------------------------ scalars
    def sread(self, op: Opnd, bits: int) -> str:
        """A scalar source as a Python int expression; a guard bails unless it is defined
        (`operands.scalar_source`'s `defined`)."""
        if bits not in (32, 64):
            raise NotFusible(f"{bits}-bit scalar source")
        full = (1 << bits) - 1
        if op.kind is OpKind.SGPR:
            i = op.index
            if i in _consts(self.env) or i in (SCC_SRC, VCCZ_SRC, EXECZ_SRC) or i >= 128:
                g, d = scalar_bits_source(op, bits, self.env)
                self.line(f"if {self.name(d)}(w) != {full}: {self.bail}")
                return f"{self.name(g)}(w)"
            if bits == 64:
                self.sregs.update((i, i + 1))
                self.line(f"if SD[{i}] & SD[{i + 1}] != {M32}: {self.bail}")
                return f"(S[{i}] | S[{i + 1}] << 32)"
            self.sregs.add(i)
            self.line(f"if SD[{i}] != {M32}: {self.bail}")
            return f"S[{i}]"
        if op.kind in (OpKind.INT, OpKind.FLOAT, OpKind.BITS):
            g, _ = scalar_bits_source(op, bits, self.env)
            return repr(int(g(None)))  # type: ignore[arg-type]  # a constant: no wave read
        raise NotFusible(f"scalar source {op.kind}")

    def sread_bits(self, op: Opnd, bits: int) -> tuple[str, str]:
        """A scalar source and its defined bits (`operands.scalar_bits_source`), no guard."""
        if bits not in (32, 64):
            raise NotFusible(f"{bits}-bit scalar source")
        if op.kind is OpKind.SGPR:
            i = op.index
            if i in _consts(self.env) or i in (SCC_SRC, VCCZ_SRC, EXECZ_SRC) or i >= 128:
                g, d = scalar_bits_source(op, bits, self.env)
                return f"{self.name(g)}(w)", f"{self.name(d)}(w)"
            if bits == 64:
                self.sregs.update((i, i + 1))
                return f"(S[{i}] | S[{i + 1}] << 32)", f"(SD[{i}] | SD[{i + 1}] << 32)"
            self.sregs.add(i)
            return f"S[{i}]", f"SD[{i}]"
        return self.sread(op, bits), repr((1 << bits) - 1)

    def swrite(self, op: Opnd, bits: int, expr: str, defined: str = "") -> None:
        """`operands.scalar_dest`; `defined`: an expression of the defined bits (default:
        all)."""
        if op.kind is not OpKind.SGPR:
            raise NotFusible("scalar destination")
        i = op.index
        if i == NULL_SGPR:
            return
        touches_exec = i in (EXEC, EXEC + 1) or (bits == 64 and i + 1 == EXEC)
        if bits == 64:
            self.sregs.update((i, i + 1))
            self.line(f"_v = {expr}")
            self.line(f"S[{i}] = _v & {M32}")
            self.line(f"S[{i + 1}] = (_v >> 32) & {M32}")
            if defined:
                self.line(f"_dm = {defined}")
                self.line(f"SD[{i}] = _dm & {M32}")
                self.line(f"SD[{i + 1}] = (_dm >> 32) & {M32}")
            else:
                self.line(f"SD[{i}] = SD[{i + 1}] = {M32}")
        else:
            self.sregs.add(i)
            self.line(f"S[{i}] = ({expr}) & {M32}")
            self.line(f"SD[{i}] = ({defined}) & {M32}" if defined else f"SD[{i}] = {M32}")
        if touches_exec:
            self.may_raise()
            self.line("_check_exec(w)")
            self.line("w.refresh_exec()")
            self.refresh_exec()

    def lane_mask(self, op: Opnd) -> str:
        """`operands.lane_mask_source`'s bits as a bool vector (all of them defined)."""
        return f"_lanes_of({self.sread(op, 64 if self.lanes == 64 else 32)}, {self.lanes})"

    def mask_write(self, op: Opnd, res: str, d: str) -> None:
        """`bind_alu._lane_mask_dest`: bit n for active lane n; a bit is defined where the
        lane is inactive or `d` (defined lanes, or "True")."""
        defined = "" if d == "True" else \
            f"_mask_of({d} | ~E) | {self.high}"  # `d` comes from VGPRs: one value per lane
        self.swrite(op, 64 if self.lanes == 64 else 32, f"_mask_of({res} & E)", defined)

    @property
    def high(self) -> int:
        return ((1 << 64) - 1) ^ ((1 << self.lanes) - 1)

    # ------------------------------------------------------------------ vectors
    def vread(self, op: Opnd, ty: str, lanewise: bool = False) -> str:
        """A VALU source as an expression of the value `operands.vector_source` gives;
        `lanewise`: the run requires the source defined in every lane (else the caller
        reads its definedness with `vdef`)."""
        bits, dtype = DTYPES[ty]
        sel = getattr(op, "sel", "")
        is_float = np.dtype(dtype).kind == "f"
        flush = is_float and (self.env.flush32 if bits == 32 else
                              self.env.flush64 if bits == 64 else False)
        mods = (is_float or ty[0] == "b") and (op.abs or op.neg or flush)
        if op.kind in (OpKind.VGPR, OpKind.AGPR):
            col = vcol(op)
            cols = (col, col + 1) if bits == 64 else (col,)
            self.vregs.update(cols)
            self.vector = True
            if lanewise:
                self.lanewise.update(cols)
            if (sel and sel != "DWORD") or bits == 16 or mods:
                g, _ = vector_source(op, ty, self.env)
                return f"{self.name(g)}(w)"
            if bits == 64:
                base = f"V[:, {col}:{col + 2}].view(_U64)[:, 0]"
                return base if dtype is np.uint64 else f"{base}.view({self.name(dtype)})"
            base = f"V[:, {col}]"
            return base if dtype is np.uint32 else f"{base}.view({self.name(dtype)})"
        if op.kind is OpKind.SGPR:
            value = self.sread(op, 64 if bits == 64 else 32)
            if (sel and sel != "DWORD") or bits == 16 or mods:
                g, _ = vector_source(op, ty, self.env)
                return f"{self.name(g)}(w)"
            raw = "_U64" if bits == 64 else "_U32"
            base = f"{raw}({value})"
            return base if dtype in (np.uint32, np.uint64) else \
                f"{base}.view({self.name(dtype)})"
        if op.kind in (OpKind.INT, OpKind.FLOAT, OpKind.BITS):
            g, _ = vector_source(op, ty, self.env)
            return self.name(g(None))  # type: ignore[arg-type]  # a constant: no wave read
        raise NotFusible(f"vector source {op.kind}")

    def vdef(self, op: Opnd, ty: str) -> str | None:
        """The defined lanes of a VALU source (`operands.vector_source`'s `defined`) as an
        expression; None where the source is a scalar or constant (the run guards those
        to be defined)."""
        if op.kind not in (OpKind.VGPR, OpKind.AGPR):
            return None
        bits = DTYPES[ty][0]
        sel = getattr(op, "sel", "")
        col = vcol(op)
        if (sel and sel != "DWORD") or bits == 16:
            _, d = vector_source(op, ty, self.env)
            return f"{self.name(d)}(w)"
        if bits == 64:
            return f"(VD[:, {col}] & VD[:, {col + 1}])"
        return f"VD[:, {col}]"

    def lanewise_value(self, expr: str) -> str:
        """`expr` broadcast to one value per lane, as the bound steps do; a result computed
        from a VGPR has that shape already."""
        return expr if self.vector else f"np.broadcast_to({expr}, ({self.lanes},))"

    def all_of(self, defs: Sequence[str | None]) -> str:
        got = [d for d in defs if d is not None]
        return " & ".join(got) if got else "True"

    def vwrite(self, op: Opnd, ty: str, inst: Inst, expr: str,
               d: str | tuple[str, str] = "True") -> None:
        """`operands.vector_dest`: lanes outside EXEC keep value and definedness; `d` is
        the defined lanes of the result (an expression, or "True")."""
        bits = DTYPES[ty][0]
        if op.kind not in (OpKind.VGPR, OpKind.AGPR):
            raise NotFusible("vector destination")
        dst_sel = inst.mods.get("dst_sel", "")
        if dst_sel not in ("", "DWORD", 6):
            raise NotFusible("SDWA destination")
        if bits == 16 and self.env.true16:
            raise NotFusible("true16 destination")
        col = vcol(op)
        lanes = self.lanes
        if bits == 64:
            self.vregs.update((col, col + 1))
            self.line(f"_r = {self.lanewise_value(f'np.asarray({expr}).view(_U64)')}")
            self.line(f"_p = np.ascontiguousarray(_r).view(_U32).reshape({lanes}, 2)")
            dlo, dhi = d if isinstance(d, tuple) else (d, d)
            if dlo == dhi == "True":
                self.line(f"if w.vpart: _forget(w, {col}, 2)")
                self.line(f"if ef: V[:, {col}:{col + 2}] = _p; VD[:, {col}:{col + 2}] = True")
                self.line(f"else: np.copyto(V[:, {col}:{col + 2}], _p, where=E[:, None]); "
                          f"VD[:, {col}] |= E; VD[:, {col + 1}] |= E")
                return
            self.line(f"_dlo = {dlo}")
            self.line(f"_dhi = {dhi}")
            self.line(f"if w.vpart: _forget(w, {col}, 2)")
            self.line(f"if ef: V[:, {col}:{col + 2}] = _p; VD[:, {col}] = _dlo; "
                      f"VD[:, {col + 1}] = _dhi")
            self.line(f"else: np.copyto(V[:, {col}:{col + 2}], _p, where=E[:, None]); "
                      f"np.copyto(VD[:, {col}], _dlo, where=E); "
                      f"np.copyto(VD[:, {col + 1}], _dhi, where=E)")
            return
        assert isinstance(d, str)
        self.vregs.add(col)
        if bits == 16:
            self.line(f"_x = np.asarray({expr}).view(np.uint16).astype(_U32)")
        else:
            self.line(f"_x = np.asarray({expr}).view(_U32)")
        if d != "True":
            self.line(f"_d = {d}")
        self.line(f"if w.vpart: _forget(w, {col}, 1)")
        if d == "True":
            self.line(f"if ef: V[:, {col}] = _x; VD[:, {col}] = True")
            self.line(f"else: np.copyto(V[:, {col}], _x, where=E); VD[:, {col}] |= E")
        else:
            self.line(f"if ef: V[:, {col}] = _x; VD[:, {col}] = _d")
            self.line(f"else: np.copyto(V[:, {col}], _x, where=E); "
                      f"np.copyto(VD[:, {col}], _d, where=E)")

    # ------------------------------------------------------------------ instructions
    def emit(self, inst: Inst) -> None:
        from rgpu_fuzz.sim.program import ALIASES, NOPS, _waitcnt_counts

        if not inst.share_key:
            raise NotFusible("address-dependent")
        name = ALIASES.get(inst.opcode, inst.opcode)
        if name != inst.opcode:
            inst = replace(inst, opcode=name)
        if not inst.halves:
            if name in NOPS or (name == "S_SENDMSG" and "DEALLOC" in inst.text.upper()):
                return
            if name == "S_WAITCNT":
                vm, lgkm = _waitcnt_counts(inst, self.env)
                self.close_segment()
                self.may_raise()
                self.line(f"if w.vm_queue or w.lgkm_queue: _wait(w, {vm}, {lgkm})")
                self.open_segment(self.at + 1)
                return
            mark = (len(self.body), set(self.vregs), set(self.sregs), set(self.lanewise))
            try:
                self.emit_alu(inst, name)
                return
            except NotFusible:
                del self.body[mark[0]:]
                self.vregs, self.sregs, self.lanewise = mark[1], mark[2], mark[3]
        if not _opaque(inst, name):
            raise NotFusible(name)
        # the bound step itself, between segments: it checks and faults as it always does,
        # and the next segment's guards see what it changed
        self.close_segment()
        self.may_raise()
        self.line(f"_steps[_i + {self.at}](w)")
        self.open_segment(self.at + 1)

    def emit_alu(self, inst: Inst, name: str) -> None:
        self.vector = False
        try:
            if name in VALU:
                vspec = VALU[name]
                emitter = _VALU.get(vspec.shape)
                if emitter is None:
                    raise NotFusible(f"VALU shape {vspec.shape}")
                emitter(self, inst, vspec)
                return
            if name in SALU:
                sspec = SALU[name]
                emitter = _SALU.get(sspec.shape)
                if emitter is None:
                    raise NotFusible(f"SALU shape {sspec.shape}")
                emitter(self, inst, sspec)
                return
        except (Unbindable, ValueError, KeyError, IndexError) as e:
            raise NotFusible(str(e)) from None
        raise NotFusible(name)

    def open_segment(self, at: int) -> None:
        self.seg_at, self.seg_line = at, len(self.body)
        self.vregs, self.sregs, self.lanewise = set(), set(), set()

    def close_segment(self) -> None:
        """Guard the segment just emitted (from the run's start or an `s_waitcnt` to here):
        no register it touches waits for a load, and the columns it needs defined in every
        lane are; else the bound steps run the rest from the segment's start."""
        bail = f"return _finish(w, _steps, _i, {self.seg_at}, _K)"
        guards = []
        n = self.n_guards
        self.n_guards += 1
        if self.vregs:
            self.ns[f"_PV{n}"] = frozenset(self.vregs)
            guards.append(f"if w.pend_v and not _PV{n}.isdisjoint(w.pend_v): {bail}")
        if self.sregs:
            self.ns[f"_PS{n}"] = frozenset(self.sregs)
            guards.append(f"if w.pend_s and not _PS{n}.isdisjoint(w.pend_s): {bail}")
        if self.lanewise:
            self.ns[f"_VR{n}"] = np.array(sorted(self.lanewise), np.intp)
            guards.append(f"if not VD[:, _VR{n}].all(): {bail}")
        self.body[self.seg_line:self.seg_line] = guards

    def source(self) -> str:
        self.open_segment(0)
        for n, inst in enumerate(self.insts):
            self.at = n
            self.line(f"# {n}: {inst.opcode}")
            self.emit(inst)
        self.close_segment()
        out = ["def make(_steps, _i):", "    def run(w):",
               "        S = w.S", "        SD = w.sdef", "        V = w.V", "        VD = w.vdef",
               "        ef = w.exec_full", "        E = w.exec", "        j = 0", "        try:"]
        out += [f"            {text}" for text in self.body] or ["            pass"]
        out += ["        except SimStop as e:", "            raise _RunStop(e.fault, j) from None",
                "        return _RET", "    return run"]
        return "\n".join(out) + "\n"

    def compile(self) -> Callable[..., Any]:
        from rgpu_fuzz.sim.fuse import RUN_BASE, RunStop, finish

        text = self.source()
        k = len(self.insts)
        self.ns.update({"_finish": finish, "_RunStop": RunStop, "_K": k, "_RET": RUN_BASE - k})
        exec(compile(text, f"<fused run: {', '.join(i.opcode for i in self.insts)}>", "exec"),
             self.ns)
        make: Callable[..., Any] = self.ns["make"]
        make.source = text  # type: ignore[attr-defined]
        return make


# ---------------------------------------------------------------------------- VALU

def _vpart_bail(e: Emitter, ops: Sequence[Opnd]) -> None:
    """Per-bit definedness rules (`bitdef32`, `partial`) differ from the whole-register
    rule only for columns with partly defined lanes: the bound step handles those."""
    cols = [vcol(o) for o in ops if o.kind in (OpKind.VGPR, OpKind.AGPR)]
    if cols:
        test = " or ".join(f"{c} in w.vpart" for c in cols)
        e.line(f"if w.vpart and ({test}): {e.bail}")


def _low_def(op: Opnd) -> str | None:
    """`operands.low_half_defined` of a source the run guards to be defined if scalar."""
    if op.kind in (OpKind.VGPR, OpKind.AGPR):
        return f"VD[:, {vcol(op)}]"
    return None


def _v_plain(e: Emitter, inst: Inst, spec: Any) -> None:
    if not spec.dst:
        return
    ops = inst.operands
    if len(ops) != 1 + len(spec.src):
        raise NotFusible("operand count")
    copy_src = -1
    if inst.opcode in COPIES and len(ops) == 2 and ops[1].kind in (OpKind.VGPR, OpKind.AGPR) \
            and not inst.mods.get("dst_sel") and not getattr(ops[1], "sel", ""):
        copy_src = vcol(ops[1])
    halves = inst.opcode in SHIFT64_OPS
    srcs = list(zip(ops[1:], spec.src, strict=True))
    args = [e.vread(o, t, lanewise=halves) for o, t in srcs]
    fn: Any = spec.fn
    if spec.mode:
        args.insert(0, repr(e.env.ieee))
    if inst.mods.get("clamp", 0) and inst.opcode in INT_CLAMP:
        fn = INT_CLAMP[inst.opcode]
        post = None
    else:
        post = _omod_clamp(inst, spec.dst)
    if spec.mode and fn is not spec.fn:
        args.pop(0)  # INT_CLAMP functions take no float mode (bind_alu replaces fn whole)
    call = f"{e.name(fn)}({', '.join(args)})"
    if post is not None:
        call = f"{e.name(post)}({call})"
    dt = DTYPES[spec.dst][1]
    bitdef = inst.opcode in BITDEF_RULES and post is None and len(srcs) == 2 and \
        ops[0].kind is OpKind.VGPR and not inst.mods.get("dst_sel") and \
        not any(getattr(o, "sel", "") for o in ops[1:])
    if bitdef or inst.opcode in READS:
        _vpart_bail(e, ops[1:])
    whole = "True" if halves else e.all_of([e.vdef(o, t) for o, t in srcs])
    d: str | tuple[str, str] = whole
    if inst.opcode in LOW_HALF_OPS and post is None:
        # `bind_alu._low_half`: the low half is defined where the sources' low halves are
        low = e.all_of([_low_def(o) for o, _ in srcs])
        if inst.opcode == "V_MOV_B64":
            col = vcol(ops[1]) if ops[1].kind in (OpKind.VGPR, OpKind.AGPR) else -1
            d = (low, f"VD[:, {col + 1}]" if col >= 0 else "True")
        else:
            d = (low, whole)
    value = call if bitdef else f"np.asarray({call}, {e.name(dt)})"
    if copy_src >= 0:
        e.line(f"_part = w.vpart.get({copy_src}) if w.vpart else None")
    e.vwrite(ops[0], spec.dst, inst, value, d)
    if copy_src >= 0:
        e.line(f"if _part: _move_part(w, _part, {vcol(ops[0])})")


def _v_fmac(e: Emitter, inst: Inst, spec: Any) -> None:
    ops = inst.operands
    if len(ops) == 3:
        ops = (*ops, ops[0])
    _v_plain(e, replace(inst, operands=ops), spec)


def _v_cmp(e: Emitter, inst: Inst, spec: Any) -> None:
    writes_exec = spec.shape == "cmpx"
    exec_only = writes_exec and len(inst.operands) == 2
    ops = [VCC_OP, *inst.operands] if exec_only else _with_vcc(inst.operands, 3, (0,))
    if len(ops) != 3:
        raise NotFusible("operand count")
    srcs = list(zip(ops[1:], spec.src, strict=True))
    a, b = (e.vread(o, t) for o, t in srcs)
    d = e.all_of([e.vdef(o, t) for o, t in srcs])
    e.line(f"_res = {e.lanewise_value(f'{e.name(spec.fn)}({a}, {b})')}")
    if d != "True":
        e.line(f"_dc = {d}")
        d = "_dc"
    if writes_exec and d != "True":
        # the bound step raises sim-uninit-read after its destination write: it runs it
        e.line(f"if not np.all(_dc | ~E): {e.bail}")
    if not exec_only and (ops[0].index != EXEC or not writes_exec):
        e.mask_write(ops[0], "_res", d)
    if writes_exec:
        e.may_raise()
        e.line("w.set_exec(_mask_of(_res & E & _FULLV))")
        e.refresh_exec()


def _v_cndmask(e: Emitter, inst: Inst, spec: Any) -> None:
    ops = _with_vcc(inst.operands, 4, (3,))
    if len(ops) != 4:
        raise NotFusible("operand count")
    srcs = list(zip(ops[1:3], spec.src, strict=True))
    a, b = (e.vread(o, t) for o, t in srcs)
    d0, d1 = (e.vdef(o, t) for o, t in srcs)
    e.line(f"_m = {e.lane_mask(ops[3])}")
    d = "True" if d0 is None and d1 is None else \
        f"np.where(_m, {d1 or 'True'}, {d0 or 'True'})"
    e.vwrite(ops[0], spec.dst, inst, f"np.where(_m, {b}, {a})", d)


def _v_carry(e: Emitter, inst: Inst, spec: Any, *, carry_in: bool) -> None:
    """VOP2/VOP3b add/sub with a carry-out mask, and with a carry-in mask when `carry_in`."""
    n = 5 if carry_in else 4
    ops = _with_vcc(inst.operands, n, (1, 4) if carry_in else (1,))
    if len(ops) != n:
        raise NotFusible("operand count")
    srcs = list(zip(ops[2:4], spec.src, strict=True))
    a, b = (e.vread(o, t) for o, t in srcs)
    d = e.all_of([e.vdef(o, t) for o, t in srcs])
    if carry_in:
        e.line(f"_cin = {e.lane_mask(ops[4])}")
    cin = ", _cin" if carry_in else ""
    e.line(f"_r2, _c = {e.name(spec.fn)}(np.asarray({a}), np.asarray({b}){cin})")
    if d != "True":
        e.line(f"_dc = {d}")
        d = "_dc"
    e.mask_write(ops[1], e.lanewise_value("_c"), d)
    e.vwrite(ops[0], "u32", inst, "_r2", d)


def _v_carry_out(e: Emitter, inst: Inst, spec: Any) -> None:
    _v_carry(e, inst, spec, carry_in=False)


def _v_carry_in(e: Emitter, inst: Inst, spec: Any) -> None:
    _v_carry(e, inst, spec, carry_in=True)


def _v_mad64(e: Emitter, inst: Inst, spec: Any) -> None:
    ops = inst.operands
    if len(ops) != 5:
        raise NotFusible("operand count")
    srcs = list(zip(ops[2:5], spec.src, strict=True))
    args = [f"np.asarray({e.vread(o, t)})" for o, t in srcs]
    d = e.all_of([e.vdef(o, t) for o, t in srcs])
    low = e.all_of([_low_def(o) for o, _ in srcs])
    e.line(f"_r2, _c = {e.name(spec.fn)}({', '.join(args)})")
    if d != "True":
        e.line(f"_dc = {d}")
        d = "_dc"
    e.mask_write(ops[1], e.lanewise_value("_c"), d)
    e.vwrite(ops[0], spec.dst, inst, "_r2", (low, d))


def _plain_vgpr(op: Opnd) -> int:
    if op.kind not in (OpKind.VGPR, OpKind.AGPR) or bool(getattr(op, "sel", "")) or \
            bool(getattr(op, "hi", False)):
        raise NotFusible("lane read of a non-VGPR or part of one")
    return vcol(op)


def _v_readlane(e: Emitter, inst: Inst, spec: Any) -> None:
    ops = inst.operands
    col = _plain_vgpr(ops[1])
    e.vregs.add(col)
    if spec.shape == "readfirstlane":
        e.line("_l = int(np.argmax(E)) if ef or E.any() else 0")
        e.line(f"if not VD[_l, {col}]: {e.bail}")
        e.swrite(ops[0], 32, f"int(V[_l, {col}])")
        return
    # `bind_alu._readlane`'s one-lane path: a partly defined lane keeps its defined bits
    sel, sel_def = e.sread_bits(ops[2], 32)
    e.line(f"_l = {sel} % {e.lanes}")
    e.line(f"_sd = {sel_def} == {M32}")
    e.line(f"if _sd and VD[_l, {col}]: _dl = {M32}")
    e.line(f"elif _sd and w.vpart and {col} in w.vpart: _dl = w.vpart[{col}].get(_l, 0)")
    e.line("else: _dl = 0")
    e.swrite(ops[0], 32, f"int(V[_l, {col}])", "_dl")


def _v_writelane(e: Emitter, inst: Inst, spec: Any) -> None:
    ops = inst.operands
    if ops[0].kind not in (OpKind.VGPR, OpKind.AGPR):
        raise NotFusible("writelane destination")
    col = ops[0].index + (256 if ops[0].kind is OpKind.AGPR else 0)
    e.vregs.add(col)
    value, bits = e.sread_bits(ops[1], 32)
    e.line(f"_l = {e.sread(ops[2], 32)} % {e.lanes}")
    e.line(f"V[_l, {col}] = {value}")
    e.line(f"_b = {bits}")
    e.line(f"VD[_l, {col}] = _b == {M32}")
    e.line(f"if 0 < _b < {M32}: w.vpart.setdefault({col}, {{}})[_l] = _b")
    e.line(f"elif {col} in w.vpart: w.vpart[{col}].pop(_l, None)")


_VALU: dict[str, Callable[[Emitter, Inst, Any], None]] = {
    "plain": _v_plain, "fmac": _v_fmac, "cmp": _v_cmp, "cmpx": _v_cmp,
    "cndmask": _v_cndmask, "carry_out": _v_carry_out, "carry_in": _v_carry_in,
    "mad64": _v_mad64, "readlane": _v_readlane, "readfirstlane": _v_readlane,
    "writelane": _v_writelane,
}


# ---------------------------------------------------------------------------- SALU

def _scc_from(e: Emitter, var: str) -> None:
    e.line(f"if {var} is not None:")
    e.line(f"    w.scc = {var}")
    e.line("    w.scc_def = True")


def _s_cmp(e: Emitter, inst: Inst, spec: Any) -> None:
    a, b = (e.sread(o, b if b != 16 else 32)
            for o, b in zip(inst.operands[-2:], spec.src_bits, strict=True))
    e.line(f"_r, w.scc = {e.name(spec.fn)}({a}, {b})")
    e.line("w.scc_def = True")


def _s_movk(e: Emitter, inst: Inst, spec: Any) -> None:
    r, _ = spec.fn(inst.operands[-1].value & 0xFFFF)
    if spec.shape == "cmovk":
        e.line("if w.scc:")
        mark = len(e.body)
        e.swrite(inst.operands[0], 32, repr(r))
        e.body[mark:] = ["    " + x for x in e.body[mark:]]
        return
    e.swrite(inst.operands[0], 32, repr(r))


def _s_addk(e: Emitter, inst: Inst, spec: Any) -> None:
    ops = inst.operands
    a = e.sread(ops[0], 32)
    e.line(f"_r, _c = {e.name(spec.fn)}({a}, {ops[-1].value & 0xFFFF})")
    e.swrite(ops[0], 32, "_r")
    _scc_from(e, "_c")


def _s_getreg(e: Emitter, inst: Inst, spec: Any) -> None:
    e.swrite(inst.operands[0], 32, repr(_hwreg_field(inst.operands[-1].value & 0xFFFF, e.env)))


def _s_saveexec(e: Emitter, inst: Inst, spec: Any) -> None:
    ops = inst.operands
    bits = spec.dst_bits
    lanes = (1 << e.lanes) - 1
    e.sregs.update((EXEC, EXEC + 1))
    s = e.sread(ops[1], bits)
    hi = " | (S[127] << 32)" if bits == 64 else ""
    e.line(f"_old = S[126]{hi}")
    e.line(f"_s = {s}")
    e.line(f"_new, _ = {e.name(spec.fn)}(_old, _s)")
    e.line(f"if {e.name(spec.bitdef)}(_old, _s, {(1 << bits) - 1}) & {lanes} != {lanes}: "
           f"{e.bail}")
    e.swrite(ops[0], bits, "_old")
    e.may_raise()
    e.line(f"w.set_exec(_new{' | (S[127] << 32)' if bits == 32 else ''})")
    e.line("w.scc = int(_new != 0)")
    e.line("w.scc_def = True")
    e.refresh_exec()


def _s_general(e: Emitter, inst: Inst, spec: Any) -> None:
    ops = inst.operands
    shape = spec.shape
    if len(ops) != 1 + len(spec.src_bits):
        raise NotFusible("operand count")
    dst_bits = spec.dst_bits
    fn = e.name(spec.fn)
    if shape == "cselect":
        e.line(f"if not w.scc_def: {e.bail}")
        a, b = (e.sread(o, bb) for o, bb in zip(ops[1:], spec.src_bits, strict=True))
        e.swrite(ops[0], dst_bits, f"({a} if w.scc else {b})")
        return
    if shape == "cmov":
        e.line("if w.scc:")
        mark = len(e.body)
        a = e.sread(ops[1], spec.src_bits[0])
        e.swrite(ops[0], dst_bits, a)
        e.body[mark:] = ["    " + x for x in e.body[mark:]]
        return
    if shape == "bitset":
        a = e.sread(ops[1], spec.src_bits[0])
        d = e.sread(ops[0], 32)
        e.line(f"_r, _ = {fn}({a}, {d})")
        e.swrite(ops[0], dst_bits, "_r")
        return
    if shape == "addc" or inst.opcode in ("S_ADD_U32", "S_SUB_U32"):
        a, b = (e.sread(o, 32) for o in ops[1:3])
        if shape == "addc":
            e.line(f"if not w.scc_def: {e.bail}")
            e.line(f"_r, _c = {fn}({a}, {b}, w.scc)")
        else:
            e.line(f"_r, _c = {fn}({a}, {b})")
        e.swrite(ops[0], 32, "_r")
        e.line("w.scc = _c")
        e.line("w.scc_def = True")
        return
    if shape != "plain":
        raise NotFusible(f"SALU shape {shape}")
    if spec.bitdef is not None:
        # `bind_alu._bitwise`: per-bit definedness by the table's rule
        full = (1 << dst_bits) - 1
        pairs = [e.sread_bits(o, bb) for o, bb in zip(ops[1:], spec.src_bits, strict=True)]
        for n, (value, _) in enumerate(pairs):
            e.line(f"_a{n} = {value}")
        e.line(f"_r, _c = {fn}({', '.join(f'_a{n}' for n in range(len(pairs)))})")
        bargs = ", ".join(f"_a{n}, {bits}" for n, (_, bits) in enumerate(pairs))
        e.line(f"_d = {e.name(spec.bitdef)}({bargs}) & {full}")
        e.swrite(ops[0], dst_bits, "_r", "_d")
        if len(pairs) == 1:
            e.line("if _c is not None:")
            e.line("    w.scc = _c")
            e.line(f"    w.scc_def = _d == {full} or bool(_r & _d)")
        else:
            e.line("w.scc = _c")
            e.line(f"w.scc_def = _d == {full} or bool(_r & _d)")
        return
    args = [e.sread(o, bb) for o, bb in zip(ops[1:], spec.src_bits, strict=True)]
    e.line(f"_r, _c = {fn}({', '.join(args)})")
    if dst_bits:
        e.swrite(ops[0], dst_bits, "_r")
    _scc_from(e, "_c")


_SALU: dict[str, Callable[[Emitter, Inst, Any], None]] = {
    "cmp": _s_cmp, "cmpk": _s_cmp, "movk": _s_movk, "cmovk": _s_movk, "addk": _s_addk,
    "getreg": _s_getreg, "saveexec": _s_saveexec, "plain": _s_general,
    "cselect": _s_general, "cmov": _s_general, "bitset": _s_general, "addc": _s_general,
}


FLOW = frozenset({"S_ENDPGM", "S_BARRIER", "S_TRAP", "S_SETPC_B64", "S_SWAPPC_B64",
                  "S_GETPC_B64", "S_CALL_B64"})


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
    from rgpu_fuzz.sim.program import _SHARED, bind_one

    step = _SHARED.get(env, {}).get(inst.share_key) or \
        bind_one(inst, env, None, lambda address: 0)
    if getattr(step, "unsupported", False):
        return False
    try:
        Emitter([inst], env).emit(inst)
    except NotFusible:
        return False
    return True


__all__ = ["Emitter", "NotFusible", "fusible_kind"]
