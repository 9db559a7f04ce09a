"""The code-object reader, kernarg packer, verifier and linker on hand-made values and on the
test code objects (tests/data/amdgcn). Expected values are hand calculations from the
AMDGPUUsage tables cited in rgpu_fuzz/codeobj, or LLVM's own output (differential tests)."""

from __future__ import annotations

import struct
import sys

import pytest

from rgpu_fuzz.codeobj import (
    ArgValue,
    CodeObjectError,
    Dispatch,
    Generation,
    KernargMismatch,
    KernargSegment,
    KernelArg,
    KernelMetadata,
    LinkFailure,
    Register,
    decode_kernel_descriptor,
    link,
    pack_kernargs,
    read_code_object,
    target_by_name,
    verify_code_object,
)
from rgpu_fuzz.process import run_bounded
from tests.amdgcn_objects import _EMIT, DATA, Built, Crashed, build_all

BUILT = [b for b in build_all() if isinstance(b, Built)]


def _descriptor_bytes(*, group: int = 0, private: int = 0, kernarg: int = 0, entry: int = 0,
                      rsrc1: int = 0, rsrc2: int = 0, rsrc3: int = 0, props: int = 0,
                      preload: int = 0) -> bytes:
    # Layout by hand from AMDGPUUsage "Code Object V3 Kernel Descriptor": bytes 0-3, 4-7,
    # 8-11, 12-15 reserved, 16-23 entry (signed), 24-43 reserved, 44 RSRC3, 48 RSRC1,
    # 52 RSRC2, 56 properties (u16), 58 preload (u16), 60-63 reserved.
    raw = bytearray(64)
    struct.pack_into("<III", raw, 0, group, private, kernarg)
    struct.pack_into("<q", raw, 16, entry)
    struct.pack_into("<III", raw, 44, rsrc3, rsrc1, rsrc2)
    struct.pack_into("<HH", raw, 56, props, preload)
    return bytes(raw)


def test_descriptor_fields_by_hand_gfx942() -> None:
    rsrc1 = (5 << 0) | (2 << 6) | (3 << 16) | (3 << 18) | (1 << 21) | (1 << 23) | (1 << 26)
    rsrc2 = (1 << 0) | (6 << 1) | (1 << 7) | (1 << 9) | (2 << 11) | (1 << 30)
    rsrc3 = 3 | (1 << 16)
    props = 0b1001 | (1 << 11)
    kd = decode_kernel_descriptor(_descriptor_bytes(
        group=256, private=68, kernarg=304, entry=-0x100, rsrc1=rsrc1, rsrc2=rsrc2,
        rsrc3=rsrc3, props=props, preload=2 | (3 << 7)), Generation.GFX90A)
    assert (kd.group_segment_fixed_size, kd.private_segment_fixed_size, kd.kernarg_size,
            kd.kernel_code_entry_byte_offset) == (256, 68, 304, -0x100)
    expected = {
        "GRANULATED_WORKITEM_VGPR_COUNT": 5, "GRANULATED_WAVEFRONT_SGPR_COUNT": 2,
        "FLOAT_DENORM_MODE_32": 3, "FLOAT_DENORM_MODE_16_64": 3, "FLOAT_ROUND_MODE_32": 0,
        "ENABLE_DX10_CLAMP": 1, "ENABLE_IEEE_MODE": 1, "FP16_OVFL": 1,
        "ENABLE_PRIVATE_SEGMENT": 1, "USER_SGPR_COUNT": 6, "ENABLE_SGPR_WORKGROUP_ID_X": 1,
        "ENABLE_SGPR_WORKGROUP_ID_Y": 0, "ENABLE_SGPR_WORKGROUP_ID_Z": 1,
        "ENABLE_VGPR_WORKITEM_ID": 2, "ENABLE_EXCEPTION_INT_DIVIDE_BY_ZERO": 1,
        "ACCUM_OFFSET": 3, "TG_SPLIT": 1, "ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER": 1,
        "ENABLE_SGPR_KERNARG_SEGMENT_PTR": 1, "ENABLE_SGPR_DISPATCH_PTR": 0,
        "USES_DYNAMIC_STACK": 1, "KERNARG_PRELOAD_SPEC_LENGTH": 2,
        "KERNARG_PRELOAD_SPEC_OFFSET": 3,
    }
    assert {name: kd.field(name) for name in expected} == expected
    target = target_by_name("gfx942")
    assert target is not None
    assert kd.next_free_vgpr(target) == (5 + 1) * 8
    assert kd.next_free_sgpr == (2 + 1) * 8
    assert kd.accum_offset == (3 + 1) * 4
    assert kd.wavefront_size == 64
    assert [(u.name, u.first, u.count) for u in kd.user_sgprs()] == [
        ("private_segment_buffer", 0, 4), ("kernarg_segment_ptr", 4, 2),
        ("kernarg_preload", 6, 2)]
    assert not kd.has_field("WGP_MODE")  # GFX10+ only


