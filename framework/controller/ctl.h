/* ctl.h — the state one experiment run shares between the controller's modules (internal).
 *
 *   experiment_create.c / experiment_resume.c  set up a run (new, or from the store)
 *   experiment_run.c   sizes the pool, runs the loop, records the outcome
 *   event_loop.c       starts trials, feeds them ops, reads their reports, reaps them
 *   reports.c          what each report from a runner does to the store and the trial
 *   searcher_link.c    the searcher's operations applied to the trial table and the store
 *   workers.c          the long-lived local trial workers (resources.isolation: worker)
 *   job_control.c      Ctrl-Z passed on to the trials' process groups
 *   trial_table.c, schedule.c, slot_pool.c   the bookkeeping and the pure decisions */
#ifndef T2_CONTROLLER_CTL_H
#define T2_CONTROLLER_CTL_H

#include <limits.h>
#include <signal.h>
#include "controller.h"
#include "progress.h"
#include "protocol/protocol.h"
#include "runner/runner.h"
#include "runner/channel_auth.h"
#include "runner/trial_so.h"
#include "searchers/searcher.h"
#include "slot_pool.h"
#include "store/store.h"
#include "host_probe.h"
#include "trial_table.h"

/* A probe of one host of a trial that failed on the pool (host_check.c). */
typedef struct t2__probe {
    size_t trial;           /* index in the trial table */
    int host;               /* index in the pool */
    t2__host_probe p;
} t2__probe;

/* A distributed trial being launched (launch.c): its mpirun runs, rank 0 has not called back. */
typedef struct t2__launch {
    size_t trial;           /* index in the trial table (stable while the array moves) */
    double deadline;        /* t2__now() by which rank 0 must have called back */
    unsigned char key[T2__AUTH_KEY_BYTES]; /* this launch's channel key */
} t2__launch;

/* An accepted connection whose handshake is not complete (launch.c). */
typedef struct t2__caller {
    int fd;                 /* non-blocking; -1 once closed or handed to its trial */
    double deadline;        /* t2__now() by which its hello must be complete */
    t2__auth_server *auth;
} t2__caller;

/* A long-lived worker process (workers.c); pid 0: none in this entry. */
typedef struct t2__ctl_worker {
    pid_t pid;
    int fd;         /* the controller's end of its channel */
    int busy;       /* running a trial (the trial holds the same pid and fd) */
    int log_fd;     /* the entry's log, kept open by the controller for its size; -1: not yet */
    char *log_path; /* experiments/ID/worker-N.log, shared by the entry's successive processes */
    int exits_seen; /* t2__ctl_child_exits when the process was last known to be alive */
    int64_t log_end; /* the log's size as the process said at its last trial's end; -1: ask the file */
} t2__ctl_worker;

