// SPDX-License-Identifier: Apache-2.0
// `vkpipe run MODEL --input NAME=FILE.npy ... --output-dir DIR`: run a model
// once and write its outputs as .npy files.
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "tools/tool.h"
#include "vkpipe/artifact.h"
#include "vkpipe/mpi.h"
#include "vkpipe/partition.h"
#include "vkpipe/pipeline.h"
#include "vkpipe/graph.h"
#include "vkpipe/target.h"

int vkp_cmd_run(int argc, char **argv);
extern const char vkp_cmd_run_summary[];
const char vkp_cmd_run_summary[] = "run a model on .npy inputs, write .npy outputs";

typedef struct vkp__run_args_t {
  const char *model;
  const char *target;          // "ref" unless --target
  const char *output_dir;
  int32_t n_inputs;
  vkp_tool_input_arg_t *inputs;  // owned; n_inputs entries
  vkp_compile_options_t options;
  int32_t stages;              // --stages for --target auto (0: auto)
  const char *profile;         // --profile for --target auto
  const char *plan;            // --plan: run this plan file (its own model)
  int32_t ranks;               // --ranks for --target auto (0: one process)
  vkp_tool_load_args_t load;   // --dim, --shape
  vkp_tool_trust_args_t trust;  // --trust KEY.pub, --trust-unsigned
} vkp__run_args_t;

// A registry with only the built-in targets in `names`, so a run brings up
// no device it does not use; a name that is no built-in gets the default
// registry, whose lookup then names every target there is.
static vkp_status_t vkp__registry_for(const char *const *names, int32_t n,
                                      vkp_registry_t **out_registry) {
  vkp_status_t st = vkp_registry_create_builtin(names, n, out_registry);
  if (!vkp_status_is(st, VKP_STATUS_NOT_FOUND)) return st;
  vkp_status_free(st);
  return vkp_registry_create_default(out_registry);
}

// The whole graph on one registered target.
static vkp_status_t vkp__run_on_target(const vkp__run_args_t *args,
                                       const vkp_graph_t *graph,
                                       const vkp_tensor_t *inputs,
                                       vkp_tensor_t *outputs) {
  vkp_registry_t *registry = NULL;
  vkp_status_t st = vkp__registry_for(&args->target, 1, &registry);
  if (st) return st;
  const vkp_target_t *target = NULL;
  st = vkp_registry_lookup(registry, args->target, &target);
  if (!st) st = vkp_target_check_graph(target, graph);
  if (!st)
    st = vkp_target_run_graph(target, graph, &args->options, inputs, outputs);
  vkp_registry_destroy(registry);
  return st;
}

// What the pipeline's global inputs (or outputs) are, under the pipeline's
// own names: the dtype and shape of the stage value behind each. Array of
// vkp_pipeline_input_count (output_count) entries, owned by the caller.
static vkp_status_t vkp__pipeline_values(const vkp_pipeline_t *pipe, const vkp_plan_t *plan,
                                         bool outputs, vkp_value_t **out_values) {
  int32_t n = outputs ? vkp_pipeline_output_count(pipe) : vkp_pipeline_input_count(pipe);
  vkp_value_t *values = vkp__calloc((size_t)n + 1, sizeof(*values));
  if (!values) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int32_t i = 0; i < n; ++i) {
    // The pipeline's inputs and outputs are the plan's, in order.
    const vkp_value_t *v =
        outputs ? vkp_plan_output_value(plan, i) : vkp_plan_input_value(plan, i);
    if (!v) {
      vkp__free(values);
      return vkp_status_make(VKP_STATUS_INTERNAL, "plan '%s': global %s %d is unbound",
                             plan->name, outputs ? "output" : "input", (int)i);
    }
    values[i] = *v;
    values[i].name = (char *)(outputs ? vkp_pipeline_output_name(pipe, i)
                                      : vkp_pipeline_input_name(pipe, i));
  }
  *out_values = values;
  return NULL;
}

