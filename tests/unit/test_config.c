/* test_config.c — experiment configs: the examples load cleanly, defaults, every key, each error
 * with its exact FILE:LINE:COLUMN and key path, unknown-key warnings, --config overrides. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "test_config_util.h"
#include "../../configs/config.h" /* configs/ is not on the test include path */

static t2__config *load_ok(const char *text)
{
    t2__config *cfg = NULL;
    int rc = t2__config_load_string(text, "const.yaml", NULL, 0, &cfg);
    if (rc) {
        fprintf(stderr, "unexpected failure (%s): %s\n--- config ---\n%s\n", t2_strerror(rc), t2_errmsg(), text);
        check_failures++;
    }
    return cfg;
}

/* The load must fail with `code` and exactly `msg`. */
static void expect_err_ov(int line, const char *text, const char *const *ov, int nov, int code, const char *msg)
{
    t2__config *cfg = (t2__config *)1;
    int rc = t2__config_load_string(text, "const.yaml", ov, nov, &cfg);
    if (rc != code || strcmp(t2_errmsg(), msg) != 0 || cfg != NULL) {
        fprintf(stderr, "test_config.c:%d: rc %d (want %d)\n  got  \"%s\"\n  want \"%s\"\n", line, rc, code,
                t2_errmsg(), msg);
        check_failures++;
    }
    if (rc == T2_OK) t2__config_free(cfg);
}
#define EXPECT_ERR(text, code, msg) expect_err_ov(__LINE__, text, NULL, 0, code, msg)

static char *fixture_path(char *buf, size_t size, const char *rel)
{
    const char *fx = getenv("T2EXP_FIXTURES");
    snprintf(buf, size, "%s/%s", fx ? fx : "tests/fixtures", rel);
    return buf;
}

/* ---------- the example configs ---------- */

static void test_examples(void)
{
    static const char *const names[] = {"fashion_mnist_cnn",          "fashion_mnist_cnn_adaptive",
                                        "fashion_mnist_cnn_distributed", "fashion_mnist_mlp",
                                        "quadratic_grid",             "quadratic_random",
                                        "quadratic_pbt",              "fashion_mnist_pbt",
                                        "fashion_mnist_record"};
    char path[1024];
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        char rel[256];
        snprintf(rel, sizeof rel, "../../configs/examples/%s.yaml", names[k]);
        t2__config *cfg = NULL;
        CHECK_OK(t2__config_load(fixture_path(path, sizeof path, rel), NULL, 0, &cfg));
        if (!cfg) continue;
        size_t nw = 99;
        const char *const *w = t2__config_warnings(cfg, &nw);
        if (nw) fprintf(stderr, "%s: unexpected warning: %s\n", names[k], w[0]);
        CHECK(nw == 0);
        CHECK_STR(cfg->name, names[k]);
        CHECK(cfg->yaml_text && strstr(cfg->yaml_text, "hyperparameters:"));
        t2__val *hp = NULL;
        /* Every example must produce a hparams map that passes the batch-size check. */
        t2_rng rng;
        t2_rng_seed(&rng, 1);
        CHECK_OK(t2__hparam_sample(cfg->hparams, &rng, &hp));
        CHECK_OK(t2__config_batch_sizes(cfg, hp, NULL, NULL));
        t2__val_free(hp);
        t2__config_free(cfg);
    }

    t2__config *cfg = NULL;
    CHECK_OK(t2__config_load(fixture_path(path, sizeof path, "../../configs/examples/fashion_mnist_cnn.yaml"), NULL,
                             0, &cfg));
    if (cfg) {
        CHECK(cfg->searcher.name == T2__SEARCH_SINGLE);
        CHECK_STR(cfg->searcher.metric, "validation_accuracy");
        CHECK(cfg->searcher.smaller_is_better == 0);
        CHECK(cfg->searcher.max_length.unit == T2__UNIT_EPOCHS && cfg->searcher.max_length.n == 10);
        CHECK(cfg->min_validation_period.unit == T2__UNIT_EPOCHS && cfg->min_validation_period.n == 1);
        const t2__hparam *lr = t2__hparam_find(cfg->hparams, "learning_rate");
        CHECK(lr && lr->kind == T2__HP_CONST && lr->val->kind == T2__VAL_DOUBLE && lr->val->d == 0.05);
        int64_t g = 0, s = 0;
        t2__val *hp = NULL;
        CHECK_OK(t2__hparam_build(cfg->hparams, NULL, &hp));
        CHECK_OK(t2__config_batch_sizes(cfg, hp, &g, &s));
        CHECK(g == 64 && s == 64);
        t2__val_free(hp);
        t2__config_free(cfg);
    }
    cfg = NULL;
    CHECK_OK(t2__config_load(
        fixture_path(path, sizeof path, "../../configs/examples/fashion_mnist_cnn_distributed.yaml"), NULL, 0, &cfg));
    if (cfg) {
        int64_t g = 0, s = 0;
        t2__val *hp = NULL;
        CHECK(cfg->resources.slots_per_trial == 2);
        CHECK_OK(t2__hparam_build(cfg->hparams, NULL, &hp));
        CHECK_OK(t2__config_batch_sizes(cfg, hp, &g, &s));
        CHECK(g == 64 && s == 32);
        t2__val_free(hp);
        t2__config_free(cfg);
    }
    cfg = NULL;
    CHECK_OK(t2__config_load(fixture_path(path, sizeof path, "../../configs/examples/fashion_mnist_cnn_adaptive.yaml"),
                             NULL, 0, &cfg));
    if (cfg) {
        CHECK(cfg->searcher.name == T2__SEARCH_ADAPTIVE_ASHA && cfg->searcher.max_trials == 16);
        CHECK(cfg->searcher.max_rungs == 3 && cfg->searcher.divisor == 4 && cfg->searcher.mode == T2__ASHA_AGGRESSIVE);
        const t2__hparam *lr = t2__hparam_find(cfg->hparams, "learning_rate");
        CHECK(lr && lr->kind == T2__HP_LOG && lr->minval == -2.0 && lr->maxval == -0.8 && lr->base == 10);
        const t2__hparam *w = t2__hparam_find(cfg->hparams, "n_hidden");
        CHECK(w && w->kind == T2__HP_CATEGORICAL && w->vals->n == 3);
        t2__config_free(cfg);
    }
    cfg = NULL;
    CHECK_OK(t2__config_load(fixture_path(path, sizeof path, "../../configs/examples/quadratic_grid.yaml"), NULL, 0,
                             &cfg));
    if (cfg) {
        uint64_t n = 0;
        CHECK_OK(t2__hparam_grid_size(cfg->hparams, &n));
        CHECK(n == 25);
        t2__config_free(cfg);
    }
}

/* ---------- defaults and every key ---------- */

static void test_defaults(void)
{
    t2__config *cfg = load_ok(MINIMAL);
    if (!cfg) return;
    CHECK_STR(cfg->source, "const.yaml");
    CHECK_STR(cfg->name, "const");
    CHECK(cfg->description == NULL && cfg->nlabels == 0);
    CHECK(cfg->data && cfg->data->kind == T2__VAL_MAP && cfg->data->n == 0);
    CHECK(cfg->searcher.name == T2__SEARCH_SINGLE);
    CHECK(cfg->searcher.smaller_is_better == 1);
    CHECK(cfg->searcher.max_length.unit == T2__UNIT_BATCHES && cfg->searcher.max_length.n == 100);
    CHECK(cfg->searcher.max_trials == 0 && cfg->searcher.max_concurrent_trials == 16); /* Determined's defaults */
    CHECK(cfg->searcher.mode == T2__ASHA_STANDARD && cfg->searcher.divisor == 4 && cfg->searcher.max_rungs == 5);
    CHECK(cfg->searcher.stop_once == 1 && cfg->searcher.bracket_rungs == NULL);
    CHECK(cfg->searcher.source_checkpoint == NULL && cfg->searcher.source_trial_id == 0);
    CHECK(cfg->records_per_epoch == 0);
    CHECK(cfg->min_validation_period.n == 0 && cfg->min_checkpoint_period.n == 0);
    CHECK(cfg->perform_initial_validation == 0 && cfg->scheduling_unit == 100);
    CHECK(cfg->checkpoint_policy == T2__CKPT_BEST);
    CHECK(cfg->resources.slots_per_trial == 1 && cfg->resources.max_slots == 0 && !cfg->resources.hostfile);
    CHECK(cfg->resources.isolation == T2__ISOLATION_WORKER);
    CHECK(!cfg->checkpoint_storage.host_path && !cfg->checkpoint_storage.storage_path);
    CHECK(cfg->checkpoint_storage.save_experiment_best == 0 && cfg->checkpoint_storage.save_trial_best == 1 &&
          cfg->checkpoint_storage.save_trial_latest == 1);
    CHECK(cfg->max_restarts == 5);
    CHECK(cfg->experiment_seed_set == 0);
    CHECK(cfg->optimizations.clip == T2__CLIP_NONE && cfg->optimizations.aggregation_frequency == 1);
    CHECK(cfg->optimizations.average_aggregated_gradients == 1 && cfg->optimizations.average_training_metrics == 1);
    size_t nw = 9;
    t2__config_warnings(cfg, &nw);
    CHECK(nw == 0);
    /* The tree is the document as written, for the store. */
    char *json = NULL;
    CHECK_OK(t2__val_to_json(cfg->tree, &json, NULL));
    CHECK_STR(json, "{\"hyperparameters\":{\"global_batch_size\":32},\"searcher\":{\"name\":\"single\",\"metric\":"
                    "\"loss\",\"max_length\":{\"batches\":100}}}");
    free(json);
    t2__config_free(cfg);
}

static const char FULL[] =
    "name: my experiment\n"
    "description: every key\n"
    "labels: [a, \"b c\", 3]\n"
    "data:\n"
    "  url: https://example.com/x.gz\n"
    "  sizes: [1, 2.5]\n"
    "hyperparameters:\n"
    "  global_batch_size:\n"
    "    type: categorical\n"
    "    vals: [32, 64]\n"
    "  optimizer:\n"
    "    lr: {type: log, minval: -4, maxval: -1, base: 10, count: 4}\n"
    "    momentum: {type: const, val: 0.9}\n"
    "  layers: [64, 32]\n"
    "  units: {type: int, minval: 8, maxval: 12, count: 3}\n"
    "  act: {type: categorical, vals: [relu, tanh]}\n"
    "  drop: {type: double, minval: 0.0, maxval: 0.5}\n"
    "searcher:\n"
    "  name: adaptive_asha\n"
    "  metric: validation_error\n"
    "  smaller_is_better: true\n"
    "  max_length: {records: 60000}\n"
    "  max_trials: 32\n"
    "  max_concurrent_trials: 4\n"
    "  mode: aggressive\n"
    "  divisor: 3\n"
    "  max_rungs: 4\n"
    "  stop_once: true\n"
    "  bracket_rungs: [3, 2]\n"
    "  source_checkpoint: /tmp/ckpt.tar\n"
    "  source_trial_id: 12\n"
    "records_per_epoch: 50000\n"
    "min_validation_period: {batches: 200}\n"
    "min_checkpoint_period: {epochs: 2}\n"
    "perform_initial_validation: true\n"
    "scheduling_unit: 50\n"
    "checkpoint_policy: all\n"
    "resources:\n"
    "  slots_per_trial: 2\n"
    "  max_slots: 8\n"
    "  hostfile: hosts.txt\n"
    "  isolation: process_per_trial\n"
    "checkpoint_storage:\n"
    "  type: shared_fs\n"
    "  host_path: /data\n"
    "  storage_path: ckpts\n"
    "  save_experiment_best: 3\n"
    "  save_trial_best: 2\n"
    "  save_trial_latest: 0\n"
    "max_restarts: 0\n"
    "reproducibility:\n"
    "  experiment_seed: 12345\n"
    "optimizations:\n"
    "  gradient_clipping: {type: norm, max: 1.5}\n"
    "  aggregation_frequency: 2\n"
    "  average_aggregated_gradients: false\n"
    "  average_training_metrics: false\n"
    "  mixed_precision: O0\n";

