/* runner.c — the training loop: build the trial, then for every train op run batches to the
 * target, report training metrics every scheduling_unit batches, validate every
 * min_validation_period and at the op's end, and report. Any failure becomes one "error" message
 * naming the callback and the reason; the controller decides what happens to the trial. */
#define _XOPEN_SOURCE 700 /* sigaltstack, SA_ONSTACK */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "channel.h"
#include "protocol/protocol.h"
#include "checkpoints/ckpt.h"
#include "ctx.h"
#include "metrics.h"
#include "parallel.h"
#include "runner.h"
#include "t2exp/blas.h"
#include "nn/conv_direct.h"
#include "blas_core.h"
#include "t2exp/nn.h"
#include "internal.h"

/* SIGTERM asks the runner to finish its batch, checkpoint and leave (the controller pauses). */
static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t worker_idle; /* a worker between trials: the default action */
static void on_term(int sig)
{
    if (worker_idle) {
        signal(sig, SIG_DFL); /* async-signal-safe, as raise is; delivered when this returns */
        raise(sig);
        return;
    }
    stop_requested = 1;
}

/* The reports a worker's runner holds (send_msg), for on_fatal: a trial that crashes must not take
 * its last reports with it (the batches it trained, a checkpoint it wrote). held_lock is 1 while
 * a report is added or the buffer is written out (it may hold half a frame, or be moved), and
 * on_fatal writes only when it takes the lock itself; held_pid keeps a child the trial forked
 * (fork copies the buffer) from sending the reports its parent will send. */
static t2__chan_writer *volatile held;
static volatile int held_fd = -1;
static volatile pid_t held_pid;
static atomic_int held_lock;
static const int FATAL[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static struct sigaction fatal_before[sizeof FATAL / sizeof FATAL[0]];
static void *alt_stack; /* on_fatal's stack: a stack overflow leaves none of its own */

/* Only the runner's thread takes it; another holder is a crashing thread's on_fatal, which ends
 * the process. */
static void held_take(void)
{
    while (atomic_exchange(&held_lock, 1)) sched_yield();
}

static void held_give(void) { atomic_store(&held_lock, 0); }

void t2__runner_held_clear(void)
{
    held_take();
    held = NULL;
    held_give();
}

/* A fatal signal: what is held goes out (write is async-signal-safe), then the signal gets the
 * action it had before ours (the default, or a sanitizer's), as if we had not been there. */
static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved = errno;
    t2__chan_writer *w = held;
    if (w && held_fd >= 0 && held_pid == getpid() && !atomic_exchange(&held_lock, 1)) {
        for (size_t off = 0; off < w->len;) {
            ssize_t n = write(held_fd, w->buf + off, w->len - off);
            if (n <= 0 && errno == EINTR) continue;
            if (n <= 0) break;
            off += (size_t)n;
        }
        w->len = 0; /* the lock stays taken: the process is ending */
    }
    for (size_t i = 0; i < sizeof FATAL / sizeof FATAL[0]; i++)
        if (FATAL[i] == sig) sigaction(sig, &fatal_before[i], NULL);
    /* A fault comes again when the instruction runs again; a sent signal (kill, raise, abort) is
     * sent again, pending until this returns. */
    if (si->si_code <= 0) raise(sig);
    errno = saved;
}

static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL); /* what mpirun forwards to every rank at once (see trial_mpi.c) */
    /* A file-size limit must fail the checkpoint write (reported, trial goes on), not kill us. */
    signal(SIGXFSZ, SIG_IGN);
    /* An alternate stack unless one is set (a sanitizer's): on a stack overflow the kernel could
     * not run on_fatal on the stack that overflowed. */
    stack_t cur_stack;
    if (!alt_stack && sigaltstack(NULL, &cur_stack) == 0 && (cur_stack.ss_flags & SS_DISABLE)) {
        enum { ALT_STACK = 64 * 1024 };
        stack_t ss = {.ss_sp = malloc(ALT_STACK), .ss_size = ALT_STACK, .ss_flags = 0};
        if (ss.ss_sp && sigaltstack(&ss, NULL) == 0) alt_stack = ss.ss_sp;
        else free(ss.ss_sp); /* without it a stack overflow loses the held reports, as before */
    }
    struct sigaction fa;
    memset(&fa, 0, sizeof fa);
    fa.sa_sigaction = on_fatal;
    fa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&fa.sa_mask);
    for (size_t i = 0; i < sizeof FATAL / sizeof FATAL[0]; i++) {
        struct sigaction cur;
        if (sigaction(FATAL[i], NULL, &cur) == 0 && cur.sa_sigaction != on_fatal &&
            sigaction(FATAL[i], &fa, NULL) == 0)
            fatal_before[i] = cur;
    }
}

void t2__runner_signals_install(void)
{
    worker_idle = 1;
    install_handlers();
}

void t2__runner_signals_trial(int running)
{
    if (running) {
        stop_requested = 0;
        t2__process_state_reset(); /* the mask, timer, umask, limit an earlier trial left (process_state.c) */
        /* The handler is the framework's, not the trial's: one an earlier trial of this worker
         * replaced (a library's own, SIG_IGN) would take every later trial's pause request away,
         * leaving them to the controller's 60 s grace. One system call a trial to look. */
        struct sigaction cur;
        if (sigaction(SIGTERM, NULL, &cur) == 0 && cur.sa_handler != on_term) install_handlers();
    }
    worker_idle = !running;
    if (running) held_pid = getpid();
    else t2__runner_held_clear(); /* the worker's writer outlives the trial, but is no longer its */
}

/* How long a worker's runner may hold a report before it goes out though nothing waits. */
#define HOLD_S 0.005

/* Everything held for the controller goes out now (a worker's runner holds its reports: a
 * one-batch trial's ready, metrics, metrics and done went out as four writes, each a wake-up of
 * the controller, and now as one). */
static int flush_reports(const t2__runner_args *a)
{
    if (!a->wr || !a->wr->len) return T2_OK;
    held_take();
    int rc = t2__chan_writer_flush(a->wr, a->fd);
    held_give();
    return rc;
}

/* What has been held HOLD_S or longer goes out now, though nothing waits. */
static int flush_overdue(const t2__runner_args *a)
{
    return a->wr && a->wr->len && t2__now() - a->wr->since >= HOLD_S ? flush_reports(a) : T2_OK;
}

/* Only rank 0 talks to the controller; the other ranks' reports are dropped. With a writer the
 * report is held until the runner waits for the controller (chan_recv), or HOLD_S at most. */
static int send_msg(const t2__runner_args *a, const t2__comm *c, const t2__msg *m)
{
    if (c->rank != 0) return T2_OK;
    if (!a->wr) return t2__msg_send(a->fd, m);
    held_take();
    held_fd = a->fd;
    held = a->wr;
    int rc = t2__msg_put(a->wr, m);
    held_give();
    if (rc) return rc;
    /* A checkpoint's report goes out at once: were the process killed (SIGKILL, the OOM killer)
     * before it went, the file would be there and the store would not know it, and a restart
     * would go back to the checkpoint before. Rare, so no cost. */
    int now = m->kind == T2__MSG_CHECKPOINT || m->kind == T2__MSG_CHECKPOINT_FAILED;
    return now ? flush_reports(a) : flush_overdue(a);
}

int64_t t2__length_to_batches(t2__unit unit, int64_t n, int64_t global_batch, int64_t batches_per_epoch)
{
    /* Without overflow: the config caps its lengths, a custom searcher's need not be; a length
     * past INT64_MAX batches is INT64_MAX (never reached), not a wrapped negative one. */
    switch (unit) {
    case T2__UNIT_RECORDS: return global_batch > 0 ? n / global_batch + (n % global_batch != 0) : n;
    case T2__UNIT_EPOCHS:
        return batches_per_epoch > 0 && n > INT64_MAX / batches_per_epoch ? INT64_MAX : n * batches_per_epoch;
    default: return n;
    }
}

