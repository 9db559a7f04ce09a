"""Uniform-address SCRATCH accesses and `s_waitcnt` in the source of a fused run
(`rgpu_fuzz.sim.fuse`): O0 code spills and reloads around almost every instruction, and a
bound step between two segments costs a call, a `Pending` record and its completion.

What is emitted is `bind_scratch`'s step for the plain case; every condition under which
that step would fault, or hand the access to the general step, hands the run to the bound
steps at the access instead (`bail`), so the checks (`sim-waitcnt-hazard`,
`sim-uninit-read`, the swizzle and `sim-oob-access`) are made by the very steps that make
them outside a run, in their order.

- A store is emitted inside the current segment: it writes memory and leaves a completed
  entry in the vmcnt queue, and changes no register.
- Loads directly followed by an `s_waitcnt` whose vmcnt is 0 (nothing between them but
  more such loads, each to other registers) read their rows at the load and write their
  destinations at the wait: the wait completes every older load first, and no instruction
  can observe the destinations in between. Where a load of such a window hands the run to
  the bound steps, the loads before it in the window are parked as the bound steps would
  have parked them (`inflight.issue_vector_load`). Any other load runs as its bound step.
- `s_waitcnt` completes what is in the queues (`inflight.wait`), then the window's loads.
"""

from __future__ import annotations

from rgpu_fuzz.sim.bind_scratch import (
    DEFINED_WORD,
    STORED,
    ScratchForm,
    all_defined,
    ones,
    scratch_form,
    views,
)
from rgpu_fuzz.sim.fuse_code import RunCode
from rgpu_fuzz.sim.inflight import issue_vector_load, wait
from rgpu_fuzz.sim.inst import Inst
from rgpu_fuzz.sim.memops import MemOp, memop

M32 = 0xFFFF_FFFF


def _need(em: RunCode) -> None:
    """Add the names the emitted code uses to the run's namespace."""
    if "_views" not in em.ns:
        em.ns.update({"_views": views, "_STORED": STORED, "_DW": DEFINED_WORD,
                      "_park": issue_vector_load, "_wait": wait})


def _uniform(inst: Inst, name: str, em: RunCode) -> tuple[MemOp, ScratchForm] | None:
    op = memop(name)
    if op is None or op.segment != "scratch":
        return None
    form = scratch_form(inst, op, em.env)
    if form is None or (form.saddr is not None and form.sreg is None):
        return None
    return op, form


