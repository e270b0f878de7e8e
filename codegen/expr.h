// SPDX-License-Identifier: Apache-2.0
//
// Expression templates for elementwise ops, shared by the code generators:
// each generator keeps one table row per op it fuses (codegen/c/ops.c,
// codegen/spirv/ops.c) with the expression in its language, and renders it
// for a node here.
//
//   "%0 >= 0.0f ? %0 : %{alpha} * %0"       // leaky_relu in C
//   vkp_codegen_expr_render(tmpl, node, operands, 1, "float", c_literal,
//                           out, sizeof out);
//
// Placeholders: %0 .. %9, the operand expressions (parenthesised where they
// are not plain names); %{name}, the node's float attribute `name` written
// by `literal` (C and GLSL spell floats differently); %1{name}, operand 1,
// or attribute `name` when that operand is omitted (clip's bounds);
// %s{name}, the node's string attribute `name` as it is (for validated
// values that form part of an identifier: "vkp_gelu_%s{approximate}"); %T,
// `type` (the C type of the result); %n, the number of operands (a
// literal); %[...%], the text between rendered once for each operand after
// the first, with %@ standing for that operand (ops with any number of
// inputs: "%0%[ + %@%]" is a sum, "%[max(%]%0%[, %@)%]" a maximum); %%, a
// percent sign. Pure text: thread-safe, no I/O.
#ifndef VKPIPE_CODEGEN_EXPR_H_
#define VKPIPE_CODEGEN_EXPR_H_

#include <stdbool.h>
#include <stddef.h>

#include "vkpipe/graph.h"

// Writes the literal for `value` into buf (NUL-terminated).
typedef void (*vkp_codegen_literal_fn)(double value, char *buf, size_t size);

// Renders `tmpl` into `out`; false when it does not fit or names an operand
// past n_operands (a bug in a generator's table).
bool vkp_codegen_expr_render(const char *tmpl, const vkp_node_t *node,
                             const char *const *operands, int n_operands,
                             const char *type, vkp_codegen_literal_fn literal,
                             char *out, size_t out_size);

#endif  // VKPIPE_CODEGEN_EXPR_H_
