/* test_checkpoint_gc.c — the garbage-collection policy against a brute-force reference over every
 * save_* combination on many small random experiments, plus hand-worked cases; CRC-32C (known
 * values, hardware vs table, combine) and uuid format. */
#include "test_checkpoint_util.h"
#include <math.h>
#include "check.h"
#include "checkpoints/crc32c.h"

/* Does j rank before i for "best"? Better metric, or the same metric and newer. */
static int beats(const t2__ckpt_gc_item *j, const t2__ckpt_gc_item *i, int smaller)
{
    if (j->metric != i->metric) return smaller ? j->metric < i->metric : j->metric > i->metric;
    return j->order > i->order;
}

static void reference(const t2__ckpt_gc_item *it, size_t n, const t2__ckpt_gc_params *p, unsigned char *keep)
{
    for (size_t i = 0; i < n; i++) {
        int64_t exp_rank = 0, trial_rank = 0, newer = 0;
        for (size_t j = 0; j < n; j++) {
            if (j == i) continue;
            int same = it[j].trial_id == it[i].trial_id;
            if (!isnan(it[i].metric) && !isnan(it[j].metric) && beats(&it[j], &it[i], p->smaller_is_better)) {
                exp_rank++;
                trial_rank += same;
            }
            newer += same && it[j].order > it[i].order;
        }
        int has = !isnan(it[i].metric);
        keep[i] = (has && exp_rank < p->save_experiment_best) || (has && trial_rank < p->save_trial_best) ||
                  newer < p->save_trial_latest;
    }
}

static void exhaustive(void)
{
    t2_rng r;
    t2_rng_seed(&r, 2024);
    const double metrics[] = {NAN, 0.1, 0.2, 0.2, 0.5, -1.0, INFINITY};
    int cases = 0, mismatches = 0;
    for (int round = 0; round < 3000; round++) {
        t2__ckpt_gc_item it[10];
        size_t n = (size_t)t2_rng_below(&r, 11);
        /* Orders are a random permutation, as the store's row ids need not follow trial order. */
        int64_t order[10];
        for (size_t i = 0; i < n; i++) order[i] = (int64_t)i + 1;
        for (size_t i = n; i > 1; i--) {
            size_t k = (size_t)t2_rng_below(&r, i);
            int64_t t = order[i - 1];
            order[i - 1] = order[k];
            order[k] = t;
        }
        for (size_t i = 0; i < n; i++)
            it[i] = (t2__ckpt_gc_item){(int64_t)t2_rng_below(&r, 3) + 1, (int64_t)i * 100,
                                       metrics[t2_rng_below(&r, sizeof metrics / sizeof *metrics)], order[i]};
        for (int e = 0; e <= 4; e++)
            for (int b = 0; b <= 4; b++)
                for (int l = 0; l <= 4; l++)
                    for (int s = 0; s <= 1; s++) {
                        t2__ckpt_gc_params p = {e, b, l, s};
                        unsigned char got[10], want[10];
                        memset(got, 7, sizeof got);
                        CHECK_OK(t2__ckpt_gc_select(it, n, &p, got));
                        reference(it, n, &p, want);
                        cases++;
                        if (memcmp(got, want, n)) mismatches++;
                    }
    }
    CHECK(mismatches == 0);
    CHECK(cases == 3000 * 250);
}

