// SPDX-License-Identifier: Apache-2.0
// The JSON graph format (docs/graph-format.md): a JSON file describing inputs,
// constants, nodes and outputs, plus a sidecar little-endian .bin holding the
// constants' bytes, named inside the JSON and resolved relative to it.
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/json_hooks.h"
#include "base/status_macros.h"
#include "graph/bind.h"
#include "graph/graph_internal.h"
#include "graph/readers.h"

#define VKP__JSON_FORMAT "vkpipe-graph"
#define VKP__JSON_VERSION 1
// Integers from ±2^53 on do not survive a trip through a JSON number (a
// double); they are written as decimal strings instead.
#define VKP__JSON_EXACT_INT (INT64_C(1) << 53)
// Constants start at multiples of this in saved .bin files.
#define VKP__BIN_ALIGN 16

// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// Reading helpers. `where` names the object being read ("node 'fc1'
// (matmul)", "constant 'w1'") for messages.

#define VKP__BAD(...) vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

static const char *vkp__json_type_name(const cJSON *item) {
  if (!item) return "nothing";
  if (cJSON_IsString(item)) return "a string";
  if (cJSON_IsNumber(item)) return "a number";
  if (cJSON_IsBool(item)) return "a boolean";
  if (cJSON_IsNull(item)) return "null";
  if (cJSON_IsArray(item)) return "an array";
  if (cJSON_IsObject(item)) return "an object";
  return "an invalid value";
}

// Fails on any key of `obj` not in `allowed` (NULL-terminated), so that a
// misspelt field is an error rather than silently ignored.
static vkp_status_t vkp__json_check_keys(const cJSON *obj,
                                         const char *const *allowed,
                                         const char *where) {
  for (const cJSON *c = obj->child; c; c = c->next) {
    const char *const *a = allowed;
    while (*a && strcmp(*a, c->string) != 0) ++a;
    if (!*a) return VKP__BAD("%s: unknown field '%s'", where, c->string);
    for (const cJSON *d = obj->child; d != c; d = d->next)
      if (strcmp(d->string, c->string) == 0)
        return VKP__BAD("%s: field '%s' given twice", where, c->string);
  }
  return NULL;
}

// Looks up field `key` of `obj`: *out is NULL when absent (an error when
// `required`); when present it must pass `is_kind` (if given), described as
// `kind` in the error.
static vkp_status_t vkp__json_field(const cJSON *obj, const char *key,
                                    bool required, const char *where,
                                    cJSON_bool (*is_kind)(const cJSON *),
                                    const char *kind, const cJSON **out) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  *out = NULL;
  if (!item) {
    if (required) return VKP__BAD("%s: missing field '%s'", where, key);
    return NULL;
  }
  if (is_kind && !is_kind(item))
    return VKP__BAD("%s: field '%s' must be %s, got %s", where, key, kind,
                    vkp__json_type_name(item));
  *out = item;
  return NULL;
}

static vkp_status_t vkp__json_string(const cJSON *obj, const char *key,
                                     bool required, const char *where,
                                     const char **out) {
  const cJSON *item = NULL;
  *out = NULL;
  VKP_RETURN_IF_ERROR(vkp__json_field(obj, key, required, where, cJSON_IsString,
                                      "a string", &item));
  if (item) *out = item->valuestring;
  return NULL;
}

// An integer: a JSON number that is integral and exact (|v| < 2^53), or a
// string of decimal digits for int64 values beyond that.
static bool vkp__json_to_int(const cJSON *item, int64_t *out) {
  if (cJSON_IsNumber(item)) {
    double d = item->valuedouble;
    if (!isfinite(d) || d != floor(d) || d >= (double)VKP__JSON_EXACT_INT ||
        d <= -(double)VKP__JSON_EXACT_INT)
      return false;
    *out = (int64_t)d;
    return true;
  }
  if (cJSON_IsString(item)) {
    const char *s = item->valuestring;
    if (!s[0] || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))) return false;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return false;
    *out = (int64_t)v;
    return true;
  }
  return false;
}

// A float: a JSON number, or "nan", "inf", "-inf" (JSON has no such numbers).
static bool vkp__json_to_float(const cJSON *item, double *out) {
  if (cJSON_IsNumber(item)) {
    *out = item->valuedouble;
    return true;
  }
  if (cJSON_IsString(item)) {
    const char *s = item->valuestring;
    if (strcmp(s, "nan") == 0) *out = NAN;
    else if (strcmp(s, "inf") == 0) *out = INFINITY;
    else if (strcmp(s, "-inf") == 0) *out = -INFINITY;
    else return false;
    return true;
  }
  return false;
}

static vkp_status_t vkp__json_int(const cJSON *obj, const char *key,
                                  bool required, const char *where,
                                  int64_t *out, bool *out_present) {
  const cJSON *item = NULL;
  VKP_RETURN_IF_ERROR(vkp__json_field(obj, key, required, where, NULL, NULL, &item));
  if (out_present) *out_present = item != NULL;
  if (item && !vkp__json_to_int(item, out))
    return VKP__BAD("%s: field '%s' must be an integer, got %s", where, key,
                    vkp__json_type_name(item));
  return NULL;
}

static vkp_status_t vkp__json_array(const cJSON *obj, const char *key,
                                    bool required, const char *where,
                                    const cJSON **out) {
  return vkp__json_field(obj, key, required, where, cJSON_IsArray, "an array", out);
}

static vkp_status_t vkp__json_dtype(const cJSON *obj, const char *where,
                                    vkp_dtype_t *out) {
  const char *name = NULL;
  VKP_RETURN_IF_ERROR(vkp__json_string(obj, "dtype", true, where, &name));
  if (!vkp_dtype_parse(name, out)) {
    char known[256];
    return vkp_status_make(VKP_STATUS_UNSUPPORTED, "%s: unknown dtype '%s' (known: %s)",
                           where, name,
                           vkp_dtype_set_format(VKP_DTYPE_SET_ALL, known, sizeof known));
  }
  return NULL;
}