// One frame of `plan` through the pipeline executor (stages compiled here,
// or made by the artifact `art` when given: its shipped code when trusted,
// else compiled again from its subgraphs): the inputs read from --input and
// the outputs written to --output-dir, both named as the pipeline names them.
static vkp_status_t vkp__run_plan(const vkp__run_args_t *args, const vkp_plan_t *plan,
                                  const vkp_registry_t *registry,
                                  const vkp_artifact_t *art) {
  vkp_compile_options_t *copts = vkp__calloc((size_t)plan->n_stages + 1, sizeof(*copts));
  if (!copts) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "out of memory");
  // The precision is --precision, or else the plan's, per stage.
  for (int32_t s = 0; s < plan->n_stages; ++s) {
    copts[s] = args->options;
    if (copts[s].precision == VKP_PRECISION_FP32)
      copts[s].precision = plan->stages[s].precision;
  }
  vkp_pipeline_options_t opt = {.stage_compile_options = copts};
  vkp_pipeline_t *pipe = NULL;
  vkp_value_t *in_values = NULL, *out_values = NULL;
  const vkp_value_t **ins = NULL, **outs = NULL;
  vkp_tensor_t *inputs = NULL, *outputs = NULL;
  vkp_status_t st = art ? vkp_artifact_pipeline_create(art, registry, &opt, &pipe)
                        : vkp_pipeline_create(plan, registry, &opt, &pipe);
  int32_t n_in = st ? 0 : vkp_pipeline_input_count(pipe);
  int32_t n_out = st ? 0 : vkp_pipeline_output_count(pipe);
  if (!st) st = vkp__pipeline_values(pipe, plan, false, &in_values);
  if (!st) st = vkp__pipeline_values(pipe, plan, true, &out_values);
  if (!st) {
    ins = vkp__calloc((size_t)n_in + 1, sizeof(*ins));
    outs = vkp__calloc((size_t)n_out + 1, sizeof(*outs));
    inputs = vkp__calloc((size_t)n_in + 1, sizeof(*inputs));
    outputs = vkp__calloc((size_t)n_out + 1, sizeof(*outputs));
    if (!ins || !outs || !inputs || !outputs)
      st = vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  for (int32_t i = 0; !st && i < n_in; ++i) ins[i] = &in_values[i];
  for (int32_t i = 0; !st && i < n_out; ++i) outs[i] = &out_values[i];
  if (!st) st = vkp_tool_read_values(n_in, ins, args->n_inputs, args->inputs, inputs);
  if (!st) st = vkp_pipeline_infer(pipe, inputs, outputs);
  if (!st) st = vkp_tool_write_values(n_out, outs, outputs, args->output_dir, stdout);
  for (int32_t i = 0; inputs && i < n_in; ++i) vkp_tensor_deinit(&inputs[i]);
  for (int32_t i = 0; outputs && i < n_out; ++i) vkp_tensor_deinit(&outputs[i]);
  vkp__free(inputs);
  vkp__free(outputs);
  vkp__free(ins);
  vkp__free(outs);
  vkp__free(in_values);
  vkp__free(out_values);
  vkp_pipeline_destroy(pipe);
  vkp__free(copts);
  return st;
}

// --target auto: partition `graph` across every available target by cost
// into *out_plan (owned by the caller), using *out_registry (created here).
static vkp_status_t vkp__plan_auto(const vkp__run_args_t *args, const vkp_graph_t *graph,
                                   vkp_registry_t **out_registry, vkp_plan_t **out_plan) {
  vkp_profile_t *profile = NULL;
  vkp_partition_t *part = NULL;
  vkp_status_t st = vkp_registry_create_default(out_registry);
  if (!st) st = vkp_tool_profile("run", args->profile, 0, *out_registry, &profile);
  if (!st) {
    vkp_partition_options_t popt = {
        .policy = "auto", .stages = args->stages, .ranks = args->ranks};
    st = vkp_partition_create(graph, *out_registry, profile, &popt, &part);
  }
  if (!st) st = vkp_partition_to_plan(part, graph->name, out_plan);
  // --precision applies to every stage: a target that cannot keep it
  // refuses the stage with its reason (there is no silent float32 stage).
  for (int32_t s = 0; !st && s < (*out_plan)->n_stages; ++s)
    (*out_plan)->stages[s].precision = args->options.precision;
  if (!st) {
    const vkp_plan_t *plan = *out_plan;
    fprintf(stdout, "pipeline:");
    for (int32_t s = 0; s < plan->n_stages; ++s) {
      char where[32] = "";
      if (args->ranks > 1) snprintf(where, sizeof where, ", rank %d", (int)plan->stages[s].rank);
      fprintf(stdout, " %s%s(%s, %d nodes%s)", s ? "-> " : "", plan->stages[s].name,
              plan->stages[s].target, (int)plan->stages[s].graph->n_nodes, where);
    }
    fprintf(stdout, "\n");
  }
  vkp_partition_destroy(part);
  vkp_profile_destroy(profile);
  return st;
}

