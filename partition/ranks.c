// SPDX-License-Identifier: Apache-2.0
// Ranks: spreading the stages of a partition over MPI ranks
// (docs/scale-out.md). Each rank is a host of its own: its devices are
// separate resources (every rank has the profile's devices, each with its
// concurrency), and a binding between stages on two ranks crosses the rank
// link (vkp_profile_rank_link_seconds). The stages keep the partition's
// topological order; rank r gets the r-th contiguous block of them (rank 0
// the first, next to the global inputs), every rank at least one. The
// blocks minimise the bottleneck: the largest of every stage's seconds plus
// the link time of what it receives from other ranks, and every rank's
// device loads (stage seconds x threads over the device's concurrency).
// Every split is tried when there are at most VKP__MAX_SPLITS of them;
// beyond that the stages are cut into blocks of about equal seconds.
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "partition/partition_internal.h"

#define VKP__MAX_SPLITS 200000

typedef struct vkp__rank_model_t {
  const vkp_partition_t *part;
  int32_t k;            // stages
  int32_t n_ranks;
  double *edge_bytes;   // k x k: bytes stage p sends to stage s
  double *in_global;    // k: global input bytes a stage reads
  double *out_global;   // k: global output bytes a stage writes
  int32_t *device;      // k: device index of the stage (names below)
  int32_t *concurrency; // per device index
  int32_t n_devices;
  const char **device_names;  // borrowed from the profile
} vkp__rank_model_t;

static double vkp__value_bytes(const vkp_value_t *v) {
  double b = (double)vkp_dtype_size(v->dtype);
  for (int32_t d = 0; d < v->rank; ++d) b *= (double)v->shape[d];
  return b;
}

static vkp_status_t vkp__rank_model_init(const vkp_partition_t *part,
                                         int32_t n_ranks, vkp__rank_model_t *m) {
  memset(m, 0, sizeof(*m));
  const vkp_graph_t *g = part->graph;
  int32_t k = part->n_stages;
  m->part = part;
  m->k = k;
  m->n_ranks = n_ranks;
  m->edge_bytes = vkp__calloc((size_t)k * (size_t)k, sizeof(double));
  m->in_global = vkp__calloc((size_t)k, sizeof(double));
  m->out_global = vkp__calloc((size_t)k, sizeof(double));
  m->device = vkp__calloc((size_t)k, sizeof(int32_t));
  m->concurrency = vkp__calloc((size_t)k, sizeof(int32_t));
  m->device_names = vkp__calloc((size_t)k, sizeof(char *));
  // One (value, consumer stage) pair counts once.
  int32_t *seen = vkp__calloc((size_t)g->n_values + 1, sizeof(int32_t));
  if (!m->edge_bytes || !m->in_global || !m->out_global || !m->device ||
      !m->concurrency || !m->device_names || !seen) {
    vkp__free(seen);
    return VKP_OOM("rank model");
  }
  for (int32_t s = 0; s < k; ++s) {
    const vkp_partition_stage_t *ps = &part->stages[s];
    const char *dev = vkp_profile_device_of(
        part->profile, vkp_partition_target_name(part, ps->target));
    int32_t d = 0;
    while (d < m->n_devices && strcmp(m->device_names[d], dev)) ++d;
    if (d == m->n_devices) {
      m->device_names[d] = dev;
      m->concurrency[d] = vkp_profile_concurrency(part->profile, dev);
      m->n_devices++;
    }
    m->device[s] = d;
    for (int32_t j = 0; j < ps->n_nodes; ++j) {
      const vkp_node_t *n = &g->nodes[ps->nodes[j]];
      for (int32_t q = 0; q < n->n_inputs; ++q) {
        int32_t v = n->inputs[q];
        if (v < 0 || g->values[v].kind == VKP_VALUE_CONSTANT) continue;
        if (seen[v] == s + 1) continue;
        int32_t p = g->values[v].producer;
        int32_t from = p >= 0 ? part->node_stage[p] : -1;
        if (from == s) continue;
        seen[v] = s + 1;
        double bytes = vkp__value_bytes(&g->values[v]);
        if (from < 0) m->in_global[s] += bytes;
        else m->edge_bytes[(size_t)from * (size_t)k + (size_t)s] += bytes;
      }
      for (int32_t q = 0; q < n->n_outputs; ++q)
        if (g->values[n->outputs[q]].is_output)
          m->out_global[s] += vkp__value_bytes(&g->values[n->outputs[q]]);
    }
  }
  vkp__free(seen);
  return NULL;
}

static void vkp__rank_model_deinit(vkp__rank_model_t *m) {
  vkp__free(m->edge_bytes);
  vkp__free(m->in_global);
  vkp__free(m->out_global);
  vkp__free(m->device);
  vkp__free(m->concurrency);
  vkp__free(m->device_names);
}

// Seconds stage s spends on the rank link per frame under `rank`.
static double vkp__stage_link_seconds(const vkp__rank_model_t *m,
                                      const int32_t *rank, int32_t s) {
  const vkp_profile_t *prof = m->part->profile;
  double t = 0;
  if (rank[s] != 0) {
    t += vkp_profile_rank_link_seconds(prof, m->in_global[s], NULL);
    t += vkp_profile_rank_link_seconds(prof, m->out_global[s], NULL);
  }
  for (int32_t p = 0; p < m->k; ++p) {
    double b = m->edge_bytes[(size_t)p * (size_t)m->k + (size_t)s];
    if (b > 0 && rank[p] != rank[s])
      t += vkp_profile_rank_link_seconds(prof, b, NULL);
  }
  return t;
}

