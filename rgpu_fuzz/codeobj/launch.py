"""From a compiled relocatable object to what a dispatcher needs — shared by every executor
of code objects (the `hip` pipeline, the simulator, `inspect`):

* `load_kernel`: link with ld.lld, read, find the kernel, verify; each failure the Outcome it
  is (`CompileCrash` in stage `link` or `codeobj`), never an exception;
* `kernel_arguments`: the explicit kernarg values for a case, from the kernel ABI's flattened
  argument list (`rgpu_fuzz.model.kernel_abi`: slice → pointer + u64 length, scalar by value,
  the trap record's pointer last) — what the *harness* means to pass;
* `pack_launch`: those values packed by the metadata (`kernarg.pack_kernargs`); where the
  two disagree the result is `CompileCrash(stage="kernarg", signature="kernarg-mismatch")`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rgpu_fuzz.codeobj.errors import CodeObjectError
from rgpu_fuzz.codeobj.kernarg import (
    ArgValue,
    Dispatch,
    KernargMismatch,
    KernargSegment,
    pack_kernargs,
)
from rgpu_fuzz.codeobj.link import LinkFailure, link
from rgpu_fuzz.codeobj.reader import CodeObject, Kernel, read_code_object
from rgpu_fuzz.codeobj.verify import Violation, verify_code_object
from rgpu_fuzz.model.case import Launch
from rgpu_fuzz.model.kernel_abi import TRAP_PARAM, ArgRole, FlatArg
from rgpu_fuzz.model.outcome import CompileCrash

__all__ = ["LoadedKernel", "dispatch_of", "kernel_arguments", "load_code_object", "load_kernel",
           "pack_launch"]


@dataclass(frozen=True, slots=True)
class LoadedKernel:
    """A linked, read and verified code object and the kernel to launch from it."""

    hsaco: bytes
    code_object: CodeObject
    kernel: Kernel


def _violations_log(violations: Sequence[Violation]) -> str:
    return "\n".join(str(v) for v in violations)


def load_kernel(obj: bytes, kernel: str, *, ld_lld: str | None = None,
                verify: bool = True) -> LoadedKernel | CompileCrash:
    """Link `obj`, read the code object and check it; the kernel named `kernel`."""
    linked = link(obj, ld_lld=ld_lld)
    if isinstance(linked, LinkFailure):
        return CompileCrash(stage="link", signature=f"ld.lld {linked.ended_by}: "
                            f"{linked.first_line}"[:200], log=linked.log)
    return load_code_object(linked, kernel, verify=verify)


def load_code_object(hsaco: bytes, kernel: str, *,
                     verify: bool = True) -> LoadedKernel | CompileCrash:
    """`load_kernel` for an already linked code object (e.g. one a pipeline's
    `transform_code_object` hook returned)."""
    try:
        co = read_code_object(hsaco)
        k = co.kernel(kernel)
    except CodeObjectError as e:
        return CompileCrash(stage="codeobj", signature=f"codeobj-unreadable: {e}"[:200],
                            log=str(e))
    if verify and (violations := verify_code_object(co)):
        return CompileCrash(stage="codeobj", signature=violations[0].signature,
                            log=_violations_log(violations))
    return LoadedKernel(hsaco, co, k)


def _scalar_arg(arg: FlatArg, value: int) -> ArgValue:
    size = arg.scalar.bits_dtype.itemsize
    return ArgValue.integer(value, size, arg.name)


def kernel_arguments(flat_args: Sequence[FlatArg], words: Sequence[int],
                     trap_address: int) -> list[ArgValue]:
    """The explicit kernarg values: `words` are the flattened values
    (`ArgumentValues.words`, buffers as device addresses), then the trap record's address."""
    out: list[ArgValue] = []
    for arg, value in zip(flat_args, words, strict=True):
        match arg.role:
            case ArgRole.DATA:
                out.append(ArgValue.pointer(value, arg.name))
            case ArgRole.LEN:
                out.append(ArgValue.integer(value, 8, arg.name))
            case ArgRole.SCALAR:
                out.append(_scalar_arg(arg, value))
    out.append(ArgValue.pointer(trap_address, TRAP_PARAM))
    return out


def dispatch_of(launch: Launch) -> Dispatch:
    """A case's launch as a dispatch: grid in work-groups, block in work-items."""
    return Dispatch(launch.grid, launch.block)


def pack_launch(kernel: Kernel, args: Sequence[ArgValue], launch: Launch, *,
                hidden: Mapping[str, int] | None = None) -> KernargSegment | CompileCrash:
    """`args` packed into `kernel`'s kernarg segment for `launch`."""
    packed = pack_kernargs(kernel.metadata, args, dispatch_of(launch), hidden=hidden)
    if isinstance(packed, KernargMismatch):
        return CompileCrash(stage="kernarg", signature=packed.kind, log=packed.detail)
    return packed
