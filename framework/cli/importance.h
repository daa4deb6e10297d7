/* importance.h — `t2exp importance EXP` (importance.c; internal, used by main.c). */
#ifndef T2_CLI_IMPORTANCE_H
#define T2_CLI_IMPORTANCE_H

#include <stdint.h>
#include <stdio.h>
#include "framework/store/store.h"

/* Prints each searched hyperparameter's importance for experiment exp_id's results (fANOVA over
 * its COMPLETED trials' best validations), highest first, as a table, CSV or JSON. T2_ENOTFOUND
 * (no such experiment), T2_ESTATE (fewer than 2 such trials, or nothing searched), T2_ENOMEM. */
int t2__print_importance(t2__store *st, int64_t exp_id, t2__store_format fmt, FILE *out);

#endif
