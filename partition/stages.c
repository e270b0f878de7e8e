// SPDX-License-Identifier: Apache-2.0
// Stages: island absorption, cut units and the exact bottleneck cut.
//
// The cut minimises B = max(every stage's seconds, every device's summed
// stage seconds / its concurrency) over cuts of the region order into K
// contiguous stages, each inside one region. For a candidate B the
// feasibility test is exact: inside each region a dynamic programme gives the
// least total seconds for m stages that each fit B; per device a min-plus
// convolution over its regions gives the least load for M stages; a subset
// sum over devices checks that the M's can add up to K within every device's
// budget. Bisection on B finds the optimum to a relative 1e-9; a second
// bisection then raises a floor under every stage, so that among the optimal
// cuts the most even one is kept.
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "partition/partition_internal.h"

// Cut granularity: graphs up to this many nodes are cut between any two
// nodes; larger ones between chunks of about n / VKP__MAX_UNITS nodes.
#define VKP__MAX_UNITS 256
#define VKP__DEFAULT_MAX_AUTO_STAGES 8
// "auto" stage count: the fewest stages within this factor of the best.
#define VKP__AUTO_STAGE_SLACK 1.05

void vkp__segment(vkp__pctx_t *c, int32_t a, int32_t b, vkp__segment_t *out) {
  const vkp_graph_t *g = c->graph;
  const vkp_partition_t *part = c->part;
  memset(out, 0, sizeof(*out));
  if (b <= a) return;
  if (++c->stamp_id == 0) {
    memset(c->stamp, 0, (size_t)g->n_values * sizeof(uint32_t));
    c->stamp_id = 1;
  }
  int32_t t = part->node_target[part->order[a]];
  const char *dev = c->device[t], *host = c->profile->host_device;
  for (int32_t k = a; k < b; ++k) {
    int32_t i = part->order[k];
    const vkp_node_t *n = &g->nodes[i];
    out->compute_s += part->node_seconds[i];
    for (int32_t q = 0; q < n->n_inputs; ++q) {
      int32_t v = n->inputs[q];
      if (v < 0 || g->values[v].kind == VKP_VALUE_CONSTANT) continue;
      int32_t p = g->values[v].producer;
      if (p >= 0 && c->pos[p] >= a) continue;  // produced inside
      if (c->stamp[v] == c->stamp_id) continue;
      c->stamp[v] = c->stamp_id;
      double bytes = c->value_bytes[v];
      out->bytes_in += bytes;
      const char *src = p >= 0 ? c->device[part->node_target[p]] : host;
      out->transfer_s += vkp_profile_transfer_seconds(c->profile, src, dev, bytes);
    }
    for (int32_t q = 0; q < n->n_outputs; ++q) {
      int32_t v = n->outputs[q];
      bool escapes = g->values[v].is_output;
      for (int32_t m = c->cons_start[v]; m < c->cons_start[v + 1] && !escapes; ++m)
        escapes = c->pos[c->cons[m]] >= b;
      if (escapes) out->bytes_out += c->value_bytes[v];
      if (g->values[v].is_output)
        out->transfer_s += vkp_profile_transfer_seconds(c->profile, dev, host,
                                                        c->value_bytes[v]);
    }
  }
}

static double vkp__segment_seconds(vkp__pctx_t *c, int32_t a, int32_t b) {
  vkp__segment_t s;
  vkp__segment(c, a, b, &s);
  return s.compute_s + s.transfer_s;
}

// Orders the nodes into regions and cuts regions into units.
static vkp_status_t vkp__sequence(vkp__pctx_t *c) {
  vkp_partition_t *part = c->part;
  int32_t n = c->graph->n_nodes;
  VKP_RETURN_IF_ERROR(vkp_partition_regions(c->graph, part->node_target,
                                            part->order, part->node_region,
                                            &part->n_regions));
  for (int32_t k = 0; k < n; ++k) c->pos[part->order[k]] = k;
  int32_t chunk = (n + VKP__MAX_UNITS - 1) / VKP__MAX_UNITS;
  if (chunk < 1) chunk = 1;
  int32_t u = 0, run = 0;
  for (int32_t k = 0; k < n; ++k) {
    bool new_region = k == 0 || part->node_region[part->order[k]] !=
                                    part->node_region[part->order[k - 1]];
    if (new_region) run = 0;
    if (new_region || run == chunk) {
      part->unit_start[u] = k;
      c->unit_region[u] = part->node_region[part->order[k]];
      ++u;
      run = 0;
    }
    ++run;
  }
  part->unit_start[u] = n;
  part->n_units = u;
  return NULL;
}

