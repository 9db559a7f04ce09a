"""LLVM IR written as text while it is built: the part of `llvmlite.ir`'s API the lowering uses.

Why: llvmlite's IR builder makes an object per instruction (name registration, operand lists,
metadata dicts) and prints the module by formatting every object again; that cost ~9 ms median
per case, once per case and pipeline. Here every builder call formats its one line at once
and a module's text is the join of those lines.

What LLVM sees does not change: `str(module)` is byte for byte what `str(module)` of the same
calls on `llvmlite.ir` 0.50 gives (`tests/unit/test_textir.py` on kernels, the corpus and
generated cases, for every target), including llvmlite's value names: a value or block
without a name takes the next `.N` of its function's scope, void instructions included, and
an asked-for name already used becomes `name.N` (`llvmlite.ir._utils.NameScope`); every
value reference is quoted (`%"x"`), a label is quoted only when it is not a simple
identifier (LangRef "Identifiers").

Implemented: integer, float, double, void, opaque pointer (with address space), array,
function and literal struct types; integer/float/null/undef constants and preformatted ones;
modules with functions, global variables and named metadata of constants and strings;
function and argument attributes; and the builder operations in `IRBuilder`. Anything else
is absent on purpose (an AttributeError, not different text).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

# ---------------------------------------------------------------------------------- types


class Type:
    """A type is its text; two types are equal when their text is."""

    __slots__ = ("_s",)
    null: ClassVar[str] = "zeroinitializer"
    _s: str

    def __str__(self) -> str:
        return self._s

    def __repr__(self) -> str:
        return f"<textir type {self._s}>"

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Type) and other._s == self._s)

    def __hash__(self) -> int:
        return hash(self._s)

    def get_abi_size(self, target_data: Any) -> int:
        """Bytes of this type under `target_data`, as LLVM says (llvmlite asks the same way:
        a module declaring one global of the type, parsed)."""
        import llvmlite.binding as llvm

        with llvm.parse_assembly(f'@"foo" = external global {self._s}') as m:
            return int(target_data.get_abi_size(m.get_global_variable("foo").global_value_type))


class IntType(Type):
    __slots__ = ("width",)
    null = "0"
    width: int
    _cache: ClassVar[dict[int, IntType]] = {}

    def __new__(cls, bits: int) -> IntType:
        got = cls._cache.get(bits)
        if got is None:
            got = object.__new__(cls)
            got.width, got._s = bits, f"i{bits}"
            cls._cache[bits] = got
        return got


class FloatType(Type):
    __slots__ = ()
    null = "0.0"
    _one: ClassVar[FloatType | None] = None

    def __new__(cls) -> FloatType:
        if cls._one is None:
            cls._one = object.__new__(cls)
            cls._one._s = "float"
        return cls._one


class DoubleType(Type):
    __slots__ = ()
    null = "0.0"
    _one: ClassVar[DoubleType | None] = None

    def __new__(cls) -> DoubleType:
        if cls._one is None:
            cls._one = object.__new__(cls)
            cls._one._s = "double"
        return cls._one


class VoidType(Type):
    __slots__ = ()
    _one: ClassVar[VoidType | None] = None

    def __new__(cls) -> VoidType:
        if cls._one is None:
            cls._one = object.__new__(cls)
            cls._one._s = "void"
        return cls._one


class PointerType(Type):
    """An opaque pointer (`ptr`, `ptr addrspace(N)`)."""

    __slots__ = ("addrspace",)
    null = "null"
    addrspace: int
    _cache: ClassVar[dict[int, PointerType]] = {}

    def __new__(cls, addrspace: int = 0) -> PointerType:
        got = cls._cache.get(addrspace)
        if got is None:
            got = object.__new__(cls)
            got.addrspace = addrspace
            got._s = f"ptr addrspace({addrspace})" if addrspace else "ptr"
            cls._cache[addrspace] = got
        return got


class ArrayType(Type):
    __slots__ = ("count", "element")

    def __init__(self, element: Type, count: int) -> None:
        self.element, self.count = element, count
        self._s = f"[{count} x {element}]"


class LiteralStructType(Type):
    __slots__ = ("elements",)

    def __init__(self, elements: Sequence[Type]) -> None:
        self.elements = tuple(elements)
        self._s = "{" + ", ".join(str(e) for e in self.elements) + "}"


class FunctionType(Type):
    __slots__ = ("args", "return_type")

    def __init__(self, return_type: Type, args: Sequence[Type]) -> None:
        self.return_type, self.args = return_type, tuple(args)
        self._s = f"{return_type} ({', '.join(str(a) for a in self.args)})"


_I1 = IntType(1)
_VOID = VoidType()

# ---------------------------------------------------------------------------------- values


class _UndefinedType:
    __slots__ = ()


Undefined = _UndefinedType()
"""The `undef` constant's value (`Constant(t, Undefined)`)."""


