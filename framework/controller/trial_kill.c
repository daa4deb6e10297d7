/* trial_kill.c — `t2exp kill EXP.N` (Determined's `det trial kill`): one trial ended for good while
 * the rest of the experiment goes on.
 *
 * The command sends the live controller T2__SIG_KILL_TRIAL with the trial's store id as the signal's
 * value (controller.h). The handler only queues the id; each round of the loop takes the queue:
 * a QUEUED trial (never started, paused at a rung, waiting for its restart) ends at once; a running
 * one is marked and its process killed as `t2exp kill EXP` kills one (SIGKILL, mpirun SIGTERM for
 * its teardown), and its end (settle) then finds the mark. Either way it is CANCELED with the reason,
 * is never restarted, and its searcher is told it failed, as Determined tells its searcher the
 * trial exited early: random and grid count it done, ASHA and TPE go on without its result.
 *
 * With no controller running (a PAUSED experiment), the command marks the row itself
 * (cli/lifecycle.c), and the resume tells the searcher (t2__ctl_tell_missed_ends). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "ctl.h"
#include "internal.h"

/* A ring the handler fills and the loop empties. Kills come one command at a time, so 64 waiting
 * at once means the loop is not running; one past that is dropped, and its command says the trial
 * did not end. The counters and slots are lock-free atomics, which a handler may touch. */
#define RING 64
static _Atomic int64_t ring[RING];
static atomic_uint ring_head, ring_tail;

#if ATOMIC_LLONG_LOCK_FREE != 2 || ATOMIC_INT_LOCK_FREE != 2
#error "trial_kill.c needs lock-free 64-bit atomics for its signal handler"
#endif

static void on_kill_trial(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    /* Only a queued signal carries an id: a bare `kill -RTMIN` is no request to kill trial 0. */
    if (si->si_code != SI_QUEUE) return;
    unsigned head = atomic_load(&ring_head);
    if (head - atomic_load(&ring_tail) >= RING) return;
    atomic_store(&ring[head % RING], (int64_t)(intptr_t)si->si_value.sival_ptr);
    atomic_store(&ring_head, head + 1); /* the only writer: handlers of one signal do not nest */
}

void t2__ctl_catch_kill_trial(struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_kill_trial;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    atomic_store(&ring_tail, atomic_load(&ring_head));
    sigaction(T2__SIG_KILL_TRIAL, &sa, old);
}

int t2__ctl_cancel_trial(t2__ctl *c, t2__ctl_trial *t)
{
    char why[96];
    t2__trial_killed_reason(c->exp_id, t->rid, why, sizeof why); /* the mark resume knows it by */
    t2__tt_set_state(&c->tt, t, T2__CTL_ERRORED); /* ended: the table counts it done */
    t2__ctl_prune_ended(c, t, 0);
    t2__progress_event(&c->prog, "trial " T2__TRIAL_FMT " %s", T2__TRIAL_ARGS(c, t), why);
    int rc = t2__ctl_store_trial(c, t, T2__TU_STATE | T2__TU_ERROR | T2__TU_BATCHES, T2__TRIAL_CANCELED, why);
    if (!rc) rc = t2__searcher_on_trial_failed(c->s, t->rid, 0, &c->ops);
    return rc;
}

int t2__ctl_tell_missed_ends(t2__ctl *c)
{
    int rc = T2_OK;
    for (size_t i = 0; !rc && i < c->tt.nt; i++) {
        const t2__ctl_trial *t = &c->tt.t[i];
        if (t2__searcher_has_ended(c->s, t->rid)) continue;
        /* Killed with no controller running; or an end whose event a custom searcher's library
         * failed (undone, t2__searcher_rolled_back) while the row had already recorded it. Told
         * as the live end told it: a kill with invalid_hparams 0 (t2__ctl_cancel_trial), an
         * error with the flag the resume read back from the row (T2__INVALID_HPARAMS), so that
         * a searcher that draws a replacement for unusable hparams draws it here too. */
        if (t->killed || t->state == T2__CTL_ERRORED)
            rc = t2__searcher_on_trial_failed(c->s, t->rid, !t->killed && t->invalid_hparams, &c->ops);
        else if (t->state == T2__CTL_DONE) rc = t2__searcher_on_trial_exited(c->s, t->rid, &c->ops);
    }
    return rc;
}

/* Kills the trial with store id `id`, if it is this experiment's and has not ended. */
static int kill_one(t2__ctl *c, int64_t id)
{
    t2__ctl_trial *t = NULL;
    for (size_t i = 0; i < c->tt.nt && !t; i++) /* O(trials), once a command: no index kept for it */
        if (c->tt.t[i].id == id) t = &c->tt.t[i];
    if (!t || t->killed || t->state == T2__CTL_DONE || t->state == T2__CTL_ERRORED) return T2_OK;
    t->killed = 1;
    if (t->state == T2__CTL_QUEUED) {
        int rc = t2__ctl_cancel_trial(c, t);
        return rc ? rc : t2__ctl_apply_and_save(c);
    }
    /* RUNNING or LAUNCHING: its end is settled as any other (on_exit, the launch's failure, or its
     * host probes: host_check.c stops them). */
    if (t->pid <= 0) return T2_OK;
    t2__ctl_mpirun_note(t);
    kill(t->pid, t2__ctl_kill_signal(c));
    return T2_OK;
}

int t2__ctl_take_kills(t2__ctl *c)
{
    int rc = T2_OK;
    unsigned tail = atomic_load(&ring_tail);
    while (!rc && tail != atomic_load(&ring_head)) {
        int64_t id = atomic_load(&ring[tail % RING]);
        atomic_store(&ring_tail, ++tail);
        rc = kill_one(c, id);
    }
    return rc;
}
