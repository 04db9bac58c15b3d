// SHA-256 (FIPS 180-4) through the x86-64 SHA extensions, for the log's hot paths: one hash per
// entry for the chain, one per leaf and per node for the Merkle tree. The state lives on the
// caller's stack. Every function but csha256_available() needs the extensions: the Swift side
// calls them only where csha256_available() is 1, and hashes with swift-crypto everywhere else;
// the tests compare both paths on the same inputs.
//
// sha256rnds2 has a latency of several cycles and each round depends on the one before, so one
// message leaves the unit idle most of the time. The *2 functions hash two independent messages
// with their rounds interleaved, which on the CPUs measured costs little more than one.

#include "csha256.h"
#include <string.h>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <cpuid.h>
#include <immintrin.h>
#define CSHA256_X86 1
#endif

static const uint32_t initial[8] = {
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

// The round constants: the first 32 bits of the fractional parts of the cube roots of the
// first 64 primes.
static const uint32_t K[64] __attribute__((aligned(16))) = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#ifdef CSHA256_X86

static int cpuHasExtensions(void) {
  unsigned int a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  const int ssse3 = (c >> 9) & 1, sse41 = (c >> 19) & 1;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
  const int sha = (b >> 29) & 1;
  return ssse3 && sse41 && sha;
}

// Four rounds: the message words plus constants in `wk`, two rounds per sha256rnds2.
#define CSHA256_ROUNDS4(wk)                                   \
  do {                                                        \
    cdgh = _mm_sha256rnds2_epu32(cdgh, abef, (wk));           \
    abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32((wk), 0x0E)); \
  } while (0)

// The next four message words W[t…t+3] from the previous sixteen (m0 = W[t-16…t-13], …,
// m3 = W[t-4…t-1]): σ0 by sha256msg1, W[t-7…t-4] by the byte shift, σ1 by sha256msg2.
#define CSHA256_SCHEDULE(m0, m1, m2, m3) \
  _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32((m0), (m1)), _mm_alignr_epi8((m3), (m2), 4)), (m3))

// One block of a message whose big-endian words are already in registers.
__attribute__((target("sha,sse4.1,ssse3"), always_inline))
static inline void block1Registers(__m128i *abefA, __m128i *cdghA, __m128i m0, __m128i m1, __m128i m2, __m128i m3) {
  const __m128i *k = (const __m128i *)K;
  __m128i abef = *abefA, cdgh = *cdghA;
  CSHA256_ROUNDS4(_mm_add_epi32(m0, _mm_load_si128(k + 0)));
  CSHA256_ROUNDS4(_mm_add_epi32(m1, _mm_load_si128(k + 1)));
  CSHA256_ROUNDS4(_mm_add_epi32(m2, _mm_load_si128(k + 2)));
  CSHA256_ROUNDS4(_mm_add_epi32(m3, _mm_load_si128(k + 3)));
  for (int group = 4; group < 16; group += 4) {
    m0 = CSHA256_SCHEDULE(m0, m1, m2, m3);
    CSHA256_ROUNDS4(_mm_add_epi32(m0, _mm_load_si128(k + group)));
    m1 = CSHA256_SCHEDULE(m1, m2, m3, m0);
    CSHA256_ROUNDS4(_mm_add_epi32(m1, _mm_load_si128(k + group + 1)));
    m2 = CSHA256_SCHEDULE(m2, m3, m0, m1);
    CSHA256_ROUNDS4(_mm_add_epi32(m2, _mm_load_si128(k + group + 2)));
    m3 = CSHA256_SCHEDULE(m3, m0, m1, m2);
    CSHA256_ROUNDS4(_mm_add_epi32(m3, _mm_load_si128(k + group + 3)));
  }
  *abefA = _mm_add_epi32(*abefA, abef);
  *cdghA = _mm_add_epi32(*cdghA, cdgh);
}

