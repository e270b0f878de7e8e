// SPDX-License-Identifier: Apache-2.0
// The "cpu" target: vtable, blob format, loading and running stages.
#define _GNU_SOURCE  // memfd_create, sched_getaffinity
#include "runtime/cpu/target_cpu.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "codegen/c/emit.h"
#include "runtime/cpu/compile.h"
#include "runtime/cpu/pool.h"

typedef int (*vkp__stage_entry_fn)(const void *const *inputs, void *const *outputs,
                                   const void *const *constants, void *workspace);
// Stages with bounded values (codegen/c/emit.h, VKP_CODEGEN_C_ENTRY_BOUNDED).
typedef int (*vkp__stage_bounded_fn)(const void *const *inputs, void *const *outputs,
                                     const void *const *constants, void *workspace,
                                     int64_t *extents);
typedef size_t (*vkp__stage_ws_fn)(void);
typedef void (*vkp__stage_prepack_fn)(const void *const *constants, void *workspace);
typedef int (*vkp__stage_abi_fn)(void);
typedef const char *(*vkp__stage_error_fn)(int code);
typedef int (*vkp__stage_node_times_fn)(const char *const **names, const double **seconds,
                                        uint64_t *runs);

typedef struct vkp__cpu_stage_t {
  vkp_stage_t base;
  void *dl;
  // The memfd the object was loaded from, kept open while it is loaded:
  // glibc's dlopen treats a path it has already loaded as the same object,
  // so a second stage loaded through a reused "/proc/self/fd/N" would get
  // the first stage's code. -1 when a file was used instead.
  int dl_fd;
  vkp__stage_entry_fn entry;
  // A graph with bounded values (docs/onnx.md, "Data-dependent output
  // shapes") runs through this entry instead, with `extents` (n_inputs +
  // n_outputs, owned): the inputs' run-time extents in, the outputs' out.
  vkp__stage_bounded_fn entry_bounded;
  int64_t *extents;
  // Copies of the graph's input and output values (names owned, no data),
  // n_inputs + n_outputs, for a bounded stage: the graph need not outlive
  // the stage.
  vkp_value_t *io_values;
  vkp__stage_error_fn error;  // explains a nonzero result; NULL in objects
                              // older than it
  // Objects compiled with VKP_NODE_TIMES ($VKPIPE_CPU_NODE_TIMES): the
  // kernels' times, printed to stderr at unload. NULL otherwise.
  vkp__stage_node_times_fn node_times;
  char *name;                 // the graph's, for that printout (owned)
  // The counters as this stage found them at load (seconds owned, one per
  // kernel): a reload of the same object (glibc may keep it mapped) starts
  // from the last one's totals, and only this stage's share is printed.
  double *node_base;
  uint64_t node_base_runs;
  void *workspace;            // owned, 64-byte aligned; ends with the
                              // packed weights (written once at load)
  vkp_cpu_pool_t *pool;       // the stage's threads (ABI 2 objects)
  void *constant_data;        // owned copy of every constant
  const void **constants;     // pointers into constant_data
  const void **inputs;        // per-run pointer arrays (owned)
  void **outputs;
  int32_t n_inputs, n_outputs;
  size_t *input_bytes, *output_bytes;
} vkp__cpu_stage_t;

static bool vkp__cpu_supports(const vkp_target_t *target, const vkp_graph_t *graph,
                              const vkp_node_t *node, char *reason,
                              size_t reason_size) {
  (void)target;
  return vkp_codegen_c_supports(graph, node, reason, reason_size);
}

