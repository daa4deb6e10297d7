/* test_config_strict.c — unknown keys are errors naming the closest known key, every problem in a
 * file is reported in one load, a type-less hyperparameter with a range is an error, --lenient
 * (t2__config_set_lenient) makes unknown keys warnings, and Determined's cluster-only keys are one
 * warning each in both modes. Messages are checked exactly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "test_config_util.h"
#include "../../configs/config.h" /* configs/ is not on the test include path */

/* The load fails with T2_EINVAL, t2_errmsg() is errmsg, and t2__config_errors lists exactly want[]. */
static void expect_errors(int line, const char *text, const char *errmsg, const char *const *want, size_t nwant)
{
    t2__config *cfg = (t2__config *)1;
    int rc = t2__config_load_string(text, "const.yaml", NULL, 0, &cfg);
    if (rc != T2_EINVAL || cfg != NULL) {
        fprintf(stderr, "test_config_strict.c:%d: rc %d, wanted T2_EINVAL\n", line, rc);
        check_failures++;
        if (rc == T2_OK) t2__config_free(cfg);
        return;
    }
    if (strcmp(t2_errmsg(), errmsg) != 0) {
        fprintf(stderr, "test_config_strict.c:%d: errmsg\n  got  \"%s\"\n  want \"%s\"\n", line, t2_errmsg(), errmsg);
        check_failures++;
    }
    size_t n = 0, more = 9;
    const char *const *e = t2__config_errors(&n, &more);
    if (n != nwant || more != 0) {
        fprintf(stderr, "test_config_strict.c:%d: %zu errors (+%zu), wanted %zu\n", line, n, more, nwant);
        for (size_t k = 0; k < n; k++) fprintf(stderr, "  %s\n", e[k]);
        check_failures++;
        return;
    }
    for (size_t k = 0; k < n; k++)
        if (strcmp(e[k], want[k]) != 0) {
            fprintf(stderr, "test_config_strict.c:%d: error %zu\n  got  \"%s\"\n  want \"%s\"\n", line, k, e[k], want[k]);
            check_failures++;
        }
}

/* The load succeeds with exactly want[] as warnings. */
static void expect_warnings(int line, const char *text, const char *const *want, size_t nwant)
{
    t2__config *cfg = NULL;
    int rc = t2__config_load_string(text, "const.yaml", NULL, 0, &cfg);
    if (rc) {
        fprintf(stderr, "test_config_strict.c:%d: failed: %s\n", line, t2_errmsg());
        check_failures++;
        return;
    }
    size_t n = 0;
    const char *const *w = t2__config_warnings(cfg, &n);
    if (n != nwant) {
        fprintf(stderr, "test_config_strict.c:%d: %zu warnings, wanted %zu\n", line, n, nwant);
        for (size_t k = 0; k < n; k++) fprintf(stderr, "  %s\n", w[k]);
        check_failures++;
    }
    for (size_t k = 0; k < n && k < nwant; k++)
        if (strcmp(w[k], want[k]) != 0) {
            fprintf(stderr, "test_config_strict.c:%d: warning %zu\n  got  \"%s\"\n  want \"%s\"\n", line, k, w[k],
                    want[k]);
            check_failures++;
        }
    t2__config_free(cfg);
}

/* The typos: each an error naming the key it resembles, all of them in one load. */
static const char TYPOS[] =
    "name: typos\n"                                        /* 1 */
    "hyperparameters:\n"                                   /* 2 */
    "  global_batch_size: 32\n"                            /* 3 */
    "searcher:\n"                                          /* 4 */
    "  name: random\n"                                     /* 5 */
    "  metric: validation_loss\n"                          /* 6 */
    "  smaller_is_beter: false\n"                          /* 7 */
    "  max_trails: 6\n"                                    /* 8 */
    "  max_length: {batches: 100}\n"                       /* 9 */
    "min_validation_perod: {batches: 10}\n"                /* 10 */
    "resources:\n"                                         /* 11 */
    "  slots_per_trail: 1\n"                               /* 12 */
    "optimizations:\n"                                     /* 13 */
    "  gradient_clipping: {type: norm, maxx: 1}\n"         /* 14 */
    "reproducibility: {experiment_sead: 3}\n"              /* 15 */
    "checkpoint_storage: {save_trial_bset: 2}\n"           /* 16 */
    "lr_schedule: cosine\n";                               /* 17 */

