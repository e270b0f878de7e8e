// SPDX-License-Identifier: Apache-2.0
// vkpipe-conformance: runs ONNX backend test folders (model.onnx plus
// test_data_set_*/input_*.pb and output_*.pb) on one target and prints, per
// ONNX op, how many tests passed, failed and were unsupported.
//
//   vkpipe-conformance --target ref /usr/share/libonnx-testdata/data/node
//
// A test is "unsupported" when import or the target refuses the model with
// an UNSUPPORTED status (or a data set uses a dtype the IR has not got); it
// "fails" on any other error or when an output differs beyond
// |got - want| <= atol + rtol * |want| (defaults rtol 1e-3, atol 1e-5).
// Exit status: 0 when nothing failed (and every --expect-pass op passed at
// least once), 1 otherwise, 2 on bad usage.
#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <fnmatch.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/scalar.h"
#include "vkpipe/graph.h"
#include "vkpipe/onnx.h"
#include "vkpipe/target.h"

typedef enum { VKP_CT_PASSED, VKP_CT_FAILED, VKP_CT_UNSUPPORTED } vkp_ct_result_t;

static const char *const vkp_ct_result_names[] = {"passed", "failed",
                                                  "unsupported"};

typedef struct vkp_ct_test_t {
  char *name;
  char *op;
  vkp_ct_result_t result;
  char *reason;  // first line of the message; NULL when passed
} vkp_ct_test_t;

typedef struct vkp_ct_options_t {
  const char *target;
  const char *filter;
  bool json;
  bool verbose;
  double rtol, atol;
  const char *expect_pass;  // comma-separated ONNX ops
  bool import_only;         // stop after import: no target, no data sets
  bool fold_all;            // freeze every input: the model must fold whole
} vkp_ct_options_t;

typedef struct vkp_ct_run_t {
  vkp_ct_test_t *tests;
  size_t n, cap;
} vkp_ct_run_t;

static bool vkp_ct_is_dir(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static bool vkp_ct_is_file(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static char *vkp_ct_join(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 2;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s/%s", a, b);
  return s;
}

static int vkp_ct_cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

// Sorted entries of `dir` whose names start with `prefix`.
static char **vkp_ct_list(const char *dir, const char *prefix, size_t *out_n) {
  *out_n = 0;
  DIR *d = opendir(dir);
  if (!d) return NULL;
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)) != 0)
      continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char **grown = realloc(names, cap * sizeof *names);
      if (!grown) break;
      names = grown;
    }
    names[n] = strdup(e->d_name);
    if (names[n]) ++n;
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, vkp_ct_cmp_str);
  *out_n = n;
  return names;
}

static void vkp_ct_free_list(char **names, size_t n) {
  for (size_t i = 0; i < n; ++i) free(names[i]);
  free(names);
}

// The op a test is filed under: the longest of the model's op types whose
// lower-case name, underscores dropped, starts the test's name (so
// "test_reduce_mean_keepdims" is ReduceMean); otherwise its first op type.
static char *vkp_ct_op_key(const char *test_name, const vkp_onnx_info_t *info) {
  char norm[512];
  size_t j = 0;
  const char *p = strncmp(test_name, "test_", 5) == 0 ? test_name + 5 : test_name;
  for (; *p && j + 1 < sizeof norm; ++p)
    if (*p != '_') norm[j++] = (char)tolower((unsigned char)*p);
  norm[j] = '\0';
  const char *best = NULL;
  size_t best_len = 0;
  for (int32_t i = 0; i < info->n_op_types; ++i) {
    const char *op = info->op_types[i];
    size_t len = strlen(op);
    if (len <= best_len || len > j) continue;
    bool match = true;
    for (size_t k = 0; k < len && match; ++k)
      match = tolower((unsigned char)op[k]) == norm[k];
    if (match) {
      best = op;
      best_len = len;
    }
  }
  // Expanded function tests ("test_softmax_axis_0_expanded") do not hold
  // the op they are named after: file them together.
  size_t nl = strlen(test_name);
  if (!best && nl > 9 && strcmp(test_name + nl - 9, "_expanded") == 0)
    return strdup("(expanded functions)");
  if (!best && info->n_op_types > 0) best = info->op_types[0];
  return strdup(best ? best : "(none)");
}

