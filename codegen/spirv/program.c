// SPDX-License-Identifier: Apache-2.0
// vkp_spirv_program_t: destruction and the versioned byte form.
//
// Layout (all integers little-endian):
//   "VKPSPIRV" | u32 version | u32 checksum (FNV-1a of the payload) |
//   u64 payload size | payload
// payload:
//   u32 n_buffers,    { u32 kind, i32 index, u64 size } * n_buffers
//   u32 n_dispatches, { u32 name length, name bytes,
//                       u32 local_size[3], u32 groups[3],
//                       u32 n_bindings, { i32 buffer, u64 offset, u64 range } *,
//                       u64 code words, u32 words * } * n_dispatches
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "codegen/spirv/program.h"

const char *vkp__spirv_buffer_kind_name(vkp_spirv_buffer_kind_t kind) {
  switch (kind) {
    case VKP_SPIRV_BUFFER_INPUT: return "input";
    case VKP_SPIRV_BUFFER_OUTPUT: return "output";
    case VKP_SPIRV_BUFFER_CONSTANT: return "constant";
    case VKP_SPIRV_BUFFER_CONSTANT_F16: return "constant (float16)";
    case VKP_SPIRV_BUFFER_SCRATCH: return "scratch";
  }
  return "unknown";
}

#define VKP__PROGRAM_MAGIC "VKPSPIRV"
#define VKP__PROGRAM_VERSION 1u
#define VKP__PROGRAM_HEADER 24u
#define VKP__SPIRV_MAGIC 0x07230203u

void vkp_spirv_program_destroy(vkp_spirv_program_t *program) {
  if (!program) return;
  for (int32_t i = 0; i < program->n_dispatches; ++i) {
    vkp_spirv_dispatch_t *d = &program->dispatches[i];
    vkp__free(d->name);
    vkp__free(d->code);
    vkp__free(d->bindings);
    vkp__free(d->glsl);
  }
  vkp__free(program->dispatches);
  vkp__free(program->buffers);
  vkp__free(program);
}

static uint32_t vkp__fnv1a(const uint8_t *p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}

// --- writing ----------------------------------------------------------------

typedef struct vkp__writer_t {
  uint8_t *p;   // NULL: only count
  size_t n;
} vkp__writer_t;

static void vkp__put(vkp__writer_t *w, const void *src, size_t n) {
  if (w->p) memcpy(w->p + w->n, src, n);
  w->n += n;
}

static void vkp__put_u32(vkp__writer_t *w, uint32_t v) {
  uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                  (uint8_t)(v >> 24)};
  vkp__put(w, b, 4);
}

static void vkp__put_u64(vkp__writer_t *w, uint64_t v) {
  vkp__put_u32(w, (uint32_t)v);
  vkp__put_u32(w, (uint32_t)(v >> 32));
}

static void vkp__write_payload(const vkp_spirv_program_t *prog,
                               vkp__writer_t *w) {
  vkp__put_u32(w, (uint32_t)prog->n_buffers);
  for (int32_t i = 0; i < prog->n_buffers; ++i) {
    const vkp_spirv_buffer_t *b = &prog->buffers[i];
    vkp__put_u32(w, (uint32_t)b->kind);
    vkp__put_u32(w, (uint32_t)b->index);
    vkp__put_u64(w, b->size);
  }
  vkp__put_u32(w, (uint32_t)prog->n_dispatches);
  for (int32_t i = 0; i < prog->n_dispatches; ++i) {
    const vkp_spirv_dispatch_t *d = &prog->dispatches[i];
    size_t len = d->name ? strlen(d->name) : 0;
    vkp__put_u32(w, (uint32_t)len);
    vkp__put(w, d->name, len);
    for (int k = 0; k < 3; ++k) vkp__put_u32(w, d->local_size[k]);
    for (int k = 0; k < 3; ++k) vkp__put_u32(w, d->groups[k]);
    vkp__put_u32(w, (uint32_t)d->n_bindings);
    for (int32_t k = 0; k < d->n_bindings; ++k) {
      vkp__put_u32(w, (uint32_t)d->bindings[k].buffer);
      vkp__put_u64(w, d->bindings[k].offset);
      vkp__put_u64(w, d->bindings[k].range);
    }
    vkp__put_u64(w, (uint64_t)d->code_words);
    for (size_t k = 0; k < d->code_words; ++k) vkp__put_u32(w, d->code[k]);
  }
}

