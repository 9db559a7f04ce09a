global_load_dword v0, v1, s[2:3] glc slc
buffer_wbinvl1_vol
buffer_wbinvl1
v_mad_f32 v0, v1, -v2, v3
v_madak_f32 v0, v1, v2, 0x41200000
v_mac_f32_e64 v0, v1, v2 clamp
v_mfma_f32_32x32x1f32 a[0:31], v1, v2, a[0:31]
global_atomic_add_f32 v0, v1, s[2:3]
v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7]
flat_atomic_cmpswap v0, v[2:3], v[4:5] offset:16 glc
global_atomic_add v0, v1, v2, s[2:3] glc
global_atomic_cmpswap_x2 v[0:1], v[0:1], v[4:7], off glc
flat_atomic_cmpswap_x2 v[0:1], v[0:1], v[4:7] glc
buffer_atomic_cmpswap_x2 v[0:3], off, s[0:3], 0 glc
