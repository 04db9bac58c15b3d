// AES-256-GCM with a key schedule set up once per key, for sealing and opening the records of an
// encrypted log. The cipher is BoringSSL's, as linked into the program by swift-crypto on
// platforms without CryptoKit (Linux, Android, Windows); Apple platforms seal through CryptoKit and
// never call these functions (they are not compiled there).
#ifndef CAEAD_H
#define CAEAD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A BoringSSL `EVP_AEAD_CTX` for AES-256-GCM with 16-byte tags, or NULL when `key` (32 bytes)
/// was refused. Safe to use from several threads at once; freed with `caead_free`.
void *caead_aes256gcm_new(const uint8_t *key);

/// Frees a context of `caead_aes256gcm_new`.
void caead_free(void *context);

/// Encrypts `in_len` bytes of `in` into `out` (`in_len + 16` bytes: ciphertext, then tag).
/// Returns 1 on success, 0 otherwise.
int caead_seal(const void *context, uint8_t *out, const uint8_t *nonce12, const uint8_t *in, size_t in_len,
               const uint8_t *ad, size_t ad_len);

/// Authenticates and decrypts `in_len` bytes of `in` (ciphertext, then its 16-byte tag) into `out`
/// (`in_len - 16` bytes). Returns 1 on success, 0 when the tag does not match.
int caead_open(const void *context, uint8_t *out, const uint8_t *nonce12, const uint8_t *in, size_t in_len,
               const uint8_t *ad, size_t ad_len);

/// Fills `count` bytes at `out` from BoringSSL's random generator (seeded by the kernel, fork-safe).
/// Returns 1 on success, 0 where it is not available (Apple platforms).
int caead_random(uint8_t *out, size_t count);
/// 1 where the functions above are available (not on Apple platforms).
int caead_available(void);

#ifdef __cplusplus
}
#endif

#endif
