// SPDX-License-Identifier: Apache-2.0
// Artifact signing and key files (see artifact_sign.h for the format).
#include "pipeline/artifact_sign.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/status_macros.h"

#define VKP__SIG_MAGIC "VKPSIG1"  // 8 bytes with its NUL
#define VKP__SIG_SIZE (8 + crypto_sign_PUBLICKEYBYTES + crypto_sign_BYTES)
#define VKP__PUBLIC_TAG "vkpipe-ed25519-public-key"
#define VKP__SECRET_TAG "vkpipe-ed25519-secret-key"

_Static_assert(VKP_ARTIFACT_PUBLIC_KEY_BYTES == crypto_sign_PUBLICKEYBYTES,
               "public key size");
_Static_assert(VKP_ARTIFACT_SECRET_KEY_BYTES == crypto_sign_SECRETKEYBYTES,
               "secret key size");

static vkp_status_t vkp__sodium_ready(void) {
  // sodium_init is idempotent and thread-safe; 1 means already initialised.
  if (sodium_init() < 0)
    return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                           "libsodium could not be initialised");
  return NULL;
}

// --- digest --------------------------------------------------------------------

typedef struct vkp__digest_t {
  crypto_generichash_state state;
  int n_signatures;  // signature entries seen (skipped)
} vkp__digest_t;

static void vkp__put_le(uint8_t *p, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

static void vkp__digest_entry(void *context, const char *name, const void *data,
                              size_t size) {
  vkp__digest_t *d = context;
  if (strcmp(name, VKP__SIGNATURE_ENTRY) == 0) {
    d->n_signatures++;
    return;
  }
  uint8_t head[12];
  size_t nl = strlen(name);
  vkp__put_le(head, nl, 4);
  vkp__put_le(head + 4, size, 8);
  crypto_generichash_update(&d->state, head, 4);
  crypto_generichash_update(&d->state, (const uint8_t *)name, nl);
  crypto_generichash_update(&d->state, head + 4, 8);
  crypto_generichash_update(&d->state, data, size);
}

static void vkp__digest_begin(vkp__digest_t *d, uint32_t format_version) {
  static const char domain[] = "vkpipe artifact signature v1";
  memset(d, 0, sizeof(*d));
  crypto_generichash_init(&d->state, NULL, 0, crypto_generichash_BYTES_MAX);
  crypto_generichash_update(&d->state, (const uint8_t *)domain, sizeof domain);
  uint8_t v[4];
  vkp__put_le(v, format_version, 4);
  crypto_generichash_update(&d->state, v, 4);
}

static void vkp__fingerprint(const uint8_t *pk, char out[17]) {
  for (int i = 0; i < 8; ++i) snprintf(out + 2 * i, 3, "%02x", pk[i]);
}

vkp_status_t vkp__artifact_sign(vkp_archive_writer_t *writer,
                                uint32_t format_version,
                                const vkp_artifact_secret_key_t *key) {
  VKP_RETURN_IF_ERROR(vkp__sodium_ready());
  vkp__digest_t d;
  vkp__digest_begin(&d, format_version);
  vkp_archive_writer_visit(writer, vkp__digest_entry, &d);
  uint8_t digest[crypto_generichash_BYTES_MAX];
  crypto_generichash_final(&d.state, digest, sizeof digest);
  uint8_t entry[VKP__SIG_SIZE];
  memcpy(entry, VKP__SIG_MAGIC, 8);
  // libsodium's secret key ends with its public key.
  memcpy(entry + 8, key->bytes + crypto_sign_SECRETKEYBYTES - crypto_sign_PUBLICKEYBYTES,
         crypto_sign_PUBLICKEYBYTES);
  crypto_sign_detached(entry + 8 + crypto_sign_PUBLICKEYBYTES, NULL, digest,
                       sizeof digest, key->bytes);
  return vkp_archive_writer_add(writer, VKP__SIGNATURE_ENTRY, entry, sizeof entry);
}

vkp_status_t vkp__artifact_verify(const vkp_archive_t *archive, const char *what,
                                  uint32_t format_version,
                                  const vkp_artifact_public_key_t *keys,
                                  int32_t n_keys) {
  VKP_RETURN_IF_ERROR(vkp__sodium_ready());
  const void *sig = NULL;
  size_t sig_size = 0;
  if (!vkp_archive_find(archive, VKP__SIGNATURE_ENTRY, &sig, &sig_size))
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "'%s' is not signed, and only artifacts signed by a "
                           "trusted key are accepted here",
                           what);
  const uint8_t *s = sig;
  if (sig_size != VKP__SIG_SIZE || memcmp(s, VKP__SIG_MAGIC, 8) != 0)
    return vkp_status_make(VKP_STATUS_DATA_LOSS,
                           "'%s': the signature entry is malformed (%zu bytes)",
                           what, sig_size);
  const uint8_t *signer = s + 8;
  char fp[17];
  vkp__fingerprint(signer, fp);
  int32_t k = 0;
  while (k < n_keys && sodium_memcmp(keys[k].bytes, signer, crypto_sign_PUBLICKEYBYTES) != 0)
    ++k;
  if (k == n_keys)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "'%s' is signed by key %s, which is not a trusted key",
                           what, fp);
  vkp__digest_t d;
  vkp__digest_begin(&d, format_version);
  vkp_archive_visit(archive, vkp__digest_entry, &d);
  uint8_t digest[crypto_generichash_BYTES_MAX];
  crypto_generichash_final(&d.state, digest, sizeof digest);
  if (crypto_sign_verify_detached(s + 8 + crypto_sign_PUBLICKEYBYTES, digest,
                                  sizeof digest, signer) != 0)
    return vkp_status_make(VKP_STATUS_DATA_LOSS,
                           "'%s': the signature by key %s does not match the "
                           "contents (the file was changed after it was signed)",
                           what, fp);
  return NULL;
}

