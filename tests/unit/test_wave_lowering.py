"""The wave operations' lowerings (rgpu_fuzz.lower.{amdgcn_waves,nvptx_waves,host_waves} and
the rustc-amdgpu minicore), run end to end on hand-worked kernels.

Kernels run over one block of 40 threads with `x = thread_idx_x() + 1` (thread t holds
t + 1): at wave 32 that is a full wave (t = 0..31) and a partial one (t = 32..39, lanes 8..31
inactive); at wave 64 one partial wave (lanes 40..63 inactive). Every expected value below is
worked out by hand from the definitions in docs/language.md "Wave operations" (written next to
each as the arithmetic), never taken from a pipeline or the reference interpreter.

A pipeline answers `Unsupported("unsupported-instruction:<m>")` where the simulator does not
model an instruction LLVM chose (DPP, ds_bpermute, ... — being added to the simulator): such
a test skips, naming the instruction; any other answer must be the hand-worked values.
"""

from __future__ import annotations

import subprocess
from functools import cache

import numpy as np
import pytest

from rgpu_fuzz.lower import AmdgcnTarget
from rgpu_fuzz.lower.nvptx import NvptxTarget
from rgpu_fuzz.lower.waves import WaveOps
from rgpu_fuzz.model.case import BufferArg, Case, Fill, Launch
from rgpu_fuzz.model.outcome import Ok, Outcome, Unsupported
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines import toolchain
from rgpu_fuzz.pipelines.gpu_build import gpu_target, nvptx_target
from rgpu_fuzz.pipelines.options import PipelineError
from rgpu_fuzz.pipelines.registry import Registry
from tests.wave_ir import module_ir

THREADS = 40

# ---------------------------------------------------------------- every op alone, real LLVM

AMDGCN = [("gfx942", 0), ("gfx90a", 0), ("gfx1100", 0), ("gfx1100", 64)]


@pytest.mark.parametrize("strategy", list(WaveOps))
@pytest.mark.parametrize(("cpu", "wave"), AMDGCN, ids=lambda v: str(v))
def test_every_op_and_type_compiles_for_amdgcn(cpu: str, wave: int, strategy: WaveOps) -> None:
    """Each (operation, type) as a function of its own, through LLVM 22's AMDGPU back end at
    O3 (llvmlite): the instructions each strategy stands for are in the assembly."""
    text = module_ir(AmdgcnTarget(cpu=cpu, wave_size=wave, waveops=strategy))
    asm = toolchain.emit_assembly(toolchain.optimise(
        text, target := gpu_target(cpu, wave64=wave == 64), 3), target, 3)
    for inst in ("v_readfirstlane_b32", "v_readlane_b32", "ds_bpermute_b32", "v_mbcnt_lo"):
        assert inst in asm, inst
    if strategy is WaveOps.LADDER:
        assert "row_shr:1" in asm and "row_shr:8" in asm
        gfx9 = cpu != "gfx1100"
        assert ("row_bcast:15" in asm) is gfx9      # GFX9 joins rows by broadcast
        assert ("v_permlanex16_b32" in asm) is not gfx9
        assert "s_or_saveexec" in asm                # whole-wave mode (set.inactive/strict.wwm)


@pytest.mark.parametrize("strategy", list(WaveOps))
@pytest.mark.parametrize("sm", ["sm_90", "sm_80", "sm_70"])
def test_every_op_and_type_compiles_for_nvptx(sm: str, strategy: WaveOps) -> None:
    text = module_ir(NvptxTarget(cpu=sm, waveops=strategy))
    ptx = toolchain.emit_assembly(toolchain.optimise(text, target := nvptx_target(sm), 3),
                                  target, 3)
    for inst in ("shfl.sync.idx.b32", "shfl.sync.bfly.b32", "shfl.sync.up.b32",
                 "vote.sync.ballot.b32", "vote.sync.all.pred"):
        assert inst in ptx, inst
    # redux.sync exists from sm_80 (PTX ISA "redux.sync"); the ladder never uses it
    assert ("redux.sync" in ptx) is (strategy is WaveOps.INTRINSIC and sm != "sm_70")


