/* reports.c — what a runner's report does: metrics into the store (and the experiment's best),
 * checkpoints recorded (only files inside the experiment's checkpoint directory) with garbage
 * collection after each (and when a trial ends, and at the end of the run), the end of an op handed to the searcher, failures noted for on_exit. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "checkpoints/ckpt.h"
#include "ctl.h"
#include "route.h"
#include "runner/channel.h"
#include "runner/runner.h"
#include "internal.h"

/* Keeps the union of save_experiment_best, save_trial_best and save_trial_latest, plus every
 * unfinished trial's latest checkpoint (it is what that trial continues from, in this run or a
 * resume: a paused or killed run's trials are QUEUED, so theirs stay). */
int t2__ctl_collect_garbage(t2__ctl *c)
{
    t2__checkpoint_row *rows = NULL;
    size_t n = 0;
    int rc = t2__store_list_checkpoints(c->st, c->exp_id, 0, &rows, &n);
    if (rc) return rc;
    t2__ckpt_gc_item *items = calloc(n ? n : 1, sizeof *items);
    unsigned char *keep = calloc(n ? n : 1, 1);
    if (!items || !keep) rc = t2_seterr(T2_ENOMEM, "controller: out of memory");
    for (size_t i = 0; !rc && i < n; i++)
        items[i] = (t2__ckpt_gc_item){rows[i].trial_id, rows[i].batches, rows[i].metric, (int64_t)i};
    t2__ckpt_gc_params p = {c->cfg->checkpoint_storage.save_experiment_best, c->cfg->checkpoint_storage.save_trial_best,
                            c->cfg->checkpoint_storage.save_trial_latest, c->cfg->searcher.smaller_is_better};
    if (!rc) rc = t2__ckpt_gc_select(items, n, &p, keep);
    size_t *gone = calloc(n ? n : 1, sizeof *gone), ngone = 0;
    if (!rc && !gone) rc = t2_seterr(T2_ENOMEM, "controller: out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        if (keep[i] || rows[i].deleted) continue;
        int needed = 0;
        for (size_t k = 0; k < c->tt.nt; k++)
            needed |= c->tt.t[k].ckpt && c->tt.t[k].state != T2__CTL_DONE && c->tt.t[k].state != T2__CTL_ERRORED &&
                      strcmp(c->tt.t[k].ckpt, rows[i].path) == 0;
        if (needed) continue;
        /* Only a checkpoint file inside this experiment's own directory is ever deleted, whatever
         * path the row holds (see t2__ckpt_gc_path_check). */
        int ok = t2__ckpt_gc_path_check(c->ckpt_dir, rows[i].path);
        if (ok != T2_OK && ok != T2_ENOTFOUND) {
            t2__progress_event(&c->prog, "warning: checkpoint %s kept: %s", rows[i].uuid, t2_errmsg());
            t2_clearerr();
            continue;
        }
        /* DELETED unless a model version names it (`t2exp model register`), in one statement: a
         * registration and this never both win. */
        int retired = t2__store_retire_checkpoint(c->st, rows[i].uuid);
        if (retired < 0) rc = retired;
        else if (retired && ok == T2_OK) gone[ngone++] = i;
    }
    /* Rows first, committed, then the files: a `t2exp model register` after the commit finds them
     * DELETED; a crash before the unlinks leaves files that resume sweeps (sweep_orphans). */
    if (!rc && ngone) rc = t2__store_flush(c->st, 1);
    for (size_t k = 0; !rc && k < ngone; k++)
        if (unlink(rows[gone[k]].path) != 0 && errno != ENOENT)
            t2__progress_event(&c->prog, "warning: cannot delete checkpoint %s: %s", rows[gone[k]].path, strerror(errno));
    free(gone);
    free(items);
    free(keep);
    t2__checkpoint_rows_free(rows, n);
    return rc;
}

