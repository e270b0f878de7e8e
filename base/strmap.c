// SPDX-License-Identifier: Apache-2.0
#include "base/strmap.h"

#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"

static uint32_t vkp__strhash(const char *s) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (; *s; ++s) h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

void vkp_strmap_init(vkp_strmap_t *map) { memset(map, 0, sizeof(*map)); }

void vkp_strmap_deinit(vkp_strmap_t *map) {
  vkp__free(map->keys);
  vkp__free(map->values);
  memset(map, 0, sizeof(*map));
}

static void vkp__strmap_insert(const char **keys, int32_t *values,
                               uint32_t capacity, const char *key,
                               int32_t value, uint32_t *count) {
  uint32_t i = vkp__strhash(key) & (capacity - 1);
  while (keys[i] && strcmp(keys[i], key) != 0) i = (i + 1) & (capacity - 1);
  if (!keys[i]) ++*count;
  keys[i] = key;
  values[i] = value;
}

vkp_status_t vkp_strmap_put(vkp_strmap_t *map, const char *key, int32_t value) {
  if ((map->count + 1) * 2 > map->capacity) {
    uint32_t cap = map->capacity ? map->capacity * 2 : 16;
    const char **keys = vkp__calloc(cap, sizeof(*keys));
    int32_t *values = vkp__calloc(cap, sizeof(*values));
    if (!keys || !values) {
      vkp__free(keys);
      vkp__free(values);
      return VKP_OOM("name index");
    }
    uint32_t count = 0;
    for (uint32_t i = 0; i < map->capacity; ++i)
      if (map->keys[i])
        vkp__strmap_insert(keys, values, cap, map->keys[i], map->values[i],
                           &count);
    vkp__free(map->keys);
    vkp__free(map->values);
    map->keys = keys;
    map->values = values;
    map->capacity = cap;
    map->count = count;
  }
  vkp__strmap_insert(map->keys, map->values, map->capacity, key, value,
                     &map->count);
  return NULL;
}

int32_t vkp_strmap_get(const vkp_strmap_t *map, const char *key) {
  if (!map->capacity || !key) return -1;
  uint32_t i = vkp__strhash(key) & (map->capacity - 1);
  while (map->keys[i]) {
    if (strcmp(map->keys[i], key) == 0) return map->values[i];
    i = (i + 1) & (map->capacity - 1);
  }
  return -1;
}

bool vkp_strmap_remove(vkp_strmap_t *map, const char *key) {
  if (!map->capacity || !key) return false;
  const uint32_t mask = map->capacity - 1;
  uint32_t i = vkp__strhash(key) & mask;
  while (map->keys[i] && strcmp(map->keys[i], key) != 0) i = (i + 1) & mask;
  if (!map->keys[i]) return false;
  // Backward shift: an entry later in the run moves into the hole unless
  // its home slot lies cyclically in (hole, its slot].
  for (uint32_t j = (i + 1) & mask; map->keys[j]; j = (j + 1) & mask) {
    uint32_t home = vkp__strhash(map->keys[j]) & mask;
    bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (stays) continue;
    map->keys[i] = map->keys[j];
    map->values[i] = map->values[j];
    i = j;
  }
  map->keys[i] = NULL;
  map->values[i] = 0;
  map->count--;
  return true;
}

int32_t vkp__strlist_index(char *const *list, int32_t n, const char *name) {
  for (int32_t i = 0; i < n; ++i)
    if (strcmp(list[i], name) == 0) return i;
  return -1;
}
