/* proc_group.c — ending what a rank's trial started that would outlive it. The controller's own
 * children (a trial's process, a worker, mpirun) lead process groups that it ends when it reaps
 * them (t2__reap_group), but a rank is mpirun's: Open MPI makes each rank the leader of a group
 * of its own, and a helper the trial forked (a data server, a `system("... &")`) stays in it and
 * ran on after the rank had returned or crashed (mpirun's teardown ends the groups of the ranks
 * it kills, not of one that died). So each rank has a guardian: a process of its group that is not
 * its child (the trial's own `wait(NULL)` must never wait for it), watches the rank, and kills
 * the group, itself included, once the rank has ended however it ended. While the guardian is
 * in the group, the group's id (the rank's pid) cannot be taken by another process. */
#define _GNU_SOURCE /* syscall */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"

/* Rewrites this process's command line (argv's strings, which the kernel laid out one after the
 * other) to name, so that `ps` and `pgrep -f run-trial` tell the guardian from the rank. */
static void rename_process(int argc, char **argv, const char *name)
{
    if (argc < 1 || !argv || !argv[0]) return;
    char *lo = argv[0], *hi = argv[0] + strlen(argv[0]) + 1;
    for (int i = 1; i < argc; i++) {
        if (!argv[i]) return;
        char *end = argv[i] + strlen(argv[i]) + 1;
        if (argv[i] < lo) lo = argv[i];
        if (end > hi) hi = end;
    }
    size_t len = (size_t)(hi - lo), n = strlen(name) + 1;
    if (n > len) return;
    memset(lo, 0, len);
    memcpy(lo, name, n);
}

/* Whether process pid has ended: pidfd (the kernel says when), else a look every 50 ms. */
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

static void guard(pid_t rank, int argc, char **argv)
{
    rename_process(argc, argv, "t2exp rank-guardian");
    /* No descriptor of the rank's: a pipe of Open MPI's daemon kept open would hold the rank's
     * output open after it. */
    long maxfd = sysconf(_SC_OPEN_MAX);
    for (long fd = 0; fd < (maxfd > 0 && maxfd < 65536 ? maxfd : 65536); fd++) close((int)fd);
    if (open("/dev/null", O_RDWR) == 0) {
        dup2(0, 1);
        dup2(0, 2);
    }
    /* What stops a rank (mpirun's SIGTERM to its group, a terminal's) is not for the guardian,
     * which ends with the group once the rank has. */
    static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE};
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++) signal(ignored[i], SIG_IGN);
    wait_for_end(rank);
    kill(0, SIGKILL);
    _exit(0);
}

int t2__guard_group(int argc, char **argv)
{
    pid_t rank = getpid();
    if (getpgrp() != rank) return 0; /* a group shared with others (a launcher's): not ours to end */
    pid_t mid = fork();
    if (mid < 0) return 0;
    if (mid == 0) { /* the guardian's parent, gone at once: the guardian is not the rank's child */
        if (fork() == 0) guard(rank, argc, argv);
        _exit(0);
    }
    while (waitpid(mid, NULL, 0) < 0 && errno == EINTR) {
    }
    return 1;
}
