/* stage_experiment.c — one experiment stage of a pipeline: the config loaded as `t2exp create`
 * loads it, the stage's hyperparameters applied, the experiment created (or an earlier run's
 * experiment resumed, or a COMPLETED one only read), run to its end in this process, and its
 * results read back from the store.
 *
 * The stage's hyperparameters become --config overrides ("hyperparameters.NAME={type: const, val:
 * V}") rather than an edited copy of the config: the controller stores overrides with the
 * experiment, so `t2exp resume` (and the resume of an interrupted stage) applies exactly the same
 * values again, and `t2exp describe` shows where they came from. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "stage_experiment.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "configs/config.h"
#include "controller/controller.h"
#include "store/store.h"
#include "t2exp/error.h"

__attribute__((format(printf, 2, 3))) static void say(FILE *log, const char *fmt, ...)
{
    if (!log) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(log, fmt, ap);
    va_end(ap);
    fflush(log);
}

/* Top-level hyperparameter names: the override key splits at '.' and at the first '='. */
static int bad_name(const char *k) { return !*k || strchr(k, '.') || strchr(k, '='); }

/* The stage's hyperparameters as overrides; *ovr gets *n malloc'd strings (free with free_ovr). */
static int hparam_overrides(const t2__val *hp, char ***ovr, int *n)
{
    *ovr = NULL;
    *n = 0;
    if (!hp) return T2_OK;
    if (hp->kind != T2__VAL_MAP)
        return t2_seterr(T2_EINVAL, "experiment.hyperparameters: expected a map of name: value, got a %s",
                         t2__val_kind_name(hp->kind));
    if (hp->n > (size_t)INT_MAX / 2) return t2_seterr(T2_EINVAL, "experiment.hyperparameters: too many entries");
    char **v = calloc(hp->n ? hp->n : 1, sizeof *v);
    if (!v) return t2_seterr(T2_ENOMEM, "experiment stage: out of memory");
    int rc = T2_OK;
    size_t i;
    for (i = 0; !rc && i < hp->n; i++) {
        const char *k = hp->keys[i];
        if (bad_name(k)) {
            rc = t2_seterr(T2_EINVAL, "experiment.hyperparameters.%s: a hyperparameter name must be non-empty and "
                           "hold no '.' or '='", k);
            break;
        }
        /* JSON is YAML's flow syntax: the override parser reads the value back as it was. */
        char *json = NULL;
        size_t len = 0;
        if ((rc = t2__val_to_json(hp->items[i], &json, &len))) break;
        size_t need = strlen(k) + len + 64;
        if (!(v[i] = malloc(need))) rc = t2_seterr(T2_ENOMEM, "experiment stage: out of memory");
        else snprintf(v[i], need, "hyperparameters.%s={type: const, val: %s}", k, json);
        free(json);
    }
    if (rc) {
        for (size_t k = 0; k < hp->n; k++) free(v[k]);
        free(v);
        return rc;
    }
    *ovr = v;
    *n = (int)hp->n;
    return T2_OK;
}

static void free_ovr(char **ovr, int n)
{
    for (int i = 0; ovr && i < n; i++) free(ovr[i]);
    free(ovr);
}

/* As `t2exp create` loads it: every problem in the file to the log, t2_errmsg() the first. */
static int load_config(const t2__exp_stage_spec *s, char **ovr, int novr, t2__config **cfg)
{
    int rc = t2__config_load(s->config_path, (const char *const *)ovr, novr, cfg);
    if (rc) {
        size_t ne = 0, more = 0, nw = 0;
        const char *const *e = t2__config_errors(&ne, &more), *const *w = t2__config_error_warnings(&nw);
        for (size_t i = 0; i < nw; i++) fprintf(s->log, "warning: %s\n", w[i]);
        for (size_t i = 0; ne >= 2 && i < ne; i++) fprintf(s->log, "%s\n", e[i]);
        if (more) fprintf(s->log, "(%zu more problems)\n", more);
        return rc;
    }
    size_t nw = 0;
    const char *const *w = t2__config_warnings(*cfg, &nw);
    for (size_t i = 0; i < nw; i++) fprintf(s->log, "warning: %s\n", w[i]);
    return T2_OK;
}

static int create_new(const t2__exp_stage_spec *s, int64_t *id)
{
    char **ovr = NULL;
    int novr = 0;
    t2__config *cfg = NULL;
    int rc = hparam_overrides(s->hyperparameters, &ovr, &novr);
    if (!rc) rc = load_config(s, ovr, novr, &cfg);
    if (!rc) {
        t2__create_opts o = {.cfg = cfg, .trial_path = s->trial_path, .home = s->home,
                             .overrides = (const char *const *)ovr, .noverrides = novr,
                             .progress = T2__PROGRESS_PLAIN, .out = s->log, .on_started = s->on_started,
                             .on_started_arg = s->on_started_arg};
        rc = t2__experiment_create(&o, id);
    }
    t2__config_free(cfg);
    free_ovr(ovr, novr);
    return rc;
}

/* What to do with the experiment an earlier run of this stage started. */
enum { PREV_CREATE, PREV_READ, PREV_RESUME };