static vkp_status_t vkp__cpu_compile(const vkp_target_t *target, const vkp_graph_t *graph,
                                     const vkp_compile_options_t *options,
                                     vkp_blob_t *out_blob) {
  if (options && options->precision != VKP_PRECISION_FP32)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "cpu: computes in float32 only; precision %s is a vulkan "
                           "option", vkp_precision_name(options->precision));
  int32_t threads = options && options->threads > 1 ? options->threads : 1;
  int32_t n_cpus = options && options->cpu_affinity ? options->n_cpu_affinity : 0;
  if (n_cpus < 0 || n_cpus > VKP_CPU_BLOB_MAX_AFFINITY)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "cpu target compiling graph '%s': cpu_affinity lists %d cpus; at "
                           "most %d",
                           graph->name, (int)n_cpus, VKP_CPU_BLOB_MAX_AFFINITY);
  for (int32_t i = 0; i < n_cpus; ++i)
    if (options->cpu_affinity[i] < 0 || options->cpu_affinity[i] >= CPU_SETSIZE)
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "cpu target compiling graph '%s': cpu_affinity entry %d is %d, "
                             "not a cpu number (0..%d)",
                             graph->name, (int)i, (int)options->cpu_affinity[i],
                             CPU_SETSIZE - 1);
  vkp_codegen_c_t code;
  VKP_RETURN_IF_ERROR(vkp_codegen_c_emit(graph, threads, &code));
  vkp_status_t st = NULL;
  if (options && options->dump_dir) {
    char *path = vkp__asprintf("%s/%s.c", options->dump_dir, graph->name);
    st = path ? vkp__write_file(path, code.source, code.source_size)
              : VKP_OOM("dump path");
    vkp__free(path);
  }
  // $VKPIPE_CPU_NODE_TIMES (not empty, not 0): every kernel call is timed,
  // and the times printed at unload (a profile; the object is cached apart).
  const char *node_times = getenv("VKPIPE_CPU_NODE_TIMES");
  bool timed = node_times && node_times[0] && strcmp(node_times, "0") != 0;
  vkp_cpu_compile_config_t cfg = {
      .march = options ? options->march : NULL,
      .cache_dir = options ? options->cache_dir : NULL,
      .extra_flags = timed ? "-DVKP_NODE_TIMES" : NULL,
      .threads = threads,
  };
  void *object = NULL;
  size_t object_size = 0;
  char key[33] = "";
  if (!st) st = vkp_cpu_compile(code.source, code.source_size, &cfg, &object, &object_size, key);
  size_t total = sizeof(vkp_cpu_blob_header_t) + (size_t)code.n_constants * sizeof(int32_t) +
                 code.source_size + object_size;
  if (!st) st = vkp_blob_alloc(out_blob, total);
  if (!st) {
    vkp_cpu_blob_header_t h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, VKP_CPU_BLOB_MAGIC, 8);
    h.header_size = sizeof h;
    h.threads = threads;
    h.n_inputs = graph->n_inputs;
    h.n_outputs = graph->n_outputs;
    h.n_constants = code.n_constants;
    h.n_kernels = code.n_kernels;
    h.source_size = code.source_size;
    h.object_size = object_size;
    memcpy(h.key, key, sizeof key);
    h.n_cpus = n_cpus;
    for (int32_t i = 0; i < n_cpus; ++i) h.cpus[i] = options->cpu_affinity[i];
    unsigned char *p = out_blob->data;
    memcpy(p, &h, sizeof h);
    p += sizeof h;
    memcpy(p, code.constants, (size_t)code.n_constants * sizeof(int32_t));
    p += (size_t)code.n_constants * sizeof(int32_t);
    memcpy(p, code.source, code.source_size);
    p += code.source_size;
    memcpy(p, object, object_size);
  }
  vkp__free(object);
  vkp_codegen_c_deinit(&code);
  return vkp_status_annotate(st, "cpu target compiling graph '%s'", graph->name);
}

// The stage's two large regions, its constants and its workspace (packed
// weights included), freed with free(). From 2 MiB on they are 2 MiB aligned
// and offered to the kernel for transparent huge pages (where THP is set to
// "madvise", as on Debian, nothing else asks for them): a model's weights
// are read once per frame, tens of megabytes of them, and with 4 KiB pages
// every panel of a packed weight is a TLB miss. ResNet-18 on one thread:
// 27.1 -> 25.8 ms (glibc's malloc.hugetlb tunable, same effect). Small
// regions stay 64-byte aligned.
static void *vkp__cpu_region_alloc(size_t bytes) {
  const size_t huge = (size_t)2 << 20;
  if (bytes < huge) return aligned_alloc(64, bytes ? (bytes + 63) / 64 * 64 : 64);
  size_t rounded = (bytes + huge - 1) / huge * huge;
  void *p = aligned_alloc(huge, rounded);
#ifdef MADV_HUGEPAGE
  if (p) (void)madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure is fine
#endif
  return p;
}

