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

Implemented: integer, half, float, double, void, opaque pointer (with address space), array,
function and literal struct types; integer/float/null/undef constants and preformatted ones;
modules with functions, global variables and named metadata of constants and strings;
function and argument attributes; and the builder operations in `IRBuilder`. Anything else
is absent on purpose (an AttributeError, not different text).
"""

from rgpu_fuzz.lower.textir.builder import IRBuilder
from rgpu_fuzz.lower.textir.module import Block, Function, GlobalVariable, Module, NameScope
from rgpu_fuzz.lower.textir.types import (
    ArrayType,
    Constant,
    DoubleType,
    FloatType,
    FormattedConstant,
    FunctionType,
    HalfType,
    IntType,
    LiteralStructType,
    PointerType,
    Type,
    Undefined,
    Value,
    VoidType,
)

__all__ = ["ArrayType", "Block", "Constant", "DoubleType", "FloatType", "FormattedConstant",
           "Function", "FunctionType", "GlobalVariable", "HalfType", "IRBuilder", "IntType",
           "LiteralStructType", "Module", "NameScope", "PointerType", "Type", "Undefined",
           "Value", "VoidType"]
