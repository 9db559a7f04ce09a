"""The executor's view of one decoded instruction: the AMD opcode name, its operands in
assembler order (definitions first, then uses) and its modifiers.

The decoder (`rgpu_fuzz.sim.isa`) describes an instruction as it is encoded; the binders
(`rgpu_fuzz.sim.bound.alu`, `bound.mem`) need less: which register or constant each operand
is, and the modifier values. `from_decoded` is the one place that reads the decoder's type, so a
change there touches one function.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from rgpu_fuzz.sim.isa.decode import decode_at
from rgpu_fuzz.sim.isa.instruction import Encoding
from rgpu_fuzz.sim.isa.render import render


class OpKind(StrEnum):
    SGPR = "s"      # scalar register file, indexed by the operand encoding (vcc_lo = 106 ...)
    VGPR = "v"
    AGPR = "a"
    INT = "int"     # an inline integer constant, a literal, or an immediate field
    FLOAT = "float"  # an inline floating-point constant (its bits depend on the operand type)
    OFF = "off"     # an absent address operand (`off`)
    BITS = "bits"   # a constant given as its bits at the operand's width (the decoder's form)
    UNMODELLED = "unmodelled"  # a special source the executor has no state for (lds_direct):
    # no reader or writer takes it, so binding fails and the step is unsupported-instruction


@dataclass(frozen=True, slots=True)
class Opnd:
    kind: OpKind
    index: int
    count: int
    value: int = 0
    fvalue: float = 0.0
    neg: bool = False
    abs: bool = False
    literal: bool = False


@dataclass(frozen=True, slots=True)
class Inst:
    address: int
    size: int
    opcode: str
    """The AMD name of the operation, upper case, without the encoding suffix (`V_ADD_U32`)."""
    encoding: str
    """`VOP1`, `VOP2`, `VOP3`, `VOPC`, `VOP3P`, `SOP1`, `SOP2`, `SOPC`, `SOPK`, `SOPP`, `SMEM`,
    `FLAT`, `GLOBAL`, `SCRATCH`, `DS`, `MUBUF`; `SDWA` and `DPP` variants keep their base."""
    mnemonic: str
    """LLVM's spelling, for traces and `unsupported-instruction:<mnemonic>`."""
    operands: tuple[Opnd, ...]
    mods: Mapping[str, Any] = field(default_factory=dict)
    rendered: str = ""
    """The instruction in LLVM syntax when known at construction."""
    halves: tuple[Inst, ...] = ()
    """VOPD (gfx11 dual issue): the X and Y operations."""
    origin: tuple[Any, ...] = ()
    """(target, dwords) of an address-bound instruction (`share_key` empty), decoded again
    at its address when a trace or a message needs its text, as a shared one is from its
    `share_key`. Kept instead of the decoder's instruction: those were a third of the
    objects the garbage collector walked, and moving one to another address (`relocated`,
    the scan's miss path for branches) cost more than the rest of the move."""
    share_key: tuple[Any, ...] = ()
    """(target, dwords) when what the instruction does is independent of its address, so
    that one decoding and one bound step serve every copy of it in every code object
    (`rgpu_fuzz.sim.isa.code`, `rgpu_fuzz.sim.bound.program`); empty for branches, calls and
    `s_getpc`."""

    @property
    def text(self) -> str:
        """The instruction in LLVM syntax (traces, fault messages, `--show asm`)."""
        if self.rendered:
            return self.rendered
        key = self.share_key or self.origin
        if key:
            target, words = key
            return render(decode_at(words, 0, target, self.address))
        return self.mnemonic

    def at(self, address: int) -> Inst:
        """This instruction moved to `address` (a memoised decoding reused elsewhere);
        field by field, as `replace` re-runs `__init__` and this is the decoder's hot
        path."""
        if address == self.address:
            return self
        new = _copy(self)
        _SET_ADDRESS(new, address)
        if self.halves:
            _SET_HALVES(new, tuple(h.at(address) for h in self.halves))
        return new


    def relocated(self, address: int) -> Inst:
        """This address-bound instruction (`share_key` empty) as decoded at `address`: the
        same words, a branch target moved with it (SOPP: target = address + 4 + 4 *
        simm16, CDNA3 ISA §4.4)."""
        new = self.at(address)
        if new is not self and "target" in self.mods:
            # not interned: a branch's target is its own (interning kept every one alive)
            _SET_MODS(new, {**self.mods,
                            "target": self.mods["target"] + address - self.address})
        return new

    def branched(self, address: int, word: int) -> Inst:
        """This one-dword branch with its simm16 replaced by the low half of `word`, at
        `address` (`rgpu_fuzz.sim.isa.code.Branches`: what the decoder gives, found by
        decoding: the operand is simm16 as an immediate, the target `address` + 4 + 4 *
        sext(simm16), CDNA3 ISA §4.4 / RDNA3 ISA §4.5)."""
        simm = word & 0xFFFF
        new = _copy(self)
        _SET_ADDRESS(new, address)
        _SET_OPERANDS(new, (_immediate(simm),))
        _SET_MODS(new, {**self.mods,
                        "target": address + 4 + 4 * (simm - ((simm & 0x8000) << 1))})
        _SET_ORIGIN(new, (self.origin[0], (word,)))
        return new

    def with_literal(self, slot: int, words: tuple[int, ...], address: int) -> Inst:
        """This instruction at `address` with `words`, whose last dword is the literal
        that operand `slot` reads (`rgpu_fuzz.sim.isa.code.Literals`)."""
        op = self.operands[slot]
        ops = list(self.operands)
        ops[slot] = Opnd(OpKind.BITS, 0, op.count, words[-1], 0.0, op.neg, op.abs, True)
        new = _copy(self)
        _SET_ADDRESS(new, address)
        _SET_OPERANDS(new, tuple(ops))
        _SET_SHARE_KEY(new, (self.share_key[0], words))
        return new

    def with_offset(self, address: int, words: tuple[int, ...], offset: int) -> Inst:
        """This instruction at `address` with `words`, whose `offset` modifier is `offset`
        (`rgpu_fuzz.sim.isa.code.Offsets`)."""
        new = _copy(self)
        _SET_ADDRESS(new, address)
        _SET_MODS(new, _interned({**self.mods, "offset": offset}))
        _SET_SHARE_KEY(new, (self.share_key[0], words))
        return new

    def unshared(self, extra: Mapping[str, Any]) -> Inst:
        """This instruction made address-bound (no `share_key`: bound per program, never
        fused), with the modifiers `extra` added (`rgpu_fuzz.sim.bound.gpr_idx`: the same words
        mean something else inside a VGPR indexing region)."""
        new = _copy(self)
        _SET_MODS(new, {**self.mods, **extra})
        _SET_ORIGIN(new, self.share_key or self.origin)
        _SET_SHARE_KEY(new, ())
        return new

    def derived(self, address: int, operands: tuple[Opnd, ...],
                share_key: tuple[Any, ...]) -> Inst:
        """This instruction at `address` with other operands and words (`rgpu_fuzz.sim.
        vop3_memo`: a decoding composed from the operands of others)."""
        new = _copy(self)
        _SET_ADDRESS(new, address)
        _SET_OPERANDS(new, operands)
        _SET_SHARE_KEY(new, share_key)
        return new


