// SPDX-License-Identifier: Apache-2.0
// Shared by the fuzz targets (tests/fuzz/fuzz_*.c): each defines
// LLVMFuzzerTestOneInput and is linked either with libFuzzer (clang,
// -DVKPIPE_FUZZ=ON) or with fuzz_replay.c, which runs a corpus once (any
// compiler; the suite's fuzz_replay_* tests).
#ifndef VKPIPE_TESTS_FUZZ_FUZZ_H_
#define VKPIPE_TESTS_FUZZ_FUZZ_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vkpipe/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// Every loader returns exactly one of a status or an object. A status must
// carry a non-empty message; it is freed here.
static inline void vkp_fuzz_check(vkp_status_t st, bool have_object) {
  if (st && have_object) {
    fprintf(stderr, "fuzz: both an error and an object\n");
    abort();
  }
  if (st) {
    const char *msg = vkp_status_message(st);
    if (!msg || !msg[0]) {
      fprintf(stderr, "fuzz: error without a message\n");
      abort();
    }
    vkp_status_free(st);
  }
}

#endif  // VKPIPE_TESTS_FUZZ_FUZZ_H_
