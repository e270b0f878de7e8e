// SPDX-License-Identifier: Apache-2.0
//
// A small checksummed container of named byte entries: the storage layer of
// .vkp artifacts.
//
//   vkp_archive_writer_t *w;
//   st = vkp_archive_writer_create(&w);
//   st = vkp_archive_writer_add(w, "plan.json", json, strlen(json));
//   st = vkp_archive_writer_save(w, "model.vkp", /*format_version=*/1);
//   vkp_archive_writer_destroy(w);
//
//   vkp_archive_t *a;
//   st = vkp_archive_open("model.vkp", 1, &a);     // validates everything
//   const void *bytes; size_t n;
//   if (vkp_archive_find(a, "plan.json", &bytes, &n)) ...
//   vkp_archive_close(a);
//
// Layout (little-endian): a 32-byte header {magic "VKPIPE\r\n", u32 format
// version, u32 entry count, u64 table offset, u32 table CRC-32, u32 header
// CRC-32 over the preceding 28 bytes}, the entries' bytes, then the table:
// per entry {u32 name length, name, u64 offset, u64 size, u32 CRC-32}.
// Opening checks the magic, version, every CRC, and that every range lies
// inside the file: a truncated, corrupt or foreign file is an error that
// says which part is wrong. Not thread-safe; an open archive is read-only.
#ifndef VKPIPE_BASE_ARCHIVE_H_
#define VKPIPE_BASE_ARCHIVE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vkpipe/status.h"

typedef struct vkp_archive_writer_t vkp_archive_writer_t;
typedef struct vkp_archive_t vkp_archive_t;

vkp_status_t vkp_archive_writer_create(vkp_archive_writer_t **out_writer)
    VKP_MUST_USE;
void vkp_archive_writer_destroy(vkp_archive_writer_t *writer);
// Adds an entry; `name` and `data` are copied. Names are unique.
vkp_status_t vkp_archive_writer_add(vkp_archive_writer_t *writer,
                                    const char *name, const void *data,
                                    size_t size) VKP_MUST_USE;
// Writes the archive to `path` (through a temporary file and a rename, so a
// failed write never leaves a half file under `path`).
vkp_status_t vkp_archive_writer_save(const vkp_archive_writer_t *writer,
                                     const char *path, uint32_t format_version)
    VKP_MUST_USE;

// Reads and checks the archive at `path`; fails unless its format version is
// `expected_version`.
vkp_status_t vkp_archive_open(const char *path, uint32_t expected_version,
                              vkp_archive_t **out_archive) VKP_MUST_USE;
// Same, from memory (`data` copied).
vkp_status_t vkp_archive_open_memory(const void *data, size_t size,
                                     const char *what,
                                     uint32_t expected_version,
                                     vkp_archive_t **out_archive) VKP_MUST_USE;
void vkp_archive_close(vkp_archive_t *archive);

// Entry lookup: borrowed pointers valid until close.
bool vkp_archive_find(const vkp_archive_t *archive, const char *name,
                      const void **out_data, size_t *out_size);
int32_t vkp_archive_count(const vkp_archive_t *archive);
const char *vkp_archive_name(const vkp_archive_t *archive, int32_t index);
size_t vkp_archive_size(const vkp_archive_t *archive, int32_t index);
uint32_t vkp_archive_crc(const vkp_archive_t *archive, int32_t index);
// The entry's bytes (borrowed, valid until close), or NULL for a bad index.
const void *vkp_archive_data(const vkp_archive_t *archive, int32_t index);

// Entries in file order, for digests over a whole archive (signing).
typedef void (*vkp_archive_visit_fn)(void *context, const char *name,
                                     const void *data, size_t size);
void vkp_archive_visit(const vkp_archive_t *archive, vkp_archive_visit_fn fn,
                       void *context);
// Entries in the order they were added (the order save writes them).
void vkp_archive_writer_visit(const vkp_archive_writer_t *writer,
                              vkp_archive_visit_fn fn, void *context);

// Most entries an archive may hold (names are checked pairwise for
// duplicates, so the count is bounded).
#define VKP_ARCHIVE_MAX_ENTRIES 16384
// Largest archive file read (1 TiB): checked before allocating.
#define VKP_ARCHIVE_MAX_BYTES ((size_t)1 << 40)

// CRC-32 (IEEE 802.3), continuing from `crc` (0 to start).
uint32_t vkp_crc32(uint32_t crc, const void *data, size_t size);

#endif  // VKPIPE_BASE_ARCHIVE_H_