static char *vkp_ct_first_line(const char *msg) {
  const char *nl = strchr(msg, '\n');
  // "cannot import 1 item of X:\n  node ...: reason" (and a target's
  // "cannot run 1 node of graph X:\n  node ...: reason"): keep the first
  // reason line.
  const char *head = strstr(msg, "cannot import");
  if (!head || (nl && head > nl)) head = strstr(msg, "cannot run");
  if (nl && head && head < nl) {
    const char *line = nl + 1;
    while (*line == ' ') ++line;
    const char *end = strchr(line, '\n');
    return strndup(line, end ? (size_t)(end - line) : strlen(line));
  }
  return strndup(msg, nl ? (size_t)(nl - msg) : strlen(msg));
}

static bool vkp_ct_record(vkp_ct_run_t *run, const char *name, char *op,
                          vkp_ct_result_t result, char *reason) {
  if (run->n == run->cap) {
    size_t cap = run->cap ? run->cap * 2 : 256;
    vkp_ct_test_t *grown = realloc(run->tests, cap * sizeof *grown);
    if (!grown) {
      free(op);
      free(reason);
      return false;
    }
    run->tests = grown;
    run->cap = cap;
  }
  vkp_ct_test_t *t = &run->tests[run->n++];
  t->name = strdup(name);
  t->op = op;
  t->result = result;
  t->reason = reason;
  return true;
}

static double vkp_ct_get(const vkp_tensor_t *t, size_t i) {
  return vkp__scalar_get_f(t->dtype, t->data, i);
}

// NULL when `got` matches `want`; else a heap description.
static char *vkp_ct_compare(const char *name, const vkp_tensor_t *got,
                            const vkp_tensor_t *want, double rtol, double atol) {
  char buf[512], sg[128], sw[128];
  if (got->dtype != want->dtype || got->rank != want->rank ||
      memcmp(got->shape, want->shape, sizeof got->shape) != 0) {
    snprintf(buf, sizeof buf, "output '%s': got %s %s, want %s %s", name,
             vkp_dtype_name(got->dtype),
             vkp_shape_format(got->rank, got->shape, sg, sizeof sg),
             vkp_dtype_name(want->dtype),
             vkp_shape_format(want->rank, want->shape, sw, sizeof sw));
    return strdup(buf);
  }
  size_t n = vkp_tensor_numel(want), bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    double g = vkp_ct_get(got, i), w = vkp_ct_get(want, i);
    bool ok = (isnan(g) && isnan(w)) || (isinf(w) && g == w) ||
              fabs(g - w) <= atol + rtol * fabs(w);
    if (!ok) {
      if (!bad) first = i;
      ++bad;
      if (fabs(g - w) > worst || isnan(g)) worst = fabs(g - w);
    }
  }
  if (!bad) return NULL;
  snprintf(buf, sizeof buf,
           "output '%s': %zu of %zu elements differ (first at %zu: got %.7g, "
           "want %.7g; max error %.3g)",
           name, bad, n, first, vkp_ct_get(got, first), vkp_ct_get(want, first),
           worst);
  return strdup(buf);
}

// One data set: the model's inputs (in ONNX order; a sequence or optional
// input in `lists`, its `in` entry unused) and expected outputs, flattened:
// a sequence or optional output contributes one tensor per element, named
// as the importer names the graph outputs it becomes
// (vkp_onnx_list_element_name).
typedef struct vkp_ct_data_t {
  int32_t n_in, n_out;
  vkp_tensor_t *in, *out;
  vkp_onnx_list_t *lists;
  char **out_names;
  bool has_lists;
} vkp_ct_data_t;

static void vkp_ct_data_deinit(vkp_ct_data_t *d) {
  for (int32_t i = 0; d->in && i < d->n_in; ++i) vkp_tensor_deinit(&d->in[i]);
  for (int32_t i = 0; d->lists && i < d->n_in; ++i) vkp_onnx_list_deinit(&d->lists[i]);
  for (int32_t i = 0; d->out && i < d->n_out; ++i) {
    vkp_tensor_deinit(&d->out[i]);
    free(d->out_names[i]);
  }
  free(d->in);
  free(d->lists);
  free(d->out);
  free(d->out_names);
  memset(d, 0, sizeof *d);
}

#define VKP_CT_MAX_OUT 256

// Appends expected output `t` (moved) under `name`.
static vkp_status_t vkp_ct_add_out(vkp_ct_data_t *d, const char *name, vkp_tensor_t *t) {
  if (d->n_out >= VKP_CT_MAX_OUT) {
    vkp_tensor_deinit(t);
    return vkp_status_make(VKP_STATUS_UNSUPPORTED, "more than %d output tensors",
                           VKP_CT_MAX_OUT);
  }
  d->out_names[d->n_out] = strdup(name);
  d->out[d->n_out++] = *t;
  memset(t, 0, sizeof *t);
  return d->out_names[d->n_out - 1] ? NULL
                                    : vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "name");
}