static vkp_status_t vkp__json_shape(const cJSON *obj, const char *where,
                                    int32_t *out_rank, int64_t *shape) {
  const cJSON *arr = NULL;
  VKP_RETURN_IF_ERROR(vkp__json_array(obj, "shape", true, where, &arr));
  int n = cJSON_GetArraySize(arr);
  if (n > VKP_MAX_RANK)
    return VKP__BAD("%s: shape has %d dims; at most %d are supported", where, n,
                    VKP_MAX_RANK);
  int32_t i = 0;
  for (const cJSON *d = arr->child; d; d = d->next, ++i) {
    if (!vkp__json_to_int(d, &shape[i]) || shape[i] < 0)
      return VKP__BAD("%s: shape[%d] must be a non-negative integer", where,
                      (int)i);
  }
  *out_rank = i;
  return NULL;
}

// ---------------------------------------------------------------------------
// Largest JSON text read (the weights live in their own file).
#define VKP__JSON_MAX_BYTES ((size_t)1 << 30)

// The weights file, mapped read-only while constants are read.

typedef struct vkp__bin_t {
  const char *name;   // as written in the JSON (borrowed)
  char *path;         // resolved (owned)
  const uint8_t *data;
  size_t size;
  bool mapped;
} vkp__bin_t;

static bool vkp__path_is_absolute(const char *p) { return p[0] == '/'; }

// True when a relative path has a ".." component.
static bool vkp__path_climbs(const char *p) {
  while (*p) {
    const char *slash = strchr(p, '/');
    size_t len = slash ? (size_t)(slash - p) : strlen(p);
    if (len == 2 && p[0] == '.' && p[1] == '.') return true;
    p += len;
    while (*p == '/') ++p;
  }
  return false;
}

static vkp_status_t vkp__bin_open(vkp__bin_t *bin, const char *base_dir,
                                  const char *name, bool allow_outside) {
  memset(bin, 0, sizeof(*bin));
  bin->name = name;
  if (!name[0]) return VKP__BAD("field 'weights' is empty");
  if (!allow_outside && (vkp__path_is_absolute(name) || vkp__path_climbs(name)))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "field 'weights': '%s' %s; a graph's weights file must "
                           "lie in the graph's folder or below it (a caller can "
                           "allow other paths with allow_outside_paths)",
                           name, vkp__path_is_absolute(name)
                                     ? "is an absolute path"
                                     : "leaves the graph's folder through '..'");
  if (vkp__path_is_absolute(name) || !base_dir || !base_dir[0])
    bin->path = vkp__strdup(name);
  else
    bin->path = vkp__asprintf("%s/%s", base_dir, name);
  if (!bin->path) return VKP_OOM("weights path");
  // O_NONBLOCK: a FIFO must not block the open before fstat refuses it.
  int fd = open(bin->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return vkp_status_make(VKP_STATUS_IO_ERROR,
                           "cannot open weights file '%s': %s", bin->path,
                           strerror(errno));
  struct stat sb;
  vkp_status_t st = NULL;
  if (fstat(fd, &sb) != 0) {
    st = vkp_status_make(VKP_STATUS_IO_ERROR, "cannot stat weights file '%s': %s",
                         bin->path, strerror(errno));
  } else if (!S_ISREG(sb.st_mode)) {
    st = vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                         "weights file '%s' is %s, not a regular file", bin->path,
                         S_ISDIR(sb.st_mode) ? "a directory" : "not a file");
  } else if (sb.st_size > 0) {
    bin->size = (size_t)sb.st_size;
    void *p = mmap(NULL, bin->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
      st = vkp_status_make(VKP_STATUS_IO_ERROR, "cannot map weights file '%s': %s",
                           bin->path, strerror(errno));
    else {
      bin->data = p;
      bin->mapped = true;
    }
  }
  close(fd);
  return st;
}

// Drops the mapped pages of a constant once it has been copied, so that
// loading costs about one copy of the weights in memory rather than two. Only
// whole pages inside [offset, offset + length) go; a failure here is harmless.
static void vkp__bin_release(vkp__bin_t *bin, size_t offset, size_t length) {
  long page_size = sysconf(_SC_PAGESIZE);
  if (!bin->mapped || page_size <= 0) return;
  size_t page = (size_t)page_size;
  size_t start = (offset + page - 1) / page * page, end = (offset + length) / page * page;
  if (end > start)
    (void)madvise((void *)(bin->data + start), end - start, MADV_DONTNEED);
}

static void vkp__bin_close(vkp__bin_t *bin) {
  if (bin->mapped) munmap((void *)bin->data, bin->size);
  vkp__free(bin->path);
  memset(bin, 0, sizeof(*bin));
}

// ---------------------------------------------------------------------------
// Sections

typedef struct vkp__loader_t {
  const cJSON *root;
  const char *base_dir;
  vkp_graph_t *graph;
  vkp__bin_t bin;
  bool bin_open;
  const uint8_t *mem_bin;  // weights given in memory (vkp_graph_load_memory)
  size_t mem_bin_size;
  bool use_mem_bin;
  vkp__binder_t binder;    // sizes for symbolic input dims
  bool allow_outside_paths;
} vkp__loader_t;

