/* trial_proc.c — fork-per-trial: the child inherits the loaded trial object and libraries, so a
 * trial starts without exec or dynamic linking (ASHA and random search start many short trials). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "parallel.h"
#include "trial_proc.h"

int t2__trial_proc_start(const t2__runner_args *args, const char *log_path, const int *close_fds, int nclose,
                         pid_t *pid, int *fd)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return t2_seterr(T2_EIO, "trial %lld: socketpair: %s", (long long)args->trial_id, strerror(errno));
    /* 0600: a trial's output is the user's alone (the umask may take more, never add). */
    int log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        return t2_seterr(T2_EIO, "trial %lld: cannot open log %s: %s", (long long)args->trial_id, log_path, strerror(e));
    }
    fflush(NULL); /* the child must not flush the parent's buffered output a second time */
    pid_t p = fork();
    if (p < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        close(log);
        return t2_seterr(T2_EIO, "trial %lld: fork: %s", (long long)args->trial_id, strerror(e));
    }
    if (p == 0) {
        /* The child: Ctrl-C is the controller's to handle (it stops trials with SIGTERM). */
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        for (int i = 0; i < nclose; i++)
            if (close_fds[i] >= 0) close(close_fds[i]);
        close(sv[0]);
        if (dup2(log, STDOUT_FILENO) < 0 || dup2(log, STDERR_FILENO) < 0) _exit(3);
        close(log);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) {
            dup2(nul, STDIN_FILENO);
            close(nul);
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        /* environment.environment_variables: in this trial's process only, not the controller's. */
        for (size_t i = 0; args->cfg && i < args->cfg->environment.nvars; i++) {
            char *v = args->cfg->environment.vars[i], *eq = strchr(v, '='); /* the loader checked the '=' */
            *eq = '\0'; /* this process's own copy of the config */
            int bad = setenv(v, eq + 1, 1);
            *eq = '=';
            if (bad) _exit(3);
        }
        t2__pool_reset_after_fork();
        t2__runner_args a = *args;
        a.fd = sv[1];
        int status = t2__runner_run(&a);
        fflush(stdout);
        fflush(stderr);
        _exit(status); /* no atexit handlers: they belong to the controller (store, pool) */
    }
    close(sv[1]);
    close(log);
    *pid = p;
    *fd = sv[0];
    return T2_OK;
}

const char *t2__wait_status_str(int status, char *buf, size_t len)
{
    if (WIFEXITED(status)) snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else snprintf(buf, len, "ended with wait status %d", status);
    return buf;
}
