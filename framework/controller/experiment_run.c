/* experiment_run.c — one run of an experiment, new or resumed: the signals that stop it, the
 * slot pool sized, the event loop run, the outcome recorded and summed up; and the set-up both
 * kinds of run share (checkpoint directory, warm-start source). */
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
#include "schedule.h"
#include "trial_proc.h"
#include "internal.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif

volatile sig_atomic_t t2__ctl_interrupted, t2__ctl_stops_asked;
static void on_signal(int sig)
{
    t2__ctl_interrupted = sig;
    /* Not SIGTERM: `t2exp pause` sends it, and pausing twice must not lose the checkpoints. */
    if (sig != SIGTERM) t2__ctl_stops_asked = (t2__ctl_stops_asked + 1) & 0x3fffffff;
}

volatile sig_atomic_t t2__ctl_child_exits, t2__ctl_child_exits_counted;
static void on_child(int sig)
{
    (void)sig;
    t2__ctl_child_exits = (t2__ctl_child_exits + 1) & 0x3fffffff; /* never past INT_MAX */
}

void t2__ctl_init(t2__ctl *c)
{
    memset(c, 0, sizeof *c);
    c->listen_fd = -1;
    c->best = NAN;
    c->saved_progress = NAN;
}

/* Installed before the controller is recorded in the store (t2__store_set_controller): from then
 * on `t2exp pause`/`kill` may signal this process, and SIGUSR2's default action would end it
 * without a word. */
void t2__ctl_catch_signals(t2__ctl_signals *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    t2__ctl_interrupted = 0;
    sigaction(SIGINT, &sa, &old->intr);
    sigaction(SIGTERM, &sa, &old->term);
    sigaction(SIGUSR2, &sa, &old->usr2);
    /* SA_RESTART: a child's end must not fail a blocking read or write; poll and nanosleep, which
     * it still interrupts, are retried where they are called. */
    struct sigaction ch;
    memset(&ch, 0, sizeof ch);
    ch.sa_handler = on_child;
    sigemptyset(&ch.sa_mask);
    ch.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    t2__ctl_child_exits_counted = sigaction(SIGCHLD, &ch, &old->chld) == 0;
    t2__ctl_catch_suspend(&old->tstp);
    t2__ctl_catch_kill_trial(&old->kill_trial);
    signal(SIGPIPE, SIG_IGN);
    /* A file-size limit (ulimit -f) must fail the store's write, which pauses the experiment with
     * the reason, not kill the controller mid-batch without a word. */
    signal(SIGXFSZ, SIG_IGN);
}

void t2__ctl_restore_signals(const t2__ctl_signals *old)
{
    sigaction(SIGINT, &old->intr, NULL);
    sigaction(SIGTERM, &old->term, NULL);
    sigaction(SIGUSR2, &old->usr2, NULL);
    sigaction(SIGTSTP, &old->tstp, NULL);
    sigaction(T2__SIG_KILL_TRIAL, &old->kill_trial, NULL);
    if (t2__ctl_child_exits_counted) sigaction(SIGCHLD, &old->chld, NULL);
    t2__ctl_child_exits_counted = 0;
}

int t2__ctl_open_store(const char *home_opt, char *home, size_t n, t2__store **st, int existing)
{
    int rc = t2__store_home(home_opt, home, n);
    if (!rc) rc = existing ? t2__store_open_existing(home, st) : t2__store_open(home, 0, st);
    if (rc && rc != T2_ENOMEM && rc != T2_EIO) {
        char why[1200];
        t2__fmt_fit(why, sizeof why, "%s", t2_errmsg());
        rc = t2_seterr(T2_EIO, "%s", why);
    }
    return rc;
}

/* Clears the experiment's controller record when this run ends; a failure to do so leaves a
 * record that liveness checks see as stale, so it only matters when nothing else went wrong. */
