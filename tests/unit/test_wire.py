"""The wire codec (`campaigns/wire.py`): jobs, results and outcomes as msgpack plain data.

Expected bit patterns are written from IEEE 754-2019 §3.4 (binary32: sign, 8-bit exponent,
23-bit fraction; binary64: 11/52; a NaN is all-ones exponent with a non-zero fraction, the
fraction's top bit set for a quiet NaN, clear for a signalling one) and two's complement, not
from the code under test.
"""

from __future__ import annotations

import pickle
import struct
from collections import Counter
from pathlib import Path

import msgpack
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from campaigns import wire
from campaigns.jobs import (
    ChunkJob,
    ChunkResult,
    Found,
    JudgeJob,
    JudgeResult,
    Keying,
    Probed,
    ReduceJob,
    ReduceResult,
    Setup,
    run_chunk,
)
from oracles import ElementDiff, Finding, FindingKind, Verdict
from rgpu_fuzz.model.outcome import (
    OUTCOME_TYPES,
    Buffer,
    CompileCrash,
    Location,
    Ok,
    Outcome,
    PipelineFailure,
    Rejected,
    RejectReason,
    RunCrash,
    Stats,
    Timeout,
    Trap,
    TrapKind,
    Unavailable,
    Unsupported,
)
from rgpu_fuzz.model.scalars import Scalar, from_bits
from triage.bugkey import ProbeAnswer, ProbeStats, TypedOp

MISCOMPILE = Path(__file__).resolve().parents[1] / "plugins" / "miscompile.py"

F32_BITS = [
    0x7F800001,  # signalling NaN, payload 1
    0xFFA00000,  # negative signalling NaN, payload 0x200000
    0x7FC12345,  # quiet NaN with a payload
    0x80000000,  # -0.0
    0x00000001,  # smallest subnormal
    0xFF800000,  # -inf
    0x3F800000,  # 1.0
]
F64_BITS = [
    0x7FF0000000000001,  # signalling NaN, payload 1
    0xFFF8DEADBEEF0001,  # negative quiet NaN with a payload
    0x8000000000000000,  # -0.0
    0x000FFFFFFFFFFFFF,  # largest subnormal
]
I64_BITS = [0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0x7FFFFFFFFFFFFFFF, 0]  # MIN, -1, MAX, 0


def bits_of(buf: Buffer) -> list[int]:
    arr = np.ascontiguousarray(buf.values, dtype=buf.ty.dtype)
    return [int(x) for x in arr.view(buf.ty.bits_dtype)]


def round_trip(value: object, kind: object) -> object:
    return wire.decode(wire.encode(value), kind)


def stats() -> Stats:
    # a NaN with a payload and -0.0 among the timings: floats travel as binary64 bits
    nan = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000ABC))[0]
    return Stats(seconds={"total": 0.25, "odd": nan, "neg": -0.0},
                 artefacts={"llvm-ir": "ab" * 32})


def test_buffers_keep_every_bit() -> None:
    outputs = {
        "f": Buffer(Scalar.F32, from_bits(F32_BITS, Scalar.F32)),
        "d": Buffer(Scalar.F64, from_bits(F64_BITS, Scalar.F64)),
        "i": Buffer(Scalar.I64, from_bits(I64_BITS, Scalar.I64)),
        "u": Buffer(Scalar.U64, np.array([2**64 - 1, 0], dtype=np.uint64)),
        "b": Buffer(Scalar.BOOL, np.array([True, False, True])),
        "e": Buffer(Scalar.U8, np.zeros(0, dtype=np.uint8)),
    }
    back = round_trip(Ok(outputs=outputs, stats=stats()), Ok)
    assert isinstance(back, Ok)
    assert bits_of(back.outputs["f"]) == F32_BITS
    assert bits_of(back.outputs["d"]) == F64_BITS
    assert bits_of(back.outputs["i"]) == I64_BITS
    assert bits_of(back.outputs["u"]) == [2**64 - 1, 0]
    assert back.outputs["b"].values.tolist() == [True, False, True]
    assert back.outputs["e"].values.shape == (0,)
    for name, buf in back.outputs.items():
        assert buf.ty is outputs[name].ty and buf.values.dtype == outputs[name].ty.dtype
    sec = back.stats.seconds
    assert struct.pack("<d", sec["odd"]) == struct.pack("<Q", 0x7FF8000000000ABC)
    assert struct.pack("<d", sec["neg"]) == struct.pack("<Q", 0x8000000000000000)