vkp_status_t vkp_spirv_program_serialize(const vkp_spirv_program_t *program,
                                         vkp_blob_t *out_blob) {
  memset(out_blob, 0, sizeof(*out_blob));
  if (!program)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "program is NULL");
  vkp__writer_t count = {0};
  vkp__write_payload(program, &count);
  VKP_RETURN_IF_ERROR(vkp_blob_alloc(out_blob, VKP__PROGRAM_HEADER + count.n));
  uint8_t *base = out_blob->data;
  vkp__writer_t w = {base + VKP__PROGRAM_HEADER, 0};
  vkp__write_payload(program, &w);
  vkp__writer_t h = {base, 0};
  vkp__put(&h, VKP__PROGRAM_MAGIC, 8);
  vkp__put_u32(&h, VKP__PROGRAM_VERSION);
  vkp__put_u32(&h, vkp__fnv1a(base + VKP__PROGRAM_HEADER, count.n));
  vkp__put_u64(&h, (uint64_t)count.n);
  return NULL;
}

// --- reading ----------------------------------------------------------------

typedef struct vkp__reader_t {
  const uint8_t *p;
  size_t n;
  size_t at;
  bool short_read;
} vkp__reader_t;

static bool vkp__take(vkp__reader_t *r, void *dst, size_t n) {
  if (r->short_read || n > r->n - r->at) {
    r->short_read = true;
    if (dst) memset(dst, 0, n);
    return false;
  }
  if (dst) memcpy(dst, r->p + r->at, n);
  r->at += n;
  return true;
}

static uint32_t vkp__get_u32(vkp__reader_t *r) {
  uint8_t b[4];
  if (!vkp__take(r, b, 4)) return 0;
  return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
         (uint32_t)b[3] << 24;
}

static uint64_t vkp__get_u64(vkp__reader_t *r) {
  uint64_t lo = vkp__get_u32(r);
  return lo | (uint64_t)vkp__get_u32(r) << 32;
}

#define VKP__CORRUPT(...) \
  vkp_status_make(VKP_STATUS_DATA_LOSS, "SPIR-V program blob: " __VA_ARGS__)

static vkp_status_t vkp__read_dispatch(vkp__reader_t *r,
                                       const vkp_spirv_program_t *prog,
                                       vkp_spirv_dispatch_t *d, int32_t index) {
  uint32_t len = vkp__get_u32(r);
  if (r->short_read || len > r->n - r->at)
    return VKP__CORRUPT("dispatch %d: name runs past the end", (int)index);
  d->name = vkp__strndup((const char *)r->p + r->at, len);
  if (!d->name) return VKP_OOM("dispatch name");
  r->at += len;
  for (int k = 0; k < 3; ++k) d->local_size[k] = vkp__get_u32(r);
  for (int k = 0; k < 3; ++k) d->groups[k] = vkp__get_u32(r);
  uint32_t nb = vkp__get_u32(r);
  // Each binding takes 20 bytes: bound the count by what is left.
  if (r->short_read || nb > (r->n - r->at) / 20)
    return VKP__CORRUPT("dispatch %d: %u bindings run past the end", (int)index,
                        (unsigned)nb);
  d->n_bindings = (int32_t)nb;
  d->bindings = vkp__calloc(nb ? nb : 1, sizeof(*d->bindings));
  if (!d->bindings) return VKP_OOM("dispatch bindings");
  for (uint32_t k = 0; k < nb; ++k) {
    vkp_spirv_binding_t *b = &d->bindings[k];
    b->buffer = (int32_t)vkp__get_u32(r);
    b->offset = vkp__get_u64(r);
    b->range = vkp__get_u64(r);
    if (b->buffer < 0 || b->buffer >= prog->n_buffers)
      return VKP__CORRUPT("dispatch %d binding %u: buffer %d of %d", (int)index,
                          (unsigned)k, (int)b->buffer, (int)prog->n_buffers);
    uint64_t size = prog->buffers[b->buffer].size;
    if (b->offset > size || b->range > size - b->offset)
      return VKP__CORRUPT("dispatch %d binding %u: bytes %llu+%llu past the "
                          "buffer's %llu",
                          (int)index, (unsigned)k, (unsigned long long)b->offset,
                          (unsigned long long)b->range,
                          (unsigned long long)size);
  }
  uint64_t words = vkp__get_u64(r);
  if (r->short_read || words == 0 || words > (r->n - r->at) / 4)
    return VKP__CORRUPT("dispatch %d: %llu code words do not fit", (int)index,
                        (unsigned long long)words);
  d->code_words = (size_t)words;
  d->code = vkp__calloc((size_t)words, sizeof(uint32_t));
  if (!d->code) return VKP_OOM("SPIR-V code");
  for (uint64_t k = 0; k < words; ++k) d->code[k] = vkp__get_u32(r);
  if (d->code[0] != VKP__SPIRV_MAGIC)
    return VKP__CORRUPT("dispatch %d: code is not SPIR-V (magic 0x%08x)",
                        (int)index, (unsigned)d->code[0]);
  for (int k = 0; k < 3; ++k)
    if (d->groups[k] == 0 || d->local_size[k] == 0)
      return VKP__CORRUPT("dispatch %d: empty grid", (int)index);
  return NULL;
}

