// SPDX-License-Identifier: Apache-2.0
// `vkpipe serve PLAN|ARTIFACT.vkp`: the worker side of a pipeline whose plan
// places stages on several MPI ranks (docs/scale-out.md). Started by mpirun
// next to rank 0's `vkpipe run` or `vkpipe-bench`, it loads the stages the
// plan places on its rank and runs frames for rank 0 until rank 0 is done.
#include <stdio.h>
#include <string.h>

#include "tools/tool.h"
#include "vkpipe/artifact.h"
#include "vkpipe/mpi.h"
#include "vkpipe/pipeline.h"
#include "vkpipe/plan.h"
#include "vkpipe/target.h"

int vkp_cmd_serve(int argc, char **argv);
extern const char vkp_cmd_serve_summary[];
const char vkp_cmd_serve_summary[] =
    "serve the stages a plan places on this MPI rank (under mpirun)";

static void vkp__serve_help(void) {
  printf("usage: mpirun ... vkpipe serve PLAN.json|ARTIFACT.vkp [--trust KEY.pub]\n"
         "\n"
         "Runs on MPI ranks other than 0: compiles (plan) or loads (.vkp) the\n"
         "stages whose \"rank\" is this process's rank and runs frames for\n"
         "rank 0 until rank 0 destroys its pipeline. Rank 0 runs 'vkpipe run'\n"
         "(or vkpipe-bench) on the same plan, for example:\n"
         "  mpirun -np 1 vkpipe run net.vkp --input x.npy --output-dir out \\\n"
         "       : -np 2 vkpipe serve net.vkp\n"
         "See docs/scale-out.md.\n"
         "\n"
         "options:\n"
         VKP_TOOL_TRUST_HELP
         "\n"
         "Exit status: 0 success, 1 failure (the reason on stderr), 2 bad usage.\n");
}

int vkp_cmd_serve(int argc, char **argv) {
  const char *path = NULL;
  vkp_tool_trust_args_t trust = {0};
  for (int i = 1; i < argc; ++i) {
    if (vkp_tool_is_help(argv[i])) {
      vkp__serve_help();
      return 0;
    }
    bool trust_option;
    int rc = vkp_tool_trust_option("serve", argc, argv, &i, &trust, &trust_option);
    if (rc) return rc;
    if (trust_option) continue;
    if (argv[i][0] == '-' && argv[i][1])
      return vkp_tool_usage_error("serve", "unknown option '%s'", argv[i]);
    if (path) return vkp_tool_usage_error("serve", "unexpected argument '%s'", argv[i]);
    path = argv[i];
  }
  if (!path) return vkp_tool_usage_error("serve", "missing PLAN or ARTIFACT");
  int rc = vkp_tool_trust_check("serve", &trust, path);
  if (rc) return rc;
  if (!vkp_mpi_available())
    return vkp_tool_fail("serve", vkp_status_make(VKP_STATUS_UNSUPPORTED,
                                                  "this vkpipe was built without "
                                                  "MPI (docs/scale-out.md)"));
  int32_t rank = 0, size = 0;
  vkp_status_t st = vkp_mpi_init(NULL, NULL, &rank, &size);
  vkp_registry_t *registry = NULL;
  vkp_artifact_t *art = NULL;
  vkp_plan_t *plan = NULL;
  if (!st && rank == 0)
    st = vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                         "rank 0 runs the pipeline ('vkpipe run'); 'vkpipe "
                         "serve' is for the other ranks");
  if (!st) st = vkp_registry_create_default(&registry);
  if (!st && vkp_artifact_is_artifact(path)) {
    st = vkp_tool_artifact_load(path, &trust, &art);
    if (!st)
      st = vkp_mpi_serve(vkp_artifact_plan(art), registry, vkp_artifact_blobs(art));
  } else if (!st) {
    st = vkp_plan_load(path, NULL, &plan);
    if (!st) st = vkp_mpi_serve(plan, registry, NULL);
  }
  vkp_plan_destroy(plan);
  vkp_artifact_destroy(art);
  vkp_registry_destroy(registry);
  if (st) {
    // Rank 0 would wait for this rank's stages: end the whole job.
    int code = vkp_tool_fail("serve", vkp_status_annotate(st, "rank %d", (int)rank));
    vkp_mpi_abort(code);
    vkp_mpi_finalize();
    return code;
  }
  vkp_mpi_finalize();
  return 0;
}
