"""Lower kernels in a child process with the IR builder `RGPU_LOWER_IR` names (`lower.irapi`
chooses it once per process). usage: python -m tests.textir_lowering < JOBS — JOBS is JSON,
a list of {"kernel": text, "entry": name, "target": "host" | "amdgcn" | "nvptx"}; prints a
JSON object: the builder chosen (`backend`, and the module its `IRBuilder` comes from)
and `texts`, per job the module's IR text or "LowerError: <feature>"."""

from __future__ import annotations

import json
import sys

from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.lower import AmdgcnTarget, HostTarget, LowerError, lower_module
from rgpu_fuzz.lower.irapi import BACKEND, ir
from rgpu_fuzz.lower.nvptx import NvptxTarget

TARGETS = {"host": HostTarget(), "amdgcn": AmdgcnTarget(), "nvptx": NvptxTarget()}


def main() -> int:
    out: list[str] = []
    for job in json.load(sys.stdin):
        checked = check_source(job["kernel"], "<textir>")
        try:
            out.append(lower_module(checked, job["entry"], TARGETS[job["target"]]).ir)
        except LowerError as e:
            out.append(f"LowerError: {e.feature}")
    json.dump({"backend": BACKEND, "builder": ir.IRBuilder.__module__, "texts": out},
              sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
