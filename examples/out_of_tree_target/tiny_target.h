// SPDX-License-Identifier: Apache-2.0
// "tiny": a host target written against vkpipe's public headers only. It
// runs relu and same-shape add on float32 with plain loops; placement sends
// every other node to another target and says why.
#ifndef TINY_TARGET_H_
#define TINY_TARGET_H_

#include <vkpipe/target.h>

// Adds "tiny" to `registry` (which owns it from then on).
vkp_status_t tiny_target_register(vkp_registry_t *registry);

#endif  // TINY_TARGET_H_
