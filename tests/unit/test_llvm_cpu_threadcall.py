"""`llvm-cpu:…:threadcall`: the per-thread function stays a call in the thread loop.

LLVM honours `noinline` (LangRef "Function Attributes"), so at O3 the optimised module still
defines and calls `<kernel>.thread`; without the option O3 inlines it into the loop. The
results must not change: the reference interpreter (an independent implementation of the
language) is the expected value on generated cases."""

from __future__ import annotations

import re

import numpy as np

from rgpu_fuzz.generators import SeededChoices, generate, load_profile
from rgpu_fuzz.lang.features import case_features
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.pipelines.llvm_cpu import artefacts
from rgpu_fuzz.pipelines.registry import Registry

SEED = 5_550_003
"""A default generated case without barriers: the host lowering gives it `k.thread`."""


def _defines(ir: str, name: str) -> bool:
    return re.search(rf'^define [^@]*@"?{re.escape(name)}"?\(', ir, re.M) is not None


def test_the_thread_function_is_kept_as_a_call() -> None:
    case = generate(SeededChoices(SEED), load_profile("default"), seed=SEED)
    assert "barrier" not in case_features(case) and case.entry == "k"
    inlined = artefacts(case, "llvm-cpu:O3")["llvm-ir-opt"]
    kept = artefacts(case, "llvm-cpu:O3:threadcall")["llvm-ir-opt"]
    assert not _defines(inlined, "k.thread")
    assert _defines(kept, "k.thread")
    assert re.search(r'call [^@]*@"?k\.thread"?\(', kept)


def test_threadcall_agrees_with_the_interpreter() -> None:
    registry, profile = Registry(), load_profile("default")
    ref = registry.create("ref")
    pipeline = registry.create("llvm-cpu:O3:threadcall")
    assert pipeline.label == "llvm-cpu:O3:threadcall"
    cases = [generate(SeededChoices(s), profile, seed=s) for s in range(5_550_000, 5_550_008)]
    feats = [case_features(c) for c in cases]
    for case, f, got in zip(cases, feats, pipeline.run_many(cases, feats), strict=True):
        want = ref.run(case, f)
        assert type(got) is type(want), (case.id, got, want)
        if isinstance(want, Ok):
            assert isinstance(got, Ok)
            for name, buf in want.outputs.items():
                assert np.array_equal(buf.values.view(np.uint8),
                                      got.outputs[name].values.view(np.uint8)), (case.id, name)


def test_keep_thread_call_marks_only_the_thread_function() -> None:
    from rgpu_fuzz.pipelines.llvm_cpu import keep_thread_call

    ir = ('define internal i32 @"h"(i32 %".1")\n{\nentry:\n  ret i32 %".1"\n}\n'
          'define internal void @"k.thread"(ptr %".1")\n{\nentry:\n  ret void\n}\n')
    assert keep_thread_call(ir, "k") == ir.replace('@"k.thread"(ptr %".1")',
                                                   '@"k.thread"(ptr %".1") noinline')
    assert keep_thread_call(ir, "other") == ir  # a kernel with barriers: no thread function
