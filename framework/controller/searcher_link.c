/* searcher_link.c — the searcher's operations applied to the trial table and the store, and the
 * searcher's snapshot saved beside them (what `t2exp resume` continues from). */
#define _XOPEN_SOURCE 700
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "checkpoints/ckpt.h"
#include "ctl.h"
#include "internal.h"

#define LAZY_FIELDS (T2__TU_BATCHES | T2__TU_TARGET)

/* Whether the searcher's progress counts trials against a known total, each trained to
 * max_length (single, grid, random, tpe: the ended ones over max_trials or the grid): then a
 * trial's trained part counts as well, as Determined's searchers count the work done; a single
 * trial at 300 of 600 batches showed 0.0% until it ended. ASHA's rungs, pbt's rounds and a
 * custom searcher's own progress say how far they are themselves. */
static int counts_work(const t2__ctl *c)
{
    switch (c->cfg->searcher.name) {
    case T2__SEARCH_SINGLE:
    case T2__SEARCH_GRID:
    case T2__SEARCH_RANDOM:
    case T2__SEARCH_TPE: return 1;
    default: return 0;
    }
}

void t2__ctl_note_work(t2__ctl *c, t2__ctl_trial *t)
{
    double w = 0.0;
    /* An ended trial is the searcher's to count (a random search's trial with invalid
     * hyperparameters is not, its replacement is); the target is the batches of its op. */
    if (counts_work(c) && t->state != T2__CTL_DONE && t->state != T2__CTL_ERRORED && t->target > 0 && t->batches > 0)
        w = t->batches >= t->target ? 1.0 : (double)t->batches / (double)t->target;
    c->work_partial += w - t->work;
    t->work = w;
}

/* The experiment's progress: the searcher's, plus the trained part of the trials that have not
 * ended where it counts trials (counts_work). It never goes back within a run: a trial restarted
 * from an earlier checkpoint trains part of its length again, which is no less done. */
static double progress_now(const t2__ctl *c)
{
    double p = t2__searcher_progress(c->s);
    int64_t total = t2__searcher_total_trials(c->s);
    if (p < 1.0 && total > 0 && c->work_partial > 0 && counts_work(c)) p += c->work_partial / (double)total;
    if (!(p >= 0.0)) p = 0.0;
    if (p > 1.0) p = 1.0;
    if (!isnan(c->saved_progress) && p < c->saved_progress) p = c->saved_progress;
    return p;
}

/* Writes the progress when it moved by min_step or more (0: any change). Between the searcher's
 * events only a step the listing shows (0.1%) is written: a trial's every report would be a write. */
static int write_progress(t2__ctl *c, double min_step)
{
    double p = progress_now(c);
    if (!isnan(c->saved_progress) && (p == c->saved_progress || p - c->saved_progress < min_step)) return T2_OK;
    int rc = t2__store_set_experiment_progress(c->st, c->exp_id, p);
    c->saved_progress = rc ? NAN : p;
    return rc;
}

int t2__ctl_update_trial(t2__ctl *c, t2__ctl_trial *t, t2__trial_update *u)
{
    t2__ctl_note_work(c, t);
    if (t->lazy & T2__TU_BATCHES && !(u->set & T2__TU_BATCHES)) u->batches_trained = t->batches;
    if (t->lazy & T2__TU_TARGET && !(u->set & T2__TU_TARGET)) u->target_length_batches = t->target;
    u->set |= t->lazy;
    t->lazy = 0;
    return t2__store_update_trial(c->st, t->id, u);
}

int t2__ctl_store_trial(t2__ctl *c, t2__ctl_trial *t, unsigned set, int state, const char *error)
{
    if (set && !(set & ~(unsigned)LAZY_FIELDS)) {
        t2__ctl_note_work(c, t);
        if (!t->lazy) {
            size_t *g = t2__grow_array(c->lazy, &c->caplazy, c->nlazy, sizeof *c->lazy, 64);
            if (!g) return t2_seterr(T2_ENOMEM, "controller: out of memory");
            c->lazy = g;
            c->lazy[c->nlazy++] = (size_t)(t - c->tt.t);
        }
        t->lazy |= set;
        return T2_OK;
    }
    t2__trial_update u = {.set = set, .state = state, .restarts = t->restarts, .batches_trained = t->batches,
                          .target_length_batches = t->target, .error = error, .log_path = t->log_path};
    return t2__ctl_update_trial(c, t, &u);
}

/* Every trial's waiting progress fields, before a commit. */
static int write_lazy(t2__ctl *c)
{
    int rc = T2_OK;
    for (size_t k = 0; k < c->nlazy && !rc; k++) {
        t2__ctl_trial *t = &c->tt.t[c->lazy[k]];
        if (!t->lazy) continue; /* written with a later update of its own */
        t2__trial_update u = {0};
        rc = t2__ctl_update_trial(c, t, &u);
    }
    c->nlazy = 0;
    return rc;
}

