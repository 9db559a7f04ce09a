"""From a compiled relocatable object to what a dispatcher needs — shared by every executor
of code objects (the `hip` pipeline, the simulator, `inspect`):

* `load_kernel`: link with ld.lld, read, find the kernel, verify; each failure the Outcome it
  is (`CompileCrash` in stage `link` or `codeobj`), never an exception;
* `kernel_arguments`: the explicit kernarg values for a case, from the kernel ABI's flattened
  argument list (`rgpu_fuzz.model.kernel_abi`: slice → pointer + u64 length, scalar by value,
  the trap record's pointer last) — what the *harness* means to pass;
* `pack_launch`: those values packed by the metadata (`kernarg.pack_kernargs`); where the
  two disagree the result is `CompileCrash(stage="kernarg", signature="kernarg-mismatch")`;
* `LaunchPlan`: a case's launch of a loaded kernel — buffers, then the kernarg segment once
  the executor has placed them (the `hip` runtime and the simulator's loader).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from rgpu_fuzz.codeobj.errors import CodeObjectError
from rgpu_fuzz.codeobj.kernarg import (
    ArgValue,
    Dispatch,
    KernargLayout,
    KernargMismatch,
    KernargSegment,
    kernarg_layout,
    pack_kernargs,
)
from rgpu_fuzz.codeobj.link import LinkFailure, link
from rgpu_fuzz.codeobj.reader import CodeObject, Kernel, read_code_object
from rgpu_fuzz.codeobj.verify import Violation, verify_code_object
from rgpu_fuzz.model.case import Case, Launch
from rgpu_fuzz.model.kernel_abi import (
    TRAP_PARAM,
    ArgRole,
    ArgumentValues,
    FlatArg,
    KernelParam,
    flatten,
)
from rgpu_fuzz.model.outcome import CompileCrash

__all__ = ["LaunchPlan", "LoadedKernel", "dispatch_of", "kernel_arguments", "load_code_object",
           "load_kernel", "load_kernels", "pack_launch"]


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
    return load_kernels(hsaco, (kernel,), verify=verify)[kernel]


def load_kernels(hsaco: bytes, kernels: Sequence[str], *,
                 verify: bool = True) -> dict[str, LoadedKernel | CompileCrash]:
    """`load_code_object` for several kernels of one code object (a batch's), read once.
    Each kernel is verified by the whole-object rules and its own
    (`verify_code_object(co, kernel)`), so a broken descriptor fails only its own launch."""
    try:
        co = read_code_object(hsaco)
    except CodeObjectError as e:
        unreadable = CompileCrash(stage="codeobj", signature=f"codeobj-unreadable: {e}"[:200],
                                  log=str(e))
        return dict.fromkeys(kernels, unreadable)
    out: dict[str, LoadedKernel | CompileCrash] = {}
    for name in kernels:
        try:
            k = co.kernel(name)
        except CodeObjectError as e:
            out[name] = CompileCrash(stage="codeobj", signature=f"codeobj-unreadable: {e}"[:200],
                                     log=str(e))
            continue
        if verify and (violations := verify_code_object(co, name)):
            out[name] = CompileCrash(stage="codeobj", signature=violations[0].signature,
                                     log=_violations_log(violations))
        else:
            out[name] = LoadedKernel(hsaco, co, k)
    return out


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


@dataclass(frozen=True)
class LaunchPlan:
    """Everything up to the runtime calls, computed without a GPU: the code object, the
    kernel, the launch shape, the buffers to allocate and their initial contents, and how to
    pack the kernarg segment once the buffers have device addresses."""

    loaded: LoadedKernel
    case: Case
    params: tuple[KernelParam, ...]
    values: ArgumentValues

    @classmethod
    def of(cls, case: Case, params: tuple[KernelParam, ...],
           loaded: LoadedKernel) -> LaunchPlan:
        return cls(loaded, case, params, ArgumentValues.of(case, params))

    @cached_property
    def flat_args(self) -> tuple[FlatArg, ...]:
        """`flatten(params)`, made once: `kernargs` runs at every launch of the plan."""
        return flatten(self.params)

    @property
    def kernel_name(self) -> str:
        return self.loaded.kernel.name

    @property
    def grid(self) -> tuple[int, int, int]:
        return self.case.launch.grid

    @property
    def block(self) -> tuple[int, int, int]:
        return self.case.launch.block

    def buffer_bytes(self) -> dict[str, int]:
        """Bytes to allocate per buffer (at least 1: a zero-length slice still gets a valid,
        distinct address)."""
        return {name: max(1, arr.nbytes) for name, arr in self.values.buffers.items()}

    def kernargs(self, address_of: Callable[[str], int],
                 trap_address: int) -> KernargSegment | CompileCrash:
        """The kernarg segment once buffer `name` lives at `address_of(name)`."""
        words = self.values.words(address_of)
        packing = self._packing
        if packing is None:
            args = kernel_arguments(self.flat_args, words, trap_address)
            return pack_launch(self.loaded.kernel, args, self.case.launch)
        layout, sizes = packing
        return layout.pack([(w % (1 << 8 * n)).to_bytes(n, "little")
                            for w, n in zip([*words, trap_address], sizes, strict=True)])

    @cached_property
    def _packing(self) -> tuple[KernargLayout, tuple[int, ...]] | None:
        """What `kernargs` needs to pack without making an `ArgValue` per argument (~1 us
        each, and a kernel may take dozens): the metadata's layout for the launch and each
        explicit argument's size. The arguments `kernel_arguments` makes have value kinds
        and sizes that do not depend on the values, and each one's bytes are its word
        modulo 2**(8 * size), little-endian (`ArgValue.pointer`, `.integer`). None where
        they do not fit the metadata: `pack_launch` says how."""
        args = kernel_arguments(self.flat_args, [0] * len(self.flat_args), 0)
        layout = kernarg_layout(self.loaded.kernel.metadata, dispatch_of(self.case.launch))
        if layout is None or not layout.fits(args):
            return None
        return layout, tuple(len(a.data) for a in args)

    def __getstate__(self) -> dict[str, object]:
        """The fields and `flat_args`, without `_packing` (made again after unpickling: a
        `bench sim` baseline tree reads these pickles with its own `codeobj`)."""
        return {k: v for k, v in self.__dict__.items() if k != "_packing"}