// Bottleneck seconds per frame of the assignment `rank`.
static double vkp__rank_bottleneck(const vkp__rank_model_t *m, const int32_t *rank,
                                   double *load /* n_ranks x n_devices */) {
  double worst = 0;
  memset(load, 0, (size_t)m->n_ranks * (size_t)m->n_devices * sizeof(double));
  for (int32_t s = 0; s < m->k; ++s) {
    const vkp_partition_stage_t *ps = &m->part->stages[s];
    double t = ps->seconds + vkp__stage_link_seconds(m, rank, s);
    if (t > worst) worst = t;
    int32_t threads = ps->threads > 0 ? ps->threads : 1;
    load[(size_t)rank[s] * (size_t)m->n_devices + (size_t)m->device[s]] +=
        ps->seconds * threads;
  }
  for (int32_t r = 0; r < m->n_ranks; ++r)
    for (int32_t d = 0; d < m->n_devices; ++d) {
      double l = load[(size_t)r * (size_t)m->n_devices + (size_t)d] /
                 (m->concurrency[d] > 0 ? m->concurrency[d] : 1);
      if (l > worst) worst = l;
    }
  return worst;
}

// Number of ways to cut k stages into n non-empty blocks, capped.
static double vkp__splits(int32_t k, int32_t n) {
  double c = 1;
  for (int32_t i = 1; i < n; ++i) {
    c = c * (double)(k - i) / (double)i;
    if (c > 1e12) return c;
  }
  return c;
}

// Next composition: block starts first[1..n-1] strictly increasing in 1..k-1.
static bool vkp__next_split(int32_t *first, int32_t n, int32_t k) {
  for (int32_t i = n - 1; i >= 1; --i) {
    if (first[i] < k - (n - i)) {
      first[i]++;
      for (int32_t j = i + 1; j < n; ++j) first[j] = first[j - 1] + 1;
      return true;
    }
  }
  return false;
}

static void vkp__split_ranks(const int32_t *first, int32_t n, int32_t k,
                             int32_t *rank) {
  for (int32_t r = 0; r < n; ++r) {
    int32_t end = r + 1 < n ? first[r + 1] : k;
    for (int32_t s = first[r]; s < end; ++s) rank[s] = r;
  }
}

vkp_status_t vkp__place_ranks(vkp_partition_t *part, int32_t n_ranks) {
  int32_t k = part->n_stages;
  if (n_ranks > k)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "%d ranks need at least %d stages; the partition "
                           "has %d (ask for --stages %d or more)",
                           (int)n_ranks, (int)n_ranks, (int)k, (int)n_ranks);
  vkp__rank_model_t m;
  vkp_status_t st = vkp__rank_model_init(part, n_ranks, &m);
  int32_t *first = vkp__calloc((size_t)n_ranks + 1, sizeof(int32_t));
  int32_t *rank = vkp__calloc((size_t)k + 1, sizeof(int32_t));
  int32_t *best = vkp__calloc((size_t)k + 1, sizeof(int32_t));
  double *load = vkp__calloc((size_t)n_ranks * (size_t)(m.n_devices + 1) + 1,
                             sizeof(double));
  if (!st && (!first || !rank || !best || !load)) st = VKP_OOM("rank placement");
  double best_s = INFINITY;
  if (!st && vkp__splits(k, n_ranks) <= VKP__MAX_SPLITS) {
    for (int32_t r = 0; r < n_ranks; ++r) first[r] = r;
    do {
      vkp__split_ranks(first, n_ranks, k, rank);
      double b = vkp__rank_bottleneck(&m, rank, load);
      if (b < best_s * (1.0 - 1e-12)) {
        best_s = b;
        memcpy(best, rank, (size_t)k * sizeof(int32_t));
      }
    } while (vkp__next_split(first, n_ranks, k));
  } else if (!st) {
    // Too many splits to try: blocks of about equal stage seconds.
    double total = 0, acc = 0;
    for (int32_t s = 0; s < k; ++s) total += part->stages[s].seconds;
    for (int32_t s = 0, r = 0; s < k; ++s) {
      // Leave at least one stage for every later rank.
      if (r + 1 < n_ranks && s > first[r] &&
          (acc >= total * (r + 1) / n_ranks || k - s <= n_ranks - 1 - r))
        first[++r] = s;
      acc += part->stages[s].seconds;
    }
    vkp__split_ranks(first, n_ranks, k, best);
    best_s = vkp__rank_bottleneck(&m, best, load);
  }
  if (!st) {
    bool calibrated = false;
    double small = vkp_profile_rank_link_seconds(part->profile, 1, &calibrated);
    double big = vkp_profile_rank_link_seconds(part->profile, 1e9, NULL);
    part->n_ranks = n_ranks;
    for (int32_t s = 0; s < k; ++s) {
      part->stages[s].rank = best[s];
      part->stages[s].link_s = vkp__stage_link_seconds(&m, best, s);
    }
    st = vkp__note(part, "ranks: %d, each with its own devices; rank link %.1f "
                         "us + %.2f GB/s (%s); estimated %.3f ms/frame over "
                         "ranks (%.3f before the link and the per-rank loads)",
                   (int)n_ranks, small * 1e6, 1.0 / (big - small),
                   calibrated ? "profile" : "default, not calibrated",
                   best_s * 1e3, part->bottleneck_s * 1e3);
    part->bottleneck_s = best_s;
  }
  vkp__free(first);
  vkp__free(rank);
  vkp__free(best);
  vkp__free(load);
  vkp__rank_model_deinit(&m);
  return st;
}
