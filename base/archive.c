// SPDX-License-Identifier: Apache-2.0
#include "base/archive.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/status_macros.h"

#define VKP__ARCHIVE_MAGIC "VKPIPE\r\n"
#define VKP__ARCHIVE_HEADER_SIZE 32

typedef struct vkp__entry_t {
  char *name;
  uint8_t *data;   // writer: owned copy; reader: points into the file image
  uint64_t offset;
  uint64_t size;
  uint32_t crc;
} vkp__entry_t;

struct vkp_archive_writer_t {
  vkp__entry_t *entries;
  int32_t count;
};

struct vkp_archive_t {
  uint8_t *image;  // the whole file
  size_t image_size;
  vkp__entry_t *entries;
  int32_t count;
};

uint32_t vkp_crc32(uint32_t crc, const void *data, size_t size) {
  static uint32_t table[256];
  static int ready;  // benign: every thread computes the same table
  if (!ready) {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
  }
  const uint8_t *p = data;
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

static void vkp__put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}
static void vkp__put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t vkp__get32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static uint64_t vkp__get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

vkp_status_t vkp_archive_writer_create(vkp_archive_writer_t **out_writer) {
  *out_writer = vkp__calloc(1, sizeof(vkp_archive_writer_t));
  return *out_writer ? NULL : VKP_OOM("archive writer");
}

void vkp_archive_writer_destroy(vkp_archive_writer_t *writer) {
  if (!writer) return;
  for (int32_t i = 0; i < writer->count; ++i) {
    vkp__free(writer->entries[i].name);
    vkp__free(writer->entries[i].data);
  }
  vkp__free(writer->entries);
  vkp__free(writer);
}

vkp_status_t vkp_archive_writer_add(vkp_archive_writer_t *writer,
                                    const char *name, const void *data,
                                    size_t size) {
  if (!name || !name[0] || strlen(name) > 4096)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "archive entry name is empty or too long");
  for (int32_t i = 0; i < writer->count; ++i)
    if (strcmp(writer->entries[i].name, name) == 0)
      return vkp_status_make(VKP_STATUS_ALREADY_EXISTS,
                             "archive entry '%s' added twice", name);
  vkp__entry_t *grown = vkp__reallocarray(writer->entries,
                                          (size_t)writer->count + 1,
                                          sizeof(*grown));
  if (!grown) return VKP_OOM("archive entries");
  writer->entries = grown;
  vkp__entry_t *e = &writer->entries[writer->count];
  memset(e, 0, sizeof(*e));
  e->name = vkp__strdup(name);
  e->data = vkp__malloc(size ? size : 1);
  if (!e->name || !e->data) {
    vkp__free(e->name);
    vkp__free(e->data);
    return VKP_OOM("archive entry");
  }
  if (size) memcpy(e->data, data, size);
  e->size = size;
  e->crc = vkp_crc32(0, data, size);
  writer->count++;
  return NULL;
}

static vkp_status_t vkp__write_all(FILE *f, const void *data, size_t size,
                                   const char *path) {
  if (size && fwrite(data, 1, size, f) != size)
    return vkp_status_make(VKP_STATUS_IO_ERROR, "writing '%s': %s", path,
                           strerror(errno));
  return NULL;
}

vkp_status_t vkp_archive_writer_save(const vkp_archive_writer_t *writer,
                                     const char *path,
                                     uint32_t format_version) {
  // Table bytes.
  size_t table_size = 0;
  for (int32_t i = 0; i < writer->count; ++i)
    table_size += 4 + strlen(writer->entries[i].name) + 8 + 8 + 4;
  uint8_t *table = vkp__malloc(table_size ? table_size : 1);
  if (!table) return VKP_OOM("archive table");
  uint64_t offset = VKP__ARCHIVE_HEADER_SIZE;
  uint8_t *p = table;
  for (int32_t i = 0; i < writer->count; ++i) {
    const vkp__entry_t *e = &writer->entries[i];
    size_t nl = strlen(e->name);
    vkp__put32(p, (uint32_t)nl);
    memcpy(p + 4, e->name, nl);
    p += 4 + nl;
    vkp__put64(p, offset);
    vkp__put64(p + 8, e->size);
    vkp__put32(p + 16, e->crc);
    p += 20;
    offset += e->size;
  }
  uint8_t header[VKP__ARCHIVE_HEADER_SIZE];
  memcpy(header, VKP__ARCHIVE_MAGIC, 8);
  vkp__put32(header + 8, format_version);
  vkp__put32(header + 12, (uint32_t)writer->count);
  vkp__put64(header + 16, offset);
  vkp__put32(header + 24, vkp_crc32(0, table, table_size));
  vkp__put32(header + 28, vkp_crc32(0, header, 28));

  char *tmp = vkp__asprintf("%s.tmp.%ld", path, (long)getpid());
  if (!tmp) {
    vkp__free(table);
    return VKP_OOM("archive path");
  }
  vkp_status_t st = NULL;
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    st = vkp_status_make(VKP_STATUS_IO_ERROR, "cannot create '%s': %s", tmp,
                         strerror(errno));
  } else {
    st = vkp__write_all(f, header, sizeof header, path);
    for (int32_t i = 0; i < writer->count && !st; ++i)
      st = vkp__write_all(f, writer->entries[i].data, writer->entries[i].size,
                          path);
    if (!st) st = vkp__write_all(f, table, table_size, path);
    if (fclose(f) != 0 && !st)
      st = vkp_status_make(VKP_STATUS_IO_ERROR, "writing '%s': %s", path,
                           strerror(errno));
    if (!st && rename(tmp, path) != 0)
      st = vkp_status_make(VKP_STATUS_IO_ERROR, "cannot rename '%s' to '%s': %s",
                           tmp, path, strerror(errno));
    if (st) remove(tmp);
  }
  vkp__free(tmp);
  vkp__free(table);
  return st;
}

