/* test_stage_experiment.c — experiment stages of a pipeline (t2__exp_stage_run) with the quadratic
 * trial: a new experiment and its results as the store has them, hyperparameters injected as
 * constants (replacing one the config searches, adding one it lacks), a COMPLETED experiment only
 * read back, a vanished one (or one killed before it saved any searcher state) replaced, and an
 * interrupted one (its controller SIGKILLed) resumed, not restarted, to the uninterrupted run's
 * results. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "configs/value.h"
#include "pipeline/stage_experiment.h"
#include "store/store.h"

static char g_dir[256], g_home[300], g_trial[4096];

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int bad = fputs(text, f) < 0;
    return fclose(f) != 0 || bad ? -1 : 0;
}

/* Random search over x and y: loss = (x-1)^2 + (y+2)^2 (+ lr), one batch a trial, seeded. */
static const char *QUAD = "name: stage_quad\n"
                          "hyperparameters:\n"
                          "  global_batch_size: 1\n"
                          "  x: {type: double, minval: -5, maxval: 5}\n"
                          "  y: {type: double, minval: -5, maxval: 5}\n"
                          "searcher: {name: random, metric: loss, smaller_is_better: true, max_length: {batches: 1},\n"
                          "           max_trials: 8, max_concurrent_trials: 2}\n"
                          "reproducibility: {experiment_seed: 42}\n"
                          "max_restarts: 0\n";

/* Slow enough to be killed halfway: 6 trials one after another, 2 batches of 150 ms each. */
static const char *SLOW = "name: stage_slow\n"
                          "hyperparameters:\n"
                          "  global_batch_size: 1\n"
                          "  sleep_ms: 150\n"
                          "  x: {type: double, minval: -5, maxval: 5}\n"
                          "  y: {type: double, minval: -5, maxval: 5}\n"
                          "searcher: {name: random, metric: loss, smaller_is_better: true, max_length: {batches: 2},\n"
                          "           max_trials: 6, max_concurrent_trials: 1}\n"
                          "min_checkpoint_period: {batches: 1}\n"
                          "reproducibility: {experiment_seed: 9}\n"
                          "max_restarts: 0\n";

typedef struct {
    int calls;
    int64_t id;
} started;

static void on_started(void *arg, int64_t id)
{
    started *s = arg;
    s->calls++;
    s->id = id;
}

/* The log of one run, in memory. */
typedef struct {
    char *text;
    size_t len;
    FILE *f;
} logbuf;

/* l must start zeroed; a reopened one drops the previous text. */
static void log_open(logbuf *l)
{
    free(l->text);
    memset(l, 0, sizeof *l);
    l->f = open_memstream(&l->text, &l->len);
}

static void log_close(logbuf *l)
{
    if (l->f) fclose(l->f);
    l->f = NULL;
}

static int run_stage(const char *config, const t2__val *hp, int64_t prev, logbuf *log, started *st,
                     t2__exp_stage_result *r)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", g_dir, config);
    t2__exp_stage_spec s = {.config_path = path, .trial_path = g_trial, .hyperparameters = hp, .home = g_home,
                            .previous_experiment_id = prev, .log = log->f, .on_started = on_started,
                            .on_started_arg = st};
    int rc = t2__exp_stage_run(&s, r);
    fflush(log->f);
    return rc;
}

static int64_t count_experiments(void)
{
    t2__store *st = NULL;
    int64_t n = -1;
    if (t2__store_open(g_home, 1, &st) == T2_OK) t2__store_query_int(st, "SELECT count(*) FROM experiments", &n);
    t2__store_close(st);
    return n;
}

