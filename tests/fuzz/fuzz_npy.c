// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the .npy reader (base/npy.c).
#include <stdint.h>

#include "tests/fuzz/fuzz.h"
#include "vkpipe/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vkp_tensor_t t;
  vkp_status_t st = vkp_npy_read_buffer(data, size, "fuzz.npy", &t);
  // On failure the tensor is left zeroed.
  vkp_fuzz_check(st, st && (t.data != NULL || t.rank != 0));
  vkp_tensor_deinit(&t);
  return 0;
}