@given(st.sampled_from(list(Scalar)), st.lists(st.integers(0, 2**64 - 1), max_size=8))
def test_any_bit_pattern_of_any_type_comes_back(ty: Scalar, raw: list[int]) -> None:
    bits = [b & ((1 << ty.bits) - 1) for b in raw]
    back = round_trip(Buffer(ty, from_bits(bits, ty)), Buffer)
    assert isinstance(back, Buffer) and back.ty is ty
    assert bits_of(back) == [int(x) for x in np.asarray(bits, dtype=np.uint64)
                             .astype(ty.bits_dtype)]


OUTCOMES: list[Outcome] = [
    Trap(kind=TrapKind.OUT_OF_BOUNDS, where=Location(line=3, col=9, block=(1, 0, 0),
                                                     thread=(31, 0, 0)),
         stats=Stats(seconds={"total": 0.25, "compile": -0.0}, artefacts={"object": "cd" * 32})),
    Trap(kind=TrapKind.DIV_BY_ZERO),
    Rejected(reason=RejectReason.SHARED_RACE, detail="t0 and t1", where=Location(line=1, col=2)),
    CompileCrash(stage="codegen", signature="LLVM ERROR: x", log="line1\nline2 \udcff"),
    RunCrash(signal="SIGSEGV", log=""),
    Timeout(stage="run", seconds=10.0),
    Unsupported(features=("shared", "f64")),
    Unavailable(reason="no GPU"),
    PipelineFailure(error="ValueError: boom", traceback="Traceback ..."),
]


def test_the_outcome_list_covers_every_kind() -> None:
    assert {type(o) for o in OUTCOMES} | {Ok} == set(OUTCOME_TYPES)


@pytest.mark.parametrize("outcome", OUTCOMES, ids=lambda o: type(o).__name__)
def test_every_outcome_kind_comes_back_equal(outcome: object) -> None:
    back = round_trip({"p": outcome}, dict[str, Outcome])
    assert isinstance(back, dict)
    assert type(back["p"]) is type(outcome) and back["p"] == outcome


def _verdict() -> Verdict:
    finding = Finding(kind=FindingKind.WRONG_CODE, pipelines=("llvm-cpu:O0",),
                      signature="wrong-code|llvm-cpu:O0|ops=xor", detail="1 element",
                      diffs=(ElementDiff("out", 3, "nan", 0x7FC00001, "-0", 0x80000000),),
                      differing_elements=1, suspects=("llvm-cpu:O0",))
    return Verdict(findings=(finding,), classes=(("ref",), ("llvm-cpu:O0",)),
                   compared=("ref", "llvm-cpu:O0"))


def test_jobs_and_results_come_back_equal() -> None:
    setup = Setup(("ref", "llvm-cpu:O0"), "default", "default", ("/p/plugin.py",))
    chunk = ChunkJob(setup, 7, (56, 57, 58))
    reduce = ReduceJob(setup, "[case]\n", "wrong-code|x", 60.0)
    assert wire.decode_job(wire.encode_job(chunk)) == chunk
    assert wire.decode_job(wire.encode_job(reduce)) == reduce
    result = ChunkResult(7, 3, 0.5, {"ref": [0.1, 0.2]}, {"ref": Counter(ok=2, trap=1)},
                         Counter({"shared-race": 1}),
                         [Found("[case]\n", {"ref": OUTCOMES[0]}, _verdict(), ("xor", "add"))],
                         [(57, "Traceback ...")])
    back = wire.decode_result(wire.encode(result))
    assert back == result
    assert isinstance(back, ChunkResult) and isinstance(back.statuses["ref"], Counter)
    assert isinstance(back.found[0].ops, tuple) and isinstance(back.harness_errors[0], tuple)
    red = ReduceResult("s", "id", None, "s", {}, None, 10, 10, 50, 50, 3, 1.5)
    assert wire.decode_result(wire.encode(red)) == red


