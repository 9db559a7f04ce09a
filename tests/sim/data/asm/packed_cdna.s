v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7] op_sel:[1,0,0] op_sel_hi:[0,1,1] neg_lo:[1,0,0]
v_pk_add_f32 v[0:1], v[2:3], s[4:5] neg_hi:[0,1]
v_pk_mul_f32 v[0:1], v[2:3], 1.0 op_sel_hi:[1,0]
v_pk_add_f32 v[0:1], v[2:3], 0 neg_lo:[1,1] neg_hi:[1,1] clamp
v_pk_mov_b32 v[0:1], v[2:3], v[4:5] op_sel:[1,0]
