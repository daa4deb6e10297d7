/* event_loop.c — the controller's event loop: start the trials the scheduler picks, send each its
 * next op, read their reports, reap the ones whose channel closed and decide their fate (restart,
 * pause, done, errored), and stop them all when the experiment is interrupted. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ctl.h"
#include "route.h"
#include "runner/channel.h"
#include "runner/runner.h"
#include "schedule.h"
#include "trial_proc.h"
#include "internal.h"

/* Starting a runner knows the trial by its store id only: its failure is prefixed with the
 * trial's EXP.N, as every controller line names a trial (ctl.h). Returns rc. */
static int name_trial_in_error(const t2__ctl *c, const t2__ctl_trial *t, int rc)
{
    char why[1200];
    t2__fmt_fit(why, sizeof why, "%s", t2_errmsg()); /* t2_seterr must not read the buffer it writes */
    return t2_seterr(rc, "trial " T2__TRIAL_FMT ": %s", T2__TRIAL_ARGS(c, t), why);
}

/* Appends name to the ", "-separated list (cap bytes); past cap, "..." ends it once. */
static void list_name(char *list, size_t cap, const char *name)
{
    size_t len = strlen(list);
    if (len >= 3 && !strcmp(list + len - 3, "...")) return;
    if (len + strlen(name) + 3 < cap) snprintf(list + len, cap - len, "%s%s", len ? ", " : "", name);
    else if (len + 6 < cap) snprintf(list + len, cap - len, ", ...");
}

/* A trial on slots_per_trial ranks through mpirun (on the hostfile's pool, if there is one): mpirun
 * is started and the trial is LAUNCHING; rank 0's call back is an event of the loop (launch.c). */
static int start_distributed(t2__ctl *c, t2__ctl_trial *t, const int *fds, int n)
{
    int rc;
    if (c->listen_fd < 0) {
        /* Ranks on other hosts need an address they can reach, and only they: the port listens on
         * that one interface (route.h), never on every interface. */
        int nh = c->pool.nhosts;
        const char **names = nh > 0 ? malloc((size_t)nh * sizeof *names) : NULL;
        if (nh > 0 && !names) return t2_seterr(T2_ENOMEM, "controller: out of memory");
        /* Their addresses as the pool was loaded: a name looked up here would hold the loop (10 s
         * a name with a resolver that does not answer). */
        for (int h = 0; h < nh; h++) names[h] = c->pool.hosts[h].ipv4[0] ? c->pool.hosts[h].ipv4 : NULL;
        char addr[64];
        rc = t2__controller_bind_address(c->cfg->resources.controller_address, names, nh, addr, sizeof addr);
        free(names);
        if (rc) return rc;
        int port;
        if ((rc = t2__listen_tcp(addr, &c->listen_fd, &port))) return rc;
        snprintf(c->connect_addr, sizeof c->connect_addr, "%s:%d", addr, port);
        t2__progress_event(&c->prog, "distributed trials call back to %s", c->connect_addr);
        /* Listening on loopback, two kinds of pool host cannot call back: one whose name did not
         * resolve when the pool was loaded (nothing said why; review), and one this machine reaches
         * over the network while a loopback address was given (controller_address,
         * T2EXP_CONTROLLER_ADDR): every launch there failed with a bare "mpirun exited", and only
         * the trial log said "Connection refused" (probe_N). */
        char unresolved[512] = "", remote[512] = "";
        for (int h = 0; h < nh && strncmp(addr, "127.", 4) == 0; h++) {
            if (!c->pool.hosts[h].ipv4[0]) list_name(unresolved, sizeof unresolved, c->pool.hosts[h].name);
            else if (t2__route_is_local(c->pool.hosts[h].ipv4) == 0)
                list_name(remote, sizeof remote, c->pool.hosts[h].name);
        }
        if (unresolved[0])
            t2__progress_event(&c->prog, "warning: %s did not resolve when the pool was loaded, so the controller "
                                         "listens on %s alone, which ranks there cannot reach: set "
                                         "resources.controller_address to this machine's address they reach",
                               unresolved, addr);
        if (remote[0])
            t2__progress_event(&c->prog, "warning: the controller listens on %s, a loopback address, which ranks on "
                                         "%s (other machines) cannot reach: their launches will fail; give "
                                         "resources.controller_address (or T2EXP_CONTROLLER_ADDR) an address of "
                                         "this machine they reach, or leave it out",
                               addr, remote);
        ssize_t k = readlink("/proc/self/exe", c->self_exe, sizeof c->self_exe - 1);
        if (k <= 0) return t2_seterr(T2_EIO, "controller: cannot find its own program: %s", strerror(errno));
        c->self_exe[k] = '\0';
    }
    int slots = (int)c->cfg->resources.slots_per_trial;
    /* Each rank's share of the experiment's threads, at most 64; on a pool, also at most what its
     * hosts have free (t2__ctl_take_slots). */
    t->threads = c->threads / slots > 0 ? c->threads / slots : 1;
    if (t->threads > T2__MAX_RANK_THREADS) t->threads = T2__MAX_RANK_THREADS;
    char hostfile[PATH_MAX + 16];
    if (c->pool.nhosts > 0 && (rc = t2__ctl_take_slots(c, t, slots, hostfile, sizeof hostfile))) return rc;
    t2__mpi_launch l = {.slots = slots, .hostfile = c->pool.nhosts > 0 ? hostfile : NULL, .self_exe = c->self_exe,
                        .connect_addr = c->connect_addr, .trial_id = t->id, .log_path = t->log_path,
                        .close_fds = fds, .nclose = n, .env = c->cfg->environment.vars,
                        .nenv = c->cfg->environment.nvars};
    char session[PATH_MAX];
    l.session_out = session;
    l.session_cap = sizeof session;
    unsigned char key[T2__AUTH_KEY_BYTES];
    pid_t pid;
    rc = t2__trial_mpi_start(&l, &pid, key);
    if (rc) rc = name_trial_in_error(c, t, rc);
    else if (!(t->session_dir = strdup(session)) || (rc = t2__ctl_launch_begin(c, t, pid, key))) {
        if (!rc) rc = t2_seterr(T2_ENOMEM, "controller: out of memory");
        kill(pid, SIGTERM);
        t2__reap_group(pid, NULL, 0);
        t2__mpi_session_remove(session);
        free(t->session_dir);
        t->session_dir = NULL;
    }
    memset(key, 0, sizeof key);
    if (rc) t2__ctl_release_slots(c, t);
    return rc;
}