// The time per kernel of a stage compiled with VKP_NODE_TIMES, longest
// first, on stderr.
static void vkp__print_node_times(const vkp__cpu_stage_t *s) {
  const char *const *names = NULL;
  const double *seconds = NULL;
  uint64_t runs = 0;
  int n = s->node_times(&names, &seconds, &runs);
  if (n <= 0 || !s->node_base) return;
  runs -= s->node_base_runs;
  if (runs == 0) return;
  int *order = vkp__calloc((size_t)n, sizeof(int));
  double *own = vkp__calloc((size_t)n, sizeof(double));
  if (!order || !own) {
    vkp__free(order);
    vkp__free(own);
    return;
  }
  double total = 0;
  for (int i = 0; i < n; ++i) {
    order[i] = i;
    own[i] = seconds[i] - s->node_base[i];
    total += own[i];
  }
  seconds = own;
  for (int i = 1; i < n; ++i)  // insertion sort: a profile, not a hot path
    for (int j = i; j > 0 && seconds[order[j]] > seconds[order[j - 1]]; --j) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  fprintf(stderr, "cpu stage '%s': time per kernel over %llu runs (VKPIPE_CPU_NODE_TIMES)\n"
                  "    ms/run       %%  kernel (its main node, the op, how many more nodes fused in)\n",
          s->name ? s->name : "?", (unsigned long long)runs);
  for (int i = 0; i < n; ++i)
    fprintf(stderr, "  %9.4f  %6.2f  %s\n", 1e3 * seconds[order[i]] / (double)runs,
            total > 0 ? 100.0 * seconds[order[i]] / total : 0.0, names[order[i]]);
  fprintf(stderr, "  %9.4f  100.00  total of %d kernels\n", 1e3 * total / (double)runs, n);
  vkp__free(order);
  vkp__free(own);
}

static void vkp__cpu_unload(vkp_stage_t *base) {
  vkp__cpu_stage_t *s = (vkp__cpu_stage_t *)base;
  if (!s) return;
  if (s->node_times) vkp__print_node_times(s);
  vkp__free(s->name);
  vkp__free(s->node_base);
  vkp_cpu_pool_destroy(s->pool);  // before the code its tasks run goes
  if (s->dl) dlclose(s->dl);
  if (s->dl_fd >= 0) close(s->dl_fd);
  free(s->workspace);  // from vkp__cpu_region_alloc
  free(s->constant_data);
  vkp__free(s->constants);
  vkp__free(s->inputs);
  vkp__free(s->outputs);
  vkp__free(s->input_bytes);
  vkp__free(s->output_bytes);
  vkp__free(s->extents);
  for (int32_t i = 0; s->io_values && i < s->n_inputs + s->n_outputs; ++i)
    vkp__free(s->io_values[i].name);
  vkp__free(s->io_values);
  vkp__free(s);
}

// dlopens `object` without a compiler: through a memfd, else a private
// temporary file that is unlinked right after. With $VKPIPE_CPU_PROFILE_DIR
// set, the object is kept there as <key>.so instead, so that profilers
// (perf) can name the generated functions.
static vkp_status_t vkp__dlopen_bytes(const void *object, size_t size, const char *key,
                                      void **out_dl, int *out_fd) {
  *out_fd = -1;
  char path[1024];
  const char *keep_dir = getenv("VKPIPE_CPU_PROFILE_DIR");
  int fd = -1;
  if (keep_dir && keep_dir[0]) {
    snprintf(path, sizeof path, "%s/%s.so", keep_dir, key);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
      return vkp_status_make(VKP_STATUS_IO_ERROR, "cannot create '%s': %s", path,
                             strerror(errno));
  } else {
    fd = memfd_create("vkpipe-cpu-stage", MFD_CLOEXEC);
  }
  bool temp = false;
  char tpath[] = "/tmp/vkpipe-stage-XXXXXX";
  if (keep_dir && keep_dir[0]) {
    // path is set above
  } else if (fd >= 0) {
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  } else {
    fd = mkstemp(tpath);
    if (fd < 0)
      return vkp_status_make(VKP_STATUS_IO_ERROR, "cannot create a file for the stage object: %s",
                             strerror(errno));
    temp = true;
    snprintf(path, sizeof path, "%s", tpath);
  }
  const unsigned char *p = object;
  size_t left = size;
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      close(fd);
      if (temp) unlink(tpath);
      return vkp_status_make(VKP_STATUS_IO_ERROR, "writing the stage object: %s", strerror(errno));
    }
    p += w;
    left -= (size_t)w;
  }
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  const char *err = dl ? NULL : dlerror();
  bool memfd = !temp && !(keep_dir && keep_dir[0]);
  if (memfd && dl) {
    *out_fd = fd;
  } else {
    close(fd);
  }
  if (temp) unlink(tpath);
  if (!dl)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "cannot load the stage object (built for another machine or "
                           "-march?): %s", err ? err : "dlopen failed");
  *out_dl = dl;
  return NULL;
}