static vkp_status_t vkp__load_input(vkp__loader_t *ld, const cJSON *item,
                                    int index) {
  static const char *const keys[] = {"name", "dtype", "shape", "bounded_axis",
                                     "doc", NULL};
  char where[256];
  snprintf(where, sizeof where, "inputs[%d]", index);
  if (!cJSON_IsObject(item))
    return VKP__BAD("%s must be an object, got %s", where,
                    vkp__json_type_name(item));
  const char *name = NULL;
  VKP_RETURN_IF_ERROR(vkp__json_string(item, "name", true, where, &name));
  snprintf(where, sizeof where, "input '%s'", name);
  VKP_RETURN_IF_ERROR(vkp__json_check_keys(item, keys, where));
  vkp_dtype_t dtype;
  VKP_RETURN_IF_ERROR(vkp__json_dtype(item, where, &dtype));
  // A dim is a size or the name of a symbolic dimension ("batch").
  const cJSON *arr = NULL;
  VKP_RETURN_IF_ERROR(vkp__json_array(item, "shape", true, where, &arr));
  int n = cJSON_GetArraySize(arr);
  if (n > VKP_MAX_RANK)
    return VKP__BAD("%s: shape has %d dims; at most %d are supported", where, n,
                    VKP_MAX_RANK);
  int32_t rank = 0;
  int64_t declared[VKP_MAX_RANK] = {0}, shape[VKP_MAX_RANK] = {0};
  const char *names[VKP_MAX_RANK] = {NULL};
  for (const cJSON *d = arr->child; d; d = d->next, ++rank) {
    if (cJSON_IsString(d) && d->valuestring[0]) {
      declared[rank] = -1;
      names[rank] = d->valuestring;
    } else if (!vkp__json_to_int(d, &declared[rank]) || declared[rank] < 0) {
      return VKP__BAD("%s: shape[%d] must be a non-negative integer or the "
                      "name of a symbolic dimension",
                      where, (int)rank);
    }
  }
  int32_t up_to_axis;
  vkp_status_t st = vkp__binder_shape(&ld->binder, name, rank, declared, names,
                                      shape, &up_to_axis);
  if (st) return vkp_status_annotate(st, "%s", where);
  VKP_RETURN_IF_ERROR(vkp_graph_add_input(ld->graph, name, dtype, rank, shape, NULL));
  const cJSON *bounded = cJSON_GetObjectItemCaseSensitive(item, "bounded_axis");
  if (up_to_axis >= 0) {
    if (bounded && !(cJSON_IsNumber(bounded) && bounded->valuedouble == up_to_axis))
      return VKP__BAD("%s: bounded_axis and a dimension bound with up_to name "
                      "different axes",
                      where);
    return vkp_graph_set_input_bounded(ld->graph, name, up_to_axis);
  }
  // A bounded input (a pipeline stage reading a data-dependent value):
  // shape[bounded_axis] is its upper bound.
  if (!bounded) return NULL;
  int64_t axis;
  if (!vkp__json_to_int(bounded, &axis) || axis < 0 || axis >= rank)
    return VKP__BAD("%s: bounded_axis must be an axis 0..%d", where, (int)rank - 1);
  return vkp_graph_set_input_bounded(ld->graph, name, (int32_t)axis);
}

static vkp_status_t vkp__load_constant(vkp__loader_t *ld, const cJSON *item,
                                       int index) {
  static const char *const keys[] = {"name",   "dtype",  "shape",
                                     "offset", "length", "doc", NULL};
  char where[256];
  snprintf(where, sizeof where, "constants[%d]", index);
  if (!cJSON_IsObject(item))
    return VKP__BAD("%s must be an object, got %s", where,
                    vkp__json_type_name(item));
  const char *name = NULL;
  VKP_RETURN_IF_ERROR(vkp__json_string(item, "name", true, where, &name));
  snprintf(where, sizeof where, "constant '%s'", name);
  VKP_RETURN_IF_ERROR(vkp__json_check_keys(item, keys, where));
  vkp_dtype_t dtype;
  int32_t rank = 0;
  int64_t shape[VKP_MAX_RANK] = {0};
  int64_t offset = 0, length = 0;
  VKP_RETURN_IF_ERROR(vkp__json_dtype(item, where, &dtype));
  VKP_RETURN_IF_ERROR(vkp__json_shape(item, where, &rank, shape));
  VKP_RETURN_IF_ERROR(vkp__json_int(item, "offset", true, where, &offset, NULL));
  VKP_RETURN_IF_ERROR(vkp__json_int(item, "length", true, where, &length, NULL));
  if (offset < 0 || length < 0)
    return VKP__BAD("%s: offset %lld and length %lld must not be negative",
                    where, (long long)offset, (long long)length);
  size_t bytes = 0;
  char sbuf[160];
  if (!vkp_shape_numel(rank, shape, vkp_dtype_size(dtype), &bytes))
    return vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                           "%s: %s %s is too large (its byte size overflows)",
                           where, vkp_dtype_name(dtype),
                           vkp_shape_format(rank, shape, sbuf, sizeof sbuf));
  if ((uint64_t)length != (uint64_t)bytes)
    return VKP__BAD("%s: length %lld does not match %s %s (%zu bytes)", where,
                    (long long)length, vkp_dtype_name(dtype),
                    vkp_shape_format(rank, shape, sbuf, sizeof sbuf), bytes);
  // offset + length, both below 2^63, cannot overflow uint64_t.
  if ((uint64_t)offset + (uint64_t)length > (uint64_t)ld->bin.size)
    return vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                           "%s: offset %lld+%lld past end of %s (size %zu)",
                           where, (long long)offset, (long long)length,
                           ld->bin.name, ld->bin.size);
  static const uint8_t empty = 0;
  const void *data = ld->bin.data ? ld->bin.data + offset : &empty;
  VKP_RETURN_IF_ERROR(
      vkp_graph_add_constant(ld->graph, name, dtype, rank, shape, data, NULL));
  vkp__bin_release(&ld->bin, (size_t)offset, (size_t)length);
  return NULL;
}

static const char *const vkp__attr_kind_keys[] = {
#define VKP__ATTR_KIND_KEY(e, s) s,
    VKP_ATTR_KIND_LIST(VKP__ATTR_KIND_KEY)
#undef VKP__ATTR_KIND_KEY
};

