"""Our amdgcn lowering's code objects: the conformance kernels and the
corpus, for gfx942, gfx90a and gfx1100 at O0 and O3, link, pass the loader checks, and the
kernarg bytes packed from the metadata hold the case's values where the kernel ABI puts them.
The default run takes the corpus and every fourth conformance kernel; `-m slow` takes all of
them and 1,000 generated cases.

Expected values: the explicit argument names and order come from the kernel ABI
(`model.kernel_abi.flatten`, written before this package), the bytes from the case's values
by hand (little-endian, two's complement), the offsets from the metadata (which the
differential tests check against llvm-readelf)."""

from __future__ import annotations

import pickle
import struct
from pathlib import Path

import pytest

from rgpu_fuzz import casefile
from rgpu_fuzz.codeobj import (
    FIELDS,
    KernargSegment,
    LoadedKernel,
    kernel_arguments,
    pack_launch,
    read_code_object,
    verify_code_object,
)
from rgpu_fuzz.codeobj.launch import LaunchPlan
from rgpu_fuzz.model.case import BufferArg, Case
from rgpu_fuzz.model.kernel_abi import TRAP_PARAM, ArgumentValues, KernelParam, flatten
from tests.amdgcn_objects import Built, build_cases

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = tuple(sorted((ROOT / "tests" / "semantics" / "cases").glob("*.toml")))
CORPUS = tuple(sorted((ROOT / "corpus").glob("*.toml")))
DEFAULT = CORPUS + CONFORMANCE[::4]
TRAP_ADDRESS = 0xF0_0000


def _params(case: Case) -> tuple[KernelParam, ...]:
    return tuple(KernelParam(a.name, a.elem, True) if isinstance(a, BufferArg)
                 else KernelParam(a.name, a.ty, False) for a in case.args)


def _case(built: Built, paths: tuple[Path, ...]) -> Case:
    return casefile.load(next(p for p in paths if p.stem == built.name))


def check_lowered(built: Built, case: Case) -> None:
    for data in (built.obj, built.hsaco):
        co = read_code_object(data)
        assert co.target.name == built.cpu and co.code_object_version == 5
        assert [str(v) for v in verify_code_object(co)] == []
    co = read_code_object(built.hsaco)
    kernel = co.kernel(case.entry)
    kd = kernel.descriptor
    named = {(f.register, f.name) for f in kd.fields}
    assert named == {(f.register, f.name) for f in FIELDS if co.target.generation in
                     f.generations}
    assert kd.field("FLOAT_DENORM_MODE_32") == 3  # docs/language.md: subnormals kept
    assert kd.field("FLOAT_DENORM_MODE_16_64") == 3
    params = _params(case)
    expected_names = [a.name for a in flatten(params)] + [TRAP_PARAM]
    assert [a.name for a in kernel.metadata.explicit_args] == expected_names
    values = ArgumentValues.of(case, params)
    address = {name: 0x10_0000 * (i + 1) for i, name in enumerate(sorted(values.buffers))}
    words = values.words(address.__getitem__)
    seg = pack_launch(kernel, kernel_arguments(flatten(params), words, TRAP_ADDRESS),
                      case.launch)
    assert isinstance(seg, KernargSegment), seg
    assert len(seg.data) == kernel.metadata.kernarg_segment_size == kd.kernarg_size
    # a launch plan packs the same bytes without an ArgValue per argument, at its first
    # launch, again, and after pickling (as `bench sim` carries it to its workers)
    plan = LaunchPlan.of(case, params, LoadedKernel(built.hsaco, co, kernel))
    for _ in range(2):
        fast = plan.kernargs(address.__getitem__, TRAP_ADDRESS)
        assert isinstance(fast, KernargSegment), fast
        assert (fast.data, fast.alignment, fast.slots) == (seg.data, seg.alignment, seg.slots)
        plan = pickle.loads(pickle.dumps(plan))
    for arg in kernel.metadata.explicit_args:
        got = seg.data[arg.offset:arg.offset + arg.size]
        name = arg.name
        assert name is not None
        if name == TRAP_PARAM:
            expected = struct.pack("<Q", TRAP_ADDRESS)
        elif name in values.buffers:
            expected = struct.pack("<Q", address[name])
        elif name.endswith(".len"):
            expected = struct.pack("<Q", len(values.buffers[name[:-4]]))
        else:
            expected = values.scalars[name].to_bytes(arg.size, "little")
        assert got == expected, name
    for arg in kernel.metadata.hidden_args:
        axis = "xyz".index(arg.value_kind[-1]) if arg.value_kind[-2] == "_" else None
        got_value = int.from_bytes(seg.data[arg.offset:arg.offset + arg.size], "little")
        if arg.value_kind.startswith("hidden_block_count_"):
            assert got_value == case.launch.grid[axis]  # type: ignore[index]
        elif arg.value_kind.startswith("hidden_group_size_"):
            assert got_value == case.launch.block[axis]  # type: ignore[index]


@pytest.mark.parametrize("built", build_cases(DEFAULT), ids=lambda b: b.label)
def test_lowered_code_objects_load(built: Built) -> None:
    assert isinstance(built, Built), built
    check_lowered(built, _case(built, DEFAULT))


def _check_all(built_all: tuple[object, ...], cases: dict[str, Case]) -> list[str]:
    """Every build checked; the labels and errors of those that fail."""
    failures = []
    for built in built_all:
        if not isinstance(built, Built):
            failures.append(f"{built}")
            continue
        try:
            check_lowered(built, cases[built.name])
        except AssertionError as e:
            failures.append(f"{built.label}: {str(e).splitlines()[0][:200]}")
    return failures


@pytest.mark.slow
def test_every_conformance_kernel_code_object_loads() -> None:
    """All conformance kernels (builds at collection would cost the default run: built here)."""
    cases = {p.stem: casefile.load(p) for p in CONFORMANCE}
    assert _check_all(build_cases(CONFORMANCE), cases) == []


@pytest.mark.slow
def test_1000_generated_cases_code_objects_load(tmp_path: Path) -> None:
    """1,000 generated cases (default profile, seeds 0..999), each case file written once."""
    from generators import SeededChoices, generate, load_profile

    profile = load_profile("default")
    paths = []
    cases = {}
    for seed in range(1000):
        case = generate(SeededChoices(seed), profile, seed=seed)
        path = tmp_path / f"seed-{seed}.toml"
        path.write_text(casefile.dumps(case))
        paths.append(path)
        cases[path.stem] = case
    assert _check_all(build_cases(tuple(paths)), cases) == []
