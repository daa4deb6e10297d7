/* stage_experiment.h — runs one experiment stage of a pipeline (internal). */
#ifndef T2_PIPELINE_STAGE_EXPERIMENT_H
#define T2_PIPELINE_STAGE_EXPERIMENT_H
#include <stdint.h>
#include <stdio.h>
#include "configs/value.h"

typedef struct t2__exp_stage_spec {
    const char *config_path;        /* experiment.config, already resolved against the flow file's dir */
    const char *trial_path;         /* experiment.trial, likewise */
    const t2__val *hyperparameters; /* NULL, or a map whose entries replace same-named hparams as consts */
    const char *home;               /* store home (NULL: the default) */
    int64_t previous_experiment_id; /* 0, or the experiment an earlier, unfinished run of this stage
                                       started: resume it (or just read it if COMPLETED) */
    FILE *log;                      /* progress and messages ("resuming experiment N") */
    void (*on_started)(void *arg, int64_t exp_id); /* called once the experiment exists; may be NULL */
    void *on_started_arg;
} t2__exp_stage_spec;

typedef struct t2__exp_stage_result {
    int64_t experiment_id;
    int completed;               /* 1 when the experiment ended COMPLETED */
    int64_t best_trial_id;       /* 0 when no trial validated */
    double best_metric;          /* the searcher metric of the best validation */
    char best_checkpoint[64];    /* that trial's best checkpoint uuid, "" if none */
    char *best_hparams_json;     /* malloc'd JSON object of the best trial's hparams, or NULL */
} t2__exp_stage_result;

/* Creates (or resumes, per previous_experiment_id) the experiment and runs it to its end in the
 * calling process, then fills *r. Returns 0 when it completed, 1 when it ran but did not
 * complete (r is filled as far as known), negative T2_E… when it could not run (message set). */
int t2__exp_stage_run(const t2__exp_stage_spec *s, t2__exp_stage_result *r);
void t2__exp_stage_result_free(t2__exp_stage_result *r);
#endif