/* t->error, which becomes the ERRORED row's error (event_loop.c's settle). t->invalid_hparams
 * lives in memory only, and a resume that tells the searcher an end it missed (a custom
 * searcher's failed event undone) must tell it as the live end did: the row's error starts with
 * T2__INVALID_HPARAMS exactly when the flag is set. A text that starts so without the flag (only
 * a peer posing as a runner chooses the `where` it starts with; a trial's own message comes after
 * it) is prefixed, so that the mark cannot be forged. */
static int note_error(t2__ctl_trial *t, const char *text)
{
    int looks = !strncmp(text, T2__INVALID_HPARAMS, sizeof T2__INVALID_HPARAMS - 1);
    const char *pre = t->invalid_hparams ? T2__INVALID_HPARAMS : looks ? "runner error: " : "";
    size_t len = strlen(pre) + strlen(text) + 1;
    char *e = malloc(len);
    if (!e) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    snprintf(e, len, "%s%s", pre, text);
    free(t->error);
    t->error = e;
    return T2_OK;
}

/* A report the controller will not act on: the trial is stopped and errored (no restart: it
 * would say the same again), its later messages are ignored, and the experiment goes on. */
static int reject(t2__ctl *c, t2__ctl_trial *t, const char *what, const char *why)
{
    char msg[1200];
    t2__fmt_fit(msg, sizeof msg, "rejected %s: %s", what, why);
    t2__progress_event(&c->prog, "trial " T2__TRIAL_FMT ": %s; stopping it", T2__TRIAL_ARGS(c, t), msg);
    t->rejected = t->fatal = 1;
    if (t->pid > 0) kill(t->pid, SIGKILL);
    /* An earlier error's invalid_hparams still goes to the searcher (settle): the mark stays. */
    return note_error(t, msg);
}

int t2__ctl_reject_message(t2__ctl *c, t2__ctl_trial *t, const char *why)
{
    return reject(c, t, "a message", why);
}

/* A trial's checkpoint report names a uuid and the file's extension, never a path: the
 * controller makes the path itself, inside this experiment's checkpoint directory, and takes it
 * only if a regular file is there. Whatever a runner (or a peer posing as one) sends, the store
 * and GC never get a path outside that directory. */
static int on_checkpoint(t2__ctl *c, t2__ctl_trial *t, const t2__msg *m)
{
    const char *uuid = m->u.checkpoint.uuid, *ext = m->u.checkpoint.ext;
    if (!t2__uuid_valid(uuid)) return reject(c, t, "checkpoint report", "its uuid is not a uuid");
    char name[T2__UUID_LEN + 16], path[PATH_MAX + 64];
    int n = snprintf(name, sizeof name, "%s%s", uuid, ext);
    if (n < 0 || (size_t)n >= sizeof name || !t2__ckpt_name_parse(name, NULL, NULL))
        return reject(c, t, "checkpoint report", "its ext is not one of .tar, .tar.gz, .tar.zst");
    snprintf(path, sizeof path, "%s/%s", c->ckpt_dir, name);
    int ok = t2__ckpt_gc_path_check(c->ckpt_dir, path);
    if (ok) {
        char why[PATH_MAX + 600];
        /* On a pool, the likely cause is a directory rank 0's host does not share with this one:
         * the message named no cause (probe_N). Rank 0 runs on the trial's first host. */
        int h0 = 0;
        while (t->host_slots && h0 < c->pool.nhosts && !t->host_slots[h0]) h0++;
        /* Not where rank 0 ran here (a localhost pool, the Slurm batch node; review); a host whose
         * address is not known may be remote. */
        int remote = t->host_slots && h0 < c->pool.nhosts && t2__route_is_local(c->pool.hosts[h0].ipv4) != 1;
        if (ok == T2_ENOTFOUND && remote)
            t2__fmt_fit(why, sizeof why,
                        "no such file in the checkpoint directory %s on this machine: rank 0 on %s wrote it where "
                        "the controller cannot see it; the checkpoint directory (under T2EXP_HOME, or "
                        "checkpoint_storage) must be on a file system every host of the pool shares",
                        c->ckpt_dir, c->pool.hosts[h0].name);
        else
            t2__fmt_fit(why, sizeof why, "%s", ok == T2_ENOTFOUND ? "no such file in the checkpoint directory" : t2_errmsg());
        t2_clearerr();
        return reject(c, t, "checkpoint report", why);
    }
    t2__checkpoint_new ck = {.uuid = uuid, .trial_id = t->id, .batches = t->batches,
                             .epoch = t->bpe > 0 ? (double)t->batches / (double)t->bpe : NAN,
                             .metric = m->u.checkpoint.has_metric ? m->u.checkpoint.metric : NAN,
                             .size_bytes = m->u.checkpoint.bytes, .path = path};
    char *keep = strdup(path);
    if (!keep) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    int rc = t2__store_add_checkpoint(c->st, &ck);
    if (rc == T2_EINVAL) { /* the uuid is already recorded: another checkpoint's name */
        free(keep);
        t2_clearerr();
        return reject(c, t, "checkpoint report", "its uuid is already recorded");
    }
    if (rc) {
        free(keep);
        return rc;
    }
    free(t->ckpt);
    t->ckpt = keep;
    /* The checkpoint must be durable in the store before older ones are deleted. */
    rc = t2__store_flush(c->st, 1);
    if (!rc) rc = t2__ctl_collect_garbage(c);
    return rc;
}