vkp_status_t vkp_partition_evaluate(const vkp_partition_t *part,
                                    int32_t n_stages, const int32_t *starts,
                                    double *stage_seconds,
                                    double *out_bottleneck) {
  vkp__pctx_t *c = part->internal;
  *out_bottleneck = 0.0;
  if (n_stages < 1 || n_stages > part->n_units || starts[0] != 0)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "a cut needs 1..%d stages starting at unit 0",
                           (int)part->n_units);
  double *load = vkp__calloc((size_t)c->n_devices + 1, sizeof(double));
  if (!load) return VKP_OOM("cut evaluation");
  double worst = 0.0;
  int64_t host_threads = 0;
  for (int32_t s = 0; s < n_stages; ++s) {
    int32_t ua = starts[s], ub = s + 1 < n_stages ? starts[s + 1] : part->n_units;
    if (ub <= ua || c->unit_region[ua] != c->unit_region[ub - 1]) {
      vkp__free(load);
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "stage %d (units %d..%d) is empty or spans regions",
                             (int)s, (int)ua, (int)ub);
    }
    double sec = vkp__segment_seconds(c, part->unit_start[ua], part->unit_start[ub]);
    if (stage_seconds) stage_seconds[s] = sec;
    if (sec > worst) worst = sec;
    // A stage occupies as many of its device's cores as it has threads.
    int32_t t = part->node_target[part->order[part->unit_start[ua]]];
    load[c->target_device[t]] += sec * c->target_threads[t];
    if (c->target_device[t] == c->host_dev) host_threads += c->target_threads[t];
  }
  // Every region boundary must be a stage boundary.
  for (int32_t u = 1, s = 1; u < part->n_units; ++u) {
    while (s < n_stages && starts[s] < u) ++s;
    bool cut = s < n_stages && starts[s] == u;
    if (c->unit_region[u] != c->unit_region[u - 1] && !cut) {
      vkp__free(load);
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "no stage boundary between regions at unit %d",
                             (int)u);
    }
  }
  for (int32_t d = 0; d < c->n_devices; ++d) {
    double l = load[d] / c->device_concurrency[d];
    if (d == c->host_dev) l *= vkp__sharing(host_threads, c->device_concurrency[d]);
    if (l > worst) worst = l;
  }
  vkp__free(load);
  *out_bottleneck = worst;
  return NULL;
}

// ---------------------------------------------------------------------------
// The exact cut

typedef struct vkp__cutter_t {
  vkp__pctx_t *c;
  int32_t n_units, n_regions, k;
  int32_t *region_begin, *region_end;  // units
  int32_t *region_device;
  double *region_weight;               // threads of the region's stages
  int32_t mmax;                        // most stages one region can take
  double *f;                           // per region: (mmax+1) x (len+1)
  int32_t *f_from;
  size_t *f_base;                      // offset of each region's table
  double *h;                           // n_regions x (mmax+1)
  double *gconv;                       // per device: (count+1) x (k+1)
  int32_t *gconv_m;
  size_t *g_base;
  int32_t *dev_regions;                // regions grouped by device
  int32_t *dev_start;                  // n_devices + 1
  uint8_t *reach;                      // (n_devices+1) x (k+1)
  int32_t *reach_m;
} vkp__cutter_t;

#define VKP__SEG(c, i, j) ((c)->seg[(size_t)(i) * ((size_t)(c)->part->n_units + 1) + (size_t)(j)])

