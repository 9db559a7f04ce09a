v_add_u32_sdwa v0, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:WORD_0
v_add_u32_sdwa v0, sext(v1), v2 dst_sel:DWORD dst_unused:UNUSED_PRESERVE src0_sel:BYTE_1 src1_sel:DWORD
v_mov_b32_sdwa v5, v6 dst_sel:BYTE_2 dst_unused:UNUSED_SEXT src0_sel:WORD_1
v_add_f32_sdwa v0, -v1, |v2| dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:DWORD
v_cmp_eq_u32_sdwa vcc, v1, v2 src0_sel:BYTE_0 src1_sel:WORD_1
v_cmp_eq_u32_sdwa s[2:3], v1, v2 src0_sel:BYTE_0 src1_sel:DWORD
v_add_u32_sdwa v0, s1, v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD
v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
v_add_u32_dpp v0, v1, v2 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_add_f32_dpp v0, -v1, |v2| row_ror:7 row_mask:0x3 bank_mask:0x5
v_mov_b32_dpp v0, v1 wave_shr:1 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v0, v1 row_bcast:15 row_mask:0xa bank_mask:0xf
v_mov_b32_dpp v0, v1 row_mirror row_mask:0xf bank_mask:0xf
v_add_f32_e64 v0, -v1, |v2| clamp mul:2
v_fma_f32 v0, -|v1|, v2, -v3 div:2
v_fma_f64 v[0:1], v[2:3], -v[4:5], 1.0 clamp
v_mad_u64_u32 v[0:1], s[2:3], v2, v3, v[4:5]
v_add_co_u32_e64 v0, s[4:5], v1, v2
v_addc_co_u32_e64 v0, s[4:5], v1, v2, s[6:7]
v_addc_co_u32_e32 v0, vcc, v1, v2, vcc
v_cndmask_b32_e64 v0, v1, v2, s[4:5]
v_div_scale_f32 v0, vcc, v1, v2, v1
v_fma_f16 v0, v1, v2, v3 op_sel:[1,0,0,1]
v_pk_add_f16 v0, v1, v2 op_sel:[1,0] op_sel_hi:[0,1] neg_lo:[1,0] neg_hi:[0,1]
v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7] op_sel_hi:[0,0,1]
v_readlane_b32 s0, v1, s2
v_writelane_b32 v1, s0, 5
v_readlane_b32 s0, v1, m0
v_mov_b32_e32 v0, ttmp3
s_mov_b64 s[0:1], flat_scratch
s_mov_b32 m0, s3
s_mov_b64 exec, vcc
s_mov_b32 s0, vcc_hi
s_mov_b64 s[0:1], src_shared_base
s_mov_b32 s0, 0x12345678
s_add_u32 s0, s1, -16
s_mov_b32 s0, 64
s_mov_b64 s[0:1], -1
s_mov_b64 s[0:1], 0.5
s_movk_i32 s0, 0x8000
s_cmpk_eq_u32 s0, 0x10
s_addk_i32 s0, 0x7
s_getreg_b32 s0, hwreg(HW_REG_MODE, 0, 4)
s_getreg_b32 s0, hwreg(HW_REG_HW_ID)
s_setreg_b32 hwreg(HW_REG_MODE, 4, 4), s0
s_waitcnt vmcnt(1) lgkmcnt(2)
s_waitcnt expcnt(3)
s_waitcnt vmcnt(63) expcnt(7) lgkmcnt(15)
s_sendmsg sendmsg(MSG_INTERRUPT)
s_setprio 3
s_sleep 2
s_trap 2
s_barrier
s_nop 7
s_load_dword s0, s[2:3], 0x1fc
s_load_dwordx4 s[0:3], s[2:3], s4
s_load_dwordx8 s[0:7], s[2:3], 0x0 glc
s_buffer_load_dword s0, s[4:7], 0x10
s_store_dword s0, s[2:3], 0x8
s_memtime s[0:1]
s_dcache_inv
ds_read2_b32 v[0:1], v2 offset0:1 offset1:4
ds_write2st64_b64 v0, v[2:3], v[4:5] offset0:2 offset1:3
ds_read_b32 v0, v1 offset:65535
ds_write_b16 v0, v1 offset:2
ds_add_rtn_u32 v0, v1, v2 offset:8
ds_swizzle_b32 v0, v1 offset:swizzle(QUAD_PERM,0,1,2,3)
ds_bpermute_b32 v0, v1, v2 offset:4
ds_read_b128 v[0:3], v4
flat_load_dword v0, v[2:3] offset:4095
flat_store_dwordx2 v[0:1], v[2:3] offset:8
flat_atomic_cmpswap v[2:3], v[4:5] offset:16
global_load_dword v0, v[2:3], off offset:-4096
global_load_ubyte v0, v1, s[2:3] offset:1
global_atomic_add_f32 v0, v1, s[2:3]
buffer_load_dword v0, off, s[0:3], 0 offset:4
buffer_load_dword v0, v1, s[0:3], s4 idxen
buffer_load_dword v0, v[2:3], s[0:3], 0 idxen offen
buffer_store_byte v0, v1, s[4:7], 0 offen offset:7
scratch_load_dword v0, v1, off offset:-8
scratch_load_dword v0, off, s2 offset:16
v_cvt_f16_f32_e32 v0, v1
v_mov_b32_e32 v0, 0x3e22f983
v_mov_b32_e32 v0, 0.15915494
v_rcp_f64_e32 v[0:1], 0x40080000
v_bfe_u32 v0, v1, 8, 4
v_lshlrev_b64 v[0:1], 3, v[2:3]
v_mac_f16_e32 v0, v1, v2
v_mul_hi_u32 v0, s0, v1
v_cmpx_lt_f32_e64 s[0:1], v0, v1
v_cmp_class_f32_e64 s[0:1], v0, 3
