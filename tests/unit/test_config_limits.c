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
    CHECK_RC(t2__config_load_string(t.p, "keys.yaml", NULL, 0, &cfg), T2_EINVAL);
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

/* checkpoint_storage paths as Determined's shared_fs takes them: host_path absolute, storage_path
 * under it. host_path "" used to be taken as set (checkpoints went to /<store id>/experiment-N at
 * the filesystem root), and storage_path "../../../x" was joined onto the base and escaped it. */
#define CKPT(lines) RANDOM "  max_trials: 1\ncheckpoint_storage:\n" lines

static void test_checkpoint_paths(void)
{
    EXPECT_ERR(CKPT("  host_path: \"\"\n"), NULL,
               "const.yaml:9:14: checkpoint_storage.host_path: expected an absolute path, got an empty string (leave "
               "host_path out, or null, for the default: the t2exp home)");
    EXPECT_ERR(CKPT("  host_path: ckpts\n"), NULL,
               "const.yaml:9:14: checkpoint_storage.host_path: expected an absolute path (as Determined's shared_fs "
               "requires), got \"ckpts\"");
    EXPECT_ERR(CKPT("  host_path: /data\n"), "checkpoint_storage.host_path=./rel",
               "--config checkpoint_storage.host_path=./rel: checkpoint_storage.host_path: expected an absolute path "
               "(as Determined's shared_fs requires), got \"./rel\"");
    EXPECT_ERR(CKPT("  host_path: /data\n  storage_path: ''\n"), NULL,
               "const.yaml:10:17: checkpoint_storage.storage_path: expected a directory under host_path, got an empty "
               "string (leave storage_path out, or null, to use host_path itself)");
#define DOTDOT(p) "checkpoint_storage.storage_path: has a '..' component, got " p ": storage_path is a directory " \
                  "under host_path (or the t2exp home), never above it (Determined: the storage path must be a "  \
                  "subdirectory of the host path)"
    EXPECT_ERR(CKPT("  host_path: /data\n  storage_path: \"../../../x\"\n"), NULL,
               "const.yaml:10:17: " DOTDOT("the string \"../../../x\""));
    EXPECT_ERR(CKPT("  storage_path: a/b/..\n"), NULL, "const.yaml:9:17: " DOTDOT("\"a/b/..\""));
    EXPECT_ERR(CKPT("  host_path: /data\n"), "checkpoint_storage.storage_path=/data/../etc",
               "--config checkpoint_storage.storage_path=/data/../etc: " DOTDOT("\"/data/../etc\""));
    /* An absolute storage_path outside host_path; at host_path when an override set it. */
    EXPECT_ERR(CKPT("  host_path: /data\n  storage_path: /database\n"), NULL,
               "const.yaml:10:17: checkpoint_storage.storage_path: \"/database\" is not under host_path \"/data\": an "
               "absolute storage_path must be host_path or a directory under it (as in Determined)");
    EXPECT_ERR(CKPT("  host_path: /data\n  storage_path: /data/x\n"), "checkpoint_storage.host_path=/srv",
               "--config checkpoint_storage.host_path=/srv: checkpoint_storage.storage_path: \"/data/x\" is not under "
               "host_path \"/srv\": an absolute storage_path must be host_path or a directory under it (as in "
               "Determined)");
    /* Both wrong: both reported. */
    t2__config *cfg = (t2__config *)1;
    CHECK_RC(t2__config_load_string(CKPT("  host_path: ''\n  storage_path: ..\n"), "const.yaml", NULL, 0, &cfg),
             T2_EINVAL);
    size_t nerr = 0, more = 0;
    const char *const *errs = t2__config_errors(&nerr, &more);
    CHECK(nerr == 2 && more == 0);
    if (nerr == 2) {
        static const char a[] = "const.yaml:9:14: checkpoint_storage.host_path: expected an absolute path";
        static const char b[] = "const.yaml:10:17: checkpoint_storage.storage_path: has a '..' component";
        CHECK(strncmp(errs[0], a, sizeof a - 1) == 0);
        CHECK(strncmp(errs[1], b, sizeof b - 1) == 0);
    }

    /* Still fine: the defaults (null), an absolute host_path with a relative or absolute storage_path
     * under it (spelt with "." and "//"), "." (host_path itself), a name that only starts with two
     * dots, and an absolute storage_path alone (the base itself, t2exp's extension). */
    static const char *const ok[] = {
        CKPT("  host_path:\n  storage_path: ~\n"),
        CKPT("  host_path: /data\n  storage_path: ckpts/run1\n"),
        CKPT("  host_path: /data/\n  storage_path: /data//./ckpts/\n"),
        CKPT("  host_path: /data\n  storage_path: /data\n"),
        CKPT("  host_path: /\n  storage_path: /anything\n"),
        CKPT("  host_path: /data\n  storage_path: .\n"),
        CKPT("  host_path: /data\n  storage_path: ..x/...\n"),
        CKPT("  storage_path: /var/ckpts\n"),
        CKPT("  storage_path: ckpts\n"),
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        cfg = NULL;
        int rc = t2__config_load_string(ok[i], "const.yaml", NULL, 0, &cfg);
        if (rc) fprintf(stderr, "test_checkpoint_paths ok[%zu]: %s\n", i, t2_errmsg());
        CHECK_OK(rc);
        t2__config_free(cfg);
    }
}