typedef struct t2__ctl {
    const t2__create_opts *o;
    const t2__config *cfg;
    t2__store *st;
    t2__searcher *s;
    struct t2__pruner *pruner; /* searcher.pruner (prune_link.c); NULL: none */
    t2__trial_so so;
    t2__ops ops;
    size_t op_next;
    t2__trial_table tt;
    int64_t exp_id;
    int recorded;           /* this process is the experiment's recorded controller (liveness.c) */
    int shutdown;
    int stopping;           /* t2__ctl_stop_all is stopping every trial (an interruption, or the
                               controller's own error): trials that end now are stopped by us, not
                               failed, and continue on resume */
    int slots, capacity, threads;
    int parts;              /* of every single-slot trial's batches (t2__sched_capacity.parts) */
    int recorded_parts;     /* P as the store recorded it at create (resume); 0: none yet */
    int reshare;            /* a trial ended: the running trials' threads are to be shared again */
    double best;
    int64_t best_trial;     /* store id of the trial with the best validation (0: none yet) */
    int64_t best_ordinal;   /* and its number in the experiment, as the summary names it */
    int64_t ckpt_failed;    /* checkpoint writes the trials reported failed in this run */
    t2__progress prog;
    char ckpt_dir[PATH_MAX];
    char exp_dir[PATH_MAX - 64]; /* HOME/experiments/ID, made once (its trials' log paths); "": not yet */
    int ckpt_dir_own;       /* ckpt_dir is this store's alone (under the home, or named by the store
                               id): only then may resume sweep checkpoint files it never recorded */
    char *warm;             /* the checkpoint new trials warm-start from (NULL: none) */
    const char *const *ovr; /* the config's --config overrides (for distributed trials' spec) */
    int novr;
    int listen_fd;          /* where distributed trials' rank 0 calls back (-1: not yet) */
    t2__launch *launch;     /* the LAUNCHING trials */
    size_t nlaunch, caplaunch;
    t2__probe *probe;       /* host probes running (host_check.c) */
    size_t nprobe, capprobe;
    size_t *exiting;        /* trials whose channel closed and whose process is awaited (exit_wait.c) */
    size_t nexiting, capexiting;
    t2__caller *caller;     /* handshakes in progress, oldest first */
    size_t ncaller, capcaller;
    double refusals_since;  /* start of the minute whose refused callers are being counted */
    int refusals_shown;     /* refused callers reported in that minute */
    long long refusals_hidden; /* refused callers not reported since the last report */
    struct pollfd *pf;      /* the poll set: one per running trial, then launch.c's, grown with them */
    size_t *pf_trial;       /* the trial index of each entry of pf */
    size_t cap_pf;
    t2__slot_pool pool;
    char connect_addr[300];
    char self_exe[PATH_MAX];
    char *saved_snapshot;    /* the searcher snapshot last written to the store (NULL: none yet) */
    int snapshot_due;        /* an event changed the searcher since saved_snapshot was written */
    size_t *lazy;            /* indices of trials with lazy fields (t2__ctl_store_trial) */
    size_t nlazy, caplazy;
    double saved_progress;   /* the progress last written (NAN: none yet) */
    double work_partial;     /* the sum of the trials' work: how much of their length the trials not
                                ended yet have trained, in trials (t2__ctl_note_work) */
    int exits_scanned;       /* t2__ctl_child_exits when the running trials were last checked for an end
                                that no end of stream told (event_loop.c) */
    double exits_scan_at;    /* and when */
    t2__ctl_worker *workers; /* one entry per trial that may run at once (capacity) */
    int nworkers;
    struct t2__chan_reader *rd; /* the running trials' channel readers, indexed by fd (channels.c) */
    struct t2__chan_writer *wr; /* what the loop sends them, held until it waits, indexed by fd */
    int nrd;
    int *send_fds; /* descriptors whose writer holds frames (may repeat) */
    size_t nsend, capsend;
} t2__ctl;

/* The buffered reader of channel fd (grown on demand; NULL: out of memory, error set), its reset
 * (a trial starts on fd, or fd is closed) and the end of them all (channels.c). */
struct t2__chan_reader *t2__ctl_reader(t2__ctl *c, int fd);
/* 1 if channel fd's reader holds a message to handle without reading (channels.c). */
int t2__ctl_reader_has_frame(const t2__ctl *c, int fd);
void t2__ctl_reader_reset(t2__ctl *c, int fd);
/* Queues m for channel fd; it goes out at the next t2__ctl_flush_sends, with whatever else was
 * queued for fd, in one write. Only T2_ENOMEM (or an over-long message) fails here: a peer that
 * is gone shows up as its end of stream. */
struct t2__msg;
int t2__ctl_send(t2__ctl *c, int fd, const struct t2__msg *m);
/* Writes every queued message; the loop calls it before it waits (t2__ctl_pump). */
void t2__ctl_flush_sends(t2__ctl *c);
/* fd was closed: what its reader holds and what was queued for it are dropped (the number will
 * be another channel's). */
void t2__ctl_channel_closed(t2__ctl *c, int fd);
void t2__ctl_readers_free(t2__ctl *c);

/* The signal that stops the experiment: SIGINT/SIGTERM pause it (trials checkpoint, PAUSED),
 * SIGUSR2 (`t2exp kill`) kills it (trials killed, CANCELED). 0: none yet. */
extern volatile sig_atomic_t t2__ctl_interrupted;
/* SIGINTs and SIGUSR2s caught (modulo 2^30): one that comes while the trials of a pause
 * checkpoint (a second Ctrl-C, `t2exp kill`) stops them at once (t2__ctl_stop_all). */
extern volatile sig_atomic_t t2__ctl_stops_asked;