static vkp_status_t vkp__archive_parse(vkp_archive_t *a, const char *what,
                                       uint32_t expected_version) {
  const uint8_t *img = a->image;
  size_t n = a->image_size;
  if (n < VKP__ARCHIVE_HEADER_SIZE || memcmp(img, VKP__ARCHIVE_MAGIC, 8) != 0)
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "'%s' is not a vkpipe artifact (bad magic or shorter "
                           "than its header)",
                           what);
  if (vkp__get32(img + 28) != vkp_crc32(0, img, 28))
    return vkp_status_make(VKP_STATUS_DATA_LOSS,
                           "'%s': header checksum mismatch (corrupt file)", what);
  uint32_t version = vkp__get32(img + 8);
  if (version != expected_version)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "'%s' has artifact format version %u; this vkpipe "
                           "reads version %u (rebuild it with 'vkpipe build')",
                           what, version, expected_version);
  uint32_t count = vkp__get32(img + 12);
  uint64_t table_off = vkp__get64(img + 16);
  if (table_off < VKP__ARCHIVE_HEADER_SIZE || table_off > n)
    return vkp_status_make(VKP_STATUS_DATA_LOSS,
                           "'%s': entry table offset %llu outside the file "
                           "(size %zu): truncated?",
                           what, (unsigned long long)table_off, n);
  size_t table_size = n - (size_t)table_off;
  if (vkp__get32(img + 24) != vkp_crc32(0, img + table_off, table_size))
    return vkp_status_make(VKP_STATUS_DATA_LOSS,
                           "'%s': entry table checksum mismatch (truncated or "
                           "corrupt file)",
                           what);
  if (count > VKP_ARCHIVE_MAX_ENTRIES)
    return vkp_status_make(VKP_STATUS_DATA_LOSS,
                           "'%s': %u entries, more than the limit of %d",
                           what, count, VKP_ARCHIVE_MAX_ENTRIES);
  if (count > table_size / 24)
    return vkp_status_make(VKP_STATUS_DATA_LOSS,
                           "'%s': %u entries cannot fit in a %zu-byte table",
                           what, count, table_size);
  a->entries = vkp__calloc((size_t)count + 1, sizeof(vkp__entry_t));
  if (!a->entries) return VKP_OOM("archive entries");
  const uint8_t *p = img + table_off, *end = img + n;
  for (uint32_t i = 0; i < count; ++i) {
    if ((size_t)(end - p) < 4) goto short_table;
    uint32_t nl = vkp__get32(p);
    if ((size_t)(end - p) < 4 + (size_t)nl + 20) goto short_table;
    vkp__entry_t *e = &a->entries[i];
    e->name = vkp__strndup((const char *)p + 4, nl);
    if (!e->name) return VKP_OOM("archive entry name");
    a->count = (int32_t)i + 1;
    p += 4 + nl;
    e->offset = vkp__get64(p);
    e->size = vkp__get64(p + 8);
    e->crc = vkp__get32(p + 16);
    p += 20;
    if (e->offset < VKP__ARCHIVE_HEADER_SIZE || e->offset > table_off ||
        e->size > table_off - e->offset)
      return vkp_status_make(VKP_STATUS_DATA_LOSS,
                             "'%s': entry '%s' (offset %llu, size %llu) lies "
                             "outside the data area",
                             what, e->name, (unsigned long long)e->offset,
                             (unsigned long long)e->size);
    e->data = a->image + e->offset;
    // One name, one entry: a reader that finds the first of two could be
    // shown different bytes from the ones a digest or a checker looked at.
    for (uint32_t k = 0; k < i; ++k)
      if (strcmp(a->entries[k].name, e->name) == 0)
        return vkp_status_make(VKP_STATUS_DATA_LOSS,
                               "'%s': entry '%s' appears twice", what, e->name);
    if (vkp_crc32(0, e->data, (size_t)e->size) != e->crc)
      return vkp_status_make(VKP_STATUS_DATA_LOSS,
                             "'%s': entry '%s' checksum mismatch (corrupt file)",
                             what, e->name);
  }
  return NULL;
