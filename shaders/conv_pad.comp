// SPDX-License-Identifier: Apache-2.0
// A convolution's input copied into zero-padded planes, the first of the two
// dispatches of a padded implicit GEMM (conv_gemm_blocked.comp with
// UNCHECKED): element i of the [BATCH, C, XD, XH, XW] copy is input element
// (d - PF, h - PT, w - PL) of its plane, or 0 outside it. The copy is
// float32 whatever the input's storage (LD0 widens it).
// Generator provides: TOTAL (= BATCH * C * XD * XH * XW), D, H, W, XD, XH,
// XW, PF, PT, PL, LD0(i) = x, VKP_PUT(o, v).
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= TOTAL) return;
  uint w = i % XW, r = i / XW;
  uint h = r % XH;
  r /= XH;
  uint d = r % XD, plane = r / XD;  // plane: image * C + channel
  int id = int(d) - PF, ih = int(h) - PT, iw = int(w) - PL;
  bool ok = uint(id) < D && uint(ih) < H && uint(iw) < W;
  float v = LD0(ok ? ((plane * D + uint(id)) * H + uint(ih)) * W + uint(iw) : 0u);
  VKP_PUT(i, ok ? v : 0.0);
}
