// SPDX-License-Identifier: Apache-2.0
#include "codegen/expr.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

// An operand needs parentheses unless it is a name, a number or an indexed
// or called name ("b1[vkp_idx1(o)]", "t_relu", "acc").
static bool vkp__is_atom(const char *s) {
  if (!*s) return false;
  int depth = 0;
  for (const char *p = s; *p; ++p) {
    if (*p == '(' || *p == '[') ++depth;
    else if (*p == ')' || *p == ']') --depth;
    else if (depth == 0 && !isalnum((unsigned char)*p) && *p != '_' && *p != '.')
      return false;
  }
  return true;
}

typedef struct vkp__out_t {
  char *p;
  size_t left;
  bool full;
} vkp__out_t;

static void vkp__put(vkp__out_t *o, const char *s, size_t n) {
  if (n >= o->left) {
    o->full = true;
    return;
  }
  memcpy(o->p, s, n);
  o->p += n;
  o->left -= n;
  *o->p = '\0';
}

bool vkp_codegen_expr_render(const char *tmpl, const vkp_node_t *node,
                             const char *const *operands, int n_operands,
                             const char *type, vkp_codegen_literal_fn literal,
                             char *out, size_t out_size) {
  if (!out_size) return false;
  vkp__out_t o = {out, out_size, false};
  *out = '\0';
  for (const char *p = tmpl; *p && !o.full; ++p) {
    if (*p != '%') {
      vkp__put(&o, p, 1);
      continue;
    }
    char c = *++p;
    if (c >= '0' && c <= '9') {
      int k = c - '0';
      if (k >= n_operands || !operands[k]) return false;
      bool atom = vkp__is_atom(operands[k]);
      if (!atom) vkp__put(&o, "(", 1);
      vkp__put(&o, operands[k], strlen(operands[k]));
      if (!atom) vkp__put(&o, ")", 1);
    } else if (c == 's' && p[1] == '{') {
      // %s{name}: a string attribute, raw (validated values only).
      const char *end = strchr(p, '}');
      char name[64];
      size_t n = end ? (size_t)(end - p - 2) : 0;
      if (!end || n == 0 || n >= sizeof name) return false;
      memcpy(name, p + 2, n);
      name[n] = '\0';
      const char *v = vkp_node_string(node, name);
      if (!v) return false;
      vkp__put(&o, v, strlen(v));
      p = end;
    } else if (c == '{') {
      const char *end = strchr(p, '}');
      char name[64];
      size_t n = end ? (size_t)(end - p - 1) : 0;
      if (!end || n == 0 || n >= sizeof name) return false;
      memcpy(name, p + 1, n);
      name[n] = '\0';
      char lit[64];
      literal(vkp_node_float(node, name), lit, sizeof lit);
      vkp__put(&o, "(", 1);
      vkp__put(&o, lit, strlen(lit));
      vkp__put(&o, ")", 1);
      p = end;
    } else if (c == 'T') {
      if (!type) return false;
      vkp__put(&o, type, strlen(type));
    } else if (c == '%') {
      vkp__put(&o, "%", 1);
    } else {
      return false;
    }
  }
  return !o.full;
}