static void test_typos_are_errors(void)
{
    static const char *const want[] = {
        "const.yaml:7:3: searcher.smaller_is_beter: unknown key (did you mean 'smaller_is_better'?)",
        "const.yaml:8:3: searcher.max_trails: unknown key (did you mean 'max_trials'?)",
        "const.yaml:4:1: searcher.max_trials: missing required key (is 'max_trails' at line 8, column 3 a typo of "
        "it?)",
        "const.yaml:10:1: min_validation_perod: unknown key (did you mean 'min_validation_period'?)",
        "const.yaml:12:3: resources.slots_per_trail: unknown key (did you mean 'slots_per_trial'?)",
        "const.yaml:14:35: optimizations.gradient_clipping.maxx: unknown key (did you mean 'max'?)",
        "const.yaml:14:3: optimizations.gradient_clipping.max: missing required key",
        "const.yaml:15:19: reproducibility.experiment_sead: unknown key (did you mean 'experiment_seed'?)",
        "const.yaml:16:22: checkpoint_storage.save_trial_bset: unknown key (did you mean 'save_trial_best'?)",
        "const.yaml:17:1: lr_schedule: unknown key",
    };
    expect_errors(__LINE__, TYPOS,
                  "const.yaml:7:3: searcher.smaller_is_beter: unknown key (did you mean 'smaller_is_better'?) (and 9 "
                  "more errors)",
                  want, sizeof want / sizeof *want);
}

/* --lenient: the same file's unknown keys are warnings with the same suggestions; what is still
 * wrong (max_trials missing, gradient_clipping without max) still fails, and says which key was
 * probably meant, since a failed load shows no warnings. */
static void test_lenient(void)
{
    t2__config_set_lenient(1);
    static const char *const want[] = {
        "const.yaml:4:1: searcher.max_trials: missing required key (is 'max_trails' at line 8, column 3 a typo of "
        "it?)",
        "const.yaml:14:3: optimizations.gradient_clipping.max: missing required key",
    };
    expect_errors(__LINE__, TYPOS,
                  "const.yaml:4:1: searcher.max_trials: missing required key (is 'max_trails' at line 8, column 3 a "
                  "typo of it?) (and 1 more error)",
                  want, 2);
    static const char *const warn[] = {
        "const.yaml:7:3: unknown key 'searcher.smaller_is_beter' (ignored; did you mean 'smaller_is_better'?)",
        "const.yaml:8:1: unknown key 'min_validation_perod' (ignored; did you mean 'min_validation_period'?)",
        "const.yaml:9:1: unknown key 'lr_schedule' (ignored)",
    };
    expect_warnings(__LINE__,
                    "hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: single\n  metric: loss\n"
                    "  max_length: {batches: 100}\n"
                    "  smaller_is_beter: false\n"
                    "min_validation_perod: {batches: 10}\n"
                    "lr_schedule: cosine\n",
                    warn, 3);
    t2__config_set_lenient(0);
    /* Strict again: one error. */
    static const char *const one[] = {"const.yaml:8:1: lr_schedule: unknown key"};
    expect_errors(__LINE__, MINIMAL "lr_schedule: cosine\n", "const.yaml:8:1: lr_schedule: unknown key", one, 1);
}