// MPI for --ranks N: this vkpipe has it, mpirun started this process, and
// with N ranks.
static vkp_status_t vkp__ranks_start(int32_t ranks, int32_t *out_rank) {
  if (!vkp_mpi_available())
    return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                           "--ranks needs MPI, and this vkpipe was built without it "
                           "(docs/scale-out.md)");
  if (!vkp_mpi_launched())
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "--ranks %d runs under mpirun: 'mpirun -np %d vkpipe run ...'",
                           (int)ranks, (int)ranks);
  int32_t size = 0;
  vkp_status_t st = vkp_mpi_init(NULL, NULL, out_rank, &size);
  if (st) return st;
  if (size != ranks)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "--ranks %d, but mpirun started %d ranks; they must agree",
                           (int)ranks, (int)size);
  return NULL;
}

// A plan run as a pipeline: a .vkp artifact (its plan and its stages, no
// model; the stages' shipped code runs only when a --trust key signed the
// file, or --trust-unsigned, otherwise they are compiled again from the
// artifact's graphs), a --plan file whose stages are compiled here, or, with
// `graph` (--target auto), the plan the partitioner makes of it.
static int vkp__run_pipeline(const vkp__run_args_t *args, const vkp_graph_t *graph) {
  vkp_registry_t *registry = NULL;
  vkp_artifact_t *art = NULL;
  const vkp_plan_t *plan = NULL;
  vkp_plan_t *own_plan = NULL;
  vkp_status_t st = NULL;
  bool ranked = false, mpi = false;
  int32_t rank = 0;
  if (graph && args->ranks > 1) {
    // --target auto --ranks N under mpirun: rank 0 partitions, the others
    // serve the plan it shares (their own profiles could disagree).
    st = vkp__ranks_start(args->ranks, &rank);
    mpi = !st;
    if (!st && rank == 0) {
      st = vkp__plan_auto(args, graph, &registry, &own_plan);
      if (!st) st = vkp_plan_set_source(own_plan, args->model);
      // On failure rank 0 ends the job (below); the others wait here.
      vkp_plan_t *none = NULL;  // rank 0 keeps its own
      if (!st) st = vkp_mpi_share_plan(own_plan, graph, &none);
    } else if (!st) {
      st = vkp_registry_create_default(&registry);
      if (!st) st = vkp_mpi_share_plan(NULL, graph, &own_plan);
      if (!st) st = vkp_mpi_serve(own_plan, registry, NULL);
      goto done;
    }
  } else if (graph) {
    st = vkp__plan_auto(args, graph, &registry, &own_plan);
  } else if (args->plan) {
    st = vkp_plan_load(args->plan, NULL, &own_plan);
    if (!st) st = vkp_registry_create_default(&registry);
  } else {
    st = vkp_tool_artifact_load(args->model, &args->trust, &art);
    if (!st) {
      // Only the targets the plan's stages use are brought up.
      const vkp_plan_t *p = vkp_artifact_plan(art);
      const char **names = vkp__calloc((size_t)p->n_stages + 1, sizeof(*names));
      if (!names) st = vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "out of memory");
      for (int32_t s = 0; names && s < p->n_stages; ++s) names[s] = p->stages[s].target;
      if (names) st = vkp__registry_for(names, p->n_stages, &registry);
      vkp__free(names);
    }
  }
  if (!st) plan = art ? vkp_artifact_plan(art) : own_plan;
  // A plan with ranks (docs/scale-out.md): rank 0 runs it here, every other
  // rank serves its stages (as 'vkpipe serve' would).
  for (int32_t s = 0; !st && s < plan->n_stages; ++s) ranked |= plan->stages[s].rank != 0;
  if (!st && !graph && (ranked || vkp_mpi_launched()) && vkp_mpi_available()) {
    st = vkp_mpi_init(NULL, NULL, &rank, NULL);
    mpi = true;
    if (!st && rank != 0) {
      st = vkp_mpi_serve(plan, registry, art ? vkp_artifact_blobs(art) : NULL);
      goto done;
    }
  }
  if (!st) st = vkp__run_plan(args, plan, registry, art);
  if (st && graph)
    st = vkp_status_annotate(st, "running '%s' on target '%s'", args->model, args->target);
