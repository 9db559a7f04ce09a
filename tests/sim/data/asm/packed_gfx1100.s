v_pk_add_f16 v0, v1, v2 op_sel:[1,0] op_sel_hi:[0,1]
v_pk_fma_f16 v0, v1, v2, v3 neg_lo:[1,1,0] neg_hi:[0,0,1] clamp
v_pk_max_f16 v0, v1, v2 clamp
v_pk_add_i16 v0, v1, 4 op_sel_hi:[1,0]
v_fma_mix_f32 v0, v1, v2, v3 op_sel_hi:[1,1,0]
v_fma_mixlo_f16 v0, v1, v2, v3 op_sel:[1,0,0] op_sel_hi:[1,1,1]
v_add_f16_e32 v0.h, v1.h, v2.l
v_add_f16_e64 v0.l, -v1.h, |v2.l| clamp
v_fma_f16 v0.h, v1.l, v2.h, v3.l
v_fmac_f16_e32 v0.l, v1.h, v2.l
v_sqrt_f16_e32 v0.h, v1.l
v_cvt_f16_f32_e32 v0.h, v1
v_cvt_f32_f16_e32 v0, v1.h
v_cmp_lt_f16_e32 vcc_lo, v1.h, v2.l
v_cndmask_b16 v0.l, v1.l, v2.h, s0
v_pack_b32_f16 v0, v1.h, -v2.l
v_ldexp_f16_e32 v0.l, v1.l, v2.l
v_div_fixup_f16 v0.l, v1.h, v2.l, v3.l
v_max_f16_e64 v0.h, v1.l, 1.0