// One block of each of two messages whose big-endian words are already in registers (m0…m3 and
// n0…n3), their rounds interleaved, on states in the instructions' ABEF/CDGH layout.
__attribute__((target("sha,sse4.1,ssse3"), always_inline))
static inline void block2Registers(
  __m128i *abefA, __m128i *cdghA, __m128i m0, __m128i m1, __m128i m2, __m128i m3,
  __m128i *abefB, __m128i *cdghB, __m128i n0, __m128i n1, __m128i n2, __m128i n3
) {
  const __m128i *k = (const __m128i *)K;
  __m128i abef = *abefA, cdgh = *cdghA, abefB2 = *abefB, cdghB2 = *cdghB;
#define CSHA256_ROUNDS4_OF(ab, cd, wk)                                     \
  do {                                                                     \
    cd = _mm_sha256rnds2_epu32(cd, ab, (wk));                              \
    ab = _mm_sha256rnds2_epu32(ab, cd, _mm_shuffle_epi32((wk), 0x0E));     \
  } while (0)
  CSHA256_ROUNDS4_OF(abef, cdgh, _mm_add_epi32(m0, _mm_load_si128(k + 0)));
  CSHA256_ROUNDS4_OF(abefB2, cdghB2, _mm_add_epi32(n0, _mm_load_si128(k + 0)));
  CSHA256_ROUNDS4_OF(abef, cdgh, _mm_add_epi32(m1, _mm_load_si128(k + 1)));
  CSHA256_ROUNDS4_OF(abefB2, cdghB2, _mm_add_epi32(n1, _mm_load_si128(k + 1)));
  CSHA256_ROUNDS4_OF(abef, cdgh, _mm_add_epi32(m2, _mm_load_si128(k + 2)));
  CSHA256_ROUNDS4_OF(abefB2, cdghB2, _mm_add_epi32(n2, _mm_load_si128(k + 2)));
  CSHA256_ROUNDS4_OF(abef, cdgh, _mm_add_epi32(m3, _mm_load_si128(k + 3)));
  CSHA256_ROUNDS4_OF(abefB2, cdghB2, _mm_add_epi32(n3, _mm_load_si128(k + 3)));
  for (int group = 4; group < 16; group += 4) {
    m0 = CSHA256_SCHEDULE(m0, m1, m2, m3);
    n0 = CSHA256_SCHEDULE(n0, n1, n2, n3);
    CSHA256_ROUNDS4_OF(abef, cdgh, _mm_add_epi32(m0, _mm_load_si128(k + group)));
    CSHA256_ROUNDS4_OF(abefB2, cdghB2, _mm_add_epi32(n0, _mm_load_si128(k + group)));
    m1 = CSHA256_SCHEDULE(m1, m2, m3, m0);
    n1 = CSHA256_SCHEDULE(n1, n2, n3, n0);
    CSHA256_ROUNDS4_OF(abef, cdgh, _mm_add_epi32(m1, _mm_load_si128(k + group + 1)));
    CSHA256_ROUNDS4_OF(abefB2, cdghB2, _mm_add_epi32(n1, _mm_load_si128(k + group + 1)));
    m2 = CSHA256_SCHEDULE(m2, m3, m0, m1);
    n2 = CSHA256_SCHEDULE(n2, n3, n0, n1);
    CSHA256_ROUNDS4_OF(abef, cdgh, _mm_add_epi32(m2, _mm_load_si128(k + group + 2)));
    CSHA256_ROUNDS4_OF(abefB2, cdghB2, _mm_add_epi32(n2, _mm_load_si128(k + group + 2)));
    m3 = CSHA256_SCHEDULE(m3, m0, m1, m2);
    n3 = CSHA256_SCHEDULE(n3, n0, n1, n2);
    CSHA256_ROUNDS4_OF(abef, cdgh, _mm_add_epi32(m3, _mm_load_si128(k + group + 3)));
    CSHA256_ROUNDS4_OF(abefB2, cdghB2, _mm_add_epi32(n3, _mm_load_si128(k + group + 3)));
  }
#undef CSHA256_ROUNDS4_OF
  *abefA = _mm_add_epi32(*abefA, abef);
  *cdghA = _mm_add_epi32(*cdghA, cdgh);
  *abefB = _mm_add_epi32(*abefB, abefB2);
  *cdghB = _mm_add_epi32(*cdghB, cdghB2);
}

