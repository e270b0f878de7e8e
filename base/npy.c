// SPDX-License-Identifier: Apache-2.0
// NumPy .npy files (numpy/lib/format.py describes the format):
//   "\x93NUMPY", major, minor, header length (uint16 LE for 1.x, uint32 LE for
//   2.x and 3.x), a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//   padded with spaces and a final '\n', then the raw data.
#include "vkpipe/npy.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/status_macros.h"

// Largest .npy file read (64 GiB), checked before allocating.
#define VKP__NPY_MAX_BYTES ((size_t)1 << 36)

#define VKP__NPY_MAGIC "\x93NUMPY"
#define VKP__NPY_MAGIC_LEN 6
// numpy aligns the data to 64 bytes (ARRAY_ALIGN in format.py).
#define VKP__NPY_ALIGN 64

// X(dtype, descr): the dtypes we read and write, by their little-endian descr.
// bfloat16 has no NumPy dtype and is neither read nor written.
#define VKP__NPY_DTYPE_LIST(X) \
  X(FLOAT32, "<f4")            \
  X(FLOAT16, "<f2")            \
  X(INT64, "<i8")              \
  X(INT32, "<i4")              \
  X(FLOAT64, "<f8")            \
  X(INT16, "<i2")              \
  X(INT8, "|i1")               \
  X(UINT64, "<u8")             \
  X(UINT32, "<u4")             \
  X(UINT16, "<u2")             \
  X(UINT8, "|u1")              \
  X(BOOL, "|b1")

static const struct {
  vkp_dtype_t dtype;
  const char *descr;
} vkp__npy_dtypes[] = {
#define VKP__NPY_DTYPE_ENTRY(e, d) {VKP_DTYPE_##e, d},
    VKP__NPY_DTYPE_LIST(VKP__NPY_DTYPE_ENTRY)
#undef VKP__NPY_DTYPE_ENTRY
};
_Static_assert(sizeof(vkp__npy_dtypes) / sizeof(vkp__npy_dtypes[0]) ==
                   VKP_DTYPE_COUNT - 1,
               "every dtype but bfloat16 needs a .npy descr");

static const char *vkp__npy_descr(vkp_dtype_t dtype) {
  for (size_t i = 0; i < sizeof(vkp__npy_dtypes) / sizeof(vkp__npy_dtypes[0]); ++i)
    if (vkp__npy_dtypes[i].dtype == dtype) return vkp__npy_dtypes[i].descr;
  return NULL;
}

#define VKP__NPY_ERR(name, ...)                                           \
  vkp_status_annotate(vkp_status_make(VKP_STATUS_PARSE_ERROR, __VA_ARGS__), \
                      "%s", (name))

// ---------------------------------------------------------------------------
// The header dict: a tiny parser for the Python literal subset numpy writes.

typedef struct vkp__npy_lexer_t {
  const char *p, *end;
} vkp__npy_lexer_t;

