/* test_config_limits.c — inputs that must not hurt (issue 18): aliases that expand a small file
 * past the byte budget are refused at the alias, ordinary anchors still work; a YAML map with
 * hundreds of thousands of keys parses in linear time (big enough that a per-key linear scan
 * would run past ctest's timeout); plans past the stated maxima (max_trials, lengths) are refused
 * with the key's position; a config path that is not a regular file is refused before reading. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "test_config_util.h"
#include "../../configs/config.h" /* configs/ is not on the test include path */

/* A growable text buffer for generated configs. */
typedef struct text {
    char *p;
    size_t n, cap;
} text;

static void add(text *t, const char *s)
{
    size_t len = strlen(s);
    if (t->n + len + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->n + len + 1) cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->n, s, len + 1);
    t->n += len;
}

/* A 1 MiB string aliased 10 x 10 times: 100 MiB expanded from a 1 MiB file, past the budget of
 * 64 MiB + 4 x the text. The refusal names the alias that passes it. */
static void test_alias_budget(void)
{
    text t = {0};
    add(&t, MINIMAL "data:\n  s: &s \"");
    char chunk[1025];
    memset(chunk, 'x', 1024);
    chunk[1024] = '\0';
    for (int k = 0; k < 1024; k++) add(&t, chunk);
    add(&t, "\"\n  l1: &l1 [");
    for (int k = 0; k < 10; k++) add(&t, k ? ", *s" : "*s");
    add(&t, "]\n  l2: [");
    for (int k = 0; k < 10; k++) add(&t, k ? ", *l1" : "*l1");
    add(&t, "]\n");
    t2__config *cfg = NULL;
    CHECK_RC(t2__config_load_string(t.p, "bomb.yaml", NULL, 0, &cfg), T2_EFORMAT);
    CHECK(cfg == NULL);
    /* Budget 64 MiB + 4 * len = 68.2 MiB; the string and l1 take 11 MiB, which leaves room for 5
     * copies of l1 (10 MiB each): the 6th, at column 8 + 5 * 5 of line 11, is refused. */
    char want[512];
    snprintf(want, sizeof want,
             "bomb.yaml:11:33: the document expands to more than %zu bytes (after expanding aliases: 64 MiB plus 4 "
             "times the text, counting 64 bytes per node); refusing to load",
             ((size_t)64 << 20) + 4 * t.n);
    CHECK_STR(t2_errmsg(), want);

    /* The same string aliased 10 times fits (11 MiB): aliases as such are fine. */
    t.n = 0;
    add(&t, MINIMAL "data:\n  s: &s \"");
    for (int k = 0; k < 1024; k++) add(&t, chunk);
    add(&t, "\"\n  l1: [*s, *s, *s, *s, *s, *s, *s, *s, *s, *s]\n");
    CHECK_OK(t2__config_load_string(t.p, "ten.yaml", NULL, 0, &cfg));
    if (cfg) {
        const t2__val *l1 = t2__val_lookup(cfg->data, "l1");
        CHECK(l1 && l1->n == 10 && l1->items[9]->len == 1 << 20);
    }
    t2__config_free(cfg);
    free(t.p);
}

/* Anchors for shared hyperparameter blocks, the way people use them. */
static void test_alias_normal(void)
{
    t2__config *cfg = NULL;
    CHECK_OK(t2__config_load_string("searcher: {name: grid, metric: loss, max_length: {batches: 1}}\n"
                                    "hyperparameters:\n"
                                    "  global_batch_size: 32\n"
                                    "  enc: &layer {units: {type: int, minval: 8, maxval: 64, count: 2}, act: relu}\n"
                                    "  dec: *layer\n"
                                    "  lr: &lr {type: log, minval: -4, maxval: -2, count: 3}\n"
                                    "  wd: *lr\n",
                                    "shared.yaml", NULL, 0, &cfg));
    if (!cfg) return;
    const t2__hparam *u = t2__hparam_find(cfg->hparams, "dec.units"), *wd = t2__hparam_find(cfg->hparams, "wd");
    CHECK(u && u->kind == T2__HP_INT && u->imin == 8 && u->imax == 64 && u->count == 2);
    CHECK(wd && wd->kind == T2__HP_LOG && wd->count == 3);
    uint64_t points = 0;
    CHECK_OK(t2__hparam_grid_size(cfg->hparams, &points));
    CHECK(points == 2 * 2 * 3 * 3);
    t2__config_free(cfg);
}

