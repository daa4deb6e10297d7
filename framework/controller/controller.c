/* controller.c — the experiment loop: apply the searcher's operations, schedule trial processes
 * on the slot pool, relay their reports into the store, restart or fail broken trials, and stop
 * when the searcher shuts down. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "checkpoints/ckpt.h"
#include "controller.h"
#include "hostfile.h"
#include "route.h"
#include "framework/store/store.h"
#include "progress.h"
#include "runner/channel.h"
#include "runner/remote.h"
#include "runner/ctx.h"
#include "runner/trial_so.h"
#include "searchers/searcher.h"
#include "trial_proc.h"
#include "internal.h"

enum { T_QUEUED, T_RUNNING, T_DONE, T_ERRORED };

typedef struct trial {
    int64_t rid, id;        /* searcher request id, store trial id */
    t2__val *hparams;
    uint64_t seed;
    int state;
    pid_t pid;
    int fd;
    int ready, exit_sent, closing, pausing;
    int rejected;           /* sent a report the controller refused: stopped, its messages ignored */
    int64_t pending;        /* TRAIN length not yet sent (-1: none) */
    int64_t sent;           /* TRAIN length in progress (-1: idle) */
    int restarts;
    int invalid_hparams;    /* the trial said its hparams are unusable: no restart */
    int fatal;              /* the failure would repeat on restart: no restart */
    int listed;             /* in ctl.special (see there) */
    int *host_slots;        /* slots this trial holds on each host (distributed trials, hostfile) */
    int64_t gb, bpe, batches, target; /* global batch, batches per epoch, trained, op target */
    double metric;          /* searcher metric of the latest validation (NAN: none) */
    double loss, rate;
    char *error;
    char *ckpt;             /* path of the trial's latest checkpoint (NULL: none) */
    char *log_path;         /* malloc'd: this array is copied at every fork (see below) */
    int64_t *report_at;     /* steps its earlier runs reported training metrics at, for the next
                             * TRAIN op (t2__store_report_steps); NULL once sent */
    size_t nreport_at;
} trial;
/* The trial array grows with max_trials and every fork copies its page tables (and every later
 * write to a shared page faults), so a trial is kept to ~200 bytes: a PATH_MAX buffer inline
 * made it 4.3 KB, 43 MB for 10,000 trials. */

typedef struct ctl {
    const t2__create_opts *o;
    const t2__config *cfg;
    t2__store *st;
    t2__searcher *s;
    t2__trial_so so;
    t2__ops ops;
    size_t op_next;
    trial *t;
    size_t nt, cap;
    int64_t exp_id;
    int recorded;           /* this process is the experiment's recorded controller (liveness.c) */
    int shutdown;
    int slots, capacity, threads;
    double best;
    int64_t best_trial;
    t2__progress prog;
    char ckpt_dir[PATH_MAX];
    int ckpt_dir_own;       /* ckpt_dir is this store's alone (under the home, or named by the store
                               id): only then may resume sweep checkpoint files it never recorded */
    char *warm;             /* the checkpoint new trials warm-start from (NULL: none) */
    const char *const *ovr; /* the config's --config overrides (for distributed trials' spec) */
    int novr;
    int listen_fd;          /* where distributed trials' rank 0 calls back (-1: not yet) */
    /* Bookkeeping that keeps every event O(running trials), not O(all trials): a search can queue
     * ten thousand trials up front. */
    size_t *run;            /* indices of RUNNING trials */
    size_t nrun, caprun;
    struct pollfd *pf;      /* pump's poll set: one per running trial, grown with them */
    size_t *pf_trial;       /* the trial index of each entry of pf */
    size_t cap_pf;
    size_t *special;        /* QUEUED trials that are not "waiting for max_length" (may be stale) */
    size_t nspecial, capspecial;
    size_t sched_from;      /* no never-started QUEUED trial below this index */
    int64_t ndone;          /* DONE + ERRORED */
    /* resources.hostfile: the slot pool across machines; each distributed trial gets its own
     * slots written to a hostfile of its own, so no host ever runs more ranks than its slots. */
    t2__host *hosts;
    int nhosts;
    char connect_addr[300];
    char self_exe[PATH_MAX];
} ctl;

/* The signal that stops the experiment: SIGINT/SIGTERM pause it (trials checkpoint, PAUSED),
 * SIGUSR2 (`t2exp kill`) kills it (trials killed, CANCELED). 0: none yet. */
static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { interrupted = sig; }

typedef struct {
    struct sigaction intr, term, usr2;
} saved_signals;

/* Installed before the controller is recorded in the store (t2__store_set_controller): from then
 * on `t2exp pause`/`kill` may signal this process, and SIGUSR2's default action would end it
 * without a word. */
static void catch_signals(saved_signals *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &old->intr);
    sigaction(SIGTERM, &sa, &old->term);
    sigaction(SIGUSR2, &sa, &old->usr2);
    signal(SIGPIPE, SIG_IGN);
    /* A file-size limit (ulimit -f) must fail the store's write, which pauses the experiment with
     * the reason, not kill the controller mid-batch without a word. */
    signal(SIGXFSZ, SIG_IGN);
}

static void restore_signals(const saved_signals *old)
{
    sigaction(SIGINT, &old->intr, NULL);
    sigaction(SIGTERM, &old->term, NULL);
    sigaction(SIGUSR2, &old->usr2, NULL);
}

/* Clears the experiment's controller record when this run ends; a failure to do so leaves a
 * record that liveness checks see as stale, so it only matters when nothing else went wrong. */
static int end_controller(ctl *c, int rc)
{
    if (!c->recorded) return rc;
    c->recorded = 0;
    int rc2 = t2__store_set_controller(c->st, c->exp_id, 0);
    return rc ? rc : rc2;
}

static trial *find(ctl *c, int64_t rid)
{
    /* Searchers number requests 0, 1, 2, ... in creation order, so the index is the usual answer. */
    if (rid >= 0 && (size_t)rid < c->nt && c->t[rid].rid == rid) return &c->t[rid];
    for (size_t i = 0; i < c->nt; i++)
        if (c->t[i].rid == rid) return &c->t[i];
    return NULL;
}

static int push_index(size_t **v, size_t *n, size_t *cap, size_t i)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        size_t *g = realloc(*v, nc * sizeof *g);
        if (!g) return t2_seterr(T2_ENOMEM, "controller: out of memory");
        *v = g;
        *cap = nc;
    }
    (*v)[(*n)++] = i;
    return T2_OK;
}

/* A queued trial whose work differs from the common case must be found without a full scan. */
static int note_special(ctl *c, trial *t)
{
    if (t->listed || t->state != T_QUEUED) return T2_OK;
    if (t->pending == c->cfg->searcher.max_length.n && !t->closing && !t->restarts && t->batches == 0) return T2_OK;
    t->listed = 1;
    return push_index(&c->special, &c->nspecial, &c->capspecial, (size_t)(t - c->t));
}

/* Every state change goes through here, to keep the running list and counters right. */
static int set_state(ctl *c, trial *t, int state)
{
    size_t i = (size_t)(t - c->t);
    if (t->state == T_RUNNING)
        for (size_t k = 0; k < c->nrun; k++)
            if (c->run[k] == i) {
                c->run[k] = c->run[--c->nrun];
                break;
            }
    if (t->state == T_DONE || t->state == T_ERRORED) c->ndone--;
    t->state = state;
    if (state == T_DONE || state == T_ERRORED) c->ndone++;
    if (state == T_RUNNING) return push_index(&c->run, &c->nrun, &c->caprun, i);
    if (state == T_QUEUED) {
        if (i < c->sched_from) c->sched_from = i;
        return note_special(c, t);
    }
    return T2_OK;
}

static int better(const ctl *c, double a, double b)
{
    if (isnan(b)) return !isnan(a);
    return c->cfg->searcher.smaller_is_better ? a < b : a > b;
}

static int store_trial(ctl *c, trial *t, unsigned set, int state, const char *error)
{
    t2__trial_update u = {.set = set, .state = state, .restarts = t->restarts, .batches_trained = t->batches,
                          .error = error, .log_path = t->log_path};
    return t2__store_update_trial(c->st, t->id, &u);
}

