// ---------------------------------------------------------------------------
// Padding and resampling (codegen/c/emit_resample.c). The index tables come
// from the code generator (graph/resample.h's plans), as static arrays.

// A gather through per-dim index maps: output element (i0, ..., i{r-1}) of
// `shape` reads src[sum_d map_d(i_d) * stride[d]] (map NULL: i_d), or is
// *fill when a map gives -1. Rows of the last dim are split across the
// stage's threads.
typedef struct vkp_remap_t {
  void *dst;
  const void *src;
  int esize, rank;
  const ptrdiff_t *shape, *stride;
  const int32_t *const *map;
  const void *fill;
} vkp_remap_t;

// The source offset of entry `at` of the first `dims` dims (row-major over
// them); *fill set where a map gives -1 (the padding).
static inline ptrdiff_t vkp__remap_base(const vkp_remap_t *j, ptrdiff_t at, int dims,
                                        int *fill) {
  ptrdiff_t base = 0;
  for (int d = dims - 1; d >= 0; --d) {
    ptrdiff_t i = at % j->shape[d], m;
    at /= j->shape[d];
    m = j->map[d] ? j->map[d][i] : i;
    if (m < 0) *fill = 1;
    base += m * j->stride[d];
  }
  return base;
}

#define VKP_REMAP_ROW(T)                                                    \
  do {                                                                      \
    T *o = (T *)out;                                                        \
    const T *s = (const T *)j->src + base;                                  \
    T f;                                                                    \
    memcpy(&f, j->fill, sizeof f);                                          \
    if (fill) {                                                             \
      for (ptrdiff_t i = 0; i < len; ++i) o[i] = f;                         \
    } else if (!last && ls == 1) {                                          \
      memcpy(o, s, (size_t)len * sizeof(T));                                \
    } else if (!last) {                                                     \
      for (ptrdiff_t i = 0; i < len; ++i) o[i] = s[i * ls];                 \
    } else {                                                                \
      for (ptrdiff_t i = 0; i < len; ++i)                                   \
        o[i] = last[i] < 0 ? f : s[(ptrdiff_t)last[i] * ls];                \
    }                                                                       \
  } while (0)

static void vkp_remap_rows(void *arg, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  (void)worker;
  const vkp_remap_t *j = arg;
  int r = j->rank;
  ptrdiff_t len = j->shape[r - 1], ls = j->stride[r - 1];
  const int32_t *last = j->map[r - 1];
  for (ptrdiff_t row = lo; row < hi; ++row) {
    int fill = 0;
    const ptrdiff_t base = vkp__remap_base(j, row, r - 1, &fill);
    char *out = (char *)j->dst + row * len * j->esize;
    switch (j->esize) {
      case 1: VKP_REMAP_ROW(uint8_t); break;
      case 2: VKP_REMAP_ROW(uint16_t); break;
      case 4: VKP_REMAP_ROW(uint32_t); break;
      default: VKP_REMAP_ROW(uint64_t); break;
    }
  }
}

// Rows of the last two dims at once, where both are plain strides and the
// last is short (depth_to_space's blocks: PixelShuffle's rows of 2 elements
// each paid the whole index walk over the leading dims, 4 ns an element).
#define VKP_REMAP_PLANE(T)                                                  \
  do {                                                                      \
    T *o = (T *)out;                                                        \
    const T *s = (const T *)j->src + base;                                  \
    T f;                                                                    \
    memcpy(&f, j->fill, sizeof f);                                          \
    for (ptrdiff_t a = 0; a < rows2; ++a)                                   \
      for (ptrdiff_t i = 0; i < len; ++i)                                   \
        o[a * len + i] = fill ? f : s[a * rs + i * ls];                     \
  } while (0)

static void vkp_remap_planes(void *arg, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  (void)worker;
  const vkp_remap_t *j = arg;
  int r = j->rank;
  ptrdiff_t len = j->shape[r - 1], ls = j->stride[r - 1];
  ptrdiff_t rows2 = j->shape[r - 2], rs = j->stride[r - 2];
  for (ptrdiff_t pl = lo; pl < hi; ++pl) {
    int fill = 0;
    const ptrdiff_t base = vkp__remap_base(j, pl, r - 2, &fill);
    char *out = (char *)j->dst + pl * rows2 * len * j->esize;
    switch (j->esize) {
      case 1: VKP_REMAP_PLANE(uint8_t); break;
      case 2: VKP_REMAP_PLANE(uint16_t); break;
      case 4: VKP_REMAP_PLANE(uint32_t); break;
      default: VKP_REMAP_PLANE(uint64_t); break;
    }
  }
}

VKP_FN void vkp_remap(const vkp_remap_t *j) {
  ptrdiff_t rows = 1;
  for (int d = 0; d + 1 < j->rank; ++d) rows *= j->shape[d];
  ptrdiff_t len = j->shape[j->rank - 1];
  if (rows == 0 || len == 0) return;
  if (j->rank >= 2 && len < 16 && !j->map[j->rank - 1] && !j->map[j->rank - 2]) {
    ptrdiff_t plane = len * j->shape[j->rank - 2], planes = rows / j->shape[j->rank - 2];
    vkp_parallel_range(planes, plane >= 4096 ? 1 : 4096 / plane, vkp_remap_planes,
                       (void *)j);
    return;
  }
  vkp_parallel_range(rows, len >= 4096 ? 1 : 4096 / len, vkp_remap_rows, (void *)j);
}

