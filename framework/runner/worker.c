/* worker.c — the loop of a long-lived trial worker: take an assign, run the trial with the runner
 * (its output goes to the worker's log, which the controller reads by segments), say finished,
 * wait for the next one. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "channel.h"
#include "protocol/protocol.h"
#include "store/store.h"
#include "worker.h"

/* One assigned trial: its exit status (the runner's). Its output goes to the worker's own log
 * (stdout), whose size now is where the run starts: recorded in runs first (log_runs.c), where a
 * killed controller cannot lose it. *log_end: the log's size with the output flushed (-1: not a
 * file), which the controller takes as the next trial's start rather than asking the file. */
static int run_one(const t2__runner_args *base, int fd, int runs, t2__chan_reader *rd, t2__chan_writer *wr,
                   const t2__msg *m, int64_t *log_end)
{
    off_t start = runs >= 0 ? lseek(STDOUT_FILENO, 0, SEEK_END) : -1;
    if (start >= 0 && t2__log_runs_append(runs, m->u.assign.trial_id, (int64_t)start) != 0)
        fprintf(stderr, "t2exp worker: cannot record where trial %lld's output starts in %s: %s\n",
                (long long)m->u.assign.trial_id, base->worker_runs, strerror(errno));
    t2__runner_args a = *base;
    a.fd = fd;
    a.rd = rd;
    a.wr = wr;
    a.hparams = m->u.assign.hparams;
    a.trial_id = m->u.assign.trial_id;
    a.seed = m->u.assign.seed;
    a.threads = (int)m->u.assign.threads;
    a.parts = (int)m->u.assign.parts;
    a.restore_path = m->u.assign.restore_path;
    a.warm_start = m->u.assign.warm_start;
    a.signals_set = 1;
    int status = t2__runner_run(&a);
    fflush(stdout); /* the log stays stdout until the next trial's: the worker itself writes nothing */
    fflush(stderr);
    off_t end = start >= 0 ? lseek(STDOUT_FILENO, 0, SEEK_END) : -1;
    *log_end = end >= 0 ? (int64_t)end : -1;
    return status;
}

int t2__worker_serve(const t2__runner_args *base, int fd)
{
    int status = 0;
    /* One buffered reader for the worker's life, lent to each trial's runner: a read may take
     * more than the message asked for (an assign and the train sent right after it), and what it
     * took stays in the buffer for the next reader. */
    t2__chan_reader rd = {0};
    t2__chan_writer wr = {0}; /* the trial's reports, held until it waits (runner.c), and finished */
    /* 0600 as the log. Without it the worker still runs trials: `t2exp logs` then has only the
     * store's segments, as before the record existed. */
    t2__runner_signals_install();
    int runs = base->worker_runs ? open(base->worker_runs, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
    if (base->worker_runs && runs < 0)
        fprintf(stderr, "t2exp worker: cannot open %s: %s\n", base->worker_runs, strerror(errno));
    for (;;) {
        t2__msg m;
        int got, rc;
        /* Idle, the worker waits in poll, not in read: a read blocked on a Unix socket is woken by
         * every wake-up of the socket, among them the controller's read of this worker's last
         * finished (freed send space); poll's wait only by data. One wake-up and sleep less a trial. */
        if (!t2__chan_reader_has_frame(&rd)) {
            struct pollfd pf = {.fd = fd, .events = POLLIN};
            while (poll(&pf, 1, -1) < 0 && errno == EINTR) {
            }
        }
        while (!(rc = t2__msg_recv_buffered(&rd, fd, 1, &m, &got)) && !got) {
        }
        if (rc) {
            status = t2__runner_fd_closed(fd) ? T2__RUNNER_CHANNEL_CLOSED : 2;
            break;
        }
        if (m.kind == T2__MSG_NONE) break;
        /* An op the controller sent the previous trial before it read that trial's finished (an
         * exit after an error, say) arrives here: it belongs to no trial now. */
        if (m.kind == T2__MSG_TRAIN || m.kind == T2__MSG_EXIT || m.kind == T2__MSG_VALIDATED ||
            m.kind == T2__MSG_THREADS || m.kind == T2__MSG_STOP) {
            t2__msg_free(&m);
            continue;
        }
        if (m.kind != T2__MSG_ASSIGN) {
            t2__msg_free(&m);
            status = 2;
            break;
        }
        t2__runner_signals_trial(1);
        int64_t log_end = -1;
        int st = run_one(base, fd, runs, &rd, &wr, &m, &log_end);
        t2__runner_held_clear(); /* what follows is the worker's, flushed at once */
        t2__msg_free(&m);
        /* After what the trial still holds, in the same write. */
        t2__msg fin = {.kind = T2__MSG_FINISHED, .u.finished = {.status = st, .log_end = log_end}};
        if (t2__msg_put(&wr, &fin) || t2__chan_writer_flush(&wr, fd)) {
            status = st == T2__RUNNER_CHANNEL_CLOSED || t2__runner_fd_closed(fd) ? T2__RUNNER_CHANNEL_CLOSED : 2;
            break;
        }
        /* Only now: a SIGTERM for this trial that comes late (it had ended) must not kill the
         * worker before its finished is out. Between trials a SIGTERM is no request to
         * checkpoint (nothing runs): it ends the worker, as it ends a forked trial before its
         * runner starts, and the controller replaces it. */
        t2__runner_signals_trial(0);
    }
    t2__chan_reader_free(&rd);
    t2__chan_writer_free(&wr);
    if (runs >= 0) close(runs);
    return status;
}