int t2__ctl_child_close_fds(const t2__ctl *c, int **fds, int *n)
{
    int *store_fds, nstore;
    int rc = t2__store_fds(c->st, &store_fds, &nstore);
    if (rc) return rc;
    size_t cap = c->tt.nrun + 2 * (size_t)(c->nworkers > 0 ? c->nworkers : 0) + 2 + (size_t)nstore;
    int *v = malloc(cap * sizeof *v), k = 0;
    if (!v) {
        free(store_fds);
        return t2_seterr(T2_ENOMEM, "controller: out of memory");
    }
    for (int i = 0; i < nstore; i++) v[k++] = store_fds[i];
    free(store_fds);
    for (size_t i = 0; i < c->tt.nrun; i++)
        if (c->tt.t[c->tt.run[i]].fd >= 0) v[k++] = c->tt.t[c->tt.run[i]].fd;
    for (int i = 0; i < c->nworkers; i++) {
        if (c->workers[i].fd >= 0) v[k++] = c->workers[i].fd; /* a trial's channel twice: closed once, then EBADF */
        if (c->workers[i].log_fd >= 0) v[k++] = c->workers[i].log_fd;
    }
    if (c->listen_fd >= 0) v[k++] = c->listen_fd;
    if (t2__trial_guard_fd() >= 0) v[k++] = t2__trial_guard_fd(); /* the controller's end alone */
    *fds = v;
    *n = k;
    return T2_OK;
}

/* Local single-slot trials share the slots: each running one gets t2__sched_share of them.
 * Distributed trials (and all trials on a hostfile's pool, which start through mpirun) keep the
 * count they started with. */
static int shares_threads(const t2__ctl *c) { return !t2__ctl_via_mpi(c); }

/* Sends each running trial whose share changed its new thread count, counting `extra` trials about
 * to start after them; *first gets the share of the first of those. Called before a start, the
 * counts only fall, and they go out before the new trial starts: the cores are oversubscribed at
 * most for the batch each runner has in flight. O(running trials). */
static int share_threads(t2__ctl *c, int extra, int *first)
{
    int n = (int)c->tt.nrun + extra;
    int64_t cap = c->cfg->resources.max_threads_per_trial;
    if (first) *first = t2__sched_share(c->slots, n, (int)c->tt.nrun, cap);
    for (size_t k = 0; k < c->tt.nrun; k++) {
        t2__ctl_trial *t = &c->tt.t[c->tt.run[k]];
        int share = t2__sched_share(c->slots, n, (int)k, cap);
        if (share == t->threads || t->state != T2__CTL_RUNNING || t->fd < 0 || t->exit_sent || t->rejected) continue;
        t2__msg m = {.kind = T2__MSG_THREADS, .u.threads.threads = share};
        int rc = t2__ctl_send(c, t->fd, &m);
        if (rc) return rc;
        t->threads = share;
    }
    return T2_OK;
}

/* Where this run's output will start in t's own log (its process, or mpirun, appends to it): its
 * size now, 0 if there is none yet. Each run records it as a segment (store_logs.c), so that a
 * trial that also ran in workers reads back in run order. -1 where the log is no regular file
 * (/dev/null for a trial of an old store that had none): no segment. */
static int own_log_end(const t2__ctl *c, const t2__ctl_trial *t, int64_t *from)
{
    struct stat sb;
    *from = -1;
    if (stat(t->log_path, &sb) == 0) {
        if (S_ISREG(sb.st_mode)) *from = (int64_t)sb.st_size;
        return T2_OK;
    }
    if (errno == ENOENT) *from = 0;
    else return t2_seterr(T2_EIO, "trial " T2__TRIAL_FMT ": cannot read the size of its log %s: %s",
                          T2__TRIAL_ARGS(c, t), t->log_path, strerror(errno));
    return T2_OK;
}

/* A trial this controller made has never run, so a log already at its path is a lost trial's: a
 * controller that died before the row of the trial that wrote it was committed gave its id out
 * again. Shown as this trial's it would read as an earlier run of it (trial_log.c), so it moves
 * beside it, as LOG.lost-K, kept rather than deleted. */