short_table:
  return vkp_status_make(VKP_STATUS_DATA_LOSS, "'%s': entry table is truncated",
                         what);
}

void vkp_archive_close(vkp_archive_t *archive) {
  if (!archive) return;
  for (int32_t i = 0; i < archive->count; ++i) vkp__free(archive->entries[i].name);
  vkp__free(archive->entries);
  vkp__free(archive->image);
  vkp__free(archive);
}

vkp_status_t vkp_archive_open_memory(const void *data, size_t size,
                                     const char *what,
                                     uint32_t expected_version,
                                     vkp_archive_t **out_archive) {
  *out_archive = NULL;
  vkp_archive_t *a = vkp__calloc(1, sizeof(*a));
  if (!a) return VKP_OOM("archive");
  a->image = vkp__malloc(size ? size : 1);
  if (!a->image) {
    vkp__free(a);
    return VKP_OOM("archive image");
  }
  if (size) memcpy(a->image, data, size);
  a->image_size = size;
  vkp_status_t st = vkp__archive_parse(a, what ? what : "(memory)",
                                       expected_version);
  if (st) {
    vkp_archive_close(a);
    return st;
  }
  *out_archive = a;
  return NULL;
}

vkp_status_t vkp_archive_open(const char *path, uint32_t expected_version,
                              vkp_archive_t **out_archive) {
  *out_archive = NULL;
  uint8_t *buf = NULL;
  size_t len = 0;
  vkp_status_t st = vkp__file_read(path, VKP_ARCHIVE_MAX_BYTES, "an archive",
                                   (void **)&buf, &len);
  if (!st) {
    vkp_archive_t *a = vkp__calloc(1, sizeof(*a));
    if (!a) {
      st = VKP_OOM("archive");
    } else {
      a->image = buf;
      a->image_size = (size_t)len;
      buf = NULL;
      st = vkp__archive_parse(a, path, expected_version);
      if (st) vkp_archive_close(a);
      else *out_archive = a;
    }
  }
  vkp__free(buf);
  return st;
}

bool vkp_archive_find(const vkp_archive_t *archive, const char *name,
                      const void **out_data, size_t *out_size) {
  for (int32_t i = 0; i < archive->count; ++i) {
    if (strcmp(archive->entries[i].name, name) != 0) continue;
    *out_data = archive->entries[i].data;
    *out_size = (size_t)archive->entries[i].size;
    return true;
  }
  *out_data = NULL;
  *out_size = 0;
  return false;
}

int32_t vkp_archive_count(const vkp_archive_t *archive) { return archive->count; }

const char *vkp_archive_name(const vkp_archive_t *archive, int32_t index) {
  return index >= 0 && index < archive->count ? archive->entries[index].name : NULL;
}

size_t vkp_archive_size(const vkp_archive_t *archive, int32_t index) {
  return index >= 0 && index < archive->count ? (size_t)archive->entries[index].size
                                              : 0;
}

uint32_t vkp_archive_crc(const vkp_archive_t *archive, int32_t index) {
  return index >= 0 && index < archive->count ? archive->entries[index].crc : 0;
}

const void *vkp_archive_data(const vkp_archive_t *archive, int32_t index) {
  return index >= 0 && index < archive->count ? archive->entries[index].data : NULL;
}

void vkp_archive_visit(const vkp_archive_t *archive, vkp_archive_visit_fn fn,
                       void *context) {
  for (int32_t i = 0; i < archive->count; ++i)
    fn(context, archive->entries[i].name, archive->entries[i].data,
       (size_t)archive->entries[i].size);
}

void vkp_archive_writer_visit(const vkp_archive_writer_t *writer,
                              vkp_archive_visit_fn fn, void *context) {
  for (int32_t i = 0; i < writer->count; ++i)
    fn(context, writer->entries[i].name, writer->entries[i].data,
       (size_t)writer->entries[i].size);
}
