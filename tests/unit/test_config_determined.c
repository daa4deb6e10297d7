/* test_config_determined.c — Determined's config forms that t2exp accepts: time_metric + max_time,
 * a bare-integer max_length, slots_per_trial 0, a global batch the slots do not divide (rounded
 * per slot, warned), dotted names inside a hyperparameter group, environment_variables (a list or
 * the per-device map), and the missing-key messages that explain what Determined's Core API
 * leaves to the script. Messages are checked exactly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "../../configs/config.h" /* configs/ is not on the test include path */

#define HP "hyperparameters:\n  global_batch_size: 32\n"

/* text loaded, with one --config override ov (NULL: none); a failure is a failed check. */
static t2__config *load_ov(const char *text, const char *ov)
{
    const char *ovs[1] = {ov};
    t2__config *cfg = NULL;
    if (t2__config_load_string(text, "const.yaml", ovs, ov ? 1 : 0, &cfg)) {
        fprintf(stderr, "unexpected failure: %s\n--- config (--config %s) ---\n%s\n", t2_errmsg(), ov ? ov : "none",
                text);
        check_failures++;
    }
    return cfg;
}

static t2__config *load(const char *text) { return load_ov(text, NULL); }

static const char *warning(const t2__config *cfg, size_t k)
{
    size_t n = 0;
    const char *const *w = t2__config_warnings(cfg, &n);
    return k < n ? w[k] : "(no such warning)";
}

/* text with one --config override ov (NULL: none) is refused with exactly msg. */
static void expect_err_ov(int line, const char *text, const char *ov, const char *msg)
{
    const char *ovs[1] = {ov};
    t2__config *cfg = NULL;
    int rc = t2__config_load_string(text, "const.yaml", ovs, ov ? 1 : 0, &cfg);
    if (rc != T2_EINVAL || strcmp(t2_errmsg(), msg) != 0) {
        fprintf(stderr, "test_config_determined.c:%d: rc %d\n  got  \"%s\"\n  want \"%s\"\n", line, rc, t2_errmsg(), msg);
        check_failures++;
    }
    t2__config_free(cfg);
}

static void expect_err(int line, const char *text, const char *msg) { expect_err_ov(line, text, NULL, msg); }

static void test_lengths(void)
{
    t2__config *cfg = load(HP "searcher: {name: single, metric: loss, time_metric: batches, max_time: 937}\n");
    CHECK(cfg && cfg->searcher.max_length.unit == T2__UNIT_BATCHES && cfg->searcher.max_length.n == 937);
    t2__config_free(cfg);
    cfg = load(HP "searcher: {name: single, metric: loss, time_metric: epochs, max_time: 3}\n");
    CHECK(cfg && cfg->searcher.max_length.unit == T2__UNIT_EPOCHS && cfg->searcher.max_length.n == 3);
    t2__config_free(cfg);
    cfg = load(HP "searcher: {name: single, metric: loss, max_length: 1}\n"); /* Determined: batches */
    CHECK(cfg && cfg->searcher.max_length.unit == T2__UNIT_BATCHES && cfg->searcher.max_length.n == 1);
    t2__config_free(cfg);
    expect_err(__LINE__, HP "searcher: {name: single, metric: loss, time_metric: val_loss, max_time: 3}\n",
               "const.yaml:3:53: searcher.time_metric: t2exp measures training in batches, records or epochs, got "
               "\"val_loss\" (Determined follows a metric the script reports; here use time_metric: batches, records "
               "or epochs)");
    expect_err(__LINE__, HP "searcher: {name: single, metric: loss, time_metric: batches}\n",
               "const.yaml:3:1: searcher.max_time: missing required key");
    expect_err(__LINE__,
               HP "searcher: {name: single, metric: loss, max_length: {batches: 5}, time_metric: batches, max_time: 3}\n",
               "const.yaml:3:66: searcher.time_metric: give either max_length or time_metric with max_time, not both");
    expect_err(__LINE__, HP "searcher: {name: single, metric: loss, max_length: 0}\n",
               "const.yaml:3:52: searcher.max_length: expected a positive integer, got 0");
    expect_err(__LINE__, HP "searcher: {name: single, metric: loss}\n",
               "const.yaml:3:1: searcher.max_length: missing required key, e.g. max_length: {batches: 1000} or "
               "time_metric: batches with max_time: 1000, in the file or as --config searcher.max_length.batches=1000 (Determined's Core API leaves the training length to the "
               "training script; t2exp runs the training loop and needs it)");
    expect_err(__LINE__, "searcher: {name: single, metric: loss, max_length: 5}\n",
               "const.yaml:1:1: hyperparameters.global_batch_size: missing required key, in the file or as --config hyperparameters.global_batch_size=N (Determined's Core API leaves "
               "the batch size to the training script; t2exp builds the batches and needs it)");
}