static vkp_status_t vkp__read_program(vkp__reader_t *r,
                                      vkp_spirv_program_t *prog) {
  uint32_t nbuf = vkp__get_u32(r);
  if (r->short_read || nbuf > (r->n - r->at) / 16)
    return VKP__CORRUPT("%u buffers run past the end", (unsigned)nbuf);
  prog->buffers = vkp__calloc(nbuf ? nbuf : 1, sizeof(*prog->buffers));
  if (!prog->buffers) return VKP_OOM("program buffers");
  prog->n_buffers = (int32_t)nbuf;
  for (uint32_t i = 0; i < nbuf; ++i) {
    vkp_spirv_buffer_t *b = &prog->buffers[i];
    uint32_t kind = vkp__get_u32(r);
    b->index = (int32_t)vkp__get_u32(r);
    b->size = vkp__get_u64(r);
    if (kind > VKP_SPIRV_BUFFER_CONSTANT_F16)
      return VKP__CORRUPT("buffer %u has kind %u", (unsigned)i, (unsigned)kind);
    b->kind = (vkp_spirv_buffer_kind_t)kind;
    if (b->kind == VKP_SPIRV_BUFFER_SCRATCH ? b->index != -1 : b->index < 0)
      return VKP__CORRUPT("buffer %u has index %d", (unsigned)i, (int)b->index);
  }
  uint32_t ndisp = vkp__get_u32(r);
  // A dispatch takes at least 40 bytes.
  if (r->short_read || ndisp > (r->n - r->at) / 40)
    return VKP__CORRUPT("%u dispatches run past the end", (unsigned)ndisp);
  prog->dispatches = vkp__calloc(ndisp ? ndisp : 1, sizeof(*prog->dispatches));
  if (!prog->dispatches) return VKP_OOM("program dispatches");
  for (uint32_t i = 0; i < ndisp; ++i) {
    prog->n_dispatches = (int32_t)i + 1;  // so destroy frees partial entries
    VKP_RETURN_IF_ERROR(
        vkp__read_dispatch(r, prog, &prog->dispatches[i], (int32_t)i));
  }
  if (r->at != r->n)
    return VKP__CORRUPT("%zu trailing bytes", r->n - r->at);
  return NULL;
}

vkp_status_t vkp_spirv_program_deserialize(const void *data, size_t size,
                                           vkp_spirv_program_t **out_program) {
  *out_program = NULL;
  if (!data || size < VKP__PROGRAM_HEADER)
    return VKP__CORRUPT("%zu bytes is shorter than the header", size);
  const uint8_t *bytes = data;
  if (memcmp(bytes, VKP__PROGRAM_MAGIC, 8) != 0)
    return VKP__CORRUPT("bad magic (not a vkpipe SPIR-V program)");
  vkp__reader_t h = {bytes, VKP__PROGRAM_HEADER, 8, false};
  uint32_t version = vkp__get_u32(&h);
  uint32_t checksum = vkp__get_u32(&h);
  uint64_t payload = vkp__get_u64(&h);
  if (version != VKP__PROGRAM_VERSION)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "SPIR-V program blob: version %u, this build reads %u",
                           (unsigned)version, (unsigned)VKP__PROGRAM_VERSION);
  if (payload != size - VKP__PROGRAM_HEADER)
    return VKP__CORRUPT("payload of %llu bytes, blob holds %zu",
                        (unsigned long long)payload,
                        size - VKP__PROGRAM_HEADER);
  if (vkp__fnv1a(bytes + VKP__PROGRAM_HEADER, (size_t)payload) != checksum)
    return VKP__CORRUPT("checksum mismatch");
  vkp_spirv_program_t *prog = vkp__calloc(1, sizeof(*prog));
  if (!prog) return VKP_OOM("program");
  vkp__reader_t r = {bytes + VKP__PROGRAM_HEADER, (size_t)payload, 0, false};
  vkp_status_t st = vkp__read_program(&r, prog);
  if (st) {
    vkp_spirv_program_destroy(prog);
    return st;
  }
  *out_program = prog;
  return NULL;
}