int t2__ctl_fail_start(t2__ctl *c, int rc)
{
    char why[1200];
    t2__fmt_fit(why, sizeof why, "%s", t2_errmsg());
    /* Best effort: the store that failed may refuse these too; the run's error stays the one told. */
    int w = t2__store_set_experiment_error(c->st, c->exp_id, why);
    if (!w) w = t2__store_set_experiment_state(c->st, c->exp_id, T2__EXP_ERRORED);
    if (!w) (void)t2__store_flush(c->st, 1);
    t2__progress_line(c->o->out, "experiment %lld ERRORED before it ran: %s", (long long)c->exp_id, why);
    return t2_seterr(rc, "%s", why);
}

int t2__ctl_end(t2__ctl *c, int rc)
{
    if (!c->recorded) return rc;
    c->recorded = 0;
    int rc2 = t2__store_set_controller(c->st, c->exp_id, 0);
    return rc ? rc : rc2;
}

int t2__ctl_better(const t2__ctl *c, double a, double b)
{
    if (isnan(b)) return !isnan(a);
    return c->cfg->searcher.smaller_is_better ? a < b : a > b;
}

int t2__ctl_cores(void)
{
    return t2__usable_cores();
}

/* The checkpoint directory: the one recorded at create (resume), else checkpoint_storage's
 * host_path/storage_path followed by the store id and experiment-<id>, else under the home.
 * Experiments made before the store had an id (recorded == NULL on resume, legacy) keep their
 * old host_path/experiment-<id> directory: a directory two homes may share, so resume never
 * sweeps it. */
int t2__ctl_checkpoint_dir(t2__ctl *c, const char *home, const char *recorded, int legacy)
{
    const t2__config *cfg = c->cfg;
    int n, rc;
    c->ckpt_dir_own = 1;
    if (recorded) {
        n = snprintf(c->ckpt_dir, sizeof c->ckpt_dir, "%s", recorded);
    } else if (cfg->checkpoint_storage.storage_path || cfg->checkpoint_storage.host_path) {
        const char *host = cfg->checkpoint_storage.host_path, *sp = cfg->checkpoint_storage.storage_path;
        char id[33] = "";
        if (sp && sp[0] == '/') host = NULL;
        if (!legacy && (rc = t2__store_id(c->st, id))) return rc;
        c->ckpt_dir_own = !legacy;
        /* The legacy spelling exactly as it was (its recorded paths must match it), "//" and all,
         * the home before an absolute storage_path included; now such a path is the base itself,
         * as config-reference.md says. */
        char base[PATH_MAX];
        n = snprintf(base, sizeof base, "%s%s%s", host ? host : (sp && (sp[0] != '/' || legacy) ? home : ""),
                     host || (sp && sp[0] != '/') ? "/" : "", sp ? sp : "");
        size_t bl = n < 0 ? 0 : strlen(base);
        while (!legacy && bl > 1 && base[bl - 1] == '/') base[--bl] = '\0';
        if (n >= 0 && (size_t)n < sizeof base)
            n = snprintf(c->ckpt_dir, sizeof c->ckpt_dir, "%s%s%s/experiment-%lld", base, legacy ? "" : "/", id,
                         (long long)c->exp_id);
    } else {
        if ((rc = t2__store_experiment_dir(home, c->exp_id, "checkpoints", c->ckpt_dir, sizeof c->ckpt_dir)))
            return rc;
        n = 0;
    }
    if (n < 0 || (size_t)n >= sizeof c->ckpt_dir)
        return t2_seterr(T2_EINVAL, "checkpoint_storage: the checkpoint directory of experiment %lld is longer "
                         "than %zu bytes", (long long)c->exp_id, sizeof c->ckpt_dir - 1);
    if ((rc = t2__mkdirs(c->ckpt_dir))) return rc;
    return recorded || legacy ? T2_OK : t2__store_set_experiment_checkpoint_dir(c->st, c->exp_id, c->ckpt_dir);
}

