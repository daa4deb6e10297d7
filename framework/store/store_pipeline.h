/* store_pipeline.h — pipeline runs and stage runs in the store (internal; schema version 4).
 *
 * The pipeline executor is the writer; every write here commits at once (runs and stages change
 * state a few times per run, and `pipelines`/`pipeline status` in another terminal should see it).
 * States are the upper-case names the schema's CHECKs allow:
 *   pipeline run: RUNNING, SUCCEEDED, FAILED, INTERRUPTED;
 *   stage run: RUNNING, SUCCEEDED, FAILED, SKIPPED (up to date), BLOCKED (a dependency failed),
 *   CANCELED (the run stopped before it started), INTERRUPTED (stopped while it ran). */
#ifndef T2_STORE_PIPELINE_H
#define T2_STORE_PIPELINE_H

#include <stdint.h>
#include <stdio.h>
#include "store.h"

/* A new RUNNING pipeline run (started_at = now). */
int t2__store_pipeline_run_create(t2__store *st, const char *name, const char *flow_path, const char *flow_hash,
                                  int64_t *id);
/* Its final state (ended_at = now) and error (NULL: none). */
int t2__store_pipeline_run_end(t2__store *st, int64_t id, const char *state, const char *error);

/* What a stage run records about the cache (any field may be NULL). */
typedef struct t2__stage_run_hashes {
    const char *input_hash; /* the total */
    const char *def_hash, *refs_hash;
    const char *inputs_json; /* {"input": "hash", ...} */
} t2__stage_run_hashes;

/* A stage run in `state`. RUNNING sets started_at = now; a final state sets both times to now
 * (a stage that was up to date, blocked or canceled took no time). result_json (may be NULL) is
 * the stage's results, copied from the run it was up to date with for SKIPPED. */
int t2__store_stage_run_add(t2__store *st, int64_t run_id, const char *stage, const char *state,
                            const t2__stage_run_hashes *h, const char *log_path, const char *result_json,
                            const char *error, int64_t *id);
int t2__store_stage_run_set_experiment(t2__store *st, int64_t id, int64_t experiment_id);
/* Final state of a RUNNING stage run: ended_at = now, exit_code (INT32_MIN: none), result, error. */
int t2__store_stage_run_end(t2__store *st, int64_t id, const char *state, int exit_code, const char *result_json,
                            const char *error);

typedef struct t2__stage_run_row {
    int64_t id, run_id;
    char *stage, *state;
    double started_at, ended_at; /* NAN: none */
    int has_exit_code, exit_code;
    char *log_path, *input_hash, *def_hash, *refs_hash, *inputs_json;
    int64_t experiment_id; /* 0: none */
    char *result_json, *error;
} t2__stage_run_row;

/* The latest stage run of `stage` in pipeline runs named `flow_name`: any (successful 0), the
 * latest SUCCEEDED or SKIPPED one (successful 1), or the latest that ran at all, i.e. not
 * SKIPPED, BLOCKED or CANCELED (successful 2). T2_ENOTFOUND when there is none. */
int t2__store_last_stage_run(t2__store *st, const char *flow_name, const char *stage, int successful,
                             t2__stage_run_row *out);
void t2__stage_run_row_free(t2__stage_run_row *r);

/* Pipeline runs of flow_name still RUNNING, and their RUNNING stage runs, become INTERRUPTED
 * (the caller holds the flow's run lock, so no process runs them any more). *n: how many runs. */
int t2__store_pipeline_interrupt_stale(t2__store *st, const char *flow_name, int64_t *n);

/* `t2exp pipelines`: id, name, state, stages (succeeded/skipped/failed counts), started,
 * duration, flow. */
int t2__store_print_pipeline_runs(t2__store *st, t2__store_format fmt, FILE *out);
/* `t2exp pipelines describe ID`: the run, then its stages (state, times, exit code, experiment,
 * log, error). json: {"run": {...}, "stages": [...]}; csv: the stages. T2_ENOTFOUND. */
int t2__store_print_pipeline_run(t2__store *st, int64_t id, t2__store_format fmt, FILE *out);

#endif
