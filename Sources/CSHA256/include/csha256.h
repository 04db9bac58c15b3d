#ifndef CSHA256_H
#define CSHA256_H

#include <stddef.h>
#include <stdint.h>

/// The state of one SHA-256 computation, on the caller's stack: no heap, nothing to free.
typedef struct {
  uint32_t state[8];
  uint8_t buffer[64];
  uint64_t length;     // bytes hashed so far
} csha256_ctx;

/// 1 when this CPU has the SHA extensions (x86-64 SHA-NI with SSE4.1) that this module's
/// SHA-256 uses, 0 otherwise: callers then hash with another implementation.
int csha256_available(void);

void csha256_init(csha256_ctx *ctx);
void csha256_update(csha256_ctx *ctx, const void *data, size_t count);
/// Writes the 32-byte digest to `digest`; `ctx` must not be used after it.
void csha256_final(csha256_ctx *ctx, uint8_t digest[32]);

/// Hashes `countA` bytes into `a` and `countB` bytes into `b`, two independent messages, with the
/// rounds of their blocks interleaved: the same as two csha256_update calls, faster.
void csha256_update2(csha256_ctx *a, const void *dataA, size_t countA, csha256_ctx *b, const void *dataB, size_t countB);
/// csha256_final for two messages at once, their last blocks interleaved.
void csha256_final2(csha256_ctx *a, uint8_t digestA[32], csha256_ctx *b, uint8_t digestB[32]);

#endif