class Value:
    """A typed value and how an operand refers to it (`%"x"`, `@"f"`, `42`)."""

    __slots__ = ("ref", "type")
    type: Any  # a `Type`; Any so that callers may read a subclass's fields (`addrspace`)
    ref: str

    def __init__(self, typ: Type, ref: str) -> None:
        self.type, self.ref = typ, ref

    def get_reference(self) -> str:
        return self.ref

    def __str__(self) -> str:
        return f"{self.type} {self.ref}"


class Constant(Value):
    __slots__ = ()

    def __init__(self, typ: Type, constant: object) -> None:
        if constant is None:
            ref = typ.null
        elif constant is Undefined:
            ref = "undef"
        elif isinstance(constant, bool):
            ref = "true" if constant else "false"
        elif isinstance(constant, int):
            ref = str(constant)
        else:
            raise TypeError(f"textir: no constant of {typ} from {constant!r}")
        self.type, self.ref = typ, ref


class FormattedConstant(Constant):
    """A constant already written as IR text (a float's hex, for one)."""

    __slots__ = ()

    def __init__(self, typ: Type, constant: str) -> None:
        self.type, self.ref = typ, constant


def _local_ref(prefix: str, name: str) -> str:
    if "\\" in name or '"' in name:
        name = name.replace("\\", "\\5c").replace('"', "\\22")
    return f'{prefix}"{name}"'


class NameScope:
    """The names used in one function: llvmlite's rule, so the same calls give the same
    names (an unnamed value is `.N`, a used name gets `.N` appended, N counted per base)."""

    __slots__ = ("_bases", "_used")

    def __init__(self) -> None:
        self._used = {""}
        self._bases: dict[str, int] = {}

    def register(self, name: str) -> str:
        used = self._used
        if name in used:
            base = name
            n = self._bases.get(base, 0) + 1
            name = f"{base}.{n}"
            while name in used:
                n += 1
                name = f"{base}.{n}"
            self._bases[base] = n
        used.add(name)
        return name


class Argument(Value):
    __slots__ = ("_name", "attributes", "function")

    def __init__(self, function: Function, typ: Type) -> None:
        self.function = function
        self.type = typ
        self.attributes: set[str] = set()
        self.name = ""

    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, name: str) -> None:
        self._name = self.function.scope.register(name)
        self.ref = _local_ref("%", self._name)

    def add_attribute(self, attr: str) -> None:
        self.attributes.add(attr)

    def __str__(self) -> str:
        if self.attributes:
            return f"{self.type} {' '.join(sorted(self.attributes))} {self.ref}"
        return f"{self.type} {self.ref}"


_SIMPLE_IDENTIFIER = re.compile(r"[-a-zA-Z$._][-a-zA-Z$._0-9]*$")


class Block(Value):
    """A basic block: its label and its instructions' lines (terminator last)."""

    __slots__ = ("function", "label", "lines", "name", "terminated")
    lines: list[str]

    def __init__(self, function: Function, name: str) -> None:
        self.function = function
        self.name = name = function.scope.register(name)
        self.type = _LABEL
        self.ref = _local_ref("%", name)
        if _SIMPLE_IDENTIFIER.match(name):
            self.label = name
        else:
            self.label = '"' + name.replace("\\", "\\5c").replace('"', "\\22") + '"'
        self.lines = []
        self.terminated = False

    @property
    def is_terminated(self) -> bool:
        return self.terminated

    @property
    def instructions(self) -> list[str]:
        return self.lines


class _LabelType(Type):
    __slots__ = ()

    def __init__(self) -> None:
        self._s = "label"


_LABEL = _LabelType()


class GlobalValue(Value):
    __slots__ = ("linkage", "module", "name")

    def __init__(self, module: Module, typ: Type, name: str) -> None:
        self.module, self.name, self.type = module, name, typ
        self.ref = _local_ref("@", name)
        self.linkage = ""
        module._add(self)

    def text(self) -> str:
        raise NotImplementedError