// Parses one attribute `{"<kind>": value}` into `attr`, whose arrays are
// allocated here (the caller frees them with vkp__attr_array_free).
static vkp_status_t vkp__load_attr(const cJSON *item, const char *where,
                                   vkp_attr_t *attr) {
  memset(attr, 0, sizeof(*attr));
  attr->name = item->string;
  if (!cJSON_IsObject(item) || !item->child || item->child->next)
    return VKP__BAD("%s: attribute '%s' must be an object with one key naming "
                    "its type (int, float, ints, floats, string), e.g. "
                    "{\"int\": 1}",
                    where, item->string);
  const cJSON *v = item->child;
  int kind = 0;
  while (kind < VKP_ATTR_KIND_COUNT && strcmp(vkp__attr_kind_keys[kind], v->string))
    ++kind;
  if (kind == VKP_ATTR_KIND_COUNT)
    return VKP__BAD("%s: attribute '%s' has unknown type '%s' (known: int, "
                    "float, ints, floats, string)",
                    where, item->string, v->string);
  attr->kind = (vkp_attr_kind_t)kind;
  switch (attr->kind) {
    case VKP_ATTR_INT:
      if (!vkp__json_to_int(v, &attr->i))
        return VKP__BAD("%s: attribute '%s' must be an integer, got %s", where,
                        item->string, vkp__json_type_name(v));
      return NULL;
    case VKP_ATTR_FLOAT:
      if (!vkp__json_to_float(v, &attr->f))
        return VKP__BAD("%s: attribute '%s' must be a number, got %s", where,
                        item->string, vkp__json_type_name(v));
      return NULL;
    case VKP_ATTR_STRING:
      if (!cJSON_IsString(v))
        return VKP__BAD("%s: attribute '%s' must be a string, got %s", where,
                        item->string, vkp__json_type_name(v));
      attr->s = v->valuestring;
      return NULL;
    case VKP_ATTR_INTS:
    case VKP_ATTR_FLOATS:
      break;
    default:
      return VKP__BAD("%s: attribute '%s': bad type", where, item->string);
  }
  bool ints = attr->kind == VKP_ATTR_INTS;
  if (!cJSON_IsArray(v))
    return VKP__BAD("%s: attribute '%s' must be an array of %s, got %s", where,
                    item->string, ints ? "integers" : "numbers",
                    vkp__json_type_name(v));
  int n = cJSON_GetArraySize(v);
  void *arr = vkp__calloc((size_t)n + 1, ints ? sizeof(int64_t) : sizeof(double));
  if (!arr) return VKP_OOM("attribute values");
  if (ints) attr->ints = arr;
  else attr->floats = arr;
  attr->count = n;
  int i = 0;
  for (const cJSON *e = v->child; e; e = e->next, ++i) {
    bool ok = ints ? vkp__json_to_int(e, &((int64_t *)arr)[i])
                   : vkp__json_to_float(e, &((double *)arr)[i]);
    if (!ok)
      return VKP__BAD("%s: attribute '%s'[%d] must be %s, got %s", where,
                      item->string, i, ints ? "an integer" : "a number",
                      vkp__json_type_name(e));
  }
  return NULL;
}

// Reads an array of tensor names; "" (an omitted optional input) is allowed
// when `allow_empty`. *out_names (owned; the strings are borrowed from the
// JSON) has *out_n entries.
static vkp_status_t vkp__load_names(const cJSON *node, const char *key,
                                    const char *where, bool allow_empty,
                                    const char ***out_names, int32_t *out_n) {
  const cJSON *arr = NULL;
  *out_names = NULL;
  *out_n = 0;
  VKP_RETURN_IF_ERROR(vkp__json_array(node, key, true, where, &arr));
  int n = cJSON_GetArraySize(arr);
  const char **names = vkp__calloc((size_t)n + 1, sizeof(*names));
  if (!names) return VKP_OOM("tensor names");
  int i = 0;
  for (const cJSON *e = arr->child; e; e = e->next, ++i) {
    if (!cJSON_IsString(e) || (!allow_empty && !e->valuestring[0])) {
      vkp__free(names);
      return VKP__BAD("%s: %s[%d] must be a %stensor name, got %s", where, key,
                      i, allow_empty ? "" : "non-empty ",
                      vkp__json_type_name(e));
    }
    names[i] = e->valuestring;
  }
  *out_names = names;
  *out_n = n;
  return NULL;
}

static vkp_status_t vkp__load_node(vkp__loader_t *ld, const cJSON *item,
                                   int index) {
  static const char *const keys[] = {"name",  "op",     "inputs", "outputs",
                                     "attrs", "target", "doc",    NULL};
  char where[256];
  snprintf(where, sizeof where, "nodes[%d]", index);
  if (!cJSON_IsObject(item))
    return VKP__BAD("%s must be an object, got %s", where,
                    vkp__json_type_name(item));
  const char *name = NULL, *op_name = NULL, *target = NULL;
  VKP_RETURN_IF_ERROR(vkp__json_string(item, "name", true, where, &name));
  snprintf(where, sizeof where, "node '%s'", name);
  VKP_RETURN_IF_ERROR(vkp__json_string(item, "op", true, where, &op_name));
  vkp_op_t op = vkp_op_parse(op_name);
  if (op == VKP_OP_COUNT)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED, "%s: unknown op '%s'", where,
                           op_name);
  snprintf(where, sizeof where, "node '%s' (%s)", name, op_name);
  VKP_RETURN_IF_ERROR(vkp__json_check_keys(item, keys, where));
  VKP_RETURN_IF_ERROR(vkp__json_string(item, "target", false, where, &target));
  const cJSON *attrs_obj = cJSON_GetObjectItemCaseSensitive(item, "attrs");
  if (attrs_obj && !cJSON_IsObject(attrs_obj))
    return VKP__BAD("%s: field 'attrs' must be an object, got %s", where,
                    vkp__json_type_name(attrs_obj));

  vkp_status_t st = NULL;
  const char **ins = NULL, **outs = NULL;
  int32_t n_in = 0, n_out = 0, n_attrs = 0;
  vkp_attr_t *attrs = NULL;
  st = vkp__load_names(item, "inputs", where, true, &ins, &n_in);
  if (!st) st = vkp__load_names(item, "outputs", where, false, &outs, &n_out);
  if (!st && n_out == 0) st = VKP__BAD("%s: 'outputs' is empty", where);
  if (!st && attrs_obj) {
    int n = cJSON_GetArraySize(attrs_obj);
    attrs = vkp__calloc((size_t)n + 1, sizeof(*attrs));
    if (!attrs) st = VKP_OOM("attributes");
    for (const cJSON *a = attrs_obj->child; a && !st; a = a->next) {
      st = vkp__load_attr(a, where, &attrs[n_attrs]);
      ++n_attrs;  // counted even on failure so that its arrays get freed
    }
  }
  int32_t node_index = -1;
  if (!st)
    st = vkp_graph_add_node(ld->graph, name, op, n_in, ins, n_out, outs,
                            n_attrs, attrs, &node_index);
  if (!st && target)
    st = vkp_graph_set_node_target(ld->graph, node_index, target);
  for (int32_t i = 0; i < n_attrs; ++i) {
    vkp__free((void *)attrs[i].ints);
    vkp__free((void *)attrs[i].floats);
  }
  vkp__free(attrs);
  vkp__free(ins);
  vkp__free(outs);
  return st;
}