typedef struct {
    const t2__runner_args *a;
    t2_ctx ctx;
    void *state;
    t2_loader *train, *valid;
    t2_metrics tm, vm;
    int64_t batches_per_epoch, vperiod, cperiod, report_every;
    int64_t last_checkpoint; /* batches_trained at the last checkpoint (-1: none) */
    double last_metric;      /* searcher metric of the last validation (NAN: none) */
    int64_t last_validated; /* batches_trained at the last validation (-1: none) */
    int pruned;             /* searcher.pruner stopped the trial at its last validation */
    double t_data, t_compute, t_comm, t_window; /* the window's time split (t_comm within compute) */
    int64_t window_batches, window_samples;
    int64_t *report_at;      /* steps where an earlier run of this trial closed a training window */
    size_t nreport_at, next_report; /* (ascending; next_report: the first not yet passed) */
    char blas[512]; /* t2_blas_line(), taken once: the log's first line and the ready message's */
    t2__msg stash;  /* a message read between batches that is not a threads message (stashed) */
    int stashed;
} run;

/* The BLAS line with conv2d's kernels, which change the numbers as much as the BLAS core does.
 * Made once a thread and kept while the two variables it reads stay as they were (the rest is
 * fixed for the process: the library, its core, the CPU): a worker's every trial asked OpenBLAS
 * and formatted it anew, a tenth of a one-batch trial's instructions (callgrind). */
static void kernels_line(char *buf, size_t len)
{
    static _Thread_local char line[512], core[128], chosen[256];
    static _Thread_local int made;
    const char *c = getenv("OPENBLAS_CORETYPE"), *h = getenv(T2__BLAS_CHOSEN_ENV);
    if (!made || strcmp(core, c ? c : "") != 0 || strcmp(chosen, h ? h : "") != 0 ||
        (c && strlen(c) >= sizeof core) || (h && strlen(h) >= sizeof chosen)) {
        if (t2_blas_line(line, sizeof line) != T2_OK) line[0] = '\0';
        if (line[0]) {
            size_t used = strlen(line);
            snprintf(line + used, sizeof line - used, "; conv2d: %s", t2__conv_direct_kernels());
        }
        snprintf(core, sizeof core, "%s", c ? c : "");
        snprintf(chosen, sizeof chosen, "%s", h ? h : "");
        made = 1;
    }
    size_t n = strlen(line);
    if (n >= len) n = len - 1;
    memcpy(buf, line, n);
    buf[n] = '\0';
}

/* A new thread count from the controller, taken at a batch boundary: the parts stay, so only the
 * speed changes. */
static int set_threads(run *r, int64_t n)
{
    if (n == r->ctx.threads) return T2_OK;
    int rc = t2_set_num_threads((int)n);
    if (rc) return rc;
    printf("threads %d -> %d at batch %lld\n", r->ctx.threads, (int)n, (long long)r->ctx.batches_trained);
    fflush(stdout);
    r->ctx.threads = (int)n;
    return T2_OK;
}

static int stop_while_idle(run *r);

/* The next message from the controller, waiting for it; through the worker's buffered reader
 * when there is one (one read takes an assign's train, or an exit, with what came before). */
static int chan_recv(const t2__runner_args *a, t2__msg *m)
{
    /* About to wait: what the controller is to answer must be out first. */
    if (!(a->rd && t2__chan_reader_has_frame(a->rd))) {
        int rc = flush_reports(a);
        if (rc) return rc;
    }
    if (!a->rd) return t2__msg_recv(a->fd, m);
    for (;;) {
        int got, rc = t2__msg_recv_buffered(a->rd, a->fd, 1, m, &got);
        if (rc || got) return rc; /* else a frame in part: the next read waits for the rest */
    }
}

/* 1 if a message from the controller is there to read now (buffered, or on the channel),
 * waiting up to wait_ms for one. */
static int chan_ready(const t2__runner_args *a, int wait_ms)
{
    if (a->rd && t2__chan_reader_has_frame(a->rd)) return 1;
    if (wait_ms != 0 && flush_reports(a)) return -1; /* about to wait: the reports go first */
    struct pollfd pf = {.fd = a->fd, .events = POLLIN};
    return poll(&pf, 1, wait_ms);
}

/* A stop message (protocol.h) is the controller's SIGTERM by another road: the same flag. */
static int take_stop(t2__msg *m)
{
    if (m->kind != T2__MSG_STOP) return 0;
    t2__msg_free(m);
    stop_requested = 1;
    return 1;
}

/* Rank 0's next message from the controller, threads and stop messages applied on the way (they
 * come at any time). idle: waiting for an op, when a stop ends the wait (kind NONE). */
static int recv_msg(run *r, t2__msg *m, int idle)
{
    for (;;) {
        int rc = T2_OK;
        if (r->stashed) {
            *m = r->stash;
            memset(&r->stash, 0, sizeof r->stash);
            r->stashed = 0;
        } else if (idle && stop_while_idle(r)) {
            memset(m, 0, sizeof *m);
            return T2_OK;
        } else if ((rc = chan_recv(r->a, m))) {
            return rc;
        }
        if (take_stop(m)) continue; /* idle: the next round returns the stop */
        if (m->kind != T2__MSG_THREADS) return T2_OK;
        rc = set_threads(r, m->u.threads.threads);
        t2__msg_free(m);
        if (rc) return rc;
    }
}

/* Between batches: reads what the controller has sent, without waiting. A threads or stop
 * message is applied now; anything else waits in the stash for the reader it belongs to.
 * Distributed trials keep their count (the controller sends them none); their rank 0 looks for a
 * stop here, the other ranks have no channel and learn it from rank 0's broadcast. */
static int poll_threads(run *r)
{
    int rc = flush_overdue(r->a);
    if (rc) return rc;
    if (r->a->fd < 0) return T2_OK;
    while (!r->stashed) {
        if (chan_ready(r->a, 0) <= 0) return T2_OK;
        t2__msg m;
        if ((rc = chan_recv(r->a, &m))) return rc;
        if (take_stop(&m)) continue;
        if (m.kind != T2__MSG_THREADS) {
            r->stash = m;
            r->stashed = 1;
            return T2_OK;
        }
        rc = set_threads(r, m.u.threads.threads);
        t2__msg_free(&m);
        if (rc) return rc;
    }
    return T2_OK;
}

/* Failures that can never succeed, which the controller does not restart: hyperparameters the
 * trial or the runner calls invalid (T2_EHPARAM, Determined's InvalidHP), and two mistakes the
 * runner itself finds after a whole training period (the searcher metric never reported, a
 * training loader that does not repeat). Everything else is restarted up to max_restarts, as
 * Determined does: build_model and the loaders fail for reasons that pass (a file not there yet,
 * memory, a flaky filesystem) as well as for bugs. */
static int deterministic(const char *where, int rc)
{
    if (rc == T2_EHPARAM || !strcmp(where, "hyperparameters") || !strcmp(where, "training loader")) return 1;
    /* The searcher metric never reported; evaluate_end reading a metric the pass lacks, or adding
     * one it has: the same code fails the same way after every restart. */
    if (!strcmp(where, "evaluate_end")) return rc == T2_ENOTFOUND || rc == T2_EINVAL;
    return !strncmp(where, "evaluate_batch", 14) && rc == T2_ENOTFOUND;
}

int t2__runner_fd_closed(int fd) { return fd >= 0 && fcntl(fd, F_GETFD) == -1 && errno == EBADF; }

/* Reports the failure (an error message) and returns 1, the runner's exit status for a failed
 * trial; T2__RUNNER_CHANNEL_CLOSED when the channel failed because its descriptor was closed. */
static int fail(run *r, const char *where, int rc)
{
    char msg[1200];
    t2__fmt_fit(msg, sizeof msg, "%s", t2_errmsg()[0] ? t2_errmsg() : t2_strerror(rc));
    fprintf(stderr, "t2exp runner: trial %lld failed in %s: %s\n", (long long)r->a->trial_id, where, msg);
    fflush(stderr);
    t2__msg m = {.kind = T2__MSG_ERROR,
                 .u.error = {.where = where, .message = msg, .batches = r->ctx.batches_trained,
                             .invalid_hparams = rc == T2_EHPARAM, .fatal = deterministic(where, rc)}};
    /* The exit status says it failed whatever happens to this report; its stderr line says why. */
    if (!strcmp(where, "channel") && t2__runner_fd_closed(r->a->fd)) return T2__RUNNER_CHANNEL_CLOSED;
    if (send_msg(r->a, &r->ctx.comm, &m)) t2_clearerr();
    return 1;
}

/* The metrics with data as a map of name -> value; NULL when out of memory. */
static t2__val *values_of(const t2_metrics *m)
{
    t2__val *v = t2__val_map();
    for (int i = 0; v && i < m->n; i++)
        if (m->acc[i].count && t2__val_map_set(v, m->acc[i].name, t2__val_double(t2__metrics_value(m, i)))) {
            t2__val_free(v);
            v = NULL;
        }
    return v;
}