// Reads input_<k>.pb for the model's inputs and output_<k>.pb for its
// outputs, each as the model declares it (TensorProto, SequenceProto or
// OptionalProto).
static vkp_status_t vkp_ct_data_load(const char *dir, const vkp_onnx_info_t *info,
                                     vkp_ct_data_t *d) {
  memset(d, 0, sizeof *d);
  int32_t n_in = info->n_inputs;
  d->in = calloc((size_t)n_in + 1, sizeof *d->in);
  d->lists = calloc((size_t)n_in + 1, sizeof *d->lists);
  d->out = calloc(VKP_CT_MAX_OUT, sizeof *d->out);
  d->out_names = calloc(VKP_CT_MAX_OUT, sizeof *d->out_names);
  if (!d->in || !d->lists || !d->out || !d->out_names)
    return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "data set");
  for (int32_t k = 0; k < n_in + info->n_outputs; ++k) {
    bool is_in = k < n_in;
    int32_t j = is_in ? k : k - n_in;
    vkp_onnx_kind_t kind = is_in ? info->input_kinds[j] : info->output_kinds[j];
    char file[64];
    snprintf(file, sizeof file, "%s_%d.pb", is_in ? "input" : "output", (int)j);
    char *path = vkp_ct_join(dir, file);
    if (!path) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "path");
    if (!vkp_ct_is_file(path)) {
      free(path);
      if (is_in)
        return vkp_status_make(VKP_STATUS_NOT_FOUND, "%s/%s is missing", dir,
                               file);
      break;
    }
    vkp_status_t st = NULL;
    if (is_in) d->n_in++;
    if (kind == VKP_ONNX_TENSOR && is_in) {
      st = vkp_onnx_tensor_load(path, &d->in[j], NULL);
    } else if (kind == VKP_ONNX_TENSOR) {
      vkp_tensor_t t;
      st = vkp_onnx_tensor_load(path, &t, NULL);
      if (!st) st = vkp_ct_add_out(d, info->outputs[j], &t);
    } else {
      vkp_onnx_list_t l;
      st = vkp_onnx_list_load(path, kind, &l);
      if (!st && is_in) {
        d->lists[j] = l;
        d->has_lists = true;
      }
      for (int32_t e = 0; !st && !is_in && e < l.n; ++e) {
        char name[512];
        vkp_onnx_list_element_name(info->outputs[j], e, name, sizeof name);
        st = vkp_ct_add_out(d, name, &l.tensors[e]);
      }
      if (!is_in) vkp_onnx_list_deinit(&l);
    }
    free(path);
    if (st) return st;
  }
  return NULL;
}

// The ONNX test data of opset 13 stores bfloat16 tensors as uint16 (the
// same bits): read them as what the model declares.
static void vkp_ct_bfloat16_quirk(vkp_tensor_t *t, vkp_dtype_t want) {
  if (want == VKP_DTYPE_BFLOAT16 && t->dtype == VKP_DTYPE_UINT16)
    t->dtype = VKP_DTYPE_BFLOAT16;
}

static vkp_ct_result_t vkp_ct_from_status(vkp_status_t st, char **reason) {
  vkp_ct_result_t r = vkp_status_is(st, VKP_STATUS_UNSUPPORTED)
                          ? VKP_CT_UNSUPPORTED
                          : VKP_CT_FAILED;
  *reason = vkp_ct_first_line(vkp_status_message(st));
  vkp_status_free(st);
  return r;
}

