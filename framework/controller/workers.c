/* workers.c — the controller's side of resources.isolation: worker. Each local slot gets a
 * long-lived process, forked once, and every trial after is one assign message to an idle worker
 * (protocol.h): a trial starts without a fork, whose page-table copy and copy-on-write faults
 * were the first cost of a short trial. A worker that dies is replaced at the next start.
 *
 * The trials of a worker write to its log (experiments/ID/worker-N.log), and each start records
 * the log's size as the start of that trial's output (store_logs.c): a file per trial cost a
 * file creation per trial, half of a short trial's time. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
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

static void reap(t2__ctl *c, t2__ctl_worker *w)
{
    t2__ctl_channel_closed(c, w->fd);
    if (w->fd >= 0) close(w->fd);
    if (w->pid > 0) t2__reap_group(w->pid, NULL, 0); /* with what its trials left running */
    forget(w);
}

/* Entry w's log, opened once for the entry's life. The name is the entry's index, so a resume's
 * workers append to the files of the run before: a segment is an offset, never a whole file. */
static int open_log(t2__ctl *c, t2__ctl_worker *w)
{
    if (w->log_fd >= 0) return T2_OK;
    char dir[PATH_MAX - 64], path[PATH_MAX];
    int rc = t2__store_experiment_dir(t2__store_home_of(c->st), c->exp_id, NULL, dir, sizeof dir);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/worker-%d.log", dir, (int)(w - c->workers));
    if (!(w->log_path = strdup(path))) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    /* 0600: a trial's output is the user's alone (the umask may take more, never add). */
    if ((w->log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) < 0) {
        rc = t2_seterr(T2_EIO, "worker %d: cannot open its log %s: %s", (int)(w - c->workers), path, strerror(errno));
        free(w->log_path);
        w->log_path = NULL;
    } else if (t2__log_runs_begin(path, w->log_fd) != 0) {
        /* Not fatal: `t2exp logs` then has the store's segments (and may end one late). */
        fprintf(stderr, "t2exp: worker %d: cannot check the run record beside %s: %s\n", (int)(w - c->workers), path,
                strerror(errno));
    }
    return rc;
}

/* A new worker in entry w (it closes the controller's other channels: t2__ctl_child_close_fds). */
static int spawn(t2__ctl *c, t2__ctl_worker *w, const t2__runner_args *a)
{
    int *fds, n;
    int rc = open_log(c, w);
    if (rc || (rc = t2__ctl_child_close_fds(c, &fds, &n))) return rc;
    t2__runner_args base = *a;
    base.fd = -1;
    char runs[PATH_MAX];
    snprintf(runs, sizeof runs, "%s%s", w->log_path, T2__LOG_RUNS_SUFFIX); /* read in the child */
    base.worker_runs = runs;
    /* The new process's facts: exits_seen before the fork (an end right after it is counted), no
     * log_end said yet (its first trial asks the file). Only a spawned entry is ever given a trial. */
    w->exits_seen = t2__ctl_child_exits;
    w->log_end = -1;
    rc = t2__worker_proc_start(&base, w->log_fd, fds, n, &w->pid, &w->fd);
    free(fds);
    return rc;
}

/* Queued: it goes out with the trial's first train in one write (t2__ctl_send). */
static int assign(t2__ctl *c, const t2__ctl_trial *t, const t2__ctl_worker *w, const t2__runner_args *a)
{
    t2__msg m = {.kind = T2__MSG_ASSIGN,
                 .u.assign = {.trial_id = t->id, .seed = t->seed, .threads = a->threads, .parts = a->parts,
                              .hparams = t->hparams, .hparams_json = t->hparams_json,
                              .restore_path = a->restore_path,
                              .warm_start = a->warm_start}};
    return t2__ctl_send(c, w->fd, &m);
}

/* Whether w's process is still there. The assign is only queued, so a worker that died while
 * idle (killed, OOM) must be found now, to give the trial a fresh one rather than a dead one.
 * While the controller counts its children's ends and none ended since w was last seen alive,
 * w is (a waitpid per trial cost the serial thread a system call); else waitpid asks. */
static int alive(t2__ctl_worker *w)
{
    if (w->pid <= 0) return 0;
    int exits = t2__ctl_child_exits; /* read first: an end during the waitpid is counted after it */
    if (t2__ctl_child_exits_counted && exits == w->exits_seen) return 1;
    if (t2__reap_group(w->pid, NULL, WNOHANG) == 0) {
        w->exits_seen = exits;
        return 1;
    }
    w->pid = 0; /* reaped (or not ours to wait for): the caller closes its channel */
    return 0;
}

/* Where t's output will start in w's log: the log's size before the assign goes out (after it,
 * the worker may already be writing). Between trials a worker writes nothing (run_one flushes
 * before its finished), so nothing of the trial before lands past it, and the size its finished
 * said is the size now: taken once, it saves the serial thread an fstat a trial. */
static int log_size(const t2__ctl *c, const t2__ctl_trial *t, t2__ctl_worker *w, int64_t *size)
{
    if (w->log_end >= 0) {
        *size = w->log_end;
        w->log_end = -1;
        return T2_OK;
    }
    struct stat sb;
    if (fstat(w->log_fd, &sb) != 0)
        return t2_seterr(T2_EIO, "trial " T2__TRIAL_FMT ": cannot read the size of its log %s: %s", T2__TRIAL_ARGS(c, t),
                         w->log_path, strerror(errno));
    *size = (int64_t)sb.st_size;
    return T2_OK;
}

static int table(t2__ctl *c)
{
    if (c->workers) return T2_OK;
    int n = c->capacity > 0 ? c->capacity : 1;
    if (!(c->workers = calloc((size_t)n, sizeof *c->workers))) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    for (int i = 0; i < n; i++) c->workers[i].fd = c->workers[i].log_fd = -1;
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
        *w = (t2__ctl_worker){.pid = 0, .fd = -1, .busy = 0, .log_fd = -1};
    }
    int64_t start = 0;
    if (!alive(w)) { /* an idle worker that died (or none yet): a fresh one gets the trial */
        reap(c, w);
        if ((rc = spawn(c, w, a))) return rc;
    }
    if ((rc = log_size(c, t, w, &start)) || (rc = assign(c, t, w, a))) return rc;
    w->busy = 1;
    t->pid = w->pid;
    t->fd = w->fd;
    return t2__store_add_log_segment(c->st, t->id, w->log_path, start);
}

static t2__ctl_worker *of(const t2__ctl *c, const t2__ctl_trial *t)
{
    for (int i = 0; t->fd >= 0 && i < c->nworkers; i++)
        if (c->workers[i].busy && c->workers[i].fd == t->fd) return &c->workers[i];
    return NULL;
}

int t2__ctl_on_worker(const t2__ctl *c, const t2__ctl_trial *t) { return of(c, t) != NULL; }

const char *t2__ctl_output_path(const t2__ctl *c, const t2__ctl_trial *t)
{
    const t2__ctl_worker *w = of(c, t);
    return w ? w->log_path : t->log_path;
}

void t2__ctl_worker_log_end(t2__ctl *c, const t2__ctl_trial *t, int64_t log_end)
{
    t2__ctl_worker *w = of(c, t);
    if (w) w->log_end = log_end;
}

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
    for (int i = 0; i < c->nworkers; i++) {
        reap(c, &c->workers[i]);
        if (c->workers[i].log_fd >= 0) close(c->workers[i].log_fd);
        free(c->workers[i].log_path);
    }
    free(c->workers);
    c->workers = NULL;
    c->nworkers = 0;
}
