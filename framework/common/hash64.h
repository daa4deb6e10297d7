/* hash64.h — splitmix64's finalizer as an inline function (t2_hash64 is the same function behind
 * the public API), for loops that hash per element and should vectorize. */
#ifndef T2_COMMON_HASH64_H
#define T2_COMMON_HASH64_H

#include <stdint.h>

static inline uint64_t t2__hash64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

#endif