// Every cpu of a stage's cpu_affinity must be one this process may run on
// (sched_getaffinity: the machine's cpus, less what taskset or a cgroup
// took away): pinning to another would fail, or silently not pin.
static vkp_status_t vkp__check_affinity(const int32_t *cpus, int32_t n) {
  if (n == 0) return NULL;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
    return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                           "cpu_affinity: cannot read this process's cpus: %s",
                           strerror(errno));
  for (int32_t i = 0; i < n; ++i) {
    if (cpus[i] >= 0 && cpus[i] < CPU_SETSIZE && CPU_ISSET(cpus[i], &allowed)) continue;
    char list[256] = "";
    size_t at = 0;
    for (int c = 0; c < CPU_SETSIZE && at + 16 < sizeof list; ++c) {
      if (!CPU_ISSET(c, &allowed)) continue;
      int last = c;
      while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &allowed)) ++last;
      at += (size_t)snprintf(list + at, sizeof list - at, at ? ",%d" : "%d", c);
      if (last > c) at += (size_t)snprintf(list + at, sizeof list - at, "-%d", last);
      c = last;
    }
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "cpu_affinity names cpu %d, which this process may not run on "
                           "(it may use cpus %s)",
                           (int)cpus[i], list);
  }
  return NULL;
}

static vkp_status_t vkp__cpu_load_impl(const vkp_target_t *target, const vkp_graph_t *graph,
                                       const void *blob, size_t blob_size,
                                       vkp__cpu_stage_t *s) {
  vkp_cpu_blob_header_t h;
  if (blob_size < sizeof h)
    return vkp_status_make(VKP_STATUS_DATA_LOSS, "cpu blob of %zu bytes is too short", blob_size);
  memcpy(&h, blob, sizeof h);
  if (memcmp(h.magic, VKP_CPU_BLOB_MAGIC, 8) != 0 || h.header_size != sizeof h)
    return vkp_status_make(VKP_STATUS_DATA_LOSS, "not a cpu target blob (bad magic or version)");
  if (h.n_cpus < 0 || h.n_cpus > VKP_CPU_BLOB_MAX_AFFINITY)
    return vkp_status_make(VKP_STATUS_DATA_LOSS, "cpu blob pins to %d cpus", (int)h.n_cpus);
  VKP_RETURN_IF_ERROR(vkp__check_affinity(h.cpus, h.n_cpus));
  if (h.n_constants < 0 || h.n_inputs != graph->n_inputs || h.n_outputs != graph->n_outputs)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "cpu blob is for %d inputs and %d outputs; graph '%s' has %d and %d",
                           (int)h.n_inputs, (int)h.n_outputs, graph->name,
                           (int)graph->n_inputs, (int)graph->n_outputs);
  size_t rest = blob_size - sizeof h, cbytes = (size_t)h.n_constants * sizeof(int32_t);
  if (cbytes > rest || h.source_size > rest - cbytes ||
      h.object_size != rest - cbytes - h.source_size)
    return vkp_status_make(VKP_STATUS_DATA_LOSS,
                           "cpu blob sizes do not add up (%zu bytes after the header)", rest);
  const unsigned char *p = (const unsigned char *)blob + sizeof h;
  int32_t *indices = vkp__calloc((size_t)h.n_constants + 1, sizeof(int32_t));
  if (!indices) return VKP_OOM("constant list");
  memcpy(indices, p, cbytes);
  const unsigned char *object = p + cbytes + h.source_size;
  // Constants: one aligned copy, handed to the entry on every run.
  size_t total = 0;
  vkp_status_t st = NULL;
  for (int32_t i = 0; i < h.n_constants && !st; ++i) {
    int32_t v = indices[i];
    if (v < 0 || v >= graph->n_values || graph->values[v].kind != VKP_VALUE_CONSTANT)
      st = vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "cpu blob names constant %d, which graph '%s' does not have",
                           (int)v, graph->name);
    else
      total += (graph->values[v].nbytes + 63) / 64 * 64;
  }
  if (!st) {
    s->constant_data = vkp__cpu_region_alloc(total);
    s->constants = vkp__calloc((size_t)h.n_constants + 1, sizeof(void *));
    if (!s->constant_data || !s->constants) st = VKP_OOM("stage constants");
  }
  for (int32_t i = 0, at = 0; i < h.n_constants && !st; ++i) {
    const vkp_value_t *v = &graph->values[indices[i]];
    unsigned char *dst = (unsigned char *)s->constant_data + at;
    if (v->nbytes) memcpy(dst, v->data, v->nbytes);
    s->constants[i] = dst;
    at += (int32_t)((v->nbytes + 63) / 64 * 64);
  }
  vkp__free(indices);
  char key[sizeof h.key + 1];
  memcpy(key, h.key, sizeof h.key);
  key[sizeof h.key] = '\0';
  for (char *k = key; *k; ++k)  // the key names a file: hex digits only
    if (!((*k >= '0' && *k <= '9') || (*k >= 'a' && *k <= 'f'))) *k = '_';
  if (!st) st = vkp__dlopen_bytes(object, (size_t)h.object_size, key, &s->dl, &s->dl_fd);
  bool bounded = false;
  for (int32_t v = 0; v < graph->n_values; ++v) bounded |= graph->values[v].bounded;
  if (!st) {
    const char *entry = bounded ? VKP_CODEGEN_C_ENTRY_BOUNDED : VKP_CODEGEN_C_ENTRY;
    if (bounded)
      s->entry_bounded = (vkp__stage_bounded_fn)(uintptr_t)dlsym(s->dl, entry);
    else
      s->entry = (vkp__stage_entry_fn)(uintptr_t)dlsym(s->dl, entry);
    s->error = (vkp__stage_error_fn)(uintptr_t)dlsym(s->dl, VKP_CODEGEN_C_ERROR);
    s->node_times =
        (vkp__stage_node_times_fn)(uintptr_t)dlsym(s->dl, VKP_CODEGEN_C_NODE_TIMES);
    if (s->node_times) {
      const char *const *names = NULL;
      const double *seconds = NULL;
      uint64_t runs = 0;
      int n = s->node_times(&names, &seconds, &runs);
      s->name = vkp__strdup(graph->name);
      s->node_base = n >= 0 ? vkp__calloc((size_t)n + 1, sizeof(double)) : NULL;
      if (s->node_base) memcpy(s->node_base, seconds, (size_t)n * sizeof(double));
      s->node_base_runs = runs;
    }
    vkp__stage_ws_fn ws = (vkp__stage_ws_fn)(uintptr_t)dlsym(s->dl, VKP_CODEGEN_C_WORKSPACE);
    if ((!s->entry && !s->entry_bounded) || !ws)
      st = vkp_status_make(VKP_STATUS_DATA_LOSS, "stage object lacks %s or %s%s", entry,
                           VKP_CODEGEN_C_WORKSPACE,
                           bounded ? " (the entry of a graph with data-dependent shapes)" : "");
    else {
      size_t bytes = (ws() + 63) / 64 * 64;
      s->workspace = vkp__cpu_region_alloc(bytes);
      if (!s->workspace) st = VKP_OOM("stage workspace");
      // ABI 2: the workspace starts with the pool the kernels split across,
      // started now and kept until unload.
      vkp__stage_abi_fn abi =
          (vkp__stage_abi_fn)(uintptr_t)dlsym(s->dl, VKP_CODEGEN_C_ABI_SYMBOL);
      if (!st && abi && abi() >= 2) {
        _Static_assert(sizeof(vkp_cpu_pool_ref_t) <= VKP_CODEGEN_C_WS_HEADER,
                       "the pool reference fits the workspace header");
        st = vkp_cpu_pool_create(h.threads > 1 ? h.threads : 1, h.n_cpus ? h.cpus : NULL,
                                 h.n_cpus, &s->pool);
        vkp_cpu_pool_ref_t ref = {.run = vkp_cpu_pool_run,
                                  .pool = s->pool,
                                  .workers = vkp_cpu_pool_workers(s->pool)};
        memset(s->workspace, 0, VKP_CODEGEN_C_WS_HEADER);
        if (!st) memcpy(s->workspace, &ref, sizeof ref);
      }
      vkp__stage_prepack_fn prepack =
          (vkp__stage_prepack_fn)(uintptr_t)dlsym(s->dl, VKP_CODEGEN_C_PREPACK);
      if (!st && !prepack)
        st = vkp_status_make(VKP_STATUS_DATA_LOSS, "stage object lacks %s",
                             VKP_CODEGEN_C_PREPACK);
      if (!st) prepack(s->constants, s->workspace);  // weights into GEMM panels
    }
  }
  if (!st) {
    s->n_inputs = graph->n_inputs;
    s->n_outputs = graph->n_outputs;
    s->inputs = vkp__calloc((size_t)s->n_inputs + 1, sizeof(void *));
    s->outputs = vkp__calloc((size_t)s->n_outputs + 1, sizeof(void *));
    s->input_bytes = vkp__calloc((size_t)s->n_inputs + 1, sizeof(size_t));
    s->output_bytes = vkp__calloc((size_t)s->n_outputs + 1, sizeof(size_t));
    size_t n_io = (size_t)(s->n_inputs + s->n_outputs);
    if (bounded) {
      s->extents = vkp__calloc(n_io + 1, sizeof(int64_t));
      s->io_values = vkp__calloc(n_io + 1, sizeof(vkp_value_t));
    }
    if (!s->inputs || !s->outputs || !s->input_bytes || !s->output_bytes ||
        (bounded && (!s->extents || !s->io_values)))
      st = VKP_OOM("stage tables");
    for (size_t i = 0; bounded && !st && i < n_io; ++i) {
      int32_t v = (int32_t)i < s->n_inputs ? graph->inputs[i]
                                            : graph->outputs[i - (size_t)s->n_inputs];
      s->io_values[i] = graph->values[v];
      s->io_values[i].data = NULL;
      s->io_values[i].name = vkp__strdup(graph->values[v].name);
      if (!s->io_values[i].name) st = VKP_OOM("stage tables");
    }
  }
  for (int32_t i = 0; i < s->n_inputs && !st; ++i) {
    const vkp_value_t *v = &graph->values[graph->inputs[i]];
    if (!vkp_shape_numel(v->rank, v->shape, vkp_dtype_size(v->dtype), &s->input_bytes[i]))
      st = vkp_status_make(VKP_STATUS_OUT_OF_RANGE, "input '%s' is too large", v->name);
  }
  for (int32_t i = 0; i < s->n_outputs && !st; ++i) {
    const vkp_value_t *v = &graph->values[graph->outputs[i]];
    if (!vkp_shape_numel(v->rank, v->shape, vkp_dtype_size(v->dtype), &s->output_bytes[i]))
      st = vkp_status_make(VKP_STATUS_OUT_OF_RANGE, "output '%s' is too large", v->name);
  }
  return st;
}

