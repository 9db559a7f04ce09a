"""Operand access and definedness in the source of a fused run (`rgpu_fuzz.sim.fused.runs`): the
part every instruction emitter (`fused.valu`, `fused.salu`) shares.

A VGPR source is a column of `Wave.V`, an SGPR a Python int of `Wave.S`; a source with
modifiers, a 16-bit or SDWA source is read through the very getter `operands.vector_source`
returns. Writes follow `operands.vector_dest` / `operands.scalar_dest`, with the result's
definedness computed as the bound step computes it. Each check the bound step makes on
definedness becomes a guard that, where it fails, hands the rest of the run to the bound
steps (`bail`); each segment of the run (split at `s_waitcnt` and at bound steps inside the
run) is guarded at its start against pending loads to the registers it touches."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.mem import wait
from rgpu_fuzz.sim.bound.operands import (
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
from rgpu_fuzz.sim.common.fault import Fault, SimStop
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.state.regfile import DEFINED, KIND, key
from rgpu_fuzz.sim.state.wave import EXEC, Wave, lanes_of, mask_of

M32 = 0xFFFF_FFFF
M64 = (1 << 64) - 1
NULL_SGPR = 125


_BOOL = np.dtype(bool)
_SHAPES: dict[int, tuple[int]] = {}
"""Lane count → the shape of one value per lane (one object: `RunCode.name` keys by id)."""


_ONES: dict[int, bytes] = {}


def _ones(n: int) -> bytes:
    """n bytes of 1, the bytes of n True bools: one object per length, so that
    `RunCode.name` (keyed by id) binds it once per run."""
    return _ONES.setdefault(n, b"\x01" * n)


class Scalars:
    """What the code of a segment makes certain of the scalar state at the current line:
    SGPRs whose every bit is defined (checked by a guard, or written defined), pairs held
    in a local `_q<i>` equal to S[i] | S[i + 1] << 32, and whether SCC is defined."""

    __slots__ = ("defined", "pairs", "scc_def", "tag")

    def __init__(self, tag: tuple[int, int]) -> None:
        self.tag = tag
        self.defined: set[int] = set()
        self.pairs: set[int] = set()
        self.scc_def = False

    def copy(self) -> Scalars:
        got = Scalars(self.tag)
        got.defined, got.pairs, got.scc_def = set(self.defined), set(self.pairs), self.scc_def
        return got

    def load(self, other: Scalars) -> None:
        self.defined, self.pairs, self.scc_def = set(other.defined), set(other.pairs), \
            other.scc_def

    def meet(self, other: Scalars) -> None:
        """Keep what holds on both of two paths that join here."""
        self.defined &= other.defined
        self.pairs &= other.pairs
        self.scc_def = self.scc_def and other.scc_def


RUN_BASE = -16
"""A fused run of k instructions returns `RUN_BASE - k` to the engine."""

Step = Callable[[Wave], Any]


class RunStop(Exception):
    """A fault inside a fused run: `offset` is the instruction of the run that raised."""

    def __init__(self, fault: Fault, offset: int) -> None:
        super().__init__(fault.detail)
        self.fault = fault
        self.offset = offset


def finish(w: Wave, steps: list[Step], i: int, j: int, k: int) -> int:
    """Run instructions `j..k-1` of the run at `i` on the bound steps (a check failed at `j`):
    they compute definedness and raise faults as they do outside a run."""
    at = j
    try:
        while at < k:
            steps[i + at](w)
            at += 1
    except SimStop as stop:
        raise RunStop(stop.fault, at) from None
    return RUN_BASE - k


class NotFusible(Exception):
    """No emitter reproduces this instruction's bound step exactly."""


def _move_part(w: Wave, part: dict[int, int], dst: int) -> None:
    """`bound.alu.bind_valu`'s copy of partly defined lanes along with a move."""
    moved = part if w.exec_full else {ln: m for ln, m in part.items() if w.exec[ln]}
    if moved:
        w.vpart.setdefault(dst, {}).update(moved)