def test_descriptor_gfx11_meanings_differ_from_gfx9() -> None:
    rsrc1 = (1 << 29) | (1 << 30) | (1 << 31)
    rsrc3 = (2 << 4) | (1 << 31)
    raw = _descriptor_bytes(rsrc1=rsrc1, rsrc3=rsrc3, props=1 << 10)
    gfx11 = decode_kernel_descriptor(raw, Generation.GFX11)
    assert (gfx11.field("WGP_MODE"), gfx11.field("MEM_ORDERED"),
            gfx11.field("FWD_PROGRESS")) == (1, 1, 1)
    assert (gfx11.field("INST_PREF_SIZE"), gfx11.field("IMAGE_OP")) == (2, 1)
    assert gfx11.wavefront_size == 32 and gfx11.next_free_sgpr is None
    assert gfx11.nonzero_reserved() == ()
    gfx9 = decode_kernel_descriptor(raw, Generation.GFX90A)
    bad = {(f.register, f.name) for f in gfx9.nonzero_reserved()}
    assert (Register.COMPUTE_PGM_RSRC1, "RESERVED2") in bad
    assert (Register.KERNEL_CODE_PROPERTIES, "RESERVED_WAVEFRONT_SIZE32") in bad
    assert (Register.COMPUTE_PGM_RSRC3, "RESERVED1") in bad


def test_every_descriptor_bit_is_named_exactly_once_per_generation() -> None:
    for gen in Generation:
        kd = decode_kernel_descriptor(bytes(64), gen)
        for register in (Register.COMPUTE_PGM_RSRC1, Register.COMPUTE_PGM_RSRC2,
                         Register.COMPUTE_PGM_RSRC3):
            bits = [b for f in kd.fields if f.register is register
                    for b in range(f.lo, f.lo + f.width)]
            assert sorted(bits) == list(range(32)), (gen, register)
        for register in (Register.KERNEL_CODE_PROPERTIES, Register.KERNARG_PRELOAD):
            bits = [b for f in kd.fields if f.register is register
                    for b in range(f.lo, f.lo + f.width)]
            assert sorted(bits) == list(range(16)), (gen, register)


def _meta(args: tuple[KernelArg, ...], size: int) -> KernelMetadata:
    return KernelMetadata(name="k", symbol="k.kd", kernarg_segment_size=size,
                          kernarg_segment_align=8, group_segment_fixed_size=0,
                          private_segment_fixed_size=0, wavefront_size=64, sgpr_count=8,
                          vgpr_count=4, max_flat_workgroup_size=256, args=args)