done:
  vkp_registry_destroy(registry);
  vkp_artifact_destroy(art);
  vkp_plan_destroy(own_plan);
  if (st && mpi) {
    // The other ranks would wait for a pipeline that never comes.
    int code = vkp_tool_fail("run", st);
    vkp_mpi_abort(code);
    vkp_mpi_finalize();
    return code;
  }
  if (mpi) vkp_mpi_finalize();
  return st ? vkp_tool_fail("run", st) : 0;
}

static void vkp__run_help(void) {
  printf("usage: vkpipe run MODEL --input NAME=FILE.npy [--input ...] "
         "--output-dir DIR [options]\n"
         "\n"
         "Runs MODEL (JSON graph, ONNX, or a .vkp artifact from 'vkpipe build',\n"
         "which runs its own plan) once on the given inputs and writes\n"
         "every graph output to DIR/<output name>.npy (characters other than\n"
         "A-Z a-z 0-9 . _ - in the name become '_').\n"
         "\n"
         "options:\n"
         "  --input NAME=FILE.npy  a graph input (every input exactly once; a\n"
         "                         bare FILE.npy is fine for one-input graphs);\n"
         "                         a named input's file shape binds its symbolic\n"
         "                         dims unless --shape gives one\n"
         "  --output-dir DIR       where outputs go (created when missing)\n"
         "  --target NAME          the target that runs the whole graph\n"
         "                         (default: ref; see 'vkpipe devices'), or\n"
         "                         'auto': partition across every available\n"
         "                         target by cost and run it as a pipeline\n"
         "  --stages K             pipeline stages for --target auto (default auto)\n"
         "  --profile FILE         device profile for --target auto\n"
         "  --ranks N              with --target auto under 'mpirun -np N': spread\n"
         "                         the stages over N MPI ranks (rank 0 partitions\n"
         "                         and runs the frames, the others serve stages)\n"
         "  --plan FILE            run this plan (docs/pipeline-config.md; its\n"
         "                         \"source\" or graph files) instead of MODEL; a\n"
         "                         plan with ranks runs under mpirun, rank 0\n"
         "                         here, the others in 'vkpipe serve'\n"
         "  --precision P          fp32 (default) or fp16: float16 storage of\n"
         "                         matrix and convolution weights, float32\n"
         "                         arithmetic (vulkan with storageBuffer16BitAccess;\n"
         "                         other targets refuse it)\n"
         "  --threads N            threads inside a stage, where the target\n"
         "                         supports it (default 1)\n"
         "  --march ARCH           -march for the cpu target's C codegen\n"
         VKP_TOOL_LOAD_HELP
         "                         (default native)\n"
         "  --dump-c DIR           write the generated C sources to DIR\n"
         "  --dump-spirv DIR       write the generated GLSL/SPIR-V to DIR\n"
         VKP_TOOL_TRUST_HELP
         "  -h, --help             this text\n"
         "\n"
         "Inputs are .npy files (float32, int32, int64, float16; C order,\n"
         "little-endian) whose dtype and shape must match the graph's.\n"
         "Exit status: 0 success, 1 failure (the reason on stderr), 2 bad usage.\n");
}