def _prologue(em: RunCode, op: MemOp, form: ScratchForm, bail: str) -> None:
    """The access's checks, each handing the run to the bound steps where the step would
    not take its row-copy path (`bind_scratch.uniform_scratch`), inside `if ef or
    E.any():` (an empty EXEC accesses nothing); leaves `_v` (the rows) and `_o`."""
    width = op.width
    n = max(1, width // 4)
    cols = em.name(frozenset(range(form.col, form.col + n)))
    em.line("if ef or E.any():")
    if form.sreg is None:
        em.line(f"    _o = {form.offset & M32}")
    else:
        i = form.sreg
        em.line(f"    if SD[{i}] & {M32} != {M32} or (w.pend_s and {i} in w.pend_s): {bail}")
        em.line(f"    _o = (S[{i}] + {form.offset}) & {M32}")
    em.line("    _P = w.private")
    if width >= 4:
        em.line(f"    if _o & 3 or _o + {4 * n} > _P.size or _P.size & 3: {bail}")
    else:
        odd = " or _o & 1" if width == 2 else ""
        em.line(f"    if _o + {width} > _P.size or _P.size & 3{odd}: {bail}")
    em.line(f"    if w.vpart and not {cols}.isdisjoint(w.vpart): {bail}")
    em.line(f"    if w.pend_v and not {cols}.isdisjoint(w.pend_v): {bail}")
    em.line("    _v = _views(w)")
    if width == 2:
        em.line("    _k = (_o >> 1) & 1")
        em.line("    _dr = _v[5][_o >> 2, :, _k]; _sr = _v[6][_o >> 2, :, _k]")
    elif width == 1:
        em.line("    _dr = _v[3][_o >> 2, :, _o & 3]; _sr = _v[4][_o >> 2, :, _o & 3]")


def emit_store(em: RunCode, inst: Inst, name: str) -> bool:
    """Emit a uniform SCRATCH store inside the current segment; False: not this form."""
    got = _uniform(inst, name, em)
    if got is None or not got[0].store:
        return False
    op, form = got
    _need(em)
    _prologue(em, op, form, em.bail)
    col = form.col
    width = op.width
    n = max(1, width // 4)
    if width >= 4:
        em.line("    _r = _o >> 2")
        if n == 1:
            em.line(f"    if ef: _v[1][_r] = V[:, {col}]; "
                    f"np.negative(VD[:, {col}], out=_v[2][_r], dtype=_U32, casting='unsafe')")
        else:
            em.line(f"    if ef: _v[1][_r:_r + {n}] = V[:, {col}:{col + n}].T; "
                    f"np.negative(VD[:, {col}:{col + n}].T, out=_v[2][_r:_r + {n}], "
                    "dtype=_U32, casting='unsafe')")
        em.line(f"    else: _v[1][_r:_r + {n}, E] = V[E, {col}:{col + n}].T; "
                f"_v[2][_r:_r + {n}, E] = np.negative(VD[E, {col}:{col + n}].T, dtype=_U32, "
                "casting='unsafe')")
    else:
        # the register's low byte or half (little-endian) and its definedness per byte
        dt = "np.uint16" if width == 2 else "np.uint8"
        em.line(f"    _x = V.view({dt})[:, {col * 4 // width}]")
        em.line(f"    if ef: _dr[...] = _x; np.negative(VD[:, {col}], out=_sr, dtype={dt}, "
                "casting='unsafe')")
        em.line(f"    else: np.copyto(_dr, _x, where=E); np.copyto(_sr, np.negative(VD[:, {col}], "
                f"dtype={dt}, casting='unsafe'), where=E)")
    em.line("    w.vm_queue.append(_STORED)")
    return True


def _window(em: RunCode) -> bool:
    """Whether the load at `em.at` starts or continues a run of uniform SCRATCH loads to
    distinct registers that an `s_waitcnt` with vmcnt 0 directly follows."""
    from rgpu_fuzz.sim.program import ALIASES, _waitcnt_counts

    seen: set[int] = set()
    for k, inst in enumerate(em.insts[em.at:]):
        name = ALIASES.get(inst.opcode, inst.opcode)
        if k and name == "S_WAITCNT":
            return bool(inst.share_key) and _waitcnt_counts(inst, em.env)[0] == 0
        got = _uniform(inst, name, em)
        if got is None or got[0].store or not inst.share_key:
            return False
        op, form = got
        cols = set(range(form.col, form.col + max(1, op.width // 4)))
        if cols & seen:
            return False
        seen |= cols
    return False


def emit_load(em: RunCode, inst: Inst, name: str) -> bool:
    """Emit a uniform SCRATCH load of a window (`_window`); False: it runs as its bound
    step."""
    got = _uniform(inst, name, em)
    if got is None or got[0].store or not _window(em):
        return False
    op, form = got
    _need(em)
    k = len(em.deferred)
    # simple statements after `if ...:` on one line are all its body
    bail = "; ".join([*(f"_park(w, {c}, _d{m}.copy().T, _dd{m}, True, False) "
                        f"if _d{m} is not None else None"
                        for m, (c, _) in enumerate(em.deferred)), em.bail])
    col = form.col
    width = op.width
    n = max(1, width // 4)
    em.line(f"_d{k} = None")
    _prologue(em, op, form, bail)
    if width >= 4:
        whole = em.name(ones(4 * n * em.lanes))
        alld = em.name(all_defined(em.lanes, n))
        em.line("    _r = _o >> 2")
        em.line(f"    _s = _v[2][_r:_r + {n}]")
        em.line(f"    if _s.tobytes() == {whole}: _dd{k} = {alld}")
        em.line("    else:")
        em.line("        _ok = _s == _DW")
        em.line(f"        if ((_s != 0) & ~_ok).any(): {bail}")
        em.line(f"        _dd{k} = _ok.T")
        em.line(f"    _d{k} = _v[1][_r:_r + {n}]")
    else:
        # a sub-dword load's lane is defined when all its bytes are (`bind_vmem`)
        em.line(f"    _dd{k} = (_sr == {0xFFFF if width == 2 else 0xFF})[:, None]")
        if op.signed:
            signed = "np.int16" if width == 2 else "np.int8"
            em.line(f"    _d{k} = _dr.view({signed}).astype(np.int32).view(_U32)[None, :]")
        else:
            em.line(f"    _d{k} = _dr.astype(_U32)[None, :]")
    em.deferred.append((col, n))
    return True


def emit_wait(em: RunCode, vm: int, lgkm: int) -> None:
    """`s_waitcnt` between two segments: what is in the queues, then the window's loads
    (their rows `_d<k>` as (n, lanes), definedness `_dd<k>` as (lanes, n))."""
    _need(em)
    em.close_segment()
    em.may_raise()
    em.line(f"if w.vm_queue or w.lgkm_queue: _wait(w, {vm}, {lgkm})")
    for k, (col, n) in enumerate(em.deferred):
        em.line(f"if _d{k} is not None:")
        em.line(f"    if ef: V[:, {col}:{col + n}] = _d{k}.T; VD[:, {col}:{col + n}] = _dd{k}")
        em.line(f"    else: np.copyto(V[:, {col}:{col + n}], _d{k}.T, where=E[:, None]); "
                f"np.copyto(VD[:, {col}:{col + n}], _dd{k}, where=E[:, None])")
    em.deferred.clear()
    em.open_segment(em.at + 1)


__all__ = ["emit_load", "emit_store", "emit_wait"]