/* Applies the searcher's operations, including those the handling itself produces. */
static int apply_ops(ctl *c)
{
    int rc = T2_OK;
    for (; c->op_next < c->ops.n && !rc; c->op_next++) {
        t2__search_op *op = &c->ops.v[c->op_next];
        trial *t = op->kind == T2__OP_CREATE ? NULL : find(c, op->request_id);
        switch (op->kind) {
        case T2__OP_CREATE: {
            if (c->nt == c->cap) {
                size_t cap = c->cap ? 2 * c->cap : 16;
                trial *g = realloc(c->t, cap * sizeof *g);
                if (!g) return t2_seterr(T2_ENOMEM, "controller: out of memory");
                c->t = g;
                c->cap = cap;
            }
            t = &c->t[c->nt++];
            memset(t, 0, sizeof *t);
            t->rid = op->request_id;
            t->hparams = op->hparams;
            op->hparams = NULL;
            t->seed = op->seed;
            t->state = T_QUEUED;
            t->fd = -1;
            t->pending = t->sent = -1;
            t->metric = t->loss = NAN;
            t->gb = 1;
            t2__config_batch_sizes(c->cfg, t->hparams, &t->gb, NULL); /* checked again by the runner */
            char *json = NULL;
            size_t len;
            if ((rc = t2__val_to_json(t->hparams, &json, &len))) break;
            rc = t2__store_create_trial(c->st, c->exp_id, t->rid, json, (int64_t)t->seed, 0, &t->id);
            free(json);
            if (rc) break;
            char dir[PATH_MAX - 64];
            if ((rc = t2__store_experiment_dir(t2__store_home_of(c->st), c->exp_id, NULL, dir, sizeof dir))) break;
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/trial-%lld.log", dir, (long long)t->id);
            if (!(t->log_path = strdup(path))) {
                rc = t2_seterr(T2_ENOMEM, "controller: out of memory");
                break;
            }
            if ((rc = store_trial(c, t, T2__TU_LOG_PATH, 0, NULL))) break;
            /* The pointer t may move when the op list grows; searcher calls only append ops. */
            rc = t2__searcher_on_trial_created(c->s, op->request_id, &c->ops);
            break;
        }
        case T2__OP_TRAIN:
            if (t) {
                t->pending = op->length;
                rc = note_special(c, t);
            }
            break;
        case T2__OP_CLOSE:
            if (!t) break;
            t->closing = 1;
            if (t->state == T_QUEUED && t->pending < 0) {
                /* Paused (or never started) with no work left: it is done without running again. */
                set_state(c, t, T_DONE);
                t2__progress_event(&c->prog, "trial %lld completed: %lld batches, latest %s %.6g", (long long)t->id,
                                   (long long)t->batches, c->cfg->searcher.metric, t->metric);
                rc = store_trial(c, t, T2__TU_STATE, T2__TRIAL_COMPLETED, NULL);
                if (!rc) rc = t2__searcher_on_trial_exited(c->s, op->request_id, &c->ops);
            }
            break;
        case T2__OP_SHUTDOWN:
            c->shutdown = 1;
            break;
        }
    }
    if (c->op_next == c->ops.n) {
        t2__ops_clear(&c->ops);
        c->op_next = 0;
    }
    return rc;
}

/* The searcher's snapshot, wrapped with what the controller itself must remember to resume: each
 * unfinished trial's outstanding TRAIN length and whether it was closed. Only trials that differ
 * from the common case (waiting for max_length, not closed) are listed, so a search that queues
 * thousands of trials up front saves a small document after every event. */
static int save_searcher(ctl *c)
{
    t2__val *state = NULL, *doc = t2__val_map(), *trials = t2__val_map();
    char *json = NULL;
    size_t len;
    int rc = doc && trials ? t2__searcher_snapshot(c->s, &state) : t2_seterr(T2_ENOMEM, "controller: out of memory");
    if (!rc) rc = t2__val_map_set(doc, "searcher", state);
    /* Running trials, then the special queued ones (dropping stale entries from that list). */
    size_t keep = 0;
    for (size_t k = 0; k < c->nspecial; k++) {
        trial *t = &c->t[c->special[k]];
        if (t->state == T_QUEUED) c->special[keep++] = c->special[k];
        else t->listed = 0;
    }
    c->nspecial = keep;
    for (size_t k = 0; !rc && k < c->nrun + c->nspecial; k++) {
        const trial *t = &c->t[k < c->nrun ? c->run[k] : c->special[k - c->nrun]];
        int64_t pend = t->sent >= 0 ? t->sent : t->pending;
        if (pend == c->cfg->searcher.max_length.n && !t->closing) continue;
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)t->rid);
        t2__val *e = t2__val_map();
        t2__val_map_set(e, "pending", t2__val_int(pend));
        t2__val_map_set(e, "closing", t2__val_bool(t->closing));
        rc = t2__val_map_set(trials, key, e);
    }
    if (!rc) rc = t2__val_map_set(doc, "trials", trials);
    else t2__val_free(trials);
    if (!rc) rc = t2__val_to_json(doc, &json, &len);
    if (!rc) rc = t2__store_save_searcher_state(c->st, c->exp_id, 0, json);
    if (!rc) rc = t2__store_set_experiment_progress(c->st, c->exp_id, t2__searcher_progress(c->s));
    free(json);
    t2__val_free(doc);
    return rc;
}

/* The searcher's operations and the snapshot after them reach the store in one commit (see
 * t2__store_group): with 3000 trials queued at once, the batch filled up between the two, and a
 * resume after a crash there knew 1000 trials and ran only those. */
static int apply_and_save(ctl *c)
{
    t2__store_group(c->st, 1);
    int rc = apply_ops(c);
    if (!rc) rc = save_searcher(c);
    t2__store_group(c->st, 0);
    return rc;
}

static int running_count(const ctl *c) { return (int)c->nrun; }

/* resources.hostfile is read and checked before anything runs (whatever slots_per_trial is), so a
 * bad one is a usage error with its file:line, not a failed experiment. */
static int load_hostfile(ctl *c)
{
    int total;
    const char *path = c->cfg->resources.hostfile;
    return path ? t2__hostfile_load(path, &c->hosts, &c->nhosts, &total) : T2_OK;
}

/* Takes `slots` free slots, filling hosts in file order, and writes them as the trial's own
 * hostfile. T2_ESTATE if the pool has not that many free (the scheduler prevents it). */
static int allocate_hosts(ctl *c, trial *t, int slots, char *path, size_t len)
{
    t->host_slots = calloc((size_t)c->nhosts, sizeof *t->host_slots);
    if (!t->host_slots) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    int need = slots;
    for (int h = 0; h < c->nhosts && need > 0; h++) {
        int take = c->hosts[h].slots - c->hosts[h].used;
        if (take > need) take = need;
        if (take > 0) {
            t->host_slots[h] = take;
            need -= take;
        }
    }
    if (need > 0) {
        free(t->host_slots);
        t->host_slots = NULL;
        return t2_seterr(T2_ESTATE, "controller: %d free slots wanted, the hostfile has fewer free", slots);
    }
    snprintf(path, len, "%s.hosts", t->log_path);
    /* 0600 like the log beside it: host names are nobody else's business. */
    int hfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FILE *f = hfd >= 0 ? fdopen(hfd, "w") : NULL;
    if (!f && hfd >= 0) close(hfd);
    int rc = f ? T2_OK : t2_seterr(T2_EIO, "%s: %s", path, strerror(errno));
    for (int h = 0; !rc && h < c->nhosts; h++)
        if (t->host_slots[h]) {
            c->hosts[h].used += t->host_slots[h];
            if (fprintf(f, "%s slots=%d\n", c->hosts[h].name, t->host_slots[h]) < 0)
                rc = t2_seterr(T2_EIO, "%s: %s", path, strerror(errno));
        }
    if (f && fclose(f) != 0 && !rc) rc = t2_seterr(T2_EIO, "%s: %s", path, strerror(errno));
    return rc;
}

static void release_hosts(ctl *c, trial *t)
{
    for (int h = 0; t->host_slots && h < c->nhosts; h++) c->hosts[h].used -= t->host_slots[h];
    free(t->host_slots);
    t->host_slots = NULL;
}

/* A trial on slots_per_trial ranks through mpirun; rank 0 calls back to the controller. */
static int start_distributed(ctl *c, trial *t, const t2__runner_args *a, const int *fds, int n)
{
    int rc;
    if (c->listen_fd < 0) {
        /* Ranks on other hosts need an address they can reach, and only they: the port listens on
         * that one interface (route.h), never on every interface. */
        const char **names = c->nhosts > 0 ? malloc((size_t)c->nhosts * sizeof *names) : NULL;
        if (c->nhosts > 0 && !names) return t2_seterr(T2_ENOMEM, "controller: out of memory");
        for (int h = 0; h < c->nhosts; h++) names[h] = c->hosts[h].name;
        char addr[64];
        rc = t2__controller_bind_address(c->cfg->resources.controller_address, names, c->nhosts, addr, sizeof addr);
        free(names);
        if (rc) return rc;
        int port;
        if ((rc = t2__listen_tcp(addr, &c->listen_fd, &port))) return rc;
        snprintf(c->connect_addr, sizeof c->connect_addr, "%s:%d", addr, port);
        ssize_t k = readlink("/proc/self/exe", c->self_exe, sizeof c->self_exe - 1);
        if (k <= 0) return t2_seterr(T2_EIO, "controller: cannot find its own program: %s", strerror(errno));
        c->self_exe[k] = '\0';
    }
    int slots = (int)c->cfg->resources.slots_per_trial;
    int threads = a->threads / slots > 0 ? a->threads / slots : 1;
    char object[PATH_MAX];
    if (!realpath(c->so.path, object)) snprintf(object, sizeof object, "%s", c->so.path);
    t2__val *spec = t2__remote_spec(c->cfg->yaml_text, c->ovr, c->novr, object, t->hparams, t->id, c->exp_id,
                                    t->seed, threads, a->ckpt_dir, a->restore_path, a->warm_start);
    if (!spec) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    char hostfile[PATH_MAX + 16];
    if (c->nhosts > 0 && (rc = allocate_hosts(c, t, slots, hostfile, sizeof hostfile))) {
        release_hosts(c, t);
        t2__val_free(spec);
        return rc;
    }
    t2__mpi_launch l = {.slots = slots, .hostfile = c->nhosts > 0 ? hostfile : NULL, .self_exe = c->self_exe,
                        .listen_fd = c->listen_fd, .connect_addr = c->connect_addr, .trial_id = t->id,
                        .log_path = t->log_path, .spec = spec, .close_fds = fds, .nclose = n,
                        .env = c->cfg->environment.vars, .nenv = c->cfg->environment.nvars};
    rc = t2__trial_mpi_start(&l, &t->pid, &t->fd);
    t2__val_free(spec);
    if (rc) release_hosts(c, t);
    return rc;
}