__attribute__((target("sha,sse4.1,ssse3")))
static void blocksNI(uint32_t state[8], const uint8_t *data, size_t count) {
  // Big-endian words: reverse the bytes of each 32-bit lane.
  const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  // The instructions keep the state as ABEF and CDGH (A in the highest lane).
  __m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[0]), 0xB1);
  __m128i hgfe = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[4]), 0x1B);
  __m128i abef = _mm_alignr_epi8(dcba, hgfe, 8);
  __m128i cdgh = _mm_blend_epi16(hgfe, dcba, 0xF0);

  for (; count > 0; count--, data += 64) {
    const __m128i m0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 0)), swap);
    const __m128i m1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16)), swap);
    const __m128i m2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 32)), swap);
    const __m128i m3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 48)), swap);
    block1Registers(&abef, &cdgh, m0, m1, m2, m3);
  }

  // Back to A…H in order.
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(dchg, feba, 8));
}

// The state of one message in the instructions' ABEF/CDGH layout, and back.
#define CSHA256_LOAD(state, abef, cdgh)                                                  \
  do {                                                                                   \
    const __m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&(state)[0]), 0xB1); \
    const __m128i hgfe = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&(state)[4]), 0x1B); \
    abef = _mm_alignr_epi8(dcba, hgfe, 8);                                               \
    cdgh = _mm_blend_epi16(hgfe, dcba, 0xF0);                                            \
  } while (0)
#define CSHA256_STORE(state, abef, cdgh)                                                 \
  do {                                                                                   \
    const __m128i feba = _mm_shuffle_epi32((abef), 0x1B);                                \
    const __m128i dchg = _mm_shuffle_epi32((cdgh), 0xB1);                                \
    _mm_storeu_si128((__m128i *)&(state)[0], _mm_blend_epi16(feba, dchg, 0xF0));         \
    _mm_storeu_si128((__m128i *)&(state)[4], _mm_alignr_epi8(dchg, feba, 8));            \
  } while (0)
#define CSHA256_MESSAGE(data, offset) \
  _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)((data) + (offset))), swap)

// `count` blocks of each of two messages, their rounds interleaved: the same results as
// blocksNI(a, dataA, count) and blocksNI(b, dataB, count).
__attribute__((target("sha,sse4.1,ssse3")))
static void blocks2NI(uint32_t a[8], const uint8_t *dataA, uint32_t b[8], const uint8_t *dataB, size_t count) {
  const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i abef, cdgh, abefB, cdghB;
  CSHA256_LOAD(a, abef, cdgh);
  CSHA256_LOAD(b, abefB, cdghB);

  for (; count > 0; count--, dataA += 64, dataB += 64) {
    const __m128i m0 = CSHA256_MESSAGE(dataA, 0), m1 = CSHA256_MESSAGE(dataA, 16);
    const __m128i m2 = CSHA256_MESSAGE(dataA, 32), m3 = CSHA256_MESSAGE(dataA, 48);
    const __m128i n0 = CSHA256_MESSAGE(dataB, 0), n1 = CSHA256_MESSAGE(dataB, 16);
    const __m128i n2 = CSHA256_MESSAGE(dataB, 32), n3 = CSHA256_MESSAGE(dataB, 48);
    block2Registers(&abef, &cdgh, m0, m1, m2, m3, &abefB, &cdghB, n0, n1, n2, n3);
  }

  CSHA256_STORE(a, abef, cdgh);
  CSHA256_STORE(b, abefB, cdghB);
}

// MARK: - Node hashes from registers

