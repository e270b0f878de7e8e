// SPDX-License-Identifier: Apache-2.0
// Trust and robustness (issue 16): an artifact's compiled code never runs
// unless a trusted key signed it (or the caller opts in); tampered, re-signed,
// stripped and wrongly-keyed artifacts are refused; readers refuse
// directories and escaping paths by name; an unwritable compile cache falls
// back to a private one; generated C refuses names that could break out of
// a comment.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/archive.h"
#include "runtime/cpu/target_cpu.h"
#include "support/test_cli.h"
#include "support/test_support.h"
#include "vkpipe/artifact.h"
#include "vkpipe/graph.h"
#include "vkpipe/npy.h"
#include "vkpipe/partition.h"
#include "vkpipe/pipeline.h"

TestSuite(trust, .init = vkp_test_scratch_make, .fini = vkp_test_scratch_remove);

static char *scratch_path(const char *name) {
  static char paths[8][600];
  static int k;
  char *p = paths[k++ % 8];
  snprintf(p, 600, "%s/%s", vkp_test_scratch, name);
  return p;
}

// examples/mlp.json on one cpu stage, written to scratch/<name>, optionally
// signed. Returns the model graph (owned by the caller).
static vkp_graph_t *build_cpu_artifact(vkp_registry_t *reg, const char *name,
                                       const vkp_artifact_secret_key_t *key) {
  char model[512];
  snprintf(model, sizeof model, "%s/examples/mlp.json", vkp_test_source_dir());
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_load(model, &g));
  vkp_partition_options_t opt = {.policy = "cpu", .stages = 1};
  vkp_partition_t *part;
  vkp_plan_t *plan;
  VKP_TEST_OK(vkp_partition_create(g, reg, NULL, &opt, &part));
  VKP_TEST_OK(vkp_partition_to_plan(part, "mlp", &plan));
  vkp_artifact_info_t info = {.model = model, .policy = "cpu", .sign_key = key};
  VKP_TEST_OK(vkp_artifact_build(plan, reg, &info, scratch_path(name)));
  vkp_plan_destroy(plan);
  vkp_partition_destroy(part);
  return g;
}

// Rewrites artifact `from` into `to` with stage 0's code replaced by
// `code` (when not NULL), the signature entry dropped when `strip`; every
// CRC is recomputed, as an attacker would.
static void rewrite_artifact(const char *from, const char *to, const void *code,
                             size_t code_size, bool strip) {
  vkp_archive_t *a;
  VKP_TEST_OK(vkp_archive_open(from, VKP_ARTIFACT_FORMAT_VERSION, &a));
  vkp_archive_writer_t *w;
  VKP_TEST_OK(vkp_archive_writer_create(&w));
  for (int32_t i = 0; i < vkp_archive_count(a); ++i) {
    const char *name = vkp_archive_name(a, i);
    if (strip && strcmp(name, "signature") == 0) continue;
    bool replace = code && strcmp(name, "stages/0/code") == 0;
    VKP_TEST_OK(vkp_archive_writer_add(w, name, replace ? code : vkp_archive_data(a, i),
                                       replace ? code_size : vkp_archive_size(a, i)));
  }
  VKP_TEST_OK(vkp_archive_writer_save(w, to, VKP_ARTIFACT_FORMAT_VERSION));
  vkp_archive_writer_destroy(w);
  vkp_archive_close(a);
}

// A cpu blob like `blob` whose shared object is the same generated source
// plus a constructor that appends to $VKP_TEST_PAYLOAD_MARK: a payload that
// also exports every stage entry point, so it would run silently.
static void *make_evil_blob(const void *blob, size_t blob_size, size_t *out_size) {
  vkp_cpu_blob_header_t h;
  memcpy(&h, blob, sizeof h);
  const char *consts = (const char *)blob + sizeof h;
  size_t cbytes = (size_t)h.n_constants * sizeof(int32_t);
  const char *source = consts + cbytes;
  cr_assert_eq(sizeof h + cbytes + h.source_size + h.object_size, blob_size);
  FILE *f = fopen(scratch_path("evil.c"), "wb");
  cr_assert(f);
  fwrite(source, 1, h.source_size, f);
  fputs("\n#include <fcntl.h>\n#include <unistd.h>\n#include <stdlib.h>\n"
        "__attribute__((constructor)) static void vkp_test_payload(void) {\n"
        "  const char *p = getenv(\"VKP_TEST_PAYLOAD_MARK\");\n"
        "  if (!p) return;\n"
        "  int fd = open(p, O_WRONLY | O_CREAT | O_APPEND, 0600);\n"
        "  if (fd >= 0) { (void)!write(fd, \"ran\\n\", 4); close(fd); }\n"
        "}\n",
        f);
  fclose(f);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "cc -std=gnu11 -O1 -fPIC -shared -pthread -o '%s' '%s' -lm",
           scratch_path("evil.so"), scratch_path("evil.c"));
  cr_assert_eq(system(cmd), 0, "building the payload failed: %s", cmd);
  size_t so_size = 0;
  char *so = vkp_test_read_file(scratch_path("evil.so"), &so_size);
  cr_assert(so);
  size_t total = sizeof h + cbytes + h.source_size + so_size;
  char *out = malloc(total);
  h.object_size = so_size;
  memcpy(out, &h, sizeof h);
  memcpy(out + sizeof h, consts, cbytes + h.source_size);
  memcpy(out + sizeof h + cbytes + h.source_size, so, so_size);
  free(so);
  *out_size = total;
  return out;
}