/* The smallest best_validation over the experiment's trials, and their count. */
static double min_trial_metric(int64_t exp, size_t *ntrials, int64_t *best_trial)
{
    t2__store *st = NULL;
    t2__trial_row *rows = NULL;
    size_t n = 0;
    double best = NAN;
    *ntrials = 0;
    if (t2__store_open(g_home, 1, &st) == T2_OK && t2__store_list_trials(st, exp, &rows, &n) == T2_OK) {
        for (size_t i = 0; i < n; i++)
            if (!isnan(rows[i].best_validation) && (isnan(best) || rows[i].best_validation < best)) {
                best = rows[i].best_validation;
                *best_trial = rows[i].id;
            }
        *ntrials = n;
    }
    t2__trial_rows_free(rows, n);
    t2__store_close(st);
    return best;
}

/* The uuid `t2exp export EXP.N` takes for a trial ("" when it has none: the quadratic trial
 * wraps no model, so it writes no checkpoint). */
static void best_checkpoint_of(int64_t exp, int64_t trial, char *buf, size_t len)
{
    t2__store *st = NULL;
    t2__checkpoint_row c;
    memset(&c, 0, sizeof c);
    snprintf(buf, len, "%s", "");
    if (t2__store_open(g_home, 1, &st) == T2_OK && t2__store_best_checkpoint(st, exp, trial, &c) == T2_OK)
        snprintf(buf, len, "%s", c.uuid);
    t2__checkpoint_row_free(&c);
    t2__store_close(st);
}

static void test_create_and_read_back(void)
{
    logbuf log = {NULL, 0, NULL};
    started st = {0, 0};
    t2__exp_stage_result r;
    log_open(&log);
    int64_t before = count_experiments();
    if (before < 0) before = 0; /* no store yet */
    CHECK_RC(run_stage("quad.yaml", NULL, 0, &log, &st, &r), 0);
    CHECK(r.experiment_id > 0 && r.completed == 1);
    CHECK(st.calls == 1 && st.id == r.experiment_id);
    CHECK(count_experiments() == before + 1);
    size_t nt = 0;
    int64_t bt = 0;
    double want = min_trial_metric(r.experiment_id, &nt, &bt);
    CHECK(nt == 8);
    CHECK(r.best_trial_id == bt);
    CHECK(r.best_metric == want && isfinite(want) && want > 0);
    CHECK(r.best_hparams_json && strstr(r.best_hparams_json, "\"x\"") && strstr(r.best_hparams_json, "\"y\""));
    char uuid[64];
    best_checkpoint_of(r.experiment_id, r.best_trial_id, uuid, sizeof uuid);
    CHECK_STR(r.best_checkpoint, uuid);
    CHECK(log.text && strstr(log.text, "random search"));
    log_close(&log);

    /* The same stage again with that experiment as the earlier run's: read, not run again. */
    t2__exp_stage_result again;
    started st2 = {0, 0};
    log_open(&log);
    CHECK_RC(run_stage("quad.yaml", NULL, r.experiment_id, &log, &st2, &again), 0);
    CHECK(again.experiment_id == r.experiment_id && again.completed == 1);
    CHECK(st2.calls == 1 && st2.id == r.experiment_id);
    CHECK(again.best_metric == r.best_metric && again.best_trial_id == r.best_trial_id);
    CHECK_STR(again.best_checkpoint, r.best_checkpoint);
    CHECK_STR(again.best_hparams_json, r.best_hparams_json);
    CHECK(count_experiments() == before + 1);
    CHECK(log.text && strstr(log.text, "is COMPLETED already"));
    log_close(&log);
    t2__exp_stage_result_free(&again);

    /* An experiment that is gone: a new one, and the log says why. */
    log_open(&log);
    CHECK_RC(run_stage("quad.yaml", NULL, 9999, &log, &st2, &again), 0);
    CHECK(again.experiment_id > r.experiment_id && again.completed == 1);
    CHECK(again.best_metric == r.best_metric); /* the same seed, the same search */
    CHECK(log.text && strstr(log.text, "experiment 9999, which an earlier run of this stage started, is not in the store"));
    log_close(&log);
    t2__exp_stage_result_free(&again);
    t2__exp_stage_result_free(&r);
    free(log.text);
}