static int on_ready(t2__ctl *c, t2__ctl_trial *t, const t2__msg *m)
{
    int rc = T2_OK;
    t->bpe = m->u.ready.batches_per_epoch;
    t->ready = 1;
    if (m->u.ready.blas) rc = t2__store_set_trial_blas(c->st, t->id, m->u.ready.blas);
    if (!rc && t->sent >= 0) { /* the op went out before the epoch length was known */
        t->target = t2__length_to_batches(c->cfg->searcher.max_length.unit, t->sent, t->gb, t->bpe);
        rc = t2__ctl_store_trial(c, t, T2__TU_TARGET, 0, NULL);
    }
    return rc;
}

static int on_metrics(t2__ctl *c, t2__ctl_trial *t, const t2__msg *m)
{
    int rc = T2_OK, validation = m->u.metrics.validation;
    const t2__val *vals = m->u.metrics.values;
    double epoch = m->u.metrics.epoch;
    if (m->u.metrics.has_timing) t->rate = m->u.metrics.timing.batches_per_s;
    int new_best = 0; /* better than every validation of the experiment before it */
    int prune = 0;    /* searcher.pruner stops the trial here */
    for (size_t i = 0; i < vals->n && !rc; i++) {
        double v;
        if (t2__val_as_double(vals->items[i], &v) != T2_OK) continue; /* decode checked: numbers */
        rc = t2__store_add_metric(c->st, t->id, validation ? T2__METRIC_VALIDATION : T2__METRIC_TRAINING, t->batches,
                                  epoch, vals->keys[i], v);
        if (!validation && strcmp(vals->keys[i], "loss") == 0) t->loss = v;
        if (validation && strcmp(vals->keys[i], c->cfg->searcher.metric) == 0) {
            t->metric = v;
            t2__trial_update u = {.set = T2__TU_VALIDATION | T2__TU_BATCHES, .validation = v,
                                  .batches_trained = t->batches};
            if (!rc) rc = t2__ctl_update_trial(c, t, &u);
            if (!rc && t2__ctl_better(c, v, c->best)) {
                new_best = 1;
                c->best = v;
                c->best_trial = t->id;
                c->best_ordinal = t->rid;
                rc = t2__store_set_experiment_best(c->st, c->exp_id, t->id, v);
            }
            if (!rc) rc = t2__ctl_prune_validation(c, t, v, m->u.metrics.ask, &prune);
        }
    }
    /* The runner's own measurements of the window go in beside the trial's metrics. */
    if (!rc && !validation && m->u.metrics.has_timing) {
        const t2__msg_timing *x = &m->u.metrics.timing;
        t2__store_timing tm = {x->batches_per_s, x->samples_per_s, x->data_s, x->compute_s, x->comm_s};
        rc = t2__store_add_timing(c->st, t->id, t->batches, epoch, &tm);
    }
    if (!validation && !rc) rc = t2__ctl_store_trial(c, t, T2__TU_BATCHES, 0, NULL);
    /* checkpoint_policy best, searcher.pruner: the runner waits for this answer before it goes on. */
    if (validation && !rc && m->u.metrics.ask) {
        t2__msg a = {.kind = T2__MSG_VALIDATED, .u.validated = {.new_best = new_best, .prune = prune}};
        rc = t2__ctl_send(c, t->fd, &a); /* out before the loop waits again */
    }
    return rc;
}

