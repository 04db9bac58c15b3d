#include "caead.h"

#if defined(__APPLE__)

void *caead_aes256gcm_new(const uint8_t *key) { (void)key; return NULL; }
void caead_free(void *context) { (void)context; }
int caead_seal(const void *context, uint8_t *out, const uint8_t *nonce12, const uint8_t *in, size_t in_len,
               const uint8_t *ad, size_t ad_len) {
  (void)context; (void)out; (void)nonce12; (void)in; (void)in_len; (void)ad; (void)ad_len;
  return 0;
}
int caead_open(const void *context, uint8_t *out, const uint8_t *nonce12, const uint8_t *in, size_t in_len,
               const uint8_t *ad, size_t ad_len) {
  (void)context; (void)out; (void)nonce12; (void)in; (void)in_len; (void)ad; (void)ad_len;
  return 0;
}
int caead_random(uint8_t *out, size_t count) {
  (void)out; (void)count;
  return 0;
}
int caead_available(void) { return 0; }

#else

// BoringSSL's AEAD interface (include/openssl/aead.h) and random generator (include/openssl/rand.h),
// under the symbol prefix swift-crypto gives its copy. The context is opaque here: it is only ever made by EVP_AEAD_CTX_new.
extern const void *CCryptoBoringSSL_EVP_aead_aes_256_gcm(void);
extern void *CCryptoBoringSSL_EVP_AEAD_CTX_new(const void *aead, const uint8_t *key, size_t key_len, size_t tag_len);
extern void CCryptoBoringSSL_EVP_AEAD_CTX_free(void *ctx);
extern int CCryptoBoringSSL_EVP_AEAD_CTX_seal(const void *ctx, uint8_t *out, size_t *out_len, size_t max_out_len,
                                              const uint8_t *nonce, size_t nonce_len, const uint8_t *in,
                                              size_t in_len, const uint8_t *ad, size_t ad_len);
extern int CCryptoBoringSSL_EVP_AEAD_CTX_open(const void *ctx, uint8_t *out, size_t *out_len, size_t max_out_len,
                                              const uint8_t *nonce, size_t nonce_len, const uint8_t *in,
                                              size_t in_len, const uint8_t *ad, size_t ad_len);

enum { key_size = 32, nonce_size = 12, tag_size = 16 };

void *caead_aes256gcm_new(const uint8_t *key) {
  return CCryptoBoringSSL_EVP_AEAD_CTX_new(CCryptoBoringSSL_EVP_aead_aes_256_gcm(), key, key_size, tag_size);
}

void caead_free(void *context) { CCryptoBoringSSL_EVP_AEAD_CTX_free(context); }

int caead_seal(const void *context, uint8_t *out, const uint8_t *nonce12, const uint8_t *in, size_t in_len,
               const uint8_t *ad, size_t ad_len) {
  size_t written = 0;
  int ok = CCryptoBoringSSL_EVP_AEAD_CTX_seal(context, out, &written, in_len + tag_size, nonce12, nonce_size, in,
                                              in_len, ad, ad_len);
  return ok == 1 && written == in_len + tag_size;
}

int caead_open(const void *context, uint8_t *out, const uint8_t *nonce12, const uint8_t *in, size_t in_len,
               const uint8_t *ad, size_t ad_len) {
  if (in_len < tag_size) return 0;
  size_t written = 0;
  int ok = CCryptoBoringSSL_EVP_AEAD_CTX_open(context, out, &written, in_len - tag_size, nonce12, nonce_size, in,
                                              in_len, ad, ad_len);
  return ok == 1 && written == in_len - tag_size;
}

extern int CCryptoBoringSSL_RAND_bytes(uint8_t *buf, size_t len);

int caead_random(uint8_t *out, size_t count) { return CCryptoBoringSSL_RAND_bytes(out, count); }

int caead_available(void) { return 1; }

#endif
