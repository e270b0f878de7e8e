// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the command-line tools (tools/tool_*.c). Single-threaded
// use from a command's main function; nothing here is thread-safe.
#ifndef VKPIPE_TOOLS_TOOL_H_
#define VKPIPE_TOOLS_TOOL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vkpipe/artifact.h"
#include "vkpipe/cost.h"
#include "vkpipe/graph.h"
#include "vkpipe/partition.h"
#include "vkpipe/plan.h"
#include "vkpipe/status.h"
#include "vkpipe/target.h"
#include "vkpipe/tensor.h"

#define VKP_TOOL_VERSION "0.1.0"

// Exit codes: 0 success, 1 the work failed, 2 bad usage.
#define VKP_TOOL_EXIT_FAILURE 1
#define VKP_TOOL_EXIT_USAGE 2

// ---------------------------------------------------------------------------
// Arguments and errors (tools/tool_args.c)

// True for "--help" and "-h".
bool vkp_tool_is_help(const char *arg);

// Prints "vkpipe <command>: <message> (try 'vkpipe <command> --help')" as one
// line on stderr and returns VKP_TOOL_EXIT_USAGE. A `command` starting with
// "vkpipe" is a program name ("vkpipe-bench") and is printed as it is.
int vkp_tool_usage_error(const char *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

// Prints "vkpipe <command>: <status message>" on stderr, frees `status`
// (consumed) and returns VKP_TOOL_EXIT_FAILURE.
int vkp_tool_fail(const char *command, vkp_status_t status);

typedef enum vkp_tool_option_result_t {
  VKP_TOOL_OPTION_NO_MATCH,       // argv[*i] is not option `name`
  VKP_TOOL_OPTION_MATCHED,        // *out_value set, *i advanced past it
  VKP_TOOL_OPTION_MISSING_VALUE,  // `name` given without a value
} vkp_tool_option_result_t;

// Matches argv[*i] against an option taking a value, as "--name VALUE" or
// "--name=VALUE". *out_value is borrowed from argv.
vkp_tool_option_result_t vkp_tool_option(int argc, char **argv, int *i,
                                         const char *name,
                                         const char **out_value);

// Parses a decimal integer in [lo, hi]; false when `text` is not one.
bool vkp_tool_parse_int(const char *text, int64_t lo, int64_t hi,
                        int64_t *out_value);

// --replicas N|auto: 1..VKP_PLAN_MAX_REPLICAS, or "auto"
// (VKP_PARTITION_REPLICAS_AUTO); false (after printing what it wants,
// prefixed with `tool`) when `text` is neither.
bool vkp_tool_parse_replicas(const char *tool, const char *text, int32_t *out_value);

// The help lines of --replicas, the same in every command that cuts stages.
#define VKP_TOOL_REPLICAS_HELP                                                   \
  "  --replicas N|auto   run every stage as N copies side by side, frames\n"      \
  "                      alternating between them (host stages only;\n"          \
  "                      default 1; auto: chosen with the threads and\n"         \
  "                      stages by estimated throughput)\n"

// ---------------------------------------------------------------------------
// Loading models: --dim NAME=SIZE and --shape INPUT=DxDx... (tools/tool_load.c)

#define VKP_TOOL_MAX_BINDINGS 32


// The help text every command that loads a model prints for the two flags.
#define VKP_TOOL_LOAD_HELP                                                   \
  "  --dim NAME=SIZE      size of a symbolic input dimension (e.g. batch=1)\n" \
  "  --max-dim NAME=SIZE  a symbolic dimension that varies at run time up\n"  \
  "                       to SIZE (e.g. batch=8): one loaded model runs\n"    \
  "                       every batch from 0 to 8\n"                           \
  "  --shape INPUT=DIMS   whole shape of an input, e.g. x=1x3x224x224;\n"     \
  "                       models with dynamic axes need one of these\n"       \
  "  --no-fuse            ONNX: import LayerNorm, GELU and attention node\n"   \
  "                       by node instead of as fused ops\n"

// Names are borrowed from argv (the '=' after a name is overwritten with a
// NUL), so the struct needs no cleanup.
typedef struct vkp_tool_load_args_t {
  int32_t n_dims, n_shapes;
  vkp_dim_binding_t dims[VKP_TOOL_MAX_BINDINGS];
  vkp_shape_binding_t shapes[VKP_TOOL_MAX_BINDINGS];
  bool no_fusion;  // --no-fuse
} vkp_tool_load_args_t;

// Matches argv[*i] against --dim / --shape / --no-fuse (either "--dim V" or "--dim=V").
// *matched says whether it did; the return value is 0, or the usage exit
// code after printing what is wrong.
int vkp_tool_load_option(const char *command, int argc, char **argv, int *i,
                         vkp_tool_load_args_t *args, bool *matched);
// vkp_graph_load_with_options with the collected bindings.
vkp_status_t vkp_tool_load_graph(const char *path,
                                 const vkp_tool_load_args_t *args,
                                 vkp_graph_t **out_graph) VKP_MUST_USE;

// ---------------------------------------------------------------------------
// Trusting an artifact's shipped code: --trust KEY.pub, --trust-unsigned
// (tools/tool_trust.c; docs/security.md)

// Most --trust keys one command takes.
#define VKP_TOOL_MAX_TRUSTED_KEYS 16

#define VKP_TOOL_TRUST_HELP                                                    \
  "  --trust KEY.pub      for a .vkp: run its shipped compiled code if this\n" \
  "                       key signed it (repeatable; a file not signed by\n"  \
  "                       one of them is refused)\n"                          \
  "  --trust-unsigned     for a .vkp: run its shipped code unsigned (you\n"   \
  "                       vouch for the file: it is native code). Without\n"  \
  "                       either, an artifact's stages are compiled again\n"  \
  "                       from its graphs (cached)\n"

// Key paths are borrowed from argv.
typedef struct vkp_tool_trust_args_t {
  const char *key_paths[VKP_TOOL_MAX_TRUSTED_KEYS];
  int32_t n_keys;
  bool unsigned_code;  // --trust-unsigned
} vkp_tool_trust_args_t;

// Matches argv[*i] against --trust KEY (or --trust=KEY) and --trust-unsigned;
// returns 0, or the usage exit code after printing what is wrong.
int vkp_tool_trust_option(const char *command, int argc, char **argv, int *i,
                          vkp_tool_trust_args_t *args, bool *matched);
// After parsing: the options only apply to a .vkp `model`, and exclude each
// other. Returns 0, or the usage exit code after printing why.
int vkp_tool_trust_check(const char *command, const vkp_tool_trust_args_t *args,
                         const char *model);
// vkp_artifact_load_with_options with the keys read from their files.
vkp_status_t vkp_tool_artifact_load(const char *path, const vkp_tool_trust_args_t *args,
                                    vkp_artifact_t **out_artifact) VKP_MUST_USE;

// ---------------------------------------------------------------------------
// Graphs (tools/tool_graph.c)

// Formats `bytes` as "9.4 KiB" (or "512 B", "3.0 MiB", ...) into `buf`.
const char *vkp_tool_format_bytes(size_t bytes, char *buf, size_t size);

// Prints the summary `vkpipe check` shows: inputs and outputs with dtype and
// shape, node count, op histogram and parameter count and bytes. `graph` is
// validated and borrowed.
// A value's shape as text: "[4, 3]", or "[<=4, 3]" along a bounded axis.
const char *vkp_tool_value_shape(const vkp_value_t *v, char *buf, size_t size);
void vkp_tool_print_graph_summary(FILE *out, const char *path,
                                  const vkp_graph_t *graph);

// ---------------------------------------------------------------------------
// Tensors in and out of files (tools/tool_tensors.c)

// One "--input NAME=FILE.npy" argument, borrowed from argv. `name` is NULL
// when the argument was a bare FILE (allowed when the graph has one input).
typedef struct vkp_tool_input_arg_t {
  const char *name;
  size_t name_len;
  const char *path;
} vkp_tool_input_arg_t;

// Splits "NAME=FILE" (at the first '=') or takes a bare "FILE".
void vkp_tool_input_arg_parse(const char *text, vkp_tool_input_arg_t *out);

// For each --input NAME=FILE.npy of `inputs` whose NAME has no --shape yet,
// adds the file's shape as a --shape binding, so that a model with symbolic
// dimensions runs on the inputs given to it without --dim (the loader checks
// them against the model's static dimensions as it checks --shape); `vkpipe
// run` uses it when a load fails on an unbound symbolic dimension. Names
// must be NUL-terminated. *out_added: how many bindings were added; a file
// that is not a readable .npy is an error naming the input. Nothing is added
// when a --max-dim is given (the files then hold run-time extents).
vkp_status_t vkp_tool_bind_input_files(int32_t n_inputs,
                                       const vkp_tool_input_arg_t *inputs,
                                       vkp_tool_load_args_t *args,
                                       int32_t *out_added) VKP_MUST_USE;

// Reads one .npy per graph input into `tensors` (graph->n_inputs entries,
// initialised here, owned by the caller: vkp_tensor_deinit each, also after
// a failure). Every graph input must be given exactly once, and dtype and
// shape must match the graph's.
vkp_status_t vkp_tool_read_inputs(const vkp_graph_t *graph, int32_t n_args,
                                  const vkp_tool_input_arg_t *args,
                                  vkp_tensor_t *tensors) VKP_MUST_USE;

// The file name used for tensor `name`: the name with every character outside
// [A-Za-z0-9._-] replaced by '_', plus ".npy". Written into `buf`.
const char *vkp_tool_tensor_file_name(const char *name, char *buf, size_t size);

// Creates `dir` (and its parents) when missing.
vkp_status_t vkp_tool_make_dir(const char *dir) VKP_MUST_USE;

// Writes graph output i to DIR/<vkp_tool_tensor_file_name(name)>, one line per
// file on `log` (may be NULL). Fails when two output names map to one file.
// Same as vkp_tool_read_inputs / vkp_tool_write_outputs for a list of value
// descriptions (name, dtype, shape) that need not come from one graph, e.g.
// an artifact's global inputs and outputs.
vkp_status_t vkp_tool_read_values(int32_t n_values,
                                  const vkp_value_t *const *values,
                                  int32_t n_args,
                                  const vkp_tool_input_arg_t *args,
                                  vkp_tensor_t *tensors) VKP_MUST_USE;
vkp_status_t vkp_tool_write_values(int32_t n_values,
                                   const vkp_value_t *const *values,
                                   const vkp_tensor_t *outputs, const char *dir,
                                   FILE *log) VKP_MUST_USE;

vkp_status_t vkp_tool_write_outputs(const vkp_graph_t *graph,
                                    const vkp_tensor_t *outputs,
                                    const char *dir, FILE *log) VKP_MUST_USE;

// ---------------------------------------------------------------------------
// The cost profile: --profile FILE|default and --cores N (tools/tool_profile.c)

#define VKP_TOOL_PROFILE_HELP                                                 \
  "  --profile FILE|default  device rates: a file from `vkpipe calibrate`,\n"  \
  "                       or 'default' for the documented defaults; without\n" \
  "                       it the machine's profile is measured on the first\n" \
  "                       run (a few seconds) and cached (docs/pipeline-\n"    \
  "                       config.md); VKPIPE_PROFILE=FILE|default does the same\n" \
  "  --cores N            cores the host device may use (default: the cores\n" \
  "                       this process may run on)\n"

// The profile a command partitions with (owned by the caller):
// - `path` "default" (or, with `path` NULL, VKPIPE_PROFILE=default): the
//   documented defaults, measuring nothing;
// - `path` a file (or VKPIPE_PROFILE=FILE): that profile;
// - neither: the machine's profile (vkp_profile_create_for_machine), with a
//   progress line on stderr when it is measured.
// `cores` > 0 then sets the host device's concurrency. `command` names the
// tool in messages ("partition", "vkpipe-bench").
vkp_status_t vkp_tool_profile(const char *command, const char *path, int32_t cores,
                              const vkp_registry_t *registry,
                              vkp_profile_t **out_profile) VKP_MUST_USE;

// ---------------------------------------------------------------------------
// Re-cutting on measured stage times: --refine N (tools/tool_refine.c;
// docs/pipeline-config.md, "Re-cutting on measured stage times")

// Plans a refinement tries: the estimates' cut and up to this many re-cuts.
#define VKP_TOOL_MAX_REFINE 8
#define VKP_TOOL_DEFAULT_REFINE 2

// Random inputs for every global input of `plan` (plan order; float32 in
// [-1, 1), integers in [0, 8)), from a fixed seed. *out_inputs holds
// plan->n_inputs tensors; free with vkp_tool_inputs_free.
vkp_status_t vkp_tool_random_inputs(const vkp_plan_t *plan,
                                    vkp_tensor_t **out_inputs) VKP_MUST_USE;
void vkp_tool_inputs_free(vkp_tensor_t *inputs, int32_t n);

// Runs `plan` pipelined on `inputs` (plan order) for `warmup` frames, then
// measures `frames` more with the rings kept full: frames per second and
// each stage's mean busy time per frame (out_stage_s: plan->n_stages).
vkp_status_t vkp_tool_measure_plan(const vkp_plan_t *plan, const vkp_registry_t *registry,
                                   const vkp_tensor_t *inputs, int32_t warmup,
                                   int32_t frames, double *out_fps,
                                   double *out_stage_s) VKP_MUST_USE;

// What a refinement kept and tried. Owned fields are freed by
// vkp_tool_refined_deinit.
typedef struct vkp_tool_refined_t {
  vkp_partition_t *part;  // owned: the partition of the plan kept
  vkp_plan_t *plan;       // owned: the plan kept
  int32_t n_plans;        // plans measured (0: none, refinement was off)
  double fps[VKP_TOOL_MAX_REFINE + 1];  // each one's frames/s, first the estimates' cut
  int32_t kept;           // index into fps
  char *notes;            // owned (vkp_free), a line per round, or NULL
} vkp_tool_refined_t;

void vkp_tool_refined_deinit(vkp_tool_refined_t *r);

// Partitions `graph` with `options` (its `measured` ignored) and makes the
// plan (every stage at `precision`). With `rounds` > 0 it then runs that
// plan pipelined for about half a second by its estimate (8 to 400 frames,
// at most `max_frames`; `warmup` frames first) on random inputs, cuts the
// graph again with every stage's measured busy time
// (vkp_partition_options_t.measured), runs that plan, and so on for up to
// `rounds` re-cuts or until a cut repeats; the plan that ran the most
// frames per second is kept. `inputs` (plan order) may be NULL (random ones).
vkp_status_t vkp_tool_refine(const vkp_graph_t *graph, const vkp_registry_t *registry,
                             const vkp_profile_t *profile,
                             const vkp_partition_options_t *options,
                             vkp_precision_t precision, int32_t rounds,
                             int32_t warmup, int32_t max_frames,
                             const vkp_tensor_t *inputs,
                             vkp_tool_refined_t *out) VKP_MUST_USE;

#endif  // VKPIPE_TOOLS_TOOL_H_