static bool vkp__feasible(vkp__cutter_t *ct, double bound, double floor_s,
                          int32_t *starts) {
  vkp__pctx_t *c = ct->c;
  const double inf = INFINITY, tol = bound * (1.0 + 1e-12);
  int32_t K = ct->k, M1 = ct->mmax + 1;
  for (int32_t r = 0; r < ct->n_regions; ++r) {
    int32_t b = ct->region_begin[r], e = ct->region_end[r], len = e - b;
    double *f = ct->f + ct->f_base[r];
    int32_t *from = ct->f_from + ct->f_base[r];
    for (size_t x = 0; x < (size_t)M1 * (size_t)(len + 1); ++x) f[x] = inf;
    f[0] = 0.0;
    for (int32_t m = 1; m <= ct->mmax && m <= len; ++m) {
      for (int32_t j = m; j <= len; ++j) {
        double best = inf;
        int32_t arg = -1;
        // Longer stages only add compute: stop once compute alone is over.
        for (int32_t i = j - 1; i >= m - 1; --i) {
          if (c->unit_compute[b + j] - c->unit_compute[b + i] > tol) break;
          double prev = f[(size_t)(m - 1) * (size_t)(len + 1) + (size_t)i];
          if (prev == inf) continue;
          double s = VKP__SEG(c, b + i, b + j);
          if (s > tol || s < floor_s) continue;
          if (prev + s < best) {
            best = prev + s;
            arg = i;
          }
        }
        f[(size_t)m * (size_t)(len + 1) + (size_t)j] = best;
        from[(size_t)m * (size_t)(len + 1) + (size_t)j] = arg;
      }
    }
    for (int32_t m = 0; m < M1; ++m)
      ct->h[(size_t)r * (size_t)M1 + (size_t)m] =
          m >= 1 ? f[(size_t)m * (size_t)(len + 1) + (size_t)len] : inf;
  }
  // Per device: least load for M stages over its regions.
  for (int32_t d = 0; d < c->n_devices; ++d) {
    int32_t cnt = ct->dev_start[d + 1] - ct->dev_start[d];
    double *gv = ct->gconv + ct->g_base[d];
    int32_t *gm = ct->gconv_m + ct->g_base[d];
    for (size_t x = 0; x < (size_t)(cnt + 1) * (size_t)(K + 1); ++x) gv[x] = inf;
    gv[0] = 0.0;
    for (int32_t q = 0; q < cnt; ++q) {
      int32_t r = ct->dev_regions[ct->dev_start[d] + q];
      for (int32_t M = 0; M <= K; ++M) {
        double best = inf;
        int32_t arg = -1;
        for (int32_t m = 1; m <= ct->mmax && m <= M; ++m) {
          double prev = gv[(size_t)q * (size_t)(K + 1) + (size_t)(M - m)];
          double hv = ct->h[(size_t)r * (size_t)M1 + (size_t)m] * ct->region_weight[r];
          if (prev == inf || hv == inf) continue;
          if (prev + hv < best) {
            best = prev + hv;
            arg = m;
          }
        }
        gv[(size_t)(q + 1) * (size_t)(K + 1) + (size_t)M] = best;
        gm[(size_t)(q + 1) * (size_t)(K + 1) + (size_t)M] = arg;
      }
    }
  }
  // Subset sum over devices.
  memset(ct->reach, 0, (size_t)(c->n_devices + 1) * (size_t)(K + 1));
  ct->reach[0] = 1;
  for (int32_t d = 0; d < c->n_devices; ++d) {
    int32_t cnt = ct->dev_start[d + 1] - ct->dev_start[d];
    const double *gv = ct->gconv + ct->g_base[d] + (size_t)cnt * (size_t)(K + 1);
    double budget = tol * c->device_concurrency[d];
    for (int32_t s = 0; s <= K; ++s) {
      if (!ct->reach[(size_t)d * (size_t)(K + 1) + (size_t)s]) continue;
      for (int32_t M = 0; s + M <= K; ++M) {
        // M host stages of host_threads each may outnumber the cores.
        double factor = d == c->host_dev ? vkp__sharing((int64_t)M * c->host_threads,
                                                        c->device_concurrency[d])
                                         : 1.0;
        if (gv[M] == inf || gv[M] * factor > budget) continue;
        size_t at = (size_t)(d + 1) * (size_t)(K + 1) + (size_t)(s + M);
        if (!ct->reach[at]) {
          ct->reach[at] = 1;
          ct->reach_m[at] = M;
        }
      }
    }
  }
  if (!ct->reach[(size_t)c->n_devices * (size_t)(K + 1) + (size_t)K]) return false;
  if (!starts) return true;
  // Walk the choices back: stages per device, per region, then cut points.
  int32_t s = K;
  for (int32_t d = c->n_devices - 1; d >= 0; --d) {
    int32_t M = ct->reach_m[(size_t)(d + 1) * (size_t)(K + 1) + (size_t)s];
    s -= M;
    int32_t cnt = ct->dev_start[d + 1] - ct->dev_start[d];
    const int32_t *gm = ct->gconv_m + ct->g_base[d];
    int32_t left = M;
    for (int32_t q = cnt; q >= 1; --q) {
      int32_t r = ct->dev_regions[ct->dev_start[d] + q - 1];
      int32_t m = gm[(size_t)q * (size_t)(K + 1) + (size_t)left];
      left -= m;
      // Mark the region's cut points: unit indices where a stage starts.
      int32_t b = ct->region_begin[r], len = ct->region_end[r] - b;
      const int32_t *from = ct->f_from + ct->f_base[r];
      int32_t j = len;
      for (int32_t mm = m; mm >= 1; --mm) {
        int32_t i = from[(size_t)mm * (size_t)(len + 1) + (size_t)j];
        starts[b + i] = 1;  // a flag per unit; the caller compacts them
        j = i;
      }
    }
  }
  return true;
}