/* 400,000 keys in one map. With a linear scan per key this is 8e10 string compares in the
 * loader and again in the value tree (a 100k-key map took over a minute), well past ctest's
 * 600 s; with the hash index it takes about a second. */
#define NKEYS 400000

static void test_yaml_many_keys(void)
{
    text t = {0};
    char line[64];
    add(&t, MINIMAL "data:\n");
    for (int k = 0; k < NKEYS; k++) {
        snprintf(line, sizeof line, "  k%d: %d\n", k, k);
        add(&t, line);
    }
    t2__config *cfg = NULL;
    CHECK_OK(t2__config_load_string(t.p, "keys.yaml", NULL, 0, &cfg));
    if (cfg) {
        CHECK(cfg->data->n == NKEYS);
        const t2__val *v = t2__val_map_get(cfg->data, "k399999");
        CHECK(v && v->kind == T2__VAL_INT && v->i == NKEYS - 1);
        v = t2__val_map_get(cfg->data, "k12345");
        CHECK(v && v->i == 12345);
        CHECK(strcmp(cfg->data->keys[NKEYS - 1], "k399999") == 0); /* file order is kept */
        CHECK(t2__val_map_get(cfg->data, "k400000") == NULL);
    }
    t2__config_free(cfg);

    /* A duplicate as the very last key is still found, at its line. */
    add(&t, "  k0: again\n");
    CHECK_RC(t2__config_load_string(t.p, "keys.yaml", NULL, 0, &cfg), T2_EFORMAT);
    snprintf(line, sizeof line, "keys.yaml:%d:3: data.k0: duplicate key", 8 + 1 + NKEYS);
    CHECK_STR(t2_errmsg(), line);
    free(t.p);
}

/* Many anchors: each alias finds its anchor by name in O(1), and anchored keys are recognised
 * without a search. */
static void test_many_anchors(void)
{
    text t = {0};
    char line[96];
    add(&t, MINIMAL "data:\n");
    for (int k = 0; k < 100000; k++) {
        snprintf(line, sizeof line, "  &a%d k%d: &v%d %d\n", k, k, k, k);
        add(&t, line);
    }
    add(&t, "  last: [*v0, *v99999, *a5]\n");
    t2__config *cfg = NULL;
    CHECK_OK(t2__config_load_string(t.p, "anchors.yaml", NULL, 0, &cfg));
    if (cfg) {
        const t2__val *l = t2__val_map_get(cfg->data, "last");
        CHECK(l && l->n == 3 && l->items[0]->i == 0 && l->items[1]->i == 99999 && strcmp(l->items[2]->s, "k5") == 0);
    }
    t2__config_free(cfg);
    free(t.p);
}

static void expect_err(int line, const char *yaml, const char *ov, const char *msg)
{
    t2__config *cfg = (t2__config *)1;
    const char *ovs[1] = {ov};
    int rc = t2__config_load_string(yaml, "const.yaml", ovs, ov ? 1 : 0, &cfg);
    if (rc != T2_EINVAL || cfg != NULL || strcmp(t2_errmsg(), msg) != 0) {
        fprintf(stderr, "test_config_limits.c:%d: rc %d\n  got  \"%s\"\n  want \"%s\"\n", line, rc, t2_errmsg(), msg);
        check_failures++;
    }
    if (rc == T2_OK) t2__config_free(cfg);
}
#define EXPECT_ERR(yaml, ov, msg) expect_err(__LINE__, yaml, ov, msg)