/* Combines every rank's accumulators so rank 0 reports the trial's metric: MEAN weighted by each
 * rank's samples (the seeds' average_accuracy), SUM summed, MIN/MAX over ranks. All ranks call it
 * at the same points; they must report the same metric names in the same order. */
static int reduce_metrics(run *r, t2_metrics *m)
{
    t2__comm *c = &r->ctx.comm;
    if (c->size <= 1) return T2_OK;
    char names[4096] = "";
    size_t off = 0;
    for (int i = 0; i < m->n && off < sizeof names; i++)
        off += (size_t)snprintf(names + off, sizeof names - off, "%s/%d;", m->acc[i].name, (int)m->acc[i].reducer);
    int rc = t2__comm_agree(c, names, strlen(names), "metric names");
    if (rc || m->n == 0) return rc;
    /* The report counts go along with the sums (as sums, in the weights' second half): a metric
     * one rank did not report in this pass must count as reported on every rank, or a rank would
     * see it missing where the others see it (t2_metrics_get, evaluate_end, the searcher metric). */
    size_t n = (size_t)m->n;
    double *v = malloc(6 * n * sizeof *v);
    if (!v) return t2_seterr(T2_ENOMEM, "runner: out of memory");
    double *sum = v, *w = v + 2 * n, *mn = v + 4 * n, *mx = v + 5 * n;
    for (size_t i = 0; i < n; i++) {
        sum[i] = m->acc[i].sum;
        sum[n + i] = (double)m->acc[i].count;
        w[i] = m->acc[i].weight;
        w[n + i] = 0.0;
        mn[i] = m->acc[i].min;
        mx[i] = m->acc[i].max;
    }
    rc = t2__comm_allreduce_weighted(c, sum, w, 2 * n);
    if (!rc) rc = t2__comm_allreduce_minmax(c, mn, mx, n);
    for (size_t i = 0; !rc && i < n; i++) {
        m->acc[i].sum = sum[i];
        m->acc[i].count = (int64_t)llround(sum[n + i]);
        m->acc[i].weight = w[i];
        m->acc[i].min = mn[i];
        m->acc[i].max = mx[i];
    }
    free(v);
    return rc;
}

/* Batchnorm running statistics drift apart per rank; their mean is the trial's, taken after every
 * training batch (as DDP broadcasts buffers at every forward): every rank then validates with the
 * statistics a checkpoint saves and `t2exp evaluate` restores (each validated with its own before,
 * 0.0746 against the recorded 0.0820), and a pause's checkpoint changes nothing a later batch sees
 * (it averaged them at the pause only, so a paused run's numbers drifted from an uninterrupted
 * one's). Only there: the mean of equal values over 3 ranks may not give them back exactly. */
static int sync_buffers(run *r)
{
    size_t n = 0;
    float *b = r->ctx.net && r->ctx.comm.size > 1 ? t2_net_buffers(r->ctx.net, &n) : NULL;
    return b && n ? t2__comm_allreduce_mean(&r->ctx.comm, b, n) : T2_OK;
}

/* timing: the training window's (NULL for validation); ask: the runner waits for the controller's
 * validated (checkpoint_policy best, searcher.pruner). */
static int send_metrics(run *r, int validation, const t2_metrics *m, const t2__msg_timing *timing, int ask)
{
    /* Each value was finite (t2_metric refuses the others); a reduced one that is not overflowed
     * on the way (a sum of huge values): named here, not "json: cannot write inf" later. */
    for (int i = 0; i < m->n; i++) {
        double v = m->acc[i].count ? t2__metrics_value(m, i) : 0.0;
        if (!isfinite(v))
            return t2_seterr(T2_ENUMERIC, "metric %s: its %s over the %s is %g: its values overflowed a double when "
                             "combined (report it scaled down)", m->acc[i].name,
                             m->acc[i].reducer == T2_REDUCE_SUM ? "sum" : "mean", validation ? "validation pass" : "window", v);
    }
    t2__val *values = values_of(m);
    if (!values) return t2_seterr(T2_ENOMEM, "runner: out of memory");
    t2__msg msg = {.kind = T2__MSG_METRICS,
                   .u.metrics = {.validation = validation, .batches = r->ctx.batches_trained,
                                 .epoch = r->batches_per_epoch > 0
                                              ? (double)r->ctx.batches_trained / (double)r->batches_per_epoch
                                              : 0.0,
                                 .values = values, .has_timing = timing != NULL, .ask = ask}};
    if (timing) msg.u.metrics.timing = *timing;
    int rc = send_msg(r->a, &r->ctx.comm, &msg);
    t2__val_free(values);
    return rc;
}

/* The training-metrics report for the window just ended, with throughput and the time split. */
static int report_training(run *r)
{
    int rrc = reduce_metrics(r, &r->tm);
    if (rrc) return rrc;
    double elapsed = t2__now() - r->t_window, comm = r->t_comm;
    t2__msg_timing x = {.batches_per_s = elapsed > 0 ? r->window_batches / elapsed : 0.0,
                        .samples_per_s = elapsed > 0 ? r->window_samples / elapsed : 0.0,
                        .data_s = r->t_data, .compute_s = r->t_compute - comm, .comm_s = comm};
    int rc = send_metrics(r, 0, &r->tm, &x, 0);
    if (r->ctx.comm.rank == 0)
        printf("batches %lld: %d training metrics, %.1f batches/s, data %.2fs compute %.2fs comm %.2fs\n",
           (long long)r->ctx.batches_trained, r->tm.n, elapsed > 0 ? r->window_batches / elapsed : 0.0, r->t_data,
           r->t_compute - comm, comm);
    fflush(stdout);
    t2__metrics_reset(&r->tm);
    r->t_data = r->t_compute = 0.0;
    r->t_comm = 0.0;
    r->window_batches = r->window_samples = 0;
    r->t_window = t2__now();
    return rc;
}

static int validate_pass(run *r, int judge);
static int checkpoint(run *r);

/* Whether the controller answers this validation (validated), which the runner then waits for:
 * checkpoint_policy best needs its verdict on every validation, searcher.pruner on those before
 * the op's end (judge). The same on every rank: it depends only on the config and the trial. */
static int asks(const run *r, int judge)
{
    const t2__config *cfg = r->a->cfg;
    int best = cfg->checkpoint_policy == T2__CKPT_BEST && r->a->ckpt_dir && t2__ctx_has_model(&r->ctx);
    return best || (judge && cfg->searcher.pruner.on);
}

/* After a validation: the controller's answer, if asked (rank 0 reads it, every rank gets it), then
 * checkpoint_policy as Determined does it: all: always; best: when the searcher metric beats the
 * best validation of the whole experiment so far (the controller knows it and answers; other
 * trials' validations count too); none: never (end-of-op, pause and min_checkpoint_period
 * checkpoints still happen). A prune in the answer ends the op here (r->pruned); its checkpoint
 * follows at the op's end. */
static int after_validation(run *r, int judge)
{
    int answer[2] = {0, 0}, rc; /* new_best, prune */
    if (asks(r, judge)) {
        if (r->ctx.comm.rank == 0) {
            t2__msg m;
            if ((rc = recv_msg(r, &m, 0)) || m.kind != T2__MSG_VALIDATED) {
                if (!rc)
                    rc = t2_seterr(T2_EFORMAT, "trial %lld: expected the controller's answer to a validation, got %s",
                                   (long long)r->a->trial_id, m.kind ? t2__msg_kind_name(m.kind) : "the end");
                t2__msg_free(&m);
                return fail(r, "channel", rc);
            }
            answer[0] = m.u.validated.new_best;
            answer[1] = m.u.validated.prune;
            t2__msg_free(&m);
        }
        if (r->ctx.comm.size > 1 && (rc = t2__comm_broadcast(&r->ctx.comm, answer, sizeof answer)))
            return fail(r, "communication", rc);
    }
    r->pruned = answer[1];
    t2__ckpt_policy policy = r->a->cfg->checkpoint_policy;
    if (policy == T2__CKPT_NONE || !r->a->ckpt_dir || !t2__ctx_has_model(&r->ctx)) return 0;
    int want = policy == T2__CKPT_ALL || (policy == T2__CKPT_BEST && answer[0]);
    return want ? checkpoint(r) : 0;
}