/* global_batch_size reaches the trial as an int (t2_ctx_global_batch_size): 9223372036854775807
 * overflowed the runner's records-to-batches rounding, 4294967424 trained with batches of 128 and
 * 2147483648 came out as -2147483648. Bounded wherever it comes from. */
#define GBS_WHY " records a step (the trial API gives the batch size as an int: t2_ctx_global_batch_size), got "
static void test_batch_cap(void)
{
    static const char head[] = "searcher: {name: random, metric: loss, max_length: {records: 100}, max_trials: 2}\n"
                               "hyperparameters:\n";
    char y[512];
    snprintf(y, sizeof y, "%s  global_batch_size: 9223372036854775807\n", head);
    EXPECT_ERR(y, NULL, "const.yaml:3:22: hyperparameters.global_batch_size: expected at most 2147483647" GBS_WHY
                        "9223372036854775807");
    snprintf(y, sizeof y, "%s  global_batch_size: {type: const, val: 2147483648}\n", head);
    EXPECT_ERR(y, NULL, "const.yaml:3:41: hyperparameters.global_batch_size.val: expected at most 2147483647" GBS_WHY
                        "2147483648");
    snprintf(y, sizeof y, "%s  global_batch_size: {type: categorical, vals: [64, 4294967424]}\n", head);
    EXPECT_ERR(y, NULL, "const.yaml:3:53: hyperparameters.global_batch_size.vals.1: expected at most 2147483647" GBS_WHY
                        "4294967424");
    snprintf(y, sizeof y, "%s  global_batch_size: {type: int, minval: 1, maxval: 2147483648}\n", head);
    EXPECT_ERR(y, NULL, "const.yaml:3:53: hyperparameters.global_batch_size.maxval: expected at most 2147483647"
                        GBS_WHY "2147483648");
    snprintf(y, sizeof y, "%s  global_batch_size: 32\n", head);
    EXPECT_ERR(y, "hyperparameters.global_batch_size=2147483648",
               "--config hyperparameters.global_batch_size=2147483648: hyperparameters.global_batch_size: expected at "
               "most 2147483647" GBS_WHY "2147483648");
    EXPECT_ERR(y, "hyperparameters.global_batch_size={type: int, minval: 8, maxval: 9223372036854775807}",
               "--config hyperparameters.global_batch_size={type: int, minval: 8, maxval: 9223372036854775807}: "
               "hyperparameters.global_batch_size.maxval: expected at most 2147483647" GBS_WHY "9223372036854775807");
    /* INT_MAX itself loads, in every form; a grid over the range stays inside it. */
    t2__config *cfg = NULL;
    snprintf(y, sizeof y, "%s  global_batch_size: {type: int, minval: 2147483640, maxval: 2147483647, count: 3}\n",
             head);
    CHECK_OK(t2__config_load_string(y, "const.yaml", NULL, 0, &cfg));
    /* The run-time check (a custom searcher's hparams, a stored trial's). */
    if (cfg) {
        t2__val *hp = t2__val_map();
        int64_t g = 0, s = 0;
        CHECK_OK(t2__val_map_set(hp, "global_batch_size", t2__val_int(2147483647)));
        CHECK_OK(t2__config_batch_sizes(cfg, hp, &g, &s));
        CHECK(g == 2147483647 && s == 2147483647);
        CHECK_OK(t2__val_map_set(hp, "global_batch_size", t2__val_int(INT64_C(4294967424))));
        CHECK_RC(t2__config_batch_sizes(cfg, hp, &g, &s), T2_EINVAL);
        CHECK_STR(t2_errmsg(), "hyperparameters.global_batch_size: expected at most 2147483647 records a step (the "
                               "trial API gives the batch size as an int), got 4294967424");
        t2__val_free(hp);
    }
    t2__config_free(cfg);
}

