/* trial_follow.c — `t2exp logs TRIAL --follow`: a trial's output as it is written, until the trial
 * has ended (Determined's `det trial logs -f`).
 *
 * The output is the stream trial_log.c reads: the trial's runs' segments in run order, each in a
 * worker's log or the trial's own. A segment's bytes never change once written and a new run only
 * adds a segment after the others, so an offset into the stream stays valid as it grows: each round
 * reopens the segments (a restart adds one; a worker's next trial closes the open one) and prints
 * from where the last round stopped. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <time.h>
#include "framework/cli/lifecycle.h"
#include "t2exp/error.h"

static void nap(long ms) { nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL); }

/* Prints the stream past *at; a trial without a log yet has nothing to print. */
static int drain(t2__store *st, int64_t trial_id, int64_t *at, FILE *out)
{
    static char buf[65536];
    t2__trial_log l;
    int rc = t2__trial_log_open(st, trial_id, &l);
    if (rc) return rc;
    size_t got;
    while (!(rc = t2__trial_log_read(&l, *at, buf, sizeof buf, &got, NULL)) && got > 0) {
        if (fwrite(buf, 1, got, out) != got) {
            rc = t2_seterr(T2_EIO, "logs: write error");
            break;
        }
        *at += (int64_t)got;
    }
    t2__trial_log_free(&l);
    if (!rc && fflush(out) != 0) rc = t2_seterr(T2_EIO, "logs: write error");
    return rc;
}

/* The trial has no more output to come: it ended for good, or nobody runs its experiment (a pause,
 * a crash: a resume is a new run, to be followed anew). A QUEUED trial of a live controller is
 * waiting for a slot or a restart, and is followed on. */
static int ended(int state, int live)
{
    return !live || state == T2__TRIAL_COMPLETED || state == T2__TRIAL_ERRORED || state == T2__TRIAL_CANCELED;
}

int t2__follow_resolve(t2__store *st, const char *ref, int64_t *trial_id)
{
    char *end;
    long long exp = strtoll(ref, &end, 10);
    for (;;) {
        int rc = t2__store_resolve_trial(st, ref, trial_id);
        if (rc != T2_ENOTFOUND || *end != '.' || end == ref) return rc;
        /* EXP.N of a live run: its row may be in the controller's next commit (a search that makes
         * its trials as it goes, a `create --detach` a moment ago). */
        long pid;
        if (t2__store_controller(st, exp, &pid) != 1) return rc;
        nap(200);
    }
}

int t2__follow_trial(t2__store *st, int64_t trial_id, FILE *out, int *state)
{
    int64_t at = 0;
    for (;;) {
        /* The state first, then the output: whatever was written before the end is shown. */
        t2__trial_row row;
        int rc = t2__store_get_trial(st, trial_id, &row);
        if (rc) return rc;
        long pid;
        int live = t2__store_controller(st, row.experiment_id, &pid);
        *state = row.state;
        t2__trial_row_free(&row);
        if (live < 0) return live;
        if ((rc = drain(st, trial_id, &at, out))) return rc;
        if (ended(*state, live)) return T2_OK;
        nap(200);
    }
}
