"""Modules, functions, blocks and global variables of `textir`, and llvmlite's naming rule
(`NameScope`); `str(module)` joins the lines the builder wrote."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rgpu_fuzz.lower.textir.types import Constant, FunctionType, PointerType, Type, Value


def local_ref(prefix: str, name: str) -> str:
    """How an operand refers to a named value: always quoted (llvmlite's way)."""
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
        self.ref = local_ref("%", self._name)

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
        self.ref = local_ref("%", name)
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
        self.ref = local_ref("@", name)
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


__all__ = ["Argument", "Block", "Function", "GlobalValue", "GlobalVariable", "Module",
           "NameScope", "local_ref"]
