// SPDX-License-Identifier: Apache-2.0
// A string -> int32 hash map (open addressing). Keys are borrowed: the caller
// keeps them alive while they are in the map. Not thread-safe.
#ifndef VKPIPE_BASE_STRMAP_H_
#define VKPIPE_BASE_STRMAP_H_

#include <stdbool.h>
#include <stdint.h>

#include "vkpipe/status.h"

typedef struct vkp_strmap_t {
  const char **keys;
  int32_t *values;
  uint32_t capacity;  // power of two, or 0
  uint32_t count;
} vkp_strmap_t;

void vkp_strmap_init(vkp_strmap_t *map);
void vkp_strmap_deinit(vkp_strmap_t *map);
// Inserts or overwrites.
vkp_status_t vkp_strmap_put(vkp_strmap_t *map, const char *key, int32_t value)
    VKP_MUST_USE;
// The value for `key`, or -1.
int32_t vkp_strmap_get(const vkp_strmap_t *map, const char *key);
// Removes `key` if present (the entries after it in its probe run move
// back, so lookups stay exact); returns whether it was there.
bool vkp_strmap_remove(vkp_strmap_t *map, const char *key);

// Position of `name` in the list of `n` strings `list` (a plan's input or
// output names), or -1: a linear scan, for short lists without a map.
int32_t vkp__strlist_index(char *const *list, int32_t n, const char *name);

#endif  // VKPIPE_BASE_STRMAP_H_
