"""`textir`'s `IRBuilder`: each method writes its instruction's line at once."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from rgpu_fuzz.lower.textir.module import Block, Function, local_ref
from rgpu_fuzz.lower.textir.types import (
    IntType,
    LiteralStructType,
    PointerType,
    Type,
    Value,
    VoidType,
)

_I1 = IntType(1)
_VOID = VoidType()

_CMP = {">": "gt", "<": "lt", "==": "eq", "!=": "ne", ">=": "ge", "<=": "le"}
_ICMP_S = {k: ("" if k in ("==", "!=") else "s") + v for k, v in _CMP.items()}
_ICMP_U = {k: ("" if k in ("==", "!=") else "u") + v for k, v in _CMP.items()}
_FCMP_O = {k: "o" + v for k, v in _CMP.items()}
_FCMP_U = {k: "u" + v for k, v in _CMP.items()}


class IRBuilder:
    """Appends instruction lines to a block (or inserts them at a position). Each method
    registers its value's name exactly when llvmlite's would, then writes the line llvmlite's
    `str()` of that instruction gives."""

    __slots__ = ("_at", "_block", "_lines", "_scope")

    def __init__(self, block: Block | None = None) -> None:
        self._block: Block | None = None
        self._at: int | None = None  # None: at the end of the block
        if block is not None:
            self.position_at_end(block)

    @property
    def block(self) -> Block:
        assert self._block is not None
        return self._block

    def position_at_end(self, block: Block) -> None:
        self._block, self._at = block, None
        self._lines, self._scope = block.lines, block.function.scope

    def position_at_start(self, block: Block) -> None:
        self.position_at_end(block)
        self._at = 0

    @contextmanager
    def goto_entry_block(self) -> Iterator[None]:
        """At the end of the entry block (before its terminator, if it has one), then back
        at the end of the current block."""
        old = self.block
        entry = old.function.blocks[0]
        self.position_at_end(entry)
        if entry.terminated:
            self._at = len(entry.lines) - 1
        try:
            yield
        finally:
            self.position_at_end(old)

    # ---- emission
    def _emit(self, line: str) -> None:
        if self._at is None:
            self._lines.append(line)
        else:
            self._lines.insert(self._at, line)
            self._at += 1

    def _value(self, typ: Type, text: str, name: str = "") -> Value:
        ref = local_ref("%", self._scope.register(name))
        self._emit(f"{ref} = {text}")
        return Value(typ, ref)

    def _void(self, text: str) -> None:
        self._scope.register("")
        self._emit(text)

    def _terminate(self, text: str) -> None:
        assert not self.block.terminated
        self._void(text)
        self.block.terminated = True

    def _binop(self, op: str, a: Value, c: Value) -> Value:
        if a.type is not c.type and a.type != c.type:
            raise ValueError(f"Operands must be the same type, got ({a.type}, {c.type})")
        return self._value(a.type, f"{op} {a.type} {a.ref}, {c.ref}")

    def _cast(self, op: str, v: Value, typ: Type) -> Value:
        if v.type is typ or v.type == typ:
            return v
        return self._value(typ, f"{op} {v.type} {v.ref} to {typ}")

    # ---- arithmetic
    def add(self, a: Value, c: Value) -> Value:
        return self._binop("add", a, c)

    def sub(self, a: Value, c: Value) -> Value:
        return self._binop("sub", a, c)

    def mul(self, a: Value, c: Value) -> Value:
        return self._binop("mul", a, c)

    def udiv(self, a: Value, c: Value) -> Value:
        return self._binop("udiv", a, c)

    def sdiv(self, a: Value, c: Value) -> Value:
        return self._binop("sdiv", a, c)

    def urem(self, a: Value, c: Value) -> Value:
        return self._binop("urem", a, c)

    def srem(self, a: Value, c: Value) -> Value:
        return self._binop("srem", a, c)

    def and_(self, a: Value, c: Value) -> Value:
        return self._binop("and", a, c)

    def or_(self, a: Value, c: Value) -> Value:
        return self._binop("or", a, c)

    def xor(self, a: Value, c: Value) -> Value:
        return self._binop("xor", a, c)

    def shl(self, a: Value, c: Value) -> Value:
        return self._binop("shl", a, c)

    def lshr(self, a: Value, c: Value) -> Value:
        return self._binop("lshr", a, c)

    def ashr(self, a: Value, c: Value) -> Value:
        return self._binop("ashr", a, c)

    def fadd(self, a: Value, c: Value) -> Value:
        return self._binop("fadd", a, c)

    def fsub(self, a: Value, c: Value) -> Value:
        return self._binop("fsub", a, c)

    def fmul(self, a: Value, c: Value) -> Value:
        return self._binop("fmul", a, c)

    def fdiv(self, a: Value, c: Value) -> Value:
        return self._binop("fdiv", a, c)

    def frem(self, a: Value, c: Value) -> Value:
        return self._binop("frem", a, c)

    def fneg(self, a: Value) -> Value:
        return self._value(a.type, f"fneg {a.type} {a.ref}")

    # ---- comparisons and select
    def _cmp(self, kind: str, pred: str, a: Value, c: Value) -> Value:
        return self._value(_I1, f"{kind} {pred} {a.type} {a.ref}, {c.ref}")

    def icmp_signed(self, op: str, a: Value, c: Value) -> Value:
        return self._cmp("icmp", _ICMP_S[op], a, c)

    def icmp_unsigned(self, op: str, a: Value, c: Value) -> Value:
        return self._cmp("icmp", _ICMP_U[op], a, c)

    def fcmp_ordered(self, op: str, a: Value, c: Value) -> Value:
        return self._cmp("fcmp", _FCMP_O.get(op, op), a, c)

    def fcmp_unordered(self, op: str, a: Value, c: Value) -> Value:
        return self._cmp("fcmp", _FCMP_U.get(op, op), a, c)

    def select(self, cond: Value, a: Value, c: Value) -> Value:
        # two spaces: llvmlite writes the (empty) fast-math flags between them
        return self._value(a.type, f"select  {cond.type} {cond.ref}, {a.type} {a.ref}, "
                                   f"{c.type} {c.ref}")

    # ---- casts
    def trunc(self, v: Value, typ: Type) -> Value:
        return self._cast("trunc", v, typ)

    def zext(self, v: Value, typ: Type) -> Value:
        return self._cast("zext", v, typ)

    def sext(self, v: Value, typ: Type) -> Value:
        return self._cast("sext", v, typ)

    def fptrunc(self, v: Value, typ: Type) -> Value:
        return self._cast("fptrunc", v, typ)

    def fpext(self, v: Value, typ: Type) -> Value:
        return self._cast("fpext", v, typ)

    def bitcast(self, v: Value, typ: Type) -> Value:
        return self._cast("bitcast", v, typ)

    def sitofp(self, v: Value, typ: Type) -> Value:
        return self._cast("sitofp", v, typ)

    def uitofp(self, v: Value, typ: Type) -> Value:
        return self._cast("uitofp", v, typ)

    # ---- memory
    def alloca(self, typ: Type, name: str = "", addrspace: int = 0) -> Value:
        """`alloca T[, addrspace(N)]`, typed as the opaque pointer of that space."""
        text = f"alloca {typ}, addrspace({addrspace})" if addrspace else f"alloca {typ}"
        return self._value(PointerType(addrspace), text, name)

    def load(self, ptr: Value, typ: Type) -> Value:
        return self._value(typ, f"load {typ}, {ptr.type} {ptr.ref}")

    def store(self, value: Value, ptr: Value) -> None:
        self._void(f"store {value.type} {value.ref}, {ptr.type} {ptr.ref}")

    def gep(self, ptr: Value, indices: Sequence[Value], source_etype: Type) -> Value:
        idx = ", ".join(f"{i.type} {i.ref}" for i in indices)
        return self._value(ptr.type, f"getelementptr {source_etype}, {ptr.type} {ptr.ref}, "
                                     f"{idx}")

    def fence(self, ordering: str, targetscope: str | None = None) -> None:
        scope = "" if targetscope is None else f'syncscope("{targetscope}") '
        self._void(f"fence {scope}{ordering}")

    def cmpxchg(self, ptr: Value, cmp: Value, val: Value, ordering: str,
                failordering: str | None = None) -> Value:
        fail = ordering if failordering is None else failordering
        return self._value(LiteralStructType([val.type, _I1]),
                           f"cmpxchg {ptr.type} {ptr.ref}, {cmp.type} {cmp.ref}, "
                           f"{cmp.type} {val.ref} {ordering} {fail}")

    def extract_value(self, agg: Value, index: int) -> Value:
        return self._value(agg.type.elements[index],
                           f"extractvalue {agg.type} {agg.ref}, {index}")

    # ---- calls and control flow
    def call(self, fn: Function, args: Sequence[Value]) -> Value:
        fnty = fn.ftype
        if len(args) != len(fnty.args):
            raise TypeError(f"{fn.name}: {len(args)} arguments for {len(fnty.args)}")
        for i, (a, want) in enumerate(zip(args, fnty.args, strict=True)):
            if a.type is not want and a.type != want:
                raise TypeError(f"Type of #{i + 1} arg mismatch: {want} != {a.type}")
        ret = fnty.return_type
        cconv = f"{fn.calling_convention} " if fn.calling_convention else ""
        text = (f"call {cconv}{ret} {fn.ref}("
                + ", ".join(f"{a.type} {a.ref}" for a in args) + ")")
        if ret is _VOID:
            self._void(text)
            return Value(ret, "")
        return self._value(ret, text)

    def branch(self, target: Block) -> None:
        self._terminate(f"br label {target.ref}")

    def cbranch(self, cond: Value, truebr: Block, falsebr: Block) -> None:
        self._terminate(f"br {cond.type} {cond.ref}, label {truebr.ref}, label {falsebr.ref}")

    def ret_void(self) -> None:
        self._terminate("ret void")

    def ret(self, value: Value) -> None:
        self._terminate(f"ret {value.type} {value.ref}")

    def unreachable(self) -> None:
        self._terminate("unreachable")


__all__ = ["IRBuilder"]
