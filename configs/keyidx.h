/* keyidx.h — a hash index over the keys of a map (internal to configs/).
 *
 * t2__val maps and YAML map nodes keep their keys in an array, in insertion order (the order the
 * JSON writer and the config loader rely on). A lookup by scanning that array made every insert a
 * linear search, so parsing a document with n keys in one object took O(n^2): 100k keys in a
 * checkpoint's metadata.json took 35 s. The index maps a key to its position in the array in O(1)
 * expected time; it is built only once a map has more than T2__KEYIDX_MIN keys, so the many small
 * maps (hparams, config sections) cost nothing extra.
 *
 * The hash is keyed by a per-table seed taken from the table's heap address, so a document cannot
 * be crafted in advance to put all its keys in one probe chain. */
#ifndef T2_CONFIGS_KEYIDX_H
#define T2_CONFIGS_KEYIDX_H

#include <stddef.h>
#include <stdint.h>

#define T2__KEYIDX_MIN 8

typedef struct t2__keyidx {
    uint32_t *slots; /* position + 1 of a key in the owner's array, 0 = empty; NULL while small */
    size_t cap;      /* number of slots, a power of two (0 while small) */
    uint64_t seed;
} t2__keyidx;

/* The position of key in keys[0..n), or -1. ix must index exactly keys[0..n) (or be empty). */
ptrdiff_t t2__keyidx_find(const t2__keyidx *ix, char *const *keys, size_t n, const char *key);

/* Records that keys[n-1] was just appended (keys[0..n-1) are indexed already). When the table
 * must grow and that allocation fails, the index is dropped and lookups fall back to scanning,
 * which is slower but still right; the next append tries to build it again. */
void t2__keyidx_added(t2__keyidx *ix, char *const *keys, size_t n);

void t2__keyidx_free(t2__keyidx *ix);

#endif
