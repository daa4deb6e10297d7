/* run.h — `t2exp pipeline run` and `t2exp pipeline status` (internal; used by the CLI). */
#ifndef T2_PIPELINE_RUN_H
#define T2_PIPELINE_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "store/store.h"

typedef struct t2__pipeline_opts {
    const char *flow_path;
    const char *home;               /* store home (NULL: the default) */
    const char *const *force;       /* --force STAGE: rerun it and everything after it */
    size_t nforce;
    int64_t jobs;                   /* the slot pool; 0: the number of cores */
    FILE *out;                      /* progress and the summary */
} t2__pipeline_opts;

/* What a run ended as (besides a negative T2_E… when it could not run at all: a bad flow file,
 * see t2__flow_errors; the store; another run of the same flow holding its lock). */
enum { T2__PIPELINE_OK = 0, T2__PIPELINE_FAILED = 1, T2__PIPELINE_INTERRUPTED = 2 };

/* Runs the flow: every stage that is not up to date, dependencies first, independent stages in
 * parallel within the pool, each in a child process; records the run and its stages in the
 * store. *run_id gets the pipeline run's id (0 when none was recorded). SIGINT/SIGTERM stop it:
 * command stages get SIGTERM, experiment stages pause (their experiment can be resumed by the
 * next run), and the run is recorded INTERRUPTED. */
int t2__pipeline_run(const t2__pipeline_opts *o, int64_t *run_id);

/* Each stage of the flow as up to date, stale (and why), never run, or failed last time, without
 * running anything. Writes a table, or a JSON array with fmt T2__FMT_JSON. */
int t2__pipeline_status(const char *flow_path, const char *home, t2__store_format fmt, FILE *out);

#endif