static bool payload_ran(void) {
  struct stat sb;
  return stat(scratch_path("payload.mark"), &sb) == 0;
}

// Runs the artifact once through vkp_artifact_pipeline_create and compares
// with ref on random data.
static void run_like_ref(vkp_registry_t *reg, const vkp_graph_t *g,
                         const vkp_artifact_t *art) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_pipeline_t *pipe;
  VKP_TEST_OK(vkp_artifact_pipeline_create(art, reg, NULL, &pipe));
  const vkp_value_t *xv = &g->values[g->inputs[0]];
  vkp_tensor_t x, y, want;
  VKP_TEST_OK(vkp_tensor_init(&x, xv->dtype, xv->rank, xv->shape));
  vkp_test_fill_uniform(&rng, &x, -3, 3);
  VKP_TEST_OK(vkp_pipeline_infer(pipe, &x, &y));
  VKP_TEST_OK(vkp_target_run_graph(vkp_registry_find(reg, "ref"), g, NULL, &x, &want));
  char msg[256];
  cr_assert(vkp_test_allclose(&y, &want, 1e-4, 1e-6, msg, sizeof msg), "%s", msg);
  vkp_tensor_deinit(&x);
  vkp_tensor_deinit(&y);
  vkp_tensor_deinit(&want);
  vkp_pipeline_destroy(pipe);
}

static char *load_error(const char *path, const vkp_artifact_load_options_t *lo,
                        vkp_status_code_t want) {
  vkp_artifact_t *art = NULL;
  vkp_status_t st = vkp_artifact_load_with_options(path, lo, &art);
  cr_assert_not_null(st, "'%s' loaded", path);
  cr_assert_null(art);
  cr_assert_eq(vkp_status_code(st), want, "%s", vkp_status_message(st));
  char *msg = strdup(vkp_status_message(st));
  vkp_status_free(st);
  return msg;
}

Test(trust, tampered_native_code_never_runs_by_default, .timeout = 300) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  vkp_graph_t *g = build_cpu_artifact(reg, "good.vkp", NULL);
  setenv("VKP_TEST_PAYLOAD_MARK", scratch_path("payload.mark"), 1);
  vkp_artifact_t *art;
  VKP_TEST_OK(vkp_artifact_load(scratch_path("good.vkp"), &art));
  size_t evil_size;
  void *evil = make_evil_blob(vkp_artifact_shipped_blobs(art)[0].data,
                              vkp_artifact_shipped_blobs(art)[0].size, &evil_size);
  vkp_artifact_destroy(art);
  rewrite_artifact(scratch_path("good.vkp"), scratch_path("evil.vkp"), evil, evil_size,
                   false);

  // Default: the shipped code is not trusted, the stage is compiled again and
  // gives the right answer; the payload never runs.
  VKP_TEST_OK(vkp_artifact_load(scratch_path("evil.vkp"), &art));
  cr_assert_not(vkp_artifact_code_is_trusted(art));
  cr_assert_null(vkp_artifact_blobs(art));
  run_like_ref(reg, g, art);
  vkp_artifact_destroy(art);
  cr_assert_not(payload_ran(), "the tampered object ran in default mode");

  // The explicit opt-in does load it: proof that the payload is live.
  vkp_artifact_load_options_t lo = {.trust_unsigned_code = true};
  VKP_TEST_OK(vkp_artifact_load_with_options(scratch_path("evil.vkp"), &lo, &art));
  cr_assert(vkp_artifact_code_is_trusted(art));
  run_like_ref(reg, g, art);
  vkp_artifact_destroy(art);
  cr_assert(payload_ran(), "the opt-in did not load the shipped object");
  unsetenv("VKP_TEST_PAYLOAD_MARK");
  free(evil);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
}