/* SIGCHLDs caught (modulo 2^30) while t2__ctl_catch_signals's handler is installed, and whether
 * it is: a worker is known to be alive without a waitpid while no child has ended since it last
 * was (workers.c), which was a system call per trial on the controller's serial thread. */
extern volatile sig_atomic_t t2__ctl_child_exits, t2__ctl_child_exits_counted;

typedef struct t2__ctl_signals {
    struct sigaction intr, term, usr2, chld, tstp, kill_trial;
} t2__ctl_signals;

/* trial_kill.c: `t2exp kill EXP.N`. The handler of T2__SIG_KILL_TRIAL queues the trial ids it is
 * sent (old gets the handler it replaces); every round of the loop takes them (t2__ctl_take_kills):
 * a QUEUED trial is canceled at once, a running one killed, its end settled as CANCELED. */
void t2__ctl_catch_kill_trial(struct sigaction *old);
int t2__ctl_take_kills(t2__ctl *c);
/* Records t as killed by the user: CANCELED with the reason, ended in the table, its searcher told. */
int t2__ctl_cancel_trial(t2__ctl *c, t2__ctl_trial *t);
/* On resume, before the searcher's first ops are applied: tells it of the trials that ended without
 * its hearing: killed while no controller ran (their rows marked by `t2exp kill EXP.N` itself), or
 * ended while a custom searcher's library failed on that very event (undone). */
int t2__ctl_tell_missed_ends(t2__ctl *c);

/* job_control.c: Ctrl-Z (SIGTSTP) asked (set by the handler t2__ctl_catch_suspend installs, old
 * getting the one it replaces); t2__ctl_suspend_if_asked, called by every round of the loop, stops
 * every trial's process group, then the controller, and continues them when it is continued. */
extern volatile sig_atomic_t t2__ctl_suspend_asked;
void t2__ctl_catch_suspend(struct sigaction *old);
void t2__ctl_suspend_if_asked(t2__ctl *c);

/* Whether trials start through mpirun: distributed trials, and every trial when resources.hostfile
 * gives a pool of hosts (its slots are where trials run, single-slot ones too). */
static inline int t2__ctl_via_mpi(const t2__ctl *c)
{
    return c->cfg->resources.slots_per_trial > 1 || c->pool.nhosts > 0;
}

/* The signal that ends a runner now: SIGKILL for a local process; SIGTERM for mpirun, whose own
 * teardown ends every rank (SIGKILL would orphan them). */
static inline int t2__ctl_kill_signal(const t2__ctl *c) { return t2__ctl_via_mpi(c) ? SIGTERM : SIGKILL; }

/* Whether local trials run in long-lived workers (resources.isolation: worker); trials that start
 * through mpirun never do. */
static inline int t2__ctl_uses_workers(const t2__ctl *c)
{
    return !t2__ctl_via_mpi(c) && c->cfg->resources.isolation == T2__ISOLATION_WORKER;
}

/* How every line the controller shows a user names a trial: EXP.N, its experiment's id and its
 * number in the experiment (the searcher's request id, stored as the trial's ordinal), which is
 * what describe, trials, checkpoints and every EXP.N argument take. The store id (trials' `id`
 * column, the N of trial-N.log) counts across the whole store: "trial 9" read as 2.9 named
 * another trial. The store id appears only where it is called one ("id 9"). Use as
 * printf("trial " T2__TRIAL_FMT ..., T2__TRIAL_ARGS(c, t), ...). */
#define T2__TRIAL_FMT "%lld.%lld"
#define T2__TRIAL_ARGS(c, t) (long long)(c)->exp_id, (long long)(t)->rid

/* experiment_run.c */
void t2__ctl_init(t2__ctl *c);
/* The experiment's row exists but its run failed before the loop (a directory, the slot pool, the
 * store): the row is left ERRORED with the reason (t2_errmsg()), as an error in the loop leaves it,
 * rather than ACTIVE with no controller, and create's output says so. Returns rc, the message kept. */
int t2__ctl_fail_start(t2__ctl *c, int rc);
void t2__ctl_catch_signals(t2__ctl_signals *old);
void t2__ctl_restore_signals(const t2__ctl_signals *old);
int t2__ctl_end(t2__ctl *c, int rc);
void t2__ctl_cleanup(t2__ctl *c);
/* Opens the store for a run: home_opt (--home), else the default home, whose path goes to
 * home[n]. Any failure but memory is T2_EIO, store trouble (exit 3), whatever SQLite or the schema
 * check called it (a damaged file, one that is no store, a newer schema), not a usage error.
 * existing: only a store that is there (resume, activate); one that is not is T2_EIO too. */
