/* experiment_resume.c — `t2exp resume`: an interrupted experiment continued from the store: its
 * config as created with the same overrides (and those of earlier resumes; this one's are checked
 * and stored, resume_overrides.c), its searcher from the saved state, its trials' table
 * rebuilt with each one's latest checkpoint, and checkpoint files it never recorded swept away. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "checkpoints/ckpt.h"
#include "ctl.h"
#include "internal.h"

/* The trials `t2exp kill EXP.N` ended stay ended: they are read once this run is recorded as the
 * experiment's controller, so that a kill that found no controller running and marked the row
 * itself is seen however close it came to this start (one that comes later finds this run and
 * signals it). Their searcher is told by t2__ctl_tell_missed_ends where it does not know yet. */
static int keep_killed(t2__ctl *c)
{
    int64_t *ids = NULL;
    size_t n = 0;
    int rc = t2__store_killed_trials(c->st, c->exp_id, &ids, &n);
    for (size_t k = 0; !rc && k < n; k++)
        for (size_t i = 0; i < c->tt.nt; i++) { /* a few kills: no index kept for them */
            t2__ctl_trial *t = &c->tt.t[i];
            if (t->id != ids[k]) continue;
            t->killed = 1;
            if (t->state == T2__CTL_QUEUED) rc = t2__tt_set_state(&c->tt, t, T2__CTL_ERRORED);
            t2__ctl_note_work(c, t); /* ended: its trained part leaves the progress */
            break;
        }
    free(ids);
    return rc;
}

/* The row's mark for a trial that called its hyperparameters unusable (reports.c writes it, and
 * only with the flag set: a runner's error that starts the same way without it is prefixed). */
static int invalid_hparams(int state, const char *error)
{
    return state == T2__TRIAL_ERRORED && error && !strncmp(error, T2__INVALID_HPARAMS, sizeof T2__INVALID_HPARAMS - 1);
}

