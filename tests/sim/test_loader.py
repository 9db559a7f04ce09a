"""The loader maps a linked code object as the ROCm loader does: every PT_LOAD segment at the
load address, dynamic relocations applied (AMDGPUUsage "AMDGPU ELF Relocation Records").

Expected values: the constants written in `data/rodata.ll` (computed here by hand), and the
relocation records as Debian's `llvm-readelf-22 -r --dyn-syms` prints them (independent of
our ELF reader)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from rgpu_fuzz.codeobj.reader import read_code_object
from rgpu_fuzz.sim.common.fault import FaultKind
from rgpu_fuzz.sim.launch.engine import Arg, Status
from rgpu_fuzz.sim.launch.image import CODE_OBJECT_BASE, load_code_object
from rgpu_fuzz.sim.state.memory import AddressSpace
from tests.sim.kernels import build, out, run, u64
from tests.toolchain import debian_llvm_tool

TBL = [3, 1, 4, 1, 5, 9, 2, 6]
STRIPS = [[10, 20, 30, 40], [50, 60, 70, 80]]
GVAR = 7


@pytest.mark.parametrize("opt", (0, 3))
def test_rodata_tables_pointer_tables_and_got(opt: int) -> None:
    """out[t] = tbl[t & 7] + 100 * ptrs[(t >> 3) & 1][t & 3] + 10000 * gvar + sel: a
    .rodata table, a table of pointers (R_AMDGPU_RELATIVE64), an exported table and a
    global reached through the GOT (R_AMDGPU_ABS64), as written in rodata.ll."""
    sel = 5
    res = run(build("rodata.ll", opt=opt), (1, 1, 1), (64, 1, 1),
              [Arg("out"), Arg(data=sel.to_bytes(4, "little"))],
              {"out": np.zeros(64, np.uint32)})
    assert res.status is Status.OK, res.fault
    expect = [TBL[t & 7] + 100 * STRIPS[(t >> 3) & 1][t & 3] + 10000 * GVAR + sel
              for t in range(64)]
    assert out(res, "out", np.uint32).tolist() == expect


def test_rodata_in_range_reads_and_unmapped_address_faults() -> None:
    code = build("rodata.ll", opt=3)
    ok = run(code, (1, 1, 1), (1, 1, 1), [Arg("out"), u64(5)], {"out": np.zeros(1, np.uint32)},
             kernel="k_idx")
    assert ok.status is Status.OK, ok.fault
    assert out(ok, "out", np.uint32).tolist() == [TBL[5]]
    bad = run(code, (1, 1, 1), (1, 1, 1), [Arg("out"), u64(1 << 24)],
              {"out": np.zeros(1, np.uint32)}, kernel="k_idx")
    assert bad.status is Status.FAULT and bad.fault is not None
    assert bad.fault.kind is FaultKind.OOB_ACCESS, bad.fault


def _readelf(code: bytes) -> tuple[list[tuple[int, str, str, int]], dict[str, int]]:
    """(offset, type, symbol, addend) per dynamic relocation and each dynamic symbol's value,
    from llvm-readelf-22's text."""
    tool = debian_llvm_tool("llvm-readelf", 22)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "k.hsaco")
        path.write_bytes(code)
        text = subprocess.run([tool, "-r", "--dyn-syms", "--wide", str(path)],
                              capture_output=True, text=True, check=True, timeout=60).stdout
    relocs = []
    for m in re.finditer(r"^([0-9a-f]{16})\s+[0-9a-f]{16}\s+(R_AMDGPU_\w+)\s+"
                         r"(?:([0-9a-f]{16})\s+(\S+)\s+\+\s+([0-9a-f]+)|([0-9a-f]+))$",
                         text, re.M):
        off, kind = int(m[1], 16), m[2]
        if m[4] is not None:
            relocs.append((off, kind, m[4], int(m[5], 16)))
        else:
            relocs.append((off, kind, "", int(m[6], 16)))
    syms = {m[2]: int(m[1], 16) for m in
            re.finditer(r"^\s+\d+:\s+([0-9a-f]{16})\s+\d+\s+\w+\s+\w+\s+\w+\s+\w+\s+(\S+)$",
                        text, re.M)}
    return relocs, syms


@pytest.mark.parametrize("opt", (0, 3))
def test_relocated_words_equal_llvm_readelf(opt: int) -> None:
    """Every dynamic relocation's place holds B + A (RELATIVE64) or S + A with S the
    symbol's value plus the load base (ABS64), from llvm-readelf's records."""
    code = build("rodata.ll", opt=opt)
    relocs, syms = _readelf(code)
    assert {k for _, k, _, _ in relocs} == {"R_AMDGPU_RELATIVE64", "R_AMDGPU_ABS64"}
    space = AddressSpace()
    image = load_code_object(space, read_code_object(code))
    assert image.base == CODE_OBJECT_BASE
    for off, kind, sym, addend in relocs:
        got = int.from_bytes(space.read_scalar(image.base + off, 8, "test"), "little")
        want = image.base + addend + (syms[sym] if kind == "R_AMDGPU_ABS64" else 0)
        assert got == want, (hex(off), kind, sym)


