// SPDX-License-Identifier: Apache-2.0
// GridSample over 2-D images, one output element (n, c, oh, ow) per
// invocation: the grid's (x, y) at (n, oh, ow) in [-1, 1] becomes a source
// position, padded (border, reflection) and interpolated (linear 2x2,
// nearest, cubic 4x4) from channel c of image n; taps outside the image
// read 0. The arithmetic is graph/sample.h's, in float. Generator provides:
// TOTAL, C, H, W, OH, OW, MODE (0 linear, 1 nearest, 2 cubic), PADDING
// (0 zeros, 1 border, 2 reflection), ALIGN (0/1), LD0 = X, LD1 = grid,
// STORE(o, v).

float vkp_gs_reflect(float x, float low2, float high2) {
  if (low2 == high2) return 0.0;
  float lo = low2 * 0.5, span = (high2 - low2) * 0.5;
  x = abs(x - lo);
  float extra = mod(x, span);
  float flips = floor(x / span);
  return mod(flips, 2.0) == 0.0 ? extra + lo : span - extra + lo;
}

float vkp_gs_pad(float x, float len) {
  if (PADDING == 1) return clamp(x, 0.0, len - 1.0);
  if (PADDING == 2) {
    x = ALIGN != 0 ? vkp_gs_reflect(x, 0.0, 2.0 * (len - 1.0))
                   : vkp_gs_reflect(x, -1.0, 2.0 * len - 1.0);
    return clamp(x, 0.0, len - 1.0);
  }
  return x;
}

// Index i (a whole number) inside 0..len-1, else -1.
int vkp_gs_index(float i, float len) {
  return i >= 0.0 && i <= len - 1.0 ? int(i) : -1;
}

float vkp_gs_cubic1(float x) { return ((-0.75 + 2.0) * x - (-0.75 + 3.0)) * x * x + 1.0; }
float vkp_gs_cubic2(float x) {
  return ((-0.75 * x + 3.75) * x - 6.0) * x + 3.0;  // A = -0.75: 5A, 8A, 4A
}

// The taps of normalised coordinate c along a dim of length len; returns
// their count (idx -1: reads zero).
int vkp_gs_taps(float c, float len, out int idx[4], out float w[4]) {
  float x = ALIGN != 0 ? (c + 1.0) * 0.5 * (len - 1.0) : ((c + 1.0) * len - 1.0) * 0.5;
  idx = int[4](-1, -1, -1, -1);
  w = float[4](0.0, 0.0, 0.0, 0.0);
  if (isnan(x) || isinf(x)) return 1;
  if (MODE == 2) {
    float x0 = floor(x), t = x - x0;
    w = float[4](vkp_gs_cubic2(t + 1.0), vkp_gs_cubic1(t), vkp_gs_cubic1(1.0 - t),
                 vkp_gs_cubic2(2.0 - t));
    for (int k = 0; k < 4; ++k) {
      float i = x0 - 1.0 + float(k);
      if (PADDING != 0) i = trunc(vkp_gs_pad(i, len));
      idx[k] = vkp_gs_index(i, len);
    }
    return 4;
  }
  x = vkp_gs_pad(x, len);
  if (MODE == 1) {
    idx[0] = vkp_gs_index(roundEven(x), len);
    w[0] = 1.0;
    return 1;
  }
  float x0 = floor(x), t = x - x0;
  idx[0] = vkp_gs_index(x0, len);
  w[0] = 1.0 - t;
  idx[1] = vkp_gs_index(x0 + 1.0, len);
  w[1] = t;
  return 2;
}

void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  uint ow = o % OW, oh = (o / OW) % OH, c = (o / (OW * OH)) % C, n = o / (OW * OH * C);
  uint g = ((n * OH + oh) * OW + ow) * 2u;
  int ix[4], iy[4];
  float wx[4], wy[4];
  int nx = vkp_gs_taps(float(LD1(g)), float(W), ix, wx);
  int ny = vkp_gs_taps(float(LD1(g + 1u)), float(H), iy, wy);
  uint base = (n * C + c) * H * W;
  float acc = 0.0;
  for (int j = 0; j < ny; ++j) {
    if (iy[j] < 0) continue;
    for (int i = 0; i < nx; ++i) {
      if (ix[i] < 0) continue;
      float wt = wy[j] * wx[i];
      if (wt != 0.0) acc += wt * float(LD0(base + uint(iy[j]) * W + uint(ix[i])));
    }
  }
  STORE(o, ACC_T(acc));
}