// Parses argv into `args`; returns -1 to go on, or an exit code.
static int vkp__run_parse(int argc, char **argv, vkp__run_args_t *args) {
  args->target = "ref";
  args->inputs = vkp__calloc((size_t)argc, sizeof(*args->inputs));
  if (!args->inputs) {
    fprintf(stderr, "vkpipe run: out of memory\n");
    return VKP_TOOL_EXIT_FAILURE;
  }
  const char *dump_c = NULL, *dump_spirv = NULL;
  for (int i = 1; i < argc; ++i) {
    bool load_option;
    int load_rc = vkp_tool_load_option("run", argc, argv, &i, &args->load, &load_option);
    if (load_rc) return load_rc;
    if (load_option) continue;
    const char *arg = argv[i], *value = NULL;
    if (vkp_tool_is_help(arg)) {
      vkp__run_help();
      return 0;
    }
    static const char *const with_value[] = {
        "--input", "--output-dir", "--target", "--threads",
        "--march", "--dump-c",     "--dump-spirv", "--stages", "--profile",
        "--plan", "--precision", "--ranks", NULL};
    bool trust_option;
    int rc = vkp_tool_trust_option("run", argc, argv, &i, &args->trust, &trust_option);
    if (rc) return rc;
    if (trust_option) continue;
    int which = -1;
    for (int k = 0; with_value[k] && which < 0; ++k) {
      vkp_tool_option_result_t r = vkp_tool_option(argc, argv, &i, with_value[k], &value);
      if (r == VKP_TOOL_OPTION_MISSING_VALUE)
        return vkp_tool_usage_error("run", "%s needs a value", with_value[k]);
      if (r == VKP_TOOL_OPTION_MATCHED) which = k;
    }
    switch (which) {
      case 0:
        vkp_tool_input_arg_parse(value, &args->inputs[args->n_inputs]);
        if (args->inputs[args->n_inputs].name && !args->inputs[args->n_inputs].name_len)
          return vkp_tool_usage_error("run", "--input '%s' has an empty NAME", value);
        if (!args->inputs[args->n_inputs].path[0])
          return vkp_tool_usage_error("run", "--input '%s' has no FILE", value);
        // NUL-terminate NAME where the '=' was (argv is ours to modify), so
        // it can bind the input's shape (vkp_tool_bind_input_files).
        if (args->inputs[args->n_inputs].name)
          ((char *)args->inputs[args->n_inputs].name)[args->inputs[args->n_inputs].name_len] = '\0';
        args->n_inputs++;
        break;
      case 1:
        args->output_dir = value;
        break;
      case 2:
        args->target = value;
        break;
      case 3: {
        int64_t n = 0;
        if (!vkp_tool_parse_int(value, 1, 1024, &n))
          return vkp_tool_usage_error("run", "--threads '%s' is not a number in 1..1024",
                                      value);
        args->options.threads = (int32_t)n;
        break;
      }
      case 4:
        args->options.march = value;
        break;
      case 5:
        dump_c = value;
        break;
      case 6:
        dump_spirv = value;
        break;
      case 7: {
        int64_t k = 0;
        if (strcmp(value, "auto") != 0 &&
            !vkp_tool_parse_int(value, 1, VKP_PARTITION_MAX_STAGES, &k))
          return vkp_tool_usage_error("run", "--stages '%s' is not 1..%d or auto", value,
                                      VKP_PARTITION_MAX_STAGES);
        args->stages = (int32_t)k;
        break;
      }
      case 8:
        args->profile = value;
        break;
      case 9:
        args->plan = value;
        break;
      case 10:
        if (!vkp_precision_parse(value, &args->options.precision))
          return vkp_tool_usage_error("run", "--precision '%s' is not fp32 or fp16", value);
        break;
      case 11: {
        int64_t n = 0;
        if (!vkp_tool_parse_int(value, 1, 1024, &n))
          return vkp_tool_usage_error("run", "--ranks '%s' is not a count 1..1024", value);
        args->ranks = (int32_t)n;
        break;
      }
      default:
        if (arg[0] == '-' && arg[1])
          return vkp_tool_usage_error("run", "unknown option '%s'", arg);
        if (args->model)
          return vkp_tool_usage_error("run", "unexpected argument '%s'", arg);
        args->model = arg;
    }
  }
  // Both dump options set the one dump directory of vkp_compile_options_t;
  // each target writes its own kind of source there.
  if (dump_c && dump_spirv && strcmp(dump_c, dump_spirv) != 0)
    return vkp_tool_usage_error("run", "--dump-c and --dump-spirv must name the "
                                       "same directory when both are given");
  args->options.dump_dir = dump_c ? dump_c : dump_spirv;
  if (args->model && args->plan)
    return vkp_tool_usage_error("run", "give MODEL or --plan, not both");
  if (!args->model && !args->plan) return vkp_tool_usage_error("run", "missing MODEL");
  if (!args->output_dir) return vkp_tool_usage_error("run", "missing --output-dir DIR");
  if (!args->target[0]) return vkp_tool_usage_error("run", "--target is empty");
  if (args->ranks && strcmp(args->target, "auto") != 0)
    return vkp_tool_usage_error("run", "--ranks goes with --target auto (a --plan or "
                                       "artifact carries its own ranks)");
  int rc = vkp_tool_trust_check("run", &args->trust, args->model);
  if (rc) return rc;
  return -1;
}