// The two blocks of a node's message, 0x01 ‖ left ‖ right, padded, as big-endian words in
// registers: the 65 bytes shifted by one place from the two hashes, with no copy through memory.
__attribute__((target("sha,sse4.1,ssse3"), always_inline))
static inline void nodeWords(const uint8_t left[32], const uint8_t right[32], __m128i words[8]) {
  const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  const __m128i l0 = _mm_loadu_si128((const __m128i *)left), l1 = _mm_loadu_si128((const __m128i *)(left + 16));
  const __m128i r0 = _mm_loadu_si128((const __m128i *)right), r1 = _mm_loadu_si128((const __m128i *)(right + 16));
  // _mm_alignr_epi8(high, low, 15): low's last byte, then high's first fifteen.
  words[0] = _mm_shuffle_epi8(_mm_alignr_epi8(l0, _mm_slli_si128(_mm_cvtsi32_si128(0x01), 15), 15), swap);
  words[1] = _mm_shuffle_epi8(_mm_alignr_epi8(l1, l0, 15), swap);
  words[2] = _mm_shuffle_epi8(_mm_alignr_epi8(r0, l1, 15), swap);
  words[3] = _mm_shuffle_epi8(_mm_alignr_epi8(r1, r0, 15), swap);
  // right's last byte, 0x80, zeros, and the length, 65 · 8 = 520 bits, in the last word.
  words[4] = _mm_shuffle_epi8(_mm_alignr_epi8(_mm_cvtsi32_si128(0x80), r1, 15), swap);
  words[5] = _mm_setzero_si128();
  words[6] = _mm_setzero_si128();
  words[7] = _mm_set_epi32(65 * 8, 0, 0, 0);
}

// A state in the instructions' layout, as the 32-byte big-endian digest.
__attribute__((target("sha,sse4.1,ssse3"), always_inline))
static inline void storeDigest(__m128i abef, __m128i cdgh, uint8_t digest[32]) {
  const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128((__m128i *)digest, _mm_shuffle_epi8(_mm_blend_epi16(feba, dchg, 0xF0), swap));
  _mm_storeu_si128((__m128i *)(digest + 16), _mm_shuffle_epi8(_mm_alignr_epi8(dchg, feba, 8), swap));
}

// One node hash, SHA-256(0x01 ‖ left ‖ right), from registers.
__attribute__((target("sha,sse4.1,ssse3")))
static void node1NI(const uint8_t left[32], const uint8_t right[32], uint8_t digest[32]) {
  __m128i w[8];
  nodeWords(left, right, w);
  __m128i abef, cdgh;
  CSHA256_LOAD(initial, abef, cdgh);
  block1Registers(&abef, &cdgh, w[0], w[1], w[2], w[3]);
  block1Registers(&abef, &cdgh, w[4], w[5], w[6], w[7]);
  storeDigest(abef, cdgh, digest);
}

// Two node hashes, SHA-256(0x01 ‖ left ‖ right), their rounds interleaved, from registers.
__attribute__((target("sha,sse4.1,ssse3")))
static void nodes2NI(
  const uint8_t leftA[32], const uint8_t rightA[32], uint8_t digestA[32],
  const uint8_t leftB[32], const uint8_t rightB[32], uint8_t digestB[32]
) {
  __m128i a[8], b[8];
  nodeWords(leftA, rightA, a);
  nodeWords(leftB, rightB, b);
  __m128i abefA, cdghA;
  CSHA256_LOAD(initial, abefA, cdghA);
  __m128i abefB = abefA, cdghB = cdghA;
  block2Registers(&abefA, &cdghA, a[0], a[1], a[2], a[3], &abefB, &cdghB, b[0], b[1], b[2], b[3]);
  block2Registers(&abefA, &cdghA, a[4], a[5], a[6], a[7], &abefB, &cdghB, b[4], b[5], b[6], b[7]);
  storeDigest(abefA, cdghA, digestA);
  storeDigest(abefB, cdghB, digestB);
}

