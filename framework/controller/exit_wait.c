/* exit_wait.c — a runner whose channel closed, waited for as an event of the loop.
 *
 * Why: a process closes its channel as it exits, a moment before it can be reaped, and mpirun then
 * takes a while to end its job: 10-18 ms a distributed trial on the 2-core VM, up to 20 s for one
 * that closed its channel and ran on. The controller waited for that inside the loop (sleeping a
 * millisecond at a time), holding every other trial's reports, launches and Ctrl-C meanwhile. Now
 * the trial waits, LAUNCHING with no channel (its slots held), and each round looks at it without
 * waiting (a child's exit wakes the loop's poll); then it is settled as before (t2__ctl_exited).
 *
 * The rule is the one the blocking wait had: 5 s for the process to end (10 s for mpirun); one
 * still running then closed the channel itself (a trial that closes descriptors it did not open)
 * and can no longer be driven, so it is ended: mpirun with its teardown first (SIGTERM, then
 * SIGKILL 10 s later: a SIGKILL alone would orphan its ranks), any other process at once. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "ctl.h"
#include "internal.h"
#include "trial_proc.h"

#define CLOSE_GRACE_S 5.0
#define MPIRUN_GRACE_S 10.0
#define TEARDOWN_S 10.0

static const char CLOSED_WHILE_RUNNING[] =
    "its channel to the controller closed while its process still ran (did the trial close a file descriptor it "
    "had not opened?); the process was ended";

/* 1 with *status once t's process is reaped (or is not ours to wait for: it counts as exited, as
 * the blocking waitpid once had it), 0 while it runs. */
static int reaped(t2__ctl_trial *t, int *status)
{
    *status = 0;
    if (t->reaped) {
        t->reaped = 0;
        *status = t->reaped_status;
        return 1;
    }
    pid_t p = t2__reap_group(t->pid, status, WNOHANG);
    if (p == t->pid) return 1;
    if (p < 0 && errno != EINTR) {
        *status = 0;
        return 1;
    }
    return 0;
}

static int remove_waiting(t2__ctl *c, t2__ctl_trial *t)
{
    size_t i = (size_t)(t - c->tt.t);
    for (size_t k = 0; k < c->nexiting; k++)
        if (c->exiting[k] == i) {
            c->exiting[k] = c->exiting[--c->nexiting];
            return 1;
        }
    return 0;
}

/* t's process is gone (status): settled as the loop settles any runner that ended. */
static int done(t2__ctl *c, t2__ctl_trial *t, int status)
{
    remove_waiting(c, t);
    t->exit_stage = 0;
    return t2__ctl_exited(c, t, status);
}

int t2__ctl_exit_begin(t2__ctl *c, t2__ctl_trial *t)
{
    int status;
    if (reaped(t, &status)) return t2__ctl_exited(c, t, status);
    size_t *g = t2__grow_array(c->exiting, &c->capexiting, c->nexiting, sizeof *c->exiting, 8);
    if (!g) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    c->exiting = g;
    c->exiting[c->nexiting++] = (size_t)(t - c->tt.t);
    t->exit_since = t2__now();
    t->exit_stage = 0;
    /* In the run list still (the loop must not end while it waits), with no channel to poll. */
    return t->state == T2__CTL_LAUNCHING ? T2_OK : t2__tt_set_state(&c->tt, t, T2__CTL_LAUNCHING);
}

/* Ends t's process now (the stop paths): mpirun's teardown is not waited for. */
static int end_now(t2__ctl *c, t2__ctl_trial *t)
{
    int status = 0;
    t2__ctl_mpirun_note(t);
    kill(t->pid, SIGKILL);
    t2__reap_group(t->pid, &status, 0);
    return done(c, t, status);
}

int t2__ctl_exit_events(t2__ctl *c)
{
    int rc = T2_OK;
    double now = t2__now();
    int dist = t2__ctl_via_mpi(c);
    /* Backwards: done() moves the last entry into the place it frees. */
    for (size_t k = c->nexiting; !rc && k-- > 0;) {
        if (k >= c->nexiting) continue;
        t2__ctl_trial *t = &c->tt.t[c->exiting[k]];
        int status;
        if (reaped(t, &status)) {
            rc = done(c, t, status);
            continue;
        }
        if (t->exit_stage == 0 && now - t->exit_since > (dist ? MPIRUN_GRACE_S : CLOSE_GRACE_S)) {
            if (!t->error && !(t->error = strdup(CLOSED_WHILE_RUNNING)))
                return t2_seterr(T2_ENOMEM, "controller: out of memory");
            if (!dist) {
                rc = end_now(c, t);
                continue;
            }
            t2__ctl_mpirun_note(t);
            kill(t->pid, SIGTERM);
            t->exit_stage = 1;
            t->exit_since = now;
        } else if (t->exit_stage == 1 && now - t->exit_since > TEARDOWN_S) {
            rc = end_now(c, t);
        }
    }
    return rc;
}

int t2__ctl_exits_end(t2__ctl *c)
{
    int rc = T2_OK;
    while (c->nexiting > 0) {
        int rc2 = end_now(c, &c->tt.t[c->exiting[c->nexiting - 1]]);
        if (!rc) rc = rc2;
    }
    return rc;
}

void t2__ctl_exits_free(t2__ctl *c)
{
    for (size_t k = 0; k < c->nexiting; k++) {
        t2__ctl_trial *t = &c->tt.t[c->exiting[k]];
        if (t->pid > 0) {
            kill(t->pid, SIGKILL);
            t2__reap_group(t->pid, NULL, 0);
        }
        t2__ctl_mpirun_gone(t);
    }
    free(c->exiting);
    c->exiting = NULL;
    c->nexiting = c->capexiting = 0;
}
