/* prepare_data.c — the trial's prepare_data, once per experiment, in a process of its own.
 *
 * Why: it ran inside the controller, the one user callback that did. A crash in it took `t2exp
 * create` down with no word (exit 139) and an `exit()` in a library it called ended create with
 * exit 0; either way the experiment stayed ACTIVE with no reason, and a resume then ran its trials
 * without prepare_data ever having succeeded (probe_H H4). Now a child runs it and says how it
 * went through a pipe; the controller waits for it to exit (nothing else runs yet), and a stop asked
 * meanwhile (Ctrl-C, SIGTERM, `t2exp kill`) ends it and what it started. */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ctl.h"
#include "internal.h"
#include "runner/ctx.h"
#include "trial_proc.h"

/* The child: runs prepare_data and writes "<code> <message>" to fd before it exits. */
static void child(t2__ctl *c, uint64_t seed, int fd)
{
    /* The controller's handlers only set its flags: the child ends on a stop as a process does,
     * and on a crash too (a sanitizer's handler would make a crash exit 1, read as an exit()). */
    static const int defaults[] = {SIGINT, SIGTERM, SIGTSTP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) signal(defaults[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    t2_ctx pctx;
    /* prepare_data sees the data section only; hparams belong to trials. */
    t2__ctx_init(&pctx, c->cfg, NULL, 0, 0, 0, seed, t2__ctl_cores());
    int rc = c->so.def->prepare_data(&pctx);
    char msg[1100];
    int n = snprintf(msg, sizeof msg, "%d %s", rc, rc ? t2_errmsg() : "");
    if (n > (int)sizeof msg - 1) n = (int)sizeof msg - 1;
    ssize_t w = write(fd, msg, (size_t)n);
    (void)w;
    fflush(stdout);
    fflush(stderr);
    _exit(0); /* no atexit handlers: they belong to the controller (store) */
}

/* Reads what is in fd without waiting; 1 at its end (every writer closed it). */
static int drain(int fd, char *buf, size_t cap, size_t *len)
{
    for (;;) {
        ssize_t r = read(fd, buf + *len, cap - 1 - *len);
        if (r > 0 && (*len += (size_t)r) < cap - 1) continue;
        if (r < 0 && errno == EINTR) continue;
        return r == 0 || *len >= cap - 1;
    }
}

int t2__ctl_prepare_data(t2__ctl *c, uint64_t seed, int *interrupted)
{
    *interrupted = 0;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return t2_seterr(T2_EIO, "prepare_data: pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return t2_seterr(T2_EIO, "prepare_data: fork: %s", strerror(e));
    }
    if (pid == 0) {
        close(p[0]);
        /* A group of its own, as a trial's: what it starts and leaves running is ended with it. It
         * dies with the controller (a resume would otherwise run a second one beside it). */
        if (setpgid(0, 0) != 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(3);
        child(c, seed, p[1]);
    }
    setpgid(pid, pid);
    close(p[1]);
    int fl = fcntl(p[0], F_GETFL);
    if (fl >= 0) fcntl(p[0], F_SETFL, fl | O_NONBLOCK);
    /* Its end is the process's exit, not the pipe's: a helper it forked (without exec) holds the
     * pipe for as long as it lives, and the controller waited for that helper, Ctrl-C and kill
     * included. A stop asks it with SIGTERM, and a second stop, or 10 s, ends it. */
    char buf[1200];
    size_t len = 0;
    int status = 0, at_end = 0, stage = 0, asked = 0;
    double termed = 0;
    for (;;) {
        if (!at_end) at_end = drain(p[0], buf, sizeof buf, &len);
        pid_t w = t2__reap_group(pid, &status, WNOHANG); /* ends what is left of its group too */
        if (w == pid || (w < 0 && errno != EINTR)) break;
        if (t2__ctl_suspend_asked) {
            /* Ctrl-Z, as job_control.c passes it on to trials: its group stops with the controller. */
            t2__ctl_suspend_asked = 0;
            kill(-pid, SIGSTOP);
            t2__stop_self();
            kill(-pid, SIGCONT);
        }
        double now = t2__now();
        if (t2__ctl_interrupted && stage == 0) {
            kill(-pid, SIGTERM);
            stage = 1;
            termed = now;
            asked = t2__ctl_stops_asked;
        } else if (stage == 1 && (now - termed > 10.0 || t2__ctl_stops_asked != asked)) {
            kill(-pid, SIGKILL);
            stage = 2;
        }
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        if (at_end) nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
        else poll(&pf, 1, 100); /* data, or a signal (a stop, the child's exit), wakes it */
    }
    if (!at_end) drain(p[0], buf, sizeof buf, &len);
    close(p[0]);
    buf[len] = '\0';
    if (stage > 0) {
        *interrupted = 1;
        return t2_seterr(T2_ESTATE, "prepare_data was stopped before it returned");
    }
    int code = 0, off = 0;
    if (len > 0 && sscanf(buf, "%d %n", &code, &off) >= 1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return code ? t2_seterr(code, "%s", buf + off) : T2_OK;
    char st[96];
    t2__wait_status_str(status, st, sizeof st);
    return t2_seterr(T2_EIO, "its process %s before prepare_data returned%s", st,
                     WIFEXITED(status) ? " (an exit() in it or in a library it called?)" : "");
}

int t2__ctl_prepare_experiment(t2__ctl *c, uint64_t seed)
{
    if (!c->so.def->prepare_data) return T2_OK;
    int interrupted = 0;
    if (!t2__ctl_prepare_data(c, seed, &interrupted)) return T2_OK;
    char why[1200];
    long long id = (long long)c->exp_id;
    if (interrupted && t2__ctl_interrupted == SIGUSR2) {
        /* `t2exp kill EXP` ends an experiment CANCELED, whatever it was doing. */
        t2__fmt_fit(why, sizeof why, "killed during prepare_data");
        t2__store_set_experiment_error(c->st, c->exp_id, why);
        t2__store_set_experiment_state(c->st, c->exp_id, T2__EXP_CANCELED);
        t2__progress_line(c->o->out, "experiment %lld CANCELED: %s", id, why);
        return 1;
    }
    if (interrupted) {
        /* Nothing ran: a resume starts the search afresh, and runs prepare_data first. */
        t2__fmt_fit(why, sizeof why, "paused during prepare_data; t2exp%s resume %lld runs it again", t2__hint_home(), id);
        t2__store_set_experiment_error(c->st, c->exp_id, why);
        t2__store_set_experiment_state(c->st, c->exp_id, T2__EXP_PAUSED);
        t2__progress_line(c->o->out, "experiment %lld %s", id, why);
        return 1;
    }
    t2__fmt_fit(why, sizeof why, "prepare_data: %s", t2_errmsg());
    t2__store_set_experiment_error(c->st, c->exp_id, why);
    t2__store_set_experiment_state(c->st, c->exp_id, T2__EXP_ERRORED);
    t2__progress_line(c->o->out, "experiment %lld errored: %s", id, why);
    return 1;
}
