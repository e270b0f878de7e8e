// SPDX-License-Identifier: Apache-2.0
// Fixtures of the partitioner tests: fake targets, a fabricated two-device
// profile and graph generators (ResNet-like, MobileNet-like, random DAGs).
#ifndef VKPIPE_TESTS_PARTITION_FIXTURES_H_
#define VKPIPE_TESTS_PARTITION_FIXTURES_H_

#include <stdint.h>

#include "support/test_support.h"
#include "vkpipe/cost.h"
#include "vkpipe/graph.h"
#include "vkpipe/target.h"

// A set of ops: FX_OP(VKP_OP_EXP), or FX_NONE (the op table has more ops
// than a 64-bit mask holds).
typedef struct fx_ops_t {
  bool op[VKP_OP_COUNT];
} fx_ops_t;
#define FX_OP(e) ((fx_ops_t){.op[(e)] = true})
#define FX_NONE ((fx_ops_t){{false}})

// What a fake target refuses.
typedef struct fx_fake_t {
  fx_ops_t refuse_ops;
} fx_fake_t;

// Registers fake target `name` (one of "fa", "fb", "fc", "cpu", "gpu"),
// refusing the ops in `refuse_ops`. The fakes compile to an empty blob and
// run as a no-op.
void fx_add_fake(vkp_registry_t *reg, const char *name, fx_ops_t refuse_ops);

// A registry with "fa" and "fb" accepting everything.
vkp_registry_t *fx_registry_ab(void);

// Two devices: "fa" on device "d0" (fast compute, slow launch), "fb" on "d1"
// (slow compute, cheap launch); link d0<->d1 latency 20 us at 10 GB/s;
// host_device "d0". `concurrency` applies to both devices.
vkp_profile_t *fx_profile_two_devices(int32_t concurrency);

// Graph generators; results are validated. Shapes are small.
vkp_graph_t *fx_resnet_like(int32_t blocks, int32_t channels, int32_t hw);
vkp_graph_t *fx_mobilenet_like(int32_t blocks, int32_t channels, int32_t hw);
// A random DAG of `n` nodes over [1, 16] float tensors: each node is a relu
// of one earlier value or an add of two; every sink is a graph output.
vkp_graph_t *fx_random_dag(vkp_test_rng_t *rng, int32_t n);
// A chain: x -> relu -> relu ... (n nodes), names "r0".."r<n-1>".
vkp_graph_t *fx_chain(int32_t n, int64_t width);

#endif  // VKPIPE_TESTS_PARTITION_FIXTURES_H_
