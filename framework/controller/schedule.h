/* schedule.h — the controller's scheduling decisions as pure functions (internal).
 *
 * Which trial starts next, how many run at once and with how many threads, what a trial is sent
 * when it is idle, and what becomes of a trial whose process ended: the event loop (event_loop.c)
 * asks these and carries out the answers, so every decision is unit-tested without a process
 * (tests/unit/test_controller_schedule.c). Which slots of the pool a trial gets: slot_pool.h. */
#ifndef T2_CONTROLLER_SCHEDULE_H
#define T2_CONTROLLER_SCHEDULE_H

#include <stdint.h>
#include "trial_table.h"

typedef struct t2__sched_limits {
    int cores;                      /* this machine's cores */
    int pool_slots;                 /* resources.hostfile's live slots (0: no hostfile, trials run
                                       here; -1: a hostfile whose hosts are all gone) */
    int64_t slots_per_trial;        /* >= 1 */
    int64_t max_slots;              /* resources.max_slots (0: no limit) */
    int64_t max_concurrent_trials;  /* searcher.max_concurrent_trials (0: no limit) */
    int64_t expected_trials;        /* the searcher's total (<= 0: unknown) */
    int64_t max_threads_per_trial;  /* resources.max_threads_per_trial (0: no cap) */
} t2__sched_limits;

typedef struct t2__sched_capacity {
    int slots;    /* the slot pool */
    int capacity; /* trials running at once, >= 1 */
    int threads;  /* numeric-core threads each trial gets at first (distributed trials: for good) */
    int parts;    /* the parts a trial's layers split a batch into, fixed for the experiment: the
                     most threads a trial could ever get (slots / slots_per_trial, capped) */
} t2__sched_capacity;

/* T2_EINVAL (with the reason) when a trial needs more slots than the pool has. */
int t2__sched_plan(const t2__sched_limits *l, t2__sched_capacity *out);

/* The threads of the k-th (from 0, in the order of the running list) of `running` local
 * single-slot trials sharing `slots`: slots / running, the first slots % running one more, at most
 * max_threads (0: no cap) and 64, at least 1. So cores freed by a trial that ended go to the
 * trials still running, and the trials never take more cores than the pool has (unless there
 * are more trials than slots, at one thread each). */
int t2__sched_share(int slots, int running, int k, int64_t max_threads);

/* The next trial to start: one QUEUED with work, the lowest request id first. Never-started
 * trials are found from tt->sched_from on (which it advances); restarted and paused ones are on
 * the special list. NULL: none. */
t2__ctl_trial *t2__sched_next(t2__trial_table *tt);
/* How many trials t2__sched_next would hand out one after another, counting to limit at most:
 * the trials that start together, so the first of them gets its final thread share (and no
 * threads message when the next one starts a moment later). O(limit + running). */
int t2__sched_startable(const t2__trial_table *tt, int limit);

typedef enum {
    T2__FEED_NOTHING,    /* not running, waiting for its ready, or busy with an op */
    T2__FEED_TRAIN,      /* send its pending TRAIN length */
    T2__FEED_EXIT_CLOSE, /* closed by the searcher: exit for good */
    T2__FEED_EXIT_PAUSE, /* no work until the searcher decides: exit, QUEUED until it gets work */
} t2__feed_action;

/* What a running trial is sent now. The first op goes out right after the start, before the
 * runner is ready (it reads it once it is), saving a round trip per trial. An idle trial never
 * holds a slot: it exits and starts again when it gets work. */
t2__feed_action t2__sched_feed(const t2__ctl_trial *t);

typedef struct t2__exit_facts {
    int exited_ok;     /* exit status 0 */
    int ended_after_leaving; /* ended by the controller after it left (its ranks hung in MPI_Finalize) */
    int interrupted;   /* the experiment is being paused or killed */
    int64_t max_restarts;
} t2__exit_facts;

typedef enum {
    T2__EXIT_PAUSED,    /* left as asked, with the searcher's work for it not done: QUEUED */
    T2__EXIT_COMPLETED, /* left as asked after its last op: DONE */
    T2__EXIT_STOPPED,   /* failed while the experiment stops: QUEUED, continues on resume */
    T2__EXIT_RESTART,   /* failed: QUEUED again with a restart counted */
    T2__EXIT_ERRORED,   /* failed for good (restarts spent, bad hparams, or a fatal error) */
    T2__EXIT_KILLED,    /* killed by the user (t->killed) before it completed: CANCELED for good */
} t2__exit_verdict;

/* The fate of a trial whose process ended, from what it said (t->exit_sent, t->error, t->pausing,
 * t->closing, t->restarts, t->invalid_hparams, t->fatal, t->killed) and how it ended. */
t2__exit_verdict t2__sched_exit(const t2__ctl_trial *t, const t2__exit_facts *f);

#endif
