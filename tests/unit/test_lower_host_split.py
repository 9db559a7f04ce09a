"""The host lowering keeps the kernel's code out of the harness's loops (`lower.host`).

What O3 does with the module is LLVM's: LangRef ("Function Attributes") says an `optnone`
function is left as it is and a `noinline` callee is not inlined, so the optimised module
must still define the kernel's functions (`k.thread`, `k.region.<n>`) and call them from the
harness. Where a thread traps is decided by the language (docs/language.md: blocks one after
another, x fastest; the first trap stops the launch): the expected block and thread below
are hand-calculated from the launch, and results on generated cases are the reference
interpreter's (an independent implementation of the language)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from generators import SeededChoices, generate, load_profile
from rgpu_fuzz.lang.features import case_features
from rgpu_fuzz.model.case import BufferArg, Case, Fill, Launch, Values
from rgpu_fuzz.model.outcome import Ok, Trap, TrapKind
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.llvm_cpu import artefacts
from rgpu_fuzz.pipelines.registry import Registry


def _define(ir: str, name: str) -> str | None:
    """The header line of function `name`'s definition in `ir`, if it is defined."""
    m = re.search(rf'^define [^@]*@"?{re.escape(name)}"?\(.*$', ir, re.M)
    return m.group(0) if m else None


def _case(body: str, *, grid: int, block: int) -> Case:
    kernel = f"use rgpu::*;\n#[kernel]\npub fn k(a: &[u32], out: &mut [u32]) {{\n{body}\n}}\n"
    n = grid * block
    return Case(entry="k", kernel=kernel, launch=Launch(grid=(grid, 1, 1), block=(block, 1, 1)),
                args=(BufferArg(name="a", elem=Scalar.U32, len=n,
                                init=Values(tuple(range(n)))),
                      BufferArg(name="out", elem=Scalar.U32, len=n, init=Fill(0))))


GID = "let g = (block_idx_x() * block_dim_x() + thread_idx_x()) as usize;"
NO_BARRIER = f"{GID}\nout[g] = a[g] * 3u32;"
BARRIER = f"{GID}\nout[g] = a[g] * 3u32;\nsync_threads();\nout[g] = out[g] + 1u32;"


@pytest.mark.parametrize(("body", "kernel_fns"), [(NO_BARRIER, ["k.thread"]),
                                                  (BARRIER, ["k.region.1", "k.region.2"])])
def test_o3_optimises_the_kernel_functions_and_leaves_the_harness(
        body: str, kernel_fns: list[str]) -> None:
    opt = artefacts(_case(body, grid=2, block=4), "llvm-cpu:O3")["llvm-ir-opt"]
    for harness in ("rgpu_kernel_k", "k.block"):
        header = _define(opt, harness)
        assert header is not None and "#" in header, harness
        group = header.rsplit("#", 1)[1].split()[0]
        attrs = re.search(rf"^attributes #{group} = {{(.*)}}$", opt, re.M)
        assert attrs is not None and "optnone" in attrs.group(1), harness
    for name in kernel_fns:
        header = _define(opt, name)
        assert header is not None, f"{name} was inlined"
        body_text = opt[opt.index(header):].split("\n}\n", 1)[0]
        assert "alloca" not in body_text, f"{name} was not optimised (SROA leaves no alloca)"
        assert re.search(rf'call [^@]*@"?{re.escape(name)}"?\(', opt)


@pytest.mark.parametrize("level", ["O0", "O3"])
@pytest.mark.parametrize("barrier", [False, True])
def test_a_trap_in_a_later_block_stops_the_launch_there(level: str, barrier: bool) -> None:
    # grid 3 x block 4: thread 2 of block 1 (global id 6) indexes out of bounds; blocks run
    # in order, so blocks 0 and 1 wrote what they write before the trap, and block 2 nothing
    sync = "sync_threads();\n" if barrier else ""
    body = (f"{GID}\n{sync}if g == 6usize {{ out[g + 100usize] = 1u32; }}\n"
            "out[g] = 7u32;")
    got = Registry().create(f"llvm-cpu:{level}").run(_case(body, grid=3, block=4))
    assert isinstance(got, Trap) and got.kind is TrapKind.OUT_OF_BOUNDS, got
    assert got.where is not None
    assert (got.where.block, got.where.thread) == ((1, 0, 0), (2, 0, 0))


def test_generated_cases_agree_with_the_interpreter_at_o3() -> None:
    registry = Registry()
    ref, o3 = registry.create("ref"), registry.create("llvm-cpu:O3")
    starts = (("default", 5_550_000), ("barriers", 48))
    cases = [generate(SeededChoices(s), load_profile(p), seed=s)
             for p, first in starts for s in range(first, first + 6)]
    feats = [case_features(c) for c in cases]
    assert any("barrier" in f for f in feats) and not all("barrier" in f for f in feats)
    for case, f, got in zip(cases, feats, o3.run_many(cases, feats), strict=True):
        want = ref.run(case, f)
        assert type(got) is type(want), (case.id, got, want)
        if isinstance(want, Ok):
            assert isinstance(got, Ok)
            for name, buf in want.outputs.items():
                assert np.array_equal(buf.values.view(np.uint8),
                                      got.outputs[name].values.view(np.uint8)), (case.id, name)