int t2__ctl_plan(t2__ctl *c)
{
    const t2__config *cfg = c->cfg;
    /* With a hostfile, every trial runs on its slots (those of hosts still alive); without one,
     * here. */
    t2__sched_capacity cap;
    int rc = t2__ctl_fit(cfg, c->pool.nhosts > 0 && c->pool.total <= 0 ? -1 : c->pool.total,
                         t2__searcher_total_trials(c->s), &cap);
    if (rc) return rc;
    c->slots = cap.slots;
    c->capacity = cap.capacity;
    c->threads = cap.threads;
    /* P is the experiment's, decided once: a resume on other cores, a changed max_slots or a
     * host lost from the pool keep it, and with it the numbers. */
    c->parts = c->recorded_parts > 0 ? c->recorded_parts : cap.parts;
    return T2_OK;
}

/* Runs the loop until the search ends or a signal stops it, records the outcome and prints the
 * summary. Returns 0 (the experiment COMPLETED, whatever some of its trials did), 1 (it ended
 * ERRORED, PAUSED or CANCELED) or a negative code when the store itself failed. */
/* Each trial's store writes make SQLite allocate and free a statement journal at the top of the
 * heap; glibc then gave that memory back to the kernel (brk) and took it again at the next write,
 * and in a process with threads (OpenBLAS's) every give-back flushes the TLB of every core by
 * interrupt: a quarter of the controller's time in a 10,000-trial search (perf, this VM). The
 * controller keeps up to 64 MiB of free heap instead. */