// --- key files -------------------------------------------------------------------

static vkp_status_t vkp__key_text(const char *tag, const uint8_t *key, size_t n,
                                  char **out) {
  char *hex = vkp__malloc(2 * n + 1);
  if (!hex) return VKP_OOM("key text");
  sodium_bin2hex(hex, 2 * n + 1, key, n);
  *out = vkp__asprintf("%s %s\n", tag, hex);
  sodium_memzero(hex, 2 * n + 1);
  vkp__free(hex);
  return *out ? NULL : VKP_OOM("key text");
}

vkp_status_t vkp_artifact_keys_generate(const char *secret_path,
                                        const char *public_path) {
  VKP_RETURN_IF_ERROR(vkp__sodium_ready());
  uint8_t pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
  crypto_sign_keypair(pk, sk);
  char *sk_text = NULL, *pk_text = NULL;
  vkp_status_t st = vkp__key_text(VKP__SECRET_TAG, sk, sizeof sk, &sk_text);
  sodium_memzero(sk, sizeof sk);
  if (!st) st = vkp__key_text(VKP__PUBLIC_TAG, pk, sizeof pk, &pk_text);
  if (!st) {
    int fd = open(secret_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      st = vkp_status_make(errno == EEXIST ? VKP_STATUS_ALREADY_EXISTS
                                           : VKP_STATUS_IO_ERROR,
                           "cannot create secret key file '%s': %s", secret_path,
                           strerror(errno));
    } else {
      size_t n = strlen(sk_text);
      ssize_t w = write(fd, sk_text, n);
      int saved = errno;
      if (close(fd) != 0 || w != (ssize_t)n) {
        st = vkp_status_make(VKP_STATUS_IO_ERROR, "cannot write '%s': %s",
                             secret_path, strerror(saved));
        unlink(secret_path);
      }
    }
  }
  if (!st) st = vkp__write_file(public_path, pk_text, strlen(pk_text));
  if (sk_text) sodium_memzero(sk_text, strlen(sk_text));
  vkp__free(sk_text);
  vkp__free(pk_text);
  return st;
}

static vkp_status_t vkp__key_load(const char *path, const char *tag, uint8_t *out,
                                  size_t n) {
  char *text = NULL;
  size_t size = 0;
  VKP_RETURN_IF_ERROR(vkp__file_read(path, 4096, "a key file", (void **)&text, &size));
  size_t tl = strlen(tag);
  vkp_status_t st = NULL;
  size_t hex_len = 0;
  const char *hex = NULL;
  if (size < tl + 1 || memcmp(text, tag, tl) != 0 || text[tl] != ' ') {
    st = vkp_status_make(VKP_STATUS_PARSE_ERROR, "'%s' is not a %s file (it should "
                         "start with '%s ')", path, tag, tag);
  } else {
    hex = text + tl + 1;
    while (hex[hex_len] && hex[hex_len] != '\n' && hex[hex_len] != '\r') ++hex_len;
    size_t got = 0;
    if (hex_len != 2 * n ||
        sodium_hex2bin(out, n, hex, hex_len, NULL, &got, NULL) != 0 || got != n)
      st = vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "'%s': the key should be %zu hexadecimal digits", path,
                           2 * n);
  }
  sodium_memzero(text, size);
  vkp__free(text);
  return st;
}

vkp_status_t vkp_artifact_public_key_load(const char *path,
                                          vkp_artifact_public_key_t *out_key) {
  VKP_RETURN_IF_ERROR(vkp__sodium_ready());
  return vkp__key_load(path, VKP__PUBLIC_TAG, out_key->bytes, sizeof out_key->bytes);
}

vkp_status_t vkp_artifact_secret_key_load(const char *path,
                                          vkp_artifact_secret_key_t *out_key) {
  VKP_RETURN_IF_ERROR(vkp__sodium_ready());
  return vkp__key_load(path, VKP__SECRET_TAG, out_key->bytes, sizeof out_key->bytes);
}