/* Validation time does not count against the training window's throughput (nor does the
 * checkpoint the policy takes after it). judge: a validation before the op's end, which
 * searcher.pruner may stop the trial at. */
static int validate(run *r, int judge)
{
    double t0 = t2__now();
    int rc = validate_pass(r, judge);
    if (!rc) rc = after_validation(r, judge);
    r->t_window += t2__now() - t0;
    return rc;
}

/* The trial's evaluate_end, if it has one: metrics of the whole pass from the reduced ones in m
 * (every rank calls it, with the same values). */
static int finish_pass(const t2_trial_def *d, t2_ctx *ctx, void *state, t2_metrics *m)
{
    if (!d->evaluate_end) return T2_OK;
    m->finishing = 1;
    m->batch_weight = 1.0; /* each added metric is its own value */
    int rc = d->evaluate_end(ctx, state, m);
    m->finishing = 0;
    if (!rc && m->error[0]) rc = t2_seterr(T2_ENUMERIC, "%s", m->error);
    return rc;
}

static int validate_pass(run *r, int judge)
{
    const t2_trial_def *d = r->a->def;
    const t2_batch *b;
    int rc;
    t2__metrics_reset(&r->vm);
    for (;;) {
        if ((rc = t2_loader_next(r->valid, &b))) return fail(r, "validation loader", rc);
        if (!b) break;
        r->vm.batch_weight = b->n;
        if ((rc = d->evaluate_batch(&r->ctx, r->state, b, &r->vm))) return fail(r, "evaluate_batch", rc);
        if (r->vm.error[0]) return t2_seterr(T2_ENUMERIC, "%s", r->vm.error), fail(r, "evaluate_batch", T2_ENUMERIC);
    }
    if ((rc = reduce_metrics(r, &r->vm))) return fail(r, "validation", rc);
    if ((rc = finish_pass(d, &r->ctx, r->state, &r->vm))) return fail(r, "evaluate_end", rc);
    const char *metric = r->a->cfg->searcher.metric;
    int found = -1; /* the searcher metric's entry */
    char names[512] = "";
    /* Only what this pass reported: a name of an earlier pass stays with no reports (an
     * evaluate_end that skipped it), and its value would read as 0. */
    for (int i = 0; i < r->vm.n; i++) {
        if (!r->vm.acc[i].count) continue;
        if (strcmp(r->vm.acc[i].name, metric) == 0) found = i;
        size_t off = strlen(names);
        snprintf(names + off, sizeof names - off, "%s%s", off ? ", " : "", r->vm.acc[i].name);
    }
    if (found < 0) {
        t2_seterr(T2_ENOTFOUND, "validation did not report the searcher metric '%s' (reported: %s)", metric,
                  names[0] ? names : "nothing");
        return fail(r, d->evaluate_end ? "evaluate_batch or evaluate_end" : "evaluate_batch", T2_ENOTFOUND);
    }
    r->last_metric = t2__metrics_value(&r->vm, found);
    /* Validation metrics are reduced across ranks (sum and weight) before reporting; one rank here. */
    if ((rc = send_metrics(r, 1, &r->vm, NULL, asks(r, judge)))) return fail(r, "report", rc);
    r->last_validated = r->ctx.batches_trained;
    if (r->ctx.sched && t2_lr_schedule_step_mode(r->ctx.sched) != T2_LR_STEP_MANUAL) {
        rc = t2_lr_schedule_step_metric(r->ctx.sched, r->last_metric);
        if (rc && rc != T2_EINVAL) return fail(r, "lr schedule", rc); /* EINVAL: not a plateau schedule */
    }
    return 0;
}

/* The training-metrics accumulators acc[0..n) as JSON: [batches, samples, [name, reducer, sum,
 * weight, min, max, count]...]. NULL when out of memory. */
static char *window_json_of(const t2__metric_acc *acc, int n, int64_t batches, int64_t samples)
{
    t2__val *v = t2__val_list();
    t2__val_list_append(v, t2__val_int(batches));
    t2__val_list_append(v, t2__val_int(samples));
    for (int i = 0; v && i < n; i++) {
        const t2__metric_acc *a = &acc[i];
        t2__val *e = t2__val_list();
        t2__val_list_append(e, t2__val_string(a->name));
        t2__val_list_append(e, t2__val_int(a->reducer));
        t2__val_list_append(e, t2__val_double(a->sum));
        t2__val_list_append(e, t2__val_double(a->weight));
        /* min/max start at +-inf, which JSON cannot carry: an empty window has count 0 instead. */
        t2__val_list_append(e, t2__val_double(a->count ? a->min : 0.0));
        t2__val_list_append(e, t2__val_double(a->count ? a->max : 0.0));
        t2__val_list_append(e, t2__val_int(a->count));
        t2__val_list_append(v, e);
    }
    char *json = NULL;
    size_t len;
    if (!v || t2__val_to_json(v, &json, &len) != T2_OK) json = NULL;
    t2__val_free(v);
    return json;
}

static char *window_json(const t2_metrics *m, int64_t batches, int64_t samples)
{
    return window_json_of(m->acc, m->n, batches, samples);
}

/* Words a rank's open window travels in to rank 0 at a checkpoint: per metric its name and
 * reducer (hashed, to match it to rank 0's) and its sums' bits. */
enum { WINDOW_WORDS = 6 };

static uint64_t metric_key(const t2__metric_acc *a)
{
    uint64_t h = t2_hash64((uint64_t)a->reducer);
    for (const char *p = a->name; *p; p++) h = t2_hash64(h ^ (unsigned char)*p);
    return h;
}

static uint64_t bits_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double double_of(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Every rank's open training-metrics window, on rank 0 as JSON per rank ((*out)[k] for rank k >=
 * 1, malloc'd; NULL where that rank's metrics are not rank 0's, name for name: it then restores
 * rank 0's, as before). Each rank's own window is what it goes on summing into after a restore:
 * rank 0's alone, restored on every rank, changed the window spanning a distributed pause (probe_H
 * H1). Collective: every rank calls it. *out is NULL on the other ranks and with one rank. */