// Resize of float32 data: along dim d, output index o takes width[d] taps
// (input index idx[d][o * width[d] + t], weight w[d][...]); output elements
// whose position is outside the input on any dim (outside[d][o]) are
// `extrapolation`. Rows of the last output dim are split across threads.
typedef struct vkp_resize_t {
  const float *x;
  float *y;
  int rank;
  const ptrdiff_t *in_stride, *out_shape;
  const int *width;
  const int32_t *const *idx;
  const float *const *w;
  const unsigned char *const *outside;
  float extrapolation;
} vkp_resize_t;

// One output row where only the last two dims take more than one tap (an
// image resize): the leading dims' single taps give the input plane and a
// weight, then each of the row's taps along H adds its weight times that
// input row resampled along W. (SegFormer's bilinear upsampling to 1/4:
// 1 ms a call through the general tap loop, which re-derives every tap's
// offset and weight over all dims per element.)
static void vkp_resize_row_2d(const vkp_resize_t *j, const ptrdiff_t *pos, float *yr,
                              ptrdiff_t len) {
  const int r = j->rank, wh = j->width[r - 2], ww = j->width[r - 1];
  ptrdiff_t base = 0;
  float wb = 1.0f;
  for (int d = 0; d < r - 2; ++d) {
    base += (ptrdiff_t)j->idx[d][pos[d]] * j->in_stride[d];
    wb *= j->w[d][pos[d]];
  }
  const int32_t *iw = j->idx[r - 1];
  const float *ww_ = j->w[r - 1];
  const ptrdiff_t sw = j->in_stride[r - 1];
  for (ptrdiff_t i = 0; i < len; ++i) yr[i] = 0.0f;
  for (int th = 0; th < wh; ++th) {
    const ptrdiff_t k = pos[r - 2] * wh + th;
    const float *xr = j->x + base + (ptrdiff_t)j->idx[r - 2][k] * j->in_stride[r - 2];
    const float wt = wb * j->w[r - 2][k];
    if (ww == 2) {
      for (ptrdiff_t i = 0; i < len; ++i)
        yr[i] += wt * (ww_[2 * i] * xr[iw[2 * i] * sw] + ww_[2 * i + 1] * xr[iw[2 * i + 1] * sw]);
    } else {
      for (ptrdiff_t i = 0; i < len; ++i) {
        float acc = 0.0f;
        for (int t = 0; t < ww; ++t) acc += ww_[i * ww + t] * xr[iw[i * ww + t] * sw];
        yr[i] += wt * acc;
      }
    }
  }
  for (ptrdiff_t i = 0; i < len; ++i)
    if (j->outside[r - 1][i]) yr[i] = j->extrapolation;
}

static void vkp_resize_rows(void *arg, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  (void)worker;
  const vkp_resize_t *j = arg;
  int r = j->rank;
  ptrdiff_t len = j->out_shape[r - 1];
  ptrdiff_t pos[8];
  int image = r >= 2;
  for (int d = 0; d < r - 2; ++d) image = image && j->width[d] == 1;
  for (ptrdiff_t row = lo; row < hi; ++row) {
    ptrdiff_t rest = row;
    int out_row = 0;
    for (int d = r - 2; d >= 0; --d) {
      pos[d] = rest % j->out_shape[d];
      rest /= j->out_shape[d];
      out_row |= j->outside[d][pos[d]];
    }
    if (image && !out_row) {
      vkp_resize_row_2d(j, pos, j->y + row * len, len);
      continue;
    }
    for (ptrdiff_t i = 0; i < len; ++i) {
      pos[r - 1] = i;
      float acc = 0.0f;
      if (out_row || j->outside[r - 1][i]) {
        acc = j->extrapolation;
      } else {
        int t[8] = {0};
        for (;;) {
          float wt = 1.0f;
          ptrdiff_t src = 0;
          for (int d = 0; d < r; ++d) {
            ptrdiff_t k = pos[d] * j->width[d] + t[d];
            wt *= j->w[d][k];
            src += (ptrdiff_t)j->idx[d][k] * j->in_stride[d];
          }
          acc += wt * j->x[src];
          int d = r - 1;
          while (d >= 0 && ++t[d] == j->width[d]) t[d--] = 0;
          if (d < 0) break;
        }
      }
      j->y[row * len + i] = acc;
    }
  }
}

VKP_FN void vkp_resize_f32(const vkp_resize_t *j) {
  ptrdiff_t rows = 1;
  for (int d = 0; d + 1 < j->rank; ++d) rows *= j->out_shape[d];
  ptrdiff_t len = j->out_shape[j->rank - 1];
  if (rows == 0 || len == 0) return;
  vkp_parallel_range(rows, len >= 1024 ? 1 : 1024 / len, vkp_resize_rows, (void *)j);
}