int t2__ctl_open_store(const char *home_opt, char *home, size_t n, t2__store **st, int existing);
int t2__ctl_cores(void);
int t2__ctl_better(const t2__ctl *c, double a, double b);

/* searcher.pruner (prune_link.c). _init makes c->pruner when the config has one; _validation
 * records trial t's searcher-metric value at t->batches and, when the runner waits on the answer
 * (asked) before its op's end and past the warmup, judges it: *prune 1 stops the trial there
 * (t->pruned_why says why). _done tells the searcher once the pruned trial's runner reported done
 * (length: the op's). _ended: the trial ended (completed: COMPLETED, pruned or not), so its values
 * become a reference or are dropped. _restore: a resume's pruner from the store's validations, after
 * the trial table is rebuilt. */
int t2__ctl_prune_init(t2__ctl *c);
void t2__ctl_prune_free(t2__ctl *c);
int t2__ctl_prune_validation(t2__ctl *c, t2__ctl_trial *t, double value, int asked, int *prune);
int t2__ctl_prune_done(t2__ctl *c, t2__ctl_trial *t, int64_t length);
void t2__ctl_prune_ended(t2__ctl *c, t2__ctl_trial *t, int completed);
int t2__ctl_prune_restore(t2__ctl *c);
int t2__ctl_checkpoint_dir(t2__ctl *c, const char *home, const char *recorded, int legacy);
int t2__ctl_resolve_warm(t2__ctl *c);
int t2__ctl_run_experiment(t2__ctl *c, int resumed);
struct t2__sched_capacity;
/* t2__sched_plan for cfg on a pool of pool_slots (t2__sched_limits' meaning), a refusal said
 * where resources.slots_per_trial was set. */
int t2__ctl_fit(const t2__config *cfg, int pool_slots, int64_t expected_trials, struct t2__sched_capacity *cap);
/* Sizes the run from the pool: slots, trials at once, threads each (t2__sched_plan). */
int t2__ctl_plan(t2__ctl *c);

/* searcher_link.c */
/* Writes the fields `set` of t's row from t (state and error as given). Progress alone
 * (T2__TU_BATCHES, T2__TU_TARGET) waits for t's next write or the next commit, whichever comes
 * first, and goes with it: a one-batch trial wrote six updates, four now. */
int t2__ctl_store_trial(t2__ctl *c, t2__ctl_trial *t, unsigned set, int state, const char *error);
/* As t2__store_update_trial for t, with t's waiting progress fields added to u. */
int t2__ctl_update_trial(t2__ctl *c, t2__ctl_trial *t, t2__trial_update *u);
int t2__ctl_apply_and_save(t2__ctl *c);
/* Counts t's trained length into the experiment's progress anew (t->batches, t->target and
 * whether it ended): O(1), called by every write of t's row (t2__ctl_store_trial,
 * t2__ctl_update_trial) and for each trial a resume restores. */
void t2__ctl_note_work(t2__ctl *c, t2__ctl_trial *t);
/* on: every commit first writes the trials' waiting progress fields (t2__ctl_store_trial) and the
 * searcher snapshot if an event changed it since the last one. off: neither any more (after a
 * store error the searcher may be ahead of the stored rows). */
void t2__ctl_snapshot_at_commit(t2__ctl *c, int on);
int t2__ctl_save_searcher(t2__ctl *c);

/* event_loop.c */
int t2__ctl_run_loop(t2__ctl *c);
int t2__ctl_pump(t2__ctl *c);
void t2__ctl_stop_all(t2__ctl *c);
void t2__ctl_kill_all_quietly(t2__ctl *c);
/* The trial is RUNNING with its channel: tell the store and the progress view. */
int t2__ctl_trial_started(t2__ctl *c, t2__ctl_trial *t);
/* Decides the fate of a trial whose processes are gone (status as waitpid's; -1: it never got
 * going, t->error says why) and applies what the searcher says to that. */
int t2__ctl_settle(t2__ctl *c, t2__ctl_trial *t, int status);

