/* runner.h — the trial runner: one trial's training loop inside its own process (internal).
 *
 * The controller starts a runner per trial (a forked child for local single-slot trials, `t2exp
 * run-trial` under mpirun otherwise) and talks to it over a channel (channel.h) in the messages of
 * protocol/protocol.h: the runner says ready, trains to each length the controller sends, reports
 * metrics, checkpoints and the end of each op, and exits when told (or after an error report). */
#ifndef T2_RUNNER_RUNNER_H
#define T2_RUNNER_RUNNER_H

#include <stdint.h>
#include <stdio.h>
#include "configs/config.h"
#include "dist/comm.h"
#include "t2exp/trial.h"

typedef struct t2__runner_args {
    const t2__config *cfg;
    const t2_trial_def *def;
    const t2__val *hparams;
    int64_t trial_id;
    uint64_t seed;
    int threads; /* numeric-core threads for this trial, at the start (a threads message changes it) */
    int parts;   /* the parts its layers split a batch into, fixed for the trial (0: follow threads) */
    int fd;      /* the channel to the controller */
    int64_t experiment_id;
    const char *ckpt_dir;     /* where checkpoints go (NULL: never checkpoint) */
    const char *restore_path; /* continue from this checkpoint (NULL: start fresh) */
    int warm_start;           /* restore_path is a warm start: parameters only, from batch 0 */
    t2__comm *comm;           /* the trial's ranks (NULL: one rank). Only rank 0 talks to the
                                 controller (fd); it relays the ops to the other ranks. */
    struct t2__chan_reader *rd; /* reads fd buffered (a worker's, which outlives the trial; NULL:
                                   frame by frame) */
    struct t2__chan_writer *wr; /* holds reports for fd until the runner waits, or for 5 ms at
                                   most (a worker's; NULL: each goes out at once) */
    const char *worker_runs; /* a worker's record of its runs' starts in its log (log_runs.c;
                                NULL: none) */
    int signals_set; /* a worker installed the runner's handlers for its life
                        (t2__runner_signals_install): the run leaves them as they are */
} t2__runner_args;

/* A worker's signal handling, set once rather than by each run (four system calls a trial):
 * SIGTERM and SIGUSR1 ask a running trial to stop as in any run, and end an idle worker by their
 * default action; SIGXFSZ is ignored. trial(1) before a run starts (a stop asked for before it
 * counts; a SIGTERM handler an earlier trial replaced is put back: one system call to look),
 * trial(0) once its finished is out (a late SIGTERM for that trial must not kill the worker
 * before then). */
void t2__runner_signals_install(void);
void t2__runner_signals_trial(int running);
/* process_state.c: the first call takes the process's signal mask, ITIMER_REAL, umask,
 * RLIMIT_NOFILE and SIGCHLD/SIGPIPE dispositions as they are; each later call puts them back
 * (a worker, before each trial after its first). */
void t2__process_state_reset(void);
/* The worker's writer is no longer the trial's: a fatal signal from here on sends nothing held
 * (what the worker adds after a trial it writes at once). */
void t2__runner_held_clear(void);

/* Runs the trial until the controller sends exit or closes the channel. Returns 0 on success and
 * 1 when the trial failed (after telling the controller why), or T2__RUNNER_CHANNEL_CLOSED. */
int t2__runner_run(const t2__runner_args *a);

/* The exit status of a runner (or worker) whose channel descriptor was closed under it: the trial
 * closed a descriptor it had not opened (a loop closing every descriptor above 2) and went on, so
 * no message can say so. The controller names that cause (settle, event_loop.c). */
#define T2__RUNNER_CHANNEL_CLOSED 76
/* 1 if descriptor fd is closed (EBADF): what a channel failure means then. */
int t2__runner_fd_closed(int fd);

/* `t2exp evaluate`: builds the trial in this process, loads the parameters of a->restore_path
 * (a warm start: no optimizer needed) and runs one validation pass, printing the metrics to out.
 * a->fd is ignored. Returns 0 or a negative code (t2_errmsg() says which callback failed). */
int t2__runner_evaluate(const t2__runner_args *a, FILE *out);
/* The same, and *value gets metric `name` of the pass (NAN: the trial reported no such metric). */
int t2__runner_evaluate_metric(const t2__runner_args *a, FILE *out, const char *name, double *value);
/* Builds the trial's model in this process and says whether it wraps it (t2_wrap_model or
 * t2_wrap_params): only then does the runner checkpoint it. A build_model failure is returned. */
int t2__runner_wraps_model(const t2__runner_args *a, int *wraps);

/* Converts a length in `unit` to batches for a trial with the given global batch size and
 * batches per epoch (ceil for records). */
int64_t t2__length_to_batches(t2__unit unit, int64_t n, int64_t global_batch, int64_t batches_per_epoch);

#endif