def test_bug_key_jobs_and_their_probe_answers_come_back_equal() -> None:
    setup = Setup(("ref", "llvm-cpu:O0"), "default", "default")
    shl = TypedOp(family="shl:int", template="{0} << {1}", operands=(Scalar.U8, Scalar.U32),
                  result=Scalar.U8)
    keying = Keying(True, (ProbeAnswer("llvm-cpu:O0", shl, True),))
    for job in (ChunkJob(setup, 1, (8,), keying), ReduceJob(setup, "[c]\n", "s", 5.0, keying),
                JudgeJob(setup, ("[a]\n", "[b]\n"), keying)):
        back = wire.decode_job(wire.encode_job(job))
        assert back == job and back.keying.known[0].op.operands == (Scalar.U8, Scalar.U32)
    probed = Probed([ProbeAnswer("llvm-cpu:O0", shl, False)], ProbeStats(3, 0.25))
    found = Found("[case]\n", {"ref": OUTCOMES[0]}, _verdict(), ("xor",),
                  {"wrong-code|llvm-cpu:O0|ops=xor": "wrong-code|llvm-cpu:O0|probe=xor:int"})
    judged = JudgeResult(["a", "b"], [found], probed)
    assert wire.decode_result(wire.encode(judged)) == judged
    red = ReduceResult("s", "id", None, "s", {}, None, 1, 1, 5, 5, 3, 1.5, out_of_time=True,
                       bug_key="k", probed=probed)
    assert wire.decode_result(wire.encode(red)) == red


def test_a_real_chunk_result_survives_the_wire() -> None:
    """A chunk the seeded xor → or bug finds something in (seed 59, see test_campaign): every
    output buffer's bits and every finding come back."""
    setup = Setup(("ref", "llvm-cpu-xor2or:O0"), "default", "default", (str(MISCOMPILE),))
    result = run_chunk(ChunkJob(setup, 0, (59,)))
    assert result.found, "seed 59 is a known xor2or finding"
    back = wire.decode_result(wire.encode(result))
    assert back == result
    assert isinstance(back, ChunkResult)
    for mine, theirs in zip(result.found, back.found, strict=True):
        assert mine.verdict == theirs.verdict
        for label, outcome in mine.outcomes.items():
            got = theirs.outcomes[label]
            assert type(got) is type(outcome)
            if isinstance(outcome, Ok):
                assert isinstance(got, Ok)
                assert {k: bits_of(b) for k, b in got.outputs.items()} == \
                    {k: bits_of(b) for k, b in outcome.outputs.items()}


def test_the_wire_is_plain_data() -> None:
    """msgpack maps, lists, strings, numbers and bytes only — no pickle, no ext types."""
    payload = wire.encode(Ok(outputs={"f": Buffer(Scalar.F32, from_bits([1], Scalar.F32))}))
    plain = msgpack.unpackb(payload, raw=False)
    assert plain == {"!": "Ok", "outputs": {"f": {"!": "Buffer", "ty": "f32", "shape": [1],
                                                  "bits": b"\x01\x00\x00\x00"}},
                     "stats": {"!": "Stats", "seconds": {}, "artefacts": {},
                               "wave_size": None}}
    with pytest.raises(wire.WireError, match=r"not a wire message|expected"):
        wire.decode(pickle.dumps(ChunkJob(Setup(("ref",), "d", "d"), 0, ())), wire.Job)


@pytest.mark.parametrize("value", [np.float32(1.5), {1, 2}, object()],
                         ids=["float32", "set", "object"])
def test_what_the_wire_cannot_carry_is_refused(value: object) -> None:
    # a float32 would widen to binary64 (and an x86 widening quiets a signalling NaN)
    with pytest.raises(wire.WireError, match="cannot send"):
        wire.encode({"x": value})


def test_bad_messages_are_refused() -> None:
    good = msgpack.unpackb(wire.encode(Trap(kind=TrapKind.DIV_BY_ZERO)), raw=False)
    missing = {k: v for k, v in good.items() if k != "kind"}
    with pytest.raises(wire.WireError, match="without its field 'kind'"):
        wire.decode(msgpack.packb(missing), Trap)
    with pytest.raises(wire.WireError, match="expected Trap, got Ok"):
        wire.decode(msgpack.packb({**good, "!": "Ok"}), Trap)
    with pytest.raises(wire.WireError, match="not a TrapKind"):
        wire.decode(msgpack.packb({**good, "kind": "segfault"}), Trap)
    with pytest.raises(wire.WireError, match="expected one of ChunkJob, JudgeJob, ReduceJob"):
        wire.decode_job(wire.encode(Trap(kind=TrapKind.DIV_BY_ZERO)))
