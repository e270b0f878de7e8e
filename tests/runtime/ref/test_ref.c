// SPDX-License-Identifier: Apache-2.0
// The ref target's conformance suite (runtime/ref/ref.c with the op table's
// reference kernels, graph/op_*.c): every op of VKP_OP_LIST against the NumPy cases that
// gen_cases.py writes with a fresh seed each run (a ctest fixture runs it
// first). Each case is built with the builder API, validated, its inferred
// output shapes compared with NumPy's (every output of a node with several),
// run on "ref" through vkp_target_run_graph and compared with NumPy's
// results.
//
// Tolerance: both sides compute each float32 result in double and round once
// (ref by design, NumPy on float64 copies of the inputs), so they normally
// agree to the last bit or two; rtol 1e-5 leaves room for the two libms'
// exp/erf/tanh/pow and for summation order, and atol 1e-6 covers results that
// cancel to near zero. Non-float results (int32, int64, float16 data
// movement) must match bit for bit.
//
// The same cases check any other target (a conformance suite written once):
// run this program with VKPIPE_CTS_TARGET=<name> (default "ref") and
// optionally VKPIPE_CTS_TOL_SCALE=<factor> to widen rtol and atol for a
// target that accumulates in float32. Cases the target does not support are
// skipped (and counted) rather than failed; an unavailable target skips the
// whole run. Only "ref" must cover every op.
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"
#include "vkpipe/graph.h"
#include "vkpipe/target.h"

typedef struct case_ctx_t {
  const char *dir;
  unsigned long long seed;
  const vkp_target_t *target;  // under test
  bool is_ref;
  double tol_scale;
} case_ctx_t;

typedef enum case_result_t { CASE_PASS, CASE_FAIL, CASE_SKIP } case_result_t;

static const char *cases_dir(void) {
  const char *d = getenv("VKPIPE_REF_CASES");
  return d ? d : "tests/runtime/ref/cases";
}

// The dtypes gen_cases.py writes (its manifest's "dtypes").
static vkp_dtype_set_t manifest_dtypes(const cJSON *root) {
  vkp_dtype_set_t set = 0;
  const cJSON *d;
  cJSON_ArrayForEach(d, cJSON_GetObjectItem(root, "dtypes")) {
    vkp_dtype_t dt;
    if (cJSON_IsString(d) && vkp_dtype_parse(d->valuestring, &dt))
      set |= VKP_DTYPE_SET(dt);
  }
  return set;
}

static cJSON *load_manifest(unsigned long long *seed) {
  char path[1024];
  snprintf(path, sizeof path, "%s/manifest.json", cases_dir());
  size_t size = 0;
  char *text = vkp_test_read_file(path, &size);
  cr_assert_not_null(text, "cannot read %s (does the gen_cases fixture run?)",
                     path);
  cJSON *root = cJSON_ParseWithLength(text, size);
  free(text);
  cr_assert_not_null(root, "%s is not valid JSON", path);
  const cJSON *s = cJSON_GetObjectItem(root, "seed");
  *seed = cJSON_IsString(s) ? strtoull(s->valuestring, NULL, 10) : 0;
  return root;
}

static bool read_shape(const cJSON *arr, int32_t *rank, int64_t *shape) {
  *rank = cJSON_GetArraySize(arr);
  if (*rank > VKP_MAX_RANK) return false;
  for (int32_t i = 0; i < *rank; ++i)
    shape[i] = (int64_t)cJSON_GetArrayItem(arr, i)->valuedouble;
  return true;
}

static void *read_data(const char *file, size_t want, char *err, size_t err_size) {
  char path[768];
  snprintf(path, sizeof path, "%s/%s", cases_dir(), file);
  size_t size = 0;
  char *data = vkp_test_read_file(path, &size);
  if (!data || size != want) {
    snprintf(err, err_size, "%.700s: %zu bytes, expected %zu", path,
             data ? size : 0, want);
    free(data);
    return NULL;
  }
  return data;
}

enum { MAX_CASE_INPUTS = 12, MAX_ATTRS = 12, MAX_CASE_OUTPUTS = 4 };