static int start_trial(ctl *c, trial *t)
{
    int *fds = malloc((c->nrun + 2) * sizeof *fds), n = 0;
    if (!fds) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    for (size_t k = 0; k < c->nrun; k++)
        if (c->t[c->run[k]].fd >= 0) fds[n++] = c->t[c->run[k]].fd;
    if (c->listen_fd >= 0) fds[n++] = c->listen_fd;
    /* A trial continues from its own latest checkpoint; a new one may warm-start from the
     * experiment's source checkpoint (see resolve_warm). */
    const char *warm = c->warm;
    t2__runner_args a = {.cfg = c->cfg, .def = c->so.def, .hparams = t->hparams, .trial_id = t->id,
                         .seed = t->seed, .threads = c->threads, .fd = -1, .experiment_id = c->exp_id,
                         .ckpt_dir = c->ckpt_dir, .restore_path = t->ckpt ? t->ckpt : warm,
                         .warm_start = !t->ckpt && warm};
    int rc = T2_OK;
    /* A trial that trained before (restarted, resumed, or paused and promoted) closes its
     * training-metric windows where its first run did: a run that starts over without a
     * checkpoint would otherwise average one long window where the first run reported two. */
    free(t->report_at);
    t->report_at = NULL;
    t->nreport_at = 0;
    if ((t->restarts || t->batches > 0 || t->ckpt) && (rc = t2__store_report_steps(c->st, t->id, &t->report_at, &t->nreport_at))) {
        free(fds);
        return rc;
    }
    if (c->cfg->resources.slots_per_trial > 1) {
        rc = start_distributed(c, t, &a, fds, n);
    } else {
        /* The child never touches the store (it only talks over its channel and leaves with
         * _exit), so an open batch transaction in the controller need not be flushed first. */
        rc = t2__trial_proc_start(&a, t->log_path, fds, n, &t->pid, &t->fd);
    }
    free(fds);
    if (rc) return rc;
    if ((rc = set_state(c, t, T_RUNNING))) return rc;
    t->ready = t->exit_sent = t->pausing = 0;
    t->sent = -1;
    t2__progress_event(&c->prog, "trial %lld started%s (log %s)", (long long)t->id,
                       t->restarts ? " again" : "", t->log_path);
    return store_trial(c, t, T2__TU_STATE, T2__TRIAL_RUNNING, NULL);
}

/* The next trial to start: one waiting for work it now has, in request order. Never-started
 * trials are found from sched_from on; restarted and paused ones are on the special list. */
static trial *next_startable(ctl *c)
{
    trial *best = NULL;
    for (size_t k = 0; k < c->nspecial; k++) {
        trial *t = &c->t[c->special[k]];
        if (t->state == T_QUEUED && t->pending >= 0 && (!best || t->rid < best->rid)) best = t;
    }
    while (c->sched_from < c->nt && (c->t[c->sched_from].state != T_QUEUED || c->t[c->sched_from].listed))
        c->sched_from++;
    for (size_t i = c->sched_from; i < c->nt; i++) {
        trial *t = &c->t[i];
        if (best && t->rid > best->rid) break;
        if (t->state == T_QUEUED && !t->listed && t->pending >= 0) return !best || t->rid < best->rid ? t : best;
        if (t->state == T_QUEUED && !t->listed) break; /* the first never-started one has no work yet */
    }
    return best;
}

static int schedule(ctl *c)
{
    while (running_count(c) < c->capacity && !interrupted) {
        trial *t = next_startable(c);
        if (!t) break;
        int rc = start_trial(c, t);
        if (rc) return rc;
    }
    return T2_OK;
}

/* Sends the next train op, or exit once the searcher has closed the trial. */
static int feed(ctl *c, trial *t)
{
    /* The first op goes out right after the fork: the runner reads it once it is ready, which
     * saves a round trip per trial (it matters for many short trials). */
    if (t->state != T_RUNNING || (!t->ready && t->pending < 0) || t->sent >= 0 || t->exit_sent) return T2_OK;
    t2__val *m = t2__val_map();
    int rc;
    if (t->pending >= 0) {
        t2__val_map_set(m, "type", t2__val_string("train"));
        t2__val_map_set(m, "length", t2__val_int(t->pending));
        if (t->nreport_at) {
            t2__val *steps = t2__val_list();
            for (size_t k = 0; steps && k < t->nreport_at; k++) t2__val_list_append(steps, t2__val_int(t->report_at[k]));
            t2__val_map_set(m, "report_at", steps);
            free(t->report_at);
            t->report_at = NULL;
            t->nreport_at = 0;
        }
        t->sent = t->pending;
        t->pending = -1;
        /* In epochs, the length needs the epoch's batches, which the runner reports once it has
         * built its loader; until then a trial with the same batch size tells (they share the
         * data), and a target already known (resumed from the store) stays. */
        for (size_t k = 0; !t->bpe && k < c->nrun; k++)
            if (c->t[c->run[k]].bpe > 0 && c->t[c->run[k]].gb == t->gb) t->bpe = c->t[c->run[k]].bpe;
        int64_t target = t2__length_to_batches(c->cfg->searcher.max_length.unit, t->sent, t->gb, t->bpe);
        if (target > 0 || t->target <= 0) t->target = target;
    } else {
        /* Closed, or nothing to do until the searcher decides (an ASHA trial waiting on its rung):
         * the runner exits either way, so an idle trial never holds a slot. A paused trial starts
         * again when it gets work. */
        t2__val_map_set(m, "type", t2__val_string("exit"));
        t->exit_sent = 1;
        t->pausing = !t->closing;
    }
    rc = m ? t2__channel_send(t->fd, m) : T2_ENOMEM;
    t2__val_free(m);
    if (!rc && !t->exit_sent) {
        t2__trial_update u = {.set = T2__TU_TARGET, .target_length_batches = t->target};
        if ((rc = t2__store_update_trial(c->st, t->id, &u))) return rc;
    }
    if (rc) {
        /* The runner is gone; its end of stream and exit status will tell why. */
        t2_clearerr();
        rc = T2_OK;
    }
    return rc;
}

/* Garbage collection after a new checkpoint: keep the union of save_experiment_best,
 * save_trial_best and save_trial_latest, plus every unfinished trial's latest checkpoint (it is
 * what that trial continues from). */
static int collect_garbage(ctl *c)
{
    t2__checkpoint_row *rows = NULL;
    size_t n = 0;
    int rc = t2__store_list_checkpoints(c->st, c->exp_id, 0, &rows, &n);
    if (rc) return rc;
    t2__ckpt_gc_item *items = calloc(n ? n : 1, sizeof *items);
    unsigned char *keep = calloc(n ? n : 1, 1);
    if (!items || !keep) rc = t2_seterr(T2_ENOMEM, "controller: out of memory");
    for (size_t i = 0; !rc && i < n; i++)
        items[i] = (t2__ckpt_gc_item){rows[i].trial_id, rows[i].batches, rows[i].metric, (int64_t)i};
    t2__ckpt_gc_params p = {c->cfg->checkpoint_storage.save_experiment_best, c->cfg->checkpoint_storage.save_trial_best,
                            c->cfg->checkpoint_storage.save_trial_latest, c->cfg->searcher.smaller_is_better};
    if (!rc) rc = t2__ckpt_gc_select(items, n, &p, keep);
    for (size_t i = 0; !rc && i < n; i++) {
        if (keep[i] || rows[i].deleted) continue;
        int needed = 0;
        for (size_t k = 0; k < c->nt; k++)
            needed |= c->t[k].ckpt && c->t[k].state != T_DONE && c->t[k].state != T_ERRORED &&
                      strcmp(c->t[k].ckpt, rows[i].path) == 0;
        if (needed) continue;
        /* Only a checkpoint file inside this experiment's own directory is ever deleted, whatever
         * path the row holds (see t2__ckpt_gc_path_check). */
        int ok = t2__ckpt_gc_path_check(c->ckpt_dir, rows[i].path);
        if (ok != T2_OK && ok != T2_ENOTFOUND) {
            t2__progress_event(&c->prog, "warning: checkpoint %s kept: %s", rows[i].uuid, t2_errmsg());
            t2_clearerr();
            continue;
        }
        if (ok == T2_OK && unlink(rows[i].path) != 0 && errno != ENOENT) {
            t2__progress_event(&c->prog, "warning: cannot delete checkpoint %s: %s", rows[i].path, strerror(errno));
            continue;
        }
        rc = t2__store_mark_checkpoint_deleted(c->st, rows[i].uuid);
    }
    free(items);
    free(keep);
    t2__checkpoint_rows_free(rows, n);
    return rc;
}

/* A report the controller will not act on: the trial is stopped and errored (no restart: it
 * would say the same again), its later messages are ignored, and the experiment goes on. */
