// SPDX-License-Identifier: Apache-2.0
// What the library does differently in sanitizer builds only.
#ifndef VKPIPE_BASE_SANITIZER_H_
#define VKPIPE_BASE_SANITIZER_H_

// Keeps every shared library now loaded mapped to the end of the process
// (re-opened with RTLD_NODELETE), in builds with AddressSanitizer; nothing
// otherwise. Drivers and plug-ins (lavapipe under the Vulkan loader, Open
// MPI's components) keep once-initialised blocks in their globals, and are
// unloaded before LeakSanitizer's exit-time check: the blocks then read as
// leaks from an "<unknown module>" that no suppression can name. Kept
// mapped, their globals still count (or the stacks name the library, which
// tests/lsan.supp can).
void vkp__keep_libraries_mapped(void);

#endif  // VKPIPE_BASE_SANITIZER_H_