// A graph output: a name, or {"name", "dtype"?, "shape"?} whose dtype and
// shape are checked against inference once the graph is validated.
static vkp_status_t vkp__load_output(vkp__loader_t *ld, const cJSON *item,
                                     int index) {
  if (cJSON_IsString(item))
    return vkp_graph_mark_output(ld->graph, item->valuestring);
  char where[256];
  snprintf(where, sizeof where, "outputs[%d]", index);
  if (!cJSON_IsObject(item))
    return VKP__BAD("%s must be a tensor name or an object, got %s", where,
                    vkp__json_type_name(item));
  static const char *const keys[] = {"name", "dtype", "shape", "doc", NULL};
  const char *name = NULL;
  VKP_RETURN_IF_ERROR(vkp__json_string(item, "name", true, where, &name));
  snprintf(where, sizeof where, "output '%s'", name);
  VKP_RETURN_IF_ERROR(vkp__json_check_keys(item, keys, where));
  return vkp_graph_mark_output(ld->graph, name);
}

static vkp_status_t vkp__check_output(vkp__loader_t *ld, const cJSON *item) {
  if (!cJSON_IsObject(item)) return NULL;
  const char *name = cJSON_GetObjectItemCaseSensitive(item, "name")->valuestring;
  char where[256];
  snprintf(where, sizeof where, "output '%s'", name);
  const vkp_value_t *v = &ld->graph->values[vkp_graph_find_value(ld->graph, name)];
  if (cJSON_GetObjectItemCaseSensitive(item, "dtype")) {
    vkp_dtype_t dtype;
    VKP_RETURN_IF_ERROR(vkp__json_dtype(item, where, &dtype));
    if (dtype != v->dtype)
      return VKP__BAD("%s: declared dtype %s but the graph computes %s", where,
                      vkp_dtype_name(dtype), vkp_dtype_name(v->dtype));
  }
  if (cJSON_GetObjectItemCaseSensitive(item, "shape")) {
    int32_t rank = 0;
    int64_t shape[VKP_MAX_RANK] = {0};
    VKP_RETURN_IF_ERROR(vkp__json_shape(item, where, &rank, shape));
    bool same = rank == v->rank;
    for (int32_t i = 0; same && i < rank; ++i) same = shape[i] == v->shape[i];
    if (!same) {
      char a[160], b[160];
      return VKP__BAD("%s: declared shape %s but the graph computes %s", where,
                      vkp_shape_format(rank, shape, a, sizeof a),
                      vkp_shape_format(v->rank, v->shape, b, sizeof b));
    }
  }
  return NULL;
}

// Runs `fn` on every element of the array `key` of the root.
static vkp_status_t vkp__load_section(
    vkp__loader_t *ld, const char *key, bool required,
    vkp_status_t (*fn)(vkp__loader_t *, const cJSON *, int)) {
  const cJSON *arr = NULL;
  VKP_RETURN_IF_ERROR(vkp__json_array(ld->root, key, required, "graph", &arr));
  if (!arr) return NULL;
  int i = 0;
  for (const cJSON *e = arr->child; e; e = e->next, ++i)
    VKP_RETURN_IF_ERROR(fn(ld, e, i));
  return NULL;
}

static vkp_status_t vkp__load_root(vkp__loader_t *ld) {
  static const char *const keys[] = {"format",    "version", "name",
                                     "doc",       "weights", "inputs",
                                     "constants", "nodes",   "outputs", NULL};
  const cJSON *root = ld->root;
  if (!cJSON_IsObject(root))
    return VKP__BAD("the top level must be an object, got %s",
                    vkp__json_type_name(root));
  const char *format = NULL, *name = NULL, *weights = NULL;
  VKP_RETURN_IF_ERROR(vkp__json_string(root, "format", true, "graph", &format));
  if (strcmp(format, VKP__JSON_FORMAT) != 0)
    return VKP__BAD("field 'format' is '%s'; a vkpipe graph has '%s'", format,
                    VKP__JSON_FORMAT);
  int64_t version = 0;
  VKP_RETURN_IF_ERROR(vkp__json_int(root, "version", true, "graph", &version, NULL));
  if (version != VKP__JSON_VERSION)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "format version %lld is not supported (this build "
                           "reads version %d)",
                           (long long)version, VKP__JSON_VERSION);
  VKP_RETURN_IF_ERROR(vkp__json_check_keys(root, keys, "graph"));
  VKP_RETURN_IF_ERROR(vkp__json_string(root, "name", false, "graph", &name));
  VKP_RETURN_IF_ERROR(vkp__json_string(root, "weights", false, "graph", &weights));
  const cJSON *constants = NULL;
  VKP_RETURN_IF_ERROR(vkp__json_array(root, "constants", false, "graph", &constants));
  VKP_RETURN_IF_ERROR(vkp_graph_create(name ? name : "graph", &ld->graph));
  VKP_RETURN_IF_ERROR(vkp__load_section(ld, "inputs", true, vkp__load_input));
  VKP_RETURN_IF_ERROR(vkp__binder_finish(&ld->binder));
  if (constants && constants->child) {
    if (!weights)
      return VKP__BAD("the graph has constants but no 'weights' file");
    ld->bin_open = true;  // vkp__bin_close cleans up a half-open one too
    if (ld->use_mem_bin) {
      ld->bin.name = weights;
      ld->bin.data = ld->mem_bin;
      ld->bin.size = ld->mem_bin_size;
    } else {
      VKP_RETURN_IF_ERROR(vkp__bin_open(&ld->bin, ld->base_dir, weights,
                                        ld->allow_outside_paths));
    }
    VKP_RETURN_IF_ERROR(
        vkp__load_section(ld, "constants", false, vkp__load_constant));
    vkp__bin_close(&ld->bin);
    ld->bin_open = false;
  }
  VKP_RETURN_IF_ERROR(vkp__load_section(ld, "nodes", true, vkp__load_node));
  VKP_RETURN_IF_ERROR(vkp__load_section(ld, "outputs", true, vkp__load_output));
  VKP_RETURN_IF_ERROR(vkp_graph_validate(ld->graph));
  const cJSON *outputs = cJSON_GetObjectItemCaseSensitive(root, "outputs");
  for (const cJSON *e = outputs->child; e; e = e->next)
    VKP_RETURN_IF_ERROR(vkp__check_output(ld, e));
  return NULL;
}