/* A typed hyperparameter without its type would silently become a group of nested hyperparameters. */
static void test_typeless_hparams(void)
{
    static const char *const tpye[] = {
        "const.yaml:9:5: hyperparameters.lr.tpye: unknown key (did you mean 'type'?); without a type this map "
        "would be a group of nested hyperparameters",
    };
    expect_errors(__LINE__,
                  "searcher:\n  name: single\n  metric: loss\n  max_length: {batches: 1}\n"
                  "hyperparameters:\n  global_batch_size: 8\n"
                  "  lr:\n"
                  "    minval: -4\n"
                  "    tpye: log\n"
                  "    maxval: -1\n",
                  tpye[0], tpye, 1);
    static const char *const none[] = {
        "const.yaml:7:7: hyperparameters.lr: has 'minval' but no 'type': add type: int, double, log or categorical "
        "(a map without 'type' is a group of nested hyperparameters)",
        "const.yaml:8:14: hyperparameters.opt.act: has 'vals' but no 'type': add type: int, double, log or "
        "categorical (a map without 'type' is a group of nested hyperparameters)",
    };
    expect_errors(__LINE__,
                  "searcher:\n  name: single\n  metric: loss\n  max_length: {batches: 1}\n"
                  "hyperparameters:\n  global_batch_size: 8\n"
                  "  lr: {minval: 0.1, maxval: 1}\n"
                  "  opt: {act: {vals: [relu, tanh]}, momentum: 0.9}\n",
                  "const.yaml:7:7: hyperparameters.lr: has 'minval' but no 'type': add type: int, double, log or "
                  "categorical (a map without 'type' is a group of nested hyperparameters) (and 1 more error)",
                  none, 2);
    /* A typo inside a typed hyperparameter names the key too. */
    static const char *const inside[] = {
        "const.yaml:7:35: hyperparameters.lr.maxvl: unknown key (did you mean 'maxval'?)",
        "const.yaml:7:7: hyperparameters.lr.maxval: missing required key",
    };
    expect_errors(__LINE__,
                  "searcher:\n  name: single\n  metric: loss\n  max_length: {batches: 1}\n"
                  "hyperparameters:\n  global_batch_size: 8\n"
                  "  lr: {type: double, minval: 0.1, maxvl: 1}\n",
                  "const.yaml:7:35: hyperparameters.lr.maxvl: unknown key (did you mean 'maxval'?) (and 1 more error)",
                  inside, 2);
    /* A group of nested hyperparameters without any of those keys is still a group. */
    t2__config *cfg = NULL;
    CHECK_OK(t2__config_load_string("searcher:\n  name: single\n  metric: loss\n  max_length: {batches: 1}\n"
                                    "hyperparameters:\n  global_batch_size: 8\n  opt: {lr: 0.1, tape: 3}\n"
                                    /* Determined's byol example: a group with a member named base */
                                    "  learning_rate: {base: 0.2, base_batch_size: 256, warmup_epochs: 10}\n",
                                    "const.yaml", NULL, 0, &cfg));
    const t2__hparam *opt = cfg ? t2__hparam_find(cfg->hparams, "opt") : NULL;
    CHECK(opt && opt->kind == T2__HP_NESTED && opt->nchildren == 2);
    t2__config_free(cfg);
}

/* Every error of a file, up to T2__CONFIG_MAX_ERRORS, then a count of the rest. */
static void test_many_errors(void)
{
    size_t len = 200 + 64 * 60;
    char *text = malloc(len);
    if (!text) {
        check_failures++;
        return;
    }
    size_t at = (size_t)snprintf(text, len, "%s", MINIMAL);
    for (int k = 0; k < 60; k++) at += (size_t)snprintf(text + at, len - at, "typo_%02d: 1\n", k);
    t2__config *cfg = NULL;
    CHECK_RC(t2__config_load_string(text, "const.yaml", NULL, 0, &cfg), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "const.yaml:8:1: typo_00: unknown key (and 59 more errors)");
    size_t n = 0, more = 0;
    const char *const *e = t2__config_errors(&n, &more);
    CHECK(n == T2__CONFIG_MAX_ERRORS && more == 10);
    if (n == T2__CONFIG_MAX_ERRORS) CHECK_STR(e[49], "const.yaml:57:1: typo_49: unknown key");
    free(text);
    /* A load that succeeds leaves no errors behind. */
    CHECK_OK(t2__config_load_string(MINIMAL, "const.yaml", NULL, 0, &cfg));
    t2__config_free(cfg);
    CHECK(t2__config_errors(&n, &more) == NULL && n == 0 && more == 0);
}

