/* rng.c — xoshiro256** seeded through splitmix64: small state, fast, and good enough for
 * shuffles, dropout masks and initialisation. */
#include <math.h>
#include "hash64.h"
#include "t2exp/rng.h"

uint64_t t2_hash64(uint64_t x) { return t2__hash64(x); }

void t2_rng_seed(t2_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) {
        seed += 0x9e3779b97f4a7c15ull;
        r->s[i] = t2_hash64(seed);
    }
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t t2_rng_u64(t2_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

float t2_rng_uniform(t2_rng *r) { return (float)(t2_rng_u64(r) >> 40) * 0x1.0p-24f; }

double t2_rng_uniform_double(t2_rng *r) { return (double)(t2_rng_u64(r) >> 11) * 0x1.0p-53; }

uint64_t t2_rng_below(t2_rng *r, uint64_t n)
{
    if (n == 0) return 0;
    /* Rejection sampling: drop the top sliver of the 64-bit range that would bias the modulo. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = t2_rng_u64(r);
    while (x >= limit);
    return x % n;
}

float t2_rng_normal(t2_rng *r)
{
    double u1 = 1.0 - t2_rng_uniform_double(r); /* (0, 1]: log is finite */
    double u2 = t2_rng_uniform_double(r);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

void t2_rng_shuffle_u32(t2_rng *r, uint32_t *idx, uint32_t n)
{
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = (uint32_t)t2_rng_below(r, i);
        uint32_t t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
}