static int set_aside_lost_log(const t2__ctl *c, const t2__ctl_trial *t)
{
    char to[PATH_MAX];
    for (int k = 1; k < 1000; k++) {
        if (snprintf(to, sizeof to, "%s.lost-%d", t->log_path, k) >= (int)sizeof to) break;
        if (link(t->log_path, to) == 0) {
            if (unlink(t->log_path) == 0) return T2_OK;
            break;
        }
        if (errno != EEXIST) break;
    }
    return t2_seterr(T2_EIO, "trial " T2__TRIAL_FMT ": its log %s holds a lost trial's output and cannot be set aside: %s",
                     T2__TRIAL_ARGS(c, t), t->log_path, strerror(errno));
}

/* Starts t, the first of `starting` trials that start now (t2__sched_startable). */
static int start_trial(t2__ctl *c, t2__ctl_trial *t, int starting)
{
    int threads = c->threads, rc;
    if (shares_threads(c) && (rc = share_threads(c, starting, &threads))) return rc;
    t->threads = threads;
    /* A trial continues from its own latest checkpoint; a new one may warm-start from the
     * experiment's source checkpoint (see resolve_warm). */
    const char *warm = c->warm;
    t2__runner_args a = {.cfg = c->cfg, .def = c->so.def, .hparams = t->hparams, .trial_id = t->id,
                         .seed = t->seed, .threads = threads, .parts = c->parts, .fd = -1,
                         .experiment_id = c->exp_id,
                         .ckpt_dir = c->ckpt_dir, .restore_path = t->ckpt ? t->ckpt : warm,
                         .warm_start = !t->ckpt && warm};
    rc = T2_OK;
    /* A trial that trained before (restarted, resumed, or paused and promoted) closes its
     * training-metric windows where its first run did: a run that starts over without a
     * checkpoint would otherwise average one long window where the first run reported two. */
    free(t->report_at);
    t->report_at = NULL;
    t->nreport_at = 0;
    if ((t->restarts || t->batches > 0 || t->ckpt) && (rc = t2__store_report_steps(c->st, t->id, &t->report_at, &t->nreport_at)))
        return rc;
    if (t2__ctl_uses_workers(c)) { /* no fork: an idle worker takes it (workers.c) */
        if ((rc = t2__ctl_worker_start(c, t, &a)) || (rc = t2__ctl_record_hosts(c, t))) return rc;
        return t2__ctl_trial_started(c, t);
    }
    int *fds, n;
    int64_t from;
    if ((rc = own_log_end(c, t, &from))) return rc;
    if (t->fresh && from > 0) {
        if ((rc = set_aside_lost_log(c, t))) return rc;
        from = 0;
    }
    t->fresh = 0;
    if ((rc = t2__ctl_child_close_fds(c, &fds, &n))) return rc;
    int dist = t2__ctl_via_mpi(c);
    if (dist)
        rc = start_distributed(c, t, fds, n); /* LAUNCHING: started once rank 0 calls back */
    else
        /* The child never touches the store (it only talks over its channel and leaves with
         * _exit), so an open batch transaction in the controller need not be flushed first. */
        rc = t2__trial_proc_start(&a, t->log_path, fds, n, &t->pid, &t->fd);
    free(fds);
    if (rc && !dist) rc = name_trial_in_error(c, t, rc);
    if (!rc && from >= 0) rc = t2__store_add_log_segment(c->st, t->id, t->log_path, from);
    if (!rc) rc = t2__ctl_record_hosts(c, t);
    if (rc) return rc;
    /* Launched on its hosts, a distributed trial is RUNNING in its row, as a local one is from its
     * fork: `t2exp trials` said QUEUED with no hosts for up to the 60 s rank 0 has to call back
     * (probe_L finding 7). The loop's own state stays LAUNCHING (no ops until rank 0 proved its
     * key); a launch that fails is settled as any failed run (restart, stop or error: launch.c). */
    if (dist) return t2__ctl_store_trial(c, t, T2__TU_STATE, T2__TRIAL_RUNNING, NULL);
    return t2__ctl_trial_started(c, t);
}

int t2__ctl_trial_started(t2__ctl *c, t2__ctl_trial *t)
{
    int rc;
    if ((rc = t2__tt_set_state(&c->tt, t, T2__CTL_RUNNING))) return rc;
    /* Nothing buffered belongs to this trial: a worker's channel is quiet between its finished
     * and the next assign, and a new descriptor may have been another channel's before. */
    t2__ctl_reader_reset(c, t->fd);
    t->ready = t->exit_sent = t->pausing = t->auto_exit = 0;
    t->sent = -1;
    /* The store id goes with the log path, which is named by it (trial-ID.log; `logs ID`). */
    t2__progress_event(&c->prog, "trial " T2__TRIAL_FMT " started%s (id %lld, log %s)", T2__TRIAL_ARGS(c, t),
                       t->restarts ? " again" : "", (long long)t->id, t2__ctl_output_path(c, t));
    return t2__ctl_store_trial(c, t, T2__TU_STATE, T2__TRIAL_RUNNING, NULL);
}

static int schedule(t2__ctl *c)
{
    while ((int)c->tt.nrun < c->capacity && !t2__ctl_interrupted) {
        t2__ctl_trial *t = t2__sched_next(&c->tt);
        if (!t) break;
        int starting = t2__sched_startable(&c->tt, c->capacity - (int)c->tt.nrun);
        int rc = start_trial(c, t, starting > 0 ? starting : 1);
        if (rc) return rc;
    }
    return T2_OK;
}