static vkp_status_t vkp__cpu_load(const vkp_target_t *target, const vkp_graph_t *graph,
                                  const void *blob, size_t blob_size,
                                  vkp_stage_t **out_stage) {
  *out_stage = NULL;
  vkp__cpu_stage_t *s = vkp__calloc(1, sizeof(*s));
  if (!s) return VKP_OOM("cpu stage");
  s->base.target = target;
  s->dl_fd = -1;
  vkp_status_t st = vkp__cpu_load_impl(target, graph, blob, blob_size, s);
  if (st) {
    vkp__cpu_unload(&s->base);
    return vkp_status_annotate(st, "cpu target loading graph '%s'", graph->name);
  }
  *out_stage = &s->base;
  return NULL;
}

// What a nonzero result of the entry means.
static vkp_status_t vkp__cpu_run_failed(const vkp__cpu_stage_t *s, int rc) {
  // A kernel that checks its data (an index out of range) stopped the run.
  const char *why = s->error ? s->error(rc) : NULL;
  if (why) return vkp_status_make(VKP_STATUS_OUT_OF_RANGE, "%s", why);
  return vkp_status_make(VKP_STATUS_INTERNAL, "cpu stage returned %d", rc);
}

// A stage with bounded values: inputs at any extent up to their bounds,
// outputs handed over with room for their bounds and coming back at their
// run-time shapes (as on ref).
static vkp_status_t vkp__cpu_run_bounded(vkp__cpu_stage_t *s, const vkp_tensor_t *inputs,
                                         vkp_tensor_t *outputs) {
  for (int32_t i = 0; i < s->n_inputs; ++i) {
    const vkp_value_t *v = &s->io_values[i];
    VKP_RETURN_IF_ERROR(vkp_value_check_tensor(v, &inputs[i], "input"));
    s->extents[i] = v->bounded ? inputs[i].shape[v->bounded_axis] : 0;
    s->inputs[i] = inputs[i].data;
  }
  for (int32_t i = 0; i < s->n_outputs; ++i) {
    const vkp_value_t *v = &s->io_values[s->n_inputs + i];
    // The kernels may write up to the bound: an output must have room for it.
    if (vkp_tensor_nbytes(&outputs[i]) != s->output_bytes[i] ||
        (!outputs[i].data && s->output_bytes[i]))
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "cpu stage output %d '%s' has %zu bytes; expected %zu (a "
                             "data-dependent output is passed at its bound)",
                             (int)i, v->name, vkp_tensor_nbytes(&outputs[i]),
                             s->output_bytes[i]);
    s->outputs[i] = outputs[i].data;
    s->extents[s->n_inputs + i] = 0;
  }
  vkp_cpu_pool_bind_caller(s->pool);
  int rc = s->entry_bounded(s->inputs, s->outputs, s->constants, s->workspace, s->extents);
  if (rc != 0) return vkp__cpu_run_failed(s, rc);
  for (int32_t i = 0; i < s->n_outputs; ++i) {
    const vkp_value_t *v = &s->io_values[s->n_inputs + i];
    if (!v->bounded) continue;
    int64_t e = s->extents[s->n_inputs + i];
    if (e < 0 || e > v->shape[v->bounded_axis])
      return vkp_status_make(VKP_STATUS_INTERNAL,
                             "cpu stage: output '%s' came back with extent %lld, outside "
                             "its bound %lld",
                             v->name, (long long)e, (long long)v->shape[v->bounded_axis]);
    outputs[i].shape[v->bounded_axis] = e;
  }
  return NULL;
}