def _helpers(env: Env) -> dict[str, Any]:
    return {"np": np, "_U32": np.uint32, "_U64": np.uint64, "SimStop": SimStop,
            "_forget": _forget, "_check_exec": _check_exec, "_lanes_of": lanes_of,
            "_mask_of": mask_of, "_wait": wait, "_move_part": _move_part,
            "_FULLV": np.ones(env.lanes, bool)}


class RunCode:
    """The body of one run's source under construction: operand reads and writes with their
    definedness, and the guards that hand the run to the bound steps. `fused.emit.Emitter`
    adds the per-instruction dispatch and the compilation."""

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
        self.deferred: list[tuple[int, int]] = []
        """Loads whose destinations the next `s_waitcnt` writes (`fused.scratch`): (column, n)."""
        self.live_in: set[int] = set()
        """VGPR columns the segment reads before it writes them: `_fd` is true at the
        segment's start when each is defined in every lane."""
        self.known: set[int] = set()
        """Columns defined in every lane at this point of the segment when `_fd` holds."""
        self.active: set[int] = set()
        """Columns defined in every lane of the current EXEC when `_fd` holds: written since
        EXEC last changed by instructions whose sources were `known` or `active`. Only
        active lanes are read by what the run emits (lane reads check `vdef` themselves)."""
        self.written: set[int] = set()
        self.fd_ok = True
        """Every VGPR the current instruction read so far is `known`."""
        self.fd_uses = 0
        """Writes of the segment that `_fd` spares definedness work."""

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
        self.active.clear()
        self.scalars().pairs.discard(EXEC)  # `Wave.set_exec` may have written it
        self.line("ef = w.exec_full")
        self.line("E = w.exec")

    # ------------------------------------------------------------------ scalars
    def scalars(self) -> Scalars:
        """What the code emitted so far in this segment makes certain of the scalar state
        (a new segment knows nothing: bound steps and waits between segments write SGPRs)."""
        got: Scalars | None = self.__dict__.get("_scalars")
        tag = (self.seg_at, self.seg_line)
        if got is None or got.tag != tag:
            got = self.__dict__["_scalars"] = Scalars(tag)
        return got

    def _pair(self, i: int) -> str:
        """S[i] | S[i + 1] << 32 as a local of the run, read once per segment and kept by
        `swrite` (every SGPR write inside a segment is `swrite`'s or `Wave.set_exec`'s,
        after which `refresh_exec` forgets EXEC's)."""
        known = self.scalars()
        if i not in known.pairs:
            self.line(f"_q{i} = S[{i}] | S[{i + 1}] << 32")
            known.pairs.add(i)
        return f"_q{i}"

    def sread(self, op: Opnd, bits: int) -> str:
        """A scalar source as a Python int expression; a guard bails unless it is defined
        (`operands.scalar_source`'s `defined`; none where the segment has made sure)."""
        if bits not in (32, 64):
            raise NotFusible(f"{bits}-bit scalar source")
        full = (1 << bits) - 1
        if op.kind is OpKind.SGPR:
            i = op.index
            if i in _consts(self.env) or i in (SCC_SRC, VCCZ_SRC, EXECZ_SRC) or i >= 128:
                g, d = scalar_bits_source(op, bits, self.env)
                self.line(f"if {self.name(d)}(w) != {full}: {self.bail}")
                return f"{self.name(g)}(w)"
            known = self.scalars()
            if bits == 64:
                self.sregs.update((i, i + 1))
                if i not in known.defined or i + 1 not in known.defined:
                    self.line(f"if SD[{i}] & SD[{i + 1}] != {M32}: {self.bail}")
                    known.defined.update((i, i + 1))
                return self._pair(i)
            self.sregs.add(i)
            if i not in known.defined:
                self.line(f"if SD[{i}] != {M32}: {self.bail}")
                known.defined.add(i)
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
            known = self.scalars().defined
            if bits == 64:
                self.sregs.update((i, i + 1))
                both = i in known and i + 1 in known
                return self._pair(i), repr(M64) if both else f"(SD[{i}] | SD[{i + 1}] << 32)"
            self.sregs.add(i)
            return f"S[{i}]", repr(M32) if i in known else f"SD[{i}]"
        return self.sread(op, bits), repr((1 << bits) - 1)

    def sregs_of(self, op: Opnd, bits: int) -> tuple[int, ...] | None:
        """The registers of a plain SGPR source (or pair) whose definedness this segment has
        not made sure of; () for a constant; None for any other source."""
        if op.kind in (OpKind.INT, OpKind.FLOAT, OpKind.BITS):
            return ()
        if op.kind is not OpKind.SGPR or bits not in (32, 64):
            return None
        i = op.index
        if i in _consts(self.env) or i in (SCC_SRC, VCCZ_SRC, EXECZ_SRC) or i >= 128:
            return None
        known = self.scalars().defined
        return tuple(r for r in ((i, i + 1) if bits == 64 else (i,)) if r not in known)

    def swrite(self, op: Opnd, bits: int, expr: str, defined: str = "") -> None:
        """`operands.scalar_dest`; `defined`: an expression of the defined bits (default:
        all). A write to EXEC checks it defined (unless this segment has made sure) and
        refreshes the lane vector where the mask changed (`Wave.refresh_exec`)."""
        if op.kind is not OpKind.SGPR:
            raise NotFusible("scalar destination")
        i = op.index
        if i == NULL_SGPR:
            return
        known = self.scalars()
        touches_exec = i in (EXEC, EXEC + 1) or (bits == 64 and i + 1 == EXEC)
        regs = (i, i + 1) if bits == 64 else (i,)
        known.pairs.difference_update((i - 1, i, i + 1))
        if bits == 64:
            self.sregs.update(regs)
            self.line(f"_q{i} = {expr}")
            self.line(f"S[{i}] = _q{i} & {M32}")
            self.line(f"S[{i + 1}] = (_q{i} >> 32) & {M32}")
            if defined:
                self.line(f"_dm = {defined}")
                self.line(f"SD[{i}] = _dm & {M32}")
                self.line(f"SD[{i + 1}] = (_dm >> 32) & {M32}")
            elif i not in known.defined or i + 1 not in known.defined:
                self.line(f"SD[{i}] = SD[{i + 1}] = {M32}")
        else:
            self.sregs.add(i)
            self.line(f"S[{i}] = ({expr}) & {M32}")
            if defined:
                self.line(f"SD[{i}] = ({defined}) & {M32}")
            elif i not in known.defined:
                self.line(f"SD[{i}] = {M32}")
        if defined:
            known.defined.difference_update(regs)
        else:
            known.defined.update(regs)
        if touches_exec:
            need = (EXEC, EXEC + 1) if self.lanes == 64 else (EXEC,)
            if not known.defined.issuperset(need):
                self.may_raise()
                self.line("_check_exec(w)")
                known.defined.update(need)
            lanes = (1 << self.lanes) - 1
            mask = f"_q{i} & {lanes}" if i == EXEC and bits == 64 else \
                f"(S[{EXEC}] | S[{EXEC + 1}] << 32) & {lanes}"
            self.line(f"_m = {mask}")
            self.line("if _m != w.exec_bits: w.refresh_exec(_m)")
            self.refresh_exec()
        if bits == 64:
            known.pairs.add(i)

    def lane_mask(self, op: Opnd) -> str:
        """`operands.lane_mask_source`'s bits as a bool vector (all of them defined)."""
        return f"_lanes_of({self.sread(op, 64 if self.lanes == 64 else 32)}, {self.lanes})"

    def mask_write(self, op: Opnd, res: str, d: str) -> None:
        """`bound.alu._lane_mask_dest`: bit n for active lane n; a bit is defined where the
        lane is inactive or `d` (defined lanes, or "True"). A bool vector of one value per
        lane goes to its mask first and combines with EXEC's as ints (`mask_of(x & E) ==
        mask_of(x) & mask_of(E)`, `mask_of(x | ~E) == mask_of(x) | ~mask_of(E)`): no
        vectors to build."""
        lanes = (1 << self.lanes) - 1
        if not res.isidentifier():
            self.line(f"_lm = {res}")
            res = "_lm"
        shape = _SHAPES.setdefault(self.lanes, (self.lanes,))
        plain = f"{{0}}.dtype is {self.name(_BOOL)} and {{0}}.shape == {self.name(shape)}"
        self.line(f"_eb = {lanes} if ef else _mask_of(E)")
        high = f" | {self.high}" if self.high else ""
        defined = "" if d == "True" else \
            f"(_mask_of({d}) | ({lanes} ^ _eb) if {plain.format(d)} else " \
            f"_mask_of({d} | ~E)){high}"
        if self.fd_ok and d != "True":
            # `_fd`: `d` holds in every active lane, and inactive lanes are defined bits
            defined = f"({(1 << 64) - 1} if _fd else ({defined}))"
            self.fd_uses += 1
        self.swrite(op, 64 if self.lanes == 64 else 32,
                    f"_mask_of({res}) & _eb if {plain.format(res)} else _mask_of({res} & E)",
                    defined)

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
            self.read_cols(cols)
            self.vector = True
            if lanewise:
                self.lanewise.update(cols)
            if (sel and sel != "DWORD") or bits == 16 or mods:
                g, _ = vector_source(op, ty, self.env)
                return f"{self.name(g)}(w)"
            return self.view(col, dtype)
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

    def read_cols(self, cols: Sequence[int]) -> None:
        """Note a read of VGPR `cols` for `_fd` (`live_in`, `known`, `fd_ok`)."""
        for c in cols:
            if c not in self.written:
                self.live_in.add(c)
                self.known.add(c)
            elif c not in self.known and c not in self.active:
                self.fd_ok = False

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
            return f"({self.dcol(col)} & {self.dcol(col + 1)})"
        return self.dcol(col)

    def view(self, col: int, dtype: Any) -> str:
        """The register at `col` (a pair for a 64-bit `dtype`) as a vector of `dtype`: the
        wave's cached view (`regfile.RegViews`), which writes go through too."""
        return f"X[{key(KIND[dtype], col)}]"

    def dcol(self, col: int) -> str:
        """The definedness column of the register at `col`, a cached view as `view`."""
        return f"X[{key(DEFINED, col)}]"

    def lanewise_value(self, expr: str) -> str:
        """`expr` broadcast to one value per lane, as the bound steps do; a result computed
        from a VGPR has that shape already."""
        return expr if self.vector else f"np.broadcast_to({expr}, ({self.lanes},))"

    def all_of(self, defs: Sequence[str | None]) -> str:
        got = [d for d in defs if d is not None]
        return " & ".join(got) if got else "True"

    def vwrite(self, op: Opnd, ty: str, inst: Inst, expr: str,
               d: str | tuple[str, str] = "True", array: bool = False) -> None:
        """`operands.vector_dest`: lanes outside EXEC keep value and definedness; `d` is
        the defined lanes of the result (an expression, or "True"); `array`: `expr` is an
        ndarray already. Where `_fd` holds and every VGPR source is `known` or `active`
        (`fd_ok`), the result is defined in every active lane: no definedness is computed,
        and none written to a destination `known` or `active` already."""
        bits = DTYPES[ty][0]
        if op.kind not in (OpKind.VGPR, OpKind.AGPR):
            raise NotFusible("vector destination")
        dst_sel = inst.mods.get("dst_sel", "")
        if dst_sel not in ("", "DWORD", 6):
            raise NotFusible("SDWA destination")
        if bits == 16 and self.env.halves:
            raise NotFusible("16-bit destination keeping the other half")
        col = vcol(op)
        cols = (col, col + 1) if bits == 64 else (col,)
        value = expr if array else f"np.asarray({expr})"
        if bits == 64:
            # through the pair's uint64 view: numpy copies first where source and
            # destination overlap (a move between overlapping pairs), as `np.copyto` does
            self.line(f"_r = {self.lanewise_value(f'{value}.view(_U64)')}")
            value, dst = "_r", self.view(col, np.uint64)
        elif bits == 16:
            self.line(f"_x = {value}.view(np.uint16).astype(_U32)")
            value, dst = "_x", self.view(col, np.uint32)
        else:
            self.line(f"_x = {value}.view(_U32)")
            value, dst = "_x", self.view(col, np.uint32)
        dcols = [self.dcol(c) for c in cols]
        defs = d if isinstance(d, tuple) else (d,) * len(cols)
        forget = f"if w.vpart: _forget(w, {col}, {len(cols)})"
        if self.fd_ok:
            self.fd_uses += 1
            self.line("if _fd:")
            self.line(f"    {forget}")
            if all(c in self.known or c in self.active for c in cols):
                self.line(f"    if ef: {dst}[...] = {value}")
                self.line(f"    else: np.copyto({dst}, {value}, where=E)")
            else:
                self._write(dst, value, dcols, ("True",) * len(cols), "    ")
                self.active.update(cols)
            self.line("else:")
        else:
            self.known.difference_update(cols)
            self.active.difference_update(cols)
        self.vregs.update(cols)
        self.written.update(cols)
        pad = "    " if self.fd_ok else ""
        names = [dx if dx == "True" else f"_d{k}" for k, dx in enumerate(defs)]
        for name, dx in zip(names, defs, strict=True):
            if name != "True":
                self.line(f"{pad}{name} = {dx}")
        self.line(f"{pad}{forget}")
        self._write(dst, value, dcols, tuple(names), pad)

    def _write(self, dst: str, value: str, dcols: Sequence[str], defs: Sequence[str],
               pad: str) -> None:
        full = "; ".join([f"{dst}[...] = {value}"] +
                         [f"{c}[...] = {dx}" for c, dx in zip(dcols, defs, strict=True)])
        part = "; ".join([f"np.copyto({dst}, {value}, where=E)"] +
                         [f"np.logical_or({c}, E, out={c})" if dx == "True" else
                          f"np.copyto({c}, {dx}, where=E)"
                          for c, dx in zip(dcols, defs, strict=True)])
        self.line(f"{pad}if ef: {full}")
        self.line(f"{pad}else: {part}")

    def fd_guard(self, n: int) -> str:
        """The expression of `_fd` at the segment's start: every `live_in` column defined in
        every lane (a column's bools compared as bytes: ~0.1 us a column, where
        `VD[:, cols].all()` costs ~1.7 us). False, without a test, where no write of the
        segment would be spared (`fd_uses`): short segments at O0 would pay for nothing."""
        if not self.fd_uses:
            return "False"
        if not self.live_in:
            return "True"
        cols = sorted(self.live_in)
        if len(cols) <= 6:
            ones = self.name(_ones(self.lanes))
            return " and ".join(f"{self.dcol(c)}.tobytes() == {ones}" for c in cols)
        self.ns[f"_VA{n}"] = np.array(cols, np.intp)
        many = self.name(_ones(self.lanes * len(cols)))
        return f"VD.take(_VA{n}, axis=1).tobytes() == {many}"

    def dc_line(self, expr: str) -> None:
        """`_dc = expr`, the defined lanes of an instruction's result, computed only where
        `_fd` does not settle them (`vwrite`)."""
        self.line(f"if not _fd: _dc = {expr}" if self.fd_ok else f"_dc = {expr}")

    def open_segment(self, at: int) -> None:
        self.seg_at, self.seg_line = at, len(self.body)
        self.vregs, self.sregs, self.lanewise = set(), set(), set()
        self.known, self.active, self.written, self.live_in = set(), set(), set(), set()
        self.fd_uses = 0

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
        guards.append(f"_fd = {self.fd_guard(n)}")
        if self.lanewise:
            self.ns[f"_VR{n}"] = np.array(sorted(self.lanewise), np.intp)
            guards.append(f"if not _fd and not VD[:, _VR{n}].all(): {bail}")
        self.body[self.seg_line:self.seg_line] = guards

__all__ = ["M32", "M64", "RUN_BASE", "NotFusible", "RunCode", "RunStop", "Scalars", "Step",
           "finish"]
