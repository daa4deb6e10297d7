/* test_runner_signals.c — a worker's signal handling (framework/runner/runner.c): installed once
 * for the worker's life, and put back before each trial when an earlier trial of the worker
 * replaced it (a library that ignores SIGTERM, or installs its own handler): the pause request of
 * every later trial depends on it. While a trial runs, SIGTERM is a request (the process lives);
 * between trials, it ends the worker (its default action, checked in a child). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "runner/runner.h"

static void other_handler(int sig) { (void)sig; }

/* The handler SIGTERM has now. */
static void (*handler(void))(int)
{
    struct sigaction cur;
    return sigaction(SIGTERM, NULL, &cur) == 0 ? cur.sa_handler : SIG_ERR;
}

int main(void)
{
    t2__runner_signals_install();
    void (*ours)(int) = handler();
    CHECK(ours != SIG_DFL && ours != SIG_IGN && ours != SIG_ERR);

    /* A trial ignores SIGTERM: the next trial has the runner's handler again, and a SIGTERM
     * during it is a request, which the process survives. */
    t2__runner_signals_trial(1);
    signal(SIGTERM, SIG_IGN);
    t2__runner_signals_trial(0);
    t2__runner_signals_trial(1);
    CHECK(handler() == ours);
    raise(SIGTERM);
    t2__runner_signals_trial(0);

    /* A trial installs its own handler: the same. */
    t2__runner_signals_trial(1);
    struct sigaction sa = {.sa_handler = other_handler};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    t2__runner_signals_trial(0);
    t2__runner_signals_trial(1);
    CHECK(handler() == ours);
    t2__runner_signals_trial(0);

    /* Between trials a SIGTERM ends the worker by its default action. */
    pid_t p = fork();
    if (p == 0) {
        raise(SIGTERM);
        _exit(0);
    }
    int status = 0;
    CHECK(p > 0 && waitpid(p, &status, 0) == p);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    return check_report("test_runner_signals");
}
