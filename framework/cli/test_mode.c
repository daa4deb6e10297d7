/* test_mode.c — `t2exp create CONFIG TRIAL.so --test`, Determined's `det experiment create --test`:
 * before a long search, one short run that goes through everything the search will, and says
 * whether it worked.
 *
 * The run is an ordinary experiment of the config with a few --config overrides on top (so a
 * distributed trial's ranks, which rebuild the config from the file and the overrides, see the same):
 * one trial of one batch with hyperparameters drawn at random from the search space, validated after
 * it, checkpointed at its end, no restarts. Then this process restores that checkpoint into a fresh
 * model of the trial and validates again: a trial whose checkpoint leaves something out (a layer's
 * running statistics, its own state) validates differently, which a search would only show as
 * resumed trials doing worse. Passed, the experiment is deleted (Determined archives its test
 * experiment); failed, it is kept for `t2exp logs` and `describe`. */
#define _GNU_SOURCE /* open_memstream */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "framework/cli/lifecycle.h"
#include "framework/cli/test_mode.h"
#include "common/internal.h"
#include "runner/runner.h"
#include "runner/trial_so.h"
#include "t2exp/error.h"

static char *overrides_entry(const char *key, const char *value_json)
{
    size_t n = strlen(key) + strlen(value_json) + 2;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s=%s", key, value_json);
    return s;
}

int t2__test_mode_overrides(const t2__config *cfg, const char *const *user, int nuser, char ***ovr, int *n)
{
    *ovr = NULL;
    *n = 0;
    /* Values as JSON (a YAML subset): the metric's and the name's text may hold anything. */
    t2__json_out searcher = {0}, name = {0};
    const char *head = "{\"name\": \"random\", \"metric\": ";
    t2__json_raw(&searcher, head, strlen(head));
    t2__json_string(&searcher, cfg->searcher.metric);
    const char *tail = cfg->searcher.smaller_is_better
                           ? ", \"smaller_is_better\": true, \"max_trials\": 1, \"max_length\": {\"batches\": 1}}"
                           : ", \"smaller_is_better\": false, \"max_trials\": 1, \"max_length\": {\"batches\": 1}}";
    t2__json_raw(&searcher, tail, strlen(tail));
    t2__json_raw(&searcher, "", 1); /* the NUL */
    char marked[1024];
    snprintf(marked, sizeof marked, "[test-mode] %s", cfg->name ? cfg->name : "");
    t2__json_string(&name, marked);
    t2__json_raw(&name, "", 1);
    char **v = calloc((size_t)nuser + 4, sizeof *v);
    int rc = v && !searcher.oom && !name.oom ? T2_OK : t2_seterr(T2_ENOMEM, "test mode: out of memory");
    for (int i = 0; !rc && i < nuser; i++) v[i] = (char *)user[i]; /* not ours: freed up to nuser only */
    if (!rc && (!(v[nuser] = overrides_entry("searcher", searcher.p)) || !(v[nuser + 1] = overrides_entry("name", name.p)) ||
                !(v[nuser + 2] = strdup("min_validation_period={batches: 1}")) ||
                !(v[nuser + 3] = strdup("max_restarts=0"))))
        rc = t2_seterr(T2_ENOMEM, "test mode: out of memory");
    free(searcher.p);
    free(name.p);
    if (rc) {
        t2__test_mode_overrides_free(v, nuser + 4, nuser);
        return rc;
    }
    *ovr = v;
    *n = nuser + 4;
    return T2_OK;
}

void t2__test_mode_overrides_free(char **ovr, int n, int nuser)
{
    for (int i = nuser; ovr && i < n; i++) free(ovr[i]);
    free(ovr);
}

/* Restores the checkpoint at path into a fresh model of the trial in this process and validates
 * it: *value gets the searcher metric (NAN: not reported). path NULL: only *wraps, whether the
 * trial's model is one the runner checkpoints (t2__runner_wraps_model). */
static int revalidate(const t2__config *cfg, const char *trial_path, const t2__trial_row *t, int parts,
                      const char *path, double *value, int *wraps)
{
    t2__trial_so so;
    memset(&so, 0, sizeof so);
    t2__val *hp = NULL;
    size_t off;
    char *text = NULL;
    size_t len = 0;
    FILE *sink = open_memstream(&text, &len); /* the metrics printed: the verdict says what matters */
    int rc = sink ? T2_OK : t2_seterr(T2_ENOMEM, "test mode: out of memory");
    if (!rc) rc = t2__val_from_json(t->hparams_json, strlen(t->hparams_json), &hp, &off);
    if (!rc) rc = t2__trial_so_open(trial_path, &so);
    if (!rc) {
        t2__runner_args ra = {.cfg = cfg, .def = so.def, .hparams = hp, .trial_id = t->id, .threads = t2__usable_cores(),
                              .parts = parts, .fd = -1, .restore_path = path, .warm_start = 1};
        rc = path ? t2__runner_evaluate_metric(&ra, sink, cfg->searcher.metric, value) : t2__runner_wraps_model(&ra, wraps);
    }
    if (sink) fclose(sink);
    free(text);
    t2__trial_so_close(&so);
    t2__val_free(hp);
    return rc;
}

