"""Seeded-bug pipelines: `llvm-cpu` with one known bug each (or two at once), made by
rewriting the real LLVM IR (`transform_ir`). `bench buckets` and `bench reduce` measure
bucketing and reduction against them, since each finding's cause is known; the tests use
them for the same reason.

Each module is also a `--plugin` file (`rgpu-fuzz campaign --plugin
rgpu_fuzz/bench/seeded/miscompile.py`), loaded by path like any plugin, so a campaign
records its sha256 and a rerun checks it (`triage/plugins.py`). `plugin(name)` is the path
of one; the plugin files of the test suite's other pipelines (broken, hanging or faulting
ones that only tests need) stay in `tests/plugins/`.

| file | pipeline | the bug |
|---|---|---|
| `miscompile.py` | `llvm-cpu-xor2or` | the first `xor` of the IR becomes `or` |
| `fptosi_plain.py` | `llvm-cpu-fptosi` | float→int `as` does not saturate |
| `shl_nomask.py` | `llvm-cpu-shlmask` | `<<` loses its amount mask |
| `minnum_nan.py` | `llvm-cpu-minnan` | float `min`/`max` return NaN for one NaN operand |
| `srem_crash.py` | `llvm-cpu-sremcrash` | codegen aborts on a signed `%` |
| `fptosi_and_shl.py` | `llvm-cpu-fptosi-shl` | the fptosi and shl bugs together |
| `op_sel.py` | `amdgpu-sim-opsel` | a code-object hook flips OPSEL[0] of the first `v_pk_*` |
| `bitop3_swap.py` | `amdgpu-sim-bitop3swap` | gfx950: one `v_bitop3` table, bits 0, 7 swapped |

Atomics bugs, on `amdgpu-sim` (found and reduced by `tests/quality/test_seeded_atomics.py`):

| file | pipeline | the bug |
|---|---|---|
| `rmw_split.py` | `amdgpu-sim-rmwsplit` | `atomicrmw add` becomes load, add, store (IR) |
| `dpp_step.py` | `amdgpu-sim-dppstep` | the first DPP scan step shifts by 2 (code object) |
| `scope_bit.py` | `amdgpu-sim-scopebit` | one atomic's scope narrowed (gfx942, gfx1200) |
"""

from __future__ import annotations

from pathlib import Path

SEEDED = Path(__file__).resolve().parent
"""The folder of the seeded-bug plugin files."""


def plugin(name: str) -> Path:
    """The plugin file `name` (`"miscompile.py"`) of this folder."""
    path = SEEDED / name
    if not path.is_file():
        raise FileNotFoundError(f"no seeded-bug plugin {name} in {SEEDED}")
    return path


__all__ = ["SEEDED", "plugin"]