/* Probe M (item 6): a missing searcher.name, or a duplicate key, no longer hides the other errors. */
static void test_nothing_hides(void)
{
    static const char *const unnamed[] = {
        "const.yaml:3:1: searcher.name: missing required key (is 'naem' at line 4, column 3 a typo of it?)",
        "const.yaml:4:3: searcher.naem: unknown key (did you mean 'name'?)",
        "const.yaml:6:3: searcher.smaller_is_beter: unknown key (did you mean 'smaller_is_better'?)",
        "const.yaml:8:3: searcher.max_trails: unknown key (did you mean 'max_trials'?)",
    };
    /* Checked as every searcher's keys: no "does not apply", nor pbt's or random's required keys. */
    expect_errors(__LINE__,
                  "hyperparameters:\n  global_batch_size: 1\nsearcher:\n  naem: random\n  metric: loss\n"
                  "  smaller_is_beter: true\n  max_length: {batches: 2}\n  max_trails: 3\n"
                  "  max_concurrent_trials: 1\n  population_size: 4\n  sampler: tpe\n",
                  "const.yaml:3:1: searcher.name: missing required key (is 'naem' at line 4, column 3 a typo of it?) "
                  "(and 3 more errors)",
                  unnamed, sizeof unnamed / sizeof *unnamed);
    /* A misspelt global_batch_size is a constant of the trial's own, and the missing one says so. */
    static const char *const batch[] = {
        "const.yaml:1:1: hyperparameters.global_batch_size: missing required key (is 'glboal_batch_size' at line 2, "
        "column 3 a typo of it?), in the file or as --config hyperparameters.global_batch_size=N (Determined's Core "
        "API leaves the batch size to the training script; t2exp builds the batches and needs it)",
    };
    expect_errors(__LINE__,
                  "hyperparameters:\n  glboal_batch_size: 1\nsearcher: {name: single, metric: loss, max_length: 2}\n",
                  batch[0], batch, 1);
    static const char *const dup[] = {
        "const.yaml:9:3: searcher.max_trials: duplicate key",
        "const.yaml:7:25: searcher.max_length.batches: expected a positive integer, got the string \"10\"",
        "const.yaml:11:1: bogus: unknown key",
    };
    expect_errors(__LINE__,
                  "hyperparameters:\n  global_batch_size: 1\nsearcher:\n  name: random\n  metric: loss\n"
                  "  smaller_is_better: true\n  max_length: {batches: \"10\"}\n  max_trials: 3\n  max_trials: 4\n"
                  "  max_concurrent_trials: 1\nbogus: 1\n",
                  "const.yaml:9:3: searcher.max_trials: duplicate key (and 2 more errors)", dup,
                  sizeof dup / sizeof *dup);
    /* A duplicate's value is dropped whole (an anchor in it still serves a later alias), and a YAML
     * syntax error, which does end the load, comes after the duplicates found before it. */
    static const char *const dup_alias[] = {
        "const.yaml:9:1: data: duplicate key",
        "const.yaml:10:1: other: unknown key",
    };
    expect_errors(__LINE__, MINIMAL "data: {a: 1}\ndata: {b: &x [1, 2]}\nother: *x\n",
                  "const.yaml:9:1: data: duplicate key (and 1 more error)", dup_alias,
                  sizeof dup_alias / sizeof *dup_alias);
    static const char *const dup_syntax[] = {
        "const.yaml:9:1: max_restarts: duplicate key",
        "const.yaml:11:1: YAML syntax error: did not find expected ',' or ']' (while parsing a flow sequence at "
        "line 10, column 9)",
    };
    expect_errors(__LINE__, MINIMAL "max_restarts: 1\nmax_restarts: 2\nlabels: [a, b\n",
                  "const.yaml:9:1: max_restarts: duplicate key (and 1 more error)", dup_syntax,
                  sizeof dup_syntax / sizeof *dup_syntax);
}