/* A null max_length is absent, as every optional key's null is: time_metric with max_time gives
 * the length (it was refused as "expected a length, got null" and "not both"). Without them the
 * missing key is placed at the null, in the file or at the override. */
static void test_null_length(void)
{
    static const char *const nulls[] = {"max_length:", "max_length: null", "max_length: ~"};
    for (size_t k = 0; k < 3; k++) {
        char text[512];
        snprintf(text, sizeof text, HP "searcher:\n  name: single\n  metric: loss\n  %s\n  time_metric: batches\n"
                                       "  max_time: 40\n", nulls[k]);
        t2__config *cfg = load(text);
        CHECK(cfg && cfg->searcher.max_length.unit == T2__UNIT_BATCHES && cfg->searcher.max_length.n == 40);
        t2__config_free(cfg);
    }
    const char *both = HP "searcher:\n  name: single\n  metric: loss\n  max_length: {batches: 5}\n  time_metric: "
                          "records\n  max_time: 64\n";
    for (int k = 0; k < 2; k++) {
        t2__config *cfg = load_ov(both, k ? "searcher.max_length=" : "searcher.max_length=null");
        CHECK(cfg && cfg->searcher.max_length.unit == T2__UNIT_RECORDS && cfg->searcher.max_length.n == 64);
        t2__config_free(cfg);
    }
    expect_err(__LINE__, HP "searcher:\n  name: single\n  metric: loss\n  max_length:\n",
               "const.yaml:6:14: searcher.max_length: missing required key (null counts as absent), e.g. max_length: "
               "{batches: 1000} or time_metric: batches with max_time: 1000, in the file or as --config searcher.max_length.batches=1000 (Determined's Core API leaves the "
               "training length to the training script; t2exp runs the training loop and needs it)");
    expect_err_ov(__LINE__, HP "searcher:\n  name: single\n  metric: loss\n  max_length: 4\n", "searcher.max_length=~",
                  "--config searcher.max_length=~: searcher.max_length: missing required key (null counts as absent), "
                  "e.g. max_length: {batches: 1000} or time_metric: batches with max_time: 1000, in the file or as --config searcher.max_length.batches=1000 (Determined's Core "
                  "API leaves the training length to the training script; t2exp runs the training loop and needs it)");
    /* Both given: placed at time_metric, or at max_length when an override set it. */
    expect_err_ov(__LINE__, both, "searcher.max_length.batches=7",
                  "--config searcher.max_length.batches=7: searcher.max_length: give either max_length or time_metric "
                  "with max_time, not both");
    expect_err_ov(__LINE__, both, "searcher.max_time=",
                  "--config searcher.max_time=: searcher.max_time: missing required key (null counts as absent)");
}

/* A bare-int length (`max_length: 250`, batches) takes a unit override as {batches: 250} would:
 * "'searcher.max_length' is not a map in the config" before. Not under hyperparameters, and not a
 * key that is no unit. */
static void test_bare_length_override(void)
{
    const char *bare = HP "records_per_epoch: 640\nsearcher: {name: single, metric: loss, max_length: 250}\n";
    static const struct { const char *ov; int unit; int64_t n; } cases[] = {
        {"searcher.max_length.batches=60", T2__UNIT_BATCHES, 60},
        {"searcher.max_length.epochs=2", T2__UNIT_EPOCHS, 2},
        {"searcher.max_length.records=320", T2__UNIT_RECORDS, 320},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        t2__config *cfg = load_ov(bare, cases[k].ov);
        CHECK(cfg && (int)cfg->searcher.max_length.unit == cases[k].unit && cfg->searcher.max_length.n == cases[k].n);
        t2__config_free(cfg);
    }
    /* Only max_length may be a bare int; another length's unit override replaces it all the same. */
    char other[512];
    snprintf(other, sizeof other, "%smin_validation_period: 10\n", bare);
    t2__config *cfg = load_ov(other, "min_validation_period.epochs=1");
    CHECK(cfg && cfg->min_validation_period.unit == T2__UNIT_EPOCHS && cfg->min_validation_period.n == 1);
    t2__config_free(cfg);
    expect_err_ov(__LINE__, bare, "searcher.max_length.weeks=1",
                  "--config searcher.max_length.weeks=1: 'searcher.max_length' is not a map in the config, so it has "
                  "no key 'weeks'");
    /* data: is the trial's own: a scalar there is not a length (it became {epochs: 3}). */
    expect_err_ov(__LINE__, HP "searcher: {name: single, metric: loss, max_length: 5}\ndata: {warmup: 5}\n",
                  "data.warmup.epochs=3",
                  "--config data.warmup.epochs=3: 'data.warmup' is not a map in the config, so it has no key 'epochs'");
    expect_err_ov(__LINE__, HP "  x: 3\nsearcher: {name: single, metric: loss, max_length: 5}\n",
                  "hyperparameters.x.batches=2",
                  "--config hyperparameters.x.batches=2: 'hyperparameters.x' is not a map in the config, so it has no "
                  "key 'batches'");
}