Test(trust, signatures_accept_only_the_signed_bytes_and_trusted_keys, .timeout = 300) {
  VKP_TEST_OK(vkp_artifact_keys_generate(scratch_path("a.key"), scratch_path("a.pub")));
  VKP_TEST_OK(vkp_artifact_keys_generate(scratch_path("b.key"), scratch_path("b.pub")));
  struct stat sb;
  cr_assert_eq(stat(scratch_path("a.key"), &sb), 0);
  cr_assert_eq(sb.st_mode & 0777, 0600, "secret key mode %o", sb.st_mode & 0777);
  vkp_status_t again = vkp_artifact_keys_generate(scratch_path("a.key"), scratch_path("c.pub"));
  cr_assert(vkp_status_is(again, VKP_STATUS_ALREADY_EXISTS), "a secret key was overwritten");
  vkp_status_free(again);
  vkp_artifact_secret_key_t ka;
  vkp_artifact_public_key_t pa, pb;
  VKP_TEST_OK(vkp_artifact_secret_key_load(scratch_path("a.key"), &ka));
  VKP_TEST_OK(vkp_artifact_public_key_load(scratch_path("a.pub"), &pa));
  VKP_TEST_OK(vkp_artifact_public_key_load(scratch_path("b.pub"), &pb));
  // A public key file is not a secret key file and the other way round.
  vkp_status_t st = vkp_artifact_secret_key_load(scratch_path("a.pub"), &ka);
  cr_assert(st && strstr(vkp_status_message(st), "a.pub"));
  vkp_status_free(st);
  VKP_TEST_OK(vkp_artifact_secret_key_load(scratch_path("a.key"), &ka));

  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  vkp_graph_t *g = build_cpu_artifact(reg, "signed.vkp", &ka);
  setenv("VKP_TEST_PAYLOAD_MARK", scratch_path("payload.mark"), 1);

  // Signed by a trusted key: the shipped code is used.
  vkp_artifact_load_options_t trust_a = {.trusted_keys = &pa, .n_trusted_keys = 1};
  vkp_artifact_t *art;
  VKP_TEST_OK(vkp_artifact_load_with_options(scratch_path("signed.vkp"), &trust_a, &art));
  cr_assert(vkp_artifact_is_signed(art));
  cr_assert(vkp_artifact_code_is_trusted(art));
  cr_assert_not_null(vkp_artifact_blobs(art));
  run_like_ref(reg, g, art);
  size_t evil_size;
  void *evil = make_evil_blob(vkp_artifact_blobs(art)[0].data,
                              vkp_artifact_blobs(art)[0].size, &evil_size);
  vkp_artifact_destroy(art);
  // Two trusted keys, one of them the signer: fine too.
  vkp_artifact_public_key_t both[2] = {pb, pa};
  vkp_artifact_load_options_t trust_ab = {.trusted_keys = both, .n_trusted_keys = 2};
  VKP_TEST_OK(vkp_artifact_load_with_options(scratch_path("signed.vkp"), &trust_ab, &art));
  vkp_artifact_destroy(art);

  // Another key is not trusted.
  vkp_artifact_load_options_t trust_b = {.trusted_keys = &pb, .n_trusted_keys = 1};
  char *msg = load_error(scratch_path("signed.vkp"), &trust_b, VKP_STATUS_FAILED_PRECONDITION);
  cr_assert(strstr(msg, "not a trusted key") && strstr(msg, "signed.vkp"), "%s", msg);
  free(msg);

  // The payload swapped in with the signature kept: the signature fails.
  rewrite_artifact(scratch_path("signed.vkp"), scratch_path("tampered.vkp"), evil,
                   evil_size, false);
  msg = load_error(scratch_path("tampered.vkp"), &trust_a, VKP_STATUS_DATA_LOSS);
  cr_assert(strstr(msg, "changed after it was signed"), "%s", msg);
  free(msg);
  // ... or stripped: unsigned files are refused when keys are given.
  rewrite_artifact(scratch_path("signed.vkp"), scratch_path("stripped.vkp"), evil,
                   evil_size, true);
  msg = load_error(scratch_path("stripped.vkp"), &trust_a, VKP_STATUS_FAILED_PRECONDITION);
  cr_assert(strstr(msg, "is not signed"), "%s", msg);
  free(msg);
  // A malformed signature entry.
  {
    vkp_archive_t *a;
    VKP_TEST_OK(vkp_archive_open(scratch_path("signed.vkp"), VKP_ARTIFACT_FORMAT_VERSION, &a));
    vkp_archive_writer_t *w;
    VKP_TEST_OK(vkp_archive_writer_create(&w));
    for (int32_t i = 0; i < vkp_archive_count(a); ++i) {
      bool sig = strcmp(vkp_archive_name(a, i), "signature") == 0;
      VKP_TEST_OK(vkp_archive_writer_add(w, vkp_archive_name(a, i), vkp_archive_data(a, i),
                                         sig ? 7 : vkp_archive_size(a, i)));
    }
    VKP_TEST_OK(vkp_archive_writer_save(w, scratch_path("short_sig.vkp"),
                                        VKP_ARTIFACT_FORMAT_VERSION));
    vkp_archive_writer_destroy(w);
    vkp_archive_close(a);
    msg = load_error(scratch_path("short_sig.vkp"), &trust_a, VKP_STATUS_DATA_LOSS);
    cr_assert(strstr(msg, "signature entry is malformed"), "%s", msg);
    free(msg);
  }
  // Without keys, the tampered file still runs correctly from its graphs.
  VKP_TEST_OK(vkp_artifact_load(scratch_path("tampered.vkp"), &art));
  run_like_ref(reg, g, art);
  vkp_artifact_destroy(art);
  cr_assert_not(payload_ran());
  // Bad load options are an error, not a crash.
  vkp_artifact_load_options_t bad = {.n_trusted_keys = 1};
  msg = load_error(scratch_path("signed.vkp"), &bad, VKP_STATUS_INVALID_ARGUMENT);
  free(msg);
  unsetenv("VKP_TEST_PAYLOAD_MARK");
  free(evil);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
}