static void keep_heap(void)
{
#ifdef __GLIBC__
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

/* Garbage collection once the trials have stopped, as Determined collects at an experiment's end:
 * a trial ended by no event of its own (closed before it ran, canceled while queued) left its
 * checkpoints to it. What a resume needs stays whatever the final state: a paused or killed run's
 * unfinished trials are QUEUED, and their latest checkpoints are kept. Not after a store error (the
 * rows may be behind the files). A failure here is a warning: the run's outcome stands, and what
 * was not collected stays recorded ACTIVE (a resume collects it). */
static void collect_at_end(t2__ctl *c)
{
    if (t2__ctl_collect_garbage(c) != T2_OK) {
        t2__progress_event(&c->prog, "warning: garbage collection at the end of the run: %s", t2_errmsg());
        t2_clearerr();
    }
}

int t2__ctl_run_experiment(t2__ctl *c, int resumed)
{
    const t2__config *cfg = c->cfg;
    keep_heap();
    int rc = t2__ctl_plan(c);
    if (!rc) rc = t2__ctl_prune_init(c);
    if (!rc && resumed) rc = t2__ctl_prune_restore(c); /* reads the store: before its writer thread */
    if (!rc && c->recorded_parts <= 0) {
        rc = t2__store_set_experiment_parts(c->st, c->exp_id, c->parts);
        c->recorded_parts = c->parts;
    }
    if (rc) return t2__ctl_fail_start(c, rc); /* the row would stay ACTIVE with no controller */
    double t0 = t2__now();
    /* Before any trial or worker is forked, and before the store's writer thread starts. */
    t2__trial_guard_open();
    /* Before the searcher's first trials fill the trial table and the store's cache. */
    int64_t expect = t2__searcher_total_trials(c->s);
    rc = t2__ctl_workers_prespawn(c, expect > 0 && expect < c->capacity ? (int)expect : c->capacity);
    t2__ctl_snapshot_at_commit(c, 1);
    /* The per-trial writes go to the store's writer thread while the trials run (store_async.c).
     * A worker or trial forked meanwhile gets only this thread and never touches the store; glibc
     * keeps malloc usable in it. Without the thread (it could not start) the writes run here, as
     * before: slower, the same rows. */
    if (!rc) (void)t2__store_async_start(c->st);
    /* A resumed search whose start failed (a custom searcher's library) starts now. */
    if (!rc && (!resumed || !t2__searcher_started(c->s))) rc = t2__searcher_start(c->s, &c->ops);
    if (!rc && resumed) rc = t2__ctl_tell_missed_ends(c);
    if (!rc) rc = t2__ctl_apply_and_save(c);
    /* On a pool, the first trials and the searcher's state are committed before any launch: a pool
     * whose hosts all failed their probes ended the experiment ERRORED within the first batch,
     * whose snapshot an error drops (below), and `resume` with the hosts back then refused it as
     * never saved, where the error said "bring them back". A launch through mpirun costs far more
     * than this commit; local searches of short trials keep their first batch. */
    if (!rc && !resumed && c->pool.nhosts > 0) rc = t2__store_flush(c->st, 1);
    if (!rc) rc = t2__ctl_run_loop(c);
    /* The run's last batch commits now, while its end can still be told apart: a commit that
     * fails for want of space pauses the experiment as one mid-run does, instead of a COMPLETED
     * whose rows are gone (the end's own rows then fail to commit too). */
    if (!rc) rc = t2__store_flush(c->st, 1);
    /* A queued write's error not yet reported counts as the run's. */
    int rc_writer = t2__store_async_stop(c->st);
    if (!rc) rc = rc_writer;
    /* After a store error the searcher in memory may be ahead of the rows that reached the store
     * (a lost batch): its snapshot would then name trials that do not exist. An interrupted run
     * keeps the snapshot of its last event, which the final commit carries as any other. */
    /* A custom searcher's failed event was undone: its snapshot goes with the rows as they are. */
    if (rc && t2__searcher_rolled_back(c->s)) c->snapshot_due = 1;
    else if (rc) t2__ctl_snapshot_at_commit(c, 0);
    /* Out of disk space (or over a file-size limit): the experiment pauses, to be resumed once
     * there is space. The failed batch is gone (SQLite rolled it back); emptying the write-ahead
     * log makes room for the few rows that record the pause. */
    int full = rc && t2__store_out_of_space(c->st);
    char full_why[1200] = "";
    if (full) {
        t2__fmt_fit(full_why, sizeof full_why, "%s", t2_errmsg());
        t2__store_reclaim(c->st);
    }
    if (full) t2__ctl_kill_all_quietly(c);
    else if (rc || t2__ctl_interrupted) t2__ctl_stop_all(c);
    t2__ctl_workers_end(c); /* idle now: each leaves at the end of its channel */
    t2__trial_guard_close(); /* every group it knew of is reaped by now */
    int killed = t2__ctl_interrupted == SIGUSR2, canceled = 0;
    /* Killed: no trial continues, the ones just stopped (on_exit queued them) and the ones never
     * started alike. Each is said in the log and counted in the summary, as `kill EXP.N`'s are
     * (the summary said "1 trial(s) completed, 0 errored" of a run whose other trial it canceled,
     * and the log last said that trial started: probe_M). */
    for (size_t i = 0; killed && i < c->tt.nt; i++)
        if (c->tt.t[i].state == T2__CTL_QUEUED && c->tt.t[i].id > 0) {
            int rc3 = t2__ctl_store_trial(c, &c->tt.t[i], T2__TU_STATE, T2__TRIAL_CANCELED, NULL);
            if (!rc) rc = rc3;
            canceled++;
            t2__progress_event(&c->prog, "trial " T2__TRIAL_FMT " canceled: the experiment was killed",
                               T2__TRIAL_ARGS(c, &c->tt.t[i]));
        }
    if (!rc && !full) collect_at_end(c);
    t2__progress_finish(&c->prog);

    int completed = 0, errored = 0, pruned = 0;
    for (size_t i = 0; i < c->tt.nt; i++) {
        completed += c->tt.t[i].state == T2__CTL_DONE;
        pruned += c->tt.t[i].state == T2__CTL_DONE && c->tt.t[i].pruned_why;
        /* A trial the user killed ended as asked: no error of the run's. */
        canceled += c->tt.t[i].state == T2__CTL_ERRORED && c->tt.t[i].killed;
        errored += c->tt.t[i].state == T2__CTL_ERRORED && !c->tt.t[i].killed;
    }
    char canceled_text[48] = "", pruned_text[32] = "";
    if (pruned) snprintf(pruned_text, sizeof pruned_text, " (%d pruned)", pruned);
    if (canceled) snprintf(canceled_text, sizeof canceled_text, ", %d canceled", canceled);
    /* Every trial killed one by one by the user is a search the user canceled, not one that failed. */
    int all_killed = !rc && completed == 0 && errored == 0 && canceled > 0;
    int final = killed || (all_killed && !t2__ctl_interrupted && !full) ? T2__EXP_CANCELED
                : t2__ctl_interrupted || full ? T2__EXP_PAUSED
                : rc || completed == 0 ? T2__EXP_ERRORED
                                       : T2__EXP_COMPLETED;
    if (full) {
        char why[1400];
        t2__fmt_fit(why, sizeof why, "paused: the store ran out of space (%s); free some, then t2exp%s resume %lld",
                    full_why, t2__hint_home(), (long long)c->exp_id);
        t2__store_set_experiment_error(c->st, c->exp_id, why);
        t2_seterr(T2_EIO, "%s", why);
    } else if (rc) {
        char why[1200];
        t2__fmt_fit(why, sizeof why, "%s", t2_errmsg());
        t2__store_set_experiment_error(c->st, c->exp_id, why);
    } else if (final == T2__EXP_ERRORED) {
        t2__store_set_experiment_error(c->st, c->exp_id, "no trial completed");
    }
    if (final == T2__EXP_COMPLETED) t2__store_set_experiment_progress(c->st, c->exp_id, 1.0);
    if (!t2__ctl_interrupted && !rc) c->snapshot_due = 1; /* the final commit writes it */
    int rc2 = t2__store_set_experiment_state(c->st, c->exp_id, final);
    if (!rc2) rc2 = t2__store_flush(c->st, 1);
    t2__ctl_snapshot_at_commit(c, 0);
    FILE *out = c->o->out;
    char best[1100] = "";
    if (!isnan(c->best))
        snprintf(best, sizeof best, "; best %.1000s %.6g (trial %lld.%lld, best of all validations)", cfg->searcher.metric,
                 c->best, (long long)c->exp_id, (long long)c->best_ordinal);
    t2__progress_line(out, "experiment %lld %s in %.1f s: %d trial(s) completed%s, %d errored%s%s", (long long)c->exp_id,
                      t2__exp_state_name(final), t2__now() - t0, completed, pruned_text, errored, canceled_text, best);
    if (final == T2__EXP_PAUSED)
        fprintf(out, "  see: t2exp%s describe %lld; continue with: t2exp%s resume %lld\n", t2__hint_home(),
                (long long)c->exp_id, t2__hint_home(), (long long)c->exp_id);
    else
        fprintf(out, "  see: t2exp%s describe %lld\n", t2__hint_home(), (long long)c->exp_id);
    /* A failed write leaves the trial going on from its previous checkpoint (as a failed upload
     * in Determined does not stop training): the run must not end looking as if every model was
     * saved. */
    if (c->ckpt_failed)
        t2__progress_line(out, "  warning: %lld checkpoint write(s) failed in this run (the lines above say why); each "
                               "trial's latest saved checkpoint is the one before: t2exp%s checkpoints %lld",
                          (long long)c->ckpt_failed, t2__hint_home(), (long long)c->exp_id);
    if (rc) t2__progress_line(out, "  controller error: %s", t2_errmsg());
    if (rc2) return rc2;
    /* The experiment's state decides, as `t2exp follow` decides from the store: trials that failed
     * are part of a search that completed (Determined, Optuna), and the summary counts them. */
    return final == T2__EXP_COMPLETED ? 0 : 1;
}

/* The warm start of new trials: --from-checkpoint, else searcher.source_checkpoint (a file, or
 * the uuid of an active checkpoint in this store), else searcher.source_trial_id (that trial's
 * latest checkpoint). It is opened and checked here, so a bad one stops the experiment before a
 * trial runs. */
int t2__ctl_resolve_warm(t2__ctl *c)
{
    const t2__config *cfg = c->cfg;
    const char *src = c->o->from_checkpoint ? c->o->from_checkpoint : cfg->searcher.source_checkpoint;
    const char *what = c->o->from_checkpoint               ? "--from-checkpoint"
                       : cfg->searcher.source_checkpoint_uuid ? "searcher.source_checkpoint_uuid"
                                                              : "searcher.source_checkpoint";
    t2__checkpoint_row row;
    memset(&row, 0, sizeof row);
    int rc = T2_OK;
    if (src) {
        /* A path, a uuid, EXP or EXP.N: the same resolver as export and evaluate. */
        if ((rc = t2__store_resolve_checkpoint(c->st, src, &row))) {
            char why[512];
            t2__fmt_fit(why, sizeof why, "%s", t2_errmsg());
            return t2_seterr(rc == T2_ENOTFOUND ? T2_EINVAL : rc, "%s: %s", what, why);
        }
        src = row.path;
    } else if (!src && cfg->searcher.source_trial_id > 0) {
        what = "searcher.source_trial_id";
        if ((rc = t2__store_latest_checkpoint(c->st, cfg->searcher.source_trial_id, &row))) {
            if (rc != T2_ENOTFOUND) return rc;
            t2__trial_row tr;
            int grc = t2__store_get_trial(c->st, cfg->searcher.source_trial_id, &tr), found = grc == T2_OK;
            if (found) t2__trial_row_free(&tr);
            else if (grc != T2_ENOTFOUND) return grc; /* the store's trouble, said as it is (review) */
            t2_clearerr();
            return t2_seterr(T2_EINVAL, "searcher.source_trial_id: %s %lld%s",
                             found ? "trial" : "this store has no trial", (long long)cfg->searcher.source_trial_id,
                             found ? " has no checkpoint" : " (t2exp trials EXP lists the ids)");
        }
        src = row.path;
    }
    if (src) {
        /* Every checksum is checked now, so a bad source stops the experiment before it exists,
         * but streamed: memory stays at a few MiB whatever the archive claims (the trials'
         * restore then checks the tensor table against their model before decoding). */
        t2__ckpt *ck = NULL;
        if ((rc = t2__ckpt_stream_params(&ck, src, NULL, NULL))) {
            char why[512];
            t2__fmt_fit(why, sizeof why, "%s", t2_errmsg());
            rc = t2_seterr(rc, "%s: %s", what, why);
        }
        t2__ckpt_free(ck);
        if (!rc && !(c->warm = strdup(src))) rc = t2_seterr(T2_ENOMEM, "controller: out of memory");
    }
    t2__checkpoint_row_free(&row);
    return rc;
}

void t2__ctl_cleanup(t2__ctl *c)
{
    free(c->warm);
    free(c->saved_snapshot);
    free(c->lazy);
    /* Before the trial table: they name its trials (a process still awaited is ended here). */
    t2__ctl_probes_free(c);
    t2__ctl_exits_free(c);
    t2__tt_free(&c->tt);
    free(c->pf);
    free(c->pf_trial);
    t2__pool_free(&c->pool);
    t2__ops_free(&c->ops);
    t2__searcher_free(c->s);
    t2__ctl_prune_free(c);
    t2__store_close(c->st);
    t2__trial_so_close(&c->so);
    t2__ctl_launch_free(c);
    if (c->listen_fd >= 0) close(c->listen_fd);
    t2__ctl_workers_end(c);
    t2__ctl_readers_free(c);
}