def test_llc_22_accepts_the_amdgcn_module(tmp_path: object) -> None:
    """The same module through the distribution's llc-22, a second opinion on validity."""
    llc = "/usr/lib/llvm-22/bin/llc"
    import os

    if not os.access(llc, os.X_OK):
        pytest.skip("llc-22 not installed")
    src = os.path.join(str(tmp_path), "w.ll")
    with open(src, "w") as f:
        f.write(module_ir(AmdgcnTarget(cpu="gfx1100", wave_size=64, waveops=WaveOps.LADDER)))
    done = subprocess.run([llc, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx1100",
                           "-mattr=+wavefrontsize64", "-O0", src, "-o", os.devnull],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


# ---------------------------------------------------------------- hand-worked kernels

KERNEL_U32 = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32], wide: &mut [u64]) {
    let t = thread_idx_x() as usize;
    let x = thread_idx_x() + 1u32;
    let s = wave_sum(x);
    let p = wave_prefix_sum(x);
    let lo = wave_min(x);
    let hi = wave_max(x);
    let f = read_first_lane(x * 2u32);
    let r = read_lane(x, 3u32);
    let b = ballot(x % 3u32 == 0u32);
    let d = shuffle_down(x, 1u32);
    let xr = shuffle_xor(x, 1u32);
    let sh = shuffle(x, (lane_id() + 2u32) % 8u32);
    let all = wave_all(x < 1000u32);
    let any = wave_any(x == 5u32);
    let o = wave_or(1u32 << (lane_id() % 32u32));
    out[t * 13usize] = s;
    out[t * 13usize + 1usize] = p;
    out[t * 13usize + 2usize] = lo;
    out[t * 13usize + 3usize] = hi;
    out[t * 13usize + 4usize] = f;
    out[t * 13usize + 5usize] = r;
    out[t * 13usize + 6usize] = d;
    out[t * 13usize + 7usize] = xr;
    out[t * 13usize + 8usize] = sh;
    out[t * 13usize + 9usize] = (all as u32) * 10u32 + (any as u32);
    out[t * 13usize + 10usize] = o;
    out[t * 13usize + 11usize] = wave_size();
    out[t * 13usize + 12usize] = lane_id();
    wide[t] = b;
}
"""
U32_FIELDS = ("sum", "prefix", "min", "max", "first", "lane3", "down", "xor", "shuffle",
              "votes", "or", "size", "lane")


def _wave(t: int, ws: int) -> tuple[int, int, int]:
    """(lane, first thread of its wave, last thread of its wave) for thread t."""
    base = t - t % ws
    return t % ws, base, min(base + ws, THREADS) - 1


def expected_u32(field: str, t: int, ws: int) -> int:
    """The hand-worked value of `field` for thread t (x = t + 1) at wave size ws."""
    lane, base, last = _wave(t, ws)
    xs = range(base + 1, last + 2)           # the x of the wave's active lanes
    match field:
        case "sum":      # ws 32: 1+..+32 = 528, 33+..+40 = 292; ws 64: 1+..+40 = 820
            return sum(xs)
        case "prefix":   # inclusive: base+1 + ... + t+1
            return sum(range(base + 1, t + 2))
        case "min":
            return base + 1
        case "max":
            return last + 1
        case "first":    # the lowest active lane holds 2·(base + 1)
            return 2 * (base + 1)
        case "lane3":    # lane 3 holds base + 4
            return base + 4
        case "down":     # lane + 1 when it is an active lane, else own x
            return t + 2 if t + 1 <= last else t + 1
        case "xor":      # lane ^ 1: thread t ^ 1 (40 and 32 are even: always active)
            return (t ^ 1) + 1
        case "shuffle":  # lane (lane + 2) % 8 of the same wave
            return base + (lane + 2) % 8 + 1
        case "votes":    # all x < 1000; any x == 5 only in the wave holding t = 4
            return 10 + int(base <= 4 <= last)
        case "or":       # bits lane % 32 of every active lane
            return sum({1 << (i % 32) for i in range(last - base + 1)})
        case "size":
            return ws
        case "lane":
            return lane
    raise AssertionError(field)


def expected_ballot(t: int, ws: int) -> int:
    """Bit i set for each active lane i whose x = base + i + 1 is a multiple of 3 (ws 32,
    wave 1: x = 33, 36, 39 at lanes 0, 3, 6, so 0b1001001 = 73)."""
    _, base, last = _wave(t, ws)
    return sum(1 << i for i in range(last - base + 1) if (base + i + 1) % 3 == 0)


KERNEL_WIDE = """use rgpu::*;
#[kernel]
pub fn k(wide: &mut [i64]) {
    let t = thread_idx_x() as usize;
    let y = (thread_idx_x() as i64) - 20i64;
    let s = wave_sum(y * 1000000000000i64);
    let m = wave_min(y as i8);
    let u = wave_max(y as i8 as u8);
    let g = read_first_lane((y as f64) * 0.5f64);
    let v = shuffle(y, 3u32);
    let e = shuffle_xor(y % 2i64 == 0i64, 1u32);
    let p = wave_prefix_sum(y as i16);
    wide[t * 7usize] = s;
    wide[t * 7usize + 1usize] = m as i64;
    wide[t * 7usize + 2usize] = u as i64;
    wide[t * 7usize + 3usize] = g.to_bits() as i64;
    wide[t * 7usize + 4usize] = v;
    wide[t * 7usize + 5usize] = e as i64;
    wide[t * 7usize + 6usize] = p as i64;
}
"""
WIDE_FIELDS = ("sum", "min_i8", "max_u8", "first_f64", "shuffle_i64", "xor_bool", "prefix_i16")


def expected_wide(field: str, t: int, ws: int) -> int:
    """y = t − 20 for thread t (−20..19)."""
    lane, base, last = _wave(t, ws)
    ys = [i - 20 for i in range(base, last + 1)]
    match field:
        case "sum":         # ws 32: (−20+..+11)·10¹², (12+..+19)·10¹²; ws 64: −20·10¹²
            return sum(ys) * 10**12
        case "min_i8":
            return min(ys)
        case "max_u8":      # u8 of −20..−1 is 236..255
            return max(y & 0xFF for y in ys)
        case "first_f64":   # (base − 20)·0.5 as IEEE bits: −10.0 or 6.0
            return int(np.float64((base - 20) * 0.5).view(np.int64))
        case "shuffle_i64":  # lane 3: base + 3 − 20
            return base + 3 - 20
        case "xor_bool":    # thread t ^ 1 has y ≡ t ^ 1 (mod 2): even when t is odd
            return int(t % 2 == 1)
        case "prefix_i16":
            return sum(ys[:lane + 1])
    raise AssertionError(field)


KERNEL_LOOP = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    let t = thread_idx_x() as usize;
    let x = thread_idx_x() + 1u32;
    let mut acc = 0u32;
    for i in 0u32..3u32 {
        let s = wave_sum(x + i);
        acc = acc + s;
    }
    if thread_idx_x() / wave_size() == 0u32 {
        let m = wave_max(x);
        acc = acc + m;
    } else {
        let m = wave_min(x);
        acc = acc + m * 1000u32;
    }
    let mut j = 0u32;
    while j < thread_idx_x() / wave_size() + 1u32 {
        let c = wave_sum(1u32);
        acc = acc + c * 100000u32;
        j = j + 1u32;
    }
    out[t] = acc;
}
"""