// Best bottleneck for exactly K stages; fills stage starts (units).
static vkp_status_t vkp__cut_k(vkp__pctx_t *c, int32_t K, int32_t *starts,
                               double *out_bound) {
  vkp_partition_t *part = c->part;
  vkp__cutter_t ct = {.c = c, .n_units = part->n_units,
                      .n_regions = part->n_regions, .k = K};
  ct.mmax = K - part->n_regions + 1;
  int32_t R = part->n_regions, U = part->n_units, D = c->n_devices;
  ct.region_begin = vkp__calloc((size_t)R + 1, sizeof(int32_t));
  ct.region_end = vkp__calloc((size_t)R + 1, sizeof(int32_t));
  ct.region_device = vkp__calloc((size_t)R + 1, sizeof(int32_t));
  ct.region_weight = vkp__calloc((size_t)R + 1, sizeof(double));
  ct.f_base = vkp__calloc((size_t)R + 1, sizeof(size_t));
  ct.h = vkp__calloc((size_t)R * (size_t)(ct.mmax + 1) + 1, sizeof(double));
  ct.dev_regions = vkp__calloc((size_t)R + 1, sizeof(int32_t));
  ct.dev_start = vkp__calloc((size_t)D + 2, sizeof(int32_t));
  ct.g_base = vkp__calloc((size_t)D + 1, sizeof(size_t));
  ct.reach = vkp__calloc((size_t)(D + 1) * (size_t)(K + 1), 1);
  ct.reach_m = vkp__calloc((size_t)(D + 1) * (size_t)(K + 1), sizeof(int32_t));
  vkp_status_t st = NULL;
  if (!ct.region_begin || !ct.region_end || !ct.region_device ||
      !ct.region_weight || !ct.f_base ||
      !ct.h || !ct.dev_regions || !ct.dev_start || !ct.g_base || !ct.reach ||
      !ct.reach_m) {
    st = VKP_OOM("stage cut");
    goto done;
  }
  for (int32_t u = 0; u < U; ++u) {
    int32_t r = c->unit_region[u];
    if (u == 0 || c->unit_region[u - 1] != r) ct.region_begin[r] = u;
    ct.region_end[r] = u + 1;
    int32_t t = part->node_target[part->order[part->unit_start[u]]];
    ct.region_device[r] = c->target_device[t];
    ct.region_weight[r] = (double)c->target_threads[t];
  }
  size_t f_total = 0, g_total = 0;
  for (int32_t r = 0; r < R; ++r) {
    ct.f_base[r] = f_total;
    f_total += (size_t)(ct.mmax + 1) * (size_t)(ct.region_end[r] - ct.region_begin[r] + 1);
    ct.dev_start[ct.region_device[r] + 1]++;
  }
  for (int32_t d = 0; d < D; ++d) ct.dev_start[d + 1] += ct.dev_start[d];
  {
    int32_t *fill = vkp__calloc((size_t)D + 1, sizeof(int32_t));
    if (!fill) {
      st = VKP_OOM("stage cut");
      goto done;
    }
    for (int32_t r = 0; r < R; ++r) {
      int32_t d = ct.region_device[r];
      ct.dev_regions[ct.dev_start[d] + fill[d]++] = r;
    }
    vkp__free(fill);
  }
  for (int32_t d = 0; d < D; ++d) {
    ct.g_base[d] = g_total;
    g_total += (size_t)(ct.dev_start[d + 1] - ct.dev_start[d] + 1) * (size_t)(K + 1);
  }
  ct.f = vkp__calloc(f_total + 1, sizeof(double));
  ct.f_from = vkp__calloc(f_total + 1, sizeof(int32_t));
  ct.gconv = vkp__calloc(g_total + 1, sizeof(double));
  ct.gconv_m = vkp__calloc(g_total + 1, sizeof(int32_t));
  if (!ct.f || !ct.f_from || !ct.gconv || !ct.gconv_m) {
    st = VKP_OOM("stage cut tables");
    goto done;
  }
  // Any cut fits in hi: a stage never costs more than its units alone.
  double lo = 0.0, hi = 0.0;
  // (Threads weigh a device's load: a stage of T threads on fewer than T
  // cores may be the bound.)
  double wmax = 1.0;
  for (int32_t u = 0; u < U; ++u) hi += VKP__SEG(c, u, u + 1);
  for (int32_t r = 0; r < R; ++r)
    if (ct.region_weight[r] > wmax) wmax = ct.region_weight[r];
  // (And host stages that outnumber the cores time-share them.)
  hi = hi * wmax * VKP_PARTITION_TIME_SHARING * (1.0 + 1e-9) + 1e-15;
  for (int it = 0; it < 200 && hi - lo > 1e-9 * hi; ++it) {
    double mid = 0.5 * (lo + hi);
    if (vkp__feasible(&ct, mid, 0.0, NULL))
      hi = mid;
    else
      lo = mid;
  }
  if (!vkp__feasible(&ct, hi, 0.0, NULL)) {
    st = vkp_status_make(VKP_STATUS_INTERNAL, "stage cut found no feasible cut");
    goto done;
  }
  // Among the cuts with that bottleneck, the one whose lightest stage is
  // heaviest: the other stages come out as even as the graph allows.
  double floor_lo = 0.0, floor_hi = hi;
  for (int it = 0; it < 60 && floor_hi - floor_lo > 1e-6 * hi; ++it) {
    double mid = 0.5 * (floor_lo + floor_hi);
    if (vkp__feasible(&ct, hi, mid, NULL))
      floor_lo = mid;
    else
      floor_hi = mid;
  }
  {
    int32_t *marks = vkp__calloc((size_t)U + 1, sizeof(int32_t));
    if (!marks) {
      st = VKP_OOM("stage cut");
      goto done;
    }
    if (!vkp__feasible(&ct, hi, floor_lo, marks)) vkp__feasible(&ct, hi, 0.0, marks);
    int32_t s = 0;
    for (int32_t u = 0; u < U; ++u)
      if (marks[u]) starts[s++] = u;
    vkp__free(marks);
    if (s != K)
      st = vkp_status_make(VKP_STATUS_INTERNAL, "stage cut made %d stages, not %d",
                           (int)s, (int)K);
  }
  if (!st) st = vkp_partition_evaluate(part, K, starts, NULL, out_bound);
done:
  vkp__free(ct.region_begin);
  vkp__free(ct.region_end);
  vkp__free(ct.region_device);
  vkp__free(ct.region_weight);
  vkp__free(ct.f_base);
  vkp__free(ct.h);
  vkp__free(ct.dev_regions);
  vkp__free(ct.dev_start);
  vkp__free(ct.g_base);
  vkp__free(ct.reach);
  vkp__free(ct.reach_m);
  vkp__free(ct.f);
  vkp__free(ct.f_from);
  vkp__free(ct.gconv);
  vkp__free(ct.gconv_m);
  return st;
}

