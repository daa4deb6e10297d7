/* process_state.c — the process state a worker puts back before each trial it runs.
 *
 * Why: under resources.isolation: worker, trials share a process one after another, and some of
 * what one trial changes in it took later trials down with it (probe_L): a SIGTERM it blocked
 * made every later trial on that worker deaf to pause (each was killed at the end of the 60 s
 * grace, its progress lost), an alarm() it set killed the next trial (SIGALRM), a lowered
 * RLIMIT_NOFILE failed the next trials' checkpoints. The signal mask, the three interval timers
 * (a CPU-time one left running kills a later trial with SIGVTALRM or SIGPROF as surely as an alarm
 * does), the umask, the open-files limit and the dispositions of SIGCHLD, SIGPIPE and the timers'
 * signals (a handler may live in the trial's library) are taken as
 * the worker had them before its first trial and put back before each later one: a few system
 * calls a trial, in the worker, beside the trial's own work. What cannot be put back (globals,
 * leaked memory and descriptors, threads, the environment, the working directory) stays the
 * documented price (performance.md#isolation). */
#define _XOPEN_SOURCE 700
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include "runner.h"

static struct {
    int saved;
    sigset_t mask;
    mode_t umask;
    struct rlimit nofile;
    int have_nofile;
    struct sigaction disp[5];
} base;

/* The signals whose dispositions are put back: ones a trial's own code plausibly sets and the
 * worker depends on (SIGCHLD: its waits; SIGPIPE: its writes) or that the timers below send. */
static const int RESET_SIGNALS[5] = {SIGCHLD, SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF};

void t2__process_state_reset(void)
{
    if (!base.saved) {
        sigprocmask(SIG_SETMASK, NULL, &base.mask);
        base.umask = umask(022);
        umask(base.umask);
        base.have_nofile = getrlimit(RLIMIT_NOFILE, &base.nofile) == 0;
        for (int i = 0; i < 5; i++) sigaction(RESET_SIGNALS[i], NULL, &base.disp[i]);
        base.saved = 1;
        return;
    }
    /* The timers stop and their signals' dispositions come back before the mask opens: a timer
     * that fired while an earlier trial blocked its signal would otherwise be delivered, under
     * that trial's handler or the default action, the moment the mask opened (review). */
    struct itimerval off;
    memset(&off, 0, sizeof off);
    setitimer(ITIMER_REAL, &off, NULL);
    setitimer(ITIMER_VIRTUAL, &off, NULL);
    setitimer(ITIMER_PROF, &off, NULL);
    for (int i = 0; i < 5; i++) sigaction(RESET_SIGNALS[i], &base.disp[i], NULL);
    /* A signal an earlier trial blocked and left pending was for it: taken here, not delivered to
     * the next trial (SIGTERM or SIGUSR1: a pause it never asked for; a timer's: its death) or to
     * the worker (review 2). */
    static const int STALE[5] = {SIGTERM, SIGUSR1, SIGALRM, SIGVTALRM, SIGPROF};
    sigset_t pending, stale;
    int nstale = 0;
    sigemptyset(&stale);
    if (sigpending(&pending) == 0)
        for (int i = 0; i < 5; i++)
            if (sigismember(&pending, STALE[i]) && !sigismember(&base.mask, STALE[i])) sigaddset(&stale, STALE[i]), nstale++;
    const struct timespec at_once = {0, 0};
    while (nstale-- > 0 && sigtimedwait(&stale, NULL, &at_once) > 0) {
    }
    sigprocmask(SIG_SETMASK, &base.mask, NULL);
    umask(base.umask);
    struct rlimit now;
    /* Raised back only where it was lowered (the soft limit, under the hard one it may still have). */
    if (base.have_nofile && getrlimit(RLIMIT_NOFILE, &now) == 0 && now.rlim_cur < base.nofile.rlim_cur) {
        struct rlimit want = base.nofile;
        if (want.rlim_max > now.rlim_max) want.rlim_max = now.rlim_max;
        if (want.rlim_cur > want.rlim_max) want.rlim_cur = want.rlim_max;
        setrlimit(RLIMIT_NOFILE, &want);
    }
}