// Runs graph `g` on one data set: graph inputs are matched to the ONNX
// inputs by name (frozen ones are no longer graph inputs).
static vkp_ct_result_t vkp_ct_run_set(const vkp_target_t *target,
                                      const vkp_graph_t *g,
                                      const vkp_onnx_info_t *info,
                                      const vkp_ct_data_t *d,
                                      const vkp_ct_options_t *opt,
                                      char **reason) {
  *reason = NULL;
  if (d->n_out != g->n_outputs) {
    char msg[160];
    snprintf(msg, sizeof msg, "the data set has %d output tensors, the graph %d",
             (int)d->n_out, (int)g->n_outputs);
    *reason = strdup(msg);
    return VKP_CT_FAILED;
  }
  vkp_tensor_t *in = calloc((size_t)g->n_inputs + 1, sizeof *in);
  vkp_tensor_t *got = calloc((size_t)g->n_outputs + 1, sizeof *got);
  vkp_ct_result_t result = VKP_CT_PASSED;
  if (!in || !got) {
    *reason = strdup("out of memory");
    result = VKP_CT_FAILED;
    goto done;
  }
  for (int32_t i = 0; i < g->n_inputs; ++i) {
    const char *name = g->values[g->inputs[i]].name;
    int32_t k = 0;
    const vkp_tensor_t *src = NULL;
    for (; k < info->n_inputs && k < d->n_in && !src; ++k) {
      if (info->input_kinds[k] == VKP_ONNX_TENSOR) {
        if (strcmp(info->inputs[k], name) == 0) src = &d->in[k];
        continue;
      }
      // A tensor of a sequence or optional input: "<input>[e]".
      for (int32_t e = 0; e < d->lists[k].n && !src; ++e) {
        char element[512];
        vkp_onnx_list_element_name(info->inputs[k], e, element, sizeof element);
        if (strcmp(element, name) == 0) src = &d->lists[k].tensors[e];
      }
    }
    if (!src) {
      char msg[256];
      snprintf(msg, sizeof msg, "no data for graph input '%s'", name);
      *reason = strdup(msg);
      result = VKP_CT_FAILED;
      goto done;
    }
    in[i] = *src;  // shallow: borrowed for the run
    in[i].owns_data = false;
    const vkp_value_t *want = &g->values[g->inputs[i]];
    vkp_ct_bfloat16_quirk(&in[i], want->dtype);
    bool same = in[i].rank == want->rank;
    for (int32_t a = 0; same && a < want->rank; ++a)
      same = in[i].shape[a] == want->shape[a];
    if (!same) {
      // The data contradicts the model (a few node tests declare one shape
      // and feed another): vkpipe compiles the declared one.
      char msg[512], sd[128], sm[128];
      snprintf(msg, sizeof msg,
               "the data set's input '%s' has shape %s; the model declares %s",
               name, vkp_shape_format(in[i].rank, in[i].shape, sd, sizeof sd),
               vkp_shape_format(want->rank, want->shape, sm, sizeof sm));
      *reason = strdup(msg);
      result = VKP_CT_UNSUPPORTED;
      goto done;
    }
  }
  vkp_status_t st = vkp_target_run_graph(target, g, NULL, in, got);
  if (st) {
    result = vkp_ct_from_status(st, reason);
    goto done;
  }
  for (int32_t i = 0; i < g->n_outputs && !*reason; ++i) {
    // Matched by name: a sequence output is several graph outputs.
    const char *name = g->values[g->outputs[i]].name;
    int32_t k = 0;
    while (k < d->n_out && strcmp(d->out_names[k], name) != 0) ++k;
    if (k == d->n_out) {
      char msg[256];
      snprintf(msg, sizeof msg, "the data set has no output '%s'", name);
      *reason = strdup(msg);
      break;
    }
    vkp_ct_bfloat16_quirk(&d->out[k], got[i].dtype);
    *reason = vkp_ct_compare(name, &got[i], &d->out[k], opt->rtol, opt->atol);
  }
  if (*reason) result = VKP_CT_FAILED;
  for (int32_t i = 0; i < g->n_outputs; ++i) vkp_tensor_deinit(&got[i]);
done:
  free(in);
  free(got);
  return result;
}


// Parameter-like inputs (integer tensors, scalars, 1-D float vectors after
// the first input such as Resize's scales and roi) that an exporter with
// constant folding would have baked in: frozen from the data set when the
// model does not import as it is.
static int32_t vkp_ct_freeze_list(const vkp_onnx_info_t *info,
                                  const vkp_ct_data_t *d, bool all,
                                  const char **names, vkp_tensor_t *values) {
  int32_t n = 0;
  for (int32_t k = 0; k < d->n_in && k < info->n_inputs && n < 64; ++k) {
    if (info->input_kinds[k] != VKP_ONNX_TENSOR) continue;
    const vkp_tensor_t *t = &d->in[k];
    if (all || t->dtype == VKP_DTYPE_INT64 || t->dtype == VKP_DTYPE_INT32 ||
        t->rank == 0 || (k > 0 && t->rank == 1 && vkp_dtype_is_float(t->dtype))) {
      names[n] = info->inputs[k];
      values[n] = *t;
      values[n].owns_data = false;
      vkp_ct_bfloat16_quirk(&values[n], info->input_dtypes[k]);
      ++n;
    }
  }
  return n;
}