_ARGS = (
    KernelArg(offset=0, size=8, value_kind="global_buffer", name="a"),
    KernelArg(offset=8, size=8, value_kind="by_value", name="a.len"),
    KernelArg(offset=16, size=2, value_kind="by_value", name="h"),
    KernelArg(offset=24, size=8, value_kind="global_buffer", name="rgpu.trap"),
    KernelArg(offset=32, size=4, value_kind="hidden_block_count_x"),
    KernelArg(offset=36, size=4, value_kind="hidden_block_count_y"),
    KernelArg(offset=44, size=2, value_kind="hidden_group_size_x"),
    KernelArg(offset=46, size=2, value_kind="hidden_group_size_y"),
    KernelArg(offset=50, size=2, value_kind="hidden_remainder_x"),
    KernelArg(offset=56, size=2, value_kind="hidden_grid_dims"),
    KernelArg(offset=64, size=8, value_kind="hidden_hostcall_buffer"),
    KernelArg(offset=72, size=8, value_kind="hidden_private_base"),
)


def test_kernarg_bytes_by_hand() -> None:
    seg = pack_kernargs(_meta(_ARGS, 96), [
        ArgValue.pointer(0x7F00_0000_1000), ArgValue.integer(256, 8),
        ArgValue.integer(-2, 2), ArgValue.pointer(0xAB00)],
        Dispatch((4, 3, 1), (64, 2, 1)), hidden={"hidden_private_base": 0x1234})
    assert isinstance(seg, KernargSegment)
    expected = bytearray(96)
    expected[0:8] = (0x7F00_0000_1000).to_bytes(8, "little")
    expected[8:16] = (256).to_bytes(8, "little")
    expected[16:18] = b"\xfe\xff"
    expected[24:32] = (0xAB00).to_bytes(8, "little")
    expected[32:36] = (4).to_bytes(4, "little")
    expected[36:40] = (3).to_bytes(4, "little")
    expected[44:46] = (64).to_bytes(2, "little")
    expected[46:48] = (2).to_bytes(2, "little")
    expected[56:58] = (2).to_bytes(2, "little")   # y is the highest dimension used
    expected[72:80] = (0x1234).to_bytes(8, "little")
    assert seg.data == bytes(expected)
    assert seg.alignment == 8 and len(seg.slots) == len(_ARGS)


def test_kernarg_launches_of_one_kernel_each_get_their_own_bytes() -> None:
    """The second and third packs of one metadata and dispatch (hidden arguments worked out
    once) carry their own explicit values and the same hidden ones; a mismatch after a
    good pack is still found."""
    meta = _meta(_ARGS, 96)
    dispatch = Dispatch((4, 3, 1), (64, 2, 1))
    for addr, n in ((0x1000, 7), (0x2000, 9), (0x1000, 7)):
        seg = pack_kernargs(meta, [ArgValue.pointer(addr), ArgValue.integer(n, 8),
                                   ArgValue.integer(-2, 2), ArgValue.pointer(0xAB00)], dispatch)
        assert isinstance(seg, KernargSegment)
        assert seg.data[0:8] == addr.to_bytes(8, "little")
        assert seg.data[8:16] == n.to_bytes(8, "little")
        assert seg.data[32:40] == bytes([4, 0, 0, 0, 3, 0, 0, 0])     # block counts x, y
        assert seg.data[44:48] == bytes([64, 0, 2, 0])                  # group size x, y
        assert [s.data for s in seg.slots][:2] == [addr.to_bytes(8, "little"),
                                                   n.to_bytes(8, "little")]
    bad = pack_kernargs(meta, [ArgValue.pointer(1), ArgValue.integer(1, 8),
                               ArgValue.integer(1, 4), ArgValue.pointer(2)], dispatch)
    assert isinstance(bad, KernargMismatch) and "metadata says 2 bytes" in bad.detail


def test_kernarg_overlapping_arguments_are_written_in_args_order() -> None:
    """Metadata whose arguments overlap (a compiler bug's): each argument's bytes are
    written in `.args` order, so the later one's bytes win where they overlap."""
    args = (KernelArg(offset=0, size=8, value_kind="by_value", name="x"),
            KernelArg(offset=4, size=4, value_kind="hidden_block_count_x"),
            KernelArg(offset=6, size=4, value_kind="by_value", name="y"))
    seg = pack_kernargs(_meta(args, 16), [ArgValue.integer(0x1111_1111_1111_1111, 8),
                                          ArgValue.integer(0x2222_2222, 4)],
                        Dispatch((5, 1, 1), (1, 1, 1)))
    assert isinstance(seg, KernargSegment)
    assert seg.data[:10] == bytes([0x11] * 4 + [5, 0] + [0x22] * 4)
    assert [s.data for s in seg.slots] == [bytes([0x11] * 8), bytes([5, 0, 0, 0]),
                                           bytes([0x22] * 4)]   # what each one wrote