/* Sends the next train op, or exit once the searcher has closed the trial. */
static int feed(t2__ctl *c, t2__ctl_trial *t)
{
    t2__feed_action act = t2__sched_feed(t);
    if (act == T2__FEED_NOTHING) return T2_OK;
    t2__msg m = {.kind = act == T2__FEED_TRAIN ? T2__MSG_TRAIN : T2__MSG_EXIT};
    int rc;
    if (act == T2__FEED_TRAIN) {
        m.u.train.length = t->pending;
        m.u.train.report_at = t->report_at;
        m.u.train.nreport_at = t->nreport_at;
        /* To max_length a worker's runner leaves after its done, unasked: the exit and the wait
         * for it were a round trip per trial. Only in a worker, which goes on reading its channel
         * (a message the controller sent meanwhile, a threads one, is dropped there); a trial's
         * own process that exits with a message unread resets the channel (read as its end once
         * what it sent is read: channel_reader.c). Forked and distributed trials keep the exit. */
        m.u.train.last = t->auto_exit = t2__ctl_on_worker(c, t) && t->pending >= c->cfg->searcher.max_length.n;
        t->sent = t->pending;
        t->pending = -1;
        /* In epochs, the length needs the epoch's batches, which the runner reports once it has
         * built its loader; until then a trial with the same batch size tells (they share the
         * data), and a target already known (resumed from the store) stays. */
        for (size_t k = 0; !t->bpe && k < c->tt.nrun; k++)
            if (c->tt.t[c->tt.run[k]].bpe > 0 && c->tt.t[c->tt.run[k]].gb == t->gb) t->bpe = c->tt.t[c->tt.run[k]].bpe;
        int64_t target = t2__length_to_batches(c->cfg->searcher.max_length.unit, t->sent, t->gb, t->bpe);
        if (target > 0 || t->target <= 0) t->target = target;
    } else {
        /* Closed, or nothing to do until the searcher decides (an ASHA trial waiting on its rung):
         * the runner exits either way, so an idle trial never holds a slot. A paused trial starts
         * again when it gets work. */
        t->exit_sent = 1;
        t->left_at = t2__now();
        t->pausing = act == T2__FEED_EXIT_PAUSE;
    }
    /* Queued (a runner that is gone shows up as its end of stream): only out of memory fails. */
    rc = t2__ctl_send(c, t->fd, &m);
    if (act == T2__FEED_TRAIN) { /* sent once: the steps belong to this op only */
        free(t->report_at);
        t->report_at = NULL;
        t->nreport_at = 0;
    }
    if (rc) return rc;
    if (!t->exit_sent) rc = t2__ctl_store_trial(c, t, T2__TU_TARGET, 0, NULL);
    return rc;
}

/* The runner's channel closed (or its process was found ended): its process is reaped, now or as
 * an event of the loop (exit_wait.c), and then the trial's fate decided (t2__ctl_exited). */
static int on_exit(t2__ctl *c, t2__ctl_trial *t)
{
    t2__ctl_worker_gone(c, t);
    t2__ctl_channel_closed(c, t->fd);
    close(t->fd);
    t->fd = -1;
    return t2__ctl_exit_begin(c, t);
}

int t2__ctl_exited(t2__ctl *c, t2__ctl_trial *t, int status)
{
    int rc = T2_OK;
    t2__ctl_mpirun_gone(t);
    int clean = WIFEXITED(status) && WEXITSTATUS(status) == 0 && t->exit_sent && !t->error;
    if (!clean && t->host_slots && !t->killed && !t2__ctl_interrupted && !c->stopping) {
        /* Its hosts are probed as events of the loop; the probes settle it (host_check.c). */
        if ((rc = t2__ctl_check_hosts(c, t, status)) || t->probing) return rc;
    }
    t2__ctl_release_slots(c, t);
    return t2__ctl_settle(c, t, status);
}

/* A worker's trial ended (its runner returned code); the worker stays for the next trial. */
static int on_finished(t2__ctl *c, t2__ctl_trial *t, int64_t code)
{
    t2__ctl_worker_idle(c, t);
    return t2__ctl_settle(c, t, (int)(code & 0xff) << 8); /* the wait status of a process that exited with code */
}

/* A trial that ended for good no longer needs its latest checkpoint, which GC kept for it while it
 * could continue: without this, the last trial's last checkpoint outlived a policy that keeps none
 * of it (GC ran only after a new checkpoint). After the searcher's ops, so that a trial they made
 * from it (pbt's exploit) holds it first. */
static int ended_with_checkpoint(const t2__ctl_trial *t)
{
    return (t->state == T2__CTL_DONE || t->state == T2__CTL_ERRORED) && t->ckpt;
}

/* Decides the fate of a trial whose processes are gone (status: how its process ended; -1: it
 * never got going) and applies what the searcher says to that. */