static void hand_cases(void)
{
    /* Trial 1: metrics 0.5, 0.3, none (newest); trial 2: 0.4, 0.6. */
    t2__ckpt_gc_item it[5] = {
        {1, 100, 0.5, 1}, {1, 200, 0.3, 2}, {1, 300, NAN, 3}, {2, 100, 0.4, 4}, {2, 200, 0.6, 5},
    };
    unsigned char k[5];
    t2__ckpt_gc_params p = {0, 1, 1, 1}; /* the config defaults */
    CHECK_OK(t2__ckpt_gc_select(it, 5, &p, k));
    CHECK(!k[0] && k[1] && k[2] && k[3] && k[4]);
    p = (t2__ckpt_gc_params){1, 0, 0, 1};
    CHECK_OK(t2__ckpt_gc_select(it, 5, &p, k));
    CHECK(!k[0] && k[1] && !k[2] && !k[3] && !k[4]);
    p = (t2__ckpt_gc_params){2, 0, 0, 0}; /* larger is better: 0.6 and 0.5 */
    CHECK_OK(t2__ckpt_gc_select(it, 5, &p, k));
    CHECK(k[0] && !k[1] && !k[2] && !k[3] && k[4]);
    p = (t2__ckpt_gc_params){0, 0, 0, 1};
    CHECK_OK(t2__ckpt_gc_select(it, 5, &p, k));
    CHECK(!k[0] && !k[1] && !k[2] && !k[3] && !k[4]);
    p = (t2__ckpt_gc_params){0, 0, 2, 1};
    CHECK_OK(t2__ckpt_gc_select(it, 5, &p, k));
    CHECK(!k[0] && k[1] && k[2] && k[3] && k[4]);
    p = (t2__ckpt_gc_params){100, 100, 100, 1};
    CHECK_OK(t2__ckpt_gc_select(it, 5, &p, k));
    CHECK(k[0] && k[1] && k[2] && k[3] && k[4]);
    /* A tie: the newer of two equal metrics is the best. */
    t2__ckpt_gc_item tie[2] = {{1, 100, 0.2, 10}, {1, 200, 0.2, 11}};
    p = (t2__ckpt_gc_params){1, 0, 0, 1};
    CHECK_OK(t2__ckpt_gc_select(tie, 2, &p, k));
    CHECK(!k[0] && k[1]);
    p = (t2__ckpt_gc_params){-1, 0, 0, 1};
    CHECK_RC(t2__ckpt_gc_select(tie, 2, &p, k), T2_EINVAL);
    p = (t2__ckpt_gc_params){1, 1, 1, 1};
    CHECK_OK(t2__ckpt_gc_select(NULL, 0, &p, NULL));
}

static void crc(void)
{
    CHECK(t2__crc32c(0, "123456789", 9) == 0xe3069283u);
    CHECK(t2__crc32c_sw(0, "123456789", 9) == 0xe3069283u);
    CHECK(t2__crc32c(0, "", 0) == 0);
    unsigned char zeros[32] = {0};
    CHECK(t2__crc32c(0, zeros, 32) == 0x8a9136aau); /* RFC 3720 B.4 */
    size_t n = 100000;
    unsigned char *b = malloc(n + 64);
    t2_rng r;
    t2_rng_seed(&r, 3);
    for (size_t i = 0; i < n + 64; i++) b[i] = (unsigned char)t2_rng_u64(&r);
    int bad = 0;
    for (int t = 0; t < 400; t++) {
        size_t off = (size_t)t2_rng_below(&r, 64), len = (size_t)t2_rng_below(&r, t < 200 ? 40000 : n);
        uint32_t whole = t2__crc32c(0, b + off, len);
        if (whole != t2__crc32c_sw(0, b + off, len)) bad++;
        size_t k = len ? (size_t)t2_rng_below(&r, len) : 0;
        uint32_t a = t2__crc32c(0, b + off, k);
        if (t2__crc32c(a, b + off + k, len - k) != whole) bad++;
        if (t2__crc32c_combine(a, t2__crc32c(0, b + off + k, len - k), len - k) != whole) bad++;
    }
    CHECK(bad == 0);
    free(b);
}

static void uuids(void)
{
    char a[37], b[37];
    CHECK_OK(t2__uuid_v4(a));
    CHECK_OK(t2__uuid_v4(b));
    CHECK(strlen(a) == 36 && strcmp(a, b) != 0);
    CHECK(a[8] == '-' && a[13] == '-' && a[18] == '-' && a[23] == '-' && a[14] == '4');
    CHECK(strchr("89ab", a[19]) != NULL);
    for (int i = 0; i < 36; i++) CHECK(a[i] == '-' || (a[i] >= '0' && a[i] <= '9') || (a[i] >= 'a' && a[i] <= 'f'));
}

int main(void)
{
    exhaustive();
    hand_cases();
    crc();
    uuids();
    return check_report("test_checkpoint_gc");
}