Test(trust, cli_sign_trust_and_refuse, .timeout = 300) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  int64_t xs[] = {1, 64};
  vkp_test_write_random_npy(&rng, "x.npy", 2, xs);
  char args[2048];
  vkp_test_run_t r = vkp_test_run_tool("vkpipe", "keygen -o team");
  cr_assert_eq(r.code, 0, "%s", r.err);
  vkp_test_run_free(&r);
  snprintf(args, sizeof args, "build '%s/examples/mlp.json' --policy cpu --stages 1 "
           "--sign team.key -o s.vkp", vkp_test_source_dir());
  r = vkp_test_run_tool("vkpipe", args);
  cr_assert_eq(r.code, 0, "%s", r.err);
  vkp_test_run_free(&r);
  r = vkp_test_run_tool("vkpipe", "inspect s.vkp");
  cr_assert(strstr(r.out, "signed: yes"), "%s", r.out);
  vkp_test_run_free(&r);
  r = vkp_test_run_tool("vkpipe", "run s.vkp --trust team.pub --input x=x.npy --output-dir o1");
  cr_assert_eq(r.code, 0, "%s", r.err);
  vkp_test_run_free(&r);
  r = vkp_test_run_tool("vkpipe", "run s.vkp --input x=x.npy --output-dir o2");
  cr_assert_eq(r.code, 0, "%s", r.err);
  vkp_test_run_free(&r);
  // A compiler is needed to regenerate; without one the message says why the
  // shipped code was not used and how to opt in.
  r = vkp_test_run_tool("vkpipe", "keygen -o other");
  vkp_test_run_free(&r);
  r = vkp_test_run_tool("vkpipe", "run s.vkp --trust other.pub --input x=x.npy --output-dir o3");
  cr_assert_eq(r.code, 1);
  cr_assert(strstr(r.err, "not a trusted key"), "%s", r.err);
  vkp_test_run_free(&r);
  r = vkp_test_run_tool("vkpipe", "run s.vkp --trust team.pub --trust-unsigned "
                        "--input x=x.npy --output-dir o4");
  cr_assert_eq(r.code, 2, "%s", r.err);
  vkp_test_run_free(&r);
  // vkpipe-bench takes the same options with the same meaning.
  r = vkp_test_run_tool("vkpipe-bench", "s.vkp --trust team.pub --frames 3 --warmup 1 "
                        "--no-single --json");
  cr_assert_eq(r.code, 0, "%s", r.err);
  vkp_test_run_free(&r);
  r = vkp_test_run_tool("vkpipe-bench", "s.vkp --trust other.pub --frames 3 --warmup 1");
  cr_assert_eq(r.code, 1, "%s", r.err);
  cr_assert(strstr(r.err, "not a trusted key"), "%s", r.err);
  vkp_test_run_free(&r);
  r = vkp_test_run_tool("vkpipe-bench", "s.vkp --trust team.pub --trust-unsigned");
  cr_assert_eq(r.code, 2, "%s", r.err);
  cr_assert(strstr(r.err, "exclude each other"), "%s", r.err);
  vkp_test_run_free(&r);
  // --trust on a model file, and --stages past the one limit every tool shares.
  snprintf(args, sizeof args, "run '%s/examples/mlp.json' --trust team.pub --input x=x.npy "
           "--output-dir o5", vkp_test_source_dir());
  r = vkp_test_run_tool("vkpipe", args);
  cr_assert_eq(r.code, 2, "%s", r.err);
  cr_assert(strstr(r.err, "apply to .vkp artifacts"), "%s", r.err);
  vkp_test_run_free(&r);
  snprintf(args, sizeof args, "build '%s/examples/mlp.json' --stages 1025 -o x.vkp",
           vkp_test_source_dir());
  r = vkp_test_run_tool("vkpipe", args);
  cr_assert_eq(r.code, 2, "%s", r.err);
  cr_assert(strstr(r.err, "1..1024"), "%s", r.err);
  vkp_test_run_free(&r);
  char *a = vkp_test_read_file(scratch_path("o1/y.npy"), NULL);
  char *b = vkp_test_read_file(scratch_path("o2/y.npy"), NULL);
  cr_assert(a && b);
  free(a);
  free(b);
}

