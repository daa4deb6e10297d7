/* comm.h — the communicator between the ranks of one data-parallel trial (internal).
 *
 * One rank without MPI: every collective is the identity. The MPI implementation (issue 7) fills
 * the same interface. Time spent inside collectives is accumulated so the runner can report the
 * communication share of each step. */
#ifndef T2_DIST_COMM_H
#define T2_DIST_COMM_H

#include <stddef.h>

typedef struct t2__comm {
    int rank, size;
    double seconds; /* wall time spent in collectives so far */
} t2__comm;

/* A single-rank communicator. */
void t2__comm_init_single(t2__comm *c);

/* Averages buf[0..n) across ranks, in place (gradient averaging). */
int t2__comm_allreduce_mean(t2__comm *c, float *buf, size_t n);

/* Sums buf[0..n) of doubles across ranks, in place (metric reduction). */
int t2__comm_allreduce_sum_double(t2__comm *c, double *buf, size_t n);

/* Copies rank 0's buf[0..n) to every rank (initial parameters). */
int t2__comm_broadcast(t2__comm *c, void *buf, size_t bytes);

#endif