static void test_every_key(void)
{
    t2__config *cfg = load_ok(FULL);
    if (!cfg) return;
    CHECK_STR(cfg->name, "my experiment");
    CHECK_STR(cfg->description, "every key");
    CHECK(cfg->nlabels == 3);
    if (cfg->nlabels == 3) {
        CHECK_STR(cfg->labels[0], "a");
        CHECK_STR(cfg->labels[1], "b c");
        CHECK_STR(cfg->labels[2], "3");
    }
    const t2__val *url = t2__val_lookup(cfg->data, "url");
    CHECK(url && url->kind == T2__VAL_STRING && strcmp(url->s, "https://example.com/x.gz") == 0);
    const t2__val *sz = t2__val_lookup(cfg->data, "sizes.1");
    CHECK(sz && sz->kind == T2__VAL_DOUBLE && sz->d == 2.5);

    const t2__searcher_config *s = &cfg->searcher;
    CHECK(s->name == T2__SEARCH_ADAPTIVE_ASHA);
    CHECK_STR(s->metric, "validation_error");
    CHECK(s->smaller_is_better == 1);
    CHECK(s->max_length.unit == T2__UNIT_RECORDS && s->max_length.n == 60000);
    CHECK(s->max_trials == 32 && s->max_concurrent_trials == 4);
    CHECK(s->mode == T2__ASHA_AGGRESSIVE && s->divisor == 3 && s->max_rungs == 4 && s->stop_once == 1);
    CHECK(s->nbracket_rungs == 2 && s->bracket_rungs[0] == 3 && s->bracket_rungs[1] == 2);
    CHECK_STR(s->source_checkpoint, "/tmp/ckpt.tar");
    CHECK(s->source_trial_id == 12);
    CHECK(cfg->records_per_epoch == 50000);
    CHECK(cfg->min_validation_period.unit == T2__UNIT_BATCHES && cfg->min_validation_period.n == 200);
    CHECK(cfg->min_checkpoint_period.unit == T2__UNIT_EPOCHS && cfg->min_checkpoint_period.n == 2);
    CHECK(cfg->perform_initial_validation == 1 && cfg->scheduling_unit == 50);
    CHECK(cfg->checkpoint_policy == T2__CKPT_ALL);
    CHECK(cfg->resources.slots_per_trial == 2 && cfg->resources.max_slots == 8);
    CHECK(cfg->resources.isolation == T2__ISOLATION_PROCESS_PER_TRIAL);
    CHECK_STR(cfg->resources.hostfile, "hosts.txt");
    CHECK_STR(cfg->checkpoint_storage.host_path, "/data");
    CHECK_STR(cfg->checkpoint_storage.storage_path, "ckpts");
    CHECK(cfg->checkpoint_storage.save_experiment_best == 3 && cfg->checkpoint_storage.save_trial_best == 2 &&
          cfg->checkpoint_storage.save_trial_latest == 0);
    CHECK(cfg->max_restarts == 0);
    CHECK(cfg->experiment_seed_set == 1 && cfg->experiment_seed == 12345);
    CHECK(cfg->optimizations.clip == T2__CLIP_NORM && cfg->optimizations.clip_max == 1.5);
    CHECK(cfg->optimizations.aggregation_frequency == 2);
    CHECK(cfg->optimizations.average_aggregated_gradients == 0 && cfg->optimizations.average_training_metrics == 0);

    /* The hparam tree: kinds, paths, nesting, file order. */
    const t2__hparam *leaves[16];
    size_t n = t2__hparam_leaves(cfg->hparams, leaves, 16);
    CHECK(n == 7);
    static const char *const paths[] = {"global_batch_size", "optimizer.lr", "optimizer.momentum", "layers",
                                        "units",             "act",          "drop"};
    static const t2__hp_kind kinds[] = {T2__HP_CATEGORICAL, T2__HP_LOG, T2__HP_CONST, T2__HP_CONST,
                                        T2__HP_INT,         T2__HP_CATEGORICAL, T2__HP_DOUBLE};
    for (size_t k = 0; k < n && k < 7; k++) {
        CHECK_STR(leaves[k]->path, paths[k]);
        CHECK(leaves[k]->kind == kinds[k]);
    }
    const t2__hparam *lr = t2__hparam_find(cfg->hparams, "optimizer.lr");
    CHECK(lr && lr->minval == -4 && lr->maxval == -1 && lr->count == 4 && lr->base == 10);
    CHECK_STR(lr ? lr->name : NULL, "lr");
    const t2__hparam *opt = t2__hparam_find(cfg->hparams, "optimizer");
    CHECK(opt && opt->kind == T2__HP_NESTED && opt->nchildren == 2);
    const t2__hparam *units = t2__hparam_find(cfg->hparams, "units");
    CHECK(units && units->imin == 8 && units->imax == 12 && units->count == 3);
    const t2__hparam *drop = t2__hparam_find(cfg->hparams, "drop");
    CHECK(drop && drop->count == 0);
    CHECK(t2__hparam_find(cfg->hparams, "optimizer.nope") == NULL);
    CHECK(t2__hparam_find(cfg->hparams, "") == cfg->hparams);

    /* Read, and each accepted but ignored, said once: t2exp steps every batch and always averages
     * training metrics across ranks (probe_M: the docs promised what nothing did). */
    size_t nw = 9;
    const char *const *w = t2__config_warnings(cfg, &nw);
    CHECK(nw == 3);
    for (size_t k = 0; w && k < nw; k++) CHECK(strstr(w[k], "is accepted but ignored") != NULL);
    t2__config_free(cfg);
}

static void test_batch_sizes(void)
{
    t2__config *cfg = load_ok(FULL);
    if (!cfg) return;
    t2__val *hp = t2__val_map();
    int64_t g = 0, s = 0;
    CHECK_RC(t2__config_batch_sizes(cfg, hp, &g, &s), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "hyperparameters.global_batch_size: missing from the trial's hyperparameters");
    /* Not divisible by the slots: rounded down per slot, as Determined does (the load warned). */
    CHECK_OK(t2__val_map_set(hp, "global_batch_size", t2__val_int(33)));
    CHECK_OK(t2__config_batch_sizes(cfg, hp, &g, &s));
    CHECK(g == 32 && s == 16);
    CHECK_OK(t2__val_map_set(hp, "global_batch_size", t2__val_int(1)));
    CHECK_RC(t2__config_batch_sizes(cfg, hp, &g, &s), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "hyperparameters.global_batch_size: 1 is less than resources.slots_per_trial (2); every "
                           "slot needs at least one record a step");
    CHECK_OK(t2__val_map_set(hp, "global_batch_size", t2__val_double(32)));
    CHECK_RC(t2__config_batch_sizes(cfg, hp, &g, &s), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "hyperparameters.global_batch_size: expected a positive integer, got a double");
    CHECK_OK(t2__val_map_set(hp, "global_batch_size", t2__val_int(0)));
    CHECK_RC(t2__config_batch_sizes(cfg, hp, &g, &s), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "hyperparameters.global_batch_size: expected a positive integer, got 0");
    CHECK_OK(t2__val_map_set(hp, "global_batch_size", t2__val_int(64)));
    CHECK_OK(t2__config_batch_sizes(cfg, hp, &g, &s));
    CHECK(g == 64 && s == 32);
    t2__val_free(hp);
    t2__config_free(cfg);
}

/* ---------- errors ---------- */

static void test_yaml_syntax_errors(void)
{
    EXPECT_ERR("searcher:\n  name: single\n   metric: x\n", T2_EFORMAT,
               "const.yaml:3:10: YAML syntax error: mapping values are not allowed in this context");
    EXPECT_ERR("hyperparameters:\n  lr: [1, 2\nsearcher: {}\n", T2_EFORMAT,
               "const.yaml:3:9: YAML syntax error: did not find expected ',' or ']' (while parsing a flow sequence "
               "at line 2, column 7)");
    EXPECT_ERR("a: 1\n\tb: 2\n", T2_EFORMAT,
               "const.yaml:2:1: YAML syntax error: found a tab character that violates indentation (while scanning "
               "a plain scalar at line 1, column 4)");
    /* A duplicate key is one error among the file's others: the load goes on (the first value kept). */
    EXPECT_ERR("a: 1\na: 2\n", T2_EINVAL, "const.yaml:2:1: a: duplicate key (and 3 more errors)");
    /* Nested, the key's whole path, list positions included. */
    EXPECT_ERR(MINIMAL "  max_trials: 2\n  max_trials: 3\n", T2_EINVAL,
               "const.yaml:9:3: searcher.max_trials: duplicate key");
    EXPECT_ERR("data:\n  runs:\n    - {a: 1}\n    - {b: {c: 1, c: 2}}\n", T2_EINVAL,
               "const.yaml:4:18: data.runs.1.b.c: duplicate key (and 2 more errors)");
    EXPECT_ERR("a: 1\n---\nb: 2\n", T2_EFORMAT,
               "const.yaml:2:1: more than one YAML document (a config is one document)");
    EXPECT_ERR("? [a, b]\n: 1\n", T2_EFORMAT, "const.yaml:1:3: a map key must be a plain value, not a list or a map");
    EXPECT_ERR("a: *nope\n", T2_EFORMAT, "const.yaml:1:4: alias '*nope' refers to no anchor");
    EXPECT_ERR("a: &x [1, *x]\n", T2_EFORMAT, "const.yaml:1:11: alias '*x' refers to a node that contains it");
    EXPECT_ERR("", T2_EINVAL, "const.yaml:1:1: the config is empty");
    EXPECT_ERR("# only a comment\n", T2_EINVAL, "const.yaml:1:1: the config is empty");
    EXPECT_ERR("- a\n- b\n", T2_EINVAL, "const.yaml:1:1: expected a map of config keys at the top level, got a list");

    /* A billion-laughs document is refused instead of expanded. */
    char big[4096];
    strcpy(big, "a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (char c = 'b'; c <= 'j'; c++) {
        char line[128];
        snprintf(line, sizeof line, "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", c, c, c - 1,
                 c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1);
        strcat(big, line);
    }
    t2__config *cfg = NULL;
    CHECK_RC(t2__config_load_string(big, "const.yaml", NULL, 0, &cfg), T2_EFORMAT);
    CHECK(strstr(t2_errmsg(), "more than 1000000 nodes") != NULL);

    /* Deep nesting is refused rather than recursed into. */
    char deep[512] = "a: ";
    for (int k = 0; k < 120; k++) strcat(deep, "[");
    CHECK_RC(t2__config_load_string(deep, "const.yaml", NULL, 0, &cfg), T2_EFORMAT);
    CHECK(strstr(t2_errmsg(), "nested more than 100 levels deep") != NULL);
}