#else

static int cpuHasExtensions(void) { return 0; }

// Never called: cpuHasExtensions() is 0.
static void blocksNI(uint32_t state[8], const uint8_t *data, size_t count) {
  (void)state;
  (void)data;
  (void)count;
  __builtin_trap();
}

static void blocks2NI(uint32_t a[8], const uint8_t *dataA, uint32_t b[8], const uint8_t *dataB, size_t count) {
  blocksNI(a, dataA, count);
  blocksNI(b, dataB, count);
}

// Never called: cpuHasExtensions() is 0.
static void node1NI(const uint8_t left[32], const uint8_t right[32], uint8_t digest[32]) {
  (void)left, (void)right, (void)digest;
  __builtin_trap();
}

// Never called: cpuHasExtensions() is 0.
static void nodes2NI(
  const uint8_t leftA[32], const uint8_t rightA[32], uint8_t digestA[32],
  const uint8_t leftB[32], const uint8_t rightB[32], uint8_t digestB[32]
) {
  (void)leftA, (void)rightA, (void)digestA, (void)leftB, (void)rightB, (void)digestB;
  __builtin_trap();
}

#endif

// MARK: - Dispatch

int csha256_available(void) {
  // cpuid is slow (in a virtual machine it traps), so ask once; racing first callers store the same value.
  static int known = -1;
  int value = __atomic_load_n(&known, __ATOMIC_RELAXED);
  if (value < 0) {
    value = cpuHasExtensions();
    __atomic_store_n(&known, value, __ATOMIC_RELAXED);
  }
  return value;
}

static void blocks(csha256_ctx *ctx, const uint8_t *data, size_t count) { blocksNI(ctx->state, data, count); }

static void blocks2(csha256_ctx *a, const uint8_t *dataA, csha256_ctx *b, const uint8_t *dataB, size_t count) {
  blocks2NI(a->state, dataA, b->state, dataB, count);
}

// The whole blocks some input completes for one message: first the context's buffer, when the
// input fills it, then `count` blocks read in place. The `tail` bytes left over go into the
// buffer only after the blocks are hashed, since the buffer may be the first of them.
typedef struct {
  const uint8_t *first;
  const uint8_t *data;
  size_t count;
  const uint8_t *tail;
  size_t tailCount;
} pending;

static pending take(csha256_ctx *ctx, const void *input, size_t count) {
  const uint8_t *bytes = input;
  pending blocksOf = {0};
  const size_t used = (size_t)(ctx->length % 64);
  ctx->length += count;
  if (used > 0) {
    const size_t fill = count < 64 - used ? count : 64 - used;
    memcpy(ctx->buffer + used, bytes, fill);
    bytes += fill;
    count -= fill;
    if (used + fill < 64) return blocksOf;
    blocksOf.first = ctx->buffer;
  }
  blocksOf.data = bytes;
  blocksOf.count = count / 64;
  blocksOf.tail = bytes + count / 64 * 64;
  blocksOf.tailCount = count % 64;
  return blocksOf;
}

static void keepTail(csha256_ctx *ctx, const pending *blocksOf) {
  if (blocksOf->tailCount > 0) memcpy(ctx->buffer, blocksOf->tail, blocksOf->tailCount);
}

// The last one or two blocks of a message: what is buffered, 0x80, zeros, the length in bits.
static pending pad(const csha256_ctx *ctx, uint8_t out[128]) {
  const uint64_t bits = ctx->length * 8;
  size_t used = (size_t)(ctx->length % 64);
  memcpy(out, ctx->buffer, used);
  out[used++] = 0x80;
  const size_t total = used > 56 ? 128 : 64;
  memset(out + used, 0, total - 8 - used);
  for (int i = 0; i < 8; i++) out[total - 8 + i] = (uint8_t)(bits >> (56 - 8 * i));
  const pending blocksOf = {.data = out, .count = total / 64};
  return blocksOf;
}

