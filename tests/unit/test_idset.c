/* test_idset.c — the searchers' set of ended request ids (searcher.c): a watermark below which
 * every id is in, and a window of bits above it. Ids added far out of order (ASHA's rungs) stay
 * O(1) each (a sorted list made previewing 300,000 ASHA trials take 44 s); membership, the count,
 * and a snapshot's round trip hold across the window's moves, checked against a plain array. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "searchers/searcher_internal.h"

enum { N = 200000 };

int main(void)
{
    t2__idset set = {0};
    unsigned char *in = calloc(N, 1);
    int64_t *order = malloc(N * sizeof *order);
    CHECK(in && order);
    if (!in || !order) return check_report("test_idset");
    /* Blocks of 5,000 ids added in a shuffled order, the blocks in order, then a straggler per
     * block added at the very end: the watermark stays low while the window grows and moves. */
    uint64_t state = 12345;
    for (int64_t i = 0; i < N; i++) order[i] = i;
    for (int64_t b = 0; b < N; b += 5000)
        for (int64_t i = b + 4999; i > b; i--) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            int64_t j = b + (int64_t)((state >> 33) % (uint64_t)(i - b + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    int64_t added = 0;
    for (int64_t i = 0; i < N; i++) {
        int64_t id = order[i];
        if (id % 5000 == 17) continue; /* the stragglers */
        CHECK(t2__idset_add(&set, id) == 1);
        in[id] = 1;
        added++;
        if (i % 997 == 0) CHECK(t2__idset_add(&set, id) == 0); /* twice: no change */
    }
    CHECK(t2__idset_count(&set) == added);
    int wrong = 0;
    for (int64_t id = 0; id < N; id++) wrong += t2__idset_has(&set, id) != in[id];
    CHECK(wrong == 0);
    /* A snapshot's round trip keeps every member, and only them. */
    t2__val *v = NULL;
    t2__idset back = {0};
    CHECK(t2__idset_to_val(&set, &v) == T2_OK);
    CHECK(v && t2__idset_from_val(v, N, "ended", &back) == T2_OK);
    wrong = 0;
    for (int64_t id = 0; id < N; id++) wrong += t2__idset_has(&back, id) != in[id];
    CHECK(wrong == 0 && t2__idset_count(&back) == added);
    t2__val_free(v);
    t2__idset_free(&back);
    /* Hostile snapshots: one id far above the watermark is refused, not given gigabytes of window
     * (2^33 took 1 GiB); ids near INT64_MAX survive the round trip (the window's end overflowed). */
    {
        t2__val *h = NULL;
        size_t off = 0;
        t2__idset hs = {0};
        const char far[] = "{\"low\": 0, \"ids\": [8589934592]}";
        CHECK(t2__val_from_json(far, strlen(far), &h, &off) == T2_OK);
        CHECK(h && t2__idset_from_val(h, INT64_MAX, "ended", &hs) == T2_EFORMAT);
        t2__val_free(h);
        const char top[] = "{\"low\": 9223372036854775700, \"ids\": [9223372036854775801]}";
        CHECK(t2__val_from_json(top, strlen(top), &h, &off) == T2_OK);
        CHECK(h && t2__idset_from_val(h, INT64_MAX, "ended", &hs) == T2_OK);
        CHECK(t2__idset_has(&hs, INT64_C(9223372036854775801)) && !t2__idset_has(&hs, INT64_C(9223372036854775802)));
        t2__val *again = NULL;
        CHECK(t2__idset_to_val(&hs, &again) == T2_OK);
        const t2__val *ids = again ? t2__val_map_get(again, "ids") : NULL;
        CHECK(ids && ids->n == 1 && ids->items[0]->i == INT64_C(9223372036854775801));
        t2__val_free(again);
        t2__val_free(h);
        t2__idset_free(&hs);
        t2_clearerr();
    }
    /* The stragglers: then every id is in, below the watermark. */
    for (int64_t id = 17; id < N; id += 5000) CHECK(t2__idset_add(&set, id) == 1);
    CHECK(t2__idset_count(&set) == N && set.low == N && set.n == 0);
    CHECK(t2__idset_has(&set, N - 1) && !t2__idset_has(&set, N));
    t2__idset_free(&set);
    free(in);
    free(order);
    return check_report("test_idset");
}