static void test_schema_errors(void)
{
    /* The brief's own example: a word where a count of batches belongs. */
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: single\n  metric: loss\n"
               "  max_length:\n    batches: ten\n",
               T2_EINVAL, "const.yaml:7:14: searcher.max_length.batches: expected a positive integer, got \"ten\"");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: single\n  metric: loss\n"
               "  max_length:\n    batches: 0\n",
               T2_EINVAL, "const.yaml:7:14: searcher.max_length.batches: expected a positive integer, got 0");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: single\n  metric: loss\n"
               "  max_length:\n    batches: \"100\"\n",
               T2_EINVAL,
               "const.yaml:7:14: searcher.max_length.batches: expected a positive integer, got the string \"100\"");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: single\n  metric: loss\n"
               "  max_length: [100]\n",
               T2_EINVAL,
               "const.yaml:6:15: searcher.max_length: expected a length such as {batches: 1000} (one of batches, "
               "records or epochs), got a list");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: single\n  metric: loss\n"
               "  max_length: {batches: 10, epochs: 1}\n",
               T2_EINVAL,
               "const.yaml:6:15: searcher.max_length: expected exactly one of batches, records or epochs, got 2 keys");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: single\n  metric: loss\n"
               "  max_length: {steps: 10}\n",
               T2_EINVAL,
               "const.yaml:6:16: searcher.max_length: unknown length unit 'steps' (expected batches, records or "
               "epochs)");
    /* A misspelt unit gets its suggestion (case ignored), and a key that is no unit beside a unit is
     * named rather than counted. */
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: single\n  metric: loss\n"
               "  max_length: {batchs: 10}\n",
               T2_EINVAL,
               "const.yaml:6:16: searcher.max_length: unknown length unit 'batchs' (expected batches, records or "
               "epochs; did you mean 'batches'?)");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: single\n  metric: loss\n"
               "  max_length: {Batches: 10}\n",
               T2_EINVAL,
               "const.yaml:6:16: searcher.max_length: unknown length unit 'Batches' (expected batches, records or "
               "epochs; did you mean 'batches'?)");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: single\n  metric: loss\n"
               "  max_length: {batches: 10, foo: 1}\n",
               T2_EINVAL,
               "const.yaml:6:29: searcher.max_length: unknown length unit 'foo' (expected batches, records or "
               "epochs)");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: single\n  metric: loss\n",
               T2_EINVAL,
               "const.yaml:3:1: searcher.max_length: missing required key, e.g. max_length: {batches: 1000} or "
               "time_metric: batches with max_time: 1000, in the file or as --config searcher.max_length.batches=1000 (Determined's Core API leaves the training length to the "
               "training script; t2exp runs the training loop and needs it)");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: single\n  max_length: {batches: 1}\n",
               T2_EINVAL, "const.yaml:3:1: searcher.metric: missing required key");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  metric: loss\n  max_length: {batches: 1}\n",
               T2_EINVAL, "const.yaml:3:1: searcher.name: missing required key");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\n", T2_EINVAL, "const.yaml:1:1: searcher: missing required key");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: bayes\n", T2_EINVAL,
               "const.yaml:4:9: searcher.name: expected one of single, grid, random, adaptive_asha, tpe, pbt or custom, got "
               "\"bayes\" (and 1 more error)"); /* the missing metric: the other keys are still checked */
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: adaptive_simple\n", T2_EINVAL,
               "const.yaml:4:9: searcher.name: the \"adaptive_simple\" searcher is not supported by t2exp (use single, "
               "grid, random, adaptive_asha, tpe, pbt, or custom with a searcher of your own) (and 1 more error)");
    /* custom: its library is required; options a map, handed over as it is. */
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: custom\n  metric: loss\n"
               "  max_length: {batches: 1}\n",
               T2_EINVAL, "const.yaml:3:1: searcher.library: missing required key, the shared object of your searcher "
               "(t2exp/searcher.h)");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: custom\n  metric: loss\n"
               "  max_length: {batches: 1}\n  library: x.so\n  options: [1]\n",
               T2_EINVAL, "const.yaml:8:12: searcher.options: expected a map of the searcher's own settings, got a list");
    {
        t2__config *cc = load_ok("hyperparameters: {global_batch_size: 32}\nsearcher: {name: custom, metric: loss, "
                                 "max_length: 4, library: ./x.so, max_trials: 9, options: {step: 0.5, how: fast}}\n");
        if (cc) {
            const t2__val *st = t2__val_map_get(cc->searcher.options, "step");
            CHECK(cc->searcher.name == T2__SEARCH_CUSTOM && !strcmp(cc->searcher.library, "./x.so") &&
                  cc->searcher.max_trials == 9 && st && st->kind == T2__VAL_DOUBLE && st->d == 0.5);
            t2__config_free(cc);
        }
    }
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher: [single]\n", T2_EINVAL,
               "const.yaml:3:11: searcher: expected a map, got a list");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: random\n  metric: loss\n"
               "  max_length: {batches: 1}\n",
               T2_EINVAL, "const.yaml:3:1: searcher.max_trials: missing required key");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: adaptive_asha\n  metric: loss\n"
               "  max_length: {batches: 1}\n",
               T2_EINVAL, "const.yaml:3:1: searcher.max_trials: missing required key");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: random\n  metric: loss\n"
               "  max_length: {batches: 1}\n  max_trials: -3\n",
               T2_EINVAL, "const.yaml:7:15: searcher.max_trials: expected a positive integer, got -3");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: adaptive_asha\n  metric: loss\n"
               "  max_length: {batches: 1}\n  max_trials: 4\n  divisor: 1\n",
               T2_EINVAL, "const.yaml:8:12: searcher.divisor: expected a number greater than 1, got 1");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: adaptive_asha\n  metric: loss\n"
               "  max_length: {batches: 1}\n  max_trials: 4\n  mode: fast\n",
               T2_EINVAL,
               "const.yaml:8:9: searcher.mode: expected one of aggressive, standard or conservative, got \"fast\"");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: adaptive_asha\n  metric: loss\n"
               "  max_length: {batches: 1}\n  max_trials: 4\n  bracket_rungs: [2, zero]\n",
               T2_EINVAL, "const.yaml:8:22: searcher.bracket_rungs.1: expected a positive integer, got \"zero\"");
    /* An empty list read as no list (the default brackets): refused at it, null being the way to ask for those. */
    EXPECT_ERR("hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: adaptive_asha\n  metric: loss\n"
               "  max_length: {batches: 1}\n  max_trials: 4\n  bracket_rungs: []\n",
               T2_EINVAL, "const.yaml:8:18: searcher.bracket_rungs: expected a non-empty list of positive integers (one "
                          "rung count a bracket), got an empty list");
    EXPECT_ERR(MINIMAL "  smaller_is_better: yes\n", T2_EINVAL,
               "const.yaml:8:22: searcher.smaller_is_better: expected true or false, got \"yes\"");
    EXPECT_ERR(MINIMAL "max_restarts: -1\n", T2_EINVAL,
               "const.yaml:8:15: max_restarts: expected a non-negative integer, got -1");
    EXPECT_ERR(MINIMAL "records_per_epoch: 1.5\n", T2_EINVAL,
               "const.yaml:8:20: records_per_epoch: expected a non-negative integer, got 1.5");
    EXPECT_ERR(MINIMAL "min_validation_period: {epochs: -1}\n", T2_EINVAL,
               "const.yaml:8:33: min_validation_period.epochs: expected a non-negative integer, got -1");
    EXPECT_ERR(MINIMAL "labels: a\n", T2_EINVAL, "const.yaml:8:9: labels: expected a list of strings, got \"a\"");
    EXPECT_ERR(MINIMAL "labels: [a, [b]]\n", T2_EINVAL, "const.yaml:8:13: labels.1: expected a string, got a list");
    EXPECT_ERR(MINIMAL "data: [1]\n", T2_EINVAL, "const.yaml:8:7: data: expected a map, got a list");
    EXPECT_ERR(MINIMAL "name: {a: 1}\n", T2_EINVAL, "const.yaml:8:7: name: expected a string, got a map");
    EXPECT_ERR(MINIMAL "resources:\n  slots_per_trial: -1\n", T2_EINVAL,
               "const.yaml:9:20: resources.slots_per_trial: expected a non-negative integer, got -1");
    EXPECT_ERR(MINIMAL "resources:\n  isolation: fork\n", T2_EINVAL,
               "const.yaml:9:14: resources.isolation: must be worker or process_per_trial, got \"fork\"");
    EXPECT_ERR(MINIMAL "checkpoint_storage:\n  type: s3\n", T2_EINVAL,
               "const.yaml:9:9: checkpoint_storage.type: only shared_fs is supported, got \"s3\"");
    EXPECT_ERR(MINIMAL "checkpoint_storage:\n  save_trial_best: -1\n", T2_EINVAL,
               "const.yaml:9:20: checkpoint_storage.save_trial_best: expected a non-negative integer, got -1");
    EXPECT_ERR(MINIMAL "reproducibility:\n  experiment_seed: abc\n", T2_EINVAL,
               "const.yaml:9:20: reproducibility.experiment_seed: expected a non-negative integer, got \"abc\"");
    EXPECT_ERR(MINIMAL "optimizations:\n  gradient_clipping: {type: l2, max: 1}\n", T2_EINVAL,
               "const.yaml:9:29: optimizations.gradient_clipping.type: expected one of norm or value, got \"l2\"");
    EXPECT_ERR(MINIMAL "optimizations:\n  gradient_clipping: {type: norm, max: 0}\n", T2_EINVAL,
               "const.yaml:9:40: optimizations.gradient_clipping.max: expected a positive number, got 0");
    EXPECT_ERR(MINIMAL "optimizations:\n  gradient_clipping: {type: norm}\n", T2_EINVAL,
               "const.yaml:9:3: optimizations.gradient_clipping.max: missing required key");
    EXPECT_ERR(MINIMAL "checkpoint_policy: some\n", T2_EINVAL,
               "const.yaml:8:20: checkpoint_policy: expected one of best, all or none, got \"some\"");
}