int t2__ctl_settle(t2__ctl *c, t2__ctl_trial *t, int status)
{
    int rc = T2_OK;
    c->reshare = 1; /* its cores go to the trials still running (unless a new one takes them) */
    t2__exit_facts f = {.exited_ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
                        .ended_after_leaving = t->leave_stage > 0,
                        .interrupted = t2__ctl_interrupted != 0 || c->stopping, .max_restarts = c->cfg->max_restarts};
    t2__exit_verdict v = t2__sched_exit(t, &f);
    char why[1600] = "", st[96];
    if (v == T2__EXIT_KILLED) {
        free(t->error); /* what its killing made it say is not why it ended */
        t->error = NULL;
        rc = t2__ctl_cancel_trial(c, t);
        int collect = ended_with_checkpoint(t); /* before the ops move the table */
        if (!rc) rc = t2__ctl_apply_and_save(c);
        return rc || !collect ? rc : t2__ctl_collect_garbage(c);
    }
    if (v != T2__EXIT_COMPLETED && t->pruned_why) {
        /* It did not get to report done after the pruner stopped it: it runs again and is judged again. */
        free(t->pruned_why);
        t->pruned_why = NULL;
    }
    if (v == T2__EXIT_COMPLETED || v == T2__EXIT_ERRORED) t2__ctl_prune_ended(c, t, v == T2__EXIT_COMPLETED);
    if (v != T2__EXIT_PAUSED && v != T2__EXIT_COMPLETED) {
        if (!t->error) {
            /* It died without a word (a signal, an exit): its row's batches are its last report
             * (every scheduling_unit batches, a validation, a checkpoint), not the batch it died in,
             * which only an error the runner catches tells. Said here, beside that column. */
            char last[64] = "";
            if (status != -1 && t->batches > 0)
                snprintf(last, sizeof last, "; its last report was of batch %lld", (long long)t->batches);
            else if (status != -1)
                snprintf(last, sizeof last, "; it had reported no batch");
            t2__wait_status_str(status == -1 ? 0 : status, st, sizeof st);
            if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == T2__RUNNER_CHANNEL_CLOSED)
                t2__fmt_fit(why, sizeof why, "its channel to the controller was closed under its runner (did the trial "
                            "close a file descriptor it had not opened?)%s", last);
            else
                t2__fmt_fit(why, sizeof why, "the trial process %s%s%s", st, f.exited_ok ? " before finishing its work" : "", last);
        } else {
            t2__fmt_fit(why, sizeof why, "%s", t->error);
        }
        free(t->error);
        t->error = NULL;
    }
    switch (v) {
    case T2__EXIT_PAUSED:
        t->pausing = 0;
        t2__tt_set_state(&c->tt, t, T2__CTL_QUEUED);
        rc = t2__ctl_store_trial(c, t, T2__TU_STATE | T2__TU_BATCHES, T2__TRIAL_PAUSED, NULL);
        break;
    case T2__EXIT_COMPLETED:
        t2__tt_set_state(&c->tt, t, T2__CTL_DONE);
        t2__progress_event(&c->prog, "trial " T2__TRIAL_FMT " completed%s: %lld batches, latest %s %.6g", T2__TRIAL_ARGS(c, t),
                           t->pruned_why ? " (pruned)" : "", (long long)t->batches, c->cfg->searcher.metric, t->metric);
        /* A pruned trial's row says where and why it stopped (t2__trial_pruned). */
        rc = t2__ctl_store_trial(c, t, T2__TU_STATE | T2__TU_BATCHES | (t->pruned_why ? T2__TU_ERROR : 0),
                                 T2__TRIAL_COMPLETED, t->pruned_why);
        if (!rc) rc = t2__searcher_on_trial_exited(c->s, t->rid, &c->ops);
        break;
    case T2__EXIT_STOPPED:
        t2__tt_set_state(&c->tt, t, T2__CTL_QUEUED);
        rc = t2__ctl_store_trial(c, t, T2__TU_STATE, T2__TRIAL_PAUSED, NULL);
        break;
    case T2__EXIT_RESTART:
        t->restarts++;
        /* It continues from its latest checkpoint, or replays its op from the start without one;
         * the store keeps the first value of every step, so nothing is duplicated. */
        if (t->sent >= 0 && t->pending < 0) t->pending = t->sent;
        t->sent = -1;
        t2__tt_set_state(&c->tt, t, T2__CTL_QUEUED);
        t2__progress_event(&c->prog, "trial " T2__TRIAL_FMT " failed (%s); restart %d of %lld", T2__TRIAL_ARGS(c, t), why, t->restarts,
                           (long long)c->cfg->max_restarts);
        rc = t2__ctl_store_trial(c, t, T2__TU_STATE | T2__TU_RESTARTS | T2__TU_ERROR, T2__TRIAL_QUEUED, why);
        break;
    case T2__EXIT_KILLED: /* settled above */
        break;
    case T2__EXIT_ERRORED:
        t2__tt_set_state(&c->tt, t, T2__CTL_ERRORED);
        t2__progress_event(&c->prog, "trial " T2__TRIAL_FMT " errored: %s", T2__TRIAL_ARGS(c, t), why);
        rc = t2__ctl_store_trial(c, t, T2__TU_STATE | T2__TU_RESTARTS | T2__TU_ERROR | T2__TU_BATCHES,
                                 T2__TRIAL_ERRORED, why);
        if (!rc) rc = t2__searcher_on_trial_failed(c->s, t->rid, t->invalid_hparams, &c->ops);
        break;
    }
    /* Read before the searcher's ops: a trial they create may move the table, and t with it. */
    int collect = ended_with_checkpoint(t);
    if (!rc) rc = t2__ctl_apply_and_save(c);
    return rc || !collect ? rc : t2__ctl_collect_garbage(c);
}

