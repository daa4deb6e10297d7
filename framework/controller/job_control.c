/* job_control.c — Ctrl-Z for an experiment whose trials are process groups of their own.
 *
 * Every trial's process, worker and mpirun leads its own process group (trial_proc.c, trial_mpi.c),
 * so the terminal's signals reach the controller alone: its Ctrl-C pauses the experiment with
 * checkpoints instead of killing mpirun's job. Its Ctrl-Z (SIGTSTP) then also stopped the
 * controller alone, while the trials went on computing. The controller passes it on as a shell
 * does for a job: each group gets SIGSTOP, the controller stops itself, and when it is continued
 * (fg, bg, SIGCONT) each group gets SIGCONT. mpirun gets SIGTSTP instead: Open MPI puts every rank
 * in a group of its own, and mpirun passes SIGTSTP on to all of them, on every host, as SIGSTOP
 * (and SIGCONT as itself). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include "ctl.h"
#include "internal.h"

volatile sig_atomic_t t2__ctl_suspend_asked;

static void on_suspend(int sig)
{
    (void)sig;
    t2__ctl_suspend_asked = 1;
}

void t2__ctl_catch_suspend(struct sigaction *old)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_suspend;
    sigemptyset(&sa.sa_mask);
    t2__ctl_suspend_asked = 0;
    sigaction(SIGTSTP, &sa, old);
}

/* sig to pid's group, or to pid alone where it leads none (a child that died before setpgid). */
static void signal_group(pid_t pid, int sig)
{
    if (pid > 0 && kill(-pid, sig) != 0) kill(pid, sig);
}

static void signal_runners(const t2__ctl *c, int sig)
{
    int runner_sig = sig == SIGSTOP && t2__ctl_via_mpi(c) ? SIGTSTP : sig;
    for (size_t k = 0; k < c->tt.nrun; k++) signal_group(c->tt.t[c->tt.run[k]].pid, runner_sig);
    for (int i = 0; i < c->nworkers; i++) signal_group(c->workers[i].pid, sig);
}

void t2__ctl_suspend_if_asked(t2__ctl *c)
{
    if (!t2__ctl_suspend_asked) return;
    t2__ctl_suspend_asked = 0;
    signal_runners(c, SIGSTOP);
    double t0 = t2__now();
    t2__stop_self(); /* every thread, the store's writer too, until continued */
    signal_runners(c, SIGCONT);
    /* The time stopped is no trial's: the graces counted from a trial's leaving or its channel's
     * end (event_loop.c, exit_wait.c) start again where they were (a Ctrl-Z and fg just after a
     * trial left ended its healthy mpirun). */
    double stopped = t2__now() - t0;
    for (size_t k = 0; k < c->tt.nrun; k++) {
        t2__ctl_trial *t = &c->tt.t[c->tt.run[k]];
        if (t->left_at > 0) t->left_at += stopped;
        if (t->exit_since > 0) t->exit_since += stopped;
    }
}
