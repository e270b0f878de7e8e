// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the artifact loader (base/archive.c, pipeline/artifact.c and
// the JSON graph loader behind it). Before loading, every checksum in the
// input is recomputed (header, table, each entry whose bounds make sense),
// so mutations reach the parsers behind the CRC checks instead of stopping
// at them. Set VKP_FUZZ_KEEP_CRC=1 to fuzz the checks themselves.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/archive.h"
#include "tests/fuzz/fuzz.h"
#include "vkpipe/artifact.h"

static uint64_t vkp__le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= (uint64_t)p[i] << (8 * i);
  return v;
}
static void vkp__put(uint8_t *p, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

// Header: magic[8] version u32, count u32, table_off u64, table_crc u32,
// header_crc u32 (over the first 28 bytes). Table entries: name_len u32,
// name, offset u64, size u64, crc u32.
static void vkp__fix_crcs(uint8_t *img, size_t n) {
  if (n < 32) return;
  uint64_t table_off = vkp__le(img + 16, 8);
  if (table_off >= 32 && table_off <= n) {
    uint32_t count = (uint32_t)vkp__le(img + 12, 4);
    uint8_t *p = img + table_off, *end = img + n;
    for (uint32_t i = 0; i < count && end - p >= 4; ++i) {
      uint64_t nl = vkp__le(p, 4);
      if ((uint64_t)(end - p) < 4 + nl + 20) break;
      p += 4 + nl;
      uint64_t off = vkp__le(p, 8), sz = vkp__le(p + 8, 8);
      if (off >= 32 && off <= table_off && sz <= table_off - off)
        vkp__put(p + 16, vkp_crc32(0, img + off, (size_t)sz), 4);
      p += 20;
    }
    vkp__put(img + 24, vkp_crc32(0, img + table_off, n - (size_t)table_off), 4);
  }
  vkp__put(img + 28, vkp_crc32(0, img, 28), 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int keep = -1;
  if (keep < 0) keep = getenv("VKP_FUZZ_KEEP_CRC") != NULL;
  uint8_t *img = malloc(size ? size : 1);
  if (!img) return 0;
  if (size) memcpy(img, data, size);
  if (!keep) vkp__fix_crcs(img, size);
  vkp_artifact_t *art = NULL;
  vkp_status_t st = vkp_artifact_load_memory(img, size, "fuzz.vkp", NULL, &art);
  vkp_fuzz_check(st, art != NULL);
  if (art) {
    // Everything a tool reads from a loaded artifact.
    (void)vkp_artifact_metadata(art);
    for (int32_t i = 0; i < vkp_artifact_entry_count(art); ++i)
      (void)vkp_artifact_entry_name(art, i);
    if (vkp_artifact_blobs(art)) abort();  // untrusted code must not be offered
  }
  vkp_artifact_destroy(art);
  free(img);
  return 0;
}