/* pbt's exploit: the new trial starts from its parent's latest checkpoint as a full restore (the
 * runner takes t->ckpt as its own, not as a warm start), at the parent's length. The searcher
 * asks only once the parent's op ended, and a runner checkpoints before it reports the op done,
 * so that checkpoint is the one at the parent's last validation. GC keeps it while this trial
 * holds it as t->ckpt; the store keeps its uuid so a resume starts from the same state. */
static int inherit(t2__ctl *c, t2__ctl_trial *t, int64_t parent_rid)
{
    const t2__ctl_trial *p = t2__tt_find(&c->tt, parent_rid);
    if (!p) return t2_seterr(T2_EINVAL, "controller: the searcher named request %lld as a parent, which it never created",
                             (long long)parent_rid);
    if (!p->ckpt)
        return t2_seterr(T2_ESTATE, "trial " T2__TRIAL_FMT ": pbt needs the checkpoint of its parent, trial " T2__TRIAL_FMT
                                    ", which has none (the trial must register its model so that it can be checkpointed)",
                         T2__TRIAL_ARGS(c, t), T2__TRIAL_ARGS(c, p));
    const char *base = strrchr(p->ckpt, '/');
    char uuid[T2__UUID_LEN + 1];
    snprintf(uuid, sizeof uuid, "%s", base ? base + 1 : p->ckpt); /* <uuid>.tar[.gz|.zst] */
    if (!(t->ckpt = strdup(p->ckpt))) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    t->batches = p->batches;
    int rc = t2__store_set_trial_parent(c->st, t->id, p->id, uuid);
    return rc ? rc : t2__ctl_store_trial(c, t, T2__TU_BATCHES, 0, NULL);
}

/* DIR/trial-ID.log, malloc'ed (NULL: out of memory). Through the JSON writer's buffer rather
 * than snprintf: once a trial, and printf's format parser takes its slow path in a process with
 * libquadmath (json_double.c). */
static char *trial_log_path(const char *dir, int64_t id)
{
    t2__json_out o = {0};
    t2__json_raw(&o, dir, strlen(dir));
    t2__json_raw(&o, "/trial-", sizeof "/trial-" - 1);
    t2__json_int(&o, id);
    t2__json_raw(&o, ".log", sizeof ".log" - 1);
    if (o.oom) {
        free(o.p);
        return NULL;
    }
    return o.p;
}

/* Applies the searcher's operations, including those the handling itself produces. An event
 * delivered inside (a closed trial's exit) that a custom searcher's library failed on is undone
 * (t2__searcher_rolled_back): the ops of the event that closed the trial are applied all the same,
 * so the snapshot committed with them matches the trial table, and the failure is returned after. */
static int apply_ops(t2__ctl *c)
{
    int rc = T2_OK, undone = T2_OK;
    char undone_msg[1400] = "";
    for (; c->op_next < c->ops.n && !rc; c->op_next++) {
        t2__search_op *op = &c->ops.v[c->op_next];
        t2__ctl_trial *t = op->kind == T2__OP_CREATE ? NULL : t2__tt_find(&c->tt, op->request_id);
        switch (op->kind) {
        case T2__OP_CREATE: {
            t2__val *hp = op->hparams;
            op->hparams = NULL;
            if ((rc = t2__tt_add(&c->tt, op->request_id, hp, op->seed, &t))) break;
            t2__config_batch_sizes(c->cfg, t->hparams, &t->gb, NULL); /* checked again by the runner */
            char *json = NULL;
            size_t len;
            if ((rc = t2__val_to_json(t->hparams, &json, &len))) break;
            rc = t2__store_create_trial(c->st, c->exp_id, t->rid, json, (int64_t)t->seed, 0, &t->id);
            /* Its assigns send the same text: printing a search's random doubles again for each was
             * about 6% of the controller's thread (perf, 8,000 trials). */
            t->hparams_json = json;
            if (rc) break;
            if (!c->exp_dir[0] &&
                (rc = t2__store_experiment_dir(t2__store_home_of(c->st), c->exp_id, NULL, c->exp_dir, sizeof c->exp_dir)))
                break;
            if (!(t->log_path = trial_log_path(c->exp_dir, t->id))) {
                rc = t2_seterr(T2_ENOMEM, "controller: out of memory");
                break;
            }
            t->fresh = 1;
            if ((rc = t2__ctl_store_trial(c, t, T2__TU_LOG_PATH, 0, NULL))) break;
            if (op->parent_request_id >= 0 && (rc = inherit(c, t, op->parent_request_id))) break;
            /* The pointer t may move when the op list grows; searcher calls only append ops. */
            rc = t2__searcher_on_trial_created(c->s, op->request_id, &c->ops);
            break;
        }
        case T2__OP_TRAIN:
            if (t) {
                t->pending = op->length;
                rc = t2__tt_note_special(&c->tt, t);
            }
            break;
        case T2__OP_CLOSE:
            if (!t) break;
            t->closing = 1;
            if (t->state == T2__CTL_QUEUED && t->pending < 0) {
                /* Paused (or never started) with no work left: it is done without running again. */
                t2__tt_set_state(&c->tt, t, T2__CTL_DONE);
                t2__progress_event(&c->prog, "trial " T2__TRIAL_FMT " completed: %lld batches, latest %s %.6g", T2__TRIAL_ARGS(c, t),
                                   (long long)t->batches, c->cfg->searcher.metric, t->metric);
                rc = t2__ctl_store_trial(c, t, T2__TU_STATE, T2__TRIAL_COMPLETED, NULL);
                if (!rc) rc = t2__searcher_on_trial_exited(c->s, op->request_id, &c->ops);
                if (rc && t2__searcher_rolled_back(c->s) && !undone) { /* a resume tells it again */
                    undone = rc;
                    t2__fmt_fit(undone_msg, sizeof undone_msg, "%s", t2_errmsg());
                    rc = T2_OK;
                }
            }
            break;
        case T2__OP_SHUTDOWN:
            c->shutdown = 1;
            break;
        }
    }
    if (c->op_next == c->ops.n) {
        t2__ops_clear(&c->ops);
        c->op_next = 0;
    }
    if (!rc && undone) {
        rc = t2_seterr(undone, "%s", undone_msg);
        t2__searcher_mark_rolled_back(c->s); /* later events of this loop may have cleared it */
    }
    return rc;
}

