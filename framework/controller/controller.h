/* controller.h — runs an experiment: config -> searcher -> trial processes -> store (internal).
 *
 * The controller is the only writer of the store. It owns the searcher and the scheduler (slots,
 * concurrency, restarts), starts each trial in its own process (forked from this one, which has
 * already loaded the trial object), relays the trials' reports into the store, and shows
 * progress. A broken trial never takes the experiment down: its failure is recorded, it is
 * restarted up to max_restarts times, then marked errored, and the search goes on. */
#ifndef T2_CONTROLLER_CONTROLLER_H
#define T2_CONTROLLER_CONTROLLER_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include "configs/config.h"
#include "configs/value.h"
#include "store/store.h"

typedef enum { T2__PROGRESS_AUTO, T2__PROGRESS_TTY, T2__PROGRESS_PLAIN, T2__PROGRESS_QUIET } t2__progress_mode;

typedef struct t2__create_opts {
    const t2__config *cfg;   /* loaded and validated */
    const char *trial_path;  /* the trial shared object */
    const char *home;        /* store home (NULL: the default) */
    const char *const *overrides; /* the --config KEY=VALUE strings the config was loaded with */
    int noverrides;
    const char *from_checkpoint;  /* --from-checkpoint: warm-start new trials from this archive */
    t2__progress_mode progress;
    FILE *out;               /* progress and summary (stdout) */
    /* May be NULL. Called once the experiment exists and this process is recorded as its
     * controller (so `t2exp pause`/`kill`/`follow` work from then on): `create --detach` passes
     * the id to the waiting parent here. */
    void (*on_started)(void *arg, int64_t exp_id);
    void *on_started_arg;
} t2__create_opts;

/* `t2exp kill EXP.N`: the signal the live controller takes a trial's store id by, as the value of
 * a queued signal (sigqueue, pidfd_send_signal with si_code SI_QUEUE; sival_ptr carries the id).
 * Queued signals do not merge, so two kills in a row are two requests (trial_kill.c). */
#define T2__SIG_KILL_TRIAL (SIGRTMIN)

/* Runs the experiment to the end. *exp_id gets its id once the experiment is set up and this
 * process recorded as its controller (0 if it never got that far). Returns 0 when the experiment
 * ended COMPLETED (some of its trials may have errored: the summary counts them), 1 when it ran and
 * ended ERRORED, PAUSED or CANCELED, and a negative T2_E… code when it could not start (bad trial
 * object, store trouble, a checkpoint directory it cannot make), with t2_errmsg() saying why; one
 * whose row was written by then is left ERRORED with that reason (t2__ctl_fail_start). */
int t2__experiment_create(const t2__create_opts *o, int64_t *exp_id);

/* How the stored config marks the command line's --config overrides (so resume can apply them). */
#define T2__OVERRIDES_MARK "# overridden on the command line:"
#define T2__OVERRIDE_PREFIX "#   --config "

typedef struct t2__resume_opts {
    int64_t experiment_id;
    const char *home;
    const char *trial_path; /* NULL: the trial object the experiment was created with */
    /* Applied on top of the stored ones and, once the run starts, stored after them (a later
     * resume applies them all again); a key whose change a resume cannot honour is T2_EINVAL. */
    const char *const *overrides;
    int noverrides;
    t2__progress_mode progress;
    FILE *out;
    void (*on_started)(void *arg, int64_t exp_id); /* as in t2__create_opts; may be NULL */
    void *on_started_arg;
} t2__resume_opts;

/* Continues an experiment whose controller was killed or interrupted: the config as created, the
 * searcher from its saved state, every unfinished trial from its latest checkpoint. Returns as
 * t2__experiment_create; T2_ESTATE for a COMPLETED experiment or one whose controller is alive
 * (liveness.c), T2_ENOTFOUND for an unknown id. */
int t2__experiment_resume(const t2__resume_opts *o);

/* T2_EINVAL, saying what to change, when create would refuse cfg for slots on the pool it names
 * (the hostfile's or the Slurm allocation's, read but not looked up; else this machine's cores):
 * preview's check. A hostfile that cannot be read is its error. */
int t2__ctl_check_slots(const t2__config *cfg);

/* The overrides an experiment was created with, then extra: from the overrides column (a JSON
 * array of strings; *doc keeps them alive, free it with t2__val_free), or, for an experiment made
 * before the store had that column, from the "#   --config " comment lines at the end of its
 * config, which row->config_yaml is then cut at (they point into it). *out (free it) gets *n
 * strings. Used by resume, and by evaluate with a stored config. */
int t2__experiment_overrides(t2__experiment_row *row, const char *const *extra, int nextra, const char ***out,
                             int *n, t2__val **doc);

/* The config experiment id ran with (its stored file and --config overrides), extra on top, and
 * (parts may be NULL) the part count it recorded (0: none). T2_ENOTFOUND for an unknown id. Used
 * by evaluate with a stored config and by importance. */
int t2__experiment_stored_config(t2__store *st, int64_t id, const char *const *extra, int nextra, t2__config **cfg,
                                 int *parts);

#endif