static void vkp__npy_skip_space(vkp__npy_lexer_t *lx) {
  while (lx->p < lx->end &&
         (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\n' || *lx->p == '\r'))
    ++lx->p;
}

static bool vkp__npy_eat(vkp__npy_lexer_t *lx, char c) {
  vkp__npy_skip_space(lx);
  if (lx->p < lx->end && *lx->p == c) {
    ++lx->p;
    return true;
  }
  return false;
}

// A quoted string; *out points into the header, *out_len bytes long.
static bool vkp__npy_string(vkp__npy_lexer_t *lx, const char **out,
                            size_t *out_len) {
  vkp__npy_skip_space(lx);
  if (lx->p >= lx->end || (*lx->p != '\'' && *lx->p != '"')) return false;
  char quote = *lx->p++;
  const char *start = lx->p;
  while (lx->p < lx->end && *lx->p != quote) {
    if (*lx->p == '\\') return false;  // no escapes in what numpy writes
    ++lx->p;
  }
  if (lx->p >= lx->end) return false;
  *out = start;
  *out_len = (size_t)(lx->p - start);
  ++lx->p;
  return true;
}

static bool vkp__npy_word(vkp__npy_lexer_t *lx, const char *word) {
  vkp__npy_skip_space(lx);
  size_t n = strlen(word);
  if ((size_t)(lx->end - lx->p) < n || memcmp(lx->p, word, n) != 0) return false;
  lx->p += n;
  return true;
}

// A non-negative integer (an old Python 2 'L' suffix is allowed).
static bool vkp__npy_dim(vkp__npy_lexer_t *lx, int64_t *out) {
  vkp__npy_skip_space(lx);
  int64_t v = 0;
  const char *start = lx->p;
  while (lx->p < lx->end && *lx->p >= '0' && *lx->p <= '9') {
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (*lx->p++ - '0');
  }
  if (lx->p == start) return false;
  if (lx->p < lx->end && *lx->p == 'L') ++lx->p;
  *out = v;
  return true;
}

typedef struct vkp__npy_header_t {
  vkp_dtype_t dtype;
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
} vkp__npy_header_t;

static vkp_status_t vkp__npy_parse_descr(const char *name, const char *d,
                                         size_t n, vkp_dtype_t *out) {
  for (size_t i = 0; i < sizeof(vkp__npy_dtypes) / sizeof(vkp__npy_dtypes[0]); ++i)
    if (strlen(vkp__npy_dtypes[i].descr) == n &&
        memcmp(vkp__npy_dtypes[i].descr, d, n) == 0) {
      *out = vkp__npy_dtypes[i].dtype;
      return NULL;
    }
  if (n > 0 && d[0] == '>')
    return vkp_status_annotate(
        vkp_status_make(VKP_STATUS_UNSUPPORTED,
                        "big-endian data ('%.*s') is not supported; save it "
                        "with arr.astype(arr.dtype.newbyteorder('<'))",
                        (int)n, d),
        "%s", name);
  return vkp_status_annotate(
      vkp_status_make(VKP_STATUS_UNSUPPORTED,
                      "dtype '%.*s' is not supported (use float32 '<f4', "
                      "float16 '<f2', int32 '<i4' or int64 '<i8')",
                      (int)(n > 32 ? 32 : n), d),
      "%s", name);
}

static vkp_status_t vkp__npy_parse_header(const char *name, const char *text,
                                          size_t len, vkp__npy_header_t *hdr) {
  vkp__npy_lexer_t lx = {text, text + len};
  bool have_descr = false, have_order = false, have_shape = false;
  if (!vkp__npy_eat(&lx, '{'))
    return VKP__NPY_ERR(name, "header is not a Python dict");
  while (!vkp__npy_eat(&lx, '}')) {
    const char *key;
    size_t key_len;
    if (!vkp__npy_string(&lx, &key, &key_len) || !vkp__npy_eat(&lx, ':'))
      return VKP__NPY_ERR(name, "malformed header near byte %zu",
                          (size_t)(lx.p - text));
    if (key_len == 5 && memcmp(key, "descr", 5) == 0) {
      const char *d;
      size_t n;
      if (!vkp__npy_string(&lx, &d, &n)) {
        vkp__npy_skip_space(&lx);
        if (lx.p < lx.end && *lx.p == '[')
          return vkp_status_annotate(
              vkp_status_make(VKP_STATUS_UNSUPPORTED,
                              "structured arrays are not supported"),
              "%s", name);
        return VKP__NPY_ERR(name, "header 'descr' is not a string");
      }
      VKP_RETURN_IF_ERROR(vkp__npy_parse_descr(name, d, n, &hdr->dtype));
      have_descr = true;
    } else if (key_len == 13 && memcmp(key, "fortran_order", 13) == 0) {
      if (vkp__npy_word(&lx, "True"))
        return vkp_status_annotate(
            vkp_status_make(VKP_STATUS_UNSUPPORTED,
                            "Fortran-order arrays are not supported; save "
                            "np.ascontiguousarray(arr) instead"),
            "%s", name);
      if (!vkp__npy_word(&lx, "False"))
        return VKP__NPY_ERR(name, "header 'fortran_order' is not True or False");
      have_order = true;
    } else if (key_len == 5 && memcmp(key, "shape", 5) == 0) {
      if (!vkp__npy_eat(&lx, '('))
        return VKP__NPY_ERR(name, "header 'shape' is not a tuple");
      hdr->rank = 0;
      while (!vkp__npy_eat(&lx, ')')) {
        int64_t d;
        if (!vkp__npy_dim(&lx, &d))
          return VKP__NPY_ERR(name, "header 'shape' has a bad dimension");
        if (hdr->rank == VKP_MAX_RANK)
          return vkp_status_annotate(
              vkp_status_make(VKP_STATUS_UNSUPPORTED,
                              "more than %d dimensions", VKP_MAX_RANK),
              "%s", name);
        hdr->shape[hdr->rank++] = d;
        if (!vkp__npy_eat(&lx, ',')) {
          if (!vkp__npy_eat(&lx, ')'))
            return VKP__NPY_ERR(name, "header 'shape' is not a tuple");
          break;
        }
      }
      have_shape = true;
    } else {
      return VKP__NPY_ERR(name, "header has unknown key '%.*s'",
                          (int)(key_len > 32 ? 32 : key_len), key);
    }
    if (!vkp__npy_eat(&lx, ',')) {
      if (!vkp__npy_eat(&lx, '}'))
        return VKP__NPY_ERR(name, "malformed header near byte %zu",
                            (size_t)(lx.p - text));
      break;
    }
  }
  vkp__npy_skip_space(&lx);
  if (lx.p != lx.end)
    return VKP__NPY_ERR(name, "garbage after the header dict");
  if (!have_descr || !have_order || !have_shape)
    return VKP__NPY_ERR(name, "header lacks '%s'",
                        !have_descr ? "descr"
                        : !have_order ? "fortran_order"
                                      : "shape");
  return NULL;
}

// ---------------------------------------------------------------------------
// Reading

vkp_status_t vkp_npy_read_buffer(const void *data, size_t size,
                                 const char *name, vkp_tensor_t *out) {
  memset(out, 0, sizeof(*out));
  if (!name) name = "npy data";
  const uint8_t *b = data;
  if (size < VKP__NPY_MAGIC_LEN + 2 ||
      memcmp(b, VKP__NPY_MAGIC, VKP__NPY_MAGIC_LEN) != 0)
    return VKP__NPY_ERR(name, "not a .npy file (no \\x93NUMPY magic)");
  int major = b[6], minor = b[7];
  size_t pos = VKP__NPY_MAGIC_LEN + 2, header_len;
  if (major == 1) {
    if (size < pos + 2) return VKP__NPY_ERR(name, "truncated header");
    header_len = (size_t)b[pos] | (size_t)b[pos + 1] << 8;
    pos += 2;
  } else if (major == 2 || major == 3) {
    if (size < pos + 4) return VKP__NPY_ERR(name, "truncated header");
    header_len = (size_t)b[pos] | (size_t)b[pos + 1] << 8 |
                 (size_t)b[pos + 2] << 16 | (size_t)b[pos + 3] << 24;
    pos += 4;
  } else {
    return vkp_status_annotate(
        vkp_status_make(VKP_STATUS_UNSUPPORTED,
                        ".npy format version %d.%d is not supported (1.0, "
                        "2.0 and 3.0 are)",
                        major, minor),
        "%s", name);
  }
  if (header_len > size - pos)
    return VKP__NPY_ERR(name, "truncated header (%zu bytes announced, %zu left)",
                        header_len, size - pos);
  vkp__npy_header_t hdr;
  memset(&hdr, 0, sizeof hdr);
  VKP_RETURN_IF_ERROR(
      vkp__npy_parse_header(name, (const char *)b + pos, header_len, &hdr));
  pos += header_len;
  size_t bytes = 0;
  if (!vkp_shape_numel(hdr.rank, hdr.shape, vkp_dtype_size(hdr.dtype), &bytes)) {
    char sbuf[160];
    return vkp_status_annotate(
        vkp_status_make(VKP_STATUS_OUT_OF_RANGE, "shape %s is too large",
                        vkp_shape_format(hdr.rank, hdr.shape, sbuf, sizeof sbuf)),
        "%s", name);
  }
  if (size - pos != bytes) {
    char sbuf[160];
    return vkp_status_annotate(
        vkp_status_make(VKP_STATUS_DATA_LOSS,
                        "%s %s needs %zu data bytes, the file has %zu (%s)",
                        vkp_dtype_name(hdr.dtype),
                        vkp_shape_format(hdr.rank, hdr.shape, sbuf, sizeof sbuf),
                        bytes, size - pos,
                        size - pos < bytes ? "truncated" : "trailing bytes"),
        "%s", name);
  }
  VKP_RETURN_IF_ERROR(vkp_tensor_init(out, hdr.dtype, hdr.rank, hdr.shape));
  if (bytes) memcpy(out->data, b + pos, bytes);
  return NULL;
}

vkp_status_t vkp_npy_read_file(const char *path, vkp_tensor_t *out) {
  memset(out, 0, sizeof(*out));
  uint8_t *buf = NULL;
  size_t n = 0;
  VKP_RETURN_IF_ERROR(vkp__file_read(path, VKP__NPY_MAX_BYTES, "a .npy file",
                                     (void **)&buf, &n));
  char *label = vkp__asprintf("'%s'", path);
  vkp_status_t st = label ? vkp_npy_read_buffer(buf, n, label, out) : VKP_OOM("file name");
  vkp__free(label);
  vkp__free(buf);
  return st;
}

// ---------------------------------------------------------------------------
// Writing

vkp_status_t vkp_npy_write_buffer(const vkp_tensor_t *tensor, int version,
                                  void **out_data, size_t *out_size) {
  *out_data = NULL;
  *out_size = 0;
  if ((unsigned)tensor->dtype >= VKP_DTYPE_COUNT || tensor->rank < 0 ||
      tensor->rank > VKP_MAX_RANK)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "cannot encode a tensor of dtype %d, rank %d",
                           (int)tensor->dtype, (int)tensor->rank);
  if (!vkp__npy_descr(tensor->dtype))
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "a %s tensor has no .npy form (NumPy has no such "
                           "dtype); cast it to float32 first",
                           vkp_dtype_name(tensor->dtype));
  if (version != 0 && version != 1 && version != 2)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           ".npy version %d: only 1 and 2 are written", version);
  size_t bytes = 0;
  if (!vkp_shape_numel(tensor->rank, tensor->shape,
                       vkp_dtype_size(tensor->dtype), &bytes))
    return vkp_status_make(VKP_STATUS_OUT_OF_RANGE, "tensor too large");
  // The dict, then padding to the alignment with spaces and a '\n'.
  char dict[64 + VKP_MAX_RANK * 24];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   vkp__npy_descr(tensor->dtype));
  for (int32_t i = 0; i < tensor->rank; ++i)
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%lld", i ? ", " : "",
                  (long long)tensor->shape[i]);
  n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }",
                tensor->rank == 1 ? "," : "");
  size_t dict_len = (size_t)n;
  if (version == 0) version = 1;  // our headers are always short
  size_t prefix = VKP__NPY_MAGIC_LEN + 2 + (version == 1 ? 2 : 4);
  size_t total_header = (prefix + dict_len + 1 + VKP__NPY_ALIGN - 1) /
                        VKP__NPY_ALIGN * VKP__NPY_ALIGN;
  size_t header_len = total_header - prefix;
  if (bytes > SIZE_MAX - total_header)
    return vkp_status_make(VKP_STATUS_OUT_OF_RANGE, "tensor too large");
  uint8_t *buf = vkp__malloc(total_header + bytes);
  if (!buf) return VKP_OOM(".npy buffer");
  memcpy(buf, VKP__NPY_MAGIC, VKP__NPY_MAGIC_LEN);
  buf[6] = (uint8_t)version;
  buf[7] = 0;
  for (size_t i = 0; i < prefix - 8; ++i)
    buf[8 + i] = (uint8_t)(header_len >> (8 * i));
  memcpy(buf + prefix, dict, dict_len);
  memset(buf + prefix + dict_len, ' ', header_len - dict_len - 1);
  buf[total_header - 1] = '\n';
  if (bytes) memcpy(buf + total_header, tensor->data, bytes);
  *out_data = buf;
  *out_size = total_header + bytes;
  return NULL;
}

void vkp_npy_buffer_free(void *data) { vkp__free(data); }

vkp_status_t vkp_npy_write_file(const char *path, const vkp_tensor_t *tensor) {
  void *buf = NULL;
  size_t size = 0;
  VKP_RETURN_IF_ERROR(vkp_npy_write_buffer(tensor, 0, &buf, &size));
  vkp_status_t st = vkp__write_file(path, buf, size);
  vkp__free(buf);
  return st;
}
