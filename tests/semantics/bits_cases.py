"""Float bit patterns that must survive exactly (docs/language.md
"Semantics"): a signalling NaN, a NaN payload or a negative NaN held in a `const`, passed
through a local, an array, a helper, an `if`, a scalar argument, negated or `abs`-ed (sign
operations, which IEEE 754 and Rust define on the bits). Rust keeps these bits at -O0 and
-O2; a Python `float` on the way (f32 -> f64 widening sets the quiet bit) would not."""

from __future__ import annotations

from make_cases import buf, case, out

from rgpu_fuzz.model.case import Case, ScalarArg
from rgpu_fuzz.model.scalars import Scalar


def float_bits_exact() -> Case:
    k = """
use rgpu::*;

const S: f32 = f32::from_bits(0x7f80_0001u32);
const NEG_S: f32 = f32::from_bits(0xff80_1234u32);
const Q: f32 = f32::from_bits(0x7fc0_0005u32);
const ALIAS: f32 = S;
const NEGATED: f32 = -S;
const D: f64 = f64::from_bits(0x7ff0_0000_0000_0001u64);
const DQ: f64 = f64::from_bits(0xfff8_0000_dead_beefu64);
const DALIAS: f64 = -D;

#[inline(never)]
fn pass(x: f32) -> f32 {
    x
}

fn konst() -> f32 {
    S
}

#[kernel]
pub fn float_bits_exact(x: f32, y: f64, a: &[u32], bits32: &mut [u32], bits64: &mut [u64]) {
    bits32[0] = S.to_bits();
    bits32[1] = NEG_S.to_bits();
    bits32[2] = Q.to_bits();
    bits32[3] = ALIAS.to_bits();
    bits32[4] = NEGATED.to_bits();
    bits32[5] = (-S).to_bits();
    bits32[6] = S.abs().to_bits();
    let local: f32 = S;
    bits32[7] = local.to_bits();
    let arr: [f32; 4] = [S; 4];
    bits32[8] = arr[(a[0] % 4u32) as usize].to_bits();
    let chosen: f32 = if a[0] > 100u32 { Q } else { S };
    bits32[9] = chosen.to_bits();
    bits32[10] = pass(S).to_bits();
    bits32[11] = konst().to_bits();
    bits32[12] = x.to_bits();
    bits32[13] = pass(x).to_bits();
    bits32[14] = f32::from_bits(a[1]).to_bits();
    bits32[15] = f32::from_bits(0x7f80_0001u32).to_bits();
    bits64[0] = D.to_bits();
    bits64[1] = DQ.to_bits();
    bits64[2] = DALIAS.to_bits();
    bits64[3] = y.to_bits();
    bits64[4] = f64::from_bits(0x7ff0_0000_0000_0001u64).to_bits();
}
"""
    return case("float_bits_exact", k, [
        ScalarArg(name="x", ty=Scalar.F32, bits=0xFF80_0003),
        ScalarArg(name="y", ty=Scalar.F64, bits=0x7FF0_0000_0000_0007),
        buf("a", "u32", [7, 0x7FA0_0001]), out("bits32", "u32", 16), out("bits64", "u64", 5)])


def bits_cases() -> list[Case]:
    return [float_bits_exact()]