def expected_loop(t: int, ws: int) -> int:
    """Σ_i Σ(x + i) over the wave; plus the wave's max in wave 0, its min · 1000 in the
    others; plus, for each of the wave's (index + 1) iterations of the `while`, its active
    lane count · 100000. ws 32: wave 0 3·528 + 32·3 + 32 + 32·100000 = 3201712, wave 1
    3·292 + 8·3 + 33·1000 + 2·8·100000 = 1633900; ws 64: 3·820 + 40·3 + 40 + 40·100000 =
    4002620."""
    _, base, last = _wave(t, ws)
    n = last - base + 1
    s = sum(range(base + 1, last + 2))
    arm = last + 1 if base == 0 else (base + 1) * 1000
    return 3 * s + 3 * n + arm + (base // ws + 1) * n * 100000


def _case(kernel: str, buffers: dict[str, tuple[Scalar, int]]) -> Case:
    return Case(entry="k", kernel=kernel, launch=Launch(block=(THREADS, 1, 1)),
                args=tuple(BufferArg(name=n, elem=e, len=ln, init=Fill(0))
                           for n, (e, ln) in buffers.items()))


KERNEL_SUM = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    let t = thread_idx_x() as usize;
    let x = thread_idx_x() + 1u32;
    let s = wave_sum(x);
    out[t] = s;
}
"""

KERNEL_BALLOT = """use rgpu::*;
#[kernel]
pub fn k(wide: &mut [u64]) {
    let t = thread_idx_x() as usize;
    let x = thread_idx_x() + 1u32;
    let b = ballot(x % 3u32 == 0u32);
    wide[t] = b;
}
"""

CASES = {
    "u32": _case(KERNEL_U32, {"out": (Scalar.U32, 13 * THREADS), "wide": (Scalar.U64, THREADS)}),
    "wide": _case(KERNEL_WIDE, {"wide": (Scalar.I64, 7 * THREADS)}),
    "loop": _case(KERNEL_LOOP, {"out": (Scalar.U32, THREADS)}),
    "ballot": _case(KERNEL_BALLOT, {"wide": (Scalar.U64, THREADS)}),
    "sum": _case(KERNEL_SUM, {"out": (Scalar.U32, THREADS)}),
}

@cache
def _run(spec: str, name: str) -> Outcome:
    return Registry().create(spec).run(CASES[name])


def _outputs(spec: str, name: str) -> dict[str, np.ndarray]:
    got = _run(spec, name)
    assert isinstance(got, Ok), f"{spec}: {got}"
    return {n: b.values for n, b in got.outputs.items()}


HOST = ["llvm-cpu:O0:wave=32", "llvm-cpu:O2:wave=32", "llvm-cpu:O3", "llvm-cpu:O0:wave=64"]
SIM = [f"amdgpu-sim:{t}:O{o}{w}" for t in ("gfx942", "gfx90a", "gfx1100") for o in (0, 3)
       for w in ("", ":waveops=ladder")]
RUSTC = ["rustc-amdgpu:gfx942:O0", "rustc-amdgpu:gfx942:O2", "rustc-amdgpu:gfx1100:O2"]
ALL = HOST + SIM + [pytest.param(s, marks=(pytest.mark.slow, pytest.mark.rustc)) for s in RUSTC]


def _ws(spec: str) -> int:
    return Registry().create(spec).wave_size


@pytest.mark.parametrize("spec", ALL)
def test_u32_kernel(spec: str) -> None:
    ws = _ws(spec)
    out = _outputs(spec, "u32")
    got = out["out"].reshape(THREADS, len(U32_FIELDS))
    for j, field in enumerate(U32_FIELDS):
        want = [expected_u32(field, t, ws) for t in range(THREADS)]
        assert [int(v) for v in got[:, j]] == want, (spec, field)
    assert [int(v) for v in out["wide"]] == [expected_ballot(t, ws) for t in range(THREADS)]


@pytest.mark.parametrize("spec", ALL)
def test_wide_kernel(spec: str) -> None:
    ws = _ws(spec)
    got = _outputs(spec, "wide")["wide"].reshape(THREADS, len(WIDE_FIELDS))
    for j, field in enumerate(WIDE_FIELDS):
        want = [expected_wide(field, t, ws) for t in range(THREADS)]
        assert [int(v) for v in got[:, j]] == want, (spec, field)


_FOLD = pytest.mark.xfail(
    strict=True, raises=AssertionError,
    reason="LLVM 22.1 InstCombine folds wave.reduce.add of a constant: the loop's "
           "wave_sum(1u32) over 40 lanes reads 1, not 40 (llvm/llvm-project#193142; "
           "docs/findings/wave-reduce-fold.md); O0 and the DPP ladder are right")


@pytest.mark.parametrize("spec", [*HOST, "amdgpu-sim:gfx1100:O0",
                                  "amdgpu-sim:gfx942:O3:waveops=ladder",
                                  pytest.param("amdgpu-sim:gfx942:O3", marks=_FOLD)])
def test_wave_ops_in_a_loop_and_a_wave_uniform_if(spec: str) -> None:
    ws = _ws(spec)
    got = _outputs(spec, "loop")["out"]
    assert [int(v) for v in got] == [expected_loop(t, ws) for t in range(THREADS)]


def test_the_hand_worked_values_spelled_out() -> None:
    """A few of the expectations as plain numbers (the docstrings' arithmetic)."""
    assert expected_u32("sum", 0, 32) == 528 and expected_u32("sum", 39, 32) == 292
    assert expected_u32("sum", 39, 64) == 820
    assert expected_u32("down", 31, 32) == 32 and expected_u32("down", 31, 64) == 33
    assert expected_ballot(35, 32) == 73
    assert expected_loop(0, 32) == 3201712 and expected_loop(39, 32) == 1633900
    assert expected_loop(5, 64) == 4002620
    assert expected_wide("sum", 0, 64) == -20 * 10**12


# ---------------------------------------------------------------- pipelines' wave sizes


def test_pipelines_declare_their_wave_size() -> None:
    r = Registry()
    assert r.create("amdgpu-sim:gfx942").wave_size == 64
    assert r.create("amdgpu-sim:gfx1100").wave_size == 32
    assert r.create("amdgpu-sim:gfx1100:wave64").wave_size == 64
    assert r.create("rustc-amdgpu:gfx1100:wave64").wave_size == 64
    assert r.create("llvm-cpu").wave_size == 64
    assert r.create("llvm-cpu:wave=32").wave_size == 32
    assert r.create("amdgpu-sim:gfx942:waveops=ladder").label == \
        "amdgpu-sim:gfx942:waveops=ladder"
    with pytest.raises(PipelineError, match="waveops=dpp"):
        r.create("amdgpu-sim:waveops=dpp")


def test_gfx1100_wave64_builds_a_wave64_code_object() -> None:
    """`wave64` reaches LLVM: the kernel descriptor asks for wave64 (no
    `.amdhsa_wavefront_size32 1`) and the ballot is 64 bits wide."""
    from rgpu_fuzz.pipelines.gpu_build import GpuBuild, build_gpu

    for wave64, flag in ((False, ".amdhsa_wavefront_size32 1"),
                         (True, ".amdhsa_wavefront_size32 0")):
        got = build_gpu(CASES["u32"], gpu_target("gfx1100", wave64=wave64), 2)
        assert isinstance(got, GpuBuild), got
        assert flag in got.asm
        assert ("llvm.amdgcn.ballot.i64" in got.ir) is wave64


@pytest.mark.rustc
def test_rustc_cpu_says_unsupported_once() -> None:
    got = Registry().create("rustc-cpu:O2").run(CASES["u32"])
    assert isinstance(got, Unsupported) and got.features == ("wave",), got


def test_llvm_22_folds_a_wave_sum_of_a_constant(tmp_path: object) -> None:
    """docs/findings/wave-reduce-fold.md: LLVM 22.1's InstCombine folds `wave.reduce.add(1)`
    and `wave.reduce.xor(1)` to 1, which is right only when one lane is active (the sum of
    c over n active lanes is c·n; the xor is c when n is odd). Fixed upstream by
    llvm/llvm-project#193142; this fails once the installed LLVM has the fix."""
    import os

    opt = "/usr/lib/llvm-22/bin/opt"
    if not os.access(opt, os.X_OK):
        pytest.skip("opt-22 not installed")
    src = os.path.join(str(tmp_path), "r.ll")
    with open(src, "w") as f:
        f.write('target triple = "amdgcn-amd-amdhsa"\n'
                "define i32 @sum() {\n"
                "  %r = call i32 @llvm.amdgcn.wave.reduce.add.i32(i32 1, i32 0)\n"
                "  ret i32 %r\n}\n")
    done = subprocess.run([opt, "-S", "-mcpu=gfx1100", "-passes=instcombine", src],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    body = done.stdout.split("define i32 @sum()", 1)[1].split("}", 1)[0]
    assert "wave.reduce" not in body and "ret i32 1" in body


def test_the_seeded_ballot_plugin_is_wrong_code_only_where_lanes_32_up_vote() -> None:
    """tests/plugins/wave_ballot_low32.py on a ballot of `x % 3 == 0`: at wave 64 the lanes
    32..38 of the one wave have votes at x = 33, 36, 39 (bits 32, 35, 38), so the plugin's ballot
    differs from the hand-worked one; on gfx1100 (wave 32) every ballot fits in 32 bits and
    the plugin changes nothing."""
    from pathlib import Path

    reg = Registry()
    reg.load_plugin(Path(__file__).resolve().parents[1] / "plugins" / "wave_ballot_low32.py")
    for spec, ws in (("amdgpu-sim-ballot32:gfx942:O2", 64), ("amdgpu-sim-ballot32:gfx1100", 32)):
        got = reg.create(spec).run(CASES["ballot"])
        assert isinstance(got, Ok), got
        values = [int(v) for v in got.outputs["wide"].values]
        want = [expected_ballot(t, ws) for t in range(THREADS)]
        assert values == [w & 0xFFFF_FFFF for w in want]
        assert (values != want) is (ws == 64)


def test_the_seeded_inactive_lane_sum_is_wrong_only_in_the_partial_wave() -> None:
    """tests/plugins/wave_sum_inactive.py on gfx1100 (wave 32), `wave_sum(x)` with x = t + 1:
    wave 0 is full (528, as without the plugin); wave 1 has 8 active lanes, 24 inactive, and
    its first lane holds 33, so the seeded sum is 292 + 33·24 = 1084 instead of 292."""
    from pathlib import Path

    reg = Registry()
    reg.load_plugin(Path(__file__).resolve().parents[1] / "plugins" / "wave_sum_inactive.py")
    for level in (0, 2):
        got = reg.create(f"amdgpu-sim-sum-inactive:gfx1100:O{level}").run(CASES["sum"])
        assert isinstance(got, Ok), got
        assert [int(v) for v in got.outputs["out"].values] == [528] * 32 + [1084] * 8
