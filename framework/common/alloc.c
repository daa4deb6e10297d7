/* alloc.c — aligned, overflow-checked allocation used for tensors and flat buffers. */
#define _DEFAULT_SOURCE /* madvise */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "internal.h"

/* Buffers from this size on (a batch's activations, say: 300 MB for 1000 images of the seeds'
 * CNN) are asked to be backed by 2 MB pages. Debian's default is transparent huge pages on request
 * only (madvise), and with 4 KB pages first touching 300 MB is 75,000 page faults: 1 s on a VM
 * where one costs 14 us, most of an evaluation pass. */
#define HUGE_FROM ((size_t)4 << 20)
#define HUGE_PAGE ((size_t)2 << 20)

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
    size_t align = 64;
#ifdef MADV_HUGEPAGE
    if (bytes >= HUGE_FROM && bytes <= SIZE_MAX - HUGE_PAGE) {
        align = HUGE_PAGE;
        bytes = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    }
#endif
    void *p = aligned_alloc(align, bytes);
    if (!p) return NULL;
#ifdef MADV_HUGEPAGE
    if (align == HUGE_PAGE) (void)madvise(p, bytes, MADV_HUGEPAGE); /* a hint: without it the buffer works the same */
#endif
    memset(p, 0, bytes);
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
