/* ckpt_span.c — one pass over a checkpoint's bytes: the CRC-32C of every span and, where the
 * span has a destination, its copy, split over the thread pool.
 *
 * Writing, opening and restoring all spend their CPU time here. The bytes come from memory (the
 * net, the page cache), so the cost is memory traffic plus the pool's wake-up (~70 us on this
 * kind of VM): hence one job for all spans rather than one per entry, and, when a span is both
 * copied and checksummed, chunks small enough to stay in the cache between the two, so the
 * source is read from memory once. The pieces of a span that fall into different parts are
 * joined with t2__crc32c_combine: the CRC is the same, bit for bit, whatever the thread count. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "ckpt_internal.h"
#include "crc32c.h"
#include "parallel.h"
#include "t2exp/error.h"

#define SPAN_PAR_MIN ((size_t)1 << 20) /* below this one thread: waking the pool costs more */
#define SPAN_MAX_PARTS 8
#define SPAN_CHUNK ((size_t)256 << 10) /* copied, then checksummed while still in L2 */

typedef struct span_job {
    t2__ckpt_span *s;
    const size_t *at; /* bytes of the spans before each one */
    int n, parts, want_crc;
    size_t total;
    uint32_t *piece; /* [span * parts + part] */
} span_job;

/* The copy goes to memory the process has not touched for a while (a restored model): with
 * streaming stores the CPU writes whole lines without reading them first, which on a cold
 * destination is a third less memory traffic (the kernel's read(2) copy avoids that read too). */
static void copy_stream(unsigned char *d, const unsigned char *s, size_t n)
{
#if defined(__SSE2__)
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > n) head = n;
    memcpy(d, s, head);
    size_t i = head;
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 48));
        _mm_stream_si128((__m128i *)(void *)(d + i), a);
        _mm_stream_si128((__m128i *)(void *)(d + i + 16), b);
        _mm_stream_si128((__m128i *)(void *)(d + i + 32), c);
        _mm_stream_si128((__m128i *)(void *)(d + i + 48), e);
    }
    memcpy(d + i, s + i, n - i);
#else
    memcpy(d, s, n);
#endif
}

static void span_parts(void *ctx, size_t begin, size_t end)
{
    const span_job *j = ctx;
    for (size_t part = begin; part < end; part++) {
        size_t lo = j->total * part / (size_t)j->parts, hi = j->total * (part + 1) / (size_t)j->parts;
        for (int i = 0; i < j->n; i++) {
            const t2__ckpt_span *s = &j->s[i];
            size_t a = j->at[i] > lo ? j->at[i] : lo, b = j->at[i] + s->len < hi ? j->at[i] + s->len : hi;
            uint32_t crc = 0;
            for (size_t x = a; x < b; x += SPAN_CHUNK) {
                size_t n = b - x < SPAN_CHUNK ? b - x : SPAN_CHUNK, o = x - j->at[i];
                /* Copy first: its loads stream the chunk in at full speed (three CRC lanes
                 * stall on a cold source), and the checksum then reads it from the cache. */
                if (s->dst) copy_stream(s->dst + o, s->src + o, n);
                if (j->want_crc) crc = t2__crc32c(crc, s->src + o, n);
            }
            j->piece[(size_t)i * (size_t)j->parts + part] = crc;
        }
    }
#if defined(__SSE2__)
    _mm_sfence(); /* the streamed lines are visible before the pool's join says "done" */
#endif
}

int t2__ckpt_spans(t2__ckpt_span *spans, int n, int want_crc)
{
    if (n <= 0) return T2_OK;
    size_t total = 0;
    size_t *at = malloc((size_t)n * sizeof *at);
    if (!at) return t2_seterr(T2_ENOMEM, "checkpoint: out of memory");
    for (int i = 0; i < n; i++) {
        at[i] = total;
        total += spans[i].len;
    }
    int parts = total >= SPAN_PAR_MIN ? t2__pool_threads() : 1;
    if (parts > SPAN_MAX_PARTS) parts = SPAN_MAX_PARTS;
    if (parts < 1) parts = 1;
    uint32_t *piece = malloc((size_t)n * (size_t)parts * sizeof *piece);
    if (!piece) {
        free(at);
        return t2_seterr(T2_ENOMEM, "checkpoint: out of memory");
    }
    span_job j = {spans, at, n, parts, want_crc, total, piece};
    if (parts > 1) t2__parallel_for((size_t)parts, 1, span_parts, &j);
    else span_parts(&j, 0, 1);
    for (int i = 0; want_crc && i < n; i++) {
        uint32_t c = 0;
        for (int part = 0; part < parts; part++) {
            size_t lo = total * (size_t)part / (size_t)parts, hi = total * (size_t)(part + 1) / (size_t)parts;
            size_t a = at[i] > lo ? at[i] : lo, b = at[i] + spans[i].len < hi ? at[i] + spans[i].len : hi;
            if (a < b) c = t2__crc32c_combine(c, piece[(size_t)i * (size_t)parts + (size_t)part], b - a);
        }
        spans[i].crc = c;
    }
    free(piece);
    free(at);
    return T2_OK;
}