// ---------------------------------------------------------------------------
// Islands

// Change of the placement objective if every node of region `r` (members
// listed in `nodes`) moved to target `t`; INFINITY when one cannot move.
// Only the region's nodes and the values they touch change, so this is
// local: `labels` is the current placement, modified and restored.
static double vkp__absorb_delta(vkp__pctx_t *c, const int32_t *nodes, int32_t n,
                                int32_t t, int32_t *labels) {
  const vkp_graph_t *g = c->graph;
  for (int32_t k = 0; k < n; ++k)
    if (c->fixed[nodes[k]] || vkp__est(c, nodes[k], t) < 0) return INFINITY;
  // Values touched, each counted once (stamped).
  if (++c->stamp_id == 0) {
    memset(c->stamp, 0, (size_t)g->n_values * sizeof(uint32_t));
    c->stamp_id = 1;
  }
  double before = 0.0, after = 0.0;
  for (int pass = 0; pass < 2; ++pass) {
    uint32_t id = c->stamp_id;
    double *acc = pass ? &after : &before;
    for (int32_t k = 0; k < n; ++k) {
      const vkp_node_t *node = &g->nodes[nodes[k]];
      *acc += vkp__est(c, nodes[k], labels[nodes[k]]);
      for (int32_t q = 0; q < node->n_inputs + node->n_outputs; ++q) {
        int32_t v = q < node->n_inputs ? node->inputs[q] : node->outputs[q - node->n_inputs];
        if (v < 0 || c->stamp[v] == id) continue;
        c->stamp[v] = id;
        *acc += vkp__value_transfer(c, labels, v);
      }
    }
    if (pass == 0) {
      for (int32_t k = 0; k < n; ++k) labels[nodes[k]] = t;
      if (++c->stamp_id == 0) {
        memset(c->stamp, 0, (size_t)g->n_values * sizeof(uint32_t));
        c->stamp_id = 1;
      }
    }
  }
  return after - before;
}