/* A length in epochs of records_per_epoch records is held to the 10^12 batches the batches form
 * is: 10^6 epochs of 10^12 records (each at its own maximum) were 10^18 batches at a batch of 1. */
#define EPOCH_HEAD "hyperparameters:\n  global_batch_size: 1\nrecords_per_epoch: 1000000000000\n"
#define TOO_LONG(n, b, g, s, bpe)                                                                     \
    n " epochs are " b " batches (records_per_epoch 1000000000000 at global_batch_size " g s ": " bpe \
      " batches an epoch), more than the 1000000000000 batches a length may be"
static void test_epochs_cap(void)
{
    EXPECT_ERR(EPOCH_HEAD "searcher: {name: single, metric: loss, max_length: {epochs: 1000000}}\n", NULL,
               "const.yaml:4:61: searcher.max_length.epochs: "
               TOO_LONG("1000000", "1000000000000000000", "1", "", "1000000000000"));
    /* At the smallest batch the search can give, and at the override that made it so. */
    EXPECT_ERR(EPOCH_HEAD "searcher: {name: single, metric: loss, max_length: {epochs: 3}}\n",
               "hyperparameters.global_batch_size={type: categorical, vals: [4, 2, 8]}",
               "--config hyperparameters.global_batch_size={type: categorical, vals: [4, 2, 8]}: "
               "searcher.max_length.epochs: "
               TOO_LONG("3", "1500000000000", "2", ", the smallest the search gives", "500000000000"));
    EXPECT_ERR(EPOCH_HEAD "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n"
                          "min_validation_period: {epochs: 2}\nmin_checkpoint_period: {epochs: 1000000}\n",
               NULL, "const.yaml:5:33: min_validation_period.epochs: "
                     TOO_LONG("2", "2000000000000", "1", "", "1000000000000") " (and 1 more error)");
    {
        size_t nerr = 0, more = 0;
        const char *const *errs = t2__config_errors(&nerr, &more);
        CHECK(nerr == 2 && more == 0);
        if (nerr == 2)
            CHECK_STR(errs[1], "const.yaml:6:33: min_checkpoint_period.epochs: "
                               TOO_LONG("1000000", "1000000000000000000", "1", "", "1000000000000"));
    }
    EXPECT_ERR(EPOCH_HEAD "searcher: {name: single, metric: loss, time_metric: epochs, max_time: 7}\n",
               "records_per_epoch=300000000000",
               "--config records_per_epoch=300000000000: searcher.max_time: 7 epochs are 2100000000000 batches "
               "(records_per_epoch 300000000000 at global_batch_size 1: 300000000000 batches an epoch), more than the "
               "1000000000000 batches a length may be");
    EXPECT_ERR(EPOCH_HEAD "searcher: {name: pbt, metric: loss, population_size: 2, num_rounds: 4,\n"
                          "  length_per_round: {epochs: 1}}\n",
               NULL, "const.yaml:5:30: searcher.length_per_round.epochs: num_rounds x length_per_round, "
                     TOO_LONG("4", "4000000000000", "1", "", "1000000000000"));
    /* Exactly the cap loads; so does any length with the epochs of the loader (records_per_epoch 0). */
    t2__config *cfg = NULL;
    CHECK_OK(t2__config_load_string(EPOCH_HEAD "searcher: {name: single, metric: loss, max_length: {epochs: 1}}\n"
                                               "min_checkpoint_period: {epochs: 1}\n",
                                    "const.yaml", NULL, 0, &cfg));
    t2__config_free(cfg);
    cfg = NULL;
    CHECK_OK(t2__config_load_string("hyperparameters:\n  global_batch_size: 1\n"
                                    "searcher: {name: single, metric: loss, max_length: {epochs: 1000000}}\n",
                                    "const.yaml", NULL, 0, &cfg));
    t2__config_free(cfg);
    cfg = NULL;
    CHECK_OK(t2__config_load_string(EPOCH_HEAD "searcher: {name: single, metric: loss,\n"
                                               "  max_length: {epochs: 1000000}}\n",
                                    "const.yaml", (const char *const[]){"hyperparameters.global_batch_size=1000000"},
                                    1, &cfg));
    t2__config_free(cfg);
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
    test_checkpoint_paths();
    test_batch_cap();
    test_epochs_cap();
    test_not_regular();
    return check_report("test_config_limits");
}
