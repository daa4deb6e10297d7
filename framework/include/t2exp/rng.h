/* t2exp/rng.h — the seeded random number generator every random draw comes from.
 *
 * A plain value struct (xoshiro256** state) so that it can be copied, stored in a checkpoint and
 * restored exactly. Never use rand(): determinism (same seed, same run) depends on all draws
 * coming from an explicitly passed t2_rng. */
#ifndef T2EXP_RNG_H
#define T2EXP_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct t2_rng {
    uint64_t s[4];
} t2_rng;

/* Seeds the generator from one 64-bit value (expanded with splitmix64; any seed, 0 included, is fine). */
void t2_rng_seed(t2_rng *r, uint64_t seed);

/* Next 64 random bits. */
uint64_t t2_rng_u64(t2_rng *r);

/* Uniform float in [0, 1) with 24 random bits. */
float t2_rng_uniform(t2_rng *r);

/* Uniform double in [0, 1) with 53 random bits. */
double t2_rng_uniform_double(t2_rng *r);

/* Uniform integer in [0, n) without modulo bias; n must be > 0 (returns 0 otherwise). */
uint64_t t2_rng_below(t2_rng *r, uint64_t n);

/* Standard normal draw (Box-Muller; uses two uniforms per call, no cached spare, so the state fully
 * describes the stream). */
float t2_rng_normal(t2_rng *r);

/* A well-mixed 64-bit hash of x (splitmix64 finaliser). Used to derive independent streams, e.g.
 * t2_rng_seed(&r, t2_hash64(seed ^ t2_hash64(epoch))). */
uint64_t t2_hash64(uint64_t x);

/* Fisher-Yates shuffle of idx[0..n) with draws from r. */
void t2_rng_shuffle_u32(t2_rng *r, uint32_t *idx, uint32_t n);

#ifdef __cplusplus
}
#endif
#endif
