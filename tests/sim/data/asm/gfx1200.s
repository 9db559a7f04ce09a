s_load_b32 s0, s[0:1], 0x10
s_load_b32 s0, s[0:1], s2 offset:0x10
s_load_b32 s0, s[0:1], -0x10
s_load_b32 s0, s[0:1], 0x10 scope:SCOPE_SYS
s_buffer_load_b32 s0, s[0:3], s4 offset:0x8
global_load_b32 v1, v0, s[0:1] offset:-16 scope:SCOPE_SYS
global_load_b32 v1, v[0:1], off th:TH_LOAD_NT scope:SCOPE_DEV
global_store_b32 v0, v1, s[0:1] offset:524287
global_atomic_add_u32 v2, v0, v1, s[0:1] th:TH_ATOMIC_RETURN
global_atomic_add_u32 v0, v1, s[0:1] scope:SCOPE_DEV
flat_load_b32 v1, v[2:3] offset:8
scratch_load_b32 v1, off, s2 offset:8
scratch_store_b32 v1, v2, off
scratch_load_b32 v1, v2, off offset:-4
buffer_load_b32 v1, v2, s[4:7], s3 offen offset:4
buffer_store_b32 v1, off, s[4:7], null
s_wait_loadcnt 0x0
s_wait_storecnt 0x1
s_wait_dscnt 0x2
s_wait_kmcnt 0x0
s_wait_samplecnt 0x0
s_wait_bvhcnt 0x0
s_wait_expcnt 0x0
s_wait_loadcnt_dscnt 0x0
s_wait_storecnt_dscnt 0x0
ds_load_b32 v1, v2 offset:4
v_max_num_f32_e32 v1, v2, v3
s_barrier_signal -1
s_barrier_wait 0xffff
global_wb scope:SCOPE_SYS
global_inv scope:SCOPE_SYS
global_atomic_cmpswap_b64 v[0:1], v[0:1], v[4:7], off th:TH_ATOMIC_RETURN
global_atomic_cmpswap_b64 v[0:1], v2, v[4:7], s[0:1] offset:-8 th:TH_ATOMIC_RETURN
global_atomic_cmpswap_b32 v0, v[0:1], v[4:5], off th:TH_ATOMIC_RETURN
flat_atomic_cmpswap_b64 v[0:1], v[0:1], v[4:7] th:TH_ATOMIC_RETURN
buffer_atomic_cmpswap_b64 v[0:3], off, s[0:3], null th:TH_ATOMIC_RETURN