static int gather_windows(run *r, char ***out)
{
    *out = NULL;
    int nr = r->ctx.comm.size;
    if (nr <= 1) return T2_OK;
    uint64_t mine = (uint64_t)r->tm.n, *counts = malloc((size_t)nr * sizeof *counts);
    if (!counts) return t2_seterr(T2_ENOMEM, "checkpoint: out of memory");
    int rc = t2__comm_allgather_u64(&r->ctx.comm, &mine, 1, counts);
    int same = 1;
    for (int k = 0; !rc && k < nr; k++) same &= counts[k] == mine;
    free(counts);
    if (rc || !same || !mine) return rc; /* different metric sets: rank 0's window, as before */
    size_t n = (size_t)r->tm.n, words = n * WINDOW_WORDS;
    uint64_t *w = malloc(words * sizeof *w), *all = malloc((size_t)nr * words * sizeof *all);
    if (!w || !all) {
        free(w);
        free(all);
        return t2_seterr(T2_ENOMEM, "checkpoint: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const t2__metric_acc *a = &r->tm.acc[i];
        uint64_t *e = w + i * WINDOW_WORDS;
        e[0] = metric_key(a), e[1] = bits_of(a->sum), e[2] = bits_of(a->weight);
        e[3] = bits_of(a->min), e[4] = bits_of(a->max), e[5] = (uint64_t)a->count;
    }
    rc = t2__comm_allgather_u64(&r->ctx.comm, w, words, all);
    char **json = NULL;
    t2__metric_acc *acc = NULL;
    if (!rc && r->ctx.comm.rank == 0) {
        json = calloc((size_t)nr, sizeof *json);
        acc = malloc(n * sizeof *acc);
        if (!json || !acc) rc = t2_seterr(T2_ENOMEM, "checkpoint: out of memory");
        for (int k = 1; !rc && k < nr; k++) {
            const uint64_t *e = all + (size_t)k * words;
            int match = 1;
            for (size_t i = 0; i < n && match; i++) match = e[i * WINDOW_WORDS] == w[i * WINDOW_WORDS];
            if (!match) continue;
            for (size_t i = 0; i < n; i++) {
                const uint64_t *x = e + i * WINDOW_WORDS;
                acc[i] = r->tm.acc[i];
                acc[i].sum = double_of(x[1]), acc[i].weight = double_of(x[2]);
                acc[i].min = double_of(x[3]), acc[i].max = double_of(x[4]), acc[i].count = (int64_t)x[5];
            }
            if (!(json[k] = window_json_of(acc, (int)n, r->window_batches, r->window_samples)))
                rc = t2_seterr(T2_ENOMEM, "checkpoint: out of memory");
        }
    }
    free(acc);
    free(w);
    free(all);
    if (rc && json) {
        for (int k = 0; k < nr; k++) free(json[k]);
        free(json);
        json = NULL;
    }
    *out = json;
    return rc;
}

static int window_restore(run *r, const char *json)
{
    t2__val *v = NULL;
    size_t off;
    int rc = t2__val_from_json(json, strlen(json), &v, &off);
    if (rc) return rc;
    rc = t2_seterr(T2_EFORMAT, "checkpoint: malformed train_window");
    if (v->kind != T2__VAL_LIST || v->n < 2 || v->items[0]->kind != T2__VAL_INT || v->items[1]->kind != T2__VAL_INT)
        goto out;
    r->window_batches = v->items[0]->i;
    r->window_samples = v->items[1]->i;
    for (size_t i = 2; i < v->n; i++) {
        const t2__val *e = v->items[i];
        if (e->kind != T2__VAL_LIST || e->n != 7 || e->items[0]->kind != T2__VAL_STRING ||
            e->items[1]->kind != T2__VAL_INT || e->items[6]->kind != T2__VAL_INT)
            goto out;
        /* Registers the name with its reducer, then overwrites the sums with the saved ones. */
        if (t2_metric_reduce(&r->tm, e->items[0]->s, 0.0, (t2_reducer)e->items[1]->i)) goto out;
        t2__metric_acc *a = &r->tm.acc[r->tm.n - 1];
        double sum, w, mn, mx;
        if (t2__val_as_double(e->items[2], &sum) || t2__val_as_double(e->items[3], &w) ||
            t2__val_as_double(e->items[4], &mn) || t2__val_as_double(e->items[5], &mx))
            goto out;
        a->count = e->items[6]->i;
        a->sum = sum;
        a->weight = w;
        a->min = a->count ? mn : INFINITY;
        a->max = a->count ? mx : -INFINITY;
    }
    rc = T2_OK;
out:
    t2__val_free(v);
    return rc;
}

/* Writes a checkpoint of everything the trial needs to continue exactly here and tells the
 * controller. A failed write is reported and the trial goes on: the previous checkpoint is intact
 * and stays the latest. */
static int write_checkpoint(run *r, const uint64_t *streams, int nr, char *const *windows);

static int checkpoint(run *r)
{
    const t2__runner_args *a = r->a;
    if (!a->ckpt_dir || !t2__ctx_has_model(&r->ctx) || r->last_checkpoint == r->ctx.batches_trained) return 0;
    int src; /* the ranks' batchnorm statistics are equal already (sync_buffers after each batch) */
    /* Every rank draws its own random numbers (dropout masks, augmentation): rank 0 writes them
     * all, so that each rank continues its own stream after a restore. */
    int nr = r->ctx.comm.size > 0 ? r->ctx.comm.size : 1;
    uint64_t *streams = malloc((size_t)nr * 4 * sizeof *streams);
    if (!streams) return t2_seterr(T2_ENOMEM, "checkpoint: out of memory"), fail(r, "checkpoint", T2_ENOMEM);
    char **windows = NULL; /* every rank's open window, on rank 0 */
    if ((src = t2__comm_allgather_u64(&r->ctx.comm, r->ctx.rng.s, 4, streams)) || (src = gather_windows(r, &windows))) {
        free(streams);
        return fail(r, "checkpoint", src);
    }
    int rc = 0;
    if (r->ctx.comm.rank != 0) r->last_checkpoint = r->ctx.batches_trained; /* rank 0 writes the (same) parameters */
    else rc = write_checkpoint(r, streams, nr, windows);
    free(streams);
    for (int k = 0; windows && k < nr; k++) free(windows[k]);
    free(windows);
    return rc;
}

/* Rank 0's part of checkpoint: the file, and the report. */
static int write_checkpoint(run *r, const uint64_t *streams, int nr, char *const *windows)
{
    const t2__runner_args *a = r->a;
    t2_loader_state ls;
    void *user = NULL;
    size_t user_len = 0;
    int rc = t2_loader_state_get(r->train, &ls);
    if (!rc && a->def->save_state && (rc = a->def->save_state(&r->ctx, r->state, &user, &user_len)))
        return fail(r, "save_state", rc);
    /* No buffer and a length is a mistake, not "no state": load_state would never see it. */
    if (!rc && !user && user_len)
        return t2_seterr(T2_EINVAL, "save_state set a length of %zu bytes and no buffer (*buf NULL): give both, or "
                         "*len 0 for no state", user_len), fail(r, "save_state", T2_EINVAL);
    char *hp = NULL, metric[64], uuid[T2__UUID_LEN + 1], path[4096];
    size_t hplen;
    if (!rc) rc = t2__val_to_json(a->hparams, &hp, &hplen);
    if (!rc) rc = t2__uuid_v4(uuid);
    /* checkpoint_storage.compression holds t2__ckpt_compression's values (configs/ stays apart). */
    _Static_assert(T2__CKPT_COMPRESS_GZIP == 1 && T2__CKPT_COMPRESS_ZSTD == 2, "config compression values");
    t2__ckpt_compression comp = (t2__ckpt_compression)a->cfg->checkpoint_storage.compression;
    if (!rc) rc = t2__ckpt_path(path, sizeof path, a->ckpt_dir, uuid, comp);
    if (rc) {
        free(user);
        free(hp);
        return fail(r, "checkpoint", rc);
    }
    /* A checkpoint carries the validation metric of its own step only (what GC ranks by). */
    double at_metric = r->last_validated == r->ctx.batches_trained ? r->last_metric : NAN;
    snprintf(metric, sizeof metric, "%.17g", at_metric);
    /* The open training-metrics window goes along, so a resumed trial reports the same means. */
    char *window = window_json(&r->tm, r->window_batches, r->window_samples);
    if (!window) {
        free(user);
        free(hp);
        return t2_seterr(T2_ENOMEM, "checkpoint: out of memory"), fail(r, "checkpoint", T2_ENOMEM);
    }
    /* "trial" is rank 0's stream (what every restore reads), "trial.rankK" the others'. */
    t2__ckpt_rng *rngs = calloc((size_t)nr, sizeof *rngs);
    char (*names)[24] = calloc((size_t)nr, sizeof *names);
    /* Rank 0's window as it always was; each other rank's under its own key (gather_windows). */
    t2__ckpt_kv *kv = calloc((size_t)nr + 1, sizeof *kv);
    char (*keys)[32] = calloc((size_t)nr, sizeof *keys);
    if (!rngs || !names || !kv || !keys) {
        free(kv);
        free(keys);
        free(rngs);
        free(names);
        free(user);
        free(hp);
        free(window);
        return t2_seterr(T2_ENOMEM, "checkpoint: out of memory"), fail(r, "checkpoint", T2_ENOMEM);
    }
    for (int k = 0; k < nr; k++) {
        snprintf(names[k], sizeof names[k], k ? "trial.rank%d" : "trial", k);
        rngs[k].name = names[k];
        memcpy(rngs[k].state.s, streams + 4 * (size_t)k, sizeof rngs[k].state.s);
    }
    int nkv = 0;
    kv[nkv++] = (t2__ckpt_kv){"train_window", window};
    if (!isnan(at_metric)) kv[nkv++] = (t2__ckpt_kv){"metric", metric};
    for (int k = 1; windows && k < nr; k++)
        if (windows[k]) {
            snprintf(keys[k], sizeof keys[k], "train_window.rank%d", k);
            kv[nkv++] = (t2__ckpt_kv){keys[k], windows[k]};
        }
    t2__ckpt_model mod = t2__ctx_ckpt_model(&r->ctx, 1);
    t2__ckpt_contents c = {.net = mod.net, .raw = mod.raw, .nraw = mod.nraw, .opts = mod.opts, .nopts = mod.nopts,
                           .sched = r->ctx.sched, .loader = &ls,
                           .rngs = rngs, .n_rngs = nr, .user_state = user, .user_state_len = user_len,
                           .experiment_id = a->experiment_id, .trial_id = a->trial_id, .hparams_json = hp,
                           .batches_trained = r->ctx.batches_trained, .epoch = r->ctx.epoch, .strings = kv,
                           .n_strings = nkv, .uuid = uuid};
    t2__ckpt_result res;
    double t0 = t2__now();
    rc = t2__ckpt_write(path, &c, comp, &res);
    free(kv);
    free(keys);
    free(rngs);
    free(names);
    free(user);
    free(hp);
    free(window);
    t2__msg m;
    char why[1200];
    if (rc) {
        /* Not fatal: report it; the trial continues from the last good checkpoint if it fails later. */
        t2__fmt_fit(why, sizeof why, "%s", t2_errmsg());
        fprintf(stderr, "t2exp runner: checkpoint at batch %lld failed: %s\n", (long long)r->ctx.batches_trained, why);
        m = (t2__msg){.kind = T2__MSG_CHECKPOINT_FAILED,
                      .u.checkpoint_failed = {.message = why, .batches = r->ctx.batches_trained}};
    } else {
        r->last_checkpoint = r->ctx.batches_trained;
        printf("checkpoint %s at batch %lld: %llu bytes in %.1f ms\n", uuid, (long long)r->ctx.batches_trained,
               (unsigned long long)res.bytes, (t2__now() - t0) * 1e3);
        /* The uuid and the extension, not the path: the controller makes the path itself, inside
         * the experiment's checkpoint directory (see protocol.h). */
        m = (t2__msg){.kind = T2__MSG_CHECKPOINT,
                      .u.checkpoint = {.uuid = res.uuid, .ext = t2__ckpt_extension(comp),
                                       .batches = r->ctx.batches_trained, .bytes = (int64_t)res.bytes,
                                       .has_metric = !isnan(at_metric), .metric = at_metric}};
    }
    rc = send_msg(a, &r->ctx.comm, &m);
    return rc ? fail(r, "report", rc) : 0;
}

/* Continues from a checkpoint: model, optimizer, schedule, loader position, RNG, user state and
 * counters, so training goes on exactly as if it had never stopped. A warm start takes the
 * parameters (and the optimizer state when asked) and starts counting from zero. */
static int restore(run *r)
{
    t2__ckpt *ck = NULL;
    /* The model is this process's own and is dropped if restoring fails, so the arrays' checksums
     * can be checked during the copy rather than in a pass of their own. */
    int rc = t2__ckpt_open_for_restore(&ck, r->a->restore_path);
    if (rc) return fail(r, "restore", rc);
    if (!t2__ctx_has_model(&r->ctx)) {
        t2__ckpt_free(ck);
        return t2_seterr(T2_ESTATE, "restoring %s needs a model wrapped with t2_wrap_model or t2_wrap_params",
                         r->a->restore_path),
               fail(r, "restore", T2_ESTATE);
    }
    if (r->a->warm_start) {
        /* searcher.source_checkpoint_optimizer: the optimizer state (momentum, moments, step
         * count) too, for a trial that continues another's training rather than fine-tunes. */
        int with_opt = r->a->cfg->searcher.source_checkpoint_optimizer;
        if (with_opt && !r->ctx.nbind)
            rc = t2_seterr(T2_ESTATE, "searcher.source_checkpoint_optimizer needs an optimizer wrapped with "
                                      "t2_wrap_optimizer");
        t2__ckpt_model m = t2__ctx_ckpt_model(&r->ctx, with_opt);
        if (!rc) rc = t2__ckpt_restore_model(ck, &m, NULL);
        if (!rc)
            printf("warm start from %s: parameters%s\n", r->a->restore_path,
                   with_opt ? " and optimizer state" : "");
        t2__ckpt_free(ck);
        return rc ? fail(r, "restore", rc) : 0;
    }
    t2_checkpoint_info info;
    t2_loader_state ls;
    const void *user;
    size_t ulen;
    t2__ckpt_model m = t2__ctx_ckpt_model(&r->ctx, 1);
    rc = t2__ckpt_restore_model(ck, &m, r->ctx.sched);
    if (!rc) rc = t2__ckpt_get_info(ck, &info);
    if (!rc && info.has_loader_state && !(rc = t2__ckpt_loader_state(ck, &ls))) rc = t2_loader_restore(r->train, &ls);
    if (!rc) rc = t2__ckpt_get_rng(ck, "trial", &r->ctx.rng);
    if (!rc && info.has_user_state && r->a->def->load_state && !(rc = t2__ckpt_user_state(ck, &user, &ulen)))
        rc = r->a->def->load_state(&r->ctx, r->state, user, ulen);
    /* Each rank its own open window (a checkpoint of one rank, or older, has rank 0's alone). */
    char wkey[32];
    snprintf(wkey, sizeof wkey, "train_window.rank%d", r->ctx.comm.rank);
    const char *w = rc ? NULL : t2__ckpt_string(ck, wkey);
    if (!rc && !w) w = t2__ckpt_string(ck, "train_window");
    if (w) rc = window_restore(r, w);
    /* The metric sums go on; the throughput counts only batches trained since this restore (the
     * window's earlier batches took their time in another process: the first report after a
     * restore read "43236.7 batches/s"). */
    r->window_batches = r->window_samples = 0;
    if (!rc) {
        const char *m = t2__ckpt_string(ck, "metric");
        r->ctx.batches_trained = info.batches_trained;
        r->ctx.epoch = info.epoch;
        r->last_checkpoint = info.batches_trained;
        /* A checkpoint carries a metric only when it was validated at its step. One without (a
         * pause that landed on the op's last batch, before its validation) must validate on: a
         * resumed pbt member stopped there never reported that round, and the search went on
         * without it. */
        r->last_validated = m ? info.batches_trained : -1;
        r->last_metric = m ? strtod(m, NULL) : NAN;
        /* Each rank continues its own stream; a rank the checkpoint has none for (written with
         * fewer ranks, or before streams were kept per rank) derives one from rank 0's. */
        char own[24];
        snprintf(own, sizeof own, "trial.rank%d", r->ctx.comm.rank);
        if (r->ctx.comm.rank > 0 && t2__ckpt_get_rng(ck, own, &r->ctx.rng) != T2_OK) {
            t2_clearerr();
            t2_rng_seed(&r->ctx.rng, t2_hash64(r->ctx.rng.s[0] ^ t2_hash64((uint64_t)r->ctx.comm.rank)));
        }
        printf("restored %s: batch %lld, epoch %lld\n", r->a->restore_path, (long long)info.batches_trained,
               (long long)info.epoch);
    }
    t2__ckpt_free(ck);
    return rc ? fail(r, "restore", rc) : 0;
}

/* After SIGTERM: checkpoint where we are, say so, and leave (status 0; the trial is paused). */
static int stop(run *r)
{
    int rc = checkpoint(r);
    if (rc) return rc;
    t2__msg m = {.kind = T2__MSG_STOPPED, .u.stopped.batches = r->ctx.batches_trained};
    if (send_msg(r->a, &r->ctx.comm, &m)) t2_clearerr(); /* a controller that is gone needs no word */
    return 2; /* tells serve() to leave */
}

/* Trains up to `target` batches in total, validating on the period and at the end. */
static int train_to(run *r, int64_t target)
{
    const t2_trial_def *d = r->a->def;
    int rc;
    if (r->a->cfg->perform_initial_validation && r->ctx.batches_trained == 0 && r->last_validated < 0 &&
        (rc = validate(r, 0)))
        return rc;
    r->pruned = 0;
    r->t_window = t2__now();
    while (r->ctx.batches_trained < target) {
        const t2_batch *b;
        if ((rc = poll_threads(r))) return fail(r, "channel", rc);
        double t0 = t2__now();
        if ((rc = t2_loader_next(r->train, &b))) return fail(r, "training loader", rc);
        if (!b) return t2_seterr(T2_ESTATE, "the training loader ended; it must repeat (repeat = 1)"),
                       fail(r, "training loader", T2_ESTATE);
        double t1 = t2__now();
        if (b->epoch != r->ctx.epoch) {
            if (r->ctx.sched && t2_lr_schedule_step_mode(r->ctx.sched) == T2_LR_STEP_EPOCH &&
                !t2__is_plateau(r->ctx.sched) && (rc = t2_lr_schedule_step(r->ctx.sched)) && rc != T2_ESTATE)
                return fail(r, "lr schedule", rc);
            r->ctx.epoch = b->epoch;
        }
        r->tm.batch_weight = b->n;
        double c0 = r->ctx.comm.seconds;
        r->ctx.phase = T2__PHASE_TRAIN;
        rc = d->train_batch(&r->ctx, r->state, b, &r->tm);
        r->ctx.phase = T2__PHASE_OTHER;
        if (rc) return fail(r, "train_batch", rc);
        if ((rc = sync_buffers(r))) return fail(r, "train_batch", rc);
        r->t_comm += r->ctx.comm.seconds - c0;
        if (r->tm.error[0]) return t2_seterr(T2_ENUMERIC, "%s", r->tm.error), fail(r, "train_batch", T2_ENUMERIC);
        r->t_data += t1 - t0;
        r->t_compute += t2__now() - t1;
        r->ctx.batches_trained++;
        r->window_batches++;
        r->window_samples += (int64_t)b->n * r->ctx.comm.size;
        while (r->next_report < r->nreport_at && r->report_at[r->next_report] < r->ctx.batches_trained) r->next_report++;
        int again = r->next_report < r->nreport_at && r->report_at[r->next_report] == r->ctx.batches_trained;
        if (r->ctx.batches_trained % r->report_every == 0 || r->ctx.batches_trained == target || again)
            if ((rc = report_training(r))) return fail(r, "report", rc);
        if (r->vperiod > 0 && r->ctx.batches_trained % r->vperiod == 0 && r->ctx.batches_trained < target &&
            (rc = validate(r, 1)))
            return rc;
        if (r->pruned) {
            /* The op ends here: checkpoint and done below. The training window since the last
             * report goes first, as a completed op's last one does (a pruned trial's curve had no
             * training loss at all when it stopped before scheduling_unit, probe_J). */
            if (r->window_batches > 0 && (rc = report_training(r))) return fail(r, "report", rc);
            break;
        }
        if (r->cperiod > 0 && r->ctx.batches_trained % r->cperiod == 0 && r->ctx.batches_trained < target &&
            (rc = checkpoint(r)))
            return rc;
        /* After a batch that took HOLD_S or more, its reports go now: the next may take as long. */
        if (t2__now() - t0 >= HOLD_S && (rc = flush_reports(r->a))) return fail(r, "report", rc);
        int halt = stop_requested;
        if (r->ctx.comm.size > 1 && (rc = t2__comm_broadcast(&r->ctx.comm, &halt, sizeof halt)))
            return fail(r, "communication", rc); /* rank 0 decides, so all ranks stop at the same batch */
        if (halt) return stop(r);
    }
    if (r->last_validated != r->ctx.batches_trained && (rc = validate(r, 0))) return rc;
    if ((rc = checkpoint(r))) return rc;
    t2__msg m = {.kind = T2__MSG_DONE, .u.done.batches = r->ctx.batches_trained};
    rc = send_msg(r->a, &r->ctx.comm, &m);
    return rc ? fail(r, "report", rc) : 0;
}

/* Waiting for the next op, the runner has nothing in flight (its last op ended with its
 * checkpoint), so a SIGTERM here (the controller pausing or stopping the experiment) is answered
 * at once, as an exit. A read would be restarted after the signal and wait on: the controller
 * then killed the runner after a minute. poll is never restarted; its short timeout covers a
 * signal that lands between the check and the call. 1 when asked to stop. */
static int stop_while_idle(run *r)
{
    for (;;) {
        if (stop_requested) return 1;
        int n = chan_ready(r->a, 100);
        if (n > 0 || (n < 0 && errno != EINTR)) return 0; /* readable, or the read reports it */
    }
}

/* The controller's next op: rank 0 reads it and relays it to the other ranks, which decode it
 * again (checked the same way). T2__MSG_NONE: the controller closed the channel, or a stop came
 * while waiting. */
static int next_op(run *r, t2__msg *op)
{
    t2__comm *c = &r->ctx.comm;
    memset(op, 0, sizeof *op);
    int rc = T2_OK;
    /* Stopping leaves op NONE: other ranks get no text and take NONE too. */
    if (c->rank == 0) rc = recv_msg(r, op, 1);
    if (c->size <= 1) return rc;
    char *text = NULL;
    size_t len = 0;
    if (c->rank == 0 && !rc && op->doc && (rc = t2__val_to_json(op->doc, &text, &len))) text = NULL;
    int brc = t2__comm_broadcast_msg(c, &text, &len);
    if (c->rank == 0) {
        free(text);
        return rc ? rc : brc;
    }
    if (!brc && text) {
        size_t off;
        t2__val *doc = NULL;
        brc = t2__val_from_json(text, len, &doc, &off);
        if (!brc) brc = t2__msg_decode(doc, op);
    }
    free(text);
    return brc;
}

/* A TRAIN op's report_at: the steps where this trial's earlier runs closed their training-metric
 * windows (the controller sends them to a run that trains steps again), so the means it reports
 * cover the same batches as the first run's. */
static int take_report_steps(run *r, const int64_t *steps, size_t n)
{
    int64_t *v = n ? malloc(n * sizeof *v) : NULL;
    if (n && !v) return t2_seterr(T2_ENOMEM, "runner: out of memory");
    if (n) memcpy(v, steps, n * sizeof *v);
    free(r->report_at);
    r->report_at = v;
    r->nreport_at = n;
    r->next_report = 0;
    return T2_OK;
}

static int serve(run *r)
{
    const t2__config *cfg = r->a->cfg;
    int rc;
    int64_t gb = r->ctx.global_batch;
    r->batches_per_epoch = cfg->records_per_epoch > 0 ? (cfg->records_per_epoch + gb - 1) / gb
                                                      : t2_loader_batches_per_epoch(r->train);
    if (r->batches_per_epoch <= 0) return t2_seterr(T2_ESTATE, "the training loader has no batches"), fail(r, "build_training_loader", T2_ESTATE);
    r->vperiod = cfg->min_validation_period.n > 0
                     ? t2__length_to_batches(cfg->min_validation_period.unit, cfg->min_validation_period.n, gb,
                                             r->batches_per_epoch)
                     : 0;
    r->cperiod = cfg->min_checkpoint_period.n > 0
                     ? t2__length_to_batches(cfg->min_checkpoint_period.unit, cfg->min_checkpoint_period.n, gb,
                                             r->batches_per_epoch)
                     : 0;
    r->report_every = cfg->scheduling_unit > 0 ? cfg->scheduling_unit : 100;
    if (r->a->restore_path && (rc = restore(r))) return rc;
    size_t np = t2__ctx_num_params(&r->ctx);
    /* The kernels this rank 0 runs on, for the store (describe shows what a result was trained on). */
    t2__msg ready = {.kind = T2__MSG_READY,
                     .u.ready = {.batches_per_epoch = r->batches_per_epoch, .params = (int64_t)np,
                                 .blas = r->blas[0] ? r->blas : NULL}};
    if ((rc = send_msg(r->a, &r->ctx.comm, &ready))) return fail(r, "report", rc);
    for (;;) {
        t2__msg op;
        if ((rc = next_op(r, &op))) return fail(r, "channel", rc);
        if (op.kind == T2__MSG_NONE || op.kind == T2__MSG_EXIT) {
            t2__msg_free(&op);
            return 0;
        }
        if (op.kind != T2__MSG_TRAIN) {
            t2_seterr(T2_EFORMAT, "the controller sent a %s message where an op belongs", t2__msg_kind_name(op.kind));
            t2__msg_free(&op);
            return fail(r, "channel", T2_EFORMAT);
        }
        int64_t target = t2__length_to_batches(cfg->searcher.max_length.unit, op.u.train.length, gb, r->batches_per_epoch);
        int last = op.u.train.last;
        rc = op.u.train.nreport_at ? take_report_steps(r, op.u.train.report_at, op.u.train.nreport_at) : T2_OK;
        t2__msg_free(&op);
        if (rc) return fail(r, "channel", rc);
        if ((rc = train_to(r, target))) return rc == 2 ? 0 : rc;
        if (last) return 0; /* no exit to wait for: a worker's finished follows its done at once */
    }
}

/* A run's first lines in its log: the kernels it trains on (a bug report's first question), then
 * its threads, in one write (a system call less a trial in a worker), or the first alone before a
 * failure. Either may be NULL. */
static void first_lines(const char *blas, const char *threads)
{
    if (!blas && !threads) return;
    /* One fputs: a line-buffered stream flushes at each newline of a printf's pieces. */
    char text[1024];
    snprintf(text, sizeof text, "%s%s%s%s", blas ? blas : "", blas ? "\n" : "", threads ? threads : "",
             threads ? "\n" : "");
    fputs(text, stdout);
    fflush(stdout);
}

int t2__runner_run(const t2__runner_args *a)
{
    run r;
    memset(&r, 0, sizeof r);
    r.a = a;
    r.last_validated = -1;
    r.last_checkpoint = -1;
    r.last_metric = NAN;
    if (!a->signals_set) {
        stop_requested = 0;
        install_handlers();
    }
    t2__metrics_init(&r.tm);
    t2__metrics_init(&r.vm);
    /* The kernels a result was trained on come first in its log (first_lines). */
    kernels_line(r.blas, sizeof r.blas);
    int rank0 = !a->comm || a->comm->rank == 0;
    const char *blas_line = r.blas[0] && rank0 ? r.blas : NULL;
    int64_t gb = 0, per = 0;
    int rc = t2__config_batch_sizes(a->cfg, a->hparams, &gb, &per);
    t2__ctx_init(&r.ctx, a->cfg, a->hparams, gb, per, a->trial_id, a->seed, a->threads);
    r.ctx.phase = T2__PHASE_OTHER;
    if (a->comm) r.ctx.comm = *a->comm;
    r.ctx.epoch = 0;
    int status = 0;
    if (rc) {
        first_lines(blas_line, NULL);
        status = fail(&r, "hyperparameters", rc);
        goto done;
    }
    if ((rc = t2__set_num_parts(a->parts)) || (rc = t2_set_num_threads(a->threads > 0 ? a->threads : 1))) {
        first_lines(blas_line, NULL);
        status = fail(&r, "threads", rc);
        goto done;
    }
    if (rank0) {
        /* The parts fix the numbers; the threads only the speed (they follow the freed cores). */
        char threads[64];
        snprintf(threads, sizeof threads, "threads %d, parts %d", t2_get_num_threads(), t2__pool_parts());
        first_lines(blas_line, threads);
    }
    if ((rc = a->def->build_model(&r.ctx, &r.state)) || (rc = t2__ctx_bind(&r.ctx))) {
        status = fail(&r, "build_model", rc);
        goto done;
    }
    /* Every rank built the same model from the same seed; from here each draws its own dropout
     * masks (rank 0 keeps the trial seed's stream, so a one-rank trial is unchanged). */
    if (r.ctx.comm.rank > 0) t2_rng_seed(&r.ctx.rng, t2_hash64(a->seed ^ t2_hash64((uint64_t)r.ctx.comm.rank)));
    if ((rc = a->def->build_training_loader(&r.ctx, r.state, &r.train)) || !r.train) {
        if (!rc) t2_seterr(rc = T2_ESTATE, "build_training_loader returned no loader");
        status = fail(&r, "build_training_loader", rc);
        goto done;
    }
    if ((rc = a->def->build_validation_loader(&r.ctx, r.state, &r.valid)) || !r.valid) {
        if (!rc) t2_seterr(rc = T2_ESTATE, "build_validation_loader returned no loader");
        status = fail(&r, "build_validation_loader", rc);
        goto done;
    }
    status = serve(&r);
done:
    t2_loader_free(r.train);
    t2_loader_free(r.valid);
    if (r.state && a->def->destroy) a->def->destroy(r.state);
    t2__metrics_free(&r.tm);
    free(r.report_at);
    t2__metrics_free(&r.vm);
    t2__msg_free(&r.stash);
    return status;
}

int t2__runner_evaluate(const t2__runner_args *a, FILE *out) { return t2__runner_evaluate_metric(a, out, NULL, NULL); }

int t2__runner_wraps_model(const t2__runner_args *a, int *wraps)
{
    t2_ctx ctx;
    void *state = NULL;
    int64_t gb = 0, per = 0;
    *wraps = 0;
    int rc = t2__config_batch_sizes(a->cfg, a->hparams, &gb, &per);
    t2__ctx_init(&ctx, a->cfg, a->hparams, gb, per, a->trial_id, a->seed, a->threads);
    ctx.phase = T2__PHASE_OTHER;
    if (!rc && !(rc = t2__set_num_parts(a->parts)) && !(rc = a->def->build_model(&ctx, &state)))
        *wraps = t2__ctx_has_model(&ctx);
    if (state && a->def->destroy) a->def->destroy(state);
    return rc;
}

int t2__runner_evaluate_metric(const t2__runner_args *a, FILE *out, const char *name, double *value)
{
    if (value) *value = NAN;
    run r;
    memset(&r, 0, sizeof r);
    r.a = a;
    r.last_validated = r.last_checkpoint = -1;
    r.last_metric = NAN;
    t2__metrics_init(&r.tm);
    t2__metrics_init(&r.vm);
    int64_t gb = 0, per = 0;
    int rc = t2__config_batch_sizes(a->cfg, a->hparams, &gb, &per);
    t2__ctx_init(&r.ctx, a->cfg, a->hparams, gb, per, a->trial_id, a->seed, a->threads);
    r.ctx.phase = T2__PHASE_OTHER;
    const char *where = "hyperparameters";
    if (!rc && !(rc = t2__set_num_parts(a->parts)) && !(rc = t2_set_num_threads(a->threads > 0 ? a->threads : 1)) &&
        !(rc = a->def->build_model(&r.ctx, &r.state)) && (where = "build_validation_loader") &&
        !(rc = a->def->build_validation_loader(&r.ctx, r.state, &r.valid))) {
        where = "restore";
        t2__ckpt *ck = NULL;
        t2__ckpt_model m = t2__ctx_ckpt_model(&r.ctx, 0);
        if (!t2__ctx_has_model(&r.ctx))
            rc = t2_seterr(T2_ESTATE, "the trial does not wrap its model (t2_wrap_model or t2_wrap_params)");
        if (!rc) rc = t2__ckpt_open_for_restore(&ck, a->restore_path);
        if (!rc) rc = t2__ckpt_restore_model(ck, &m, NULL);
        /* The model as it was at its step: the counters a trial's evaluation may read, and the state
         * the trial saved for itself (save_state: a vocabulary, statistics it keeps), which the
         * validation of its run had. */
        t2_checkpoint_info info;
        const void *user;
        size_t ulen;
        if (!rc) rc = t2__ckpt_get_info(ck, &info);
        if (!rc) {
            r.ctx.batches_trained = info.batches_trained;
            r.ctx.epoch = info.epoch;
        }
        if (!rc && info.has_user_state && a->def->load_state && !(rc = t2__ckpt_user_state(ck, &user, &ulen)))
            rc = a->def->load_state(&r.ctx, r.state, user, ulen);
        t2__ckpt_free(ck);
        where = "evaluate_batch";
        const t2_batch *b;
        double t0 = t2__now();
        int64_t samples = 0;
        while (!rc && !(rc = t2_loader_next(r.valid, &b)) && b) {
            r.vm.batch_weight = b->n;
            samples += b->n;
            rc = a->def->evaluate_batch(&r.ctx, r.state, b, &r.vm);
            if (!rc && r.vm.error[0]) rc = t2_seterr(T2_ENUMERIC, "%s", r.vm.error);
        }
        if (!rc && a->def->evaluate_end) {
            where = "evaluate_end";
            rc = finish_pass(a->def, &r.ctx, r.state, &r.vm);
        }
        double dt = t2__now() - t0;
        if (!rc) {
            for (int i = 0; i < r.vm.n; i++) {
                fprintf(out, "%s %.6g\n", r.vm.acc[i].name, t2__metrics_value(&r.vm, i));
                if (name && value && !strcmp(r.vm.acc[i].name, name)) *value = t2__metrics_value(&r.vm, i);
            }
            fprintf(out, "samples %lld in %.2f s (%.0f samples/s)\n", (long long)samples, dt, dt > 0 ? samples / dt : 0.0);
        }
    }
    if (rc) {
        char msg[1200];
        t2__fmt_fit(msg, sizeof msg, "%s", t2_errmsg());
        t2_seterr(rc, "%s: %s", where, msg);
    }
    t2_loader_free(r.valid);
    if (r.state && a->def->destroy) a->def->destroy(r.state);
    t2__metrics_free(&r.tm);
    free(r.report_at);
    t2__metrics_free(&r.vm);
    return rc;
}