/* launch.c: distributed trials' launches and the handshakes of their callers, as loop events */
/* Records the launch of t (mpirun pid, the launch's key): t is LAUNCHING. */
int t2__ctl_launch_begin(t2__ctl *c, t2__ctl_trial *t, pid_t pid, const unsigned char key[T2__AUTH_KEY_BYTES]);
/* How many poll entries launch.c needs; fills them (returns how many) in the order events wants. */
size_t t2__ctl_launch_nfds(const t2__ctl *c);
int t2__ctl_launch_fill(const t2__ctl *c, struct pollfd *pf);
/* After the poll: reads callers, accepts new ones, completes or fails launches, enforces every
 * deadline. Never waits. A negative code is the controller's own trouble. */
int t2__ctl_launch_events(t2__ctl *c, const struct pollfd *pf, int n);
/* Stops every launch (mpirun SIGTERM, reaped) and settles its trial. */
int t2__ctl_launch_stop(t2__ctl *c);
/* Closes every caller and forgets every launch (no store writes). */
void t2__ctl_launch_free(t2__ctl *c);

/* host_check.c: after a trial failed on the pool, whether its hosts still answer, as loop events */
/* Starts probing each live host of t, whose processes ended as status (-1: never got going). With
 * t->probing > 0 afterwards, t waits (LAUNCHING, its slots held) and host_check settles it once the
 * probes are done; otherwise the caller settles it now. */
int t2__ctl_check_hosts(t2__ctl *c, t2__ctl_trial *t, int status);
/* Every round: looks at each probe without waiting; a host that did not answer leaves the pool and
 * the trial's error says so; a trial whose probes are done is settled. An error if too few hosts
 * are left for a trial. */
int t2__ctl_probe_events(t2__ctl *c);
/* Stops every probe and settles its trial with no verdict on its hosts (the controller stops). */
int t2__ctl_probes_stop(t2__ctl *c);
/* Ends every probe and forgets them (no store writes). */
void t2__ctl_probes_free(t2__ctl *c);

/* exit_wait.c: a runner whose channel closed, awaited as loop events */
/* Reaps t's process if it has ended and settles t (t2__ctl_exited); otherwise t waits, LAUNCHING
 * with no channel, and the rounds below settle it once its process ends. */
int t2__ctl_exit_begin(t2__ctl *c, t2__ctl_trial *t);
/* Every round: reaps those whose process ended, ends those past their time. Never waits. */
int t2__ctl_exit_events(t2__ctl *c);
/* Ends every awaited process now (SIGKILL) and settles its trial (the stop paths). */
int t2__ctl_exits_end(t2__ctl *c);
/* Kills and reaps every awaited process and forgets them (no store writes). */
void t2__ctl_exits_free(t2__ctl *c);
/* A runner's process ended (status as waitpid's): what it left is cleared, its hosts are probed if
 * it failed on the pool, and it is settled (event_loop.c). */
int t2__ctl_exited(t2__ctl *c, t2__ctl_trial *t, int status);

/* prepare_data.c: runs the trial's prepare_data in a child process and waits for it. T2_OK, or
 * prepare_data's own error, or how its process ended before it returned; *interrupted when a
 * stop (Ctrl-C, SIGTERM) ended it. */
int t2__ctl_prepare_data(t2__ctl *c, uint64_t seed, int *interrupted);
/* Runs it for experiment c->exp_id (if the trial has one): on failure the experiment is ERRORED
 * (PAUSED when stopped) with the reason, said on the progress output; returns nonzero then. */
int t2__ctl_prepare_experiment(t2__ctl *c, uint64_t seed);

/* mpirun_end.c: before the controller ends a distributed trial's mpirun, what it started is noted;
 * once it is reaped, what it left (those processes, its session directory) is cleared. */
void t2__ctl_mpirun_note(t2__ctl_trial *t);
void t2__ctl_mpirun_gone(t2__ctl_trial *t);
/* Every channel the controller holds (running trials', workers') and its listening socket, and
 * its descriptors of the store's files, in a malloc'd array *fds of *n: a new child process
 * closes them all, since a child holding another trial's channel would keep it open after the
 * controller closes it, and one holding the store's could write into it (t2__store_fds). */