@pytest.mark.parametrize(("args", "fragment"), [
    ([ArgValue.pointer(1), ArgValue.integer(1, 8), ArgValue.integer(1, 2)], "4 explicit"),
    ([ArgValue.integer(1, 8), ArgValue.integer(1, 8), ArgValue.integer(1, 2),
      ArgValue.pointer(2)], "metadata says global_buffer"),
    ([ArgValue.pointer(1), ArgValue.integer(1, 8), ArgValue.integer(1, 4),
      ArgValue.pointer(2)], "metadata says 2 bytes"),
])
def test_kernarg_mismatch_is_a_value(args: list[ArgValue], fragment: str) -> None:
    got = pack_kernargs(_meta(_ARGS, 96), args, Dispatch((1, 1, 1), (1, 1, 1)))
    assert isinstance(got, KernargMismatch) and got.kind == "kernarg-mismatch"
    assert fragment in got.detail


def test_kernarg_hidden_value_too_wide_and_arg_outside_segment() -> None:
    args = [ArgValue.pointer(1), ArgValue.integer(1, 8), ArgValue.integer(1, 2),
            ArgValue.pointer(2)]
    too_wide = pack_kernargs(_meta(_ARGS, 96), args, Dispatch((1, 1, 1), (70000, 1, 1)))
    assert isinstance(too_wide, KernargMismatch) and "hidden_group_size_x" in too_wide.detail
    short = pack_kernargs(_meta(_ARGS, 60), args, Dispatch((1, 1, 1), (1, 1, 1)))
    assert isinstance(short, KernargMismatch) and "outside" in short.detail


def test_kernarg_from_a_real_code_object() -> None:
    """`second(y: &mut [i64], b: i8, h: i16, q: i64, f: f32)`: offsets from the metadata
    (checked against llvm-readelf in tests/differential), values placed there."""
    built = next(b for b in BUILT if b.name == "multi" and b.cpu == "gfx942" and b.opt == 3)
    meta = read_code_object(built.hsaco).kernel("second").metadata
    args = [ArgValue.pointer(0x1000), ArgValue.integer(1, 8), ArgValue.integer(-1, 1),
            ArgValue.integer(-3, 2), ArgValue.integer(7, 8),
            ArgValue.raw(struct.pack("<f", 2.5)), ArgValue.pointer(0x2000)]
    seg = pack_kernargs(meta, args, Dispatch((2, 1, 1), (32, 1, 1)))
    assert isinstance(seg, KernargSegment)
    assert len(seg.data) == meta.kernarg_segment_size
    by_name = {a.name: a for a in meta.args if a.name}
    assert seg.data[by_name["b"].offset] == 0xFF
    o = by_name["f"].offset
    assert struct.unpack_from("<f", seg.data, o)[0] == 2.5
    gsx = next(a for a in meta.args if a.value_kind == "hidden_group_size_x")
    assert struct.unpack_from("<H", seg.data, gsx.offset)[0] == 32


@pytest.mark.parametrize("built", BUILT, ids=lambda b: b.label)
def test_test_code_objects_verify_clean(built: Built) -> None:
    for data in (built.obj, built.hsaco):
        co = read_code_object(data)
        assert verify_code_object(co) == ()
        assert co.target.name == built.cpu and co.code_object_version == 5


