global_load_dword v0, v1, s[2:3] sc0 sc1 nt
global_store_dword v1, v2, s[2:3] offset:-1 nt
scratch_store_dword off, v2, off offset:64 sc0 sc1
v_accvgpr_write_b32 a1, v2
v_accvgpr_read_b32 v2, a1
v_mfma_f32_4x4x1_16b_f32 a[0:3], v1, v2, a[0:3] cbsz:1 abid:2 blgp:3
v_mov_b64_e32 v[0:1], v[2:3]
v_lshl_add_u64 v[0:1], v[2:3], 2, v[4:5]
buffer_wbl2 sc1
buffer_inv sc1
flat_load_dword a0, v[2:3]
v_fma_mix_f32 v0, v1, v2, v3 op_sel_hi:[1,1,0]
flat_atomic_cmpswap v0, v[2:3], v[4:5] offset:16 sc0
global_atomic_add v0, v1, v2, s[2:3] sc0
v_fma_mix_f32 v0, -v1, |v2|, v3 op_sel:[0,1,0] op_sel_hi:[1,1,0]
global_atomic_cmpswap_x2 v[0:1], v[0:1], v[4:7], off sc0
global_atomic_cmpswap_x2 v[0:1], v2, v[4:7], s[0:1] offset:-8 sc0
flat_atomic_cmpswap_x2 v[0:1], v[0:1], v[4:7] sc0
buffer_atomic_cmpswap_x2 v[0:3], off, s[0:3], 0 sc0