static int reject(ctl *c, trial *t, const char *why)
{
    char msg[1200];
    snprintf(msg, sizeof msg, "rejected checkpoint report: %s", why);
    t2__progress_event(&c->prog, "trial %lld: %s; stopping it", (long long)t->id, msg);
    free(t->error);
    t->error = strdup(msg);
    t->rejected = t->fatal = 1;
    if (t->pid > 0) kill(t->pid, SIGKILL);
    return T2_OK;
}

/* A trial's checkpoint report names a uuid and the file's extension, never a path: the
 * controller makes the path itself, inside this experiment's checkpoint directory, and takes it
 * only if a regular file is there. Whatever a runner (or a peer posing as one) sends, the store
 * and GC never get a path outside that directory. */
static int on_checkpoint(ctl *c, trial *t, const t2__val *m)
{
    const t2__val *u = t2__val_map_get(m, "uuid"), *x = t2__val_map_get(m, "ext");
    const t2__val *by = t2__val_map_get(m, "bytes"), *mv = t2__val_map_get(m, "metric");
    if (!u || u->kind != T2__VAL_STRING || !t2__uuid_valid(u->s))
        return reject(c, t, "its uuid is not a uuid");
    char name[T2__UUID_LEN + 16], path[PATH_MAX + 64];
    int n = x && x->kind == T2__VAL_STRING ? snprintf(name, sizeof name, "%s%s", u->s, x->s) : -1;
    if (n < 0 || (size_t)n >= sizeof name || !t2__ckpt_name_parse(name, NULL, NULL))
        return reject(c, t, "its ext is not one of .tar, .tar.gz, .tar.zst");
    snprintf(path, sizeof path, "%s/%s", c->ckpt_dir, name);
    int ok = t2__ckpt_gc_path_check(c->ckpt_dir, path);
    if (ok) {
        char why[PATH_MAX + 300];
        snprintf(why, sizeof why, "%s", ok == T2_ENOTFOUND ? "no such file in the checkpoint directory" : t2_errmsg());
        t2_clearerr();
        return reject(c, t, why);
    }
    double metric = NAN;
    if (mv) t2__val_as_double(mv, &metric);
    t2__checkpoint_new ck = {.uuid = u->s, .trial_id = t->id, .batches = t->batches,
                             .epoch = t->bpe > 0 ? (double)t->batches / (double)t->bpe : NAN, .metric = metric,
                             .size_bytes = by && by->kind == T2__VAL_INT ? by->i : 0, .path = path};
    char *keep = strdup(path);
    if (!keep) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    int rc = t2__store_add_checkpoint(c->st, &ck);
    if (rc == T2_EINVAL) { /* the uuid is already recorded: another checkpoint's name */
        free(keep);
        t2_clearerr();
        return reject(c, t, "its uuid is already recorded");
    }
    if (rc) {
        free(keep);
        return rc;
    }
    free(t->ckpt);
    t->ckpt = keep;
    /* The checkpoint must be durable in the store before older ones are deleted. */
    rc = t2__store_flush(c->st, 1);
    if (!rc) rc = collect_garbage(c);
    return rc;
}

/* One message from a trial's runner. */
static int on_message(ctl *c, trial *t, const t2__val *m)
{
    if (t->rejected) return T2_OK;
    const char *type = t2__msg_type(m);
    const t2__val *b = t2__val_map_get(m, "batches");
    int rc = T2_OK;
    if (b && b->kind == T2__VAL_INT) t->batches = b->i;
    if (strcmp(type, "ready") == 0) {
        const t2__val *bpe = t2__val_map_get(m, "batches_per_epoch");
        t->bpe = bpe && bpe->kind == T2__VAL_INT ? bpe->i : 0;
        t->ready = 1;
        const t2__val *blas = t2__val_map_get(m, "blas");
        if (blas && blas->kind == T2__VAL_STRING) rc = t2__store_set_trial_blas(c->st, t->id, blas->s);
        if (!rc && t->sent >= 0) { /* the op went out before the epoch length was known */
            t->target = t2__length_to_batches(c->cfg->searcher.max_length.unit, t->sent, t->gb, t->bpe);
            t2__trial_update u = {.set = T2__TU_TARGET, .target_length_batches = t->target};
            rc = t2__store_update_trial(c->st, t->id, &u);
        }
    } else if (strcmp(type, "metrics") == 0) {
        const t2__val *kind = t2__val_map_get(m, "kind"), *vals = t2__val_map_get(m, "values");
        const t2__val *ep = t2__val_map_get(m, "epoch"), *rate = t2__val_map_get(m, "batches_per_s");
        double epoch = NAN;
        if (ep) t2__val_as_double(ep, &epoch);
        if (rate) t2__val_as_double(rate, &t->rate);
        int validation = kind && kind->kind == T2__VAL_STRING && strcmp(kind->s, "validation") == 0;
        int new_best = 0; /* better than every validation of the experiment before it */
        for (size_t i = 0; vals && vals->kind == T2__VAL_MAP && i < vals->n && !rc; i++) {
            double v;
            if (t2__val_as_double(vals->items[i], &v) != T2_OK) continue;
            rc = t2__store_add_metric(c->st, t->id, validation ? T2__METRIC_VALIDATION : T2__METRIC_TRAINING,
                                      t->batches, epoch, vals->keys[i], v);
            if (!validation && strcmp(vals->keys[i], "loss") == 0) t->loss = v;
            if (validation && strcmp(vals->keys[i], c->cfg->searcher.metric) == 0) {
                t->metric = v;
                t2__trial_update u = {.set = T2__TU_VALIDATION | T2__TU_BATCHES, .validation = v,
                                      .batches_trained = t->batches};
                if (!rc) rc = t2__store_update_trial(c->st, t->id, &u);
                if (!rc && better(c, v, c->best)) {
                    new_best = 1;
                    c->best = v;
                    c->best_trial = t->id;
                    rc = t2__store_set_experiment_best(c->st, c->exp_id, t->id, v);
                }
            }
        }
        /* The runner's own measurements of the window go in beside the trial's metrics. */
        static const char *const timing[][2] = {{"batches_per_s", "t2exp.batches_per_s"},
                                                {"samples_per_s", "t2exp.samples_per_s"},
                                                {"data_s", "t2exp.data_s"},
                                                {"compute_s", "t2exp.compute_s"},
                                                {"comm_s", "t2exp.comm_s"}};
        for (size_t i = 0; !validation && !rc && i < sizeof timing / sizeof timing[0]; i++) {
            const t2__val *x = t2__val_map_get(m, timing[i][0]);
            double v;
            if (x && t2__val_as_double(x, &v) == T2_OK)
                rc = t2__store_add_metric(c->st, t->id, T2__METRIC_TRAINING, t->batches, epoch, timing[i][1], v);
        }
        if (!validation && !rc) rc = store_trial(c, t, T2__TU_BATCHES, 0, NULL);
        /* checkpoint_policy best: the runner waits for this answer before it goes on. */
        const t2__val *ask = t2__val_map_get(m, "ask_best");
        if (validation && !rc && ask && ask->kind == T2__VAL_BOOL && ask->b) {
            t2__val *a = t2__val_map();
            t2__val_map_set(a, "type", t2__val_string("validated"));
            if (!a || t2__val_map_set(a, "new_best", t2__val_bool(new_best)))
                rc = t2_seterr(T2_ENOMEM, "controller: out of memory answering trial %lld", (long long)t->id);
            else if (t2__channel_send(t->fd, a))
                t2_clearerr(); /* a runner that is gone shows up as its end of stream */
            t2__val_free(a);
        }
    } else if (strcmp(type, "done") == 0) {
        int64_t length = t->sent;
        t->sent = -1;
        rc = t2__searcher_on_validation(c->s, t->rid, t->metric, length, &c->ops);
        if (!rc) rc = apply_and_save(c);
    } else if (strcmp(type, "checkpoint") == 0) {
        rc = on_checkpoint(c, t, m);
    } else if (strcmp(type, "checkpoint_failed") == 0) {
        const t2__val *msg = t2__val_map_get(m, "message");
        t2__progress_event(&c->prog, "trial %lld: checkpoint failed (%s); its previous checkpoint stays the latest",
                           (long long)t->id, msg && msg->kind == T2__VAL_STRING ? msg->s : "?");
    } else if (strcmp(type, "stopped") == 0) {
        t->pausing = 1;
        t->exit_sent = 1;
        if (t->sent >= 0 && t->pending < 0) t->pending = t->sent; /* the op continues on resume */
        t->sent = -1;
    } else if (strcmp(type, "error") == 0) {
        const t2__val *w = t2__val_map_get(m, "where"), *msg = t2__val_map_get(m, "message");
        char buf[1400];
        snprintf(buf, sizeof buf, "%s: %s", w && w->kind == T2__VAL_STRING ? w->s : "trial",
                 msg && msg->kind == T2__VAL_STRING ? msg->s : "failed");
        free(t->error);
        t->error = strdup(buf);
        const t2__val *inv = t2__val_map_get(m, "invalid_hparams"), *fat = t2__val_map_get(m, "fatal");
        t->invalid_hparams = inv && inv->kind == T2__VAL_BOOL && inv->b;
        t->fatal = fat && fat->kind == T2__VAL_BOOL && fat->b;
    }
    return rc;
}