static void test_hparam_errors(void)
{
#define SEARCH_SINGLE "searcher:\n  name: single\n  metric: loss\n  max_length: {batches: 1}\n"
#define SEARCH_GRID "searcher:\n  name: grid\n  metric: loss\n  max_length: {batches: 1}\n"
#define GBS_NOTE ", in the file or as --config hyperparameters.global_batch_size=N (Determined's Core API leaves the batch size to the training script; t2exp builds the batches and needs it)"
    EXPECT_ERR(SEARCH_SINGLE, T2_EINVAL, "const.yaml:1:1: hyperparameters.global_batch_size: missing required key" GBS_NOTE);
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  lr: 0.1\n", T2_EINVAL,
               "const.yaml:5:1: hyperparameters.global_batch_size: missing required key" GBS_NOTE);
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n", T2_EINVAL,
               "const.yaml:5:1: hyperparameters.global_batch_size: missing required key" GBS_NOTE);
#undef GBS_NOTE
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters: [1]\n", T2_EINVAL,
               "const.yaml:5:18: hyperparameters: expected a map, got a list");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: 6.5\n", T2_EINVAL,
               "const.yaml:6:22: hyperparameters.global_batch_size: expected a positive integer, got 6.5");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: -8\n", T2_EINVAL,
               "const.yaml:6:22: hyperparameters.global_batch_size: expected a positive integer, got -8");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: {type: const, val: big}\n", T2_EINVAL,
               "const.yaml:6:41: hyperparameters.global_batch_size.val: expected a positive integer, got \"big\"");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: {type: double, minval: 1, maxval: 5}\n",
               T2_EINVAL,
               "const.yaml:6:22: hyperparameters.global_batch_size: expected a positive integer (a constant, or an "
               "int or categorical hyperparameter), got a double hyperparameter");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: {type: int, minval: 0, maxval: 5}\n", T2_EINVAL,
               "const.yaml:6:42: hyperparameters.global_batch_size.minval: expected a positive integer, got 0");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: {type: categorical, vals: [16, x]}\n", T2_EINVAL,
               "const.yaml:6:53: hyperparameters.global_batch_size.vals.1: expected a positive integer, got \"x\"");
    /* Global batch vs slots: fewer records than slots is an error naming both values (not divisible
     * is a warning now: test_config_determined.c). */
    EXPECT_ERR(SEARCH_SINGLE "resources: {slots_per_trial: 3}\nhyperparameters:\n  global_batch_size: 2\n",
               T2_EINVAL,
               "const.yaml:7:22: hyperparameters.global_batch_size: 2 is less than resources.slots_per_trial (3); "
               "every slot needs at least one record a step");
    EXPECT_ERR("hyperparameters:\n  global_batch_size: {type: categorical, vals: [32, 16]}\n" SEARCH_SINGLE
               "resources: {slots_per_trial: 32}\n",
               T2_EINVAL,
               "const.yaml:2:53: hyperparameters.global_batch_size.vals.1: 16 is less than "
               "resources.slots_per_trial (32); every slot needs at least one record a step");
    EXPECT_ERR(SEARCH_SINGLE "resources: {slots_per_trial: 4}\nhyperparameters:\n"
                             "  global_batch_size: {type: int, minval: 2, maxval: 64}\n",
               T2_EINVAL,
               "const.yaml:7:22: hyperparameters.global_batch_size: the range starts at 2, less than "
               "resources.slots_per_trial (4); every slot needs at least one record a step");

    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: 8\n  lr: {type: float, minval: 0, maxval: 1}\n",
               T2_EINVAL,
               "const.yaml:7:14: hyperparameters.lr.type: expected one of const, int, double, log or categorical, got "
               "\"float\"");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: 8\n  lr:\n    type: double\n    minval: 0.5\n"
                             "    maxval: 0.1\n",
               T2_EINVAL, "const.yaml:10:13: hyperparameters.lr.maxval: maxval 0.1 is less than minval 0.5");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: 8\n  n: {type: int, minval: 5, maxval: 3}\n",
               T2_EINVAL, "const.yaml:7:37: hyperparameters.n.maxval: maxval 3 is less than minval 5");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: 8\n  n: {type: int, minval: 1.5, maxval: 3}\n",
               T2_EINVAL, "const.yaml:7:26: hyperparameters.n.minval: expected an integer, got 1.5");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: 8\n  n: {type: int, maxval: 3}\n", T2_EINVAL,
               "const.yaml:7:6: hyperparameters.n.minval: missing required key");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: 8\n  d: {type: double, minval: 0, maxval: .inf}\n",
               T2_EINVAL, "const.yaml:7:40: hyperparameters.d.maxval: expected a finite number, got .inf");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: 8\n  c: {type: categorical, vals: []}\n",
               T2_EINVAL, "const.yaml:7:32: hyperparameters.c.vals: expected a non-empty list, got an empty list");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: 8\n  c: {type: categorical, vals: a}\n",
               T2_EINVAL, "const.yaml:7:32: hyperparameters.c.vals: expected a non-empty list, got \"a\"");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: 8\n  c: {type: categorical}\n", T2_EINVAL,
               "const.yaml:7:6: hyperparameters.c.vals: missing required key");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: 8\n  k: {type: const}\n", T2_EINVAL,
               "const.yaml:7:6: hyperparameters.k.val: missing required key");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: 8\n  l: {type: log, minval: -3, maxval: -1, base: 1}\n",
               T2_EINVAL, "const.yaml:7:48: hyperparameters.l.base: expected a positive number other than 1, got 1");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: 8\n  d: {type: double, minval: 0, maxval: 1, count: 0}\n",
               T2_EINVAL, "const.yaml:7:50: hyperparameters.d.count: expected a positive integer, got 0");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: 8\n  a.b: 1\n", T2_EINVAL,
               "const.yaml:7:3: hyperparameters.a.b: a top-level hyperparameter name must be non-empty and must not "
               "contain '.' (dots separate nested names)");
    EXPECT_ERR(SEARCH_SINGLE "hyperparameters:\n  global_batch_size: 8\n  opt:\n    sgd:\n      lr: {type: log}\n",
               T2_EINVAL, "const.yaml:9:11: hyperparameters.opt.sgd.lr.minval: missing required key");

    /* Grid: int/double/log need a count (as in Determined), categorical and const do not. */
    EXPECT_ERR(SEARCH_GRID "hyperparameters:\n  global_batch_size: 8\n  d: {type: double, minval: 0, maxval: 1}\n",
               T2_EINVAL,
               "const.yaml:7:6: hyperparameters.d: the grid searcher needs a count for a double hyperparameter (how "
               "many points to try)");
    EXPECT_ERR(SEARCH_GRID "hyperparameters:\n  global_batch_size: 8\n  o:\n    l: {type: log, minval: -3, maxval: 0}\n",
               T2_EINVAL,
               "const.yaml:8:8: hyperparameters.o.l: the grid searcher needs a count for a log hyperparameter (how "
               "many points to try)");
    EXPECT_ERR(SEARCH_GRID "hyperparameters:\n  global_batch_size: 8\n  n: {type: int, minval: 0, maxval: 3}\n",
               T2_EINVAL,
               "const.yaml:7:6: hyperparameters.n: the grid searcher needs a count for an int hyperparameter (how "
               "many points to try)");
    EXPECT_ERR(SEARCH_GRID "hyperparameters:\n  global_batch_size: 8\n"
                           "  a: {type: double, minval: 0, maxval: 1, count: 1000}\n"
                           "  b: {type: double, minval: 0, maxval: 1, count: 1001}\n",
               T2_EINVAL,
               "const.yaml:6:3: hyperparameters: the grid has 1001000 points, more than the 1000000 a grid search may "
               "have");
    t2__config *cfg = load_ok(SEARCH_GRID "hyperparameters:\n  global_batch_size: 8\n"
                                          "  c: {type: categorical, vals: [1, 2]}\n  k: {type: const, val: x}\n");
    t2__config_free(cfg);
#undef SEARCH_SINGLE
#undef SEARCH_GRID
}

/* ---------- warnings ---------- */

static void test_warnings(void)
{
    static const char text[] =
        "name: w\n"                                       /* 1 */
        "hyperparameters:\n"                              /* 2 */
        "  global_batch_size: 8\n"                        /* 3 */
        "  lr: {type: double, minval: 0, maxval: 1, base: 2, step: 1}\n" /* 4 */
        "searcher:\n"                                     /* 5 */
        "  name: single\n"                                /* 6 */
        "  metric: loss\n"                                /* 7 */
        "  max_length: {batches: 1}\n"                    /* 8 */
        "  max_trials: 4\n"                               /* 9 */
        "  max_epochs: 3\n"                               /* 10 */
        "entrypoint: model_def:MyTrial\n"                 /* 11 */
        "resources:\n"                                    /* 12 */
        "  priority: 3\n"                                 /* 13 */
        "  gpus: 1\n"                                     /* 14 */
        "optimizations:\n"                                /* 15 */
        "  mixed_precision: O1\n"                         /* 16 */
        "  tensor_fusion_threshold: 100\n"                /* 17 */
        "  gradient_clipping: {type: value, max: 0.5, norm_type: 2}\n" /* 18 */
        "lr_schedule: cosine\n"                           /* 19 */
        "environment:\n  image: x\n";                     /* 20, 21 */
    static const char *const want[] = {
        "const.yaml:4:44: key 'hyperparameters.lr.base' does not apply to a double hyperparameter (ignored)",
        "const.yaml:4:53: unknown key 'hyperparameters.lr.step' (ignored)",
        "const.yaml:9:3: key 'searcher.max_trials' does not apply to the single searcher (ignored)",
        "const.yaml:10:3: unknown key 'searcher.max_epochs' (ignored)",
        "const.yaml:11:1: key 'entrypoint' is accepted but ignored: the trial object named on the command line is run",
        "const.yaml:13:3: key 'resources.priority' is accepted but ignored: t2exp has no cluster scheduler",
        "const.yaml:14:3: unknown key 'resources.gpus' (ignored)",
        "const.yaml:16:3: key 'optimizations.mixed_precision' is accepted but ignored: t2exp always trains in "
        "float32 (O0)",
        "const.yaml:17:3: key 'optimizations.tensor_fusion_threshold' is accepted but ignored: gradients are reduced "
        "in one flat buffer with no fusion tuning",
        "const.yaml:18:46: unknown key 'optimizations.gradient_clipping.norm_type' (ignored)",
        "const.yaml:19:1: unknown key 'lr_schedule' (ignored)",
        "const.yaml:21:3: key 'environment.image' is accepted but ignored: trials run as processes on this machine, "
        "not in containers",
    };
    /* Unknown keys are errors unless lenient (test_config_strict.c); lenient, they are these warnings. */
    t2__config_set_lenient(1);
    t2__config *cfg = load_ok(text);
    t2__config_set_lenient(0);
    if (!cfg) return;
    size_t n = 0;
    const char *const *w = t2__config_warnings(cfg, &n);
    size_t nwant = sizeof want / sizeof *want;
    /* Warnings come in file order. */
    CHECK(n == nwant);
    for (size_t k = 0; k < n && k < nwant; k++) CHECK_STR(w[k], want[k]);
    CHECK(cfg->optimizations.clip == T2__CLIP_VALUE && cfg->optimizations.clip_max == 0.5);
    t2__config_free(cfg);
    CHECK(t2__config_warnings(NULL, &n) == NULL && n == 0);
}

