v_bitop3_b32 v4, v1, v2, v3 bitop3:0x96
v_bitop3_b32 v4, v1, v2, v3 bitop3:1
v_bitop3_b32 v4, v1, v2, v3 bitop3:10
v_bitop3_b32 v4, v1, v2, v3 bitop3:0xb
v_bitop3_b32 v4, v1, v2, v3
v_bitop3_b32 v4, s1, 1.0, v3 bitop3:0xe8
v_bitop3_b32 v255, -1, v2, s5 bitop3:0xff
v_bitop3_b16 v4, v1, v2, v3 bitop3:0x96 op_sel:[1,1,1,1]
v_bitop3_b16 v4, v1, v2, v3 bitop3:0x40 op_sel:[0,1,0,0]
v_bitop3_b16 v4, v1, v2, v3 bitop3:0x80
v_permlane16_swap_b32_e32 v1, v2
v_permlane32_swap_b32_e32 v1, v2
v_permlane16_swap_b32_e64 v1, v2
v_permlane16_swap_b32_e64 v1, v2 bound_ctrl:1
v_permlane32_swap_b32_e64 v1, v2 fi:1
v_permlane32_swap_b32_e64 v255, v200 bound_ctrl:1 fi:1
v_cvt_pk_bf16_f32 v1, v2, v3
v_cvt_pk_f16_f32 v1, v2, v3
v_cvt_f32_bf16_e32 v1, v2
v_prng_b32_e32 v1, v2
v_ashr_pk_i8_i32 v1, v2, v3, v4
v_ashr_pk_u8_i32 v1, v2, v3, v4
v_cvt_scalef32_pk_f32_fp8 v[2:3], v1, v4
v_minimum3_f32 v1, v2, v3, v4
v_maximum3_f32 v1, v2, v3, v4
v_cvt_sr_bf16_f32 v1, v2, v3
v_cvt_sr_f16_f32 v1, v2, v3
v_dot2c_f32_bf16_e32 v1, v2, v3