/* One message from a trial's runner. */
int t2__ctl_on_message(t2__ctl *c, t2__ctl_trial *t, const t2__msg *m)
{
    if (t->rejected) return T2_OK;
    int rc = T2_OK;
    switch (m->kind) {
    case T2__MSG_READY:
        rc = on_ready(c, t, m);
        break;
    case T2__MSG_METRICS:
        t->batches = m->u.metrics.batches;
        rc = on_metrics(c, t, m);
        break;
    case T2__MSG_DONE: {
        t->batches = m->u.done.batches;
        int64_t length = t->sent;
        t->sent = -1;
        /* A pruned trial's done comes at the step it was stopped, short of its op's length. */
        rc = t->pruned_why ? t2__ctl_prune_done(c, t, length)
                           : t2__searcher_on_validation(c->s, t->rid, t->metric, length, &c->ops);
        if (rc && t2__searcher_rolled_back(c->s)) {
            /* A custom searcher's library failed on it (undone): the op stays the trial's, so a
             * resume runs it again (from the checkpoint at its end) and the event comes again. */
            t->pending = length;
            t2__tt_note_special(&c->tt, t);
            break;
        }
        if (!rc) rc = t2__ctl_apply_and_save(c);
        break;
    }
    case T2__MSG_CHECKPOINT:
        t->batches = m->u.checkpoint.batches;
        rc = on_checkpoint(c, t, m);
        break;
    case T2__MSG_CHECKPOINT_FAILED:
        t->batches = m->u.checkpoint_failed.batches;
        c->ckpt_failed++;
        t2__progress_event(&c->prog, "trial " T2__TRIAL_FMT ": checkpoint failed (%s); its previous checkpoint stays the latest",
                           T2__TRIAL_ARGS(c, t), m->u.checkpoint_failed.message);
        break;
    case T2__MSG_STOPPED:
        t->batches = m->u.stopped.batches;
        t->pausing = 1;
        t->exit_sent = 1;
        if (!t->left_at) t->left_at = t2__now();
        if (t->sent >= 0 && t->pending < 0) t->pending = t->sent; /* the op continues on resume */
        t->sent = -1;
        break;
    case T2__MSG_ERROR: {
        t->batches = m->u.error.batches;
        char buf[1400];
        t2__fmt_fit(buf, sizeof buf, "%s: %s", m->u.error.where, m->u.error.message);
        if (!t->left_at) t->left_at = t2__now(); /* the runner leaves after an error */
        t->invalid_hparams = m->u.error.invalid_hparams;
        t->fatal = m->u.error.fatal;
        rc = note_error(t, buf); /* after the flag: it decides the mark */
        break;
    }
    default: {
        char why[96];
        t2__fmt_fit(why, sizeof why, "a runner sent a %s message, which only the controller sends",
                 t2__msg_kind_name(m->kind));
        rc = t2__ctl_reject_message(c, t, why);
    }
    }
    return rc;
}