// Runs one case; CASE_FAIL with a message in `err` on any mismatch,
// CASE_SKIP when a target other than ref does not support it.
static case_result_t run_case(const case_ctx_t *ctx, const cJSON *c, char *err,
                              size_t err_size) {
  const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
  vkp_op_t op = vkp_op_parse(cJSON_GetObjectItem(c, "op")->valuestring);
  const cJSON *inputs = cJSON_GetObjectItem(c, "inputs");
  const cJSON *attrs = cJSON_GetObjectItem(c, "attrs");
  // "outputs" for a node with several, else "output".
  const cJSON *outputs = cJSON_GetObjectItem(c, "outputs");
  int32_t n_out = outputs ? cJSON_GetArraySize(outputs) : 1;
  int32_t n_in = cJSON_GetArraySize(inputs), n_attrs = cJSON_GetArraySize(attrs);
  cr_assert(n_in <= MAX_CASE_INPUTS && n_attrs <= MAX_ATTRS);
  cr_assert(n_out >= 1 && n_out <= MAX_CASE_OUTPUTS);

  bool ok = false, skipped = false;
  vkp_status_t st = NULL;
  vkp_graph_t *g = NULL;
  void *data[MAX_CASE_INPUTS] = {NULL};
  vkp_tensor_t feeds[MAX_CASE_INPUTS];
  int32_t n_feeds = 0;
  const char *in_names[MAX_CASE_INPUTS];
  vkp_attr_t attr[MAX_ATTRS];
  int64_t ints[MAX_ATTRS][VKP_MAX_RANK];
  double floats[MAX_ATTRS][VKP_MAX_RANK];
  vkp_tensor_t result[MAX_CASE_OUTPUTS] = {{0}};
  bool have_result = false;
  void *expected = NULL;

  st = vkp_graph_create(name, &g);
  for (int32_t i = 0; !st && i < n_in; ++i) {
    const cJSON *in = cJSON_GetArrayItem(inputs, i);
    if (cJSON_IsTrue(cJSON_GetObjectItem(in, "omitted"))) {
      in_names[i] = "";
      continue;
    }
    in_names[i] = cJSON_GetObjectItem(in, "name")->valuestring;
    vkp_dtype_t dt;
    int32_t rank;
    int64_t shape[VKP_MAX_RANK];
    size_t bytes;
    cr_assert(vkp_dtype_parse(cJSON_GetObjectItem(in, "dtype")->valuestring, &dt));
    cr_assert(read_shape(cJSON_GetObjectItem(in, "shape"), &rank, shape));
    cr_assert(vkp_shape_numel(rank, shape, vkp_dtype_size(dt), &bytes));
    data[i] = read_data(cJSON_GetObjectItem(in, "file")->valuestring, bytes, err,
                        err_size);
    if (!data[i]) goto done;
    if (cJSON_IsTrue(cJSON_GetObjectItem(in, "constant"))) {
      st = vkp_graph_add_constant(g, in_names[i], dt, rank, shape, data[i], NULL);
    } else {
      st = vkp_graph_add_input(g, in_names[i], dt, rank, shape, NULL);
      if (!st) st = vkp_tensor_init_view(&feeds[n_feeds++], dt, rank, shape, data[i]);
    }
  }
  for (int32_t i = 0; i < n_attrs; ++i) {
    const cJSON *a = cJSON_GetArrayItem(attrs, i);
    const char *kind = cJSON_GetArrayItem(a, 1)->valuestring;
    const cJSON *v = cJSON_GetArrayItem(a, 2);
    attr[i] = (vkp_attr_t){.name = cJSON_GetArrayItem(a, 0)->valuestring};
    if (strcmp(kind, "int") == 0) {
      attr[i].kind = VKP_ATTR_INT;
      attr[i].i = (int64_t)v->valuedouble;
    } else if (strcmp(kind, "float") == 0) {
      attr[i].kind = VKP_ATTR_FLOAT;
      attr[i].f = v->valuedouble;
    } else if (strcmp(kind, "string") == 0) {
      attr[i].kind = VKP_ATTR_STRING;
      attr[i].s = v->valuestring;
    } else if (strcmp(kind, "floats") == 0) {
      attr[i].kind = VKP_ATTR_FLOATS;
      attr[i].count = cJSON_GetArraySize(v);
      cr_assert(attr[i].count <= VKP_MAX_RANK);
      for (int32_t j = 0; j < attr[i].count; ++j)
        floats[i][j] = cJSON_GetArrayItem(v, j)->valuedouble;
      attr[i].floats = floats[i];
    } else {
      cr_assert_str_eq(kind, "ints");
      attr[i].kind = VKP_ATTR_INTS;
      attr[i].count = cJSON_GetArraySize(v);
      cr_assert(attr[i].count <= VKP_MAX_RANK);
      for (int32_t j = 0; j < attr[i].count; ++j)
        ints[i][j] = (int64_t)cJSON_GetArrayItem(v, j)->valuedouble;
      attr[i].ints = ints[i];
    }
  }
  const char *out_names[MAX_CASE_OUTPUTS] = {"y", "y1", "y2", "y3"};
  if (!st)
    st = vkp_graph_add_node(g, "node", op, n_in, in_names, n_out, out_names, n_attrs,
                            attr, NULL);
  for (int32_t o = 0; !st && o < n_out; ++o) st = vkp_graph_mark_output(g, out_names[o]);
  if (!st) st = vkp_graph_validate(g);
  if (st) goto done;

  // Shape inference must agree with NumPy.
  for (int32_t o = 0; o < n_out; ++o) {
    const cJSON *output = outputs ? cJSON_GetArrayItem(outputs, o)
                                  : cJSON_GetObjectItem(c, "output");
    const vkp_value_t *y = &g->values[vkp_graph_find_value(g, out_names[o])];
    vkp_dtype_t want_dt;
    int32_t want_rank;
    int64_t want_shape[VKP_MAX_RANK];
    cr_assert(vkp_dtype_parse(cJSON_GetObjectItem(output, "dtype")->valuestring, &want_dt));
    cr_assert(read_shape(cJSON_GetObjectItem(output, "shape"), &want_rank, want_shape));
    // A bounded output (non_zero, unique) infers its bound: NumPy's run-time
    // extent must fit in it, and the run below must come back at NumPy's
    // shape.
    bool same = y->dtype == want_dt && y->rank == want_rank;
    for (int32_t d = 0; same && d < want_rank; ++d)
      same = y->bounded && d == y->bounded_axis ? want_shape[d] <= y->shape[d]
                                                : y->shape[d] == want_shape[d];
    if (!same) {
      char a[128], b[128];
      snprintf(err, err_size, "output %d: inferred %s %s, NumPy says %s %s", (int)o,
               vkp_dtype_name(y->dtype), vkp_shape_format(y->rank, y->shape, a, sizeof a),
               vkp_dtype_name(want_dt),
               vkp_shape_format(want_rank, want_shape, b, sizeof b));
      goto done;
    }
  }

  if (!ctx->is_ref) {
    st = vkp_target_check_graph(ctx->target, g);
    if (vkp_status_is(st, VKP_STATUS_UNSUPPORTED)) {
      vkp_status_free(st);
      st = NULL;
      skipped = true;
      goto done;
    }
    if (st) goto done;
  }
  st = vkp_target_run_graph(ctx->target, g, NULL, feeds, result);
  if (st) goto done;
  have_result = true;
  ok = true;
  for (int32_t o = 0; ok && o < n_out; ++o) {
    const cJSON *output = outputs ? cJSON_GetArrayItem(outputs, o)
                                  : cJSON_GetObjectItem(c, "output");
    int32_t want_rank;
    int64_t want_shape[VKP_MAX_RANK];
    cr_assert(read_shape(cJSON_GetObjectItem(output, "shape"), &want_rank, want_shape));
    bool same = result[o].rank == want_rank;
    for (int32_t d = 0; same && d < want_rank; ++d)
      same = result[o].shape[d] == want_shape[d];
    if (!same) {
      char a[128], b[128];
      snprintf(err, err_size, "output %d: run-time shape %s, NumPy says %s", (int)o,
               vkp_shape_format(result[o].rank, result[o].shape, a, sizeof a),
               vkp_shape_format(want_rank, want_shape, b, sizeof b));
      ok = false;
      break;
    }
    size_t bytes = vkp_tensor_nbytes(&result[o]);
    free(expected);
    expected = read_data(cJSON_GetObjectItem(output, "file")->valuestring, bytes,
                         err, err_size);
    if (!expected) {
      ok = false;
      break;
    }
    char why[768] = "";
    if (vkp_dtype_is_float(result[o].dtype)) {
      vkp_tensor_t want;
      VKP_TEST_OK(vkp_tensor_init_view(&want, result[o].dtype, result[o].rank,
                                       result[o].shape, expected));
      double rtol = cJSON_GetObjectItem(c, "rtol")->valuedouble * ctx->tol_scale;
      double atol = cJSON_GetObjectItem(c, "atol")->valuedouble * ctx->tol_scale;
      ok = vkp_test_allclose(&result[o], &want, rtol, atol, why, sizeof why);
    } else {
      ok = bytes == 0 || memcmp(result[o].data, expected, bytes) == 0;
      if (!ok) snprintf(why, sizeof why, "%s data differs", vkp_dtype_name(result[o].dtype));
    }
    if (!ok) snprintf(err, err_size, "output %d: %s", (int)o, why);
  }

done:
  if (st) {
    snprintf(err, err_size, "%s", vkp_status_message(st));
    vkp_status_free(st);
    ok = false;
  }
  for (int32_t o = 0; have_result && o < n_out; ++o) vkp_tensor_deinit(&result[o]);
  for (int32_t i = 0; i < n_feeds; ++i) vkp_tensor_deinit(&feeds[i]);
  for (int32_t i = 0; i < n_in; ++i) free(data[i]);
  free(expected);
  vkp_graph_destroy(g);
  return skipped ? CASE_SKIP : ok ? CASE_PASS : CASE_FAIL;
}