// Absorbs islands: under "auto" every region whose move to a neighbouring
// region's target lowers the objective; under any policy, while there are
// more regions than `want_k`, the cheapest such move. Reasons are written
// only when `record` (the final run).
static vkp_status_t vkp__absorb(vkp__pctx_t *c, int32_t want_k, bool record) {
  vkp_partition_t *part = c->part;
  const vkp_partition_options_t *o = c->options;
  int32_t n = c->graph->n_nodes;
  int32_t *labels = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *first_of = vkp__calloc((size_t)n + 2, sizeof(int32_t));
  int32_t *cand = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *cand_target = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  double *cand_delta = vkp__calloc((size_t)n + 1, sizeof(double));
  uint8_t *busy = vkp__calloc((size_t)n + 2, 1);
  if (!labels || !first_of || !cand || !cand_target || !cand_delta || !busy) {
    vkp__free(labels);
    vkp__free(first_of);
    vkp__free(cand);
    vkp__free(cand_target);
    vkp__free(cand_delta);
    vkp__free(busy);
    return VKP_OOM("island absorption");
  }
  vkp_status_t st = NULL;
  for (int32_t iter = 0; iter <= n && !st; ++iter) {
    st = vkp__sequence(c);
    if (st || o->keep_islands) break;
    bool forced = want_k > 0 && part->n_regions > want_k;
    bool beneficial = part->policy_target < 0;
    if (!forced && !beneficial) break;
    // Region r covers order positions [first_of[r], first_of[r + 1]).
    for (int32_t k = n - 1; k >= 0; --k) first_of[part->node_region[part->order[k]]] = k;
    first_of[part->n_regions] = n;
    memcpy(labels, part->node_target, (size_t)n * sizeof(int32_t));
    // Each region's best move; then a batch of the cheapest, no two of them
    // neighbours (their deltas were priced independently).
    int32_t R = part->n_regions, n_cand = 0;
    for (int32_t r = 0; r < R; ++r) {
      const int32_t *members = part->order + first_of[r];
      int32_t count = first_of[r + 1] - first_of[r];
      cand_delta[r] = INFINITY;
      cand_target[r] = -1;
      for (int side = -1; side <= 1; side += 2) {
        int32_t nb = r + side;
        if (nb < 0 || nb >= R) continue;
        int32_t t = part->node_target[part->order[first_of[nb]]];
        double d = vkp__absorb_delta(c, members, count, t, labels);
        for (int32_t k = 0; k < count; ++k) labels[members[k]] = part->node_target[members[k]];
        if (d < cand_delta[r]) {
          cand_delta[r] = d;
          cand_target[r] = t;
        }
      }
      if (cand_target[r] >= 0) cand[n_cand++] = r;
    }
    // Cheapest first (insertion sort: the lists are short).
    for (int32_t x = 1; x < n_cand; ++x)
      for (int32_t y = x; y > 0 && cand_delta[cand[y]] < cand_delta[cand[y - 1]]; --y) {
        int32_t tmp = cand[y];
        cand[y] = cand[y - 1];
        cand[y - 1] = tmp;
      }
    double base = vkp__placement_objective(c, part->node_target);
    double gain_floor = -1e-12 * (1.0 + base);
    int32_t excess = forced ? part->n_regions - want_k : 0;
    int32_t budget = excess > 2 ? excess / 2 : 1, taken = 0;
    memset(busy, 0, (size_t)R + 2);
    for (int32_t x = 0; x < n_cand && !st; ++x) {
      int32_t r = cand[x];
      double d = cand_delta[r];
      bool worth = beneficial && d < gain_floor;
      if (!worth && !(forced && taken < budget)) continue;
      if (busy[r] || (r > 0 && busy[r - 1]) || busy[r + 1]) continue;
      busy[r] = 1;
      ++taken;
      const int32_t *members = part->order + first_of[r];
      int32_t count = first_of[r + 1] - first_of[r];
      int32_t from = part->node_target[members[0]], to = cand_target[r];
      for (int32_t k = 0; k < count && !st; ++k) {
        int32_t i = members[k];
        part->node_target[i] = to;
        part->node_seconds[i] = vkp__est(c, i, to);
        if (!record) continue;
        if (!worth)
          st = vkp__set_reason(part, i,
                               "island of %d node%s on '%s' absorbed into the "
                               "neighbouring '%s' region to fit %d stages "
                               "(%+.4f ms estimated)",
                               (int)count, count == 1 ? "" : "s",
                               vkp_partition_target_name(part, from),
                               vkp_partition_target_name(part, to), (int)want_k, d * 1e3);
        else
          st = vkp__set_reason(part, i,
                               "island of %d node%s on '%s' absorbed into the "
                               "neighbouring '%s' region: not worth its transfers "
                               "(saves %.4f ms)",
                               (int)count, count == 1 ? "" : "s",
                               vkp_partition_target_name(part, from),
                               vkp_partition_target_name(part, to), -d * 1e3);
      }
    }
    if (!taken) break;
  }
  if (!st) st = vkp__sequence(c);
  vkp__free(labels);
  vkp__free(first_of);
  vkp__free(cand);
  vkp__free(cand_target);
  vkp__free(cand_delta);
  vkp__free(busy);
  return st;
}

