/* proc_group.c — guardians: processes that end what trials started once the process that should
 * have ended it cannot.
 *
 * The controller's own children (a trial's process, a worker, mpirun) lead process groups that it
 * ends when it reaps them (t2__reap_group). Two cases escape that:
 * - A rank is mpirun's: Open MPI makes each rank the leader of a group of its own, and a helper the
 *   trial forked (a data server, a `system("... &")`) stays in it and ran on after the rank had
 *   returned or crashed (mpirun's teardown ends the groups of the ranks it kills, not of one that
 *   died). The rank guardian (t2__guard_group) watches one rank and kills its group.
 * - A controller killed outright (SIGKILL, the OOM killer) reaps nothing: its trials' processes die
 *   by PR_SET_PDEATHSIG, what they started did not. The trial guardian (t2__trial_guard_start)
 *   holds the ids of the controller's live trial groups, which the controller tells it over a
 *   pipe, and kills them when the pipe ends.
 * A guardian is never its watched process's child (a trial's `wait(NULL)`, a controller's reaping
 * must not see it), is renamed in `ps`, holds no descriptor of the process it watches but its own,
 * and ignores the signals that stop trials. */
#define _GNU_SOURCE /* syscall, program_invocation_name */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"

/* Rewrites this process's command line (the block of argv strings the kernel laid out, which
 * program_invocation_name starts and /proc/self/cmdline measures) to name, so that `ps` and
 * `pgrep -f run-trial` tell a guardian from the process it was forked from. */
static void rename_process(const char *name)
{
    char buf[4096];
    int fd = open("/proc/self/cmdline", O_RDONLY);
    if (fd < 0) return;
    size_t len = 0;
    for (ssize_t r; (r = read(fd, buf, sizeof buf)) > 0;) len += (size_t)r;
    close(fd);
    size_t n = strlen(name) + 1;
    if (!program_invocation_name || n > len) return;
    memset(program_invocation_name, 0, len);
    memcpy(program_invocation_name, name, n);
}

/* In a fresh guardian: no descriptor but keep (-1: none) and /dev/null as 0 to 2, the signals that
 * stop trials ignored. */
static void guardian_setup(const char *name, int keep)
{
    rename_process(name);
    /* close_range: one call, where a loop to the descriptor limit made ~1M calls when the limit
     * is that high (containers, `ulimit -n unlimited`), and a loop capped below it left some. */
    int closed = (keep <= 0 || close_range(0, (unsigned)keep - 1, 0) == 0) &&
                 close_range((unsigned)keep + 1, ~0U, 0) == 0; /* keep -1: from 0 */
    if (!closed) { /* a kernel before 5.9 */
        long maxfd = sysconf(_SC_OPEN_MAX);
        for (long fd = 0; fd < (maxfd > 0 && maxfd < 65536 ? maxfd : 65536); fd++)
            if (fd != keep) close((int)fd);
    }
    if (open("/dev/null", O_RDWR) == 0) {
        dup2(0, 1);
        dup2(0, 2);
    }
    static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE, SIGTSTP};
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++) signal(ignored[i], SIG_IGN);
}

/* Forks a guardian that is not this process's child (the middle process exits at once); runs
 * body(arg) in it. 1 if it started. */
static int spawn_orphan(void (*body)(void *), void *arg)
{
    pid_t mid = fork();
    if (mid < 0) return 0;
    if (mid == 0) {
        if (fork() == 0) body(arg);
        _exit(0);
    }
    while (waitpid(mid, NULL, 0) < 0 && errno == EINTR) {
    }
    return 1;
}

/* Waits until process pid has ended: a pidfd (the kernel says when), else a look every 50 ms. */
static void wait_for_end(pid_t pid)
{
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        while (poll(&p, 1, -1) < 0 && errno == EINTR) {
        }
        return;
    }
    if (errno == ESRCH) return;
#endif
    struct timespec tick = {0, 50 * 1000 * 1000};
    while (kill(pid, 0) == 0 || errno == EPERM) nanosleep(&tick, NULL);
}

/* The rank guardian, in the rank's group (so that the group's id, the rank's pid, stays taken
 * until it is done): waits for the rank's end, then kills the group, itself included. */
static void rank_guard(void *arg)
{
    pid_t rank = *(pid_t *)arg;
    guardian_setup("t2exp rank-guardian", -1);
    wait_for_end(rank);
    kill(0, SIGKILL);
    _exit(0);
}

int t2__guard_group(void)
{
    pid_t rank = getpid();
    if (getpgrp() != rank) return 0; /* a group shared with others (a launcher's): not ours to end */
    return spawn_orphan(rank_guard, &rank);
}

/* The trial guardian's side of the pipe: each record is a group id, positive when it starts and
 * negated when the controller has ended it. */
#define TRIAL_GROUPS_MAX 65536

typedef struct trial_guard {
    int rfd;
    int32_t *live; /* allocated before the fork */
} trial_guard;

static void trial_guard_main(void *arg)
{
    trial_guard *g = arg;
    guardian_setup("t2exp trial-guardian", g->rfd);
    setpgid(0, 0); /* not in the controller's group: a signal to that group is not for it */
    size_t n = 0;
    int32_t v[256];
    for (;;) {
        ssize_t r = read(g->rfd, v, sizeof v);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break; /* the controller is gone (or done: nothing is left then) */
        for (size_t i = 0; i < (size_t)r / sizeof v[0]; i++) {
            if (v[i] > 0 && n < TRIAL_GROUPS_MAX) g->live[n++] = v[i];
            for (size_t k = 0; v[i] < 0 && k < n; k++)
                if (g->live[k] == -v[i]) g->live[k--] = g->live[--n];
        }
    }
    for (size_t k = 0; k < n; k++) kill(-g->live[k], SIGKILL);
    _exit(0);
}

int t2__trial_guard_start(int *wfd)
{
    int p[2];
    *wfd = -1;
    if (pipe2(p, O_CLOEXEC) != 0) return 0;
    /* The controller never waits on it: a guardian that stopped reading (SIGSTOP) loses notes. */
    if (fcntl(p[1], F_SETFL, O_NONBLOCK) != 0) {
        close(p[0]);
        close(p[1]);
        return 0;
    }
    trial_guard g = {.rfd = p[0], .live = malloc(TRIAL_GROUPS_MAX * sizeof *g.live)};
    int started = g.live && spawn_orphan(trial_guard_main, &g);
    free(g.live);
    close(p[0]);
    if (!started) {
        close(p[1]);
        return 0;
    }
    *wfd = p[1];
    return 1;
}

void t2__stop_self(void)
{
    struct sigaction dfl = {0}, mine;
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGTSTP, &dfl, &mine);
    raise(SIGTSTP);
    sigaction(SIGTSTP, &mine, NULL);
}

void t2__trial_guard_note(int wfd, int group, int live)
{
    if (wfd < 0 || group <= 0) return;
    int32_t v = live ? (int32_t)group : -(int32_t)group;
    ssize_t w;
    while ((w = write(wfd, &v, sizeof v)) < 0 && errno == EINTR) {
    }
    (void)w; /* a guardian that is gone costs only the clean-up it would have done */
}
