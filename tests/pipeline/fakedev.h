// SPDX-License-Identifier: Apache-2.0
// "fakedev": a device target for tests, built from host threads, that fills
// every device entry of target.h. Its timeline semaphores are counters under
// a mutex; submit queues the work to one in-order "device queue" thread that
// waits for the submit's wait points, evaluates the stage with tmath on the
// bound staging slots and signals. It checks the rules a real device imposes
// and counts every breach:
//   - a submitted wait must be on a value already reached or signalled by
//     work already queued (else a real queue could deadlock);
//   - a host signal must raise the value and stay below every pending device
//     signal of that semaphore (VUID-VkSemaphoreSignalInfo-value-03258/03259);
//   - submit must pass the tensors bound to its slot by bind_slots.
// An input whose element 0 is TMATH_LOST_VALUE loses the device: nothing
// more runs or signals, and every call returns DEVICE_LOST.
#ifndef VKPIPE_TESTS_PIPELINE_FAKEDEV_H_
#define VKPIPE_TESTS_PIPELINE_FAKEDEV_H_

#include <stdint.h>

#include "vkpipe/target.h"

typedef struct fakedev_options_t {
  uint32_t max_delay_us;     // random delay before each queued job ...
  uint32_t delay_percent;    // ... with this probability
  const char *fail_stage;    // graph name whose submits fail ...
  uint64_t fail_every;       // ... when the frame (signal value) % this == 0
  uint64_t fail_host_signal;  // a host signal of this value fails (0: none)
} fakedev_options_t;

// Adds "fakedev" to `registry` (options copied; fail_stage must outlive it).
vkp_status_t fakedev_register(vkp_registry_t *registry,
                              const fakedev_options_t *options) VKP_MUST_USE;

// Rule breaches counted so far (see above) and jobs executed.
uint64_t fakedev_violations(const vkp_target_t *target);
uint64_t fakedev_jobs(const vkp_target_t *target);

#endif  // VKPIPE_TESTS_PIPELINE_FAKEDEV_H_
