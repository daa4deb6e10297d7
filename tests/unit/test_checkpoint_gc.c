/* test_checkpoint_gc.c — the garbage-collection policy against a brute-force reference over every
 * save_* combination on many small random experiments, plus hand-worked cases; CRC-32C (known
 * values, hardware vs table, combine) and uuid format. */
#include "test_checkpoint_util.h"
#include <math.h>
#include <sys/stat.h>
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

/* What garbage collection may delete: only "<uuid>.tar[.gz|.zst]" directly inside the
 * experiment's checkpoint directory, as a regular file. Paths a store row or a trial's report
 * could hold that lead elsewhere are refused, whatever they point at. */
static void gc_paths(void)
{
    const char *u = "0f8fad5b-d9cb-469f-a165-70867728950e";
    CHECK(t2__uuid_valid(u));
    CHECK(!t2__uuid_valid("0F8FAD5B-D9CB-469F-A165-70867728950E") && !t2__uuid_valid("../../etc/passwd"));
    CHECK(!t2__uuid_valid("0f8fad5b-d9cb-469f-a165-70867728950") && !t2__uuid_valid(NULL));
    char name[4400], uuid[37];
    t2__ckpt_compression comp = T2__CKPT_COMPRESS_NONE;
    snprintf(name, sizeof name, "%s.tar.zst", u);
    CHECK(t2__ckpt_name_parse(name, uuid, &comp) && comp == T2__CKPT_COMPRESS_ZSTD && strcmp(uuid, u) == 0);
    snprintf(name, sizeof name, "%s.tar.gz", u);
    CHECK(t2__ckpt_name_parse(name, NULL, &comp) && comp == T2__CKPT_COMPRESS_GZIP);
    snprintf(name, sizeof name, "%s.tar", u);
    CHECK(t2__ckpt_name_parse(name, NULL, NULL));
    snprintf(name, sizeof name, "%s.tar/../x", u);
    CHECK(!t2__ckpt_name_parse(name, NULL, NULL));
    snprintf(name, sizeof name, "%s.zip", u);
    CHECK(!t2__ckpt_name_parse(name, NULL, NULL) && !t2__ckpt_name_parse("notes.txt", NULL, NULL));
    snprintf(name, sizeof name, "%s.tar.gz.tmp-123-0", u);
    CHECK(t2__ckpt_temp_name(name));
    snprintf(name, sizeof name, "%s.tar.tmp-123-", u);
    CHECK(!t2__ckpt_temp_name(name) && !t2__ckpt_temp_name("x.tar.tmp-1-2"));

    char *root = make_dir();
    CHECK(root != NULL);
    if (!root) return;
    char dir[4200], path[8800], victim[4400], other[4400];
    snprintf(dir, sizeof dir, "%s/ck", root);
    snprintf(other, sizeof other, "%s/ck-other", root);
    CHECK(mkdir(dir, 0700) == 0 && mkdir(other, 0700) == 0);
    snprintf(victim, sizeof victim, "%s/victim", root);
    FILE *f = fopen(victim, "w");
    CHECK(f != NULL);
    if (f) fclose(f);

    snprintf(path, sizeof path, "%s/%s.tar", dir, u);
    CHECK_RC(t2__ckpt_gc_path_check(dir, path), T2_ENOTFOUND); /* the right shape, no file yet */
    f = fopen(path, "w");
    if (f) fclose(f);
    CHECK_OK(t2__ckpt_gc_path_check(dir, path));
    snprintf(name, sizeof name, "%s/", dir); /* a trailing slash names the same directory */
    CHECK_OK(t2__ckpt_gc_path_check(name, path));
    CHECK(unlink(path) == 0);

    /* ../../etc/passwd-style, absolute, a sibling directory with the same prefix, a subdirectory,
     * a name that is not a checkpoint's. */
    snprintf(path, sizeof path, "%s/../../../../../../etc/passwd", dir);
    CHECK_RC(t2__ckpt_gc_path_check(dir, path), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "refusing to delete") != NULL);
    snprintf(path, sizeof path, "%s/%s.tar/../../victim", dir, u);
    CHECK_RC(t2__ckpt_gc_path_check(dir, path), T2_EINVAL);
    CHECK_RC(t2__ckpt_gc_path_check(dir, "/etc/passwd"), T2_EINVAL);
    CHECK_RC(t2__ckpt_gc_path_check(dir, victim), T2_EINVAL);
    snprintf(path, sizeof path, "%s/%s.tar", other, u);
    CHECK_RC(t2__ckpt_gc_path_check(dir, path), T2_EINVAL);
    snprintf(path, sizeof path, "%s/sub/%s.tar", dir, u);
    CHECK_RC(t2__ckpt_gc_path_check(dir, path), T2_EINVAL);
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    CHECK_RC(t2__ckpt_gc_path_check(dir, path), T2_EINVAL);
    CHECK_RC(t2__ckpt_gc_path_check(dir, ""), T2_EINVAL);
    CHECK_RC(t2__ckpt_gc_path_check(dir, dir), T2_EINVAL);

    /* A checkpoint name that is a symlink to a file outside: refused, not followed. */
    snprintf(path, sizeof path, "%s/%s.tar.gz", dir, u);
    CHECK(symlink(victim, path) == 0);
    CHECK_RC(t2__ckpt_gc_path_check(dir, path), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "symbolic link") != NULL);
    CHECK(unlink(path) == 0);
    /* A checkpoint name that is a directory. */
    snprintf(path, sizeof path, "%s/%s.tar.zst", dir, u);
    CHECK(mkdir(path, 0700) == 0);
    CHECK_RC(t2__ckpt_gc_path_check(dir, path), T2_EINVAL);
    CHECK(rmdir(path) == 0);
    CHECK(access(victim, F_OK) == 0);

    CHECK(unlink(victim) == 0 && rmdir(dir) == 0 && rmdir(other) == 0 && rmdir(root) == 0);
}

int main(void)
{
    exhaustive();
    hand_cases();
    crc();
    uuids();
    gc_paths();
    return check_report("test_checkpoint_gc");
}