def _unrolled(fn: str, value: Any, params: str | None = None) -> Any:
    """A function `fn(params)` (default: every field) that makes a new `Inst` and sets each
    field to the expression `value(name)`, one line per field through the slot's setter."""
    names = [f.name for f in dataclasses.fields(Inst)]
    body = "".join(f"    set_{name}(n, {value(name)})\n" for name in names)
    scope: dict[str, Any] = {}
    exec(f"def {fn}({params or ', '.join(names)}):\n    n = new(cls)\n{body}    return n\n",
         {**{f"set_{name}": _setter(name) for name in names}, "new": object.__new__,
          "cls": Inst}, scope)
    return scope[fn]


def _copier() -> Any:
    """A field-by-field copy of an `Inst`, unrolled (a loop over the field names costs
    twice as much on the scan's hot path), through each slot's own descriptor (half the
    cost of `object.__setattr__`, which looks the name up first)."""
    return _unrolled("copy", lambda name: f"i.{name}", "i")


def _setter(name: str) -> Any:
    """The setter of `Inst`'s slot `name` (its member descriptor's `__set__`)."""
    return Inst.__dict__[name].__set__


_copy = _copier()
_SET_ADDRESS, _SET_OPERANDS, _SET_MODS = _setter("address"), _setter("operands"), _setter("mods")
_SET_SHARE_KEY, _SET_ORIGIN, _SET_HALVES = (_setter("share_key"), _setter("origin"),
                                            _setter("halves"))

