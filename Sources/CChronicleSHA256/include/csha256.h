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

/// 1 when this CPU has the SHA extensions (x86-64 SHA-NI with SSE4.1 and SSSE3), else 0. Every
/// other function of this module runs only on such a CPU: call them only when this is 1.
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

/// RFC 9162's node hash, SHA-256(0x01 ‖ left ‖ right), in one call.
void csha256_node(const uint8_t left[32], const uint8_t right[32], uint8_t digest[32]);
/// Two node hashes at once, their blocks interleaved.
void csha256_node2(
  const uint8_t leftA[32], const uint8_t rightA[32], uint8_t digestA[32],
  const uint8_t leftB[32], const uint8_t rightB[32], uint8_t digestB[32]);

/// One level of a Merkle tree over consecutive 32-byte hashes: writes to `parents` the node hash of
/// (waiting, children[0]) when `waiting` is not NULL, then of each following pair of `children`,
/// all two at a time, and returns how many it wrote. A last child without a sibling is left out.
size_t csha256_level(const uint8_t *waiting, const uint8_t *children, size_t count, uint8_t *parents);

/// The append path's hashes for `count` entries whose stored values lie one after another in
/// `values`, the first starting at `start`, value i ending at ends[i] (offsets in `values`) with
/// its last 32 bytes reserved for its chain hash: writes
/// each chain hash, SHA-256(previous ‖ u64be(first + i) ‖ value without those 32 bytes), into
/// them (`previous` is entry first − 1's), and when `leaves` is not NULL each leaf hash,
/// SHA-256(0x00 ‖ u64be(first + i) ‖ value), to leaves + 32 i. Entry i's leaf is hashed together
/// with entry i + 1's chain hash: both wait only for entry i's.
void csha256_entries(
  uint8_t *values, size_t start, const size_t *ends, size_t count, uint64_t first, const uint8_t previous[32],
  uint8_t *leaves);

#endif
