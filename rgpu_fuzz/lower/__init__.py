"""AST → LLVM IR, target hooks kept apart (docs/design.md §1, §3). The IR is written as text while
it is built (`textir`: the part of llvmlite.ir's builder API the lowering uses, printing what
llvmlite prints); `RGPU_LOWER_IR=llvmlite` builds it with llvmlite.ir instead (`irapi`).

`lower_module(checked, entry, target)` gives a `LoweredKernel`: the IR text of a fresh module
(llvmlite mutates modules during code generation, so callers parse this text anew for every
emission) plus what a host needs to call it.
"""

from rgpu_fuzz.lower.amdgcn import AmdgcnTarget
from rgpu_fuzz.lower.context import TRAP_CODES, LowerError
from rgpu_fuzz.lower.kernel import LoweredKernel, lower_module
from rgpu_fuzz.lower.targets import HostTarget, TargetHooks

__all__ = ["TRAP_CODES", "AmdgcnTarget", "HostTarget", "LowerError", "LoweredKernel",
           "TargetHooks", "lower_module"]
