/* metrics.h — accumulating a trial's reported metrics over a window (internal). */
#ifndef T2_RUNNER_METRICS_H
#define T2_RUNNER_METRICS_H

#include <stdint.h>
#include "t2exp/trial.h"

typedef struct t2__metric_acc {
    char name[64];
    t2_reducer reducer;
    double sum, weight, min, max;
    int64_t count;
    int from_end; /* this pass's value came from evaluate_end */
} t2__metric_acc;

struct t2_metrics {
    t2__metric_acc *acc;
    int n, cap;
    double batch_weight; /* weight of the current batch's MEAN reports (its sample count) */
    char error[160];     /* first bad report (non-finite value, reducer change), if any */
    int finishing;       /* inside evaluate_end: a name reported in the pass is refused */
};

void t2__metrics_init(t2_metrics *m);
void t2__metrics_free(t2_metrics *m);
/* Forgets the values (keeps the names and their order). */
void t2__metrics_reset(t2_metrics *m);
/* The reduced value of metric i; 0 when it has no reports in the window. */
double t2__metrics_value(const t2_metrics *m, int i);

#endif
