v_add_nc_u32_e64 v0, v1, 0x12345
v_fma_f32 v0, v1, 0x40490fdb, v2
v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf fi:1
v_add_f32_dpp v0, v1, v2 row_share:3 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_mov_b32_dpp v0, v1 dpp8:[7,6,5,4,3,2,1,0]
v_add_f16_e32 v0.h, v1.l, v2.h
v_mov_b16_e32 v0.l, 0x4400
v_add_f16_e64 v0.l, v1.h, v2.l
v_cndmask_b32_e32 v0, v1, v2, vcc_lo
v_cmpx_lt_f32_e32 v0, v1
v_cmp_lt_f32_e64 s0, v0, v1
v_dual_fmaak_f32 v0, v1, v2, 0x41200000 :: v_dual_mov_b32 v3, v4
v_dual_add_f32 v0, s1, v2 :: v_dual_mul_f32 v1, v3, v5
s_load_b64 s[0:1], s[2:3], 0x10
s_load_b32 s0, s[2:3], s4 offset:0x4
s_load_b32 s0, s[2:3], s4
s_waitcnt vmcnt(0) lgkmcnt(1)
s_waitcnt_vscnt null, 0x0
s_waitcnt_depctr depctr_va_vdst(0) depctr_sa_sdst(0)
s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(TRANS32_DEP_1)
s_clause 0x3
s_set_inst_prefetch_distance 0x1
s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)
s_mov_b32 s0, null
s_and_saveexec_b32 s0, vcc_lo
global_load_b32 v0, v1, s[2:3] offset:-16 glc dlc
global_store_b64 v[0:1], v[2:3], off
global_atomic_add_u32 v0, v1, v2, s[2:3] glc
scratch_load_b32 v0, off, off offset:4
scratch_store_b32 off, v1, s0
scratch_load_b32 v0, v1, off
ds_load_b32 v0, v1 offset:16
ds_store_2addr_b32 v0, v1, v2 offset0:1 offset1:2
buffer_gl0_inv
buffer_load_b32 v0, v1, s[0:3], 0 offen
flat_load_b32 v0, v[1:2] offset:8
v_interp_p10_f32 v0, v1, v2, v3 wait_exp:2
lds_param_load v0, attr1.y wait_vdst:3
v_writelane_b32 v1, s0, 5
v_readfirstlane_b32 s0, v1
v_fma_mix_f32 v0, v1, v2, v3 op_sel_hi:[1,0,0]
v_pk_add_u16 v0, v1, v2 op_sel:[1,1]
v_dot2_f32_f16 v0, v1, v2, v3
v_mad_u64_u32 v[0:1], null, v2, v3, v[4:5]
v_add_co_ci_u32_e32 v0, vcc_lo, v1, v2, vcc_lo
v_sub_co_u32 v0, s2, v1, v2
v_fma_mixlo_f16 v0, -|v1|, v2, v3 op_sel_hi:[1,0,1] clamp
global_atomic_cmpswap_b64 v[0:1], v[0:1], v[4:7], off glc
global_atomic_cmpswap_b64 v[0:1], v2, v[4:7], s[0:1] offset:-8 glc
global_atomic_cmpswap_b64 v[0:1], v[4:7], off
global_atomic_cmpswap_f32 v0, v[0:1], v[4:5], off glc
global_atomic_cmpswap_b32 v0, v[0:1], v[4:5], off glc
flat_atomic_cmpswap_b64 v[0:1], v[0:1], v[4:7] glc
flat_atomic_cmpswap_f32 v0, v[0:1], v[4:5] glc
buffer_atomic_cmpswap_b64 v[0:3], off, s[0:3], 0 glc
buffer_atomic_cmpswap_b32 v[0:1], v2, s[0:3], 0 idxen glc
