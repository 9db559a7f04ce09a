"""`Case.id`: computed once per case, still the hash of the canonical content (README "Cases").

The expected ids are sha256 over identity texts written out by hand here from the format
`identity_text` documents (entry, grid, block, one line per argument, then the kernel), not
taken from `identity_text` itself.
"""

from __future__ import annotations

import hashlib
import pickle
from dataclasses import replace

from rgpu_fuzz.model.case import (
    BufferArg,
    Case,
    Dist,
    Expect,
    Fill,
    Launch,
    Provenance,
    Random,
    ScalarArg,
    Values,
)
from rgpu_fuzz.model.scalars import Scalar

KERNEL = 'extern "gpu-kernel" fn k(out: &mut [u32], n: i32) {}\n'


def _case(**kw: object) -> Case:
    base: dict[str, object] = dict(
        entry="k", kernel=KERNEL, launch=Launch(grid=(2, 1, 1), block=(64, 1, 1)),
        args=(BufferArg(name="out", elem=Scalar.U32, len=4, init=Values((1, 0xFF, 0, 7))),
              BufferArg(name="r", elem=Scalar.F32, len=8, init=Random(9, Dist.EDGES)),
              BufferArg(name="z", elem=Scalar.U32, len=3, init=Fill(0)),
              ScalarArg(name="n", ty=Scalar.I32, bits=0xFFFFFFFE)))
    base.update(kw)
    return Case(**base)  # type: ignore[arg-type]


def _by_hand(kernel: str = KERNEL) -> str:
    text = ("entry=k\ngrid=[2, 1, 1]\nblock=[64, 1, 1]\n"
            "buffer out: u32[4] = values 0x1,0xff,0x0,0x7\n"
            "buffer r: f32[8] = random 9 edges\n"
            "buffer z: u32[3] = fill 0x0\n"
            "scalar n: i32 = 0xfffffffe\n"
            "kernel:\n" + kernel)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def test_id_is_sha256_of_the_canonical_text_written_by_hand() -> None:
    case = _case()
    assert case.id == _by_hand()
    assert case.id == _by_hand()  # the cached value, second access


def test_id_is_not_part_of_equality_repr_or_hash() -> None:
    fresh, read = _case(), _case()
    assert read.id == _by_hand()
    assert fresh == read and hash(fresh) == hash(read)
    assert repr(fresh) == repr(read) and "_id" not in repr(read)


def test_replace_hashes_the_new_content_not_the_cached_id() -> None:
    case = _case()
    assert case.id == _by_hand()
    other = replace(case, kernel=KERNEL + "// x\n")
    assert other.id == _by_hand(KERNEL + "// x\n") != case.id
    annotated = replace(case, expect=Expect(issue="x"), provenance=Provenance(seed=3))
    assert annotated.id == case.id


def test_pickled_case_keeps_its_id() -> None:
    case = _case()
    assert pickle.loads(pickle.dumps(case)).id == _by_hand()  # not yet computed when pickled
    assert case.id == _by_hand()  # now cached before pickling
    again = pickle.loads(pickle.dumps(case))
    assert again.id == _by_hand() and again == case
