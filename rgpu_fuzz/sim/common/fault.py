"""What the simulator reports about the code it runs, besides outputs ("Honest
checks"): each is a value handed back to the pipeline, never an exception that escapes."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class FaultKind(StrEnum):
    OOB_ACCESS = "sim-oob-access"
    """An access outside every mapping of the address space, or outside the LDS or the
    private segment (hardware would fault, or silently drop the access)."""
    UNINIT_READ = "sim-uninit-read"
    """A value derived from a register nothing wrote reached an observable point: an address,
    a branch condition, EXEC, or data stored to global or LDS memory."""
    WAITCNT_HAZARD = "sim-waitcnt-hazard"
    """A load's destination was read (or overwritten) before the `s_waitcnt` that covers it."""
    WAVE64_SGPR_OVERLAP = "sim-wave64-sgpr-overlap"
    """RDNA in wave64: a VALU instruction whose first pass (lanes 0-31) writes an SGPR its
    second pass (lanes 32-63, some enabled) reads, which the ISA calls unpredictable
    (RDNA3 ISA §7.2.3.2; `bound.wave64`)."""
    UNSUPPORTED = "unsupported-instruction"
    """An instruction the simulator does not implement: `unsupported-instruction:<mnemonic>`."""
    STEP_LIMIT = "sim-step-limit"
    """The launch ran past its wave-instruction budget (a hang in the code, most likely)."""
    BARRIER_DEADLOCK = "sim-barrier-deadlock"
    """No wave of a workgroup can go on. A guard only: when every wave that has not ended
    waits at `s_barrier`, the engine releases the barrier, as hardware does (a wave that
    has ended no longer counts toward it), so no launch the engine runs reports it."""
    INTERNAL = "sim-internal-error"
    """The simulator itself failed on this instruction (a bug of the simulator, reported as
    its finding so a campaign goes on)."""
    KERNARG_MISMATCH = "kernarg-mismatch"
    """The launch's arguments do not fit the kernel's `.args` metadata (the code-object
    launch path's `kernarg-mismatch`, as the `hip` pipeline reports it)."""
    LOAD_FAILURE = "sim-load-failure"
    """The loader could not load the code object (a dynamic relocation it cannot apply):
    the ROCm runtime would refuse it before any wave ran."""


@dataclass(frozen=True, slots=True)
class Fault:
    kind: FaultKind
    detail: str
    pc: int = 0
    mnemonic: str = ""

    @property
    def signature(self) -> str:
        if self.kind is FaultKind.UNSUPPORTED:
            return f"{self.kind}:{self.mnemonic}"
        return str(self.kind)


class SimStop(Exception):
    """Raised inside an instruction to end the launch with `fault`; never leaves `sim`."""

    def __init__(self, fault: Fault) -> None:
        super().__init__(fault.detail)
        self.fault = fault