Test(trust, unsigned_artifact_without_a_compiler_says_how_to_opt_in, .timeout = 300) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  vkp_graph_t *g = build_cpu_artifact(reg, "u.vkp", NULL);
  vkp_artifact_t *art;
  VKP_TEST_OK(vkp_artifact_load(scratch_path("u.vkp"), &art));
  setenv("CC", "/nonexistent/cc", 1);
  vkp_pipeline_t *pipe = NULL;
  vkp_compile_options_t co = {.cache_dir = scratch_path("empty-cache")};
  vkp_pipeline_options_t po = {.stage_compile_options = &co};
  vkp_status_t st = vkp_artifact_pipeline_create(art, reg, &po, &pipe);
  unsetenv("CC");
  cr_assert_not_null(st);
  cr_assert_null(pipe);
  const char *msg = vkp_status_message(st);
  cr_assert(strstr(msg, "not signed") && strstr(msg, "--trust-unsigned") &&
                strstr(msg, "C compiler"),
            "%s", msg);
  vkp_status_free(st);
  vkp_artifact_destroy(art);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
}

Test(trust, archive_refuses_repeated_entry_names, .timeout = 30) {
  // Two entries of one name: a reader that finds the first could be shown
  // other bytes than a checker that looked at the second. The writer refuses
  // them, so write "meta.json" and "meta.jsoX", then rename the second in
  // the table and fix the table's CRC, as an attacker would.
  vkp_archive_writer_t *w;
  VKP_TEST_OK(vkp_archive_writer_create(&w));
  VKP_TEST_OK(vkp_archive_writer_add(w, "meta.json", "{}", 2));
  VKP_TEST_OK(vkp_archive_writer_add(w, "meta.jsoX", "[]", 2));
  VKP_TEST_OK(vkp_archive_writer_save(w, scratch_path("dup.vkp"), 1));
  vkp_archive_writer_destroy(w);
  size_t size;
  unsigned char *img = (unsigned char *)vkp_test_read_file(scratch_path("dup.vkp"), &size);
  cr_assert(img);
  unsigned char *x = NULL;
  for (size_t i = 0; i + 9 <= size; ++i)
    if (memcmp(img + i, "meta.jsoX", 9) == 0) x = img + i;
  cr_assert(x);
  x[8] = 'n';
  uint64_t table_off = 0;
  for (int i = 0; i < 8; ++i) table_off |= (uint64_t)img[16 + i] << (8 * i);
  uint32_t crc = vkp_crc32(0, img + table_off, size - (size_t)table_off);
  for (int i = 0; i < 4; ++i) img[24 + i] = (unsigned char)(crc >> (8 * i));
  crc = vkp_crc32(0, img, 28);  // the header's own checksum
  for (int i = 0; i < 4; ++i) img[28 + i] = (unsigned char)(crc >> (8 * i));
  vkp_archive_t *a = NULL;
  vkp_status_t st = vkp_archive_open_memory(img, size, "dup.vkp", 1, &a);
  cr_assert_not_null(st, "a repeated entry name was accepted");
  cr_assert(strstr(vkp_status_message(st), "'meta.json' appears twice"), "%s",
            vkp_status_message(st));
  vkp_status_free(st);
  free(img);
}

static char *expect_error(vkp_status_t st, const char *want) {
  cr_assert_not_null(st, "no error (wanted '%s')", want);
  const char *msg = vkp_status_message(st);
  cr_assert(strstr(msg, want), "'%s' not in: %s", want, msg);
  vkp_status_free(st);
  return NULL;
}

Test(trust, readers_refuse_directories_by_name, .timeout = 30) {
  const char *dir = vkp_test_scratch;
  vkp_tensor_t t;
  expect_error(vkp_npy_read_file(dir, &t), "is a directory; expected a .npy file");
  vkp_artifact_t *art = NULL;
  expect_error(vkp_artifact_load(dir, &art), "is a directory");
  cr_assert_null(art);
  vkp_graph_t *g = NULL;
  expect_error(vkp_graph_load(dir, &g), "is a directory; expected a model");
  cr_assert_null(g);
  vkp_plan_t *plan = NULL;
  expect_error(vkp_plan_load(dir, NULL, &plan), "is a directory; expected a plan");
  // A FIFO is refused without blocking on it.
  char fifo[600];
  snprintf(fifo, sizeof fifo, "%s/pipe.npy", dir);
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  expect_error(vkp_npy_read_file(fifo, &t), "is a pipe; expected a .npy file");
}

