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

// What a template is rendered against.
typedef struct vkp__expr_ctx_t {
  const vkp_node_t *node;
  const char *const *operands;
  int n_operands;
  const char *type;
  vkp_codegen_literal_fn literal;
} vkp__expr_ctx_t;

static void vkp__put_operand(vkp__out_t *o, const char *operand) {
  bool atom = vkp__is_atom(operand);
  if (!atom) vkp__put(o, "(", 1);
  vkp__put(o, operand, strlen(operand));
  if (!atom) vkp__put(o, ")", 1);
}

static void vkp__put_literal(vkp__out_t *o, const vkp__expr_ctx_t *c, double v) {
  char lit[64];
  c->literal(v, lit, sizeof lit);
  vkp__put(o, "(", 1);
  vkp__put(o, lit, strlen(lit));
  vkp__put(o, ")", 1);
}

// The name between the braces at p ("{name}..."); the closing brace, or NULL.
static const char *vkp__brace_name(const char *p, char *name, size_t size) {
  const char *end = strchr(p, '}');
  size_t n = end ? (size_t)(end - p - 1) : 0;
  if (!end || n == 0 || n >= size) return NULL;
  memcpy(name, p + 1, n);
  name[n] = '\0';
  return end;
}

// Renders [p, end): `repeat` is the operand %@ names inside a %[ ... %]
// block, -1 outside one.
static bool vkp__render(const char *p, const char *end, const vkp__expr_ctx_t *c,
                        int repeat, vkp__out_t *o) {
  for (; p < end && !o->full; ++p) {
    if (*p != '%') {
      vkp__put(o, p, 1);
      continue;
    }
    char ch = *++p;
    char name[64];
    if (ch >= '0' && ch <= '9') {
      int k = ch - '0';
      const char *operand = k < c->n_operands ? c->operands[k] : NULL;
      if (p[1] == '{') {
        // %k{name}: operand k, or attribute `name` when it is omitted.
        const char *close = vkp__brace_name(p + 1, name, sizeof name);
        if (!close) return false;
        if (operand) vkp__put_operand(o, operand);
        else vkp__put_literal(o, c, vkp_node_float(c->node, name));
        p = close;
        continue;
      }
      if (!operand) return false;
      vkp__put_operand(o, operand);
    } else if (ch == '@') {
      if (repeat < 0 || !c->operands[repeat]) return false;
      vkp__put_operand(o, c->operands[repeat]);
    } else if (ch == '[') {
      // %[body%]: body once for each operand after the first.
      const char *body = p + 1, *close = strstr(body, "%]");
      if (repeat >= 0 || !close || close > end) return false;
      for (int k = 1; k < c->n_operands; ++k)
        if (!vkp__render(body, close, c, k, o)) return false;
      p = close + 1;
    } else if (ch == 'n') {
      vkp__put_literal(o, c, (double)c->n_operands);
    } else if (ch == 's' && p[1] == '{') {
      // %s{name}: a string attribute, raw (validated values only).
      const char *close = vkp__brace_name(p + 1, name, sizeof name);
      const char *v = close ? vkp_node_string(c->node, name) : NULL;
      if (!v) return false;
      vkp__put(o, v, strlen(v));
      p = close;
    } else if (ch == '{') {
      const char *close = vkp__brace_name(p, name, sizeof name);
      if (!close) return false;
      vkp__put_literal(o, c, vkp_node_float(c->node, name));
      p = close;
    } else if (ch == 'T') {
      if (!c->type) return false;
      vkp__put(o, c->type, strlen(c->type));
    } else if (ch == '%') {
      vkp__put(o, "%", 1);
    } else {
      return false;
    }
  }
  return !o->full;
}

bool vkp_codegen_expr_render(const char *tmpl, const vkp_node_t *node,
                             const char *const *operands, int n_operands,
                             const char *type, vkp_codegen_literal_fn literal,
                             char *out, size_t out_size) {
  if (!out_size) return false;
  vkp__out_t o = {out, out_size, false};
  *out = '\0';
  vkp__expr_ctx_t c = {node, operands, n_operands, type, literal};
  return vkp__render(tmpl, tmpl + strlen(tmpl), &c, -1, &o);
}