static void test_hparams(void)
{
    logbuf log = {NULL, 0, NULL};
    started st = {0, 0};
    t2__exp_stage_result r;
    /* x, y replace the searched ones; lr is not in the config (it adds itself to the loss). */
    t2__val *hp = t2__val_map();
    CHECK(hp && !t2__val_map_set(hp, "x", t2__val_double(1.0)) && !t2__val_map_set(hp, "y", t2__val_int(-2)) &&
          !t2__val_map_set(hp, "lr", t2__val_double(0.25)));
    log_open(&log);
    CHECK_RC(run_stage("quad.yaml", hp, 0, &log, &st, &r), 0);
    CHECK(r.completed == 1);
    CHECK(r.best_metric == 0.25);
    CHECK(r.best_hparams_json && strstr(r.best_hparams_json, "\"lr\":0.25") && strstr(r.best_hparams_json, "\"x\":1"));
    log_close(&log);
    /* The store keeps them as the experiment's overrides (what resume applies again). */
    t2__store *s = NULL;
    t2__experiment_row row;
    memset(&row, 0, sizeof row);
    CHECK_OK(t2__store_open(g_home, 1, &s));
    CHECK_OK(t2__store_get_experiment(s, r.experiment_id, &row));
    CHECK(row.overrides_json && strstr(row.overrides_json, "hyperparameters.lr={type: const, val: 0.25}"));
    t2__experiment_row_free(&row);
    t2__store_close(s);
    t2__exp_stage_result_free(&r);

    /* Bad hyperparameters are refused before anything is created, naming the entry. */
    int64_t before = count_experiments();
    t2__val *bad = t2__val_map();
    CHECK(bad && !t2__val_map_set(bad, "a.b", t2__val_int(1)));
    log_open(&log);
    CHECK_RC(run_stage("quad.yaml", bad, 0, &log, &st, &r), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "experiment.hyperparameters.a.b"));
    t2__val *list = t2__val_list();
    CHECK_RC(run_stage("quad.yaml", list, 0, &log, &st, &r), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "expected a map"));
    /* A value the config schema refuses: placed at the override. */
    t2__val *nan = t2__val_map();
    CHECK(nan && !t2__val_map_set(nan, "global_batch_size", t2__val_int(0)));
    CHECK(run_stage("quad.yaml", nan, 0, &log, &st, &r) < 0);
    CHECK(strstr(t2_errmsg(), "hyperparameters.global_batch_size"));
    CHECK(run_stage("missing.yaml", NULL, 0, &log, &st, &r) == T2_ENOTFOUND);
    CHECK(strstr(t2_errmsg(), "missing.yaml"));
    CHECK(count_experiments() == before);
    log_close(&log);
    free(log.text);
    t2__val_free(hp);
    t2__val_free(bad);
    t2__val_free(list);
    t2__val_free(nan);
}

/* An experiment whose controller died before it first saved the searcher's state (here: only
 * its row exists): nothing was decided, so the stage creates a new one and says why. */
static void test_previous_without_state(void)
{
    t2__store *st = NULL;
    int64_t stale = 0;
    t2__experiment_new e = {.name = "stage_quad", .config_yaml = QUAD, .searcher_name = "random", .metric = "loss",
                            .smaller_is_better = 1, .trial_object = g_trial, .seed = 42};
    CHECK_OK(t2__store_open(g_home, 0, &st));
    CHECK_OK(t2__store_create_experiment(st, &e, &stale));
    CHECK_OK(t2__store_close(st));
    logbuf log = {NULL, 0, NULL};
    started s = {0, 0};
    t2__exp_stage_result r;
    log_open(&log);
    CHECK_RC(run_stage("quad.yaml", NULL, stale, &log, &s, &r), 0);
    log_close(&log);
    CHECK(stale > 0 && r.experiment_id > stale && r.completed == 1 && s.id == r.experiment_id);
    CHECK(log.text && strstr(log.text, "stopped before it saved any searcher state: creating a new one"));
    free(log.text);
    t2__exp_stage_result_free(&r);
}