static vkp_status_t vkp__cpu_run(vkp_stage_t *base, const vkp_tensor_t *inputs,
                                 vkp_tensor_t *outputs) {
  vkp__cpu_stage_t *s = (vkp__cpu_stage_t *)base;
  if (s->entry_bounded) return vkp__cpu_run_bounded(s, inputs, outputs);
  for (int32_t i = 0; i < s->n_inputs; ++i) {
    if (vkp_tensor_nbytes(&inputs[i]) != s->input_bytes[i] || (!inputs[i].data && s->input_bytes[i]))
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "cpu stage input %d has %zu bytes; expected %zu", (int)i,
                             vkp_tensor_nbytes(&inputs[i]), s->input_bytes[i]);
    s->inputs[i] = inputs[i].data;
  }
  for (int32_t i = 0; i < s->n_outputs; ++i) {
    if (vkp_tensor_nbytes(&outputs[i]) != s->output_bytes[i] ||
        (!outputs[i].data && s->output_bytes[i]))
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "cpu stage output %d has %zu bytes; expected %zu", (int)i,
                             vkp_tensor_nbytes(&outputs[i]), s->output_bytes[i]);
    s->outputs[i] = outputs[i].data;
  }
  vkp_cpu_pool_bind_caller(s->pool);
  int rc = s->entry(s->inputs, s->outputs, s->constants, s->workspace);
  if (rc != 0) return vkp__cpu_run_failed(s, rc);
  return NULL;
}