/* Determined's keys that mean nothing without its cluster: one warning each, strict or not. */
static void test_ignored_keys(void)
{
    static const char text[] = MINIMAL                               /* 1-7 */
        "entrypoint: python3 -m determined.launch.torch_distributed --trial model_def:Trial\n" /* 8 */
        "bind_mounts:\n  - {host_path: /tmp, container_path: /data}\n"                          /* 9, 10 */
        "environment:\n"                                                                       /* 11 */
        "  image: {gpu: determinedai/pytorch}\n"                                               /* 12 */
        "  pod_spec: {spec: {}}\n"                                                             /* 13 */
        "  force_pull_image: true\n"                                                           /* 14 */
        "profiling: {enabled: true}\n"                                                         /* 15 */
        "resources:\n  resource_pool: gpu\n  priority: 1\n  shm_size: 4G\n  devices: []\n"    /* 16-20 */
        "optimizations: {tensor_fusion_threshold: 64, auto_tune_tensor_fusion: true}\n"        /* 21 */
        "checkpoint_storage: {type: shared_fs, host_path: /tmp, checkpoint_path: /x}\n"        /* 22 */
        "slurm: {gpu_type: a100}\n";                                                           /* 23 */
    static const char *const want[] = {
        "const.yaml:8:1: key 'entrypoint' is accepted but ignored: the trial object named on the command line is run",
        "const.yaml:9:1: key 'bind_mounts' is accepted but ignored: trials run as processes on this machine, not in "
        "containers",
        "const.yaml:12:3: key 'environment.image' is accepted but ignored: trials run as processes on this machine, "
        "not in containers",
        "const.yaml:13:3: key 'environment.pod_spec' is accepted but ignored: t2exp does not run on Kubernetes",
        "const.yaml:14:3: key 'environment.force_pull_image' is accepted but ignored: trials run as processes on this "
        "machine, not in containers",
        "const.yaml:15:1: key 'profiling' is accepted but ignored: not implemented by t2exp",
        "const.yaml:17:3: key 'resources.resource_pool' is accepted but ignored: t2exp has no cluster scheduler",
        "const.yaml:18:3: key 'resources.priority' is accepted but ignored: t2exp has no cluster scheduler",
        "const.yaml:19:3: key 'resources.shm_size' is accepted but ignored: t2exp has no cluster scheduler",
        "const.yaml:20:3: key 'resources.devices' is accepted but ignored: t2exp has no cluster scheduler",
        "const.yaml:21:17: key 'optimizations.tensor_fusion_threshold' is accepted but ignored: gradients are reduced "
        "in one flat buffer with no fusion tuning",
        "const.yaml:21:46: key 'optimizations.auto_tune_tensor_fusion' is accepted but ignored: gradients are reduced "
        "in one flat buffer with no fusion tuning",
        "const.yaml:22:56: key 'checkpoint_storage.checkpoint_path' is accepted but ignored: checkpoints go under "
        "host_path[/storage_path]",
        "const.yaml:23:1: key 'slurm' is accepted but ignored: t2exp has no cluster scheduler (a hostfile, or the "
        "Slurm job it runs in, is the slot pool)",
    };
    expect_warnings(__LINE__, text, want, sizeof want / sizeof *want);
}

/* A key given in the wrong section is named where it belongs, from the sections' own key tables;
 * a key several sections have (name, type) is not guessed at, and a local typo still wins. */
static void test_wrong_section(void)
{
    const char *text = "max_concurrent_trials: 4\n"
                       "metric: loss\n"
                       "slots_per_trail: 2\n"
                       "type: shared_fs\n"
                       "hyperparameters:\n  global_batch_size: 32\n"
                       "searcher:\n  name: single\n  metric: loss\n  max_length: {batches: 1}\n"
                       "  min_validation_period: {batches: 2}\n"
                       "  experiment_seed: 3\n"
                       "  max_trails: 3\n"
                       "resources:\n  max_concurent_trials: 2\n  storage_path: /tmp\n"
                       "optimizations: {gradient_clipping: {type: norm, max: 1, reduction_factor: 2}}\n";
    const char *const want[] = {
        "const.yaml:1:1: max_concurrent_trials: unknown key (did you mean 'searcher.max_concurrent_trials'?)",
        "const.yaml:2:1: metric: unknown key (did you mean 'searcher.metric'?)",
        "const.yaml:3:1: slots_per_trail: unknown key (did you mean 'resources.slots_per_trial'?)",
        "const.yaml:4:1: type: unknown key",
        "const.yaml:11:3: searcher.min_validation_period: unknown key (did you mean 'min_validation_period' at the "
        "top level?)",
        "const.yaml:12:3: searcher.experiment_seed: unknown key (did you mean 'reproducibility.experiment_seed'?)",
        "const.yaml:13:3: searcher.max_trails: unknown key (did you mean 'max_trials'?)",
        "const.yaml:15:3: resources.max_concurent_trials: unknown key (did you mean 'searcher.max_concurrent_trials'?)",
        "const.yaml:16:3: resources.storage_path: unknown key (did you mean 'checkpoint_storage.storage_path'?)",
        "const.yaml:17:57: optimizations.gradient_clipping.reduction_factor: unknown key (did you mean "
        "'searcher.pruner.reduction_factor'?)",
    };
    expect_errors(__LINE__, text, "const.yaml:1:1: max_concurrent_trials: unknown key (did you mean "
                                  "'searcher.max_concurrent_trials'?) (and 9 more errors)",
                  want, sizeof want / sizeof *want);
    /* Lenient: the same suggestion in the warning. */
    t2__config_set_lenient(1);
    const char *const warn[] = {"const.yaml:1:1: unknown key 'max_trials' (ignored; did you mean 'searcher.max_trials'?)"};
    expect_warnings(__LINE__, "max_trials: 4\n" MINIMAL, warn, 1);
    t2__config_set_lenient(0);
    /* A typed hyperparameter's keys are the user's place: nothing from the sections is offered. */
    const char *const hp[] = {"const.yaml:3:44: hyperparameters.lr.metric: unknown key"};
    expect_errors(__LINE__,
                  "hyperparameters:\n  global_batch_size: 32\n  lr: {type: double, minval: 0, maxval: 1, metric: x}\n"
                  "searcher: {name: single, metric: loss, max_length: 1}\n",
                  hp[0], hp, 1);
}

