// SPDX-License-Identifier: Apache-2.0
// The built-in targets as data, for the layers above that need their
// declarations without bringing any of them up (the default cost profile).
#ifndef VKPIPE_TARGET_BUILTIN_H_
#define VKPIPE_TARGET_BUILTIN_H_

#include <stdbool.h>
#include <stdint.h>

#include "vkpipe/target.h"

// The vtable of built-in target `index` (registration order), or NULL past
// the last. Static storage; the target is not brought up.
const vkp_target_vtable_t *vkp__builtin_target_vtable(int32_t index);

#endif  // VKPIPE_TARGET_BUILTIN_H_