// With every input frozen a model must fold whole: only the identity nodes
// that give constant outputs their names may remain.
static vkp_status_t vkp_ct_check_folded(const vkp_graph_t *g) {
  for (int32_t i = 0; i < g->n_nodes; ++i)
    if (g->nodes[i].op != VKP_OP_IDENTITY)
      return vkp_status_make(VKP_STATUS_INTERNAL,
                             "not folded: node '%s' (%s) remains though every "
                             "input is constant",
                             g->nodes[i].name, vkp_op_name(g->nodes[i].op));
  return NULL;
}

// Tests whose expected data follows a reference that later ONNX releases
// corrected; vkpipe follows the correction, so a mismatch there is reported
// as unsupported with the reason, not as a failure (docs/onnx.md).
static const struct {
  const char *test, *reason;
} vkp_ct_outdated[] = {
#define VKP_CT_TRUNCATED_BFLOAT16                                          \
  "the data truncates float32 to bfloat16 (ONNX 1.12's reference); vkpipe " \
  "rounds to nearest even, as ONNX 1.14+ and ONNX Runtime do"
    {"test_cast_FLOAT_to_BFLOAT16", VKP_CT_TRUNCATED_BFLOAT16},
    {"test_castlike_FLOAT_to_BFLOAT16", VKP_CT_TRUNCATED_BFLOAT16},
    {"test_castlike_FLOAT_to_BFLOAT16_expanded", VKP_CT_TRUNCATED_BFLOAT16},
#undef VKP_CT_TRUNCATED_BFLOAT16
};