static void hash1(csha256_ctx *ctx, const pending *blocksOf) {
  if (blocksOf->first) blocks(ctx, blocksOf->first, 1);
  if (blocksOf->count > 0) blocks(ctx, blocksOf->data, blocksOf->count);
}

static const uint8_t *nextBlock(pending *blocksOf) {
  const uint8_t *block = blocksOf->first;
  if (block) {
    blocksOf->first = NULL;
  } else if (blocksOf->count > 0) {
    block = blocksOf->data;
    blocksOf->data += 64;
    blocksOf->count--;
  }
  return block;
}

// Both messages' blocks, two at a time while both have one, then the rest of the longer.
static void hash2(csha256_ctx *a, pending *blocksA, csha256_ctx *b, pending *blocksB) {
  if (blocksA->first || blocksB->first) {
    const uint8_t *blockA = nextBlock(blocksA), *blockB = nextBlock(blocksB);
    if (blockA && blockB) {
      blocks2(a, blockA, b, blockB, 1);
    } else if (blockA) {
      blocks(a, blockA, 1);
    } else if (blockB) {
      blocks(b, blockB, 1);
    }
  }
  const size_t both = blocksA->count < blocksB->count ? blocksA->count : blocksB->count;
  if (both > 0) {
    blocks2(a, blocksA->data, b, blocksB->data, both);
    blocksA->data += both * 64;
    blocksA->count -= both;
    blocksB->data += both * 64;
    blocksB->count -= both;
  }
  hash1(a, blocksA);
  hash1(b, blocksB);
}

static void digestOf(const uint32_t state[8], uint8_t digest[32]) {
  for (int i = 0; i < 8; i++) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint32_t word = __builtin_bswap32(state[i]);  // the digest is big-endian
#else
    const uint32_t word = state[i];
#endif
    memcpy(digest + 4 * i, &word, 4);
  }
}

// MARK: - The interface

void csha256_init(csha256_ctx *ctx) {
  memcpy(ctx->state, initial, sizeof initial);
  ctx->length = 0;
}

void csha256_update(csha256_ctx *ctx, const void *data, size_t count) {
  const pending blocksOf = take(ctx, data, count);
  hash1(ctx, &blocksOf);
  keepTail(ctx, &blocksOf);
}

void csha256_final(csha256_ctx *ctx, uint8_t digest[32]) {
  uint8_t last[128];
  const pending blocksOf = pad(ctx, last);
  hash1(ctx, &blocksOf);
  digestOf(ctx->state, digest);
}

void csha256_update2(csha256_ctx *a, const void *dataA, size_t countA, csha256_ctx *b, const void *dataB, size_t countB) {
  pending blocksA = take(a, dataA, countA), blocksB = take(b, dataB, countB);
  const pending tailA = blocksA, tailB = blocksB;
  hash2(a, &blocksA, b, &blocksB);
  keepTail(a, &tailA);
  keepTail(b, &tailB);
}

void csha256_final2(csha256_ctx *a, uint8_t digestA[32], csha256_ctx *b, uint8_t digestB[32]) {
  uint8_t lastA[128], lastB[128];
  pending blocksA = pad(a, lastA), blocksB = pad(b, lastB);
  hash2(a, &blocksA, b, &blocksB);
  digestOf(a->state, digestA);
  digestOf(b->state, digestB);
}

void csha256_node(const uint8_t left[32], const uint8_t right[32], uint8_t digest[32]) { node1NI(left, right, digest); }

void csha256_node2(
  const uint8_t leftA[32], const uint8_t rightA[32], uint8_t digestA[32],
  const uint8_t leftB[32], const uint8_t rightB[32], uint8_t digestB[32]
) {
  nodes2NI(leftA, rightA, digestA, leftB, rightB, digestB);
}