/* The runner's channel closed: reap the process and decide the trial's fate. */
static int on_exit(ctl *c, trial *t)
{
    int status = 0, rc = T2_OK;
    close(t->fd);
    t->fd = -1;
    while (waitpid(t->pid, &status, 0) < 0 && errno == EINTR) {
    }
    release_hosts(c, t);
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && t->exit_sent && !t->error;
    if (ok && t->pausing && !t->closing) {
        t->pausing = 0;
        set_state(c, t, T_QUEUED);
        rc = store_trial(c, t, T2__TU_STATE | T2__TU_BATCHES, T2__TRIAL_PAUSED, NULL);
    } else if (ok) {
        set_state(c, t, T_DONE);
        t2__progress_event(&c->prog, "trial %lld completed: %lld batches, latest %s %.6g", (long long)t->id,
                           (long long)t->batches, c->cfg->searcher.metric, t->metric);
        rc = store_trial(c, t, T2__TU_STATE | T2__TU_BATCHES, T2__TRIAL_COMPLETED, NULL);
        if (!rc) rc = t2__searcher_on_trial_exited(c->s, t->rid, &c->ops);
    } else {
        char why[1600], st[96];
        if (!t->error) {
            t2__wait_status_str(status, st, sizeof st);
            snprintf(why, sizeof why, "the trial process %s%s", st,
                     WIFEXITED(status) && WEXITSTATUS(status) == 0 ? " before finishing its work" : "");
        } else {
            snprintf(why, sizeof why, "%s", t->error);
        }
        if (interrupted) {
            set_state(c, t, T_QUEUED); /* stopped by us: it will continue on resume */
            rc = store_trial(c, t, T2__TU_STATE, T2__TRIAL_PAUSED, NULL);
        } else if (t->restarts < c->cfg->max_restarts && !t->invalid_hparams && !t->fatal) {
            t->restarts++;
            /* It continues from its latest checkpoint, or replays its op from the start without one;
             * the store keeps the first value of every step, so nothing is duplicated. */
            if (t->sent >= 0 && t->pending < 0) t->pending = t->sent;
            t->sent = -1;
            set_state(c, t, T_QUEUED);
            t2__progress_event(&c->prog, "trial %lld failed (%s); restart %d of %lld", (long long)t->id, why,
                               t->restarts, (long long)c->cfg->max_restarts);
            rc = store_trial(c, t, T2__TU_STATE | T2__TU_RESTARTS | T2__TU_ERROR, T2__TRIAL_QUEUED, why);
        } else {
            set_state(c, t, T_ERRORED);
            t2__progress_event(&c->prog, "trial %lld errored: %s", (long long)t->id, why);
            rc = store_trial(c, t, T2__TU_STATE | T2__TU_RESTARTS | T2__TU_ERROR | T2__TU_BATCHES,
                             T2__TRIAL_ERRORED, why);
            if (!rc) rc = t2__searcher_on_trial_failed(c->s, t->rid, t->invalid_hparams, &c->ops);
        }
        free(t->error);
        t->error = NULL;
    }
    if (!rc) rc = apply_and_save(c);
    return rc;
}

static void show(ctl *c)
{
    if (c->prog.quiet) return;
    t2__progress_trial run[64];
    int n = 0;
    int64_t done = c->ndone;
    for (size_t k = 0; k < c->nrun && n < 64; k++) {
        const trial *t = &c->t[c->run[k]];
        run[n++] = (t2__progress_trial){t->id, t->batches, t->target, t->rate, t->loss, t->metric};
    }
    int64_t total = t2__searcher_total_trials(c->s);
    if (total < (int64_t)c->nt) total = (int64_t)c->nt;
    t2__progress_update(&c->prog, t2__now(), done, total, c->best, run, n);
}

/* Waits up to 250 ms for reports, handles them, and reaps runners whose channel closed. */
static int pump(ctl *c)
{
    /* Every running trial is polled, however many run at once (a fixed pollfd[256] never polled
     * trial 257). */
    if (c->nrun > c->cap_pf) {
        size_t cap = c->nrun > 2 * c->cap_pf ? c->nrun : 2 * c->cap_pf;
        struct pollfd *g = realloc(c->pf, cap * sizeof *g);
        if (g) c->pf = g;
        size_t *gi = g ? realloc(c->pf_trial, cap * sizeof *gi) : NULL;
        if (gi) c->pf_trial = gi;
        if (!g || !gi) return t2_seterr(T2_ENOMEM, "controller: out of memory");
        c->cap_pf = cap;
    }
    struct pollfd *pf = c->pf;
    size_t *idx = c->pf_trial;
    int n = 0;
    for (size_t k = 0; k < c->nrun; k++)
        if (c->t[c->run[k]].fd >= 0) {
            pf[n] = (struct pollfd){.fd = c->t[c->run[k]].fd, .events = POLLIN};
            idx[n++] = c->run[k];
        }
    int r = poll(pf, (nfds_t)n, 250);
    if (r < 0 && errno != EINTR) return t2_seterr(T2_EIO, "controller: poll: %s", strerror(errno));
    for (int k = 0; r > 0 && k < n; k++) {
        if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        /* The trial array may move while ops are applied: look the trial up by index each time. */
        t2__val *m = NULL;
        int rc = t2__channel_recv(c->t[idx[k]].fd, &m);
        if (rc || !m) {
            t2__val_free(m);
            if (rc && !c->t[idx[k]].error) c->t[idx[k]].error = strdup(t2_errmsg());
            if ((rc = on_exit(c, &c->t[idx[k]]))) return rc;
            continue;
        }
        rc = on_message(c, &c->t[idx[k]], m);
        t2__val_free(m);
        if (rc) return rc;
    }
    return T2_OK;
}

/* Stops every running trial. To pause, SIGTERM asks each runner to finish its batch, checkpoint
 * and say so; their reports keep flowing into the store until they exit. To kill (SIGUSR2), a
 * local runner gets SIGKILL at once. A runner still there after a minute is killed. */
static void stop_all(ctl *c)
{
    /* mpirun gives its ranks about a second after SIGTERM before it kills them; SIGUSR1 it
     * forwards to every rank at once and then waits for them, so they can checkpoint. To kill,
     * SIGTERM is mpirun's own teardown of every rank (SIGKILL would leave them orphaned). */
    int dist = c->cfg->resources.slots_per_trial > 1;
    int sig = interrupted == SIGUSR2 ? (dist ? SIGTERM : SIGKILL) : dist ? SIGUSR1 : SIGTERM;
    for (size_t k = 0; k < c->nrun; k++)
        if (c->t[c->run[k]].pid > 0) kill(c->t[c->run[k]].pid, sig);
    double t0 = t2__now();
    while (running_count(c) > 0 && t2__now() - t0 < 60.0)
        if (pump(c) != T2_OK) break;
    while (c->nrun > 0) {
        trial *t = &c->t[c->run[0]];
        kill(t->pid, SIGKILL);
        if (t->fd < 0) { /* cannot happen: a running trial has its channel; do not loop forever */
            set_state(c, t, T_QUEUED);
            continue;
        }
        on_exit(c, t);
    }
}

/* Out of space: stops every trial without a store write (each would fail as well, and a trial
 * stopped for it must not count as failed). Their rows stay RUNNING, as after a controller crash,
 * and resume restarts them from their latest checkpoints. A local trial is killed; a distributed
 * one gets mpirun's own teardown of its ranks (SIGTERM). */
static void kill_all_quietly(ctl *c)
{
    int dist = c->cfg->resources.slots_per_trial > 1;
    for (size_t k = 0; k < c->nrun; k++) {
        trial *t = &c->t[c->run[k]];
        if (t->pid > 0) kill(t->pid, dist ? SIGTERM : SIGKILL);
    }
    for (size_t k = 0; k < c->nrun; k++) {
        trial *t = &c->t[c->run[k]];
        while (t->pid > 0 && waitpid(t->pid, NULL, 0) < 0 && errno == EINTR) {
        }
        if (t->fd >= 0) close(t->fd);
        t->pid = 0;
        t->fd = -1;
    }
    c->nrun = 0;
}

static int cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static int run_loop(ctl *c)
{
    int rc = T2_OK;
    while (!rc && !interrupted) {
        if ((rc = schedule(c))) break;
        for (size_t k = 0; k < c->nrun && !rc; k++) rc = feed(c, &c->t[c->run[k]]);
        if (rc) break;
        int running = running_count(c);
        if (running == 0 && (c->shutdown || !next_startable(c)))
            break; /* done, or a searcher with nothing left to ask */
        if ((rc = pump(c))) break;
        if ((rc = t2__store_flush(c->st, 0))) break;
        show(c);
    }
    return rc;
}

/* The checkpoint directory: the one recorded at create (resume), else checkpoint_storage's
 * host_path/storage_path followed by the store id and experiment-<id>, else under the home.
 * Experiments made before the store had an id (recorded == NULL on resume, legacy) keep their
 * old host_path/experiment-<id> directory: a directory two homes may share, so resume never
 * sweeps it. */