static void show(t2__ctl *c)
{
    if (c->prog.quiet) return;
    t2__progress_trial run[64];
    int n = 0;
    int64_t done = c->tt.ndone;
    for (size_t k = 0; k < c->tt.nrun && n < 64; k++) {
        const t2__ctl_trial *t = &c->tt.t[c->tt.run[k]];
        run[n++] = (t2__progress_trial){c->exp_id, t->rid, t->batches, t->target, t->rate, t->loss, t->metric};
    }
    int64_t total = t2__searcher_total_trials(c->s);
    if (total < (int64_t)c->tt.nt) total = (int64_t)c->tt.nt;
    t2__progress_update(&c->prog, t2__now(), done, total, c->best, run, n);
}

/* Handles the messages trial idx has sent, as far as they have arrived: one read (when poll said
 * its channel is readable) and then every complete message in its buffer, so that a trial's
 * metrics, metrics and done cost one wake-up, not three. Stops at the trial's end (its channel
 * closed, or its worker's finished): what a channel holds after that belongs to no trial. */
static int drain(t2__ctl *c, size_t idx, int may_read)
{
    t2__chan_reader *r = t2__ctl_reader(c, c->tt.t[idx].fd);
    if (!r) return T2_ENOMEM;
    for (;;) {
        /* The trial array may move while ops are applied: look the trial up by index each time. */
        t2__ctl_trial *t = &c->tt.t[idx];
        t2__msg m;
        int got;
        int rc = t2__msg_recv_buffered(r, t->fd, may_read, &m, &got);
        may_read = 0;
        if (!rc && !got) return T2_OK;
        if (rc == T2_ENOMEM) return rc;
        if (rc == T2_EFORMAT || rc == T2_EUNSUPPORTED) {
            /* A message the protocol does not allow: the runner (or a peer posing as one) is
             * stopped, and its end of stream follows. */
            char why[600];
            t2__fmt_fit(why, sizeof why, "%s", t2_errmsg());
            t2_clearerr();
            if ((rc = t2__ctl_reject_message(c, t, why))) return rc;
            continue;
        }
        if (rc || m.kind == T2__MSG_NONE) {
            if (rc && !t->error) t->error = strdup(t2_errmsg());
            return on_exit(c, t);
        }
        if (m.kind == T2__MSG_FINISHED && t2__ctl_on_worker(c, t)) {
            int64_t code = m.u.finished.status;
            t2__ctl_worker_log_end(c, t, m.u.finished.log_end);
            t2__msg_free(&m);
            return on_finished(c, t, code);
        }
        rc = t2__ctl_on_message(c, t, &m);
        t2__msg_free(&m);
        if (rc) return rc;
    }
}

/* Trial idx's process is gone but its channel is still open: a process it forked (without
 * exec: the channel is close-on-exec) holds the other end, and no end of stream comes while that
 * one lives, which could be forever. What the runner sent is handled, and then its end. */
static int on_silent_exit(t2__ctl *c, size_t idx)
{
    /* Bounded: the process that holds the channel may go on writing to it. */
    for (int reads = 0;; reads++) {
        t2__ctl_trial *t = &c->tt.t[idx];
        if (t->fd < 0) return T2_OK; /* what it sent ended it (its end of stream, or its finished) */
        struct pollfd p = {.fd = t->fd, .events = POLLIN};
        int readable = reads < 64 && poll(&p, 1, 0) > 0;
        if (!readable && !t2__ctl_reader_has_frame(c, t->fd)) return on_exit(c, t);
        int rc = drain(c, idx, readable);
        if (rc) return rc;
    }
}

/* Finds running trials whose process ended without an end of stream (on_silent_exit), when any
 * child of the controller ended since the last look, at most ten times a second: a waitpid per
 * running trial then, none while no child ends (a worker's trials end none). */
static int check_silent_exits(t2__ctl *c)
{
    int exits = t2__ctl_child_exits;
    if (!t2__ctl_child_exits_counted || exits == c->exits_scanned) return T2_OK;
    double now = t2__now();
    if (now - c->exits_scan_at < 0.1) return T2_OK;
    c->exits_scanned = exits;
    c->exits_scan_at = now;
    /* Backwards: a trial that ends leaves the run list, the last one taking its place. */
    for (size_t k = c->tt.nrun; k-- > 0;) {
        if (k >= c->tt.nrun) continue;
        size_t idx = c->tt.run[k];
        t2__ctl_trial *t = &c->tt.t[idx];
        if (t->pid <= 0 || t->fd < 0) continue;
        int status = 0;
        if (t2__reap_group(t->pid, &status, WNOHANG) != t->pid) continue;
        t->reaped = 1;
        t->reaped_status = status;
        int rc = on_silent_exit(c, idx);
        c->tt.t[idx].reaped = 0; /* used by on_exit, or not needed: it ended by its finished */
        if (rc) return rc;
    }
    return T2_OK;
}

/* A distributed trial that was told to leave, or said it stops, gets LEAVE_S for its ranks to end.
 * A stopped mpirun, or a rank hung in MPI_Finalize, held the trial (and an experiment whose work
 * was all done) for good (probe_G G7); finishing normally takes well under a second. mpirun then
 * gets its teardown (SIGTERM, and SIGCONT should it be stopped), and KILL_AFTER_S later what it
 * started is killed with it; rank 0's channel closes and the trial is settled as any other (a
 * trial whose work was done stays completed). */