size_t csha256_level(const uint8_t *waiting, const uint8_t *children, size_t count, uint8_t *parents) {
  const size_t first = waiting && count > 0 ? 1 : 0;
  const size_t nodes = first + (count - first) / 2;
  // Node n's children: (waiting, children[0]) for the first when `waiting` is given, then pairs.
#define CSHA256_LEFT(n) (first && (n) == 0 ? waiting : children + 32 * (2 * (n) - first))
#define CSHA256_RIGHT(n) (first && (n) == 0 ? children : children + 32 * (2 * (n) - first + 1))
  size_t n = 0;
  for (; n + 1 < nodes; n += 2) {
    csha256_node2(CSHA256_LEFT(n), CSHA256_RIGHT(n), parents + 32 * n, CSHA256_LEFT(n + 1), CSHA256_RIGHT(n + 1), parents + 32 * (n + 1));
  }
  if (n < nodes) csha256_node(CSHA256_LEFT(n), CSHA256_RIGHT(n), parents + 32 * n);
#undef CSHA256_LEFT
#undef CSHA256_RIGHT
  return nodes;
}

// MARK: - The append path's hashes

static void bigEndian64(uint8_t out[8], uint64_t value) {
  for (int i = 0; i < 8; i++) out[i] = (uint8_t)(value >> (56 - 8 * i));
}

// Stored values up to this size are hashed from messages built whole on the stack and padded in
// place, with no streaming state: the common case, and much cheaper for short messages. Longer
// values are streamed (csha256_update and csha256_final).
#define CSHA256_SHORT 512

// Pads the `length` bytes at the start of `message` in place (0x80, zeros, the length in bits)
// and returns its number of blocks. `message` has room for CSHA256_SHORT bytes.
static size_t padInPlace(uint8_t *message, size_t length) {
  message[length] = 0x80;
  const size_t total = (length + 1 + 8 + 63) / 64 * 64;
  memset(message + length + 1, 0, total - 8 - length - 1);
  bigEndian64(message + total - 8, (uint64_t)length * 8);
  return total / 64;
}

// Entry seq's chain message, previous ‖ u64be(seq) ‖ body, padded in `message`: its number of
// blocks, or 0 when it is too long for the buffer.
static size_t chainMessage(uint8_t message[CSHA256_SHORT], const uint8_t previous[32], uint64_t seq, const uint8_t *body, size_t count) {
  if (40 + count + 9 > CSHA256_SHORT) return 0;
  memcpy(message, previous, 32);
  bigEndian64(message + 32, seq);
  memcpy(message + 40, body, count);
  return padInPlace(message, 40 + count);
}

// Entry seq's leaf message, 0x00 ‖ u64be(seq) ‖ value, padded in `message`: its number of
// blocks, or 0 when it is too long for the buffer.
static size_t leafMessage(uint8_t message[CSHA256_SHORT], uint64_t seq, const uint8_t *value, size_t count) {
  if (9 + count + 9 > CSHA256_SHORT) return 0;
  message[0] = 0x00;
  bigEndian64(message + 1, seq);
  memcpy(message + 9, value, count);
  return padInPlace(message, 9 + count);
}

// The streaming forms, for values too long for the buffers.
static void chainStart(csha256_ctx *ctx, const uint8_t previous[32], uint64_t seq) {
  csha256_init(ctx);
  memcpy(ctx->buffer, previous, 32);
  bigEndian64(ctx->buffer + 32, seq);
  ctx->length = 40;
}

static void leafStart(csha256_ctx *ctx, uint64_t seq) {
  csha256_init(ctx);
  ctx->buffer[0] = 0x00;
  bigEndian64(ctx->buffer + 1, seq);
  ctx->length = 9;
}

// The digest of a message padded whole in `message` (`blockCount` blocks), or when it was too long
// for the buffer (`blockCount` 0), of `ctx` (started with the message's prefix) fed `rest`.
static void builtOrStreamed(csha256_ctx *ctx, const uint8_t *message, size_t blockCount, const uint8_t *rest, size_t restCount, uint8_t digest[32]) {
  if (blockCount == 0) {
    csha256_update(ctx, rest, restCount);
    csha256_final(ctx, digest);
    return;
  }
  csha256_init(ctx);
  blocks(ctx, message, blockCount);
  digestOf(ctx->state, digest);
}

