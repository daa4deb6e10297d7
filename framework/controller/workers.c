/* workers.c — the controller's side of resources.isolation: worker. Each local slot gets a
 * long-lived process, forked once, and every trial after is one assign message to an idle worker
 * (protocol.h): a trial starts without a fork, whose page-table copy and copy-on-write faults
 * were the first cost of a short trial. A worker that dies is replaced at the next start. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ctl.h"
#include "runner/channel.h"
#include "trial_proc.h"
#include "internal.h"

/* The entry is free: no process, no channel (closed and reaped by whoever held them). */
static void forget(t2__ctl_worker *w)
{
    w->pid = 0;
    w->fd = -1;
    w->busy = 0;
}

static void reap(t2__ctl_worker *w)
{
    if (w->fd >= 0) close(w->fd);
    while (w->pid > 0 && waitpid(w->pid, NULL, 0) < 0 && errno == EINTR) {
    }
    forget(w);
}

/* A new worker in entry w (it closes the controller's other channels: t2__ctl_child_close_fds). */
static int spawn(t2__ctl *c, t2__ctl_worker *w, const t2__runner_args *a)
{
    int *fds, n;
    int rc = t2__ctl_child_close_fds(c, &fds, &n);
    if (rc) return rc;
    t2__runner_args base = *a;
    base.fd = -1;
    rc = t2__worker_proc_start(&base, fds, n, &w->pid, &w->fd);
    free(fds);
    return rc;
}

static int assign(const t2__ctl_trial *t, const t2__ctl_worker *w, const t2__runner_args *a)
{
    t2__msg m = {.kind = T2__MSG_ASSIGN,
                 .u.assign = {.trial_id = t->id, .seed = t->seed, .threads = a->threads, .parts = a->parts,
                              .hparams = t->hparams,
                              .log_path = t->log_path, .restore_path = a->restore_path,
                              .warm_start = a->warm_start}};
    return t2__msg_send(w->fd, &m);
}

static int table(t2__ctl *c)
{
    if (c->workers) return T2_OK;
    int n = c->capacity > 0 ? c->capacity : 1;
    if (!(c->workers = calloc((size_t)n, sizeof *c->workers))) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    for (int i = 0; i < n; i++) c->workers[i].fd = -1;
    c->nworkers = n;
    return T2_OK;
}

int t2__ctl_workers_prespawn(t2__ctl *c, int n)
{
    if (!t2__ctl_uses_workers(c) || n <= 0) return T2_OK;
    int rc = table(c);
    if (rc) return rc;
    /* What a worker keeps of its args: the experiment's; each assign brings the trial's own. */
    t2__runner_args a = {.cfg = c->cfg, .def = c->so.def, .threads = c->threads, .parts = c->parts, .fd = -1,
                         .experiment_id = c->exp_id, .ckpt_dir = c->ckpt_dir};
    for (int i = 0; i < c->nworkers && i < n; i++) {
        if (c->workers[i].pid > 0) continue;
        if ((rc = spawn(c, &c->workers[i], &a))) {
            /* Not fatal: the first trial that needs this slot forks its worker then (and says why
             * it cannot, if it still cannot). */
            t2_clearerr();
            forget(&c->workers[i]);
            return T2_OK;
        }
    }
    return T2_OK;
}

int t2__ctl_worker_start(t2__ctl *c, t2__ctl_trial *t, const t2__runner_args *a)
{
    int rc = table(c);
    if (rc) return rc;
    t2__ctl_worker *w = NULL;
    for (int i = 0; i < c->nworkers && !w; i++)
        if (c->workers[i].pid > 0 && !c->workers[i].busy) w = &c->workers[i];
    for (int i = 0; i < c->nworkers && !w; i++)
        if (c->workers[i].pid <= 0) w = &c->workers[i];
    if (!w) { /* more trials at once than planned: one more worker rather than a failed experiment */
        t2__ctl_worker *g = realloc(c->workers, ((size_t)c->nworkers + 1) * sizeof *g);
        if (!g) return t2_seterr(T2_ENOMEM, "controller: out of memory");
        c->workers = g;
        w = &c->workers[c->nworkers++];
        *w = (t2__ctl_worker){.pid = 0, .fd = -1, .busy = 0};
    }
    rc = w->pid > 0 ? assign(t, w, a) : T2_EIO;
    if (rc == T2_ENOMEM) return rc;
    if (rc) {
        /* An idle worker that died (or none yet): a fresh one gets the trial. */
        t2_clearerr();
        reap(w);
        if ((rc = spawn(c, w, a))) return rc;
        if ((rc = assign(t, w, a))) {
            reap(w);
            return rc;
        }
    }
    w->busy = 1;
    t->pid = w->pid;
    t->fd = w->fd;
    return T2_OK;
}

static t2__ctl_worker *of(const t2__ctl *c, const t2__ctl_trial *t)
{
    for (int i = 0; t->fd >= 0 && i < c->nworkers; i++)
        if (c->workers[i].busy && c->workers[i].fd == t->fd) return &c->workers[i];
    return NULL;
}

int t2__ctl_on_worker(const t2__ctl *c, const t2__ctl_trial *t) { return of(c, t) != NULL; }

void t2__ctl_worker_idle(t2__ctl *c, t2__ctl_trial *t)
{
    t2__ctl_worker *w = of(c, t);
    if (w) w->busy = 0;
    t->pid = 0;
    t->fd = -1;
}

void t2__ctl_worker_gone(t2__ctl *c, const t2__ctl_trial *t)
{
    t2__ctl_worker *w = of(c, t);
    if (w) forget(w); /* the caller closed the channel and reaped the process */
}

void t2__ctl_workers_end(t2__ctl *c)
{
    for (int i = 0; i < c->nworkers; i++) {
        t2__ctl_worker *w = &c->workers[i];
        if (w->pid > 0 && w->busy) kill(w->pid, SIGKILL);
        if (w->fd >= 0) close(w->fd);
        w->fd = -1;
    }
    for (int i = 0; i < c->nworkers; i++) reap(&c->workers[i]);
    free(c->workers);
    c->workers = NULL;
    c->nworkers = 0;
}