/* ---------- overrides ---------- */

static void test_overrides(void)
{
    const char *ov[] = {
        "searcher.max_length.batches=500",
        "hyperparameters.lr={type: log, minval: -4, maxval: -1}",
        "name=from the command line",
        "labels=[x, y]",
        "reproducibility.experiment_seed=7",   /* creates the section */
        "data.path=/tmp/data",
        "searcher.metric=\"accuracy\"",
    };
    t2__config *cfg = NULL;
    CHECK_OK(t2__config_load_string(MINIMAL, "const.yaml", ov, (int)(sizeof ov / sizeof *ov), &cfg));
    if (cfg) {
        CHECK(cfg->searcher.max_length.n == 500);
        const t2__hparam *lr = t2__hparam_find(cfg->hparams, "lr");
        CHECK(lr && lr->kind == T2__HP_LOG && lr->minval == -4 && lr->maxval == -1);
        CHECK_STR(cfg->name, "from the command line");
        CHECK(cfg->nlabels == 2);
        CHECK(cfg->experiment_seed_set && cfg->experiment_seed == 7);
        const t2__val *p = t2__val_lookup(cfg->data, "path");
        CHECK(p && p->kind == T2__VAL_STRING && strcmp(p->s, "/tmp/data") == 0);
        CHECK_STR(cfg->searcher.metric, "accuracy");
        /* The stored tree is the effective document, overrides included. */
        const t2__val *b = t2__val_lookup(cfg->tree, "searcher.max_length.batches");
        CHECK(b && b->kind == T2__VAL_INT && b->i == 500);
        /* The original text is kept untouched. */
        CHECK_STR(cfg->yaml_text, MINIMAL);
        t2__config_free(cfg);
    }

    /* An override's error is placed at the override. */
    const char *bad[] = {"searcher.max_length.batches=ten"};
    expect_err_ov(__LINE__, MINIMAL, bad, 1, T2_EINVAL,
                  "--config searcher.max_length.batches=ten: searcher.max_length.batches: expected a positive "
                  "integer, got \"ten\"");
    const char *noeq[] = {"searcher.max_trials"};
    expect_err_ov(__LINE__, MINIMAL, noeq, 1, T2_EINVAL,
                  "--config searcher.max_trials: expected KEY=VALUE with a dotted key, e.g. searcher.max_trials=8");
    const char *through[] = {"searcher.name.x=1"};
    expect_err_ov(__LINE__, MINIMAL, through, 1, T2_EINVAL,
                  "--config searcher.name.x=1: 'searcher.name' is not a map in the config, so it has no key 'x'");
    const char *empty_seg[] = {"searcher..name=1"};
    expect_err_ov(__LINE__, MINIMAL, empty_seg, 1, T2_EINVAL,
                  "--config searcher..name=1: bad key (empty segment or more than 32 levels)");
    const char *syntax[] = {"labels=[a, b"};
    cfg = NULL;
    CHECK_RC(t2__config_load_string(MINIMAL, "const.yaml", syntax, 1, &cfg), T2_EFORMAT);
    CHECK_STR(t2_errmsg(), "--config labels=[a, b: YAML syntax error: did not find expected ',' or ']' (while "
                           "parsing a flow sequence at line 1, column 1)");
    /* An override may supply a missing section; a NULL override is refused. */
    const char *add[] = {"searcher.max_trials=3", "searcher.name=random"};
    CHECK_OK(t2__config_load_string(MINIMAL, "const.yaml", add, 2, &cfg));
    CHECK(cfg && cfg->searcher.name == T2__SEARCH_RANDOM && cfg->searcher.max_trials == 3);
    t2__config_free(cfg);
    const char *nul[] = {NULL};
    cfg = NULL;
    CHECK_RC(t2__config_load_string(MINIMAL, "const.yaml", nul, 1, &cfg), T2_EINVAL);
    CHECK_RC(t2__config_load_string(MINIMAL, "const.yaml", NULL, 1, &cfg), T2_EINVAL);

    /* A length holds one unit: another unit given by --config replaces it (any length, not only
     * max_length), the same unit sets it; a map of the user's own under hyperparameters is never
     * taken for a length. */
    const char *units[] = {"searcher.max_length.epochs=2", "min_validation_period.records=640",
                           "min_checkpoint_period.batches=10", "min_checkpoint_period.epochs=1",
                           "hyperparameters.sched.epochs=3", "hyperparameters.sched.batches=4"};
    cfg = NULL;
    CHECK_OK(t2__config_load_string(MINIMAL "records_per_epoch: 6400\nmin_validation_period: {batches: 5}\n",
                                    "const.yaml", units, 6, &cfg));
    if (cfg) {
        CHECK(cfg->searcher.max_length.unit == T2__UNIT_EPOCHS && cfg->searcher.max_length.n == 2);
        CHECK(cfg->min_validation_period.unit == T2__UNIT_RECORDS && cfg->min_validation_period.n == 640);
        CHECK(cfg->min_checkpoint_period.unit == T2__UNIT_EPOCHS && cfg->min_checkpoint_period.n == 1);
        CHECK(!t2__val_lookup(cfg->tree, "searcher.max_length.batches"));
        const t2__val *e = t2__val_lookup(cfg->tree, "hyperparameters.sched.epochs");
        const t2__val *b = t2__val_lookup(cfg->tree, "hyperparameters.sched.batches");
        CHECK(e && e->i == 3 && b && b->i == 4);
        t2__config_free(cfg);
    }
    /* A unit that is no unit is still an error at the override, with the unit it resembles. */
    const char *typo[] = {"searcher.max_length.epoch=2"};
    cfg = NULL;
    CHECK_RC(t2__config_load_string(MINIMAL, "const.yaml", typo, 1, &cfg), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "--config searcher.max_length.epoch=2: searcher.max_length: 'epoch' is not a length unit "
                           "(expected batches, records or epochs; did you mean 'epochs'?)");
}

/* ---------- files ---------- */

static void test_files(void)
{
    char path[1024], want[1400];
    t2__config *cfg = NULL;
    /* good.yaml has one typo'd key: an error, or with --lenient a warning, naming the key it resembles. */
    CHECK_RC(t2__config_load(fixture_path(path, sizeof path, "config/good.yaml"), NULL, 0, &cfg), T2_EINVAL);
    snprintf(want, sizeof want, "%s:16:1: bind_mountz: unknown key (did you mean 'bind_mounts'?)", path);
    CHECK_STR(t2_errmsg(), want);
    t2__config_set_lenient(1);
    CHECK_OK(t2__config_load(fixture_path(path, sizeof path, "config/good.yaml"), NULL, 0, &cfg));
    t2__config_set_lenient(0);
    if (cfg) {
        CHECK_STR(cfg->name, "good"); /* no name key: the file name */
        CHECK(cfg->searcher.name == T2__SEARCH_GRID);
        size_t n = 0;
        const char *const *w = t2__config_warnings(cfg, &n);
        CHECK(n == 1);
        snprintf(want, sizeof want, "%s:16:1: unknown key 'bind_mountz' (ignored; did you mean 'bind_mounts'?)", path);
        if (n == 1) CHECK_STR(w[0], want);
        /* Anchors and aliases expand: both hparams share the same range. */
        const t2__hparam *a = t2__hparam_find(cfg->hparams, "a"), *b = t2__hparam_find(cfg->hparams, "b");
        CHECK(a && b && a->kind == T2__HP_DOUBLE && b->kind == T2__HP_DOUBLE && b->count == 3 && b->maxval == 2);
        t2__config_free(cfg);
    }

    CHECK_RC(t2__config_load(fixture_path(path, sizeof path, "config/bad_syntax.yaml"), NULL, 0, &cfg), T2_EFORMAT);
    snprintf(want, sizeof want,
             "%s:5:2: YAML syntax error: did not find expected key (while parsing a block mapping at line 2, column 1)",
             path);
    CHECK_STR(t2_errmsg(), want);
    CHECK(cfg == NULL);

    CHECK_RC(t2__config_load(fixture_path(path, sizeof path, "config/bad_type.yaml"), NULL, 0, &cfg), T2_EINVAL);
    snprintf(want, sizeof want, "%s:14:18: searcher.max_length.batches: expected a positive integer, got \"ten\"", path);
    CHECK_STR(t2_errmsg(), want);

    /* Not divisible by the slots: Determined's rounding, with a warning. */
    CHECK_OK(t2__config_load(fixture_path(path, sizeof path, "config/bad_batch.yaml"), NULL, 0, &cfg));
    if (cfg) {
        size_t n = 0;
        const char *const *w = t2__config_warnings(cfg, &n);
        snprintf(want, sizeof want,
                 "%s:3:22: hyperparameters.global_batch_size: 100 is not divisible by resources.slots_per_trial (3): "
                 "each slot trains on 33 records a step, 99 in all (Determined rounds the same way)",
                 path);
        CHECK(n == 1);
        if (n == 1) CHECK_STR(w[0], want);
        t2__config_free(cfg);
        cfg = NULL;
    }

    CHECK_RC(t2__config_load(fixture_path(path, sizeof path, "config/missing_batch.yaml"), NULL, 0, &cfg), T2_EINVAL);
    snprintf(want, sizeof want,
             "%s:1:1: hyperparameters.global_batch_size: missing required key, in the file or as --config hyperparameters.global_batch_size=N (Determined's Core API leaves the batch "
             "size to the training script; t2exp builds the batches and needs it)",
             path);
    CHECK_STR(t2_errmsg(), want);

    CHECK_RC(t2__config_load("/nonexistent/const.yaml", NULL, 0, &cfg), T2_ENOTFOUND);
    CHECK_STR(t2_errmsg(), "/nonexistent/const.yaml: cannot open: No such file or directory");
    CHECK_RC(t2__config_load(fixture_path(path, sizeof path, "config"), NULL, 0, &cfg), T2_EINVAL);
    snprintf(want, sizeof want, "%s: not a regular file (a directory); a config must be a YAML file", path);
    CHECK_STR(t2_errmsg(), want);
    CHECK_RC(t2__config_load(NULL, NULL, 0, &cfg), T2_EINVAL);
    CHECK_RC(t2__config_load(path, NULL, 0, NULL), T2_EINVAL);
    CHECK_RC(t2__config_load_string(NULL, "x", NULL, 0, &cfg), T2_EINVAL);
    t2__config_free(NULL);
}