// Entry seq's chain hash alone, into `digest`.
static void chainHash(const uint8_t previous[32], uint64_t seq, const uint8_t *body, size_t count, uint8_t digest[32]) {
  uint8_t message[CSHA256_SHORT];
  csha256_ctx ctx;
  const size_t blocksOfChain = chainMessage(message, previous, seq, body, count);
  if (blocksOfChain == 0) chainStart(&ctx, previous, seq);
  builtOrStreamed(&ctx, message, blocksOfChain, body, count, digest);
}

// Entry seq's leaf hash alone, into `digest`.
static void leafHash(uint64_t seq, const uint8_t *value, size_t count, uint8_t digest[32]) {
  uint8_t message[CSHA256_SHORT];
  csha256_ctx ctx;
  const size_t blocksOfLeaf = leafMessage(message, seq, value, count);
  if (blocksOfLeaf == 0) leafStart(&ctx, seq);
  builtOrStreamed(&ctx, message, blocksOfLeaf, value, count, digest);
}

// Entry seq's leaf hash and entry seq + 1's chain hash, their blocks interleaved.
static void leafAndChain(
  uint64_t seq, const uint8_t *value, size_t valueCount, uint8_t leafDigest[32],
  const uint8_t *body, size_t bodyCount, uint8_t chainDigest[32]
) {
  uint8_t leafBytes[CSHA256_SHORT], chainBytes[CSHA256_SHORT];
  csha256_ctx leaf, chain;
  const uint8_t *previous = value + valueCount - 32;
  const size_t leafBlocks = leafMessage(leafBytes, seq, value, valueCount);
  const size_t chainBlocks = leafBlocks == 0 ? 0 : chainMessage(chainBytes, previous, seq + 1, body, bodyCount);
  if (chainBlocks == 0) {
    leafStart(&leaf, seq);
    chainStart(&chain, previous, seq + 1);
    csha256_update2(&leaf, value, valueCount, &chain, body, bodyCount);
    csha256_final2(&leaf, leafDigest, &chain, chainDigest);
    return;
  }
  csha256_init(&leaf);
  csha256_init(&chain);
  const size_t both = leafBlocks < chainBlocks ? leafBlocks : chainBlocks;
  blocks2(&leaf, leafBytes, &chain, chainBytes, both);
  if (leafBlocks > both) blocks(&leaf, leafBytes + 64 * both, leafBlocks - both);
  if (chainBlocks > both) blocks(&chain, chainBytes + 64 * both, chainBlocks - both);
  digestOf(leaf.state, leafDigest);
  digestOf(chain.state, chainDigest);
}

void csha256_entries(
  uint8_t *values, size_t start, const size_t *ends, size_t count, uint64_t first, const uint8_t previous[32],
  uint8_t *leaves
) {
  if (count == 0) return;
  chainHash(previous, first, values + start, ends[0] - 32 - start, values + ends[0] - 32);
  for (size_t i = 0; i < count; i++) {
    if (i > 0) start = ends[i - 1];
    uint8_t *const value = values + start, *const hash = values + ends[i] - 32;
    if (i + 1 == count) {
      if (leaves) leafHash(first + i, value, ends[i] - start, leaves + 32 * i);
      break;
    }
    uint8_t *const body = values + ends[i], *const nextHash = values + ends[i + 1] - 32;
    if (leaves) {
      leafAndChain(first + i, value, ends[i] - start, leaves + 32 * i, body, ends[i + 1] - 32 - ends[i], nextHash);
    } else {
      chainHash(hash, first + i + 1, body, ends[i + 1] - 32 - ends[i], nextHash);
    }
  }
}

