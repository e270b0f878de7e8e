// SPDX-License-Identifier: Apache-2.0
// The ONNX importer's problem list: every node, input, initializer and
// output it cannot import, reported together in one status, grouped so that
// a model with hundreds of problems reads in a few lines and nothing is left
// out: problems of one ONNX op with the same message (names aside) share a
// line with their count and first few node names.
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sb.h"
#include "base/status_macros.h"
#include "graph/onnx_internal.h"

// Node names shown per group before "and N more".
#define VKP__SHOWN 3

void vkp__problems_deinit(vkp__problems_t *p) {
  for (int32_t i = 0; i < p->count; ++i) {
    vkp__free(p->items[i].group);
    vkp__free(p->items[i].subject);
    vkp__free(p->items[i].message);
    vkp__free(p->items[i].key);
  }
  vkp__free(p->items);
  for (int32_t i = 0; i < p->n_blocked; ++i) vkp__free(p->blocked[i].op);
  vkp__free(p->blocked);
  vkp_status_free(p->oom);
  memset(p, 0, sizeof *p);
}

static void vkp__keep_oom(vkp__problems_t *p) {
  if (!p->oom) p->oom = VKP_OOM("import problem list");
}

// The message with every quoted name replaced by '?': problems that differ
// only in names group together.
static char *vkp__group_key(const char *group, const char *message) {
  vkp__sb_t sb = {0};
  vkp__sb_append(&sb, group);
  vkp__sb_append(&sb, "\n");
  for (const char *m = message; *m; ++m) {
    if (*m != '\'') {
      vkp__sb_appendn(&sb, m, 1);
      continue;
    }
    const char *end = strchr(m + 1, '\'');
    if (!end) {
      vkp__sb_append(&sb, m);
      break;
    }
    vkp__sb_append(&sb, "'?'");
    m = end;
  }
  return vkp__sb_take(&sb);
}

void vkp__problem_add(vkp__problems_t *p, vkp_status_t st, const char *group,
                      const char *subject) {
  vkp_status_code_t code = vkp_status_code(st);
  if (code == VKP_STATUS_OUT_OF_MEMORY) {
    if (!p->oom) p->oom = st;
    else vkp_status_free(st);
    return;
  }
  if (p->count == p->cap) {
    int32_t cap = p->cap ? p->cap * 2 : 16;
    vkp__problem_t *items = vkp__reallocarray(p->items, (size_t)cap, sizeof *items);
    if (!items) {
      vkp_status_free(st);
      vkp__keep_oom(p);
      return;
    }
    p->items = items;
    p->cap = cap;
  }
  vkp__problem_t *it = &p->items[p->count];
  it->group = vkp__strdup(group);
  it->subject = vkp__strdup(subject ? subject : "");
  it->message = vkp__strdup(vkp_status_message(st));
  it->key = it->message ? vkp__group_key(group, it->message) : NULL;
  it->code = code;
  vkp_status_free(st);
  if (!it->group || !it->subject || !it->message || !it->key) {
    vkp__free(it->group);
    vkp__free(it->subject);
    vkp__free(it->message);
    vkp__free(it->key);
    vkp__keep_oom(p);
    return;
  }
  if (p->count == 0) p->first_code = code;
  if (code == VKP_STATUS_UNSUPPORTED) p->unsupported++;
  p->count++;
}

void vkp__problem_blocked(vkp__problems_t *p, const char *op) {
  for (int32_t i = 0; i < p->n_blocked; ++i)
    if (strcmp(p->blocked[i].op, op) == 0) {
      p->blocked[i].count++;
      return;
    }
  vkp__blocked_t *grown =
      vkp__reallocarray(p->blocked, (size_t)p->n_blocked + 1, sizeof *grown);
  if (!grown) {
    vkp__keep_oom(p);
    return;
  }
  p->blocked = grown;
  p->blocked[p->n_blocked].op = vkp__strdup(op);
  if (!p->blocked[p->n_blocked].op) {
    vkp__keep_oom(p);
    return;
  }
  p->blocked[p->n_blocked++].count = 1;
}