/* A misspelt value of a key that takes one of a few words gets a "did you mean", whichever reader
 * checks it (t2__get_enum and the keys that word their own errors). */
static void test_value_hints(void)
{
    const char *text = "checkpoint_policy: bets\n"
                       "hyperparameters:\n  global_batch_size: 32\n  lr: {type: dobule, minval: 0, maxval: 1}\n"
                       "searcher: {name: radnom, metric: loss, max_length: 2, max_trials: 2}\n"
                       "resources: {isolation: workr}\n"
                       "checkpoint_storage: {compression: gzp, type: shared_f}\n"
                       "optimizations: {gradient_clipping: {type: nrom, max: 1}}\n";
    const char *const want[] = {
        "const.yaml:1:20: checkpoint_policy: expected one of best, all or none, got \"bets\" (did you mean 'best'?)",
        "const.yaml:4:14: hyperparameters.lr.type: expected one of const, int, double, log or categorical, got "
        "\"dobule\" (did you mean 'double'?)",
        "const.yaml:5:18: searcher.name: expected one of single, grid, random, adaptive_asha, tpe, pbt or custom, got "
        "\"radnom\" (did you mean 'random'?)",
        "const.yaml:6:24: resources.isolation: must be worker or process_per_trial, got \"workr\" (did you mean "
        "'worker'?)",
        "const.yaml:7:35: checkpoint_storage.compression: must be none, gzip or zstd, got \"gzp\" (did you mean "
        "'gzip'?)",
        "const.yaml:7:46: checkpoint_storage.type: only shared_fs is supported, got \"shared_f\" (did you mean "
        "'shared_fs'?)",
        "const.yaml:8:43: optimizations.gradient_clipping.type: expected one of norm or value, got \"nrom\" (did you "
        "mean 'norm'?)",
    };
    expect_errors(__LINE__, text,
                  "const.yaml:1:20: checkpoint_policy: expected one of best, all or none, got \"bets\" (did you mean "
                  "'best'?) (and 6 more errors)",
                  want, sizeof want / sizeof *want);
    const char *const tm[] = {
        "const.yaml:6:16: searcher.time_metric: t2exp measures training in batches, records or epochs, got "
        "\"batchs\" (did you mean 'batches'?) (Determined follows a metric the script reports; here use "
        "time_metric: batches, records or epochs)"};
    expect_errors(__LINE__,
                  "hyperparameters:\n  global_batch_size: 32\nsearcher:\n  name: single\n  metric: loss\n"
                  "  time_metric: batchs\n  max_time: 3\n",
                  tm[0], tm, 1);
}

int main(void)
{
    test_typos_are_errors();
    test_lenient();
    test_typeless_hparams();
    test_many_errors();
    test_nothing_hides();
    test_ignored_keys();
    test_wrong_section();
    test_value_hints();
    return check_report("test_config_strict");
}
