/* lifecycle.h — an experiment's controller seen from other commands: detached runs, pause/kill by
 * signal, following a run, deleting a finished experiment (internal; used by main.c). */
#ifndef T2_CLI_LIFECYCLE_H
#define T2_CLI_LIFECYCLE_H

#include <stdint.h>
#include <stdio.h>
#include "framework/store/store.h"

typedef struct t2__detach {
    char home[4096]; /* absolute store home: where controller.log goes */
    int fd;          /* the child's end of the pipe to the waiting parent (-1: closed) */
} t2__detach;

/* Forks the detached controller. Returns 0 in the child, which is already in a session of its
 * own with stdin from /dev/null, and must run the experiment with t2__detach_started as the
 * on_started callback (d as its argument). In the parent returns 1 once the child has started
 * the experiment (*exp_id), or 2 when the child ended before that, with *child_exit its exit
 * status (its errors went to the terminal). A negative T2_E… code when the fork failed. */
int t2__detach_fork(t2__detach *d, const char *home, int64_t *exp_id, int *child_exit);

/* on_started for a detached controller: stdout and stderr go to
 * HOME/experiments/<id>/controller.log (appended), then the id goes to the parent. */
void t2__detach_started(void *arg, int64_t exp_id);

/* Sends sig to the experiment's live controller (checked against its token, through a pidfd
 * where the kernel has them, so a recycled pid is never signalled), then waits until it has
 * ended (at most wait_s seconds). T2_ESTATE when no controller runs it, or (saying so) when it
 * still runs after wait_s. */
int t2__signal_controller(t2__store *st, int64_t exp_id, int sig, double wait_s);

/* `kill EXP.N`: asks the live controller of the trial's experiment to kill trial trial_id (its store
 * id) and waits (at most wait_s seconds) until the trial's row says it ended or the controller is
 * gone; *state gets the trial's state then (CANCELED, or COMPLETED when it completed first, or
 * PAUSED when the experiment stopped meanwhile). With no controller running (*offline = 1) the
 * row is marked CANCELED here and the experiment's next run tells its searcher. T2_ESTATE when the
 * trial had already ended, or its experiment COMPLETED, saying so; T2_ENOTFOUND: no such trial. */
int t2__kill_trial(t2__store *st, int64_t trial_id, double wait_s, int *state, int *offline);

/* Copies HOME/experiments/<id>/controller.log to out as it grows until the experiment's
 * controller has ended; *state gets the experiment's state then. */
int t2__follow(t2__store *st, int64_t exp_id, FILE *out, int *state);

/* Copies trial trial_id's output (trial_log.c's stream) to out as it grows until the trial has
 * ended (COMPLETED, ERRORED, CANCELED) or no controller runs its experiment;
 * *state gets the trial's state then. T2_ENOTFOUND: no such trial. */
int t2__follow_trial(t2__store *st, int64_t trial_id, FILE *out, int *state);
/* t2__store_resolve_trial for a follow: an EXP.N not there yet is waited for while EXP's
 * controller runs (the error of the last try when it has ended). */
int t2__follow_resolve(t2__store *st, const char *ref, int64_t *trial_id);

/* Deletes a finished experiment: its recorded checkpoint files (each checked with
 * t2__ckpt_gc_path_check against the experiment's checkpoint_dir; nothing else in that directory
 * is touched, and it is removed only when empty), its directory HOME/experiments/<id> (symlinks
 * removed, never followed) and its rows. T2_ESTATE when its controller is alive. */
int t2__delete_experiment(t2__store *st, int64_t exp_id);

#endif
