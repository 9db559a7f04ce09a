v_pk_add_f16 v0, v1, v2 op_sel:[1,0] op_sel_hi:[0,1]
v_pk_mul_f16 v0, v1, v2 neg_lo:[1,0] neg_hi:[0,1]
v_pk_fma_f16 v0, v1, v2, v3 op_sel:[0,1,1] op_sel_hi:[1,0,0] clamp
v_pk_min_f16 v0, s1, 1.0 op_sel_hi:[1,0]
v_pk_max_f16 v0, v1, -1
v_pk_add_u16 v0, v1, v2 clamp
v_pk_sub_i16 v0, v1, 5 op_sel:[0,1]
v_pk_mad_u16 v0, v1, v2, v3 op_sel_hi:[0,0,0]
v_pk_lshlrev_b16 v0, 3, v1 op_sel_hi:[0,1]
v_fma_mix_f32 v0, -v1, |v2|, v3 op_sel:[1,0,0] op_sel_hi:[1,1,0]
v_fma_mixlo_f16 v0, v1, v2, v3 op_sel_hi:[1,1,1]
v_fma_mixhi_f16 v0, v1, v2, v3 op_sel:[0,1,0] op_sel_hi:[1,1,1] clamp
v_add_f16_sdwa v0, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:WORD_0
v_cvt_f16_u16_sdwa v0, v1 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1
v_mul_f16_sdwa v0, -v1, |v2| dst_sel:WORD_0 dst_unused:UNUSED_SEXT src0_sel:BYTE_1 src1_sel:WORD_1
v_add_u16_sdwa v0, sext(v1), v2 dst_sel:BYTE_0 dst_unused:UNUSED_PAD src0_sel:BYTE_2 src1_sel:WORD_1
v_floor_f16_sdwa v0, v1 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1
v_cmp_lt_f16_sdwa vcc, v1, v2 src0_sel:WORD_1 src1_sel:WORD_0
v_fma_f16 v0, v1, v2, v3 op_sel:[1,0,1,0]
v_ldexp_f16_e64 v0, v1, v2 clamp
v_max_f16_e64 v0, -v1, |v2| clamp
v_pack_b32_f16 v0, v1, v2 op_sel:[1,1,0]
v_div_fixup_f16 v0, v1, v2, v3
v_cvt_f16_i16_e64 v0, v1 clamp
v_med3_f16 v0, v1, v2, v3
v_rndne_f16_e64 v0, -v1