/* Rebuilds the controller's trial table from the store and the saved controller state. */
static int restore_trials(t2__ctl *c, const t2__val *saved)
{
    t2__trial_row *rows = NULL;
    size_t n = 0;
    int rc = t2__store_list_trials(c->st, c->exp_id, &rows, &n);
    const t2__val *trials = saved ? t2__val_map_get(saved, "trials") : NULL;
    for (size_t i = 0; !rc && i < n; i++) {
        t2__val *hp = NULL;
        t2__ctl_trial *t;
        size_t off;
        if ((rc = t2__val_from_json(rows[i].hparams_json, strlen(rows[i].hparams_json), &hp, &off)) ||
            (rc = t2__tt_add(&c->tt, rows[i].ordinal, hp, (uint64_t)rows[i].seed, &t)))
            break;
        t->id = rows[i].id;
        t->restarts = rows[i].restarts;
        t->batches = rows[i].batches_trained;
        /* The op a paused trial continues is the one it had, so its target is known before its
         * runner reports the epoch length (progress showed "6386/0 batches" until then). */
        t->target = rows[i].target_length_batches;
        t->metric = rows[i].latest_validation;
        if (t2__trial_pruned(rows[i].state, rows[i].error) && !(t->pruned_why = strdup(rows[i].error))) {
            rc = t2_seterr(T2_ENOMEM, "controller: out of memory");
            break;
        }
        /* Its invalid_hparams, which lived in the last run's memory only: a searcher that has not
         * been told of its end is told with it (t2__ctl_tell_missed_ends), as the live end would
         * have; and like any ERRORED trial it is never run again (no restart, schedule.c). */
        t->invalid_hparams = invalid_hparams(rows[i].state, rows[i].error);
        t2__config_batch_sizes(c->cfg, t->hparams, &t->gb, NULL);
        /* Its hosts so far: this run's placements are added to them (host_history.h). */
        if (rows[i].hosts && rows[i].hosts[0] && !(t->hosts = strdup(rows[i].hosts))) {
            rc = t2_seterr(T2_ENOMEM, "controller: out of memory");
            break;
        }
        if (!(t->log_path = strdup(rows[i].log_path ? rows[i].log_path : "/dev/null"))) {
            rc = t2_seterr(T2_ENOMEM, "controller: out of memory");
            break;
        }
        if (!isnan(rows[i].best_validation) && t2__ctl_better(c, rows[i].best_validation, c->best)) {
            c->best = rows[i].best_validation;
            c->best_trial = t->id;
            c->best_ordinal = t->rid;
        }
        /* CANCELED (by `t2exp kill EXP`) runs again; one that `kill EXP.N` ended is set apart once
         * this run is recorded (keep_killed). */
        int st = rows[i].state == T2__TRIAL_COMPLETED ? T2__CTL_DONE : rows[i].state == T2__TRIAL_ERRORED ? T2__CTL_ERRORED : T2__CTL_QUEUED;
        t2__checkpoint_row ck;
        /* A pbt child that never checkpointed starts from the parent checkpoint it was given. */
        if (t2__store_latest_checkpoint(c->st, t->id, &ck) == T2_OK ||
            (rows[i].parent_checkpoint && t2__store_checkpoint_by_uuid(c->st, rows[i].parent_checkpoint, &ck) == T2_OK)) {
            t->ckpt = strdup(ck.path);
            t2__checkpoint_row_free(&ck);
            if (!t->ckpt) {
                rc = t2_seterr(T2_ENOMEM, "controller: out of memory");
                break;
            }
        }
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)t->rid);
        const t2__val *e = trials ? t2__val_map_get(trials, key) : NULL;
        const t2__val *pend = e ? t2__val_map_get(e, "pending") : NULL, *cl = e ? t2__val_map_get(e, "closing") : NULL;
        if (st == T2__CTL_QUEUED) { /* not listed: waiting for max_length (see save_searcher) */
            t->pending = !e ? c->cfg->searcher.max_length.n : pend && pend->kind == T2__VAL_INT ? pend->i : -1;
            t->closing = cl && cl->kind == T2__VAL_BOOL && cl->b;
        }
        t->state = -1; /* so that set_state counts it */
        if ((rc = t2__tt_set_state(&c->tt, t, st))) break;
        t2__ctl_note_work(c, t);
    }
    t2__trial_rows_free(rows, n);
    /* A closed trial with nothing left to do finished while the controller was gone. */
    for (size_t i = 0; !rc && i < c->tt.nt; i++) {
        t2__ctl_trial *t = &c->tt.t[i];
        if (t->state == T2__CTL_QUEUED && t->closing && t->pending < 0) {
            t2__tt_set_state(&c->tt, t, T2__CTL_DONE);
            rc = t2__ctl_store_trial(c, t, T2__TU_STATE, T2__TRIAL_COMPLETED, NULL);
            if (!rc) rc = t2__searcher_on_trial_exited(c->s, t->rid, &c->ops);
        }
    }
    return rc;
}

/* Checkpoint files the store does not know as ACTIVE: written by a runner after its controller
 * died (never recorded), or temporaries left by a write cut short. They can never be used. Only
 * in a directory that is this store's alone, and only names this store's runners write
 * (<uuid>.tar[.gz|.zst] and their .tmp-<pid>-<n>): anything else there is someone else's. */
