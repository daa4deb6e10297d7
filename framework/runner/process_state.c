/* process_state.c — the process state a worker puts back before each trial it runs.
 *
 * Why: under resources.isolation: worker, trials share a process one after another, and some of
 * what one trial changes in it took later trials down with it (probe_L): a SIGTERM it blocked
 * made every later trial on that worker deaf to pause (each was killed at the end of the 60 s
 * grace, its progress lost), an alarm() it set killed the next trial (SIGALRM), a lowered
 * RLIMIT_NOFILE failed the next trials' checkpoints. The signal mask, the real-time interval
 * timer, the umask, the open-files limit and the SIGCHLD and SIGPIPE dispositions are taken as
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
    struct sigaction chld, pipe;
} base;

void t2__process_state_reset(void)
{
    if (!base.saved) {
        sigprocmask(SIG_SETMASK, NULL, &base.mask);
        base.umask = umask(022);
        umask(base.umask);
        base.have_nofile = getrlimit(RLIMIT_NOFILE, &base.nofile) == 0;
        sigaction(SIGCHLD, NULL, &base.chld);
        sigaction(SIGPIPE, NULL, &base.pipe);
        base.saved = 1;
        return;
    }
    /* A SIGTERM or SIGUSR1 an earlier trial blocked and left pending was for it: taken here, not
     * delivered to the next trial (a pause it never asked for) or to the worker (review 2). */
    sigset_t pending, stale;
    int nstale = 0;
    sigemptyset(&stale);
    if (sigpending(&pending) == 0) {
        if (sigismember(&pending, SIGTERM) && !sigismember(&base.mask, SIGTERM)) sigaddset(&stale, SIGTERM), nstale++;
        if (sigismember(&pending, SIGUSR1) && !sigismember(&base.mask, SIGUSR1)) sigaddset(&stale, SIGUSR1), nstale++;
    }
    const struct timespec at_once = {0, 0};
    while (nstale-- > 0 && sigtimedwait(&stale, NULL, &at_once) > 0) {
    }
    sigprocmask(SIG_SETMASK, &base.mask, NULL);
    struct itimerval off;
    memset(&off, 0, sizeof off);
    setitimer(ITIMER_REAL, &off, NULL);
    umask(base.umask);
    struct rlimit now;
    /* Raised back only where it was lowered (the soft limit, under the hard one it may still have). */
    if (base.have_nofile && getrlimit(RLIMIT_NOFILE, &now) == 0 && now.rlim_cur < base.nofile.rlim_cur) {
        struct rlimit want = base.nofile;
        if (want.rlim_max > now.rlim_max) want.rlim_max = now.rlim_max;
        if (want.rlim_cur > want.rlim_max) want.rlim_cur = want.rlim_max;
        setrlimit(RLIMIT_NOFILE, &want);
    }
    sigaction(SIGCHLD, &base.chld, NULL);
    sigaction(SIGPIPE, &base.pipe, NULL);
}