static void run_op_cases(vkp_op_t op) {
  unsigned long long seed = 0;
  cJSON *root = load_manifest(&seed);
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const char *name = getenv("VKPIPE_CTS_TARGET");
  const char *scale = getenv("VKPIPE_CTS_TOL_SCALE");
  case_ctx_t ctx = {.dir = cases_dir(), .seed = seed,
                    .tol_scale = scale ? strtod(scale, NULL) : 1.0};
  name = name && name[0] ? name : "ref";
  ctx.is_ref = strcmp(name, "ref") == 0;
  vkp_status_t st = vkp_registry_lookup(reg, name, &ctx.target);
  if (vkp_status_is(st, VKP_STATUS_UNAVAILABLE)) {
    char why[512];
    snprintf(why, sizeof why, "%s", vkp_status_message(st));
    vkp_status_free(st);
    vkp_registry_destroy(reg);
    cJSON_Delete(root);
    cr_skip_test("%s", why);
  }
  VKP_TEST_OK(st);
  cr_assert(ctx.tol_scale >= 1.0, "VKPIPE_CTS_TOL_SCALE must be >= 1");
  int run = 0, failed = 0, skipped = 0;
  bool dtype_seen[VKP_DTYPE_COUNT] = {false};
  vkp_dtype_set_t generated = manifest_dtypes(root);
  char report[4096] = "";
  size_t used = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cases")) {
    if (vkp_op_parse(cJSON_GetObjectItem(c, "op")->valuestring) != op) continue;
    ++run;
    vkp_dtype_t in_dt;  // the table's dtypes are those of input 0
    const cJSON *in0 = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "inputs"), 0);
    const cJSON *in_dtype = cJSON_GetObjectItem(in0, "dtype");
    if (cJSON_IsString(in_dtype) && vkp_dtype_parse(in_dtype->valuestring, &in_dt))
      dtype_seen[in_dt] = true;
    char err[1024] = "";
    case_result_t r = run_case(&ctx, c, err, sizeof err);
    if (r == CASE_SKIP) ++skipped;
    if (r != CASE_FAIL) continue;
    ++failed;
    int w = snprintf(report + used, sizeof report - used, "\n  %s: %s",
                     cJSON_GetObjectItem(c, "name")->valuestring, err);
    if (w > 0 && (size_t)w < sizeof report - used) used += (size_t)w;
  }
  vkp_registry_destroy(reg);
  cJSON_Delete(root);
  cr_assert(run > 0,
            "op '%s' has no case in gen_cases.py: every op in VKP_OP_LIST "
            "needs at least one",
            vkp_op_name(op));
  cr_assert(failed == 0, "target '%s', op '%s': %d of %d cases failed "
            "(VKPIPE_TEST_SEED=%llu reproduces):%s",
            name, vkp_op_name(op), failed, run, seed, report);
  // ref must be exercised on every dtype the op table gives the op, among
  // those gen_cases.py writes (DTYPES there; NumPy has no bfloat16).
  for (int d = 0; ctx.is_ref && d < VKP_DTYPE_COUNT; ++d)
    cr_assert(!(vkp_op_dtypes(op) & VKP_DTYPE_SET(d) & generated) ||
                  dtype_seen[d],
              "op '%s' has no %s case in gen_cases.py, though the op table "
              "gives it that dtype",
              vkp_op_name(op), vkp_dtype_name((vkp_dtype_t)d));
  if (skipped)
    cr_log_info("target '%s', op '%s': %d of %d cases unsupported, skipped", name,
                vkp_op_name(op), skipped, run);
}

ParameterizedTestParameters(ref, op) {
  static int ops[VKP_OP_COUNT];
  for (int i = 0; i < VKP_OP_COUNT; ++i) ops[i] = i;
  return cr_make_param_array(int, ops, VKP_OP_COUNT);
}

ParameterizedTest(int *op, ref, op, .timeout = 240) {
  run_op_cases((vkp_op_t)*op);
}

// Every case names a known op (a typo in gen_cases.py must not go unnoticed).
Test(ref, manifest_ops_known, .timeout = 60) {
  unsigned long long seed = 0;
  cJSON *root = load_manifest(&seed);
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cases")) {
    const char *op = cJSON_GetObjectItem(c, "op")->valuestring;
    cr_expect(vkp_op_parse(op) != VKP_OP_COUNT, "case '%s': unknown op '%s'",
              cJSON_GetObjectItem(c, "name")->valuestring, op);
  }
  cJSON_Delete(root);
}