// The generated code's kernel for `node`: the cost model rates it by class.
static const char *vkp__cpu_kernel_class(const vkp_target_t *target,
                                         const vkp_graph_t *graph,
                                         const vkp_node_t *node,
                                         double *out_columns) {
  (void)target;
  return vkp_codegen_c_kernel_class(graph, node, out_columns);
}

// Compute factors of the kernel classes relative to the calibrated rate (a
// conv-shaped GEMM), measured per layer on ResNet-18, MobileNetV2 and a
// transformer block (docs/benchmarks.md, "Estimates per kernel class"); the
// width term is gemm_half_columns. The classes' relative factors were
// fitted first; all were then scaled by 1.4, the ratio of whole-model stage
// times to estimates on ResNet-18, MobileNetV2, SqueezeNet 1.1 and the
// encoder block (1.37-1.56) once the stages' weights sat on huge pages and
// the tile prefetched them: the calibration's matmul packs both of its
// operands every run, a model's layers read weights packed at load.
//
// The memory factors (and conv_direct) come from a later fit, per layer,
// of compute plus activation time over 150 convolutions of ResNet-18/-50,
// MobileNetV2 and SqueezeNet 1.1 on a Zen 5 VM, relative to its calibrated
// rates (docs/benchmarks.md, "Estimates with a memory term"); the compute
// factors of pointwise and Winograd rose by what that fit moved to memory.
#define VKP__CPU_CLASS_SCALE 1.4
static const vkp_target_kernel_rate_t vkp__cpu_kernel_rates[] = {
    {"conv_gemm", 1.0 * VKP__CPU_CLASS_SCALE, 0.0},
    {"conv_winograd", 0.93 * VKP__CPU_CLASS_SCALE, 0.10},
    {"conv_pointwise", 0.86 * VKP__CPU_CLASS_SCALE, 0.88},
    {"conv_direct", 0.84 * VKP__CPU_CLASS_SCALE, 0.54},
    {"conv_depthwise", 1.0 * VKP__CPU_CLASS_SCALE, 0.0},
    // Not fitted by hand: `vkpipe calibrate` measures these (and the others)
    // on the machine; until then the depthwise factor.
    {"conv_depthwise_s2", 1.0 * VKP__CPU_CLASS_SCALE, 0.0},
    {"attention", 1.0 * VKP__CPU_CLASS_SCALE, 0.0},
    {"gemm", 1.0 * VKP__CPU_CLASS_SCALE, 0.0},
    // F(4x4, 3x3): not fitted per layer yet; F(2x2)'s factor times the
    // 1.15-1.3x bench_cpu_kernels measured against it on the same layers.
    {"conv_winograd4", 1.1 * VKP__CPU_CLASS_SCALE, 0.0},
};

