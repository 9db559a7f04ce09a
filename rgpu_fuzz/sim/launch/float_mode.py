"""Float modes a kernel descriptor may request that the simulator does not model, so a
launch is refused (`unsupported-instruction:float-mode`, an `Unsupported` outcome) instead
of computing results under a mode it ignores (docs/simulator.md §7, §12).

Read from COMPUTE_PGM_RSRC1 (AMDGPUUsage "Kernel Descriptor", "Floating Point Rounding Mode
Enumeration": 0 round to nearest even, 1 toward +inf, 2 toward -inf, 3 toward zero): every
arithmetic row is round-to-nearest-even, so FLOAT_ROUND_MODE_32 or FLOAT_ROUND_MODE_16_64
other than 0 is refused. FLOAT_DENORM_MODE_16_64 other than 3 (flush none) is refused where
it matters, at the first binary16 instruction (`bound.alu.bind_valu`, `semantics.f16`):
its f64 source flushing is modelled, and refusing here would refuse every f64 kernel of a
flushing mode."""

from __future__ import annotations

from typing import Any

_ROUNDING = {1: "toward +inf", 2: "toward -inf", 3: "toward zero"}


def unmodelled_float_mode(kd: Any) -> str | None:
    """Why the descriptor's float mode cannot be simulated, or None."""
    for name in ("FLOAT_ROUND_MODE_32", "FLOAT_ROUND_MODE_16_64"):
        mode = kd.field(name)
        if mode:
            return (f"{name} = {mode} (round {_ROUNDING.get(mode, '?')}): only round to "
                    "nearest even is modelled")
    return None


__all__ = ["unmodelled_float_mode"]