#define LEAVE_S 30.0
#define KILL_AFTER_S 10.0
static void end_if_stuck(t2__ctl *c, t2__ctl_trial *t, double now)
{
    if (t->leave_stage == 0 && now - t->left_at > LEAVE_S) {
        t2__progress_event(&c->prog, "trial " T2__TRIAL_FMT ": its ranks have not ended %.0f s after it left; mpirun is ended",
                           T2__TRIAL_ARGS(c, t), LEAVE_S);
        t2__ctl_mpirun_note(t);
        kill(t->pid, SIGTERM);
        kill(t->pid, SIGCONT);
        t->leave_stage = 1;
        t->left_at = now;
    } else if (t->leave_stage == 1 && now - t->left_at > KILL_AFTER_S) {
        t2__ctl_mpirun_note(t);
        kill(t->pid, SIGKILL);
        if (t->tree) t2__proc_tree_end(t->tree); /* its ranks: rank 0 holds the channel */
        t->leave_stage = 2;
    }
}

/* Waits up to 250 ms for reports, handles them, and reaps runners whose channel closed. */
int t2__ctl_pump(t2__ctl *c)
{
    /* Every running trial is polled, however many run at once (a fixed pollfd[256] never polled
     * trial 257). */
    size_t need = c->tt.nrun + t2__ctl_launch_nfds(c);
    if (need > c->cap_pf) {
        size_t cap = need > 2 * c->cap_pf ? need : 2 * c->cap_pf;
        struct pollfd *g = realloc(c->pf, cap * sizeof *g);
        if (g) c->pf = g;
        size_t *gi = g ? realloc(c->pf_trial, cap * sizeof *gi) : NULL;
        if (gi) c->pf_trial = gi;
        if (!g || !gi) return t2_seterr(T2_ENOMEM, "controller: out of memory");
        c->cap_pf = cap;
    }
    t2__ctl_suspend_if_asked(c);
    t2__ctl_flush_sends(c); /* what this round queued goes out before the wait */
    struct pollfd *pf = c->pf;
    size_t *idx = c->pf_trial;
    int n = 0, buffered = 0;
    double now = 0;
    for (size_t k = 0; k < c->tt.nrun; k++) {
        t2__ctl_trial *t = &c->tt.t[c->tt.run[k]];
        int fd = t->fd;
        if (fd < 0) continue;
        if (t->left_at > 0 && t->session_dir && t->pid > 0) {
            if (!now) now = t2__now();
            end_if_stuck(c, t, now);
        }
        pf[n] = (struct pollfd){.fd = fd, .events = POLLIN};
        idx[n++] = c->tt.run[k];
        buffered |= t2__ctl_reader_has_frame(c, fd);
    }
    int nt = n; /* the trials' entries; then the launches' (listening socket, callers) */
    n += t2__ctl_launch_fill(c, pf + n);
    /* A message already in a reader's buffer is handled without waiting for new input. */
    int r = poll(pf, (nfds_t)n, buffered ? 0 : 250);
    if (r < 0 && errno != EINTR) return t2_seterr(T2_EIO, "controller: poll: %s", strerror(errno));
    for (int k = 0; (r > 0 || buffered) && k < nt; k++) {
        int fd = c->tt.t[idx[k]].fd;
        int readable = r > 0 && (pf[k].revents & (POLLIN | POLLHUP | POLLERR));
        if (fd < 0 || fd != pf[k].fd) continue; /* ended while an earlier entry was handled */
        if (!readable && !t2__ctl_reader_has_frame(c, fd)) continue;
        int rc = drain(c, idx[k], readable);
        if (rc) return rc;
    }
    int rc = check_silent_exits(c);
    if (rc) return rc;
    /* Deadlines and mpirun's death are checked on every round, whether or not poll saw an event. */
    if ((rc = t2__ctl_launch_events(c, pf + nt, r > 0 ? n - nt : 0))) return rc;
    if (c->nexiting && (rc = t2__ctl_exit_events(c))) return rc;
    return c->nprobe ? t2__ctl_probe_events(c) : T2_OK;
}

/* Asks running trial t to pause: a local runner by SIGTERM; rank 0 of a distributed one by a stop
 * message on its channel, which goes nowhere but to it. mpirun forwards SIGUSR1 to every rank only
 * where the site's Open MPI is set to (ess_base_forward_signals; set to none, SIGUSR1 killed
 * mpirun), and on one 16-core machine a forwarded SIGUSR1 paused no rank, for a cause not found.
 * SIGUSR1 is left for a rank 0 whose channel cannot take the message. */
static void ask_pause(t2__ctl *c, t2__ctl_trial *t, int dist)
{
    if (t->pid <= 0) return;
    if (!dist) {
        kill(t->pid, SIGTERM);
        return;
    }
    t2__msg m = {.kind = T2__MSG_STOP};
    if (t->fd < 0 || t2__ctl_send(c, t->fd, &m) != T2_OK) {
        t2_clearerr();
        kill(t->pid, SIGUSR1);
    }
}

/* Stops every running trial. To pause, SIGTERM asks each runner to finish its batch, checkpoint
 * and say so; their reports keep flowing into the store until they exit. To kill (SIGUSR2), a
 * local runner gets SIGKILL at once. A runner still there after a minute is killed, and so is
 * every runner at once when another stop is asked meanwhile (a second Ctrl-C, `t2exp kill`): a
 * batch can be long, and the one who waits for it must not have to wait for it. */