/* YAML scalar resolution as configs see it (YAML 1.2 core schema). */
static void test_scalars(void)
{
    t2__config *cfg = load_ok(MINIMAL "data:\n"
                                      "  i: 42\n  neg: -7\n  hex: 0x1F\n  oct: 0o17\n  f: 1e-3\n  g: .5\n"
                                      "  inf: -.inf\n  t: True\n  n: ~\n  e:\n  s: \"42\"\n  y: yes\n"
                                      "  tagged: !!str 10\n  big: 99999999999999999999\n  ver: 1.2.3\n"
                                      "  block: |\n    two\n    lines\n");
    if (!cfg) return;
    const t2__val *d = cfg->data;
    CHECK(t2__val_lookup(d, "i")->kind == T2__VAL_INT && t2__val_lookup(d, "i")->i == 42);
    CHECK(t2__val_lookup(d, "neg")->i == -7);
    CHECK(t2__val_lookup(d, "hex")->i == 31 && t2__val_lookup(d, "oct")->i == 15);
    CHECK(t2__val_lookup(d, "f")->kind == T2__VAL_DOUBLE && t2__val_lookup(d, "f")->d == 1e-3);
    CHECK(t2__val_lookup(d, "g")->d == 0.5);
    CHECK(t2__val_lookup(d, "inf")->kind == T2__VAL_DOUBLE && t2__val_lookup(d, "inf")->d < -1e308);
    CHECK(t2__val_lookup(d, "t")->kind == T2__VAL_BOOL && t2__val_lookup(d, "t")->b == 1);
    CHECK(t2__val_lookup(d, "n")->kind == T2__VAL_NULL && t2__val_lookup(d, "e")->kind == T2__VAL_NULL);
    CHECK(t2__val_lookup(d, "s")->kind == T2__VAL_STRING && strcmp(t2__val_lookup(d, "s")->s, "42") == 0);
    CHECK(t2__val_lookup(d, "y")->kind == T2__VAL_STRING); /* YAML 1.2: yes is a string */
    CHECK(t2__val_lookup(d, "tagged")->kind == T2__VAL_STRING);
    CHECK(t2__val_lookup(d, "big")->kind == T2__VAL_DOUBLE);
    CHECK(t2__val_lookup(d, "ver")->kind == T2__VAL_STRING);
    CHECK(strcmp(t2__val_lookup(d, "block")->s, "two\nlines\n") == 0);
    /* The data section holds a non-finite double, which JSON cannot carry: the writer refuses. */
    char *json = NULL;
    CHECK_RC(t2__val_to_json(cfg->tree, &json, NULL), T2_ENUMERIC);
    CHECK(json == NULL);
    t2__config_free(cfg);

    /* Explicit nulls keep defaults. */
    cfg = load_ok(MINIMAL "max_restarts:\nresources:\ncheckpoint_storage: ~\ndescription: null\n");
    if (cfg) CHECK(cfg->max_restarts == 5 && cfg->resources.slots_per_trial == 1 && !cfg->description);
    t2__config_free(cfg);
}

/* YAML 1.1's merge key, as PyYAML (so Determined) reads it: `<<: *base` adds base's entries the
 * map lacks; the map's own keys win wherever they stand, and in `<<: [*a, *b]` a wins over b. A
 * quoted "<<" is an ordinary key. */
static void test_merge_keys(void)
{
    t2__config *cfg = load_ok("name: m\n"
                              "hyperparameters:\n"
                              "  global_batch_size: 1\n"
                              "  base: &base {type: double, minval: 0, maxval: 1}\n"
                              "  wide: &wide {type: int, minval: -5, maxval: 5, count: 3}\n"
                              "  after: {<<: *base, maxval: 4}\n"
                              "  before: {maxval: 3, <<: *base}\n"
                              "  both: {<<: [*wide, *base]}\n"
                              "  block:\n"
                              "    <<: *base\n"
                              "    minval: 0.5\n"
                              "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n");
    if (cfg) {
        const t2__hparam *a = t2__hparam_find(cfg->hparams, "after"), *b = t2__hparam_find(cfg->hparams, "before"),
                         *c = t2__hparam_find(cfg->hparams, "both"), *d = t2__hparam_find(cfg->hparams, "block");
        CHECK(a && a->kind == T2__HP_DOUBLE && a->minval == 0 && a->maxval == 4);
        CHECK(b && b->kind == T2__HP_DOUBLE && b->minval == 0 && b->maxval == 3);
        CHECK(c && c->kind == T2__HP_INT && c->minval == -5 && c->maxval == 5 && c->count == 3);
        CHECK(d && d->kind == T2__HP_DOUBLE && d->minval == 0.5 && d->maxval == 1);
        t2__config_free(cfg);
    }
    /* An anchor inside a merged map that is not itself anchored, aliased after the map's own key
     * replaced the merged entry, or after an earlier merged map won over it: the anchored node
     * lives until the parse ends (both read freed memory, found under ASan). */
    cfg = load_ok(MINIMAL "data:\n  <<: {a: &x 1}\n  a: 2\n  b: *x\n  c: {<<: [{k: 1}, {k: &z 7}]}\n  d: *z\n");
    if (cfg) {
        const t2__val *a = t2__val_map_get(cfg->data, "a"), *b = t2__val_map_get(cfg->data, "b"),
                      *k = t2__val_map_get(t2__val_map_get(cfg->data, "c"), "k"), *d = t2__val_map_get(cfg->data, "d");
        CHECK(a && a->kind == T2__VAL_INT && a->i == 2 && b && b->kind == T2__VAL_INT && b->i == 1);
        CHECK(k && k->kind == T2__VAL_INT && k->i == 1 && d && d->kind == T2__VAL_INT && d->i == 7);
        t2__config_free(cfg);
    }
    /* Into a nested hyperparameter, and an inline anchored map merged then aliased again. */
    cfg = load_ok("hyperparameters:\n"
                  "  global_batch_size: 1\n"
                  "  opt:\n"
                  "    lr: {<<: &r {type: log, minval: -4, maxval: -1, base: 10}, maxval: -2}\n"
                  "    wd: *r\n"
                  "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n");
    if (cfg) {
        const t2__hparam *lr = t2__hparam_find(cfg->hparams, "opt.lr"), *wd = t2__hparam_find(cfg->hparams, "opt.wd");
        CHECK(lr && lr->kind == T2__HP_LOG && lr->minval == -4 && lr->maxval == -2);
        CHECK(wd && wd->kind == T2__HP_LOG && wd->minval == -4 && wd->maxval == -1);
        t2__config_free(cfg);
    }
    EXPECT_ERR("a: {<<: 3}\n", T2_EFORMAT,
               "const.yaml:1:9: a merge key ('<<') takes a map or a list of maps (usually an alias: '<<: *base')");
    EXPECT_ERR("b: &b {x: 1}\na: {<<: [*b, 2]}\n", T2_EFORMAT,
               "const.yaml:2:14: a merge key's list ('<<: [*a, *b]') holds maps only");
    EXPECT_ERR("b: &b {x: 1}\na: {<<: *b, x: 2, x: 3}\n", T2_EINVAL,
               "const.yaml:2:19: a.x: duplicate key (and 4 more errors)");
    cfg = load_ok("hyperparameters:\n  global_batch_size: 1\n  b: &b {type: const, val: 1}\n  a: {\"<<\": *b}\n"
                  "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n");
    if (cfg) {
        const t2__hparam *q = t2__hparam_find(cfg->hparams, "a.<<");
        CHECK(q && q->kind == T2__HP_CONST);
        t2__config_free(cfg);
    }
}

/* searcher.points_to_evaluate: checked against the space wherever the two stand in the file, values
 * typed as the trial sees them, each problem at its place. */
static void test_points(void)
{
#define SPACE                                                                                   \
    "hyperparameters:\n"                                                                        \
    "  global_batch_size: 4\n"                                                                  \
    "  lr: {type: log, minval: -4, maxval: -1, base: 10}\n"                                    \
    "  n: {type: int, minval: 1, maxval: 8}\n"                                                  \
    "  opt:\n"                                                                                  \
    "    kind: {type: categorical, vals: [sgd, adam]}\n"                                        \
    "    m: {type: double, minval: 0, maxval: 1}\n"
#define RANDOM "searcher: {name: random, metric: loss, max_length: {batches: 1}, max_trials: 3,\n  points_to_evaluate: "
    /* Before the space and after it; 1e-4 is 10^-4 up to rounding; 2 for a double is 2.0. */
    const char *texts[] = {RANDOM "[{lr: 1e-4, n: 8, opt: {kind: adam, m: 1}}, {n: 2}]}\n" SPACE,
                           SPACE RANDOM "[{lr: 1e-4, n: 8, opt: {kind: adam, m: 1}}, {n: 2}]}\n"};
    for (int k = 0; k < 2; k++) {
        t2__config *cfg = load_ok(texts[k]);
        if (!cfg) continue;
        const t2__val *p = cfg->searcher.points;
        CHECK(p && p->kind == T2__VAL_LIST && p->n == 2);
        if (p && p->n == 2) {
            const t2__val *lr = t2__val_map_get(p->items[0], "lr"), *n = t2__val_map_get(p->items[0], "n");
            const t2__val *m = t2__val_lookup(p->items[0], "opt.m"), *kind = t2__val_lookup(p->items[0], "opt.kind");
            CHECK(lr && lr->kind == T2__VAL_DOUBLE && lr->d == 1e-4);
            CHECK(n && n->kind == T2__VAL_INT && n->i == 8);
            CHECK(m && m->kind == T2__VAL_DOUBLE && m->d == 1.0);
            CHECK(kind && kind->kind == T2__VAL_STRING && !strcmp(kind->s, "adam"));
            CHECK(p->items[1]->n == 1); /* partial: the rest is drawn */
        }
        t2__config_free(cfg);
    }
    EXPECT_ERR(SPACE RANDOM "[{lr: 0.5}]}\n", T2_EINVAL,
               "const.yaml:9:29: searcher.points_to_evaluate.0.lr: expected a number in [0.0001, 0.1] (10^-4 to "
               "10^-1), got 0.5");
    EXPECT_ERR(SPACE RANDOM "[{n: 2.5}]}\n", T2_EINVAL,
               "const.yaml:9:28: searcher.points_to_evaluate.0.n: expected an integer in [1, 8], got 2.5");
    EXPECT_ERR(SPACE RANDOM "[{opt: {kind: rmsprop}}]}\n", T2_EINVAL,
               "const.yaml:9:37: searcher.points_to_evaluate.0.opt.kind: expected one of [\"sgd\",\"adam\"], got "
               "\"rmsprop\"");
    EXPECT_ERR(SPACE RANDOM "[{opt: {mm: 0.5}}]}\n", T2_EINVAL,
               "const.yaml:9:31: searcher.points_to_evaluate.0.opt.mm: no such hyperparameter (did you mean 'm'?)");
    EXPECT_ERR(SPACE RANDOM "[{global_batch_size: 8}]}\n", T2_EINVAL,
               "const.yaml:9:44: searcher.points_to_evaluate.0.global_batch_size: expected the const value of "
               "hyperparameters.global_batch_size (a point sets only what is searched), got 8");
    EXPECT_ERR(SPACE RANDOM "[{n: 1}, 3]}\n", T2_EINVAL,
               "const.yaml:9:32: searcher.points_to_evaluate.1: expected a map of hyperparameter values, got 3");
    EXPECT_ERR(SPACE RANDOM "{n: 1}}\n", T2_EINVAL,
               "const.yaml:9:23: searcher.points_to_evaluate: expected a list of hyperparameter maps, got a map");
    EXPECT_ERR(SPACE RANDOM "[{n: 1}, {n: 2}, {n: 3}, {n: 4}]}\n", T2_EINVAL,
               "const.yaml:9:23: searcher.points_to_evaluate: 4 points, but the random search makes 3 trial(s)");
    /* Every bad value is reported, not only the first. */
    t2__config *cfg = NULL;
    CHECK(t2__config_load_string(SPACE RANDOM "[{n: 0, lr: 1}]}\n", "const.yaml", NULL, 0, &cfg) == T2_EINVAL);
    size_t nerr = 0, more = 0;
    const char *const *errs = t2__config_errors(&nerr, &more);
    CHECK(errs && nerr == 2 && strstr(errs[0], "points_to_evaluate.0.n:") && strstr(errs[1], "points_to_evaluate.0.lr:"));
    /* A grid runs every point of its grid already: the key does not apply (a warning). */
    cfg = load_ok("hyperparameters: {global_batch_size: 4, n: {type: int, minval: 1, maxval: 2, count: 2}}\n"
                  "searcher: {name: grid, metric: loss, max_length: {batches: 1}, points_to_evaluate: [{n: 1}]}\n");
    if (cfg) {
        CHECK(!cfg->searcher.points && cfg->nwarnings == 1 && strstr(cfg->warnings[0], "does not apply to the grid"));
        t2__config_free(cfg);
    }
#undef SPACE
#undef RANDOM
}