static bool vkp_ct_run_test(const vkp_target_t *target, const char *dir,
                            const char *name, const vkp_ct_options_t *opt,
                            vkp_ct_run_t *run) {
  char *model = vkp_ct_join(dir, "model.onnx");
  if (!model) return false;
  vkp_onnx_info_t info = {0};
  char *op = NULL, *reason = NULL;
  vkp_ct_result_t result = VKP_CT_PASSED;
  vkp_status_t st = vkp_onnx_info_read(model, &info);
  op = st ? strdup("(unreadable)") : vkp_ct_op_key(name, &info);
  vkp_graph_t *g = NULL;
  if (!st) st = vkp_graph_load(model, &g);
  bool freeze = false;
  if (opt->fold_all && (!st || vkp_status_is(st, VKP_STATUS_UNSUPPORTED))) {
    // Every input becomes a constant below: the plain import does not count.
    vkp_status_free(st);
    st = NULL;
    vkp_graph_destroy(g);
    g = NULL;
    freeze = true;
  }
  if (!st && !freeze && !opt->import_only) st = vkp_target_check_graph(target, g);
  // A model that imports with NonZero, Unique or Compress on run-time data
  // tests the run-time path: freezing its inputs would fold them away, so a
  // target that refuses it stays unsupported. (A run-time TopK K is a
  // parameter an exporter would have folded: that one is still frozen.)
  bool bounded = false;
  for (int32_t i = 0; g && i < g->n_nodes; ++i)
    bounded |= g->nodes[i].op == VKP_OP_NON_ZERO || g->nodes[i].op == VKP_OP_UNIQUE;
  if (st && vkp_status_is(st, VKP_STATUS_UNSUPPORTED) && !opt->import_only &&
      info.n_inputs > 0 && !bounded) {
    // Retried below with parameter inputs frozen, per data set.
    freeze = true;
    result = vkp_ct_from_status(st, &reason);
    st = NULL;
  }
  if (st) {
    result = vkp_ct_from_status(st, &reason);
  } else if (!opt->import_only) {
    size_t n_sets;
    char **sets = vkp_ct_list(dir, "test_data_set_", &n_sets);
    if (n_sets == 0) {
      result = VKP_CT_FAILED;
      free(reason);
      reason = strdup("no test_data_set_* folder");
    }
    for (size_t i = 0; i < n_sets; ++i) {
      char *set_dir = vkp_ct_join(dir, sets[i]);
      vkp_ct_data_t d = {0};
      vkp_status_t dst = set_dir ? vkp_ct_data_load(set_dir, &info, &d)
                                 : vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "path");
      free(set_dir);
      char *why = NULL;
      vkp_ct_result_t r = VKP_CT_PASSED;
      if (dst && freeze && reason) {
        vkp_status_free(dst);  // the model's own refusal stands
        r = result;
        why = reason ? strdup(reason) : NULL;
      } else if (dst) {
        r = vkp_ct_from_status(dst, &why);
      } else if (d.has_lists && opt->fold_all) {
        r = VKP_CT_UNSUPPORTED;
        why = strdup("sequence and optional inputs are not frozen: their tensors "
                     "stay graph inputs");
      } else if (freeze) {
        const char *names[64], *list_names[64];
        vkp_tensor_t values[64];
        vkp_onnx_list_t lists[64];
        vkp_onnx_options_t o = {0};
        // Sequence and optional inputs: their lengths and element shapes
        // from the data set (the importer resolves them; their tensors
        // stay graph inputs).
        for (int32_t k = 0; k < d.n_in && k < info.n_inputs && o.n_lists < 64; ++k) {
          if (info.input_kinds[k] == VKP_ONNX_TENSOR) continue;
          list_names[o.n_lists] = info.inputs[k];
          lists[o.n_lists++] = d.lists[k];
        }
        o.list_names = list_names;
        o.lists = lists;
        vkp_graph_t *fg = NULL;
        vkp_status_t lst = NULL;
        if (d.has_lists) {
          // First with run-time tensors as they are, their shapes (symbolic
          // dims, as a sequence's elements have) from the data set.
          vkp_shape_binding_t shapes[64];
          for (int32_t k = 0; k < d.n_in && k < info.n_inputs &&
                              o.bindings.n_shapes < 64; ++k) {
            if (info.input_kinds[k] != VKP_ONNX_TENSOR) continue;
            vkp_shape_binding_t *b = &shapes[o.bindings.n_shapes++];
            b->input = info.inputs[k];
            b->rank = d.in[k].rank;
            memcpy(b->shape, d.in[k].shape, sizeof b->shape);
          }
          o.bindings.shapes = shapes;
          lst = vkp_onnx_load_with_options(model, &o, &fg);
          o.bindings.n_shapes = 0;
          o.bindings.shapes = NULL;
          if (lst && !vkp_status_is(lst, VKP_STATUS_UNSUPPORTED)) {
            r = vkp_ct_from_status(lst, &why);
            lst = NULL;
          }
        }
        if (fg || why) {
          if (fg) {
            vkp_status_t fst = vkp_target_check_graph(target, fg);
            r = fst ? vkp_ct_from_status(fst, &why)
                    : vkp_ct_run_set(target, fg, &info, &d, opt, &why);
          }
        } else if ((o.n_constants = vkp_ct_freeze_list(&info, &d, opt->fold_all, names,
                                                       values)) == 0) {
          // Nothing to freeze: the first refusal stands.
          r = lst ? vkp_ct_from_status(lst, &why) : result;
          if (!lst) why = reason ? strdup(reason) : NULL;
          lst = NULL;
        } else {
          vkp_status_free(lst);
          lst = NULL;
          o.constant_names = names;
          o.constants = values;
          vkp_status_t fst = vkp_onnx_load_with_options(model, &o, &fg);
          if (!fst) fst = vkp_target_check_graph(target, fg);
          if (!fst && opt->fold_all) fst = vkp_ct_check_folded(fg);
          r = fst ? vkp_ct_from_status(fst, &why)
                  : vkp_ct_run_set(target, fg, &info, &d, opt, &why);
        }
        vkp_graph_destroy(fg);
      } else {
        r = vkp_ct_run_set(target, g, &info, &d, opt, &why);
      }
      vkp_ct_data_deinit(&d);
      // The worst outcome over the data sets is the test's
      // (failed > unsupported > passed).
      static const int severity[] = {0, 2, 1};
      if (i == 0 || severity[r] > severity[result]) {
        free(reason);
        reason = why;
        why = NULL;
        result = r;
      }
      free(why);
      if (result == VKP_CT_FAILED) break;
    }
    vkp_ct_free_list(sets, n_sets);
  }
  vkp_graph_destroy(g);
  vkp_onnx_info_deinit(&info);
  free(model);
  for (size_t i = 0; result == VKP_CT_FAILED &&
                     i < sizeof vkp_ct_outdated / sizeof vkp_ct_outdated[0];
       ++i) {
    if (strcmp(name, vkp_ct_outdated[i].test) != 0) continue;
    free(reason);
    reason = strdup(vkp_ct_outdated[i].reason);
    result = VKP_CT_UNSUPPORTED;
  }
  if (opt->verbose)
    fprintf(stderr, "%-60s %-12s %s\n", name, vkp_ct_result_names[result],
            reason ? reason : "");
  return vkp_ct_record(run, name, op, result, reason);
}