#define RANDOM                                                                                    \
    "hyperparameters:\n  global_batch_size: 32\n"                                                 \
    "searcher:\n  name: random\n  metric: loss\n  max_length: {batches: 1}\n"

static void test_plan_caps(void)
{
    EXPECT_ERR(RANDOM "  max_trials: 9223372036854775807\n", NULL,
               "const.yaml:7:15: searcher.max_trials: expected at most 1000000 trials, got 9223372036854775807");
    EXPECT_ERR(RANDOM "  max_trials: 4\n", "searcher.max_trials=1000001",
               "--config searcher.max_trials=1000001: searcher.max_trials: expected at most 1000000 trials, got 1000001");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\n"
               "searcher: {name: adaptive_asha, metric: loss, max_length: {batches: 64}, max_trials: 2000000}\n",
               NULL, "const.yaml:3:86: searcher.max_trials: expected at most 1000000 trials, got 2000000");
    t2__config *cfg = NULL;
    CHECK_OK(t2__config_load_string(RANDOM "  max_trials: 1000000\n", "const.yaml", NULL, 0, &cfg));
    t2__config_free(cfg);

    /* A grid whose product of counts overflows 64 bits, and one just past the cap. */
    EXPECT_ERR("searcher: {name: grid, metric: loss, max_length: {batches: 1}}\n"
               "hyperparameters:\n  global_batch_size: 32\n"
               "  a: {type: double, minval: 0, maxval: 1, count: 4294967296}\n"
               "  b: {type: double, minval: 0, maxval: 1, count: 4294967296}\n"
               "  c: {type: double, minval: 0, maxval: 1, count: 4294967296}\n",
               NULL, "const.yaml:3:3: hyperparameters: the grid has more than 18446744073709551615 points, more than the "
                     "1000000 a grid search may have");
    EXPECT_ERR("searcher: {name: grid, metric: loss, max_length: {batches: 1}}\n"
               "hyperparameters:\n  global_batch_size: 32\n"
               "  a: {type: int, minval: 0, maxval: 100000, count: 1001}\n"
               "  b: {type: categorical, vals: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}\n"
               "  c: {type: double, minval: 0, maxval: 1, count: 100}\n",
               NULL, "const.yaml:3:3: hyperparameters: the grid has 1001000 points, more than the 1000000 a grid "
                     "search may have");

    /* Lengths: a count that no training could reach, and one that would overflow in batches. */
    EXPECT_ERR(RANDOM "  max_trials: 4\n", "searcher.max_length.batches=9223372036854775807",
               "--config searcher.max_length.batches=9223372036854775807: searcher.max_length.batches: expected at "
               "most 1000000000000 batches, got 9223372036854775807");
    EXPECT_ERR(RANDOM "  max_trials: 4\nmin_validation_period: {epochs: 1000001}\n", NULL,
               "const.yaml:8:33: min_validation_period.epochs: expected at most 1000000 epochs, got 1000001");
    EXPECT_ERR(RANDOM "  max_trials: 4\nrecords_per_epoch: 1000000000001\n", NULL,
               "const.yaml:8:20: records_per_epoch: expected at most 1000000000000 records, got 1000000000001");
}

/* Only regular files are read: a FIFO would block open() (tested with mkfifo in
 * it_config_hostile, under a timeout), a device or a directory is the wrong path. */
static void test_not_regular(void)
{
    t2__config *cfg = (t2__config *)1;
    CHECK_RC(t2__config_load("/dev/null", NULL, 0, &cfg), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "/dev/null: not a regular file (a character device); a config must be a YAML file");
    CHECK(cfg == NULL);
    CHECK_RC(t2__config_load("/", NULL, 0, &cfg), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "/: not a regular file (a directory); a config must be a YAML file");
}

int main(void)
{
    test_alias_budget();
    test_alias_normal();
    test_yaml_many_keys();
    test_many_anchors();
    test_plan_caps();
    test_not_regular();
    return check_report("test_config_limits");
}