ADDRESS_BOUND = ("S_BRANCH", "S_CBRANCH", "S_SETPC", "S_SWAPPC", "S_GETPC", "S_CALL")
"""Opcode prefixes of instructions whose effect depends on their own address."""


# The scalar register file is indexed by the GFX9 operand encoding whatever the target
# (gfx11 swaps m0 and null in its encoding; the decoder names them, so storage stays fixed).
_SPECIAL_INDEX = {
    "VCC_LO": (OpKind.SGPR, 106), "VCC_HI": (OpKind.SGPR, 107),
    "EXEC_LO": (OpKind.SGPR, 126), "EXEC_HI": (OpKind.SGPR, 127),
    "M0": (OpKind.SGPR, 124), "NULL": (OpKind.SGPR, 125),
    "FLAT_SCRATCH_LO": (OpKind.SGPR, 102), "FLAT_SCRATCH_HI": (OpKind.SGPR, 103),
    "XNACK_MASK_LO": (OpKind.SGPR, 104), "XNACK_MASK_HI": (OpKind.SGPR, 105),
    "SCC": (OpKind.SGPR, 253), "SRC_SCC": (OpKind.SGPR, 253),
    "VCCZ": (OpKind.SGPR, 251), "SRC_VCCZ": (OpKind.SGPR, 251),
    "EXECZ": (OpKind.SGPR, 252), "SRC_EXECZ": (OpKind.SGPR, 252),
    "SRC_SHARED_BASE": (OpKind.SGPR, 235), "SRC_SHARED_LIMIT": (OpKind.SGPR, 236),
    "SRC_PRIVATE_BASE": (OpKind.SGPR, 237), "SRC_PRIVATE_LIMIT": (OpKind.SGPR, 238),
    "SRC_POPS_EXITING_WAVE_ID": (OpKind.SGPR, 239),
    "OFF": (OpKind.OFF, 0),
}
TTMP_BASE = 108


_OPERANDS: dict[Any, Any] = {}
_BY_ID: dict[int, tuple[Any, Any]] = {}
_MODS: dict[tuple[tuple[str, Any], ...], dict[str, Any]] = {}


def _operand(op: Any) -> Any:
    """The executor's operand for a decoder `Operand`, one object per distinct operand
    (interned: operands repeat across a campaign's instructions, and fewer long-lived
    objects make the garbage collector's full passes shorter). The decoder memoises its
    operands, so most arrive as an object seen before: looked up by identity first (the
    entry holds the object, so its id is not reused while there), by value (hashing all
    twelve fields) only when new."""
    hit = _BY_ID.get(id(op))
    if hit is not None and hit[0] is op:
        return hit[1]
    got = _OPERANDS.get(op)
    if got is None:
        if len(_OPERANDS) > 100_000:
            _OPERANDS.clear()
            _BY_ID.clear()
        got = _OPERANDS[op] = _make_operand(op)
    if len(_BY_ID) > 100_000:
        _BY_ID.clear()
    _BY_ID[id(op)] = (op, got)
    return got