static void vkp_ct_walk(const vkp_target_t *target, const char *root,
                        const vkp_ct_options_t *opt, vkp_ct_run_t *run) {
  char *model = vkp_ct_join(root, "model.onnx");
  bool single = model && vkp_ct_is_file(model);
  free(model);
  if (single) {
    const char *slash = strrchr(root, '/');
    const char *name = slash && slash[1] ? slash + 1 : root;
    if (!opt->filter || fnmatch(opt->filter, name, 0) == 0)
      vkp_ct_run_test(target, root, name, opt, run);
    return;
  }
  size_t n;
  char **names = vkp_ct_list(root, "", &n);
  for (size_t i = 0; i < n; ++i) {
    if (opt->filter && fnmatch(opt->filter, names[i], 0) != 0) continue;
    char *dir = vkp_ct_join(root, names[i]);
    char *m = dir ? vkp_ct_join(dir, "model.onnx") : NULL;
    if (m && vkp_ct_is_file(m)) vkp_ct_run_test(target, dir, names[i], opt, run);
    free(m);
    free(dir);
  }
  vkp_ct_free_list(names, n);
}

// Per-op counts, ops sorted by name.
typedef struct vkp_ct_op_row_t {
  const char *op;
  int counts[3];
} vkp_ct_op_row_t;

static int vkp_ct_cmp_row(const void *a, const void *b) {
  return strcmp(((const vkp_ct_op_row_t *)a)->op, ((const vkp_ct_op_row_t *)b)->op);
}

static vkp_ct_op_row_t *vkp_ct_rows(const vkp_ct_run_t *run, size_t *out_n) {
  vkp_ct_op_row_t *rows = calloc(run->n + 1, sizeof *rows);
  size_t n = 0;
  for (size_t i = 0; rows && i < run->n; ++i) {
    size_t j = 0;
    while (j < n && strcmp(rows[j].op, run->tests[i].op) != 0) ++j;
    if (j == n) rows[n++].op = run->tests[i].op;
    rows[j].counts[run->tests[i].result]++;
  }
  if (rows) qsort(rows, n, sizeof *rows, vkp_ct_cmp_row);
  *out_n = rows ? n : 0;
  return rows;
}

static int vkp_ct_report(const vkp_ct_run_t *run, const vkp_ct_options_t *opt) {
  size_t n_rows;
  vkp_ct_op_row_t *rows = vkp_ct_rows(run, &n_rows);
  int totals[3] = {0, 0, 0};
  for (size_t i = 0; i < run->n; ++i) totals[run->tests[i].result]++;
  // Ops that must have passed at least once.
  char missing[2048] = "";
  if (opt->expect_pass) {
    char *list = strdup(opt->expect_pass), *save = NULL;
    for (char *op = list ? strtok_r(list, ",", &save) : NULL; op;
         op = strtok_r(NULL, ",", &save)) {
      bool ok = false;
      for (size_t i = 0; i < n_rows && !ok; ++i)
        ok = strcmp(rows[i].op, op) == 0 && rows[i].counts[VKP_CT_PASSED] > 0;
      if (!ok) {
        size_t used = strlen(missing);
        snprintf(missing + used, sizeof missing - used, "%s%s", used ? ", " : "", op);
      }
    }
    free(list);
  }
  if (opt->json) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "target", opt->import_only ? "(import only)" : opt->target);
    cJSON *summary = cJSON_AddObjectToObject(root, "summary");
    for (int r = 0; r < 3; ++r)
      cJSON_AddNumberToObject(summary, vkp_ct_result_names[r], totals[r]);
    cJSON *ops = cJSON_AddObjectToObject(root, "ops");
    for (size_t i = 0; i < n_rows; ++i) {
      cJSON *o = cJSON_AddObjectToObject(ops, rows[i].op);
      for (int r = 0; r < 3; ++r)
        cJSON_AddNumberToObject(o, vkp_ct_result_names[r], rows[i].counts[r]);
    }
    cJSON *tests = cJSON_AddArrayToObject(root, "tests");
    for (size_t i = 0; i < run->n; ++i) {
      const vkp_ct_test_t *t = &run->tests[i];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "name", t->name ? t->name : "");
      cJSON_AddStringToObject(o, "op", t->op);
      cJSON_AddStringToObject(o, "result", vkp_ct_result_names[t->result]);
      if (t->reason) cJSON_AddStringToObject(o, "reason", t->reason);
      cJSON_AddItemToArray(tests, o);
    }
    if (missing[0]) cJSON_AddStringToObject(root, "expected_but_not_passed", missing);
    char *text = cJSON_Print(root);
    if (text) printf("%s\n", text);
    cJSON_free(text);  // cJSON's hooks are the library's allocator
    cJSON_Delete(root);
  } else {
    printf("%-28s %7s %7s %12s\n", "op", "passed", "failed", "unsupported");
    for (size_t i = 0; i < n_rows; ++i)
      printf("%-28s %7d %7d %12d\n", rows[i].op, rows[i].counts[0],
             rows[i].counts[1], rows[i].counts[2]);
    printf("%-28s %7d %7d %12d\n", "total", totals[0], totals[1], totals[2]);
    if (totals[VKP_CT_FAILED]) {
      printf("\nfailures:\n");
      for (size_t i = 0; i < run->n; ++i)
        if (run->tests[i].result == VKP_CT_FAILED)
          printf("  %s: %s\n", run->tests[i].name,
                 run->tests[i].reason ? run->tests[i].reason : "");
    }
    if (missing[0]) printf("\nexpected to pass but did not: %s\n", missing);
  }
  free(rows);
  return totals[VKP_CT_FAILED] || missing[0] ? 1 : 0;
}