static int checkpoint_dir(ctl *c, const char *home, const char *recorded, int legacy)
{
    const t2__config *cfg = c->cfg;
    int n, rc;
    c->ckpt_dir_own = 1;
    if (recorded) {
        n = snprintf(c->ckpt_dir, sizeof c->ckpt_dir, "%s", recorded);
    } else if (cfg->checkpoint_storage.storage_path || cfg->checkpoint_storage.host_path) {
        const char *host = cfg->checkpoint_storage.host_path, *sp = cfg->checkpoint_storage.storage_path;
        char id[33] = "";
        if (sp && sp[0] == '/') host = NULL;
        if (!legacy && (rc = t2__store_id(c->st, id))) return rc;
        c->ckpt_dir_own = !legacy;
        /* The legacy spelling exactly as it was (its recorded paths must match it), "//" and all. */
        char base[PATH_MAX];
        n = snprintf(base, sizeof base, "%s%s%s", host ? host : (sp ? home : ""),
                     host || (sp && sp[0] != '/') ? "/" : "", sp ? sp : "");
        size_t bl = n < 0 ? 0 : strlen(base);
        while (!legacy && bl > 1 && base[bl - 1] == '/') base[--bl] = '\0';
        if (n >= 0 && (size_t)n < sizeof base)
            n = snprintf(c->ckpt_dir, sizeof c->ckpt_dir, "%s%s%s/experiment-%lld", base, legacy ? "" : "/", id,
                         (long long)c->exp_id);
    } else {
        if ((rc = t2__store_experiment_dir(home, c->exp_id, "checkpoints", c->ckpt_dir, sizeof c->ckpt_dir)))
            return rc;
        n = 0;
    }
    if (n < 0 || (size_t)n >= sizeof c->ckpt_dir)
        return t2_seterr(T2_EINVAL, "checkpoint_storage: the checkpoint directory of experiment %lld is longer "
                         "than %zu bytes", (long long)c->exp_id, sizeof c->ckpt_dir - 1);
    if ((rc = t2__mkdirs(c->ckpt_dir))) return rc;
    return recorded || legacy ? T2_OK : t2__store_set_experiment_checkpoint_dir(c->st, c->exp_id, c->ckpt_dir);
}

/* Runs the loop until the search ends or a signal stops it, records the outcome and prints the
 * summary. Returns 0 (all trials completed), 1 (a trial or the experiment failed or it was
 * interrupted) or a negative code when the store itself failed. */
static int run_experiment(ctl *c, int resumed)
{
    const t2__config *cfg = c->cfg;
    int pool = cores();
    if (c->nhosts && cfg->resources.slots_per_trial > 1) {
        /* The hostfile's slots (at most INT_MAX in all: load_hostfile) are the pool for distributed
         * trials (local trials use the cores). */
        pool = 0;
        for (int h = 0; h < c->nhosts; h++) pool += c->hosts[h].slots;
    }
    c->slots = cfg->resources.max_slots > 0 && cfg->resources.max_slots < pool ? (int)cfg->resources.max_slots : pool;
    if (c->slots < cfg->resources.slots_per_trial)
        return t2_seterr(T2_EINVAL, "resources.slots_per_trial = %lld, but the slot pool has %d slot(s)",
                         (long long)cfg->resources.slots_per_trial, c->slots);
    c->capacity = c->slots / (int)cfg->resources.slots_per_trial;
    if (cfg->searcher.max_concurrent_trials > 0 && cfg->searcher.max_concurrent_trials < c->capacity)
        c->capacity = (int)cfg->searcher.max_concurrent_trials;
    if (c->capacity < 1) c->capacity = 1;
    int64_t expected = t2__searcher_total_trials(c->s);
    int concurrent = expected > 0 && expected < c->capacity ? (int)expected : c->capacity;
    c->threads = c->slots / concurrent > 0 ? c->slots / concurrent : 1;

    double t0 = t2__now();
    int rc = T2_OK;
    if (!resumed) rc = t2__searcher_start(c->s, &c->ops);
    if (!rc) rc = apply_and_save(c);
    if (!rc) rc = run_loop(c);
    /* Out of disk space (or over a file-size limit): the experiment pauses, to be resumed once
     * there is space. The failed batch is gone (SQLite rolled it back); emptying the write-ahead
     * log makes room for the few rows that record the pause. */
    int full = rc && t2__store_out_of_space(c->st);
    char full_why[1200] = "";
    if (full) {
        snprintf(full_why, sizeof full_why, "%s", t2_errmsg());
        t2__store_reclaim(c->st);
    }
    if (full) kill_all_quietly(c);
    else if (rc || interrupted) stop_all(c);
    int killed = interrupted == SIGUSR2;
    /* Killed: no trial continues, the ones just stopped (on_exit queued them) and the ones never
     * started alike. */
    for (size_t i = 0; killed && i < c->nt; i++)
        if (c->t[i].state == T_QUEUED && c->t[i].id > 0) {
            int rc3 = store_trial(c, &c->t[i], T2__TU_STATE, T2__TRIAL_CANCELED, NULL);
            if (!rc) rc = rc3;
        }
    t2__progress_finish(&c->prog);

    int completed = 0, errored = 0;
    for (size_t i = 0; i < c->nt; i++) {
        completed += c->t[i].state == T_DONE;
        errored += c->t[i].state == T_ERRORED;
    }
    int final = killed ? T2__EXP_CANCELED
                : interrupted || full ? T2__EXP_PAUSED
                : rc || completed == 0 ? T2__EXP_ERRORED
                                       : T2__EXP_COMPLETED;
    if (full) {
        char why[1400];
        snprintf(why, sizeof why, "paused: the store ran out of space (%s); free some, then t2exp resume %lld", full_why,
                 (long long)c->exp_id);
        t2__store_set_experiment_error(c->st, c->exp_id, why);
        t2_seterr(T2_EIO, "%s", why);
    } else if (rc) {
        char why[1200];
        snprintf(why, sizeof why, "%s", t2_errmsg());
        t2__store_set_experiment_error(c->st, c->exp_id, why);
    } else if (final == T2__EXP_ERRORED) {
        t2__store_set_experiment_error(c->st, c->exp_id, "no trial completed");
    }
    if (final == T2__EXP_COMPLETED) t2__store_set_experiment_progress(c->st, c->exp_id, 1.0);
    /* After a store error the searcher in memory may be ahead of the rows that reached the store
     * (a lost batch): its snapshot would then name trials that do not exist. */
    if (!interrupted && !rc) save_searcher(c);
    int rc2 = t2__store_set_experiment_state(c->st, c->exp_id, final);
    if (!rc2) rc2 = t2__store_flush(c->st, 1);
    FILE *out = c->o->out;
    char best[1100] = "";
    if (!isnan(c->best))
        snprintf(best, sizeof best, "; best %.1000s %.6g (trial %lld, best of all validations)", cfg->searcher.metric,
                 c->best, (long long)c->best_trial);
    t2__progress_line(out, "experiment %lld %s in %.1f s: %d trial(s) completed, %d errored%s", (long long)c->exp_id,
                      t2__exp_state_name(final), t2__now() - t0, completed, errored, best);
    if (final == T2__EXP_PAUSED)
        fprintf(out, "  see: t2exp describe %lld; continue with: t2exp resume %lld\n", (long long)c->exp_id,
                (long long)c->exp_id);
    else
        fprintf(out, "  see: t2exp describe %lld\n", (long long)c->exp_id);
    if (rc) t2__progress_line(out, "  controller error: %s", t2_errmsg());
    if (rc2) return rc2;
    return !rc && final == T2__EXP_COMPLETED && errored == 0 ? 0 : 1;
}

/* The warm start of new trials: --from-checkpoint, else searcher.source_checkpoint (a file, or
 * the uuid of an active checkpoint in this store), else searcher.source_trial_id (that trial's
 * latest checkpoint). It is opened and checked here, so a bad one stops the experiment before a
 * trial runs. */
static int resolve_warm(ctl *c)
{
    const t2__config *cfg = c->cfg;
    const char *src = c->o->from_checkpoint ? c->o->from_checkpoint : cfg->searcher.source_checkpoint;
    const char *what = c->o->from_checkpoint ? "--from-checkpoint" : "searcher.source_checkpoint";
    t2__checkpoint_row row;
    memset(&row, 0, sizeof row);
    int rc = T2_OK;
    if (src) {
        /* A path, a uuid, EXP or EXP.N: the same resolver as export and evaluate. */
        if ((rc = t2__store_resolve_checkpoint(c->st, src, &row))) {
            char why[512];
            snprintf(why, sizeof why, "%s", t2_errmsg());
            return t2_seterr(rc == T2_ENOTFOUND ? T2_EINVAL : rc, "%s: %s", what, why);
        }
        src = row.path;
    } else if (!src && cfg->searcher.source_trial_id > 0) {
        what = "searcher.source_trial_id";
        if ((rc = t2__store_latest_checkpoint(c->st, cfg->searcher.source_trial_id, &row)))
            return rc != T2_ENOTFOUND ? rc
                                      : t2_seterr(T2_EINVAL, "searcher.source_trial_id: trial %lld has no checkpoint",
                                                  (long long)cfg->searcher.source_trial_id);
        src = row.path;
    }
    if (src) {
        /* Every checksum is checked now, so a bad source stops the experiment before it exists,
         * but streamed: memory stays at a few MiB whatever the archive claims (the trials'
         * restore then checks the tensor table against their model before decoding). */
        t2__ckpt *ck = NULL;
        if ((rc = t2__ckpt_stream_params(&ck, src, NULL, NULL))) {
            char why[512];
            snprintf(why, sizeof why, "%s", t2_errmsg());
            rc = t2_seterr(rc, "%s: %s", what, why);
        }
        t2__ckpt_free(ck);
        if (!rc && !(c->warm = strdup(src))) rc = t2_seterr(T2_ENOMEM, "controller: out of memory");
    }
    t2__checkpoint_row_free(&row);
    return rc;
}

