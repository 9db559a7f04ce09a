"""Emit amdgcn objects from LLVM IR files (run as a script in a child process: LLVM aborts
the process on a fatal error, so the test process never hosts code generation).

usage: python amdgcn_emit.py JOBS.json — JOBS is a list of {"ir": path, "cpu": "gfx942",
"opt": 0..3, "out": path}; each module is parsed afresh (code generation mutates it), optimised
with the new pass manager at `opt`, and emitted as an ELF relocatable object.
"""

from __future__ import annotations

import json
import sys

import llvmlite.binding as llvm


def main(jobs_path: str) -> int:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    target = llvm.Target.from_triple("amdgcn-amd-amdhsa")
    with open(jobs_path) as f:
        jobs = json.load(f)
    for job in jobs:
        tm = target.create_target_machine(cpu=job["cpu"], opt=job["opt"], reloc="pic",
                                          codemodel="default")
        with open(job["ir"]) as f:
            module = llvm.parse_assembly(f.read())
        module.verify()
        if job["opt"]:
            pto = llvm.create_pipeline_tuning_options(speed_level=job["opt"])
            pb = llvm.create_pass_builder(tm, pto)
            pb.getModulePassManager().run(module, pb)
        obj = tm.emit_object(module)  # before creating the file: an abort leaves none
        with open(job["out"], "wb") as f:
            f.write(obj)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