// The documented default rates (docs/pipeline-config.md, "Cost profile"),
// used until `vkpipe calibrate` measures this machine.
static const vkp_target_rates_t vkp__cpu_rates = {
    .device = "host",
    .gflops = 16.0,
    .gbps = 8.0,
    .launch_us = 0.5,
    .thread_compute_eff = 0.8,
    .thread_memory_eff = 0.3,
    // `vkpipe calibrate` on the 2-core Zen 5 VM: 0.2-1.4 us.
    .thread_split_us = 1.0,
    .gemm_half_columns = 16.0,
    .n_kernels = (int32_t)(sizeof vkp__cpu_kernel_rates / sizeof vkp__cpu_kernel_rates[0]),
    .kernels = vkp__cpu_kernel_rates,
};

const vkp_target_vtable_t vkp__target_cpu_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "cpu",
    // A host target (no device part) that is placement's default fallback;
    // cast reaches every dtype, the op table (codegen/c/ops.c) says which
    // each op takes.
    .caps = {.flags = VKP_TARGET_DEFAULT_FALLBACK,
             .dtypes = VKP_DTYPE_SET_ALL,
             .default_rates = &vkp__cpu_rates},
    .compiler =
        {
            .supports = vkp__cpu_supports,
            .estimate = NULL,  // the partitioner's roofline model
            .kernel_class = vkp__cpu_kernel_class,
            .compile = vkp__cpu_compile,
            .dump = vkp__cpu_dump,
        },
    .stage = {.load = vkp__cpu_load, .run = vkp__cpu_run, .unload = vkp__cpu_unload},
    .device = NULL,  // the runtime calls run from a worker thread
};

vkp_status_t vkp_target_cpu_register(vkp_registry_t *registry) {
  return vkp_registry_add(registry, &vkp__target_cpu_vtable, /*impl=*/NULL);
}