static void cleanup(ctl *c)
{
    free(c->warm);
    for (size_t i = 0; i < c->nt; i++) {
        t2__val_free(c->t[i].hparams);
        free(c->t[i].error);
        free(c->t[i].ckpt);
        free(c->t[i].log_path);
        free(c->t[i].report_at);
        free(c->t[i].host_slots);
    }
    free(c->t);
    free(c->run);
    free(c->pf);
    free(c->pf_trial);
    free(c->special);
    free(c->hosts);
    t2__ops_free(&c->ops);
    t2__searcher_free(c->s);
    t2__store_close(c->st);
    t2__trial_so_close(&c->so);
    if (c->listen_fd >= 0) close(c->listen_fd);
}

int t2__experiment_create(const t2__create_opts *o, int64_t *exp_id)
{
    ctl c;
    memset(&c, 0, sizeof c);
    c.listen_fd = -1;
    c.o = o;
    c.cfg = o->cfg;
    c.best = NAN;
    *exp_id = 0;
    const t2__config *cfg = o->cfg;
    int rc;
    char home[PATH_MAX], object[PATH_MAX];
    if ((rc = t2__trial_so_open(o->trial_path, &c.so))) return rc;
    if (!realpath(c.so.path, object)) snprintf(object, sizeof object, "%s", c.so.path);
    if (cfg->resources.slots_per_trial > 1 && !t2__comm_have_mpi()) {
        t2__trial_so_close(&c.so);
        return t2_seterr(T2_EUNSUPPORTED, "resources.slots_per_trial = %lld: distributed trials need MPI, and this "
                         "t2exp was built with -DT2EXP_WITH_MPI=OFF", (long long)cfg->resources.slots_per_trial);
    }
    c.ovr = o->overrides;
    c.novr = o->noverrides;
    saved_signals sigs;
    catch_signals(&sigs);
    if ((rc = t2__store_home(o->home, home, sizeof home)) || (rc = t2__store_open(home, 0, &c.st)) ||
        (rc = resolve_warm(&c)) || (rc = load_hostfile(&c)))
        goto out;
    uint64_t seed = cfg->experiment_seed_set ? cfg->experiment_seed : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    /* The store keeps the config as run: the file as given, and the command line's overrides as
     * data (a JSON array in their own column, which `t2exp resume` applies again exactly, whatever
     * characters they hold). */
    /* --from-checkpoint is kept the same way, as searcher.source_checkpoint with an absolute path
     * (a YAML double-quoted string), so the trials a resume starts warm-start as these did. */
    char warm_ovr[PATH_MAX * 2 + 64] = "";
    if (o->from_checkpoint) {
        char abs[PATH_MAX], *w = warm_ovr;
        if (!realpath(c.warm, abs)) snprintf(abs, sizeof abs, "%s", c.warm);
        w += sprintf(w, "searcher.source_checkpoint=\"");
        for (const char *p = abs; *p; p++) {
            if (*p == '"' || *p == '\\') *w++ = '\\';
            *w++ = *p;
        }
        strcpy(w, "\"");
    }
    t2__experiment_new e = {.name = cfg->name, .description = cfg->description, .config_yaml = cfg->yaml_text,
                            .searcher_name = t2__searcher_name(cfg->searcher.name), .metric = cfg->searcher.metric,
                            .smaller_is_better = cfg->searcher.smaller_is_better, .trial_object = object,
                            .seed = (int64_t)seed};
    char *labels = NULL, *ovr_json = NULL;
    t2__val *lv = t2__val_list(), *ov = t2__val_list();
    for (size_t i = 0; lv && i < cfg->nlabels; i++) t2__val_list_append(lv, t2__val_string(cfg->labels[i]));
    for (int i = 0; ov && i < o->noverrides; i++)
        if (t2__val_list_append(ov, t2__val_string(o->overrides[i]))) break;
    if (ov && warm_ovr[0]) t2__val_list_append(ov, t2__val_string(warm_ovr));
    size_t len;
    if (lv && t2__val_to_json(lv, &labels, &len) == T2_OK) e.labels_json = labels;
    /* Every override must be kept, or resume would run another experiment. */
    if (!ov || ov->n != (size_t)o->noverrides + (warm_ovr[0] != '\0') || t2__val_to_json(ov, &ovr_json, &len))
        rc = t2_seterr(T2_ENOMEM, "controller: out of memory");
    e.overrides_json = ovr_json;
    t2__val_free(lv);
    t2__val_free(ov);
    if (!rc) rc = t2__store_create_experiment(c.st, &e, &c.exp_id);
    free(labels);
    free(ovr_json);
    if (rc) goto out;
    *exp_id = c.exp_id;
    char dir[PATH_MAX];
    if ((rc = t2__store_experiment_dir(home, c.exp_id, NULL, dir, sizeof dir)) || (rc = t2__mkdirs(dir)) ||
        (rc = checkpoint_dir(&c, home, NULL, 0)) || (rc = t2__store_flush(c.st, 1)))
        goto out;
    if ((rc = t2__store_set_controller(c.st, c.exp_id, 1))) goto out;
    c.recorded = 1;
    if (o->on_started) o->on_started(o->on_started_arg, c.exp_id);

    t2__progress_init(&c.prog, o->progress, o->out, cfg->searcher.metric);
    t2__progress_line(o->out, "experiment %lld (%s): %s search on %s, metric %s (%s is better), seed %llu",
                      (long long)c.exp_id, cfg->name, t2__searcher_name(cfg->searcher.name), object,
                      cfg->searcher.metric, cfg->searcher.smaller_is_better ? "smaller" : "larger",
                      (unsigned long long)seed);
    if (c.so.def->prepare_data) {
        t2_ctx pctx;
        /* prepare_data sees the data section only; hparams belong to trials. */
        t2__ctx_init(&pctx, cfg, NULL, 0, 0, 0, seed, cores());
        if ((rc = c.so.def->prepare_data(&pctx))) {
            char why[1200];
            snprintf(why, sizeof why, "prepare_data: %s", t2_errmsg());
            t2__store_set_experiment_error(c.st, c.exp_id, why);
            t2__store_set_experiment_state(c.st, c.exp_id, T2__EXP_ERRORED);
            t2__progress_line(o->out, "experiment %lld errored: %s", (long long)c.exp_id, why);
            rc = 1;
            goto out;
        }
    }
    if ((rc = t2__searcher_create(cfg, seed, &c.s))) goto out;
    rc = run_experiment(&c, 0);
out:
    rc = end_controller(&c, rc);
    restore_signals(&sigs);
    cleanup(&c);
    return rc;
}

/* Rebuilds the controller's trial table from the store and the saved controller state. */
static int restore_trials(ctl *c, const t2__val *saved)
{
    t2__trial_row *rows = NULL;
    size_t n = 0;
    int rc = t2__store_list_trials(c->st, c->exp_id, &rows, &n);
    const t2__val *trials = saved ? t2__val_map_get(saved, "trials") : NULL;
    for (size_t i = 0; !rc && i < n; i++) {
        if (c->nt == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 16;
            trial *g = realloc(c->t, cap * sizeof *g);
            if (!g) {
                rc = t2_seterr(T2_ENOMEM, "controller: out of memory");
                break;
            }
            c->t = g;
            c->cap = cap;
        }
        trial *t = &c->t[c->nt];
        memset(t, 0, sizeof *t);
        size_t off;
        if ((rc = t2__val_from_json(rows[i].hparams_json, strlen(rows[i].hparams_json), &t->hparams, &off))) break;
        c->nt++;
        t->rid = rows[i].ordinal;
        t->id = rows[i].id;
        t->seed = (uint64_t)rows[i].seed;
        t->fd = -1;
        t->pending = t->sent = -1;
        t->restarts = rows[i].restarts;
        t->batches = rows[i].batches_trained;
        /* The op a paused trial continues is the one it had, so its target is known before its
         * runner reports the epoch length (progress showed "6386/0 batches" until then). */
        t->target = rows[i].target_length_batches;
        t->metric = rows[i].latest_validation;
        t->loss = NAN;
        t->gb = 1;
        t2__config_batch_sizes(c->cfg, t->hparams, &t->gb, NULL);
        if (!(t->log_path = strdup(rows[i].log_path ? rows[i].log_path : "/dev/null"))) {
            rc = t2_seterr(T2_ENOMEM, "controller: out of memory");
            break;
        }
        if (!isnan(rows[i].best_validation) && better(c, rows[i].best_validation, c->best)) {
            c->best = rows[i].best_validation;
            c->best_trial = t->id;
        }
        t->state = T_QUEUED;
        int st = rows[i].state == T2__TRIAL_COMPLETED ? T_DONE : rows[i].state == T2__TRIAL_ERRORED ? T_ERRORED : T_QUEUED;
        t2__checkpoint_row ck;
        if (t2__store_latest_checkpoint(c->st, t->id, &ck) == T2_OK) {
            t->ckpt = strdup(ck.path);
            t2__checkpoint_row_free(&ck);
        }
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)t->rid);
        const t2__val *e = trials ? t2__val_map_get(trials, key) : NULL;
        const t2__val *pend = e ? t2__val_map_get(e, "pending") : NULL, *cl = e ? t2__val_map_get(e, "closing") : NULL;
        if (st == T_QUEUED) { /* not listed: waiting for max_length (see save_searcher) */
            t->pending = !e ? c->cfg->searcher.max_length.n : pend && pend->kind == T2__VAL_INT ? pend->i : -1;
            t->closing = cl && cl->kind == T2__VAL_BOOL && cl->b;
        }
        t->state = -1; /* so that set_state counts it */
        if ((rc = set_state(c, t, st))) break;
    }
    t2__trial_rows_free(rows, n);
    /* A closed trial with nothing left to do finished while the controller was gone. */
    for (size_t i = 0; !rc && i < c->nt; i++) {
        trial *t = &c->t[i];
        if (t->state == T_QUEUED && t->closing && t->pending < 0) {
            set_state(c, t, T_DONE);
            rc = store_trial(c, t, T2__TU_STATE, T2__TRIAL_COMPLETED, NULL);
            if (!rc) rc = t2__searcher_on_trial_exited(c->s, t->rid, &c->ops);
        }
    }
    return rc;
}

