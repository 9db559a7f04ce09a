"""Which IR builder the lowering writes with: `textir` (LLVM IR text written as it is built,
the default) or llvmlite's object builder `llvmlite.ir` (`RGPU_LOWER_IR=llvmlite`).

Both give the same text byte for byte (`tests/unit/test_textir.py`); llvmlite's is kept so
that this can be checked and measured (`rgpu-fuzz bench campaign --baseline-env
RGPU_LOWER_IR=llvmlite`). The choice is made once per process, at import.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

CHOICES = ("text", "llvmlite")
BACKEND = os.environ.get("RGPU_LOWER_IR") or "text"
if BACKEND not in CHOICES:  # read while the CLI builds its parser: no handler is in place yet
    print(f"rgpu-fuzz: error: RGPU_LOWER_IR={BACKEND}: expected one of {', '.join(CHOICES)}",
          file=sys.stderr)
    raise SystemExit(2)

if TYPE_CHECKING:
    # llvmlite ships no types, so mypy reads `ir.*` as Any, as it did before `textir`: the
    # lowering's `Value | None` results are not checked against textir's signatures
    import llvmlite.ir as ir
elif BACKEND == "text":
    from rgpu_fuzz.lower import textir as ir
else:
    import llvmlite.ir as ir


def private_alloca(b: ir.IRBuilder, t: ir.Type, name: str, addrspace: int) -> ir.Value:
    """An alloca of `t` at the builder's position, in `addrspace`, typed as opaque ptr
    (`alloca T, addrspace(N)`: amdgcn's allocas live in 5, AMDGPUUsage "Address Spaces")."""
    if BACKEND == "text":
        return b.alloca(t, name, addrspace)
    instr = _llvmlite_alloca(b.block, t, name, addrspace)
    b._insert(instr)
    return instr  # type: ignore[no-any-return]


def _llvmlite_alloca(block: Any, t: Any, name: str, addrspace: int) -> Any:
    """llvmlite's builder writes no address space on an alloca: a subclass that does."""

    class AddrspaceAlloca(ir.instructions.AllocaInstr):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__(block, t, None, name)
            self.addrspace = addrspace
            self.type = ir.PointerType(addrspace=addrspace)  # opaque, not llvmlite's `T*`

        def descr(self, buf: list[str]) -> None:
            super().descr(buf)
            if self.addrspace:
                buf.append(f", addrspace({self.addrspace})")

    return AddrspaceAlloca()


__all__ = ["BACKEND", "ir", "private_alloca"]