// Prices every stage starting at unit `i` in one pass, growing it unit by
// unit (the same sums as vkp__segment).
static void vkp__segment_row(vkp__pctx_t *c, int32_t i) {
  const vkp_graph_t *g = c->graph;
  const vkp_partition_t *part = c->part;
  if (++c->stamp_id == 0) {
    memset(c->stamp, 0, (size_t)g->n_values * sizeof(uint32_t));
    c->stamp_id = 1;
  }
  int32_t a = part->unit_start[i];
  int32_t t = part->node_target[part->order[a]];
  const char *dev = c->device[t], *host = c->profile->host_device;
  double acc = 0.0;
  for (int32_t j = i + 1; j <= part->n_units && c->unit_region[j - 1] == c->unit_region[i];
       ++j) {
    for (int32_t k = part->unit_start[j - 1]; k < part->unit_start[j]; ++k) {
      int32_t nd = part->order[k];
      const vkp_node_t *n = &g->nodes[nd];
      acc += part->node_seconds[nd];
      for (int32_t q = 0; q < n->n_inputs; ++q) {
        int32_t v = n->inputs[q];
        if (v < 0 || g->values[v].kind == VKP_VALUE_CONSTANT) continue;
        int32_t p = g->values[v].producer;
        if ((p >= 0 && c->pos[p] >= a) || c->stamp[v] == c->stamp_id) continue;
        c->stamp[v] = c->stamp_id;
        const char *src = p >= 0 ? c->device[part->node_target[p]] : host;
        acc += vkp_profile_transfer_seconds(c->profile, src, dev, c->value_bytes[v]);
      }
      for (int32_t q = 0; q < n->n_outputs; ++q) {
        int32_t v = n->outputs[q];
        if (g->values[v].is_output)
          acc += vkp_profile_transfer_seconds(c->profile, dev, host, c->value_bytes[v]);
      }
    }
    VKP__SEG(c, i, j) = acc;
  }
}

// Absorbs, orders and prices the segments for `want_k` stages (0: only the
// beneficial absorptions); *out_k is the stage count the cut will use.
static vkp_status_t vkp__prepare(vkp__pctx_t *c, int32_t want_k, bool record,
                                 int32_t *out_k) {
  vkp_partition_t *part = c->part;
  VKP_RETURN_IF_ERROR(vkp__absorb(c, want_k, record));
  if (part->n_regions > VKP__MAX_UNITS)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "the placement alternates targets %d times; at most "
                           "%d regions are supported (ask for fewer stages, "
                           "drop --keep-islands or use --policy <target>)",
                           (int)part->n_regions, VKP__MAX_UNITS);
  int32_t U = part->n_units, n = c->graph->n_nodes;
  // The segment prices depend only on the placement: reuse them when a
  // previous trial had the same one.
  bool same = c->seg && c->seg_labels &&
              memcmp(c->seg_labels, part->node_target, (size_t)n * sizeof(int32_t)) == 0;
  if (!same) {
    vkp__free(c->seg);
    vkp__free(c->unit_compute);
    c->seg = vkp__calloc((size_t)U * (size_t)(U + 1) + 1, sizeof(double));
    c->unit_compute = vkp__calloc((size_t)U + 1, sizeof(double));
    if (!c->seg_labels) c->seg_labels = vkp__calloc((size_t)n + 1, sizeof(int32_t));
    if (!c->seg || !c->unit_compute || !c->seg_labels) {
      vkp__free(c->seg);
      c->seg = NULL;
      return VKP_OOM("segment costs");
    }
    for (int32_t u = 0; u < U; ++u) {
      double sum = 0.0;
      for (int32_t q = part->unit_start[u]; q < part->unit_start[u + 1]; ++q)
        sum += part->node_seconds[part->order[q]];
      c->unit_compute[u + 1] = c->unit_compute[u] + sum;
    }
    for (int32_t i = 0; i < U; ++i) vkp__segment_row(c, i);
    memcpy(c->seg_labels, part->node_target, (size_t)n * sizeof(int32_t));
  }
  int32_t k = want_k > part->n_regions ? want_k : part->n_regions;
  if (record && want_k > 0 && want_k < part->n_regions)
    VKP_RETURN_IF_ERROR(vkp__note(
        part, "%d stages asked for, but the placement needs at least %d "
              "(one per region): using %d",
        (int)want_k, (int)part->n_regions, (int)part->n_regions));
  if (k > U) {
    if (record)
      VKP_RETURN_IF_ERROR(vkp__note(part, "%d stages asked for, but the graph "
                                          "can be cut into at most %d",
                                    (int)k, (int)U));
    k = U;
  }
  *out_k = k;
  return NULL;
}