// Whether the group names an ONNX op (its problems are nodes).
static bool vkp__is_op_group(const char *group) {
  return strcmp(group, "graph input") != 0 && strcmp(group, "initializer") != 0 &&
         strcmp(group, "graph output") != 0 && strcmp(group, "load options") != 0 &&
         strcmp(group, "graph") != 0;
}

// One line for the problems with item `first`'s key (marking them done).
static void vkp__render_group(vkp__problems_t *p, int32_t first, bool *done,
                              vkp__sb_t *sb) {
  const vkp__problem_t *lead = &p->items[first];
  int32_t n = 0;
  for (int32_t i = first; i < p->count; ++i)
    if (!done[i] && strcmp(p->items[i].key, lead->key) == 0) ++n;
  bool op = vkp__is_op_group(lead->group);
  if (n == 1) {
    if (op)
      vkp__sb_printf(sb, "\n  node '%s' (%s): %s", lead->subject, lead->group,
                     lead->message);
    else if (lead->subject[0])
      vkp__sb_printf(sb, "\n  %s '%s': %s", lead->group, lead->subject,
                     lead->message);
    else
      vkp__sb_printf(sb, "\n  %s: %s", lead->group, lead->message);
    done[first] = true;
    return;
  }
  vkp__sb_printf(sb, "\n  %s: %d %s (", lead->group, (int)n,
                 op ? "nodes" : "of them");
  int32_t shown = 0;
  for (int32_t i = first; i < p->count; ++i) {
    if (done[i] || strcmp(p->items[i].key, lead->key) != 0) continue;
    done[i] = true;
    if (shown < VKP__SHOWN)
      vkp__sb_printf(sb, "%s'%s'", shown ? ", " : "", p->items[i].subject);
    ++shown;
  }
  if (n > VKP__SHOWN) vkp__sb_printf(sb, " and %d more", (int)(n - VKP__SHOWN));
  vkp__sb_printf(sb, "), the first: %s", lead->message);
}

vkp_status_t vkp__problems_status(vkp__problems_t *p, const char *what) {
  if (p->oom) {
    vkp_status_t st = p->oom;
    p->oom = NULL;
    return st;
  }
  if (p->count == 0) return NULL;
  bool *done = vkp__calloc((size_t)p->count, sizeof(bool));
  if (!done) return VKP_OOM("import problem list");
  vkp__sb_t sb = {0};
  int32_t groups = 0;
  for (int32_t i = 0; i < p->count; ++i) {
    if (done[i]) continue;
    vkp__render_group(p, i, done, &sb);
    ++groups;
  }
  vkp__free(done);
  if (p->n_blocked) {
    int32_t total = 0;
    for (int32_t i = 0; i < p->n_blocked; ++i) total += p->blocked[i].count;
    vkp__sb_printf(&sb, "\n  not imported because an input comes from a node "
                        "above (nothing else wrong with them): %d node%s (",
                   (int)total, total == 1 ? "" : "s");
    for (int32_t i = 0; i < p->n_blocked; ++i)
      vkp__sb_printf(&sb, "%s%s %d", i ? ", " : "", p->blocked[i].op,
                     (int)p->blocked[i].count);
    vkp__sb_append(&sb, ")");
  }
  if (sb.failed) {
    vkp__sb_deinit(&sb);
    return VKP_OOM("import problem list");
  }
  // UNSUPPORTED when anything is unsupported (the model may be fine, vkpipe
  // is not there yet), else the first problem's code.
  vkp_status_code_t code = p->unsupported ? VKP_STATUS_UNSUPPORTED : p->first_code;
  vkp_status_t st = vkp_status_make(
      code, "cannot import %d item%s of %s (%d distinct problem%s):%s",
      (int)p->count, p->count == 1 ? "" : "s", what, (int)groups,
      groups == 1 ? "" : "s", sb.data ? sb.data : "");
  vkp__sb_deinit(&sb);
  return st;
}