void t2__ctl_stop_all(t2__ctl *c)
{
    /* A pause asks (ask_pause); mpirun gives its ranks about a second after SIGTERM before it
     * kills them, so no signal to it pauses. To kill, SIGTERM is mpirun's own teardown of every
     * rank (SIGKILL would leave them orphaned). */
    int dist = t2__ctl_via_mpi(c);
    /* A launch has no rank to checkpoint yet: its mpirun is stopped now, the trial settled; so is a
     * trial whose hosts were being probed, with no verdict on them. */
    t2__ctl_launch_stop(c);
    t2__ctl_probes_stop(c);
    c->stopping = 1;
    int killing = t2__ctl_interrupted == SIGUSR2;
    for (size_t k = 0; k < c->tt.nrun; k++) {
        t2__ctl_trial *t = &c->tt.t[c->tt.run[k]];
        if (killing && t->pid > 0) {
            t2__ctl_mpirun_note(t);
            kill(t->pid, t2__ctl_kill_signal(c));
        } else if (!killing) {
            ask_pause(c, t, dist);
        }
    }
    int asked = t2__ctl_stops_asked;
    if (!killing && c->tt.nrun > 0)
        t2__progress_event(&c->prog,
                           "stopping: %zu running trial(s) finish their batch and checkpoint (at most 60 s); "
                           "Ctrl-C again or `t2exp%s kill %lld` stops them now",
                           c->tt.nrun, t2__hint_home(), (long long)c->exp_id);
    double t0 = t2__now();
    while ((int)c->tt.nrun > 0 && t2__now() - t0 < 60.0) {
        if (!killing && t2__ctl_stops_asked != asked) {
            killing = 1;
            t2__progress_event(&c->prog, "stopping now: %zu running trial(s) killed without a checkpoint",
                               c->tt.nrun);
            for (size_t k = 0; k < c->tt.nrun; k++) {
                t2__ctl_trial *t = &c->tt.t[c->tt.run[k]];
                if (t->pid <= 0) continue;
                t2__ctl_mpirun_note(t);
                kill(t->pid, t2__ctl_kill_signal(c));
            }
        }
        if (t2__ctl_pump(c) != T2_OK) break;
    }
    /* Those whose channel closed and whose process is still awaited: ended now, and settled. */
    t2__ctl_exits_end(c);
    /* Those still running past the grace: killed, their channels closed, and settled too. on_exit
     * only starts the wait for a process not yet reaped; ended here, not left RUNNING in the store
     * of a PAUSED experiment, as they were (probe_L: a trial that blocked SIGTERM). */
    for (size_t k = c->tt.nrun; k-- > 0;) {
        if (k >= c->tt.nrun) continue;
        t2__ctl_trial *t = &c->tt.t[c->tt.run[k]];
        if (t->fd < 0) continue; /* awaited already (the exits below) */
        t2__ctl_mpirun_note(t);
        if (t->pid > 0) kill(t->pid, SIGKILL); /* (a pid of 0 would be the controller's own group) */
        on_exit(c, t);
    }
    t2__ctl_exits_end(c);
    while (c->tt.nrun > 0) /* cannot happen: each was settled above; do not loop forever */
        t2__tt_set_state(&c->tt, &c->tt.t[c->tt.run[0]], T2__CTL_QUEUED);
}

/* Out of space: stops every trial without a store write (each would fail as well, and a trial
 * stopped for it must not count as failed). Their rows stay RUNNING, as after a controller crash,
 * and resume restarts them from their latest checkpoints. A local trial is killed; a distributed
 * one gets mpirun's own teardown of its ranks (SIGTERM). */
void t2__ctl_kill_all_quietly(t2__ctl *c)
{
    for (size_t k = 0; k < c->tt.nrun; k++) {
        t2__ctl_trial *t = &c->tt.t[c->tt.run[k]];
        t2__ctl_mpirun_note(t);
        if (t->pid > 0) kill(t->pid, t2__ctl_kill_signal(c));
    }
    for (size_t k = 0; k < c->tt.nrun; k++) {
        t2__ctl_trial *t = &c->tt.t[c->tt.run[k]];
        if (t->pid > 0) t2__reap_group(t->pid, NULL, 0);
        t2__ctl_mpirun_gone(t);
        t2__ctl_worker_gone(c, t);
        t2__ctl_channel_closed(c, t->fd);
        if (t->fd >= 0) close(t->fd);
        t->pid = 0;
        t->fd = -1;
    }
    c->tt.nrun = 0;
    t2__ctl_launch_free(c); /* their mpirun were among the killed above */
    t2__ctl_probes_free(c);
    free(c->exiting); /* reaped above, as running trials */
    c->exiting = NULL;
    c->nexiting = c->capexiting = 0;
}

int t2__ctl_run_loop(t2__ctl *c)
{
    int rc = T2_OK;
    while (!rc && !t2__ctl_interrupted) {
        if ((rc = t2__ctl_take_kills(c)) || (rc = schedule(c))) break;
        if (c->reshare && shares_threads(c) && !t2__ctl_interrupted && (rc = share_threads(c, 0, NULL))) break;
        c->reshare = 0;
        for (size_t k = 0; k < c->tt.nrun && !rc; k++) rc = feed(c, &c->tt.t[c->tt.run[k]]);
        if (rc) break;
        int running = (int)c->tt.nrun;
        if (running == 0 && (c->shutdown || !t2__sched_next(&c->tt)))
            break; /* done, or a searcher with nothing left to ask */
        if ((rc = t2__ctl_pump(c))) break;
        if ((rc = t2__store_flush(c->st, 0))) break;
        show(c);
    }
    t2__ctl_report_refusals(c);
    return rc;
}