/* searcher.pruner: the defaults of a bare name, each key's range, the min_validation_period it
 * needs wherever that stands, and a warning where it does not apply. */
static void test_pruner(void)
{
#define HEAD "hyperparameters: {global_batch_size: 4}\n"
#define RANDOM "searcher: {name: random, metric: loss, max_length: {batches: 10}, max_trials: 3,\n  pruner: "
#define PERIOD "min_validation_period: {batches: 2}\n"
    t2__config *cfg = load_ok(HEAD RANDOM "median}\n" PERIOD);
    if (cfg) {
        const t2__pruner_config *p = &cfg->searcher.pruner;
        CHECK(p->on && p->percentile == 50 && p->n_startup_trials == 5 && p->n_min_trials == 1 && p->warmup.n == 0);
        t2__config_free(cfg);
    }
    /* min_validation_period before the searcher, and every key. */
    cfg = load_ok(HEAD PERIOD RANDOM "{name: percentile, percentile: 12.5, n_startup_trials: 0, n_min_trials: 3,"
                  " warmup: {epochs: 2}}}\n");
    if (cfg) {
        const t2__pruner_config *p = &cfg->searcher.pruner;
        CHECK(p->on && p->percentile == 12.5 && p->n_startup_trials == 0 && p->n_min_trials == 3 &&
              p->warmup.unit == T2__UNIT_EPOCHS && p->warmup.n == 2);
        t2__config_free(cfg);
    }
    EXPECT_ERR(HEAD RANDOM "median}\n", T2_EINVAL,
               "const.yaml:3:3: searcher.pruner: needs min_validation_period (e.g. min_validation_period: "
               "{batches: 100}): a pruner judges trials at the validations they report before max_length");
    EXPECT_ERR(HEAD RANDOM "mediam}\n" PERIOD, T2_EINVAL,
               "const.yaml:3:11: searcher.pruner: expected median, percentile, patient, threshold, successive_halving or "
               "hyperband, got \"mediam\" "
               "(did you mean 'median'?)");
    EXPECT_ERR(HEAD RANDOM "{name: percentile}}\n" PERIOD, T2_EINVAL,
               "const.yaml:3:3: searcher.pruner.percentile: missing required key, e.g. percentile: 25");
    EXPECT_ERR(HEAD RANDOM "{name: percentile, percentile: 101}}\n" PERIOD, T2_EINVAL,
               "const.yaml:3:42: searcher.pruner.percentile: expected a number in (0, 100], got 101");
    EXPECT_ERR(HEAD RANDOM "{name: median, percentile: 25}}\n" PERIOD, T2_EINVAL,
               "const.yaml:3:26: searcher.pruner.percentile: the median pruner does not take it (percentile does)");
    EXPECT_ERR(HEAD RANDOM "{name: median, n_min_trials: 0}}\n" PERIOD, T2_EINVAL,
               "const.yaml:3:40: searcher.pruner.n_min_trials: expected a positive integer, got 0");
    EXPECT_ERR(HEAD RANDOM "{name: median, warmup: 5}}\n" PERIOD, T2_EINVAL,
               "const.yaml:3:34: searcher.pruner.warmup: expected a length such as {batches: 1000} (one of batches, "
               "records or epochs), got 5");
    EXPECT_ERR(HEAD RANDOM "{name: median, n_warmup_steps: 5}}\n" PERIOD, T2_EINVAL,
               "const.yaml:3:26: searcher.pruner.n_warmup_steps: unknown key");
    EXPECT_ERR(HEAD RANDOM "[median]}\n" PERIOD, T2_EINVAL,
               "const.yaml:3:11: searcher.pruner: expected a pruner's name (median, percentile, patient, threshold, "
               "successive_halving or hyperband), or a map such as {name: median}");
    /* The rules on a trial's own values: patient (also for a single trial), threshold. */
    cfg = load_ok(HEAD PERIOD "searcher: {name: single, metric: loss, max_length: {batches: 10},\n"
                  "  pruner: {name: patient, patience: 2, min_delta: 0.5, warmup: {batches: 4}}}\n");
    if (cfg) {
        const t2__pruner_config *p = &cfg->searcher.pruner;
        CHECK(p->on && p->rule == 1 && p->patience == 2 && p->min_delta == 0.5 && p->warmup.n == 4);
        t2__config_free(cfg);
    }
    cfg = load_ok(HEAD PERIOD RANDOM "{name: threshold, upper: 3}}\n");
    if (cfg) {
        const t2__pruner_config *p = &cfg->searcher.pruner;
        CHECK(p->on && p->rule == 2 && isinf(p->lower) && p->lower < 0 && p->upper == 3);
        t2__config_free(cfg);
    }
    EXPECT_ERR(HEAD PERIOD "searcher: {name: single, metric: loss, max_length: {batches: 10}, pruner: median}\n",
               T2_EINVAL,
               "const.yaml:3:67: searcher.pruner: a single trial has no others to be compared with; the patient and "
               "threshold pruners judge a trial by its own values");
    EXPECT_ERR(HEAD PERIOD RANDOM "{name: patient}}\n", T2_EINVAL,
               "const.yaml:4:3: searcher.pruner.patience: missing required key, e.g. patience: 3 (validations "
               "without improvement)");
    EXPECT_ERR(HEAD PERIOD RANDOM "patient}\n", T2_EINVAL,
               "const.yaml:4:11: searcher.pruner: a patient pruner needs its settings, e.g. {name: patient, "
               "patience: 3}");
    EXPECT_ERR(HEAD PERIOD RANDOM "{name: patient, patience: 2, min_delta: -1}}\n", T2_EINVAL,
               "const.yaml:4:51: searcher.pruner.min_delta: expected a number >= 0, got -1");
    EXPECT_ERR(HEAD PERIOD RANDOM "{name: patient, patience: 2, upper: 1}}\n", T2_EINVAL,
               "const.yaml:4:40: searcher.pruner.upper: the patient pruner does not take it (threshold does)");
    EXPECT_ERR(HEAD PERIOD RANDOM "{name: threshold}}\n", T2_EINVAL,
               "const.yaml:4:3: searcher.pruner: a threshold pruner needs lower, upper or both");
    EXPECT_ERR(HEAD PERIOD RANDOM "{name: threshold, lower: 2, upper: 1}}\n", T2_EINVAL,
               "const.yaml:4:46: searcher.pruner: lower 2 is above upper 1");
    /* successive_halving: Optuna's defaults, min_resource auto = max_length / 100 (at least 1). */
    cfg = load_ok(HEAD PERIOD "searcher: {name: random, metric: loss, max_length: {epochs: 500}, max_trials: 3,\n"
                  "  pruner: successive_halving}\n");
    if (cfg) {
        const t2__pruner_config *p = &cfg->searcher.pruner;
        CHECK(p->on && p->rule == 3 && !p->hyperband && p->reduction_factor == 4 && p->min_early_stopping_rate == 0 &&
              p->bootstrap_count == 0 && p->min_resource.unit == T2__UNIT_EPOCHS && p->min_resource.n == 5 &&
              p->n_brackets == 1);
        t2__config_free(cfg);
    }
    cfg = load_ok(HEAD PERIOD RANDOM "{name: successive_halving, min_resource: {records: 8}, reduction_factor: 2,"
                  " min_early_stopping_rate: 1, bootstrap_count: 2}}\n");
    if (cfg) {
        const t2__pruner_config *p = &cfg->searcher.pruner;
        CHECK(p->on && p->rule == 3 && p->reduction_factor == 2 && p->min_early_stopping_rate == 1 &&
              p->bootstrap_count == 2 && p->min_resource.unit == T2__UNIT_RECORDS && p->min_resource.n == 8);
        t2__config_free(cfg);
    }
    /* hyperband: min_resource 1, max_resource max_length, reduction_factor 3; brackets counted in
     * integers: 1000 / 1 with rf 10 is 4 brackets (Optuna's float log says 3). */
    cfg = load_ok(HEAD PERIOD "searcher: {name: random, metric: loss, max_length: {batches: 1000}, max_trials: 3,\n"
                  "  pruner: {name: hyperband, reduction_factor: 10}}\n");
    if (cfg) {
        const t2__pruner_config *p = &cfg->searcher.pruner;
        CHECK(p->on && p->rule == 3 && p->hyperband && p->min_resource.n == 1 && p->max_resource.n == 1000 &&
              p->n_brackets == 4);
        t2__config_free(cfg);
    }
    cfg = load_ok(HEAD PERIOD RANDOM "hyperband}\n"); /* 10 / 1, rf 3: rungs 1, 3, 9 */
    if (cfg) {
        CHECK(cfg->searcher.pruner.reduction_factor == 3 && cfg->searcher.pruner.n_brackets == 3);
        t2__config_free(cfg);
    }
    EXPECT_ERR(HEAD PERIOD RANDOM "{name: successive_halving, reduction_factor: 1}}\n", T2_EINVAL,
               "const.yaml:4:56: searcher.pruner.reduction_factor: expected an integer in [2, 1000000], got 1");
    EXPECT_ERR(HEAD PERIOD RANDOM "{name: successive_halving, max_resource: auto}}\n", T2_EINVAL,
               "const.yaml:4:38: searcher.pruner.max_resource: the successive_halving pruner does not take it "
               "(hyperband does)");
    EXPECT_ERR(HEAD PERIOD RANDOM "{name: hyperband, warmup: {batches: 2}}}\n", T2_EINVAL,
               "const.yaml:4:29: searcher.pruner.warmup: the hyperband pruner does not take it (median or "
               "percentile or patient or threshold does)");
    EXPECT_ERR(HEAD PERIOD RANDOM "{name: hyperband, min_resource: auto}}\n", T2_EINVAL,
               "const.yaml:4:43: searcher.pruner.min_resource: expected a length such as {batches: 100}, got auto");
    EXPECT_ERR(HEAD PERIOD RANDOM "{name: hyperband, min_resource: {epochs: 1}}}\n", T2_EINVAL,
               "const.yaml:4:29: searcher.pruner.min_resource: is in epochs and max_resource (max_length) in batches: "
               "give both in one unit");
    EXPECT_ERR(HEAD PERIOD RANDOM "{name: hyperband, min_resource: {batches: 20}}}\n", T2_EINVAL,
               "const.yaml:4:29: searcher.pruner.min_resource: 20 batches is above max_resource 10");
    EXPECT_ERR(HEAD PERIOD "searcher: {name: single, metric: loss, max_length: {batches: 10}, pruner: hyperband}\n",
               T2_EINVAL,
               "const.yaml:3:67: searcher.pruner: a single trial has no others to be compared with; the patient and "
               "threshold pruners judge a trial by its own values");
    /* A patient pruner around another: the wrapped rule's keys, the patient one's patience and warmup. */
    cfg = load_ok(HEAD PERIOD RANDOM "{name: patient, patience: 2, min_delta: 0.1, warmup: {batches: 4},\n"
                  "    wrapped_pruner: {name: percentile, percentile: 30}}}\n");
    if (cfg) {
        const t2__pruner_config *p = &cfg->searcher.pruner;
        CHECK(p->on && p->rule == 0 && p->patient_wrap && p->percentile == 30 && p->patience == 2 &&
              p->min_delta == 0.1 && p->warmup.n == 4 && p->n_startup_trials == 5);
        t2__config_free(cfg);
    }
    cfg = load_ok(HEAD PERIOD RANDOM "{name: patient, patience: 1, wrapped_pruner: hyperband}}\n");
    if (cfg) {
        const t2__pruner_config *p = &cfg->searcher.pruner;
        CHECK(p->on && p->rule == 3 && p->hyperband && p->patient_wrap && p->n_brackets == 3 && p->patience == 1);
        t2__config_free(cfg);
    }
    EXPECT_ERR(HEAD PERIOD RANDOM "{name: median, wrapped_pruner: median}}\n", T2_EINVAL,
               "const.yaml:4:26: searcher.pruner.wrapped_pruner: the median pruner does not take it (patient does)");
    EXPECT_ERR(HEAD PERIOD RANDOM "{name: patient, patience: 1, wrapped_pruner: {name: patient, patience: 2}}}\n",
               T2_EINVAL, "const.yaml:4:40: searcher.pruner.wrapped_pruner: a patient pruner cannot wrap another patient "
               "pruner (one patience is enough)");
    EXPECT_ERR(HEAD PERIOD RANDOM "{name: patient, patience: 1, wrapped_pruner: {name: median, warmup: {batches: 2}}}}\n",
               T2_EINVAL, "const.yaml:4:71: searcher.pruner.wrapped_pruner.warmup: give warmup to the patient pruner "
               "that wraps this one");
    EXPECT_ERR(HEAD PERIOD "searcher: {name: single, metric: loss, max_length: {batches: 10},\n"
               "  pruner: {name: patient, patience: 1, wrapped_pruner: median}}\n", T2_EINVAL,
               "const.yaml:4:40: searcher.pruner.wrapped_pruner: a single trial has no others to be compared with; "
               "the patient and threshold pruners judge a trial by its own values");
    /* ASHA's tpe sampler takes tpe's sampling keys, not its pruner. */
    cfg = load_ok(HEAD PERIOD "searcher: {name: adaptive_asha, sampler: tpe, metric: loss, max_length: {batches: 10},"
                  " max_trials: 3, n_startup_trials: 2, pruner: median}\n");
    if (cfg) {
        CHECK(!cfg->searcher.pruner.on && cfg->searcher.tpe.n_startup_trials == 2 && cfg->nwarnings == 1 &&
              strstr(cfg->warnings[0], "'searcher.pruner' does not apply to the adaptive_asha searcher"));
        t2__config_free(cfg);
    }
    /* ASHA stops trials itself: the key does not apply (a warning), and nothing is asked of the trials. */
    cfg = load_ok(HEAD "searcher: {name: adaptive_asha, metric: loss, max_length: {batches: 10}, max_trials: 3,"
                  " pruner: median}\n");
    if (cfg) {
        CHECK(!cfg->searcher.pruner.on && cfg->nwarnings == 1 &&
              strstr(cfg->warnings[0], "'searcher.pruner' does not apply to the adaptive_asha searcher"));
        t2__config_free(cfg);
    }
#undef HEAD
#undef RANDOM
#undef PERIOD
}