/* COMPLETED trials of an experiment (store read). */
static int64_t completed_trials(int64_t exp)
{
    t2__store *st = NULL;
    int64_t n = 0;
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM trials WHERE experiment_id = %lld AND state = 'COMPLETED'",
             (long long)exp);
    if (t2__store_open(g_home, 1, &st) == T2_OK) t2__store_query_int(st, sql, &n);
    t2__store_close(st);
    return n;
}

static void pipe_started(void *arg, int64_t id)
{
    int fd = *(int *)arg;
    ssize_t w = write(fd, &id, sizeof id);
    (void)w;
}

static void test_resume_interrupted(void)
{
    /* The uninterrupted run, for the results a resumed one must reach. */
    logbuf log = {NULL, 0, NULL};
    started st = {0, 0};
    t2__exp_stage_result want, got;
    log_open(&log);
    CHECK_RC(run_stage("slow.yaml", NULL, 0, &log, &st, &want), 0);
    log_close(&log);

    int p[2];
    if (pipe(p) != 0) {
        perror("pipe");
        check_failures++;
        return;
    }
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        close(p[0]);
        char path[400];
        snprintf(path, sizeof path, "%s/slow.yaml", g_dir);
        t2__exp_stage_spec s = {.config_path = path, .trial_path = g_trial, .home = g_home, .log = NULL,
                                .on_started = pipe_started, .on_started_arg = &p[1]};
        t2__exp_stage_result r;
        _exit(t2__exp_stage_run(&s, &r) == 0 ? 0 : 1);
    }
    close(p[1]);
    int64_t id = 0;
    CHECK(child > 0 && read(p[0], &id, sizeof id) == (ssize_t)sizeof id && id > 0);
    close(p[0]);
    /* Killed once two trials are done and the third has begun: the searcher has decided things. */
    for (int i = 0; id > 0 && i < 400 && completed_trials(id) < 2; i++) nanosleep(&(struct timespec){0, 25000000}, NULL);
    int64_t done_before = completed_trials(id);
    CHECK(done_before >= 2 && done_before < 6);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);

    started st2 = {0, 0};
    log_open(&log);
    CHECK_RC(run_stage("slow.yaml", NULL, id, &log, &st2, &got), 0);
    log_close(&log);
    CHECK(log.text && strstr(log.text, "resuming experiment"));
    CHECK(got.experiment_id == id && st2.calls == 1 && st2.id == id && got.completed == 1);
    size_t nt = 0;
    int64_t bt = 0;
    min_trial_metric(id, &nt, &bt);
    CHECK(nt == 6); /* resumed: the trials already run were kept, not started again */
    CHECK(got.best_metric == want.best_metric);
    CHECK_STR(got.best_hparams_json, want.best_hparams_json ? want.best_hparams_json : "(none)");
    free(log.text);
    t2__exp_stage_result_free(&want);
    t2__exp_stage_result_free(&got);
}

int main(void)
{
    const char *build = getenv("T2EXP_BUILD");
    snprintf(g_trial, sizeof g_trial, "%s/trials/quadratic.so", build ? build : "build");
    if (access(g_trial, R_OK) != 0) {
        printf("test_stage_experiment: skipped (no %s)\n", g_trial);
        return 77;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/t2stageXXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(g_home, sizeof g_home, "%s/home", g_dir);
    char path[400];
    snprintf(path, sizeof path, "%s/quad.yaml", g_dir);
    int bad = write_file(path, QUAD);
    snprintf(path, sizeof path, "%s/slow.yaml", g_dir);
    bad |= write_file(path, SLOW);
    CHECK(!bad);
    test_create_and_read_back();
    test_hparams();
    test_previous_without_state();
    test_resume_interrupted();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    return check_report("test_stage_experiment");
}