static int judge_previous(const t2__exp_stage_spec *s, const char *home, int *what)
{
    int64_t id = s->previous_experiment_id;
    t2__store *st = NULL;
    t2__experiment_row row;
    memset(&row, 0, sizeof row);
    int rc = t2__store_open(home, 1, &st);
    if (!rc) rc = t2__store_get_experiment(st, id, &row);
    if (rc == T2_ENOTFOUND) {
        say(s->log, "experiment %lld, which an earlier run of this stage started, is not in the store any more: "
                    "creating a new one\n", (long long)id);
        *what = PREV_CREATE;
        rc = T2_OK;
    } else if (!rc && row.state == T2__EXP_COMPLETED) {
        say(s->log, "experiment %lld is COMPLETED already: reading its results\n", (long long)id);
        *what = PREV_READ;
    } else if (!rc) {
        /* Killed before the controller first saved the searcher: nothing was decided yet. */
        char *state = NULL;
        int sr = t2__store_load_searcher_state(st, id, NULL, &state);
        free(state);
        if (sr == T2_ENOTFOUND) {
            say(s->log, "experiment %lld stopped before it saved any searcher state: creating a new one\n",
                (long long)id);
            *what = PREV_CREATE;
        } else if (sr) {
            rc = sr;
        } else {
            say(s->log, "resuming experiment %lld\n", (long long)id);
            *what = PREV_RESUME;
        }
    }
    t2__experiment_row_free(&row);
    t2__store_close(st);
    return rc;
}

static int read_result(const char *home, int64_t id, t2__exp_stage_result *r)
{
    t2__store *st = NULL;
    t2__experiment_row row;
    t2__trial_row tr;
    t2__checkpoint_row ck;
    memset(&row, 0, sizeof row);
    memset(&tr, 0, sizeof tr);
    memset(&ck, 0, sizeof ck);
    r->experiment_id = id;
    int rc = t2__store_open(home, 1, &st);
    if (!rc) rc = t2__store_get_experiment(st, id, &row);
    if (!rc) {
        r->completed = row.state == T2__EXP_COMPLETED;
        r->best_trial_id = row.best_trial_id > 0 ? row.best_trial_id : 0;
        r->best_metric = r->best_trial_id ? row.best_metric : NAN;
    }
    if (!rc && r->best_trial_id) {
        rc = t2__store_get_trial(st, r->best_trial_id, &tr);
        if (!rc && tr.hparams_json && !(r->best_hparams_json = strdup(tr.hparams_json)))
            rc = t2_seterr(T2_ENOMEM, "experiment stage: out of memory");
    }
    if (!rc && r->best_trial_id) {
        /* What `t2exp export EXP.N` takes for that trial: its best active checkpoint. */
        int cr = t2__store_best_checkpoint(st, id, r->best_trial_id, &ck);
        if (!cr && ck.uuid) snprintf(r->best_checkpoint, sizeof r->best_checkpoint, "%s", ck.uuid);
        else if (cr != T2_ENOTFOUND) rc = cr;
    }
    t2__checkpoint_row_free(&ck);
    t2__trial_row_free(&tr);
    t2__experiment_row_free(&row);
    t2__store_close(st);
    return rc;
}

static int run(const t2__exp_stage_spec *s, t2__exp_stage_result *r);

int t2__exp_stage_run(const t2__exp_stage_spec *s, t2__exp_stage_result *r)
{
    if (!r) return t2_seterr(T2_EINVAL, "experiment stage: NULL result");
    memset(r, 0, sizeof *r);
    r->best_metric = NAN;
    if (!s || !s->config_path || !s->trial_path)
        return t2_seterr(T2_EINVAL, "experiment stage: a config and a trial object are required");
    if (s->previous_experiment_id < 0)
        return t2_seterr(T2_EINVAL, "experiment stage: previous experiment id %lld is not an id",
                         (long long)s->previous_experiment_id);
    /* No log: the controller's progress goes nowhere rather than to someone else's stderr. */
    t2__exp_stage_spec sp = *s;
    FILE *devnull = NULL;
    if (!sp.log && !(sp.log = devnull = fopen("/dev/null", "w")))
        return t2_seterr(T2_EIO, "experiment stage: cannot open /dev/null: %s", strerror(errno));
    int rc = run(&sp, r);
    if (devnull) fclose(devnull);
    return rc;
}

static int run(const t2__exp_stage_spec *s, t2__exp_stage_result *r)
{
    char home[PATH_MAX];
    int rc = t2__store_home(s->home, home, sizeof home);
    int what = PREV_CREATE;
    if (!rc && s->previous_experiment_id > 0) rc = judge_previous(s, home, &what);
    if (rc) return rc;
    int64_t id = s->previous_experiment_id;
    if (what == PREV_CREATE) {
        id = 0;
        rc = create_new(s, &id);
    } else if (what == PREV_RESUME) {
        /* The stored config and overrides (the stage's hyperparameters among them), this stage's
         * trial object. */
        t2__resume_opts o = {.experiment_id = id, .home = s->home, .trial_path = s->trial_path,
                             .progress = T2__PROGRESS_PLAIN, .out = s->log, .on_started = s->on_started,
                             .on_started_arg = s->on_started_arg};
        rc = t2__experiment_resume(&o);
    } else if (s->on_started) {
        s->on_started(s->on_started_arg, id);
    }
    r->experiment_id = id;
    if (rc < 0) return rc;
    /* The store, not the controller's return code, says how it ended: an experiment is COMPLETED
     * even when one of its trials errored. */
    int rr = id > 0 ? read_result(home, id, r) : t2_seterr(T2_ESTATE, "experiment stage: no experiment was created");
    if (rr) return rr;
    return r->completed ? 0 : 1;
}

void t2__exp_stage_result_free(t2__exp_stage_result *r)
{
    if (!r) return;
    free(r->best_hparams_json);
    r->best_hparams_json = NULL;
}
