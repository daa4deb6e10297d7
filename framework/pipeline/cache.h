/* cache.h — is a stage up to date? The one rule `pipeline run` and `pipeline status` share. */
#ifndef T2_PIPELINE_CACHE_H
#define T2_PIPELINE_CACHE_H

#include <stddef.h>
#include "flow.h"
#include "hash.h"
#include "store/store_pipeline.h"

/* What checking a stage found. */
typedef struct t2__stage_check {
    int up_to_date;
    char why[512];  /* stale: the first reason ("definition changed", "input data/x changed", ...) */
    char **argv;    /* resolved argv (argc of the stage), NULL for none */
    t2__val *hparams; /* resolved hyperparameters, or NULL */
    t2__stage_hash h;
    char *inputs_json; /* h.inputs as JSON */
    /* shell: true with references: the sh -c text to run and the values' environment (argv[0]
     * then holds the text with the values pasted in, which only the hash uses). */
    t2__shell_cmd sh;
} t2__stage_check;

/* Resolves stage i's references through look, hashes it and compares with last_ok (its last
 * successful stage run, NULL when none): up to date when the total hash matches and every output
 * exists (a `kind: dataset` output must also open as a dataset cache). Returns 0 with c filled,
 * or a negative T2_E… with the message naming the stage (an input missing, a reference without
 * a value); c is then empty. */
int t2__stage_check_run(const t2__flow *f, size_t i, t2__ref_lookup look, void *ud, const t2__stage_run_row *last_ok,
                        t2__stage_check *c);
void t2__stage_check_free(t2__stage_check *c, size_t argc);

/* 0 when every output of stage i exists (and datasets open); else T2_ENOTFOUND naming the first
 * missing one ("output cache/x.t2c is missing"). */
int t2__stage_outputs_ok(const t2__flow *f, size_t i);

#endif