/* An error that a --config override causes is placed at the override, also when the problem is
 * seen at a value of the file (the override is what was just typed; the file line was not changed). */
static void test_override_placement(void)
{
#define OK_YAML "hyperparameters:\n  global_batch_size: 4\n  x: {type: double, minval: 1, maxval: 5}\n" \
                "searcher:\n  name: single\n  metric: loss\n  max_length: {batches: 3}\n"
#define OV_ERR(ov, msg)                                                                           \
    do {                                                                                          \
        const char *o_[1] = {ov};                                                                 \
        expect_err_ov(__LINE__, OK_YAML, o_, 1, T2_EINVAL, msg);                                  \
    } while (0)
    OV_ERR("searcher.metric=", "--config searcher.metric=: searcher.metric: missing required key (null counts as absent)");
    OV_ERR("hyperparameters.x.minval=10",
           "--config hyperparameters.x.minval=10: hyperparameters.x.minval: minval 10 is greater than maxval 5");
    OV_ERR("hyperparameters.x.maxval=0", "--config hyperparameters.x.maxval=0: hyperparameters.x.maxval: maxval 0 is "
                                         "less than minval 1");
    OV_ERR("searcher.name=grid", "--config searcher.name=grid: hyperparameters.x: the grid searcher needs a count for "
                                 "a double hyperparameter (how many points to try)");
    OV_ERR("resources.slots_per_trial=8", "--config resources.slots_per_trial=8: hyperparameters.global_batch_size: 4 "
                                          "is less than resources.slots_per_trial (8); every slot needs at least one "
                                          "record a step");
    OV_ERR("searcher.name=random", "--config searcher.name=random: searcher.max_trials: missing required key");
    OV_ERR("searcher.name=pbt", "--config searcher.name=pbt: searcher.population_size: missing required key (and 2 "
                                "more errors)");
    OV_ERR("searcher.sampler=tpe", "--config searcher.sampler=tpe: searcher.sampler: only the adaptive_asha searcher "
                                   "takes a sampler (the single searcher draws its own hparams)");
    /* The file's own problems stay at the file, with an override elsewhere. */
    const char *other[1] = {"searcher.metric=acc"};
    expect_err_ov(__LINE__, OK_YAML "  max_trials: 2\n  max_trials: 3\n", other, 1, T2_EINVAL,
                  "const.yaml:9:3: searcher.max_trials: duplicate key");
    expect_err_ov(__LINE__,
                  "hyperparameters:\n  global_batch_size: 4\n  x: {type: double, minval: 9, maxval: 5}\n"
                  "searcher:\n  name: single\n  metric: loss\n  max_length: {batches: 3}\n",
                  other, 1, T2_EINVAL, "const.yaml:3:40: hyperparameters.x.maxval: maxval 5 is less than minval 9");
    /* A threshold pruner's ends: at the one the override set. */
    const char *lower[1] = {"searcher.pruner.lower=20"};
    expect_err_ov(__LINE__,
                  "min_validation_period: {batches: 1}\nhyperparameters: {global_batch_size: 4}\nsearcher: {name: single, metric: loss, max_length: 3, "
                  "pruner: {name: threshold, lower: 1, upper: 10}}\n",
                  lower, 1, T2_EINVAL, "--config searcher.pruner.lower=20: searcher.pruner: lower 20 is above upper 10");
    /* Checks of several values at once (probe M, item 7): at the override that changed one of them. */
    const char *count[1] = {"hyperparameters.a.count=1000001"};
    expect_err_ov(__LINE__,
                  "hyperparameters:\n  global_batch_size: 1\n  a: {type: double, minval: 0, maxval: 1, count: 2}\n"
                  "searcher: {name: grid, metric: loss, max_length: 1}\n",
                  count, 1, T2_EINVAL,
                  "--config hyperparameters.a.count=1000001: hyperparameters: the grid has 1000001 points, more than "
                  "the 1000000 a grid search may have");
    /* A bad time_metric without max_time: both errors, the missing one at the override that asked for it. */
    OV_ERR("searcher.time_metric=loss",
           "--config searcher.time_metric=loss: searcher.time_metric: t2exp measures training in batches, records or "
           "epochs, got \"loss\" (Determined follows a metric the script reports; here use time_metric: batches, "
           "records or epochs) (and 1 more error)");
    {
        size_t n = 0, more = 0;
        const char *const *e = t2__config_errors(&n, &more);
        CHECK(n == 2 && more == 0);
        if (n == 2) CHECK_STR(e[1], "--config searcher.time_metric=loss: searcher.max_time: missing required key");
    }
    OV_ERR("searcher.max_time=7", "--config searcher.max_time=7: searcher.time_metric: missing required key");
    /* What a type or a pruner's name needs, missing because an override set them. */
    OV_ERR("hyperparameters.x.type=const", "--config hyperparameters.x.type=const: hyperparameters.x.val: missing "
                                           "required key");
    const char *pct[1] = {"searcher.pruner.name=percentile"};
    expect_err_ov(__LINE__,
                  "min_validation_period: {batches: 1}\nhyperparameters: {global_batch_size: 4}\nsearcher: {name: "
                  "random, metric: loss, max_length: 3, max_trials: 4, pruner: {name: median}}\n",
                  pct, 1, T2_EINVAL,
                  "--config searcher.pruner.name=percentile: searcher.pruner.percentile: missing required key, e.g. "
                  "percentile: 25");
    /* More points than trials because an override lowered max_trials. */
    const char *trials[1] = {"searcher.max_trials=1"};
    expect_err_ov(__LINE__,
                  "hyperparameters: {global_batch_size: 4, x: {type: double, minval: 1, maxval: 5}}\nsearcher: {name: "
                  "random, metric: loss, max_length: 3, max_trials: 4, points_to_evaluate: [{x: 2}, {x: 3}]}\n",
                  trials, 1, T2_EINVAL,
                  "--config searcher.max_trials=1: searcher.points_to_evaluate: 2 points, but the random search makes "
                  "1 trial(s)");
#undef OV_ERR
#undef OK_YAML
}

int main(void)
{
    test_examples();
    test_defaults();
    test_every_key();
    test_batch_sizes();
    test_yaml_syntax_errors();
    test_schema_errors();
    test_hparam_errors();
    test_warnings();
    test_overrides();
    test_files();
    test_scalars();
    test_merge_keys();
    test_points();
    test_pruner();
    test_override_placement();
    return check_report("test_config");
}
