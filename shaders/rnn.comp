// SPDX-License-Identifier: Apache-2.0
// lstm, gru and rnn: one workgroup of WG invocations per (direction,
// sequence), walking the sequence's steps in order with the state (h, c)
// and the gates' pre-activations in shared memory; barriers separate the
// phases of a step. Each dispatch writes one output (PART 0: Y, 1: Y_h,
// 2: Y_c), recomputing the recurrence. Generator provides: H, I, SEQ,
// BATCH, GATES, WG, PART, OP_LSTM / OP_GRU / OP_RNN, REVERSE (the node's
// one direction is reverse), LBR (gru's linear_before_reset),
// INPUT_FORGET, vkp_len(b), vkp_x(i) / vkp_w(i) / vkp_r(i), vkp_bias(d,
// which, g), vkp_h0 / vkp_c0 (d, b, j), vkp_peep(d, k), vkp_act(d, slot, v),
// vkp_clip(v), vkp_x_at(t, b), vkp_y_at(t, d, b), vkp_h_at(d, b),
// STORE(o, v).
shared float s_h[H];
shared float s_c[H];
shared float s_pre[GATES * H];
shared float s_rh[H];

// R's row g (of direction d) times v: the recurrent term.
float vkp_r_dot_h(uint d, uint g) {
  float acc = 0.0;
  for (uint k = 0u; k < H; ++k) acc += vkp_r((d * GATES * H + g) * H + k) * s_h[k];
  return acc;
}

void main() {
  uint d = gl_WorkGroupID.x / BATCH, b = gl_WorkGroupID.x % BATCH;
  uint tid = gl_LocalInvocationID.x;
  bool reverse = REVERSE != 0 || d == 1u;
  uint len = vkp_len(b);
  const uint gh = GATES * H;
  for (uint j = tid; j < H; j += WG) {
    s_h[j] = vkp_h0(d, b, j);
    s_c[j] = vkp_c0(d, b, j);
  }
  barrier();
  for (uint s = 0u; s < len; ++s) {
    uint t = reverse ? len - 1u - s : s;
    uint xo = vkp_x_at(t, b);
    // Phase 1: every gate row's W x + Wb (+ R h + Rb; gru's h gate adds
    // its recurrent term in phase 3).
    for (uint g = tid; g < gh; g += WG) {
      float v = vkp_bias(d, 0u, g);
      for (uint k = 0u; k < I; ++k) v += vkp_w((d * gh + g) * I + k) * vkp_x(xo + k);
#ifdef OP_GRU
      if (g < 2u * H) v += vkp_r_dot_h(d, g) + vkp_bias(d, 1u, g);
#else
      v += vkp_r_dot_h(d, g) + vkp_bias(d, 1u, g);
#endif
      s_pre[g] = v;
    }
    barrier();
#if defined(OP_RNN)
    for (uint j = tid; j < H; j += WG) s_h[j] = vkp_act(d, 0u, vkp_clip(s_pre[j]));
#elif defined(OP_GRU)
    // Gates z, r; r (.) h for the candidate.
    for (uint j = tid; j < H; j += WG) {
      float z = vkp_act(d, 0u, vkp_clip(s_pre[j]));
      float r = vkp_act(d, 0u, vkp_clip(s_pre[H + j]));
      s_pre[j] = z;
      s_pre[H + j] = r;
      s_rh[j] = r * s_h[j];
    }
    barrier();
    // The candidate and the new state (kept in the h gate's slot until
    // every invocation has read the old h).
    for (uint j = tid; j < H; j += WG) {
      uint row = d * gh + 2u * H + j;
      float rb = vkp_bias(d, 1u, 2u * H + j), rec = 0.0;
#if LBR
      rec = s_pre[H + j] * (vkp_r_dot_h(d, 2u * H + j) + rb);
#else
      for (uint k = 0u; k < H; ++k) rec += vkp_r(row * H + k) * s_rh[k];
      rec += rb;
#endif
      float cand = vkp_act(d, 1u, vkp_clip(s_pre[2u * H + j] + rec));
      float z = s_pre[j];
      s_pre[2u * H + j] = (1.0 - z) * cand + z * s_h[j];
    }
    barrier();
    for (uint j = tid; j < H; j += WG) s_h[j] = s_pre[2u * H + j];
#else
    // LSTM gates i o f c, peepholes i o f; input_forget: f = 1 - i.
    for (uint j = tid; j < H; j += WG) {
      float c = s_c[j];
      float ig = vkp_act(d, 0u, vkp_clip(s_pre[j] + vkp_peep(d, j) * c));
#if INPUT_FORGET
      float fg = 1.0 - ig;
#else
      float fg = vkp_act(d, 0u, vkp_clip(s_pre[2u * H + j] + vkp_peep(d, 2u * H + j) * c));
#endif
      float cg = vkp_act(d, 1u, vkp_clip(s_pre[3u * H + j]));
      c = fg * c + ig * cg;
      float og = vkp_act(d, 0u, vkp_clip(s_pre[H + j] + vkp_peep(d, H + j) * c));
      s_c[j] = c;
      s_h[j] = og * vkp_act(d, 2u, c);
    }
#endif
#if PART == 0
    for (uint j = tid; j < H; j += WG) STORE(vkp_y_at(t, d, b) + j, s_h[j]);
#endif
    barrier();
  }
#if PART == 0
  // Steps past the sequence's end are zero in Y.
  for (uint t = len; t < SEQ; ++t)
    for (uint j = tid; j < H; j += WG) STORE(vkp_y_at(t, d, b) + j, 0.0);
#elif PART == 1
  for (uint j = tid; j < H; j += WG) STORE(vkp_h_at(d, b) + j, s_h[j]);
#else
  for (uint j = tid; j < H; j += WG) STORE(vkp_h_at(d, b) + j, s_c[j]);
#endif
}
