"""Types and constants of `textir`: a type is its IR text (`i32`, `ptr addrspace(3)`,
`[4 x i8]`); a value is its type and the text an operand refers to it by."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Self


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


class _Unique(Type):
    """A type without parameters (`float`, `double`, `void`): one instance per class, so
    `is` comparisons in the builder hold as they do for the cached parameterised types."""

    __slots__ = ()
    _text: ClassVar[str]
    _ones: ClassVar[dict[type, Type]] = {}

    def __new__(cls) -> Self:
        one = _Unique._ones.get(cls)
        if one is None:
            one = object.__new__(cls)
            one._s = cls._text
            _Unique._ones[cls] = one
        return one  # type: ignore[return-value]


class HalfType(_Unique):
    __slots__ = ()
    null = "0.0"
    _text = "half"


class FloatType(_Unique):
    __slots__ = ()
    null = "0.0"
    _text = "float"


class DoubleType(_Unique):
    __slots__ = ()
    null = "0.0"
    _text = "double"


class VoidType(_Unique):
    __slots__ = ()
    _text = "void"


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


__all__ = ["ArrayType", "Constant", "DoubleType", "FloatType", "FormattedConstant",
           "FunctionType", "HalfType", "IntType", "LiteralStructType", "PointerType", "Type",
           "Undefined", "Value", "VoidType"]