static void vkp_ct_usage(FILE *out) {
  fprintf(out,
          "usage: vkpipe-conformance [options] DIR...\n"
          "\n"
          "Runs ONNX backend test folders (DIR/model.onnx, or every DIR/*/\n"
          "holding one) on a target and prints passed/failed/unsupported per "
          "op.\n"
          "\n"
          "  --target NAME        target to run on (default: ref)\n"
          "  --filter GLOB        only tests whose folder name matches\n"
          "  --json               machine-readable report on stdout\n"
          "  --rtol R, --atol A   tolerances (default 1e-3, 1e-5)\n"
          "  --expect-pass OPS    comma-separated ONNX ops that must pass at\n"
          "                       least one test\n"
          "  --import-only        only import the models (no target needed):\n"
          "                       'passed' then means imported\n"
          "  --fold               freeze every input to its data set: each\n"
          "                       model must fold whole at import (a node\n"
          "                       left is a failure), then run\n"
          "  --verbose            one line per test on stderr\n");
}

int main(int argc, char **argv) {
  vkp_ct_options_t opt = {.target = "ref", .rtol = 1e-3, .atol = 1e-5};
  int first_dir = argc;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      vkp_ct_usage(stdout);
      return 0;
    } else if (strcmp(a, "--target") == 0 && has_value) {
      opt.target = argv[++i];
    } else if (strcmp(a, "--filter") == 0 && has_value) {
      opt.filter = argv[++i];
    } else if (strcmp(a, "--rtol") == 0 && has_value) {
      opt.rtol = strtod(argv[++i], NULL);
    } else if (strcmp(a, "--atol") == 0 && has_value) {
      opt.atol = strtod(argv[++i], NULL);
    } else if (strcmp(a, "--expect-pass") == 0 && has_value) {
      opt.expect_pass = argv[++i];
    } else if (strcmp(a, "--json") == 0) {
      opt.json = true;
    } else if (strcmp(a, "--import-only") == 0) {
      opt.import_only = true;
    } else if (strcmp(a, "--fold") == 0) {
      opt.fold_all = true;
    } else if (strcmp(a, "--verbose") == 0) {
      opt.verbose = true;
    } else if (a[0] == '-') {
      fprintf(stderr, "vkpipe-conformance: unknown option '%s'\n", a);
      vkp_ct_usage(stderr);
      return 2;
    } else {
      first_dir = i;
      break;
    }
  }
  if (first_dir >= argc) {
    vkp_ct_usage(stderr);
    return 2;
  }
  vkp_registry_t *reg = NULL;
  const vkp_target_t *target = NULL;
  vkp_status_t st = vkp_registry_create_default(&reg);
  if (!st && !opt.import_only)
    st = vkp_registry_lookup(reg, opt.target, &target);
  if (st) {
    fprintf(stderr, "vkpipe-conformance: %s\n", vkp_status_message(st));
    vkp_status_free(st);
    vkp_registry_destroy(reg);
    return 1;
  }
  vkp_ct_run_t run = {0};
  for (int i = first_dir; i < argc; ++i) {
    if (argv[i][0] == '-') {
      fprintf(stderr, "vkpipe-conformance: options go before the folders\n");
      return 2;
    }
    if (!vkp_ct_is_dir(argv[i])) {
      fprintf(stderr, "vkpipe-conformance: '%s' is not a folder\n", argv[i]);
      vkp_registry_destroy(reg);
      return 2;
    }
    vkp_ct_walk(target, argv[i], &opt, &run);
  }
  int rc = vkp_ct_report(&run, &opt);
  for (size_t i = 0; i < run.n; ++i) {
    free(run.tests[i].name);
    free(run.tests[i].op);
    free(run.tests[i].reason);
  }
  free(run.tests);
  vkp_registry_destroy(reg);
  return rc;
}