// A JSON graph whose weights file is `weights`, written to scratch/m/g.json
// with a copy of the example's weights beside it and one level up.
static const char *json_with_weights(const char *weights) {
  char src[600], text_path[600];
  snprintf(src, sizeof src, "%s/examples/mlp.json", vkp_test_source_dir());
  char *text = vkp_test_read_file(src, NULL);
  cr_assert(text);
  char *w = strstr(text, "\"weights\"");
  cr_assert(w);
  char *q1 = strchr(w + 9, '"'), *q2 = q1 ? strchr(q1 + 1, '"') : NULL;
  cr_assert(q1 && q2);
  char bin_src[600];
  snprintf(bin_src, sizeof bin_src, "%s/examples/%.*s", vkp_test_source_dir(),
           (int)(q2 - q1 - 1), q1 + 1);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/m' && cp '%s' '%s/m/w.bin' && cp '%s' '%s/w.bin'",
           vkp_test_scratch, bin_src, vkp_test_scratch, bin_src, vkp_test_scratch);
  cr_assert_eq(system(cmd), 0);
  snprintf(text_path, sizeof text_path, "%s/m/g.json", vkp_test_scratch);
  FILE *f = fopen(text_path, "w");
  fprintf(f, "%.*s\"%s\"%s", (int)(q1 - text), text, weights, q2 + 1);
  fclose(f);
  free(text);
  static char out[600];
  snprintf(out, sizeof out, "%s", text_path);
  return out;
}

Test(trust, json_weights_stay_beside_the_model, .timeout = 30) {
  vkp_graph_t *g = NULL;
  VKP_TEST_OK(vkp_graph_load(json_with_weights("w.bin"), &g));
  vkp_graph_destroy(g);
  g = NULL;
  expect_error(vkp_graph_load(json_with_weights("../w.bin"), &g),
               "'../w.bin' leaves the graph's folder through '..'");
  cr_assert_null(g);
  char abs[700];
  snprintf(abs, sizeof abs, "%s/w.bin", vkp_test_scratch);
  expect_error(vkp_graph_load(json_with_weights(abs), &g), "is an absolute path");
  // The caller may allow both.
  vkp_graph_load_options_t lo = {.allow_outside_paths = true};
  VKP_TEST_OK(vkp_graph_load_with_options(json_with_weights(abs), &lo, &g));
  vkp_graph_destroy(g);
  VKP_TEST_OK(vkp_graph_load_with_options(json_with_weights("../w.bin"), &lo, &g));
  vkp_graph_destroy(g);
  // A directory as the weights file.
  expect_error(vkp_graph_load(json_with_weights("."), &g), "is a directory");
}

Test(trust, unwritable_cache_falls_back_to_a_private_one, .timeout = 120) {
  char model[512];
  snprintf(model, sizeof model, "%s/examples/mlp.json", vkp_test_source_dir());
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_load(model, &g));
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  // The cache "directory" is a regular file: nothing can be made inside.
  vkp_test_write_text("not-a-dir", "x");
  char cache[600];
  snprintf(cache, sizeof cache, "%s/not-a-dir/sub", vkp_test_scratch);
  vkp_compile_options_t co = {.cache_dir = cache};
  vkp_blob_t blob = {0};
  const vkp_target_t *cpu = vkp_registry_find(reg, "cpu");
  // The private cache goes under $TMPDIR: keep it in the scratch directory.
  setenv("TMPDIR", vkp_test_scratch, 1);
  VKP_TEST_OK(cpu->vtable->compiler.compile(cpu, g, &co, &blob));
  unsetenv("TMPDIR");
  cr_assert_gt(blob.size, 0);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "ls -d '%s'/vkpipe-cache-* >/dev/null 2>&1", vkp_test_scratch);
  cr_assert_eq(system(cmd), 0, "no private cache was made under $TMPDIR");
  vkp_blob_deinit(&blob);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(trust, generated_c_refuses_names_that_end_a_comment, .timeout = 60) {
  char model[512];
  snprintf(model, sizeof model, "%s/examples/mlp.json", vkp_test_source_dir());
  char *text = vkp_test_read_file(model, NULL);
  cr_assert(text);
  // Rename the first node to one with a newline and code after it.
  char *name = strstr(text, "\"name\"");  // the graph's name comes first
  cr_assert(name);
  char *nodes = strstr(text, "\"nodes\"");
  cr_assert(nodes);
  char *nn = strstr(nodes, "\"name\"");
  cr_assert(nn);
  char *q1 = strchr(nn + 6, '"'), *q2 = strchr(q1 + 1, '"');
  char *doc = malloc(strlen(text) + 64);
  sprintf(doc, "%.*s\"x\\n#error injected\"%s", (int)(q1 - text), text, q2 + 1);
  char dir[600];
  snprintf(dir, sizeof dir, "%s/examples", vkp_test_source_dir());
  vkp_graph_t *g = NULL;
  VKP_TEST_OK(vkp_graph_load_json(doc, strlen(doc), dir, &g));
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *cpu = vkp_registry_find(reg, "cpu");
  vkp_blob_t blob = {0};
  expect_error(cpu->vtable->compiler.compile(cpu, g, NULL, &blob),
               "a node name contains a control character");
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
  free(doc);
  free(text);
}

