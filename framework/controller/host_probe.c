/* host_probe.c — does a pool host still answer? Asked after a trial on it failed, so that a dead
 * host's slots leave the pool instead of failing every trial given to them. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "internal.h"
#include "slot_pool.h"
#include "trial_proc.h"

int t2__host_probe(const char *name, double timeout_s, char *why, size_t len)
{
    char host[T2__HOST_NAME_MAX + 8];
    snprintf(host, sizeof host, "%s:1", name);
    const char *argv[] = {"mpirun", "-np", "1", "--host", host, geteuid() == 0 ? "--allow-run-as-root" : "-q",
                          "true", NULL};
    pid_t p = fork();
    if (p < 0) return t2_seterr(T2_EIO, "controller: fork: %s", strerror(errno));
    if (p == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        setpgid(0, 0); /* so that a timeout ends mpirun and its launcher together */
        execvp("mpirun", (char *const *)argv);
        _exit(127);
    }
    int status = 0, ended = t2__wait_pid_for(p, timeout_s, &status);
    if (ended < 0) {
        snprintf(why, len, "cannot wait for the probe: %s", strerror(errno));
        return 0;
    }
    if (!ended) {
        kill(p, SIGKILL);
        t2__reap_group(p, &status, 0);
        snprintf(why, len, "no answer within %.0f s", timeout_s);
        return 0;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 1;
    char st[96];
    snprintf(why, len, "mpirun on it %s", t2__wait_status_str(status, st, sizeof st));
    return 0;
}