/* Checkpoint files the store does not know as ACTIVE: written by a runner after its controller
 * died (never recorded), or temporaries left by a write cut short. They can never be used. Only
 * in a directory that is this store's alone, and only names this store's runners write
 * (<uuid>.tar[.gz|.zst] and their .tmp-<pid>-<n>): anything else there is someone else's. */
static int sweep_orphans(ctl *c)
{
    if (!c->ckpt_dir_own) return T2_OK;
    t2__checkpoint_row *rows = NULL;
    size_t n = 0;
    int rc = t2__store_list_checkpoints(c->st, c->exp_id, 0, &rows, &n);
    if (rc) return rc;
    DIR *d = opendir(c->ckpt_dir);
    struct dirent *e;
    char path[PATH_MAX + 256], uuid[T2__UUID_LEN + 1];
    while (d && (e = readdir(d))) {
        int ckpt = t2__ckpt_name_parse(e->d_name, uuid, NULL);
        if (!ckpt && !t2__ckpt_temp_name(e->d_name)) continue;
        snprintf(path, sizeof path, "%s/%s", c->ckpt_dir, e->d_name);
        int known = 0;
        for (size_t i = 0; ckpt && i < n && !known; i++) known = !rows[i].deleted && strcmp(rows[i].uuid, uuid) == 0;
        struct stat sb;
        if (known || lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
        if (unlink(path) == 0) t2__progress_event(&c->prog, "removed unrecorded checkpoint file %s", path);
    }
    if (d) closedir(d);
    t2__checkpoint_rows_free(rows, n);
    return T2_OK;
}

int t2__experiment_overrides(t2__experiment_row *row, const char *const *extra, int nextra, const char ***out,
                             int *n, t2__val **doc)
{
    size_t count = (size_t)nextra, off;
    char *mark = NULL;
    if (row->overrides_json) {
        int rc = t2__val_from_json(row->overrides_json, strlen(row->overrides_json), doc, &off);
        if (rc || (*doc)->kind != T2__VAL_LIST)
            return rc ? rc : t2_seterr(T2_EFORMAT, "experiment %lld: stored overrides are not a list", (long long)row->id);
        for (size_t i = 0; i < (*doc)->n; i++)
            if ((*doc)->items[i]->kind != T2__VAL_STRING)
                return t2_seterr(T2_EFORMAT, "experiment %lld: stored override %zu is not a string", (long long)row->id, i);
        count += (*doc)->n;
    } else if ((mark = strstr(row->config_yaml, T2__OVERRIDES_MARK))) {
        for (const char *p = strstr(mark, T2__OVERRIDE_PREFIX); p; p = strstr(p + 1, T2__OVERRIDE_PREFIX)) count++;
    }
    if (count > INT_MAX) return t2_seterr(T2_EINVAL, "experiment %lld: too many overrides", (long long)row->id);
    const char **v = malloc((count ? count : 1) * sizeof *v);
    if (!v) return t2_seterr(T2_ENOMEM, "resume: out of memory");
    int k = 0;
    for (size_t i = 0; *doc && i < (*doc)->n; i++) v[k++] = (*doc)->items[i]->s;
    for (char *p = mark ? strstr(mark, T2__OVERRIDE_PREFIX) : NULL; p; p = strstr(p, T2__OVERRIDE_PREFIX)) {
        p += strlen(T2__OVERRIDE_PREFIX);
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        v[k++] = p;
        if (!nl) break;
        p = nl + 1;
    }
    for (int i = 0; i < nextra; i++) v[k++] = extra[i];
    *out = v;
    *n = k;
    return T2_OK;
}

int t2__experiment_resume(const t2__resume_opts *o)
{
    ctl c;
    memset(&c, 0, sizeof c);
    c.listen_fd = -1;
    c.best = NAN;
    c.exp_id = o->experiment_id;
    t2__create_opts co = {.home = o->home, .progress = o->progress, .out = o->out};
    c.o = &co;
    char home[PATH_MAX];
    t2__experiment_row row;
    memset(&row, 0, sizeof row);
    t2__config *cfg = NULL;
    t2__val *saved = NULL, *ovr_doc = NULL;
    char *state_json = NULL;
    const char **ovr = NULL;
    int rc, novr = 0;
    long pid = 0;
    saved_signals sigs;
    catch_signals(&sigs);
    if ((rc = t2__store_home(o->home, home, sizeof home)) || (rc = t2__store_open(home, 0, &c.st))) goto out;
    if ((rc = t2__store_get_experiment(c.st, c.exp_id, &row))) goto out;
    if (row.state == T2__EXP_COMPLETED) {
        rc = t2_seterr(T2_ESTATE, "experiment %lld is already COMPLETED; nothing to resume", (long long)c.exp_id);
        goto out;
    }
    /* Two controllers of one experiment would run every trial twice. */
    if ((rc = t2__store_controller(c.st, c.exp_id, &pid)) == 1) {
        rc = t2_seterr(T2_ESTATE, "experiment %lld is running (controller pid %ld); pause or kill it first",
                       (long long)c.exp_id, pid);
        goto out;
    }
    if (rc) goto out;
    if ((rc = t2__experiment_overrides(&row, o->overrides, o->noverrides, &ovr, &novr, &ovr_doc))) goto out;
    char name[64];
    snprintf(name, sizeof name, "experiment %lld config", (long long)c.exp_id);
    if ((rc = t2__config_load_string(row.config_yaml, name, ovr, novr, &cfg))) goto out;
    c.cfg = cfg;
    co.cfg = cfg;
    c.ovr = ovr;
    c.novr = novr;
    if ((rc = t2__trial_so_open(o->trial_path ? o->trial_path : row.trial_object, &c.so))) goto out;
    if ((rc = checkpoint_dir(&c, home, row.checkpoint_dir, row.checkpoint_dir == NULL)) || (rc = resolve_warm(&c)) ||
        (rc = load_hostfile(&c)))
        goto out;
    if ((rc = t2__searcher_create(cfg, (uint64_t)row.seed, &c.s))) goto out;
    int fresh = 0; /* the experiment never got its searcher going: start it now */
    if (t2__store_load_searcher_state(c.st, c.exp_id, NULL, &state_json) == T2_OK) {
        size_t off;
        if ((rc = t2__val_from_json(state_json, strlen(state_json), &saved, &off))) goto out;
        const t2__val *ss = t2__val_map_get(saved, "searcher");
        if (!ss || (rc = t2__searcher_restore(c.s, ss))) {
            if (!rc) rc = t2_seterr(T2_EFORMAT, "experiment %lld: the saved searcher state is unreadable", (long long)c.exp_id);
            goto out;
        }
    } else if (row.num_trials == 0) {
        /* Its first commit (the searcher's first trials with the snapshot after them) never
         * happened, e.g. the disk was full: nothing ran, so the search starts from the beginning. */
        fresh = 1;
    } else {
        rc = t2_seterr(T2_ENOTFOUND, "experiment %lld has no saved searcher state to resume from", (long long)c.exp_id);
        goto out;
    }
    t2__progress_init(&c.prog, o->progress, o->out, cfg->searcher.metric);
    if ((rc = restore_trials(&c, saved)) || (rc = sweep_orphans(&c))) goto out;
    if ((rc = t2__store_set_experiment_state(c.st, c.exp_id, T2__EXP_ACTIVE)) ||
        (rc = t2__store_set_experiment_error(c.st, c.exp_id, NULL)) || (rc = t2__store_set_controller(c.st, c.exp_id, 1)))
        goto out;
    c.recorded = 1;
    if (o->on_started) o->on_started(o->on_started_arg, c.exp_id);
    t2__progress_line(o->out, "experiment %lld (%s): resuming %s search, %zu trial(s) known", (long long)c.exp_id,
                      cfg->name, t2__searcher_name(cfg->searcher.name), c.nt);
    rc = run_experiment(&c, !fresh);
out:
    rc = end_controller(&c, rc);
    restore_signals(&sigs);
    cleanup(&c);
    t2__experiment_row_free(&row);
    t2__val_free(saved);
    free(state_json);
    free(ovr);
    t2__val_free(ovr_doc);
    t2__config_free(cfg);
    return rc;
}