Test(trust, a_registry_brings_up_only_the_targets_asked_for, .timeout = 30) {
  const char *cpu_only[] = {"cpu"};
  vkp_registry_t *reg = NULL;
  VKP_TEST_OK(vkp_registry_create_builtin(cpu_only, 1, &reg));
  cr_assert_not_null(vkp_registry_find(reg, "cpu"));
  cr_assert_eq(vkp_registry_count(reg), 1);
  // Vulkan was never tried: neither available nor recorded unavailable.
  cr_assert_null(vkp_registry_find(reg, "vulkan"));
  cr_assert_null(vkp_registry_unavailable_reason(reg, "vulkan"));
  vkp_registry_destroy(reg);
  const char *bogus[] = {"cpu", "npu"};
  reg = NULL;
  expect_error(vkp_registry_create_builtin(bogus, 2, &reg),
               "no built-in target 'npu' (built-in: ref, cpu, vulkan)");
  cr_assert_null(reg);
}

Test(trust, partition_options_are_checked_even_when_unused, .timeout = 60) {
  char model[512];
  snprintf(model, sizeof model, "%s/examples/mlp.json", vkp_test_source_dir());
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_load(model, &g));
  vkp_registry_t *reg;
  const char *names[] = {"ref", "cpu"};
  VKP_TEST_OK(vkp_registry_create_builtin(names, 2, &reg));
  // A fallback no node needs is still checked.
  vkp_partition_options_t opt = {.policy = "cpu", .fallback = "bogus"};
  vkp_partition_t *part = NULL;
  expect_error(vkp_partition_create(g, reg, NULL, &opt, &part), "fallback 'bogus'");
  cr_assert_null(part);
  // An assignment matching no node is a warning in the notes.
  char text[] = "nosuchnode*=ref";
  vkp_assign_t as;
  VKP_TEST_OK(vkp_assign_parse(text, &as));
  vkp_partition_options_t opt2 = {.policy = "cpu", .n_assigns = 1, .assigns = &as};
  VKP_TEST_OK(vkp_partition_create(g, reg, NULL, &opt2, &part));
  cr_assert(part->notes && strstr(part->notes,
                                  "warning: --assign 'nosuchnode*=ref' matches no node"),
            "notes: %s", part->notes ? part->notes : "(none)");
  vkp_partition_destroy(part);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// Fails allocation 1, 2, ... of `load` until it succeeds; every failure must
// be reported as out of memory (never as a corrupt file) and leak nothing.
static void walk_allocations(const char *what,
                             vkp_status_t (*load)(const void *ctx, void **out),
                             void (*destroy)(void *), const void *ctx) {
  int64_t n = 1;
  for (;; ++n) {
    vkp_test_counting_alloc_t counter;
    vkp_test_counting_alloc_install(&counter, n);
    void *obj = NULL;
    vkp_status_t st = load(ctx, &obj);
    bool failed = counter.failed;
    if (!st) {
      destroy(obj);
      int64_t live = counter.live;
      vkp_test_counting_alloc_uninstall();
      cr_assert_not(failed, "%s: allocation %lld failed but the load succeeded", what,
                    (long long)n);
      cr_assert_eq(live, 0);
      break;
    }
    cr_assert_null(obj);
    vkp_status_code_t code = vkp_status_code(st);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", vkp_status_message(st));
    vkp_status_free(st);
    int64_t live = counter.live;
    vkp_test_counting_alloc_uninstall();
    cr_assert(failed, "%s failed without an allocation failure: %s", what, msg);
    cr_assert_eq(code, VKP_STATUS_OUT_OF_MEMORY,
                 "%s: allocation %lld failed and was reported as: %s", what,
                 (long long)n, msg);
    cr_assert_eq(live, 0, "%s: failing allocation %lld leaked %lld blocks", what,
                 (long long)n, (long long)live);
  }
  cr_log_info("%s: walked %lld allocation failures", what, (long long)n - 1);
  cr_assert_gt(n, 2, "%s: too few allocations to be a walk", what);
}

