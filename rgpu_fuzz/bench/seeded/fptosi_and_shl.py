"""A deliberately broken `llvm-cpu` with two unrelated bugs at once: the transformations of
`fptosi_plain.py` (float→int `as` does not saturate) and `shl_nomask.py` (`<<` loses its
amount mask), applied in turn. One pipeline with two bugs is what bucketing must keep apart:
each finding belongs to the bug whose single-bug plugin reproduces it.
Load it with `--plugin rgpu_fuzz/bench/seeded/fptosi_and_shl.py`."""

from __future__ import annotations

from pathlib import Path

from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline
from rgpu_fuzz.pipelines.registry import import_plugin

_HERE = Path(__file__).resolve().parent
_fptosi = import_plugin(_HERE / "fptosi_plain.py")
_shl = import_plugin(_HERE / "shl_nomask.py")


class FptosiAndShl(LlvmCpuPipeline):
    """`llvm-cpu` with two seeded bugs: non-saturating float→int casts, unmasked `<<`."""

    name = "llvm-cpu-fptosi-shl"
    description = "llvm-cpu with plain float→int casts and unmasked << (two seeded bugs)"

    def transform_ir(self, ir_text: str) -> str:
        return _shl.unmasked_shl(_fptosi.plain_casts(ir_text))