static int sweep_orphans(t2__ctl *c)
{
    if (!c->ckpt_dir_own) return T2_OK;
    t2__checkpoint_row *rows = NULL;
    size_t n = 0;
    int rc = t2__store_list_checkpoints(c->st, c->exp_id, 0, &rows, &n);
    if (rc) return rc;
    DIR *d = opendir(c->ckpt_dir);
    struct dirent *e;
    char path[PATH_MAX + 256], uuid[T2__UUID_LEN + 1];
    while (d && (e = readdir(d))) {
        int ckpt = t2__ckpt_name_parse(e->d_name, uuid, NULL);
        if (!ckpt && !t2__ckpt_temp_name(e->d_name)) continue;
        snprintf(path, sizeof path, "%s/%s", c->ckpt_dir, e->d_name);
        int known = 0;
        for (size_t i = 0; ckpt && i < n && !known; i++) known = !rows[i].deleted && strcmp(rows[i].uuid, uuid) == 0;
        struct stat sb;
        if (known || lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
        if (unlink(path) == 0) t2__progress_event(&c->prog, "removed unrecorded checkpoint file %s", path);
    }
    if (d) closedir(d);
    t2__checkpoint_rows_free(rows, n);
    return T2_OK;
}

int t2__experiment_overrides(t2__experiment_row *row, const char *const *extra, int nextra, const char ***out,
                             int *n, t2__val **doc)
{
    size_t count = (size_t)nextra, off;
    char *mark = NULL;
    if (row->overrides_json) {
        int rc = t2__val_from_json(row->overrides_json, strlen(row->overrides_json), doc, &off);
        if (rc || (*doc)->kind != T2__VAL_LIST)
            return rc ? rc : t2_seterr(T2_EFORMAT, "experiment %lld: stored overrides are not a list", (long long)row->id);
        for (size_t i = 0; i < (*doc)->n; i++)
            if ((*doc)->items[i]->kind != T2__VAL_STRING)
                return t2_seterr(T2_EFORMAT, "experiment %lld: stored override %zu is not a string", (long long)row->id, i);
        count += (*doc)->n;
    } else if ((mark = strstr(row->config_yaml, T2__OVERRIDES_MARK))) {
        for (const char *p = strstr(mark, T2__OVERRIDE_PREFIX); p; p = strstr(p + 1, T2__OVERRIDE_PREFIX)) count++;
    }
    if (count > INT_MAX) return t2_seterr(T2_EINVAL, "experiment %lld: too many overrides", (long long)row->id);
    const char **v = malloc((count ? count : 1) * sizeof *v);
    if (!v) return t2_seterr(T2_ENOMEM, "resume: out of memory");
    int k = 0;
    for (size_t i = 0; *doc && i < (*doc)->n; i++) v[k++] = (*doc)->items[i]->s;
    for (char *p = mark ? strstr(mark, T2__OVERRIDE_PREFIX) : NULL; p; p = strstr(p, T2__OVERRIDE_PREFIX)) {
        p += strlen(T2__OVERRIDE_PREFIX);
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        v[k++] = p;
        if (!nl) break;
        p = nl + 1;
    }
    for (int i = 0; i < nextra; i++) v[k++] = extra[i];
    *out = v;
    *n = k;
    return T2_OK;
}

int t2__experiment_stored_config(t2__store *st, int64_t id, const char *const *extra, int nextra, t2__config **cfg,
                                 int *parts)
{
    t2__experiment_row row;
    const char **ovr = NULL;
    int novr = 0;
    t2__val *doc = NULL;
    int rc = t2__store_get_experiment(st, id, &row);
    if (rc) return rc;
    if (!(rc = t2__experiment_overrides(&row, extra, nextra, &ovr, &novr, &doc)))
        rc = t2__config_load_stored(row.config_yaml, "stored config", ovr, novr - nextra, novr, cfg);
    if (!rc && parts) *parts = row.parts;
    free(ovr);
    t2__val_free(doc);
    t2__experiment_row_free(&row);
    return rc;
}

/* The resume's own overrides (the last o->noverrides of ovr) may only change what a resume honours:
 * the stored config is loaded again without them, and the two compared. */
static int check_overrides(t2__experiment_row *row, const char *name, const t2__config *cfg, const char **ovr,
                           int novr, const t2__resume_opts *o)
{
    if (o->noverrides <= 0) return T2_OK;
    t2__config *old = NULL;
    int rc = t2__config_load_stored(row->config_yaml, name, ovr, novr - o->noverrides, novr - o->noverrides, &old);
    if (!rc) rc = t2__ctl_check_resume_overrides(old, cfg, o->overrides, o->noverrides);
    /* What the overrides newly make the config warn about is said, as create says it (a
     * slots_per_trial that no longer divides the batch: each slot trains on fewer records). */
    size_t nw = 0, nold = 0;
    const char *const *w = rc ? NULL : t2__config_warnings(cfg, &nw);
    const char *const *wold = rc ? NULL : t2__config_warnings(old, &nold);
    for (size_t i = 0; i < nw; i++) {
        int known = 0;
        for (size_t j = 0; j < nold && !known; j++) known = !strcmp(w[i], wold[j]);
        if (!known) t2__progress_line(o->out, "warning: %s", w[i]);
    }
    t2__config_free(old);
    return rc;
}

int t2__experiment_resume(const t2__resume_opts *o)
{
    t2__ctl c;
    t2__ctl_init(&c);
    c.exp_id = o->experiment_id;
    t2__create_opts co = {.home = o->home, .progress = o->progress, .out = o->out};
    c.o = &co;
    char home[PATH_MAX];
    t2__experiment_row row;
    memset(&row, 0, sizeof row);
    t2__config *cfg = NULL;
    t2__val *saved = NULL, *ovr_doc = NULL;
    char *state_json = NULL;
    const char **ovr = NULL;
    int rc, novr = 0;
    long pid = 0;
    t2__ctl_signals sigs;
    t2__ctl_catch_signals(&sigs);
    if ((rc = t2__ctl_open_store(o->home, home, sizeof home, &c.st, 1))) goto out;
    if ((rc = t2__store_get_experiment(c.st, c.exp_id, &row))) goto out;
    c.recorded_parts = row.parts;
    if (row.state == T2__EXP_COMPLETED) {
        rc = t2_seterr(T2_ESTATE, "experiment %lld is already COMPLETED; nothing to resume", (long long)c.exp_id);
        goto out;
    }
    /* Two controllers of one experiment would run every trial twice. */
    if ((rc = t2__store_controller(c.st, c.exp_id, &pid)) == 1) {
        rc = t2_seterr(T2_ESTATE, "experiment %lld is running (controller pid %ld); pause or kill it first",
                       (long long)c.exp_id, pid);
        goto out;
    }
    if (rc) goto out;
    if ((rc = t2__experiment_overrides(&row, o->overrides, o->noverrides, &ovr, &novr, &ovr_doc))) goto out;
    char name[64];
    snprintf(name, sizeof name, "experiment %lld config", (long long)c.exp_id);
    if ((rc = t2__config_load_stored(row.config_yaml, name, ovr, novr - o->noverrides, novr, &cfg)) ||
        (rc = check_overrides(&row, name, cfg, ovr, novr, o)) || (rc = t2__ctl_check_resources(cfg)))
        goto out;
    c.cfg = cfg;
    c.tt.full_length = cfg->searcher.max_length.n;
    co.cfg = cfg;
    c.ovr = ovr;
    c.novr = novr;
    if ((rc = t2__trial_so_open(o->trial_path ? o->trial_path : row.trial_object, &c.so))) goto out;
    /* No checkpoint directory, yet made by a create that records one (its overrides are stored, as
     * since schema 2): that create failed before it got there, so nothing ran. The old layout
     * (legacy) is for experiments made before schema 2 only; computing a directory now would not
     * be the one create chose. */
    if (!row.checkpoint_dir && row.overrides_json) {
        rc = t2_seterr(T2_ESTATE, "experiment %lld cannot be resumed: its create failed before it recorded a checkpoint "
                                  "directory, so nothing ran (%s); create it again",
                       (long long)c.exp_id, row.error ? row.error : "no reason recorded");
        goto out;
    }
    if ((rc = t2__ctl_checkpoint_dir(&c, home, row.checkpoint_dir, row.checkpoint_dir == NULL)) || (rc = t2__ctl_resolve_warm(&c)) ||
        (rc = t2__ctl_load_pool(&c)))
        goto out;
    if ((rc = t2__searcher_create(cfg, (uint64_t)row.seed, &c.s))) goto out;
    int fresh = 0; /* the experiment never got its searcher going: start it now */
    if (t2__store_load_searcher_state(c.st, c.exp_id, NULL, &state_json) == T2_OK) {
        size_t off;
        if ((rc = t2__val_from_json(state_json, strlen(state_json), &saved, &off))) goto out;
        const t2__val *ss = t2__val_map_get(saved, "searcher");
        if (!ss || (rc = t2__searcher_restore(c.s, ss))) {
            if (!rc) rc = t2_seterr(T2_EFORMAT, "experiment %lld: the saved searcher state is unreadable", (long long)c.exp_id);
            goto out;
        }
    } else if (row.num_trials == 0) {
        /* Its first commit (the searcher's first trials with the snapshot after them) never
         * happened, e.g. the disk was full: nothing ran, so the search starts from the beginning. */
        fresh = 1;
    } else if (row.state == T2__EXP_ERRORED) {
        /* An error in the run's last stretch leaves no snapshot (the searcher in memory could be
         * ahead of the rows that were stored): say what ended it, not only what is missing. */
        rc = t2_seterr(T2_ESTATE, "experiment %lld cannot be resumed: it ended ERRORED before its searcher's state was "
                                  "first saved (%s); create it again once that is fixed",
                       (long long)c.exp_id, row.error ? row.error : "no reason recorded");
        goto out;
    } else {
        rc = t2_seterr(T2_ENOTFOUND, "experiment %lld has no saved searcher state to resume from", (long long)c.exp_id);
        goto out;
    }
    /* Whether the trials fit the slots (an override of slots_per_trial, a smaller pool), before
     * anything is stored: a resume that cannot run changes nothing. It left the experiment ERRORED
     * with the override kept, so that every later resume failed the same way. */
    if ((rc = t2__ctl_plan(&c))) goto out;
    t2__progress_init(&c.prog, o->progress, o->out, cfg->searcher.metric);
    if ((rc = restore_trials(&c, saved)) || (rc = sweep_orphans(&c))) goto out;
    /* In the commit that marks it ACTIVE: a run that never started keeps the overrides it had. */
    if (o->noverrides > 0 && (rc = t2__ctl_store_overrides(&c, ovr, novr))) goto out;
    if ((rc = t2__store_set_experiment_state(c.st, c.exp_id, T2__EXP_ACTIVE)) ||
        (rc = t2__store_set_experiment_error(c.st, c.exp_id, NULL)) || (rc = t2__store_set_controller(c.st, c.exp_id, 1))) {
        rc = t2__ctl_fail_start(&c, rc); /* not left ACTIVE */
        goto out;
    }
    c.recorded = 1;
    if ((rc = keep_killed(&c))) {
        rc = t2__ctl_fail_start(&c, rc);
        goto out;
    }
    if (o->on_started) o->on_started(o->on_started_arg, c.exp_id);
    t2__progress_line(o->out, "experiment %lld (%s): resuming %s search, %zu trial(s) known", (long long)c.exp_id,
                      cfg->name, t2__searcher_name(cfg->searcher.name), c.tt.nt);
    t2__ctl_log_pool(&c);
    /* A search that never started (its prepare_data failed or was stopped, or its first commit
     * never happened) starts as create starts it: prepare_data first. */
    if (fresh && (rc = t2__ctl_prepare_experiment(&c, (uint64_t)row.seed))) goto out;
    rc = t2__ctl_run_experiment(&c, !fresh);
out:
    rc = t2__ctl_end(&c, rc);
    t2__ctl_restore_signals(&sigs);
    t2__ctl_cleanup(&c);
    t2__experiment_row_free(&row);
    t2__val_free(saved);
    free(state_json);
    free(ovr);
    t2__val_free(ovr_doc);
    t2__config_free(cfg);
    return rc;
}