static void test_slots_and_batches(void)
{
    t2__config *cfg = load(HP "searcher: {name: single, metric: loss, max_length: 5}\nresources: {slots_per_trial: 0}\n");
    if (cfg) {
        CHECK(cfg->resources.slots_per_trial == 1);
        CHECK_STR(warning(cfg, 0),
                  "const.yaml:4:30: resources.slots_per_trial: 0 (Determined's CPU-only value) runs each trial on 1 slot");
    }
    t2__config_free(cfg);
    cfg = load("hyperparameters:\n  global_batch_size: {type: categorical, vals: [64, 100]}\n"
               "searcher: {name: grid, metric: loss, max_length: 5}\nresources: {slots_per_trial: 3}\n");
    if (cfg) {
        CHECK_STR(warning(cfg, 0), "const.yaml:2:49: hyperparameters.global_batch_size.vals.0: 64 is not divisible by "
                                   "resources.slots_per_trial (3): each slot trains on 21 records a step, 63 in all "
                                   "(Determined rounds the same way)");
        t2__val *hp = t2__val_map();
        int64_t g = 0, s = 0;
        CHECK_OK(t2__val_map_set(hp, "global_batch_size", t2__val_int(100)));
        CHECK_OK(t2__config_batch_sizes(cfg, hp, &g, &s));
        CHECK(g == 99 && s == 33);
        t2__val_free(hp);
    }
    t2__config_free(cfg);
    cfg = load("hyperparameters:\n  global_batch_size: {type: int, minval: 8, maxval: 64}\n"
               "searcher: {name: single, metric: loss, max_length: 5}\nresources: {slots_per_trial: 2}\n");
    if (cfg)
        CHECK_STR(warning(cfg, 0), "const.yaml:2:22: hyperparameters.global_batch_size: values not divisible by "
                                   "resources.slots_per_trial (2) are rounded down to a multiple of it (each slot "
                                   "takes value / 2 records a step, as in Determined)");
    t2__config_free(cfg);
}

static void test_dotted_group(void)
{
    t2__config *cfg = load(HP "  overwrite_deepspeed_args:\n    zero_optimization.stage: 2\n    fp16.enabled: true\n"
                              "searcher: {name: single, metric: loss, max_length: 5}\n");
    if (cfg) {
        t2__val *hp = NULL;
        char *json = NULL;
        CHECK_OK(t2__hparam_build(cfg->hparams, NULL, &hp));
        CHECK_OK(t2__val_to_json(hp, &json, NULL));
        CHECK_STR(json, "{\"global_batch_size\":32,\"overwrite_deepspeed_args\":{\"zero_optimization.stage\":2,"
                        "\"fp16.enabled\":true}}");
        free(json);
        t2__val_free(hp);
    }
    t2__config_free(cfg);
}