int vkp_cmd_run(int argc, char **argv) {
  vkp__run_args_t args;
  memset(&args, 0, sizeof args);
  int code = vkp__run_parse(argc, argv, &args);
  if (code >= 0) {
    vkp__free(args.inputs);
    return code;
  }
  if (args.plan || vkp_artifact_is_artifact(args.model)) {
    code = vkp__run_pipeline(&args, NULL);
    vkp__free(args.inputs);
    return code;
  }
  vkp_graph_t *graph = NULL;
  vkp_tensor_t *inputs = NULL, *outputs = NULL;
  vkp_status_t st = vkp_tool_load_graph(args.model, &args.load, &graph);
  // A model with symbolic input dims (graph/bind.c names them "symbolic" or
  // "no size and no name") runs on the shapes of the --input files handed
  // to it: loaded again with those as --shape bindings. Static models keep
  // their own checks (and messages) of the files.
  const char *why = st ? vkp_status_message(st) : "";
  if (vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT) &&
      (strstr(why, "is symbolic") || strstr(why, "has no size and no name"))) {
    int32_t from_files = 0;
    vkp_status_t again =
        vkp_tool_bind_input_files(args.n_inputs, args.inputs, &args.load, &from_files);
    if (!again && from_files) {
      again = vkp_tool_load_graph(args.model, &args.load, &graph);
      if (again)
        again = vkp_status_annotate(again, "using the --input files' shapes as "
                                           "--shape bindings");
    }
    if (!again && from_files) {
      vkp_status_free(st);
      st = NULL;
    } else if (again) {
      st = vkp_status_join(st, again);
    }
  }
  if (!st) {
    if (args.options.dump_dir) st = vkp_tool_make_dir(args.options.dump_dir);
  }
  // --target auto: partition across every available target by cost and run
  // the stages as a pipeline.
  if (!st && strcmp(args.target, "auto") == 0) {
    code = vkp__run_pipeline(&args, graph);
    vkp_graph_destroy(graph);
    vkp__free(args.inputs);
    return code;
  }
  if (!st) {
    inputs = vkp__calloc((size_t)graph->n_inputs + 1, sizeof(*inputs));
    outputs = vkp__calloc((size_t)graph->n_outputs + 1, sizeof(*outputs));
    if (!inputs || !outputs)
      st = vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  if (!st) st = vkp_tool_read_inputs(graph, args.n_inputs, args.inputs, inputs);
  if (!st) {
    st = vkp__run_on_target(&args, graph, inputs, outputs);
    if (st) st = vkp_status_annotate(st, "running '%s' on target '%s'", args.model,
                                     args.target);
  }
  if (!st) st = vkp_tool_write_outputs(graph, outputs, args.output_dir, stdout);
  if (graph) {
    for (int32_t i = 0; inputs && i < graph->n_inputs; ++i) vkp_tensor_deinit(&inputs[i]);
    for (int32_t i = 0; outputs && i < graph->n_outputs; ++i)
      vkp_tensor_deinit(&outputs[i]);
  }
  vkp__free(inputs);
  vkp__free(outputs);
  vkp_graph_destroy(graph);
  vkp__free(args.inputs);
  return st ? vkp_tool_fail("run", st) : 0;
}