def _make_operand(op: Any) -> Any:
    kind = op.kind.value
    if kind in ("sgpr", "vgpr", "agpr"):
        k = {"sgpr": OpKind.SGPR, "vgpr": OpKind.VGPR, "agpr": OpKind.AGPR}[kind]
        base = Opnd(k, op.index, op.count, neg=op.neg, abs=op.abs)
    elif kind == "ttmp":
        base = Opnd(OpKind.SGPR, TTMP_BASE + op.index, op.count)
    elif kind == "special":
        k, idx = _SPECIAL_INDEX.get(op.index.name, (OpKind.UNMODELLED, 0))
        base = Opnd(k, idx, op.count, neg=op.neg, abs=op.abs)
    elif kind in ("inline-int", "inline-float", "literal"):
        base = Opnd(OpKind.BITS, 0, op.count, value=op.value, neg=op.neg, abs=op.abs,
                    literal=kind == "literal")
    else:  # imm
        base = Opnd(OpKind.INT, 0, 1, value=op.value)
    sel, hi = getattr(op, "sel", ""), getattr(op, "hi", False)
    # the decoder's op_sel_hi is 1 unless a VOP3P instruction clears it: only then kept
    lo_hi, neg_hi = not getattr(op, "hi_hi", True), getattr(op, "neg_hi", False)
    return OperandX(base, sel, getattr(op, "sext", False), hi, lo_hi, neg_hi) \
        if (sel or hi or lo_hi or neg_hi) else base


@dataclass(frozen=True, slots=True)
class OperandX:
    """An operand with a sub-dword selection (SDWA `sel`/`sext`, op_sel `hi`; VOP3P's
    op_sel_hi clear, `lo_hi`: the high result reads the low half; neg_hi;
    `rgpu_fuzz.sim.bound.packed`)."""

    base: Opnd
    sel: str
    sext: bool
    hi: bool
    lo_hi: bool = False
    neg_hi: bool = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)


_IMMEDIATES: dict[int, Opnd] = {}


def _immediate(value: int) -> Opnd:
    """The immediate operand `value` (a 16-bit field), one object per value."""
    got = _IMMEDIATES.get(value)
    if got is None:
        got = _IMMEDIATES[value] = Opnd(OpKind.INT, 0, 1, value=value)
    return got


def _interned(modifiers: Mapping[str, Any]) -> dict[str, Any]:
    """One dict per distinct set of modifiers (they repeat across a campaign)."""
    items = tuple(modifiers.items())
    mods = _MODS.get(items)
    if mods is None:
        if len(_MODS) > 100_000:
            _MODS.clear()
        mods = _MODS[items] = dict(items)
    return mods


def from_decoded(decoded: Any, text: str = "") -> Inst:
    """The executor's view of one `rgpu_fuzz.sim.isa.Instruction`."""
    by_id = _BY_ID
    ops = []
    for o in (*decoded.defs, *decoded.uses):
        hit = by_id.get(id(o))
        ops.append(hit[1] if hit is not None and hit[0] is o else _operand(o))
    halves = tuple(from_decoded(h) for h in decoded.halves) if decoded.halves else ()
    mods = _interned(decoded.modifiers)
    words = decoded.words
    shared = not ("target" in mods or decoded.opcode.startswith(ADDRESS_BOUND)) and bool(words)
    key = (decoded.target, words) if shared else ()
    return _new_inst(decoded.address, decoded.size, decoded.opcode,
                     _ENCODING_NAMES[decoded.encoding], decoded.mnemonic, tuple(ops), mods,
                     text, halves, () if shared or not words else (decoded.target, words), key)


def _constructor() -> Any:
    """`Inst(...)` with every field given, set through each slot's own descriptor (the
    frozen dataclass's `__init__` goes through `object.__setattr__` per field: twice as
    slow on the decoder's path)."""
    return _unrolled("make", lambda name: name)


_new_inst = _constructor()
_ENCODING_NAMES = {e: e.value for e in Encoding}
"""An encoding's name (`Enum.value` is a descriptor call)."""
