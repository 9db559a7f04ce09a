"""Every conformance kernel and corpus case, printed as rustc-cpu prints it, compiles with
the real rustc for gfx942 (with the minicore) at O0 and O2 into one crate, links into one
code object holding one kernel per case, and its metadata carries every parameter.

Expected facts come from rustc and LLVM's own output, never from our code: the metadata
`.args` rustc's signature became (read by `codeobj`, itself checked against
`llvm-readelf-22`), rustc's LLVM IR (`--emit=llvm-ir`), and `llvm-objdump-22`'s disassembly.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from rgpu_fuzz.casefile import load
from rgpu_fuzz.codeobj import read_code_object
from rgpu_fuzz.model.outcome import Rejected
from rgpu_fuzz.pipelines.rustc_amdgpu_build import compile_units, kernarg_plan
from rgpu_fuzz.pipelines.rustc_amdgpu_program import entry_symbol, shared_layout
from rgpu_fuzz.pipelines.rustc_batch import BuiltCase
from rgpu_fuzz.pipelines.rustc_program import (
    ProgramCase,
    find_rustc,
    printed_program_case,
    uses_barrier,
)
from rgpu_fuzz.process import run_bounded
from tests.semantics.expected_values import CASES
from tests.toolchain import debian_llvm_tool

pytestmark = pytest.mark.rustc

ROOT = Path(__file__).resolve().parents[2]


def _units() -> list[ProgramCase]:
    files = sorted(CASES.glob("*.toml")) + sorted((ROOT / "corpus").glob("*.toml"))
    units = []
    for f in files:
        unit = printed_program_case(load(f))
        assert not isinstance(unit, Rejected), (f, unit)
        units.append(unit)
    return units


@cache
def _compiled(opt_level: int, root: Path) -> tuple[list[ProgramCase], list[BuiltCase]]:
    rustc = find_rustc()
    if rustc is None:
        pytest.skip("rustc not found")
    units = _units()
    built = compile_units(units, rustc=rustc, target="gfx942", opt_level=opt_level,
                          root=root / f"O{opt_level}", timeout=600)
    return units, built


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rustc-amdgpu")


@pytest.mark.parametrize("opt_level", [0, 2])
def test_one_code_object_holds_every_kernel(opt_level: int, root: Path) -> None:
    units, built = _compiled(opt_level, root)
    builds = {id(b.build) for b in built}
    assert len(builds) == 1, [b.build.signature for b in built if b.build.failure]
    build = built[0].build
    assert build.failure is None and build.binary is not None, build.signature
    co = read_code_object(build.binary.read_bytes())
    assert co.target.name == "gfx942"
    assert sorted(k.name for k in co.kernels) == sorted(entry_symbol(i)
                                                       for i in range(len(units)))
    for b, unit in zip(built, units, strict=True):
        meta = co.kernel(entry_symbol(b.index)).metadata
        plan = kernarg_plan(unit, meta)
        assert not isinstance(plan, str), (unit.case.id, plan)


@pytest.mark.parametrize("opt_level", [0, 2])
def test_slices_cross_the_kernel_abi_as_pointer_and_length(opt_level: int, root: Path) -> None:
    """rustc 1.95's lowering of `extern "gpu-kernel"`: the trap record pointer first, then
    each `&[T]`/`&mut [T]` as two arguments, `a.0` a global buffer pointer and `a.1` an
    8-byte length, each scalar by value in its own width, in signature order."""
    units, built = _compiled(opt_level, root)
    assert built[0].build.binary is not None
    co = read_code_object(built[0].build.binary.read_bytes())
    for b, unit in zip(built, units, strict=True):
        args = co.kernel(entry_symbol(b.index)).metadata.explicit_args
        want: list[tuple[str, str, int]] = [("rgpu_trap", "global_buffer", 8)]
        for p in unit.params:
            if p.kind == "scalar":
                want.append((p.name, "by_value", max(1, p.ty.bits // 8)))
            else:
                want += [(f"{p.name}.0", "global_buffer", 8), (f"{p.name}.1", "by_value", 8)]
        assert [(a.name, a.value_kind, a.size) for a in args] == want, unit.case.id
        offsets = [a.offset for a in args]
        assert offsets == sorted(offsets) and offsets[0] == 0


def _disassembly(co_path: Path) -> dict[str, str]:
    objdump = debian_llvm_tool("llvm-objdump", 22)
    proc = run_bounded([objdump, "-d", "--no-show-raw-insn", str(co_path)], timeout=120)
    assert proc.returncode == 0, proc.stderr
    bodies: dict[str, str] = {}
    for m in re.finditer(r"^[0-9a-f]+ <([^>]+)>:\n(.*?)(?=^[0-9a-f]+ <|\Z)", proc.stdout,
                         re.MULTILINE | re.DOTALL):
        bodies[m.group(1)] = m.group(2)
    return bodies


@pytest.mark.parametrize("opt_level", [0, 2])
def test_code_object_text(opt_level: int, root: Path) -> None:
    """llvm-objdump-22 on the code object: every kernel is there; the panic path stops the
    wave with `s_trap 2` (`llvm.trap`) after reading the kernarg address at offset 0x28 of
    the dispatch packet; `sync_threads` is an `s_barrier` in the kernel's own code; a kernel
    with `#[shared]` arrays reads the shared aperture from SH_MEM_BASES."""
    units, built = _compiled(opt_level, root)
    path = built[0].build.binary
    assert path is not None
    bodies = _disassembly(path)
    co = read_code_object(path.read_bytes())
    for b, unit in zip(built, units, strict=True):
        name = entry_symbol(b.index)
        assert name in bodies, name
        # the entry and its module's functions (at O0 the entry calls the kernel function)
        module = f"case_{b.index}_{unit.case.id}"
        own = "".join(t for n, t in bodies.items() if n == name or module in n)
        if uses_barrier(unit.kernel_source):
            assert "s_barrier" in own, unit.case.id
        if shared_layout(unit).arrays:
            # the shared arrays: flat accesses through the shared aperture, read from
            # SH_MEM_BASES (rustc 1.95 cannot make an LDS static); no static LDS
            assert "s_getreg_b32" in own and \
                "hwreg(HW_REG_SH_MEM_BASES, 16, 16)" in own, unit.case.id
            assert re.search(r"flat_(load|store)_dword", own), unit.case.id
            assert co.kernel(name).descriptor.group_segment_fixed_size == 0
    raise_fn = [t for n, t in bodies.items() if "raise" in n]
    text = "".join(raise_fn) if raise_fn else "".join(bodies.values())
    assert "s_trap 2" in text
    assert re.search(r"s_load_dwordx2 s\[\d+:\d+\], s\[\d+:\d+\], 0x28", text) or \
        re.search(r"_load_dwordx2 .*offset:40", text), text[:2000]
    assert co.code_object_version >= 5


def test_float_to_int_casts_saturate(root: Path) -> None:
    """Under `#![no_core]` rustc still lowers `as` from float to int with LLVM's saturating
    conversions (Rust's semantics: saturate, NaN to 0), not a plain `fptosi`."""
    _, built = _compiled(2, root)
    assert built[0].build.binary is not None
    ir = (built[0].build.binary.parent / "kernels.ll").read_text(encoding="utf-8")
    assert re.search(r"@llvm\.fptosi\.sat\.i32\.f32", ir)
    assert re.search(r"@llvm\.fptoui\.sat\.i64\.f64", ir)
    assert not re.search(r"= fptosi float", ir)


def test_compilation_is_deterministic(root: Path, tmp_path: Path) -> None:
    """The same crate compiled again, elsewhere, gives the same code-object bytes
    (docs/design.md §3): nothing of the build directory leaks into the panic locations."""
    units, built = _compiled(2, root)
    rustc = find_rustc()
    assert rustc is not None
    again = compile_units(units, rustc=rustc, target="gfx942", opt_level=2,
                          root=tmp_path / "elsewhere", timeout=600)
    assert again[0].build.binary_sha256 == built[0].build.binary_sha256


def test_calls_are_pc_relative(root: Path) -> None:
    """As a `cdylib`, only the entry points are exported: rustc's object has no GOT
    relocations (a `lib` crate calls even its own panic functions through the GOT)."""
    _, built = _compiled(0, root)
    assert built[0].build.binary is not None
    readelf = debian_llvm_tool("llvm-readelf", 22)
    proc = run_bounded([readelf, "-r", str(built[0].build.binary.parent / "kernels.o")],
                       timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "GOTPCREL" not in proc.stdout
    assert "R_AMDGPU_REL32" in proc.stdout or "R_AMDGPU_REL64" in proc.stdout
