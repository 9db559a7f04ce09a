"""lit configuration for the LLVM bug reproducers in this folder.

Each `.ll` here carries `; RUN:` and `; CHECK:` lines in LLVM's own test style, so
`lit docs/llvm-bugs` runs them as an upstream test would be run. A test PASSES while the bug
still reproduces (its CHECK lines pin the wrong instruction sequence, or the crash); a FAIL
means LLVM's output changed: fixed upstream, or the CHECK lines need a look.

Which LLVM: the tools (`llc`, `opt`, `FileCheck`, `not`) come from `-D llvm_bin=DIR`, else
`$LLVM_BIN`, else `llvm-config-22 --bindir` (Debian's llvm-22), else PATH as it is. The
reproducers are written against LLVM 22.1; a different LLVM is reported in the lit output.
"""

# ruff: noqa: F821  (lit provides `config` and `lit_config` to this file)

import os
import shutil
import subprocess

import lit.formats


def _llvm_bin() -> str | None:
    given = lit_config.params.get("llvm_bin") or os.environ.get("LLVM_BIN")
    if given:
        return given
    llvm_config = shutil.which("llvm-config-22")
    if llvm_config:
        out = subprocess.run([llvm_config, "--bindir"], capture_output=True, text=True,
                             check=False)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    return None


config.name = "rgpu-fuzz LLVM bugs"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ll"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.test_source_root

_bin = _llvm_bin()
if _bin:
    config.environment["PATH"] = os.pathsep.join([_bin, config.environment.get("PATH", "")])

_llc = shutil.which("llc", path=config.environment.get("PATH"))
if _llc:
    _version = subprocess.run([_llc, "--version"], capture_output=True, text=True,
                              check=False).stdout
    if "amdgcn" in _version:
        config.available_features.add("amdgpu-registered-target")
    lit_config.note(f"llc: {_llc} ({' '.join(_version.split()[:5])})")
else:
    lit_config.warning("no llc found: pass -D llvm_bin=DIR or set LLVM_BIN")
