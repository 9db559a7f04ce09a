use rgpu::*;

const N: usize = 64;

#[inline(never)]
fn mix(x: u32, y: u32) -> u32 {
    x.rotate_left(5) ^ y.wrapping_mul(0x9e37_79b9u32)
}

#[shared]
static mut TILE: [f32; 64] = [0.0f32; 64];

#[kernel]
pub fn k(a: &[u32], b: &[f32], out: &mut [u32], fout: &mut [f32], n: u32) {
    let tid: u32 = thread_idx_x();
    let gid: u32 = block_idx_x() * block_dim_x() + tid;
    unsafe { TILE[tid as usize] = b[(gid as usize) % b.len()]; }
    sync_threads();
    let mut acc: u32 = 0u32;
    for i in 0u32..4u32 {
        acc = acc + mix(a[((gid + i) as usize) % a.len()], i);
    }
    if gid < n {
        out[gid as usize] = acc;
        fout[gid as usize] = unsafe { TILE[((tid + 1u32) % 64u32) as usize] }.mul_add(2.0f32, -0.5f32);
    }
}
