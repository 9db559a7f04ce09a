"""The AMDGPU ISA simulator: runs a kernel of an AMDGPU code object as the hardware would,
wave by wave, and reports what it computed and how it stopped (docs/simulator.md).

This module is the simulator's face: the rest of the project imports these names from
here and nothing from deeper (an import contract in pyproject.toml holds it). Inside, one
subpackage per layer, each importing only from those below it:

- `launch`    a launch end to end (`engine`), the ROCm loader's set-up (`loader`), and the
              tier policy above both execution tiers (`tiers`);
- `fused`     the second tier: straight-line runs compiled to Python functions;
- `bound`     the first tier: each instruction bound once to a step over a wave;
- `semantics` what the ALU and memory instructions compute, as tables;
- `state`     a wave's registers, the launch's memory, and definedness below 32 bits;
- `isa`       decoding: tables generated from AMD's machine-readable ISA, the decoder,
              the executor's instruction view, a code object's `.text` as instructions;
- `common`    what every layer reports: faults.

The names load on first use (PEP 562), so importing the face costs nothing until a launch
runs: `rgpu-fuzz --help` and the checks that never simulate stay free of numpy."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rgpu_fuzz.sim.common.fault import Fault, FaultKind, SimStop
    from rgpu_fuzz.sim.isa.bench import decode_throughput
    from rgpu_fuzz.sim.isa.code import decode_text
    from rgpu_fuzz.sim.isa.decode import decode
    from rgpu_fuzz.sim.isa.instruction import Encoding
    from rgpu_fuzz.sim.isa.tables import UnknownTarget, tables
    from rgpu_fuzz.sim.launch.engine import Arg, SimResult, Status, TraceRow, simulate
    from rgpu_fuzz.sim.launch.loader import TargetConfig, target_config

_WHERE = {
    "Fault": "rgpu_fuzz.sim.common.fault", "FaultKind": "rgpu_fuzz.sim.common.fault",
    "SimStop": "rgpu_fuzz.sim.common.fault",
    "decode_text": "rgpu_fuzz.sim.isa.code", "decode_throughput": "rgpu_fuzz.sim.isa.bench",
    "decode": "rgpu_fuzz.sim.isa.decode", "Encoding": "rgpu_fuzz.sim.isa.instruction",
    "UnknownTarget": "rgpu_fuzz.sim.isa.tables", "tables": "rgpu_fuzz.sim.isa.tables",
    "Arg": "rgpu_fuzz.sim.launch.engine", "SimResult": "rgpu_fuzz.sim.launch.engine",
    "Status": "rgpu_fuzz.sim.launch.engine", "TraceRow": "rgpu_fuzz.sim.launch.engine",
    "simulate": "rgpu_fuzz.sim.launch.engine",
    "TargetConfig": "rgpu_fuzz.sim.launch.loader", "target_config": "rgpu_fuzz.sim.launch.loader",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'rgpu_fuzz.sim' has no attribute {name!r}")
    value = getattr(import_module(where), name)
    globals()[name] = value
    return value


__all__ = ["Arg", "Encoding", "Fault", "FaultKind", "SimResult", "SimStop", "Status",
           "TargetConfig", "TraceRow", "UnknownTarget", "decode", "decode_text",
           "decode_throughput", "simulate", "tables", "target_config"]
