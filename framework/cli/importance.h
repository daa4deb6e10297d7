/* importance.h — `t2exp importance EXP` (importance.c; internal, used by main.c). */
#ifndef T2_CLI_IMPORTANCE_H
#define T2_CLI_IMPORTANCE_H

#include <stdint.h>
#include <stdio.h>
#include "framework/store/store.h"

/* Each searched hyperparameter's importance, highest first (names are dotted paths). */
typedef struct t2__importance_result {
    size_t d;        /* hyperparameters */
    char **names;
    double *values;  /* summing to 1 (all 0 when nothing varies the results) */
    char *metric;    /* the searcher metric */
    size_t used;     /* trials the forest was fit to */
    size_t eligible; /* COMPLETED trials with a validation (used < eligible: a sample of them) */
    size_t others;   /* the experiment's other trials */
} t2__importance_result;

/* Computes it for experiment exp_id (errors as t2__print_importance). Free with
 * t2__importance_result_free (also after a failure). */
int t2__experiment_importance(t2__store *st, int64_t exp_id, t2__importance_result *out);
void t2__importance_result_free(t2__importance_result *r);

/* Prints each searched hyperparameter's importance for experiment exp_id's results (fANOVA over
 * its COMPLETED trials' best validations), highest first, as a table, CSV or JSON. T2_ENOTFOUND
 * (no such experiment), T2_ESTATE (fewer than 2 such trials, or nothing searched), T2_ENOMEM. */
int t2__print_importance(t2__store *st, int64_t exp_id, t2__store_format fmt, FILE *out);

#endif
