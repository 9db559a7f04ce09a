"""Jobs for test_worker_recycle: a worker that grows, and LLVM running out of memory."""

from __future__ import annotations

import os

_held: list[bytearray] = []

COPY_ELEMENTS = 60_000
"""A `[60000 x i32]` aggregate load and store: SelectionDAG splits it into 60,000 loads and
stores (one node each), ~150 MiB at -O0 on x86-64 (measured: peak RSS 330 MB with llvmlite
imported, 175 MiB of address space before the job)."""


def pid_after_holding(mib: int) -> tuple[int, int]:
    """Keep `mib` MiB alive in this worker (a leak) and say which process holds it."""
    if mib:
        block = bytearray(mib << 20)
        block[::4096] = b"\1" * len(block[::4096])  # touch every page
        _held.append(block)
    return os.getpid(), sum(len(b) for b in _held) >> 20


def allocate_mib(mib: int) -> int:
    """Allocate and drop `mib` MiB: fits a fresh worker, not one that holds a lot."""
    return len(bytearray(mib << 20)) >> 20


def llvm_big_copy(_: object) -> int:
    """Code generation of one function copying a `[COPY_ELEMENTS x i32]` value: under a
    320 MiB address-space limit LLVM itself runs out (`LLVM ERROR: out of memory` or
    `std::bad_alloc`, then abort)."""
    import llvmlite.binding as llvm

    n = COPY_ELEMENTS
    module = llvm.parse_assembly(
        f"define void @f(ptr %p, ptr %q) {{\n  %a = load [{n} x i32], ptr %p\n"
        f"  store [{n} x i32] %a, ptr %q\n  ret void\n}}\n")
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    machine = llvm.Target.from_default_triple().create_target_machine(opt=0)
    return len(machine.emit_object(module))