static void test_environment(void)
{
    t2__config *cfg = load(HP "searcher: {name: single, metric: loss, max_length: 5}\n"
                              "environment:\n  environment_variables:\n    - OMP_NUM_THREADS=2\n    - A=x=y\n"
                              "    - OMP_NUM_THREADS=1\n");
    if (cfg) {
        CHECK(cfg->environment.nvars == 2);
        if (cfg->environment.nvars == 2) {
            CHECK_STR(cfg->environment.vars[0], "OMP_NUM_THREADS=1"); /* the later one wins, as in a shell */
            CHECK_STR(cfg->environment.vars[1], "A=x=y");
        }
    }
    t2__config_free(cfg);
    cfg = load(HP "searcher: {name: single, metric: loss, max_length: 5}\n"
                  "environment:\n  environment_variables: {cpu: [B=1], cuda: [NCCL_DEBUG=INFO], rocm: []}\n");
    if (cfg) {
        CHECK(cfg->environment.nvars == 1);
        if (cfg->environment.nvars == 1) CHECK_STR(cfg->environment.vars[0], "B=1");
        CHECK_STR(warning(cfg, 0), "const.yaml:5:39: key 'environment.environment_variables.cuda' is accepted but "
                                   "ignored: trials run on CPUs; the cpu list is used");
    }
    t2__config_free(cfg);
    expect_err(__LINE__,
               HP "searcher: {name: single, metric: loss, max_length: 5}\n"
                  "environment: {environment_variables: [\"1X=2\", NOEQUALS]}\n",
               "const.yaml:4:39: environment.environment_variables.0: expected \"NAME=value\" (NAME: letters, digits "
               "and _, not starting with a digit), got the string \"1X=2\" (and 1 more error)");
    expect_err(__LINE__,
               HP "searcher: {name: single, metric: loss, max_length: 5}\nenvironment: {environment_varaibles: []}\n",
               "const.yaml:4:15: environment.environment_varaibles: unknown key (did you mean "
               "'environment_variables'?)");
}

/* Determined keys t2exp takes under another name or form say what to write (probe_K: pre-0.13's
 * max_steps got "did you mean 'resources.max_slots'?", pbt's functions a bare "unknown key"); a file
 * refused for an error still shows its accepted-but-ignored notes; bracket_rungs past the ASHA
 * searcher's 62 rungs is refused where it is written. */
static void test_former_keys(void)
{
#define SEARCH_OLD "searcher:\n  name: single\n  metric: loss\n  max_length: {batches: 5}\n"
    expect_err(__LINE__, HP SEARCH_OLD "  max_steps: 10\n",
               "const.yaml:7:3: searcher.max_steps: unknown key: Determined 0.12's length in steps; t2exp counts "
               "batches: searcher.max_length: {batches: N}, N = max_steps x batches_per_step (100 by default)");
    expect_err(__LINE__, HP SEARCH_OLD "batches_per_step: 5\n",
               "const.yaml:7:1: batches_per_step: unknown key: Determined 0.12's step; t2exp's lengths are in "
               "batches, records or epochs: write searcher.max_length, min_validation_period and "
               "min_checkpoint_period as {batches: N}");
    expect_err(__LINE__,
               HP "  x: 1\nsearcher:\n  name: pbt\n  metric: loss\n  population_size: 4\n  num_rounds: 2\n"
                  "  length_per_round: {batches: 10}\n  replace_function: {truncate_fraction: 0.2}\n",
               "const.yaml:10:3: searcher.replace_function: unknown key: Determined's pbt replace_function "
               "{truncate_fraction: F} is t2exp's searcher.quantile_fraction: F");
    expect_err(__LINE__,
               HP "searcher:\n  name: adaptive_asha\n  metric: loss\n  max_trials: 4\n"
                  "  max_length: {batches: 100}\n  bracket_rungs: [4, 63]\n",
               "const.yaml:8:22: searcher.bracket_rungs.1: expected 1 to 62 rungs, got 63");
    /* The error's file keeps its warnings, to be shown with it. */
    t2__config *cfg = NULL;
    CHECK(t2__config_load_string(HP SEARCH_OLD "entrypoint: model_def:MyTrial\nmax_restart: 1\n", "const.yaml", NULL, 0,
                                 &cfg) == T2_EINVAL);
    size_t nw = 0;
    const char *const *w = t2__config_error_warnings(&nw);
    CHECK(nw == 1 && strstr(w[0], "const.yaml:7:1: key 'entrypoint' is accepted but ignored") == w[0]);
    CHECK(strstr(t2_errmsg(), "max_restart: unknown key (did you mean 'max_restarts'?)") != NULL);
    CHECK(t2__config_load_string(HP SEARCH_OLD, "const.yaml", NULL, 0, &cfg) == T2_OK);
    t2__config_free(cfg);
    CHECK(t2__config_error_warnings(&nw) == NULL && nw == 0);
#undef SEARCH_OLD
}

int main(void)
{
    test_lengths();
    test_null_length();
    test_bare_length_override();
    test_slots_and_batches();
    test_dotted_group();
    test_environment();
    test_former_keys();
    return check_report("test_config_determined");
}
