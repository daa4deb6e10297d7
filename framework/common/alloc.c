/* alloc.c — aligned, overflow-checked allocation used for tensors and flat buffers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

int t2__mul_size(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) return -1;
    *out = a * b;
    return 0;
}

void *t2__alloc_aligned(size_t count, size_t size)
{
    size_t bytes;
    if (t2__mul_size(count, size, &bytes) != 0) return NULL;
    if (bytes == 0) bytes = 1;
    bytes = (bytes + 63) & ~(size_t)63;   /* aligned_alloc wants a multiple of the alignment */
    if (bytes == 0) return NULL;          /* rounding overflowed */
    void *p = aligned_alloc(64, bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

void t2__free_aligned(void *p) { free(p); }

void *t2__grow_array(void *v, size_t *cap, size_t n, size_t elem, size_t first)
{
    if (n < *cap) return v;
    size_t nc = *cap ? *cap : (first ? first : 1), bytes;
    while (nc <= n)
        if (t2__mul_size(nc, 2, &nc) != 0) return NULL;
    if (t2__mul_size(nc, elem, &bytes) != 0) return NULL;
    void *g = realloc(v, bytes);
    if (g) *cap = nc;
    return g;
}