typedef struct load_ctx_t {
  const char *path;
  const vkp_artifact_load_options_t *options;
} load_ctx_t;

static vkp_status_t load_artifact(const void *ctx, void **out) {
  const load_ctx_t *c = ctx;
  return vkp_artifact_load_with_options(c->path, c->options, (vkp_artifact_t **)out);
}
static void destroy_artifact(void *a) { vkp_artifact_destroy(a); }

static vkp_status_t load_npy(const void *ctx, void **out) {
  vkp_tensor_t t;
  vkp_status_t st = vkp_npy_read_file(ctx, &t);
  if (!st) {
    *out = malloc(sizeof t);
    memcpy(*out, &t, sizeof t);
  }
  return st;
}
static void destroy_npy(void *t) {
  vkp_tensor_deinit(t);
  free(t);
}

Test(trust, loaders_report_every_allocation_failure_as_such, .timeout = 120) {
  VKP_TEST_OK(vkp_artifact_keys_generate(scratch_path("w.key"), scratch_path("w.pub")));
  vkp_artifact_secret_key_t sk;
  vkp_artifact_public_key_t pk;
  VKP_TEST_OK(vkp_artifact_secret_key_load(scratch_path("w.key"), &sk));
  VKP_TEST_OK(vkp_artifact_public_key_load(scratch_path("w.pub"), &pk));
  char model[512];
  snprintf(model, sizeof model, "%s/examples/mlp.json", vkp_test_source_dir());
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_load(model, &g));
  vkp_registry_t *reg;
  const char *names[] = {"ref"};
  VKP_TEST_OK(vkp_registry_create_builtin(names, 1, &reg));
  vkp_partition_options_t opt = {.policy = "ref", .stages = 2};
  vkp_partition_t *part;
  vkp_plan_t *plan;
  VKP_TEST_OK(vkp_partition_create(g, reg, NULL, &opt, &part));
  VKP_TEST_OK(vkp_partition_to_plan(part, "mlp", &plan));
  vkp_artifact_info_t info = {.model = model, .policy = "ref", .sign_key = &sk};
  VKP_TEST_OK(vkp_artifact_build(plan, reg, &info, scratch_path("w.vkp")));
  vkp_plan_destroy(plan);
  vkp_partition_destroy(part);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);

  load_ctx_t plain = {.path = scratch_path("w.vkp")};
  walk_allocations("artifact", load_artifact, destroy_artifact, &plain);
  vkp_artifact_load_options_t lo = {.trusted_keys = &pk, .n_trusted_keys = 1};
  load_ctx_t keyed = {.path = scratch_path("w.vkp"), .options = &lo};
  walk_allocations("signed artifact", load_artifact, destroy_artifact, &keyed);
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  int64_t shape[] = {2, 3};
  vkp_test_write_random_npy(&rng, "w.npy", 2, shape);
  walk_allocations(".npy", load_npy, destroy_npy, scratch_path("w.npy"));
}

Test(trust, no_vulkan_device_is_named_and_cpu_runs_without_one, .timeout = 120) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  int64_t xs[] = {1, 64};
  vkp_test_write_random_npy(&rng, "x.npy", 2, xs);
  // No Vulkan driver at all: device creation fails inside the loader.
  setenv("VK_ICD_FILENAMES", "/nonexistent/icd.json", 1);
  setenv("VK_DRIVER_FILES", "/nonexistent/icd.json", 1);
  char args[1024];
  snprintf(args, sizeof args, "run '%s/examples/mlp.json' --target vulkan --input x=x.npy "
           "--output-dir o1", vkp_test_source_dir());
  vkp_test_run_t r = vkp_test_run_tool("vkpipe", args);
  cr_assert_eq(r.code, 1, "%s", r.err);
  cr_assert(strstr(r.err, "vulkan") && strstr(r.err, "unavailable"), "%s", r.err);
  cr_assert_null(strstr(r.err, "corrupt"), "%s", r.err);
  vkp_test_run_free(&r);
  snprintf(args, sizeof args, "run '%s/examples/mlp.json' --target cpu --input x=x.npy "
           "--output-dir o2", vkp_test_source_dir());
  r = vkp_test_run_tool("vkpipe", args);
  cr_assert_eq(r.code, 0, "%s", r.err);
  vkp_test_run_free(&r);
  unsetenv("VK_ICD_FILENAMES");
  unsetenv("VK_DRIVER_FILES");
}