// Line and column (1-based) of `pos` inside `text`.
static void vkp__line_column(const char *text, const char *pos, int *line,
                             int *column) {
  *line = 1;
  *column = 1;
  for (const char *p = text; p < pos; ++p) {
    if (*p == '\n') {
      ++*line;
      *column = 1;
    } else {
      ++*column;
    }
  }
}

static vkp_status_t vkp__graph_load_json_impl(
    const char *json, size_t json_size, const char *base_dir,
    const void *mem_bin, size_t mem_bin_size,
    const vkp_graph_load_options_t *options, vkp_graph_t **out_graph) {
  vkp__json_init_hooks();
  // A UTF-8 byte order mark is allowed (and skipped) before the document.
  if (json_size >= 3 && memcmp(json, "\xEF\xBB\xBF", 3) == 0) {
    json += 3;
    json_size -= 3;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(json, json_size, &end,
                                          /*require_null_terminated=*/false);
  if (!root) {
    if (vkp__json_oom()) return VKP_OOM("JSON document");
    int line = 0, column = 0;
    if (end >= json && end <= json + json_size)
      vkp__line_column(json, end, &line, &column);
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "malformed JSON at line %d, column %d", line, column);
  }
  // Anything but whitespace after the document is an error too.
  while (end && end < json + json_size &&
         (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
    ++end;
  if (end && end < json + json_size && *end) {
    int line = 0, column = 0;
    vkp__line_column(json, end, &line, &column);
    cJSON_Delete(root);
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "malformed JSON: trailing characters at line %d, "
                           "column %d",
                           line, column);
  }
  vkp__loader_t ld = {.root = root,
                      .base_dir = base_dir,
                      .mem_bin = mem_bin,
                      .mem_bin_size = mem_bin_size,
                      .use_mem_bin = mem_bin != NULL,
                      .allow_outside_paths = options && options->allow_outside_paths};
  vkp_status_t st = vkp__binder_init(&ld.binder, options);
  if (!st) st = vkp__load_root(&ld);
  vkp__binder_deinit(&ld.binder);
  if (ld.bin_open) vkp__bin_close(&ld.bin);
  cJSON_Delete(root);
  if (st) {
    vkp_graph_destroy(ld.graph);
    return st;
  }
  *out_graph = ld.graph;
  return NULL;
}

vkp_status_t vkp_graph_load_json(const char *json, size_t json_size,
                                 const char *base_dir, vkp_graph_t **out_graph) {
  *out_graph = NULL;
  return vkp__graph_load_json_impl(json, json_size, base_dir, NULL, 0, NULL,
                                   out_graph);
}

// Reads a whole file into a fresh NUL-terminated buffer.
static vkp_status_t vkp__read_file(const char *path, char **out, size_t *out_size) {
  return vkp__file_read(path, VKP__JSON_MAX_BYTES, "a JSON graph", (void **)out, out_size);
}
vkp_status_t vkp__graph_load_json_file(const char *path,
                                       const vkp_graph_load_options_t *options,
                                       vkp_graph_t **out_graph) {
  *out_graph = NULL;
  char *text = NULL, *dir = NULL;
  size_t size = 0;
  VKP_RETURN_IF_ERROR(vkp__read_file(path, &text, &size));
  const char *slash = strrchr(path, '/');
  if (slash) {
    dir = vkp__strndup(path, slash == path ? 1 : (size_t)(slash - path));
    if (!dir) {
      vkp__free(text);
      return VKP_OOM("directory name");
    }
  }
  vkp_status_t st =
      vkp__graph_load_json_impl(text, size, dir, NULL, 0, options, out_graph);
  vkp__free(dir);
  vkp__free(text);
  return vkp_status_annotate(st, "loading '%s'", path);
}

// ---------------------------------------------------------------------------
// Saving

// cJSON_Add* return NULL on allocation failure; every builder below checks.

// Numbers are written as raw text: cJSON's own printer accepts a 15-digit
// rendering that is merely close to the double, and prints integers above
// INT_MAX the same way, so neither would round-trip exactly.
static cJSON *vkp__json_make_int(int64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", (long long)v);
  if (v >= VKP__JSON_EXACT_INT || v <= -VKP__JSON_EXACT_INT)
    return cJSON_CreateString(buf);
  return cJSON_CreateRaw(buf);
}

static cJSON *vkp__json_make_float(double v) {
  if (isnan(v)) return cJSON_CreateString("nan");
  if (isinf(v)) return cJSON_CreateString(v > 0 ? "inf" : "-inf");
  // The shortest of %.15g..%.17g that reads back as the same double; a
  // decimal point or exponent keeps it a float to the reader's eye.
  char buf[40];
  for (int digits = 15; digits <= 17; ++digits) {
    snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (strtod(buf, NULL) == v) break;
  }
  if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
  return cJSON_CreateRaw(buf);
}

static bool vkp__json_add(cJSON *obj, const char *key, cJSON *item) {
  if (!item) return false;
  if (!cJSON_AddItemToObject(obj, key, item)) {
    cJSON_Delete(item);
    return false;
  }
  return true;
}

static bool vkp__json_push(cJSON *arr, cJSON *item) {
  if (!item) return false;
  if (!cJSON_AddItemToArray(arr, item)) {
    cJSON_Delete(item);
    return false;
  }
  return true;
}

static cJSON *vkp__json_make_shape(int32_t rank, const int64_t *shape) {
  cJSON *arr = cJSON_CreateArray();
  for (int32_t i = 0; arr && i < rank; ++i)
    if (!vkp__json_push(arr, vkp__json_make_int(shape[i]))) {
      cJSON_Delete(arr);
      return NULL;
    }
  return arr;
}

static cJSON *vkp__json_make_attr(const vkp_attr_t *a) {
  cJSON *obj = cJSON_CreateObject();
  if (!obj) return NULL;
  cJSON *v = NULL;
  switch (a->kind) {
    case VKP_ATTR_INT:
      v = vkp__json_make_int(a->i);
      break;
    case VKP_ATTR_FLOAT:
      v = vkp__json_make_float(a->f);
      break;
    case VKP_ATTR_STRING:
      v = cJSON_CreateString(a->s ? a->s : "");
      break;
    case VKP_ATTR_INTS:
    case VKP_ATTR_FLOATS:
      v = cJSON_CreateArray();
      for (int32_t i = 0; v && i < a->count; ++i) {
        cJSON *e = a->kind == VKP_ATTR_INTS ? vkp__json_make_int(a->ints[i])
                                            : vkp__json_make_float(a->floats[i]);
        if (!vkp__json_push(v, e)) {
          cJSON_Delete(v);
          v = NULL;
        }
      }
      break;
    default:
      break;
  }
  if (!vkp__json_add(obj, vkp_attr_kind_name(a->kind), v)) {
    cJSON_Delete(obj);
    return NULL;
  }
  return obj;
}

static cJSON *vkp__json_make_value(const vkp_value_t *v, bool with_data,
                                   size_t offset) {
  cJSON *obj = cJSON_CreateObject();
  bool ok = obj && vkp__json_add(obj, "name", cJSON_CreateString(v->name)) &&
            vkp__json_add(obj, "dtype", cJSON_CreateString(vkp_dtype_name(v->dtype))) &&
            vkp__json_add(obj, "shape", vkp__json_make_shape(v->rank, v->shape));
  if (ok && v->kind == VKP_VALUE_INPUT && v->bounded)
    ok = vkp__json_add(obj, "bounded_axis", vkp__json_make_int(v->bounded_axis));
  if (ok && with_data)
    ok = vkp__json_add(obj, "offset", vkp__json_make_int((int64_t)offset)) &&
         vkp__json_add(obj, "length", vkp__json_make_int((int64_t)v->nbytes));
  if (!ok) {
    cJSON_Delete(obj);
    return NULL;
  }
  return obj;
}

static cJSON *vkp__json_make_node(const vkp_graph_t *g, const vkp_node_t *n) {
  cJSON *obj = cJSON_CreateObject();
  cJSON *ins = NULL, *outs = NULL;
  bool ok = obj && vkp__json_add(obj, "name", cJSON_CreateString(n->name)) &&
            vkp__json_add(obj, "op", cJSON_CreateString(vkp_op_name(n->op))) &&
            vkp__json_add(obj, "inputs", ins = cJSON_CreateArray()) &&
            vkp__json_add(obj, "outputs", outs = cJSON_CreateArray());
  for (int32_t i = 0; ok && i < n->n_inputs; ++i)
    ok = vkp__json_push(ins, cJSON_CreateString(
                                 n->inputs[i] >= 0 ? g->values[n->inputs[i]].name : ""));
  for (int32_t i = 0; ok && i < n->n_outputs; ++i)
    ok = vkp__json_push(outs, cJSON_CreateString(g->values[n->outputs[i]].name));
  if (ok && n->n_attrs) {
    cJSON *attrs = cJSON_CreateObject();
    ok = vkp__json_add(obj, "attrs", attrs);
    for (int32_t i = 0; ok && i < n->n_attrs; ++i)
      ok = vkp__json_add(attrs, n->attrs[i].name, vkp__json_make_attr(&n->attrs[i]));
  }
  if (ok && n->target) ok = vkp__json_add(obj, "target", cJSON_CreateString(n->target));
  if (!ok) {
    cJSON_Delete(obj);
    return NULL;
  }
  return obj;
}

static size_t vkp__align_up(size_t v) {
  return (v + VKP__BIN_ALIGN - 1) / VKP__BIN_ALIGN * VKP__BIN_ALIGN;
}

// Builds the JSON document; `bin_name` is the weights file as referenced.
static cJSON *vkp__json_make_graph(const vkp_graph_t *g, const char *bin_name) {
  cJSON *root = cJSON_CreateObject();
  bool ok = root &&
            vkp__json_add(root, "format", cJSON_CreateString(VKP__JSON_FORMAT)) &&
            vkp__json_add(root, "version", vkp__json_make_int(VKP__JSON_VERSION)) &&
            vkp__json_add(root, "name", cJSON_CreateString(g->name));
  bool has_constants = false;
  for (int32_t i = 0; i < g->n_values; ++i)
    has_constants |= g->values[i].kind == VKP_VALUE_CONSTANT;
  if (ok && has_constants)
    ok = vkp__json_add(root, "weights", cJSON_CreateString(bin_name));
  cJSON *inputs = ok ? cJSON_CreateArray() : NULL;
  ok = ok && vkp__json_add(root, "inputs", inputs);
  for (int32_t i = 0; ok && i < g->n_inputs; ++i)
    ok = vkp__json_push(inputs, vkp__json_make_value(&g->values[g->inputs[i]],
                                                     false, 0));
  cJSON *constants = ok ? cJSON_CreateArray() : NULL;
  ok = ok && vkp__json_add(root, "constants", constants);
  size_t offset = 0;
  for (int32_t i = 0; ok && i < g->n_values; ++i) {
    const vkp_value_t *v = &g->values[i];
    if (v->kind != VKP_VALUE_CONSTANT) continue;
    offset = vkp__align_up(offset);
    ok = vkp__json_push(constants, vkp__json_make_value(v, true, offset));
    offset += v->nbytes;
  }
  cJSON *nodes = ok ? cJSON_CreateArray() : NULL;
  ok = ok && vkp__json_add(root, "nodes", nodes);
  for (int32_t i = 0; ok && i < g->n_nodes; ++i)
    ok = vkp__json_push(nodes, vkp__json_make_node(g, &g->nodes[i]));
  cJSON *outputs = ok ? cJSON_CreateArray() : NULL;
  ok = ok && vkp__json_add(root, "outputs", outputs);
  for (int32_t i = 0; ok && i < g->n_outputs; ++i)
    ok = vkp__json_push(outputs, cJSON_CreateString(g->values[g->outputs[i]].name));
  if (!ok) {
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

static vkp_status_t vkp__write_bin(const vkp_graph_t *g, const char *path) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return vkp_status_make(VKP_STATUS_IO_ERROR, "cannot create '%s': %s", path,
                           strerror(errno));
  static const uint8_t zeros[VKP__BIN_ALIGN] = {0};
  size_t offset = 0;
  bool ok = true;
  for (int32_t i = 0; ok && i < g->n_values; ++i) {
    const vkp_value_t *v = &g->values[i];
    if (v->kind != VKP_VALUE_CONSTANT) continue;
    size_t pad = vkp__align_up(offset) - offset;
    ok = fwrite(zeros, 1, pad, f) == pad &&
         (v->nbytes == 0 || fwrite(v->data, 1, v->nbytes, f) == v->nbytes);
    offset += pad + v->nbytes;
  }
  int saved_errno = errno;
  if (fclose(f) != 0 && ok) {
    ok = false;
    saved_errno = errno;
  }
  if (!ok)
    return vkp_status_make(VKP_STATUS_IO_ERROR, "cannot write '%s': %s", path,
                           strerror(saved_errno));
  return NULL;
}

vkp_status_t vkp_graph_save(const vkp_graph_t *graph, const char *path) {
  vkp__json_init_hooks();
  // The .bin sits next to the JSON: "dir/model.json" -> "dir/model.bin".
  size_t len = strlen(path);
  size_t stem = len >= 5 && strcmp(path + len - 5, ".json") == 0 ? len - 5 : len;
  char *bin_path = vkp__asprintf("%.*s.bin", (int)stem, path);
  if (!bin_path) return VKP_OOM("weights path");
  const char *slash = strrchr(bin_path, '/');
  const char *bin_name = slash ? slash + 1 : bin_path;
  vkp_status_t st = NULL;
  char *text = NULL;
  cJSON *root = vkp__json_make_graph(graph, bin_name);
  if (!root) st = VKP_OOM("JSON document");
  if (!st) {
    text = cJSON_Print(root);
    if (!text) st = VKP_OOM("JSON text");
  }
  bool has_constants = false;
  for (int32_t i = 0; i < graph->n_values; ++i)
    has_constants |= graph->values[i].kind == VKP_VALUE_CONSTANT;
  if (!st && has_constants) st = vkp__write_bin(graph, bin_path);
  if (!st) st = vkp__write_text_line(path, text);
  cJSON_Delete(root);
  vkp__free(text);
  vkp__free(bin_path);
  return vkp_status_annotate(st, "saving graph '%s' to '%s'", graph->name, path);
}

// ---------------------------------------------------------------------------
// In memory (artifacts keep a stage's graph and weights as two entries)

vkp_status_t vkp_graph_load_memory(const void *json, size_t json_size,
                                   const void *bin, size_t bin_size,
                                   vkp_graph_t **out_graph) {
  *out_graph = NULL;
  static const uint8_t empty[1] = {0};
  return vkp__graph_load_json_impl(json, json_size, NULL, bin ? bin : empty,
                                   bin ? bin_size : 0, NULL, out_graph);
}

vkp_status_t vkp_graph_save_memory(const vkp_graph_t *graph,
                                   const char *bin_name, char **out_json,
                                   size_t *out_json_size, void **out_bin,
                                   size_t *out_bin_size) {
  *out_json = NULL;
  *out_bin = NULL;
  *out_json_size = *out_bin_size = 0;
  vkp__json_init_hooks();
  size_t total = 0;
  for (int32_t i = 0; i < graph->n_values; ++i) {
    const vkp_value_t *v = &graph->values[i];
    if (v->kind == VKP_VALUE_CONSTANT) total = vkp__align_up(total) + v->nbytes;
  }
  uint8_t *bin = vkp__calloc(1, total ? total : 1);
  if (!bin) return VKP_OOM("weights buffer");
  size_t offset = 0;
  for (int32_t i = 0; i < graph->n_values; ++i) {
    const vkp_value_t *v = &graph->values[i];
    if (v->kind != VKP_VALUE_CONSTANT) continue;
    offset = vkp__align_up(offset);
    if (v->nbytes) memcpy(bin + offset, v->data, v->nbytes);
    offset += v->nbytes;
  }
  cJSON *root = vkp__json_make_graph(graph, bin_name ? bin_name : "graph.bin");
  char *text = root ? cJSON_Print(root) : NULL;
  cJSON_Delete(root);
  if (!text) {
    vkp__free(bin);
    return VKP_OOM("JSON text");
  }
  *out_json = text;
  *out_json_size = strlen(text);
  *out_bin = bin;
  *out_bin_size = total;
  return NULL;
}
