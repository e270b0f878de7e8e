// SPDX-License-Identifier: Apache-2.0
//
// The reference target "ref": a plain interpreter for every op, the yardstick
// every other target is tested against.
//
//   vkp_registry_t *reg;
//   vkp_status_t st = vkp_registry_create(&reg);
//   st = vkp_target_ref_register(reg);
//   st = vkp_target_run_graph(vkp_registry_find(reg, "ref"), graph, NULL,
//                             inputs, outputs);
//
// compile() makes a small blob (magic, version, a fingerprint of the
// subgraph) that load() checks against the graph it is given. load() plans
// every intermediate tensor into one arena allocated there, reusing the
// memory of tensors that are dead (liveness over the topological order);
// run() allocates nothing. dump() writes the run order and the memory plan
// as ref_plan.txt. The loaded stage borrows the graph and the blob:
// both must outlive it.
//
// Thread-safety: the target keeps no state; supports/compile/load may be
// called from any number of threads. A loaded stage is driven by one thread
// at a time (run writes into its arena); distinct stages are independent.
#ifndef VKPIPE_RUNTIME_REF_REF_H_
#define VKPIPE_RUNTIME_REF_REF_H_

#include "vkpipe/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// Registers "ref" in `registry` (a built-in: vkp_registry_create_default
// calls it). Fails when a target named "ref" is already registered.
vkp_status_t vkp_target_ref_register(vkp_registry_t *registry) VKP_MUST_USE;

// The blob layout, for tools that inspect it: little-endian fields.
#define VKP_REF_BLOB_MAGIC "VKPREF\0\0"
#define VKP_REF_BLOB_VERSION 1u

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_RUNTIME_REF_REF_H_
