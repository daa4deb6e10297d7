/* keyidx.c — open-addressing (linear probing) hash index of map keys; see keyidx.h. */
#include <stdlib.h>
#include <string.h>
#include "keyidx.h"
#include "t2exp/rng.h"

/* FNV-1a from a seeded start, finished with splitmix64 so that the low bits (the slot) depend on
 * every byte of the key. */
static uint64_t hash(const char *s, uint64_t seed)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ seed;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return t2_hash64(h);
}

ptrdiff_t t2__keyidx_find(const t2__keyidx *ix, char *const *keys, size_t n, const char *key)
{
    if (!ix->slots) {
        for (size_t k = 0; k < n; k++)
            if (strcmp(keys[k], key) == 0) return (ptrdiff_t)k;
        return -1;
    }
    size_t mask = ix->cap - 1;
    for (size_t at = (size_t)hash(key, ix->seed) & mask;; at = (at + 1) & mask) {
        uint32_t s = ix->slots[at];
        if (!s) return -1;
        if (strcmp(keys[s - 1], key) == 0) return (ptrdiff_t)(s - 1);
    }
}

static void put(t2__keyidx *ix, char *const *keys, size_t pos)
{
    size_t mask = ix->cap - 1;
    size_t at = (size_t)hash(keys[pos], ix->seed) & mask;
    while (ix->slots[at]) at = (at + 1) & mask;
    ix->slots[at] = (uint32_t)(pos + 1);
}

void t2__keyidx_added(t2__keyidx *ix, char *const *keys, size_t n)
{
    if (n <= T2__KEYIDX_MIN) return;
    if (n >= UINT32_MAX) { /* positions no longer fit a slot: keep scanning (never in practice) */
        t2__keyidx_free(ix);
        return;
    }
    /* Load factor at most 1/2, where a miss (every insert of a new key is one) probes 2.5 slots on
     * average with linear probing; at 3/4 it would be 8.5. The table grows to 4 slots a key. */
    if (ix->slots && n * 2 <= ix->cap) {
        put(ix, keys, n - 1);
        return;
    }
    size_t cap = 16;
    while (cap < 4 * n) cap *= 2;
    uint32_t *slots = calloc(cap, sizeof *slots);
    free(ix->slots);
    ix->slots = slots;
    ix->cap = slots ? cap : 0;
    if (!slots) return;
    ix->seed = t2_hash64((uint64_t)(uintptr_t)slots);
    for (size_t k = 0; k < n; k++) put(ix, keys, k);
}

void t2__keyidx_free(t2__keyidx *ix)
{
    free(ix->slots);
    ix->slots = NULL;
    ix->cap = 0;
}
