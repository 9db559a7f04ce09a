"""The reference interpreter: the executable specification of the kernel language.

`run_kernel` runs a checked kernel and answers `Finished` (the `&mut` buffers), a `Trap`, or
`Rejected` when the case is not well-defined (docs/language.md).
"""

from rgpu_fuzz.interp.machine import Finished, InterpResult, run_kernel

__all__ = ["Finished", "InterpResult", "run_kernel"]