def test_llvm22_trap_gfx1100_O0_crash_is_recorded() -> None:
    """Found while building these tests: LLVM 22.1 aborts emitting llvm.trap for gfx1100 at
    O0 (Debian llc-22 too). When LLVM fixes it this test says so."""
    crashed = [b.label for b in build_all() if isinstance(b, Crashed)]
    assert crashed == ["trap-gfx1100-O0"]


def _kd_offset(data: bytes, name: str) -> int:
    co = read_code_object(data)
    k = co.kernel(name)
    sec = next(s for s in co.elf.sections if s.addr and s.contains(k.descriptor_symbol.value))
    return sec.offset + k.descriptor_symbol.value - sec.addr


@pytest.mark.parametrize(("patch", "rule"), [
    (lambda b, o: struct.pack_into("<I", b, o + 8, 8), "kernarg-size"),
    (lambda b, o: struct.pack_into("<q", b, o + 16, 0x4000_0000), "entry-outside-text"),
    (lambda b, o: struct.pack_into("<q", b, o + 16,
                                   struct.unpack_from("<q", b, o + 16)[0] + 4),
     "entry-alignment"),
    (lambda b, o: struct.pack_into("<I", b, o, 0x20000), "lds-limit"),
    (lambda b, o: b.__setitem__(o + 50, b[o + 50] | 0x40), "descriptor-reserved"),  # PRIV
    # ENABLE_WAVEFRONT_SIZE32 is a reserved bit on GFX9
    (lambda b, o: b.__setitem__(o + 57, b[o + 57] | 0x04), "descriptor-reserved"),
    (lambda b, o: b.__setitem__(o + 48, b[o + 48] & ~0x3F), "vgpr-allocation"),
])
def test_verifier_finds_patched_descriptor(patch, rule: str) -> None:
    built = next(b for b in BUILT if b.name == "call" and b.cpu == "gfx942" and b.opt == 0)
    data = bytearray(built.hsaco)
    patch(data, _kd_offset(built.hsaco, "call"))
    violations = verify_code_object(read_code_object(bytes(data)))
    assert rule in {v.rule for v in violations}
    assert all(str(v).startswith("codeobj-invalid:") for v in violations)


@pytest.mark.parametrize(("data", "fragment"), [
    (b"", "not an ELF file"),
    (b"\x7fELF" + bytes(60), "ELFCLASS64"),
    (b"MZ" + bytes(100), "bad magic"),
])
def test_not_a_code_object_is_one_line(data: bytes, fragment: str) -> None:
    with pytest.raises(CodeObjectError) as e:
        read_code_object(data)
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_truncations_raise_code_object_error_only() -> None:
    data = next(b for b in BUILT if b.name == "multi").hsaco
    for cut in range(0, len(data), 97):
        try:
            read_code_object(data[:cut])
        except CodeObjectError as e:
            assert "\n" not in str(e)


def test_host_elf_is_refused() -> None:
    with open(sys.executable, "rb") as f:
        head = f.read(1 << 16)
    with pytest.raises(CodeObjectError, match="EM_AMDGPU"):
        read_code_object(head)


def test_link_failure_is_a_value() -> None:
    got = link(b"not an object")
    assert isinstance(got, LinkFailure)
    assert got.ended_by == "exit 1" and "error" in got.first_line


def test_compile_and_link_are_deterministic(tmp_path) -> None:
    """Same IR emitted twice (two fresh modules, two processes) and linked twice: identical
    object and code-object bytes (docs/design.md §3)."""
    import json
    outs = []
    for i in range(2):
        job = [{"ir": str(DATA / "multi.ll"), "cpu": "gfx90a", "opt": 2,
                "out": str(tmp_path / f"{i}.o")}]
        (tmp_path / "jobs.json").write_text(json.dumps(job))
        proc = run_bounded([sys.executable, str(_EMIT), str(tmp_path / "jobs.json")],
                           timeout=120)
        assert proc.returncode == 0, proc.stderr
        obj = (tmp_path / f"{i}.o").read_bytes()
        linked = link(obj)
        assert isinstance(linked, bytes)
        outs.append((obj, linked))
    assert outs[0] == outs[1]
