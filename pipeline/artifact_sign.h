// SPDX-License-Identifier: Apache-2.0
// Ed25519 signatures over .vkp artifacts (libsodium). Internal to
// pipeline/artifact.c.
//
// The "signature" entry is 8 bytes "VKPSIG1\0", the signer's 32-byte public
// key and a 64-byte detached signature of a BLAKE2b-512 digest over the
// format version and every other entry in file order (its name length, name,
// size and bytes). Entry names are unique (base/archive.c refuses a file
// that repeats one), so what is signed is exactly what the loader reads.
#ifndef VKPIPE_PIPELINE_ARTIFACT_SIGN_H_
#define VKPIPE_PIPELINE_ARTIFACT_SIGN_H_

#include <stdbool.h>

#include "base/archive.h"
#include "vkpipe/artifact.h"

#define VKP__SIGNATURE_ENTRY "signature"

// Adds the signature entry to `writer` (every other entry already added).
vkp_status_t vkp__artifact_sign(vkp_archive_writer_t *writer,
                                uint32_t format_version,
                                const vkp_artifact_secret_key_t *key) VKP_MUST_USE;

// Checks `archive` against `keys` (n_keys > 0). OK only when it carries a
// signature entry made by one of the keys over its current contents. `what`
// names the file in messages.
vkp_status_t vkp__artifact_verify(const vkp_archive_t *archive, const char *what,
                                  uint32_t format_version,
                                  const vkp_artifact_public_key_t *keys,
                                  int32_t n_keys) VKP_MUST_USE;

#endif  // VKPIPE_PIPELINE_ARTIFACT_SIGN_H_