static vkp_status_t vkp__fill_stages(vkp__pctx_t *c, int32_t k,
                                     const int32_t *starts, double bound) {
  vkp_partition_t *part = c->part;
  int32_t U = part->n_units, n = c->graph->n_nodes;
  part->stages = vkp__calloc((size_t)k, sizeof(vkp_partition_stage_t));
  if (!part->stages) return VKP_OOM("stages");
  for (int32_t s = 0; s < k; ++s) {
    vkp_partition_stage_t *ps = &part->stages[s];
    int32_t a = part->unit_start[starts[s]];
    int32_t b = part->unit_start[s + 1 < k ? starts[s + 1] : U];
    ps->target = part->node_target[part->order[a]];
    ps->nodes = vkp__calloc((size_t)(b - a), sizeof(int32_t));
    if (!ps->nodes) return VKP_OOM("stage nodes");
    part->n_stages = s + 1;
    for (int32_t q = a; q < b; ++q) part->node_stage[part->order[q]] = s;
    vkp__segment_t seg;
    vkp__segment(c, a, b, &seg);
    ps->compute_s = seg.compute_s;
    ps->transfer_s = seg.transfer_s;
    ps->seconds = seg.compute_s + seg.transfer_s;
    ps->bytes_in = seg.bytes_in;
    ps->bytes_out = seg.bytes_out;
    ps->threads = strcmp(c->device[ps->target], c->profile->host_device) == 0
                      ? c->target_threads[ps->target]
                      : 0;
    part->latency_s += ps->seconds;
  }
  for (int32_t i = 0; i < n; ++i) {
    vkp_partition_stage_t *ps = &part->stages[part->node_stage[i]];
    ps->nodes[ps->n_nodes++] = i;
  }
  part->bottleneck_s = bound;
  return NULL;
}

vkp_status_t vkp__cut_stages(vkp__pctx_t *c) {
  vkp_partition_t *part = c->part;
  const vkp_partition_options_t *o = c->options;
  int32_t n = c->graph->n_nodes;
  if (n == 0) return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "graph has no nodes");
  if (o->stages < 0)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "stages must be >= 0");
  int32_t *starts = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *placed = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  double *seconds = vkp__calloc((size_t)n + 1, sizeof(double));
  vkp_status_t st = NULL;
  if (!starts || !placed || !seconds) st = VKP_OOM("stage cut");
  int32_t want = o->stages;
  if (!st && want == 0) {
    // Try 1..cap stages, each after absorbing what it needs, from the same
    // placement; keep the fewest stages within the slack of the best.
    memcpy(placed, part->node_target, (size_t)n * sizeof(int32_t));
    memcpy(seconds, part->node_seconds, (size_t)n * sizeof(double));
    int32_t cap = o->max_auto_stages > 0 ? o->max_auto_stages
                                         : VKP__DEFAULT_MAX_AUTO_STAGES;
    // A policy target keeps its regions: only "auto" may trade them for
    // fewer stages.
    int32_t k_first = 1;
    if (part->policy_target >= 0) {
      int32_t natural = 0;
      st = vkp__prepare(c, 0, false, &natural);
      k_first = part->n_regions < 1 ? 1 : part->n_regions;
    }
    // Over ranks, every rank gets a stage at least.
    if (k_first < c->hosts) k_first = c->hosts;
    if (k_first > cap) cap = k_first;
    double *bound = vkp__calloc((size_t)cap + 1, sizeof(double));
    int32_t *used = vkp__calloc((size_t)cap + 1, sizeof(int32_t));
    if (!st && (!bound || !used)) st = VKP_OOM("stage cut");
    double best = INFINITY;
    for (int32_t k = 1; k < k_first && bound; ++k) bound[k] = INFINITY;
    want = k_first;
    for (int32_t k = k_first; k <= cap && !st; ++k) {
      memcpy(part->node_target, placed, (size_t)n * sizeof(int32_t));
      memcpy(part->node_seconds, seconds, (size_t)n * sizeof(double));
      st = vkp__prepare(c, k, false, &used[k]);
      if (st && vkp_status_is(st, VKP_STATUS_UNSUPPORTED) && k < cap) {
        vkp_status_free(st);  // too many regions for this k: try more stages
        st = NULL;
        bound[k] = INFINITY;
        continue;
      }
      if (!st) st = vkp__cut_k(c, used[k], starts, &bound[k]);
      if (!st && bound[k] < best) best = bound[k];
    }
    while (!st && want < cap && !(bound[want] <= best * VKP__AUTO_STAGE_SLACK)) ++want;
    vkp__free(bound);
    vkp__free(used);
    memcpy(part->node_target, placed, (size_t)n * sizeof(int32_t));
    memcpy(part->node_seconds, seconds, (size_t)n * sizeof(double));
  }
  int32_t k = 0;
  double bound = 0.0;
  if (!st) st = vkp__prepare(c, want, true, &k);
  if (!st) st = vkp__cut_k(c, k, starts, &bound);
  if (!st) st = vkp__fill_stages(c, k, starts, bound);
  vkp__free(starts);
  vkp__free(placed);
  vkp__free(seconds);
  return st;
}