/* The searcher's snapshot, wrapped with what the controller itself must remember to resume: each
 * unfinished trial's outstanding TRAIN length and whether it was closed. Only trials that differ
 * from the common case (waiting for max_length, not closed) are listed, so a search that queues
 * thousands of trials up front saves a small document after every event. */
int t2__ctl_save_searcher(t2__ctl *c)
{
    t2__val *state = NULL, *doc = t2__val_map(), *trials = t2__val_map();
    char *json = NULL;
    size_t len;
    int rc = doc && trials ? t2__searcher_snapshot(c->s, &state) : t2_seterr(T2_ENOMEM, "controller: out of memory");
    if (!rc) rc = t2__val_map_set(doc, "searcher", state);
    /* Running trials, then the special queued ones (dropping stale entries from that list). */
    t2__tt_prune_special(&c->tt);
    for (size_t k = 0; !rc && k < c->tt.nrun + c->tt.nspecial; k++) {
        const t2__ctl_trial *t = &c->tt.t[k < c->tt.nrun ? c->tt.run[k] : c->tt.special[k - c->tt.nrun]];
        int64_t pend = t->sent >= 0 ? t->sent : t->pending;
        if (pend == c->cfg->searcher.max_length.n && !t->closing) continue;
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)t->rid);
        t2__val *e = t2__val_map();
        t2__val_map_set(e, "pending", t2__val_int(pend));
        t2__val_map_set(e, "closing", t2__val_bool(t->closing));
        rc = t2__val_map_set(trials, key, e);
    }
    if (!rc) rc = t2__val_map_set(doc, "trials", trials);
    else t2__val_free(trials);
    if (!rc) rc = t2__val_to_json(doc, &json, &len);
    t2__val_free(doc);
    if (rc) {
        free(json);
        return rc;
    }
    /* Most events (a trial's validation in a random search) leave the snapshot as it was: the
     * store already holds it, and a write less per event counts in a search of short trials. */
    if (!c->saved_snapshot || strcmp(c->saved_snapshot, json) != 0) {
        rc = t2__store_save_searcher_state(c->st, c->exp_id, 0, json);
        free(c->saved_snapshot);
        c->saved_snapshot = rc ? NULL : json;
        json = NULL;
    }
    if (!rc) rc = write_progress(c, 0.0);
    free(json);
    return rc;
}

/* The searcher's operations reach the store in one commit (t2__store_group), and the snapshot
 * after them with that commit: it is written just before each commit (t2__ctl_snapshot_at_commit),
 * not after every event, since a snapshot that no commit carries is overwritten before anyone
 * can read it. With 3000 trials queued at once, the batch once filled up between the ops and the
 * snapshot, and a resume after a crash there knew 1000 trials and ran only those. */
int t2__ctl_apply_and_save(t2__ctl *c)
{
    t2__store_group(c->st, 1);
    int rc = apply_ops(c);
    c->snapshot_due = 1;
    t2__store_group(c->st, 0);
    return rc;
}

static int save_before_commit(void *ud)
{
    t2__ctl *c = ud;
    int rc = write_lazy(c);
    if (!rc && !c->snapshot_due) rc = write_progress(c, 0.001); /* the trials trained on */
    if (rc || !c->snapshot_due) return rc;
    rc = t2__ctl_save_searcher(c);
    if (!rc) c->snapshot_due = 0;
    return rc;
}

void t2__ctl_snapshot_at_commit(t2__ctl *c, int on)
{
    t2__store_set_precommit(c->st, on ? save_before_commit : NULL, c);
    if (!on) c->snapshot_due = 0;
}