/* Whether two validations of the same model on the same data agree. They should to the bit (a
 * thread count never changes the numbers: performance.md#threads); the margin only spares a
 * report of the last digit. */
static int same_value(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return fabs(a - b) <= 1e-6 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

int t2__test_mode_finish(t2__store *st, const t2__config *cfg, int64_t exp_id, int run_rc, const char *trial_path,
                         FILE *out)
{
    t2__trial_row *rows = NULL;
    size_t n = 0;
    t2__experiment_row exp;
    memset(&exp, 0, sizeof exp);
    t2__checkpoint_row ck;
    memset(&ck, 0, sizeof ck);
    char why[1400] = "";
    double again = NAN;
    int wraps = 1; /* the trial's model is checkpointed (not known otherwise: a checkpoint says so) */
    int rc = t2__store_list_trials(st, exp_id, &rows, &n);
    if (!rc) rc = t2__store_get_experiment(st, exp_id, &exp);
    if (rc) {
        snprintf(why, sizeof why, "cannot read the test experiment: %s", t2_errmsg());
    } else if (n != 1 || rows[0].state != T2__TRIAL_COMPLETED) {
        snprintf(why, sizeof why, "%s", n != 1 ? "the searcher made no trial"
                                  : rows[0].error ? rows[0].error
                                  : run_rc ? "the experiment did not complete"
                                           : "its trial did not complete");
    } else if (t2__store_latest_checkpoint(st, rows[0].id, &ck) != T2_OK) {
        if (revalidate(cfg, trial_path, &rows[0], exp.parts, NULL, NULL, &wraps) != T2_OK)
            snprintf(why, sizeof why, "the trial wrote no checkpoint, and building its model again failed: %s", t2_errmsg());
        else if (wraps)
            snprintf(why, sizeof why, "the trial wrote no checkpoint (its log says why: t2exp%s logs %lld.0)",
                     t2__hint_home(), (long long)exp_id);
    } else if (revalidate(cfg, trial_path, &rows[0], exp.parts, ck.path, &again, NULL) != T2_OK) {
        snprintf(why, sizeof why, "its checkpoint %s could not be restored and validated: %s", ck.uuid, t2_errmsg());
    } else if (!same_value(again, rows[0].latest_validation)) {
        snprintf(why, sizeof why,
                 "its checkpoint %s, restored into a fresh model, validates to %s %.9g where the trial validated to "
                 "%.9g: the checkpoint leaves out some of the model's state (a layer's statistics, state the trial "
                 "keeps itself), and a trial resumed from it would not go on from where it was",
                 ck.uuid, cfg->searcher.metric, again, rows[0].latest_validation);
    }
    int passed = !why[0];
    if (passed) {
        fprintf(out, "test mode: passed: trial %lld.%lld trained 1 batch (hyperparameters %s) and validated %s %.6g; %s\n",
                (long long)exp_id, (long long)rows[0].ordinal, rows[0].hparams_json, cfg->searcher.metric, rows[0].latest_validation,
                wraps ? "its checkpoint, restored into a fresh model, validates the same"
                      : "no checkpoint to check: the trial wraps no model (t2_wrap_model, t2_wrap_params), so a "
                        "restart or resume begins it anew");
        if (t2__delete_experiment(st, exp_id) == T2_OK)
            fprintf(out, "test mode: experiment %lld deleted\n", (long long)exp_id);
        else
            fprintf(out, "test mode: experiment %lld kept: it could not be deleted: %s\n", (long long)exp_id, t2_errmsg());
    } else {
        fprintf(out, "test mode: FAILED: %s\n", why);
        const char *h = t2__hint_home();
        fprintf(out, "test mode: experiment %lld is kept: t2exp%s logs %lld.0, t2exp%s describe %lld; t2exp%s delete "
                     "%lld when done\n",
                (long long)exp_id, h, (long long)exp_id, h, (long long)exp_id, h, (long long)exp_id);
    }
    t2__checkpoint_row_free(&ck);
    t2__experiment_row_free(&exp);
    t2__trial_rows_free(rows, n);
    return passed ? 0 : 1;
}