class Function(GlobalValue):
    __slots__ = ("args", "attributes", "blocks", "calling_convention", "ftype", "scope")

    def __init__(self, module: Module, ftype: FunctionType, name: str) -> None:
        super().__init__(module, PointerType(), name)
        self.ftype = ftype
        self.scope = NameScope()
        self.blocks: list[Block] = []
        self.attributes: set[str] = set()
        self.args = tuple(Argument(self, t) for t in ftype.args)
        self.scope.register("")  # llvmlite names the return value too (`ReturnValue`)
        self.calling_convention = ""

    @property
    def function_type(self) -> FunctionType:
        return self.ftype

    def append_basic_block(self, name: str = "") -> Block:
        block = Block(self, name)
        self.blocks.append(block)
        return block

    def text(self) -> str:
        prefix = " ".join(x for x in ("define" if self.blocks else "declare", self.linkage,
                                      self.calling_convention, str(self.ftype.return_type))
                          if x)
        attrs = " " + " ".join(sorted(self.attributes)) if self.attributes else ""
        head = f"{prefix} {self.ref}({', '.join(str(a) for a in self.args)}){attrs}\n"
        if not self.blocks:
            return head
        parts = [head, "{\n"]
        for block in self.blocks:
            parts.append(block.label + ":\n")
            if block.lines:
                parts.append("  " + "\n  ".join(block.lines) + "\n")
        parts.append("}\n")
        return "".join(parts)


class GlobalVariable(GlobalValue):
    __slots__ = ("addrspace", "align", "global_constant", "initializer", "value_type")

    def __init__(self, module: Module, typ: Type, name: str, addrspace: int = 0) -> None:
        super().__init__(module, PointerType(addrspace), name)
        self.value_type = typ
        self.addrspace = addrspace
        self.initializer: Constant | None = None
        self.align: int | None = None
        self.global_constant = False

    def text(self) -> str:
        linkage = self.linkage or ("external" if self.initializer is None else "")
        out = [f"{self.ref} = "]
        if linkage:
            out.append(linkage + " ")
        if self.addrspace:
            out.append(f"addrspace({self.addrspace:d}) ")
        out.append(f"{'constant' if self.global_constant else 'global'} {self.value_type}")
        if self.initializer is not None:
            if self.initializer.type != self.value_type:
                raise TypeError(f"initializer of type {self.initializer.type} for a global "
                                f"of type {self.value_type}")
            out.append(" " + self.initializer.ref)
        elif linkage not in ("external", "extern_weak"):
            out.append(" undef")
        if self.align is not None:
            out.append(f", align {self.align:d}")
        return "".join(out)


_MD_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                      b" !#$%&'()*+,-./:;<=>?@[]^_`{|}~")


def _md_string(s: str) -> str:
    return '!"' + "".join(chr(c) if c in _MD_CHARS else f"\\{c:02x}"
                          for c in s.encode()) + '"'


class Module:
    """Globals in the order they were made, then named and numbered metadata."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.triple = "unknown-unknown-unknown"
        self.data_layout = ""
        self.globals: dict[str, GlobalValue] = {}
        self._named_md: dict[str, list[str]] = {}
        self._md_nodes: dict[str, int] = {}

    def _add(self, value: GlobalValue) -> None:
        if value.name in self.globals:
            raise NameError(f"duplicate global name {value.name!r}")
        self.globals[value.name] = value

    @property
    def functions(self) -> list[Function]:
        return [v for v in self.globals.values() if isinstance(v, Function)]

    def add_named_metadata(self, name: str, element: Sequence[object]) -> None:
        """Append the node `!{ element... }` (constants and strings) to `!name`."""
        ops = []
        for op in element:
            if isinstance(op, str):
                ops.append(_md_string(op))
            elif isinstance(op, Constant):
                ops.append(str(op))
            else:
                raise TypeError(f"textir: metadata operand {op!r}")
        node = "!{ " + ", ".join(ops) + " }"
        number = self._md_nodes.setdefault(node, len(self._md_nodes))
        self._named_md.setdefault(name, []).append(f"!{number}")

    def __str__(self) -> str:
        lines = [f'; ModuleID = "{self.name}"', f'target triple = "{self.triple}"',
                 f'target datalayout = "{self.data_layout}"', ""]
        lines += [g.text() for g in self.globals.values()]
        lines += [f"!{name} = !{{ {', '.join(refs)} }}" for name, refs in self._named_md.items()]
        lines += [f"!{n} = {node}" for node, n in self._md_nodes.items()]
        return "\n".join(lines)

    __repr__ = __str__


# ---------------------------------------------------------------------------------- builder

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
        ref = _local_ref("%", self._scope.register(name))
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


__all__ = ["ArrayType", "Block", "Constant", "DoubleType", "FloatType", "FormattedConstant",
           "Function", "FunctionType", "GlobalVariable", "IRBuilder", "IntType",
           "LiteralStructType", "Module", "PointerType", "Type", "Undefined", "Value",
           "VoidType"]
