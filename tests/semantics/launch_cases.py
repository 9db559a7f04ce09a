"""The hand-written semantics kernels of launches and shared memory: 2-D and 3-D grids, and
work-groups that share arrays across a barrier. `hand_cases.py` lists them with the others."""

from __future__ import annotations

from make_cases import bits, buf, case, out

from rgpu_fuzz.model.case import Case, ScalarArg
from rgpu_fuzz.model.scalars import Scalar


def launch_2d() -> Case:
    grid, block = (2, 3, 1), (4, 2, 1)
    n = 2 * 3 * 4 * 2
    k = """
use rgpu::*;

#[kernel] pub fn launch_2d(base: u32, gid: &mut [u32], coords: &mut [u32]) {
    let bx: u32 = block_idx_x();
    let by: u32 = block_idx_y();
    let block_linear: u32 = by * grid_dim_x() + bx;
    let local: u32 = thread_idx_y() * block_dim_x() + thread_idx_x();
    let g: usize = (block_linear * block_dim_x() * block_dim_y() + local) as usize;
    let x: u32 = bx * block_dim_x() + thread_idx_x();
    let y: u32 = by * block_dim_y() + thread_idx_y();
    gid[g] = base + g as u32;
    coords[g] = y * 1000 + x + grid_dim_y() * 100000;
}
"""
    return case("launch_2d", k, [ScalarArg(name="base", ty=Scalar.U32, bits=7000),
                                 out("gid", "u32", n), out("coords", "u32", n)],
                grid=grid, block=block)


def launch_3d() -> Case:
    grid, block = (2, 2, 2), (2, 3, 2)
    n = 8 * 12
    names = [f"{f}_{ax}" for f in ("tid", "bid", "bdim", "gdim") for ax in "xyz"]
    fns = {"tid": "thread_idx", "bid": "block_idx", "bdim": "block_dim", "gdim": "grid_dim"}
    writes = "".join(f"    {nm}[g] = {fns[nm[:-2]]}_{nm[-1]}();\n" for nm in names)
    sig = ", ".join(f"{nm}: &mut [u32]" for nm in names)
    k = f"""
use rgpu::*;

#[kernel]
pub fn launch_3d({sig}) {{
    let block_linear: u32 =
        (block_idx_z() * grid_dim_y() + block_idx_y()) * grid_dim_x() + block_idx_x();
    let local: u32 =
        (thread_idx_z() * block_dim_y() + thread_idx_y()) * block_dim_x() + thread_idx_x();
    let per_block: u32 = block_dim_x() * block_dim_y() * block_dim_z();
    let g: usize = (block_linear * per_block + local) as usize;
{writes}}}
"""
    return case("launch_3d", k, [out(nm, "u32", n) for nm in names], grid=grid, block=block)


def shared_reduce() -> Case:
    xs = [(i * 2654435761) & 0xFFFFFFFF for i in range(128)]
    k = """
use rgpu::*;

#[shared]
static mut BUF: [u32; 64] = [0u32; 64];

#[shared]
static mut PART: [u64; 64] = [0u64; 64];

#[kernel]
pub fn shared_reduce(
    a: &[u32],
    sums: &mut [u64],
    rev: &mut [u32],
    nbr: &mut [u32],
    lens: &mut [u32],
) {
    let t: usize = thread_idx_x() as usize;
    let g: usize = (block_idx_x() * block_dim_x()) as usize + t;
    unsafe {
        BUF[t] = a[g];
    }
    sync_threads();
    rev[g] = unsafe { BUF[63 - t] };
    nbr[g] = unsafe { BUF[(t + 1) % 64] };
    unsafe {
        PART[t] = BUF[t] as u64;
    }
    sync_threads();
    for k in 0u32..6u32 {
        let stride: usize = 32usize >> k;
        if t < stride {
            unsafe {
                PART[t] = PART[t] + PART[t + stride];
            }
        }
        sync_threads();
    }
    if t == 0 {
        sums[block_idx_x() as usize] = unsafe { PART[0] };
    }
    lens[g] = unsafe { BUF.len() } as u32 + unsafe { PART.len() } as u32;
}
"""
    return case("shared_reduce", k, [buf("a", "u32", xs), out("sums", "u64", 2),
                                     out("rev", "u32", 128), out("nbr", "u32", 128),
                                     out("lens", "u32", 128)],
                grid=(2, 1, 1), block=(64, 1, 1))


def shared_transpose() -> Case:
    xs = [bits("f32", i * 0.25 - 3.0) for i in range(128)]
    k = """
use rgpu::*;

#[shared]
static mut TILE: [f32; 64] = [0.0f32; 64];

#[kernel]
pub fn shared_transpose(a: &[f32], out: &mut [f32]) {
    let tx: usize = thread_idx_x() as usize;
    let ty: usize = thread_idx_y() as usize;
    let base: usize = block_idx_x() as usize * 64;
    unsafe {
        TILE[ty * 8 + tx] = a[base + ty * 8 + tx] * 2.0;
    }
    sync_threads();
    let v: f32 = unsafe { TILE[tx * 8 + ty] };
    sync_threads();
    unsafe {
        TILE[ty * 8 + tx] = v + 1.0;
    }
    sync_threads();
    out[base + ty * 8 + tx] = unsafe { TILE[(7 - ty) * 8 + (7 - tx)] };
}
"""
    return case("shared_transpose", k, [buf("a", "f32", xs), out("out", "f32", 128)],
                grid=(2, 1, 1), block=(8, 8, 1))


def launch_cases() -> list[Case]:
    return [launch_2d(), launch_3d(), shared_reduce(), shared_transpose()]