int t2__ctl_child_close_fds(const t2__ctl *c, int **fds, int *n);
/* Reports the refused callers not yet reported one by one (the loop's end calls it). */
void t2__ctl_report_refusals(t2__ctl *c);

/* experiment_create.c: what the resources need that this machine and build must have, checked
 * by create and resume before anything is recorded or started: MPI for slots_per_trial > 1 or a
 * hostfile (T2_EUNSUPPORTED naming the key), and a controller_address that is one of this
 * machine's (T2_EINVAL naming it). */
int t2__ctl_check_resources(const t2__config *cfg);

/* pool_use.c: the pool loaded (resources.hostfile, else the Slurm allocation unless
 * resources.slurm is off or this t2exp has no MPI) and named in the controller's log */
int t2__ctl_load_pool(t2__ctl *c);
void t2__ctl_log_pool(t2__ctl *c);
/* pool_use.c: a trial on the pool */
int t2__ctl_take_slots(t2__ctl *c, t2__ctl_trial *t, int slots, char *path, size_t len);
void t2__ctl_release_slots(t2__ctl *c, t2__ctl_trial *t);
/* Adds where t runs now (its pool slots, else this machine) to its hosts history and the store's. */
int t2__ctl_record_hosts(t2__ctl *c, t2__ctl_trial *t);

/* workers.c */
/* Hands trial t (its runner args a, its log t->log_path) to an idle worker, forking one if none
 * is idle; t->pid and t->fd become the worker's. T2_EIO when no worker can be started. */
int t2__ctl_worker_start(t2__ctl *c, t2__ctl_trial *t, const t2__runner_args *a);
/* Forks the first n workers now, before the controller's heap grows with the trial table and
 * the store's cache: every page a worker shares with the controller costs a copy-on-write fault
 * (and a TLB shootdown) at the controller's next write to it. No-op without workers; a worker
 * that cannot be forked now is forked by the first trial that needs it. */
int t2__ctl_workers_prespawn(t2__ctl *c, int n);
/* Whether t runs in a worker. */
int t2__ctl_on_worker(const t2__ctl *c, const t2__ctl_trial *t);
/* Where t's output goes now: its worker's log, or its own (t->log_path). */
const char *t2__ctl_output_path(const t2__ctl *c, const t2__ctl_trial *t);
/* t's worker said finished: it is idle again, and t no longer holds it (pid 0, fd -1). */
void t2__ctl_worker_idle(t2__ctl *c, t2__ctl_trial *t);
/* What t's worker said its log's size is at t's end (its finished; -1: unknown). */
void t2__ctl_worker_log_end(t2__ctl *c, const t2__ctl_trial *t, int64_t log_end);
/* t's worker is gone (its channel closed, the caller reaped it): its entry is free. */
void t2__ctl_worker_gone(t2__ctl *c, const t2__ctl_trial *t);
/* Ends every worker: channels closed (an idle worker exits at the end of stream), a busy one
 * killed, all reaped. Idempotent. */
void t2__ctl_workers_end(t2__ctl *c);

/* resume_overrides.c. T2_OK when every key the resume's overrides (extra) change, cfg against old
 * (the same stored config without them), is one a resume honours; else T2_EINVAL naming the first
 * key (and the override that changed it) and why it cannot take effect. */
int t2__ctl_check_resume_overrides(const t2__config *old, const t2__config *cfg, const char *const *extra, int nextra);
/* Stores ovr (the earlier overrides, then this resume's) as the experiment's overrides. */
int t2__ctl_store_overrides(t2__ctl *c, const char *const *ovr, int novr);

/* reports.c */
int t2__ctl_on_message(t2__ctl *c, t2__ctl_trial *t, const t2__msg *m);
/* Stops a trial that sent what the protocol does not allow (why says what); it errors, no restart. */
int t2__ctl_reject_message(t2__ctl *c, t2__ctl_trial *t, const char *why);
/* Garbage collection: the experiment's ACTIVE checkpoints that checkpoint_storage does not keep
 * (the union of save_experiment_best, save_trial_best, save_trial_latest) and that no unfinished
 * trial continues from are marked DELETED (committed), then their files removed. Run after each
 * new checkpoint, when a trial that had one ends, and once when the run ends. */
int t2__ctl_collect_garbage(t2__ctl *c);

#endif