def test_undefined_symbol_refuses_to_load() -> None:
    """A GOT entry against a symbol nothing defines: the runtime cannot load the code object,
    so no wave runs."""
    res = run(build("undef_sym.ll", opt=0), (1, 1, 1), (1, 1, 1), [Arg("out")],
              {"out": np.zeros(1, np.uint32)})
    assert res.status is Status.FAULT and res.fault is not None
    assert res.fault.kind is FaultKind.LOAD_FAILURE
    assert "undefined symbol ext" in res.fault.detail


KERNARG = "kernarg_past_end.ll"


@pytest.mark.parametrize("opt", (0, 3))
def test_a_widened_kernarg_load_past_the_segment_is_no_fault(opt: int) -> None:
    """`sum3`'s kernarg segment is 20 bytes; at O3 LLVM 22 loads a, b, c with one
    `s_load_dwordx4 s[0:3], s[4:5], 0x8` (bytes 8..23: 4 past the end), as ROCm's kernarg
    pool allows. Expected by hand: 7 + 5 * 6 = 37 (before the padded mapping, O3 was
    `sim-oob-access`)."""
    args = [Arg("out")] + [Arg(data=v.to_bytes(4, "little")) for v in (7, 5, 6)]
    res = run(build(KERNARG, opt=opt), (1, 1, 1), (1, 1, 1), args,
              {"out": np.zeros(1, np.uint32)}, kernel="sum3")
    assert res.status is Status.OK, res.fault
    assert out(res, "out", np.uint32).tolist() == [37]


@pytest.mark.parametrize(("off", "want"), [
    (8, 8),  # the last argument itself: `off`
    (12, FaultKind.UNINIT_READ),  # pool bytes past the 12-byte segment: mapped, not ours
    (4092, FaultKind.UNINIT_READ),  # the last dword of the segment's page
    (4096, FaultKind.OOB_ACCESS),  # the next page: outside every mapping
])
def test_kernarg_bytes_past_the_segment_read_but_are_undefined(off: int, want: object) -> None:
    """`peek` stores the dword at kernarg + off. The segment (12 bytes) starts a page that is
    mapped to its end (KERNARG_POOL_GRANULE); a store of a dword read past the segment is
    `sim-uninit-read`, a read past the page `sim-oob-access`."""
    res = run(build(KERNARG, opt=3), (1, 1, 1), (1, 1, 1),
              [Arg("out"), Arg(data=off.to_bytes(4, "little"))],
              {"out": np.zeros(1, np.uint32)}, kernel="peek")
    if isinstance(want, int):
        assert res.status is Status.OK, res.fault
        assert out(res, "out", np.uint32).tolist() == [want]
    else:
        assert res.fault is not None and res.fault.kind is want, res.fault


def test_scalar_defined_masks_bytes_past_the_contents() -> None:
    """A 16-byte scalar load at offset 8 of a 13-byte mapping padded to 4096: dword 0
    (bytes 8..11) defined, dword 1 one byte (12), dwords 2-3 none. By hand."""
    space = AddressSpace()
    m = space.map("k", bytes(13), pad_to=4096)
    assert len(m.data) == 4096 and m.defined_size == 13
    assert space.scalar_defined(m.base + 8, 16) == (0xFFFF_FFFF, 0xFF, 0, 0)
    assert space.scalar_defined(m.base, 12) is None
    assert space.map("b", bytes(12)).defined_size is None


@pytest.mark.parametrize("opt", (0, 3))
@pytest.mark.parametrize(("n", "want"), [
    (10, 55),  # 10 frames of 32 (O3) / 48 (O0) bytes: over the fixed size, under 1024
    (64, FaultKind.OOB_ACCESS),  # 64 frames: 2048 / 3072 bytes, past the 1024-byte stack
])
def test_a_dynamic_stack_gets_the_runtimes_default_stack(opt: int, n: int,
                                                         want: object) -> None:
    """`rec` recurses, so LLVM 22 sets `.uses_dynamic_stack` and a private_segment_fixed_size
    of one frame (32 bytes at O3, 48 at O0; `llc-22` prints the same). HIP launches such a
    kernel with max(1024, fixed) bytes of scratch per work-item (loader.HIP_STACK_SIZE,
    clr rocvirtual.cpp). Expected by hand: 10 + 9 + ... + 1 = 55; 64 frames overflow.
    Before: n = 10 was `sim-oob-access` (fixed size only)."""
    res = run(build("dynamic_stack.ll", opt=opt), (1, 1, 1), (2, 1, 1),
              [Arg("out"), Arg(data=n.to_bytes(4, "little"))], {"out": np.zeros(1, np.uint32)})
    if isinstance(want, int):
        assert res.status is Status.OK, res.fault
        assert out(res, "out", np.uint32).tolist() == [want]
    else:
        assert res.fault is not None and res.fault.kind is want, res.fault
