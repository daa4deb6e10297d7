/* trial_table.h — the controller's table of trials (internal).
 *
 * Every trial the searcher created, in creation order, with what the controller knows of it: its
 * work (pending and in-progress TRAIN lengths), its process and channel while it runs, its restarts
 * and latest checkpoint. The table keeps the indices that make every event O(running trials), not
 * O(all trials) (a search can queue ten thousand trials up front): the RUNNING trials, the QUEUED
 * trials whose work differs from the common case ("special": restarted, paused, closed, or with
 * another length than max_length), and the first never-started QUEUED trial. No I/O here. */
#ifndef T2_CONTROLLER_TRIAL_TABLE_H
#define T2_CONTROLLER_TRIAL_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "configs/value.h"

/* LAUNCHING: its mpirun is started and rank 0 has not yet called back and proved its key
 * (launch.c); it holds its slots and is in the running list, but has no channel (fd -1) and gets
 * no ops until it is RUNNING. */
typedef enum { T2__CTL_QUEUED, T2__CTL_RUNNING, T2__CTL_DONE, T2__CTL_ERRORED, T2__CTL_LAUNCHING } t2__ctl_state;

/* The array grows with max_trials and every fork copies its page tables (and every later write
 * to a shared page faults), so a trial is kept to ~200 bytes: a PATH_MAX buffer inline made it
 * 4.3 KB, 43 MB for 10,000 trials. */
typedef struct t2__ctl_trial {
    int64_t rid, id;        /* searcher request id, store trial id */
    t2__val *hparams;
    char *hparams_json;     /* its JSON as stored, kept for its assign messages (NULL: render them) */
    uint64_t seed;
    int state;              /* t2__ctl_state */
    pid_t pid;
    int fd;
    int reaped, reaped_status; /* its process was reaped while its channel stayed open (event_loop.c) */
    int ready, exit_sent, closing, pausing;
    int auto_exit;          /* its op in flight is a last one: it leaves after done, unasked */
    int rejected;           /* sent a report the controller refused: stopped, its messages ignored */
    int64_t pending;        /* TRAIN length not yet sent (-1: none) */
    int64_t sent;           /* TRAIN length in progress (-1: idle) */
    int restarts;
    int fresh;              /* made by this controller and never started (a log at its path is a lost trial's) */
    int threads;            /* the thread count it was last given (start or threads message) */
    int invalid_hparams;    /* the trial said its hparams are unusable: no restart */
    int fatal;              /* the failure would repeat on restart: no restart */
    int killed;             /* `t2exp kill EXP.N` asked: it ends CANCELED, never restarted (trial_kill.c) */
    int listed;             /* in the table's special list */
    unsigned lazy;          /* T2__TU_BATCHES/TARGET not yet written (t2__ctl_store_trial) */
    int *host_slots;        /* slots this trial holds on each host of the pool (NULL: none) */
    char *hosts;            /* where it ran, run after run, as its row's hosts (host_history.h; NULL: none) */
    int64_t gb, bpe, batches, target; /* global batch, batches per epoch, trained, op target */
    double metric;          /* searcher metric of the latest validation (NAN: none) */
    double loss, rate;
    double work;            /* its share of the trained work in the experiment's progress: batches over
                               target while it has not ended, else 0 (t2__ctl_note_work) */
    char *error;
    char *pruned_why;       /* searcher.pruner stopped it: why (T2__PRUNED_AT...), its row's error */
    char *ckpt;             /* path of the trial's latest checkpoint (NULL: none) */
    char *log_path;
    char *session_dir;      /* its mpirun's Open MPI session directory (NULL: not a distributed trial) */
    struct t2__proc_tree *tree; /* what its mpirun started, noted as the controller ended it (mpirun_end.c) */
    int probing;            /* host probes still running after it failed on the pool (host_check.c) */
    int probe_status;       /* how its processes ended, settled once the probes are done */
    int probe_lost;         /* a probe found one of its hosts gone */
    double left_at;         /* when it was told to leave or said it stops (0: not since it started) */
    double exit_since;      /* its channel closed and its process is awaited since then (exit_wait.c) */
    int exit_stage;         /* 0: waited for; 1: mpirun asked to tear down */
    int leave_stage;        /* a distributed trial's ranks that did not end after that (event_loop.c) */
    int64_t *report_at;     /* steps its earlier runs reported training metrics at, for the next
                             * TRAIN op (t2__store_report_steps); NULL once sent */
    size_t nreport_at;
} t2__ctl_trial;

typedef struct t2__trial_table {
    t2__ctl_trial *t;
    size_t nt, cap;
    size_t *run;            /* indices of RUNNING and LAUNCHING trials */
    size_t nrun, caprun;
    size_t *special;        /* QUEUED trials that are not "waiting for full_length" (may be stale) */
    size_t nspecial, capspecial;
    size_t sched_from;      /* no never-started QUEUED trial below this index */
    int64_t ndone;          /* DONE + ERRORED */
    int64_t full_length;    /* searcher.max_length: the work of the common case */
} t2__trial_table;

/* Appends a QUEUED trial with no work, taking ownership of hparams (freed on failure too).
 * T2_ENOMEM. The table's array may move: earlier trial pointers are invalid afterwards. */
int t2__tt_add(t2__trial_table *tt, int64_t rid, t2__val *hparams, uint64_t seed, t2__ctl_trial **out);
/* The trial with searcher request id rid, or NULL. */
t2__ctl_trial *t2__tt_find(t2__trial_table *tt, int64_t rid);
/* Every state change goes through here, to keep the running list and counters right. A trial
 * just added counts as QUEUED; set t->state = -1 first to have a restored trial counted. */
int t2__tt_set_state(t2__trial_table *tt, t2__ctl_trial *t, int state);
/* Lists a QUEUED trial whose work is not the common case (after its pending length changed). */
int t2__tt_note_special(t2__trial_table *tt, t2__ctl_trial *t);
/* Drops the entries of the special list that are no longer QUEUED. */
void t2__tt_prune_special(t2__trial_table *tt);
void t2__tt_free(t2__trial_table *tt);

#endif
