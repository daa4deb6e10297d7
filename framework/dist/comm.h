/* comm.h — the communicator between the ranks of one data-parallel trial (internal).
 *
 * A trial with S slots runs as S processes started by `mpirun -np S` (docs/distributed.md). Each
 * holds one t2__comm. Without MPI (or when the process was not started by mpirun) the
 * communicator is a single rank and every collective is the identity, so the runner's code is
 * the same either way.
 *
 * Rules every caller must keep, since a collective that one rank skips hangs the others:
 *  - every rank calls the same collectives in the same order with the same sizes (n, bytes);
 *  - only the thread that called t2__comm_init_mpi calls them (MPI_THREAD_FUNNELED: the numeric
 *    pool and loader workers never touch MPI);
 *  - a rank that fails returns from main with a non-zero status WITHOUT t2__comm_finalize:
 *    mpirun then ends the whole job instead of leaving the other ranks waiting.
 *
 * Errors: MPI failures come back as T2_EIO with MPI's own text (errors are set to return, never
 * to abort the job); bad arguments as T2_EINVAL. Time spent inside the data collectives (not the
 * barrier or the message broadcast, which mostly wait on the controller) is added to `seconds`,
 * so the runner can report the communication share of each step. */
#ifndef T2_DIST_COMM_H
#define T2_DIST_COMM_H

#include <stddef.h>
#include <stdint.h>

typedef struct t2__comm {
    int rank, size;
    double seconds; /* wall time spent in data collectives so far */
    int mpi;        /* 1: collectives go through MPI (t2__comm_init_mpi); 0: one rank, identities */
    size_t max_count; /* elements per MPI call, 0 = INT_MAX (MPI counts are int); tests lower it */
} t2__comm;

/* ---- set-up ------------------------------------------------------------------------------- */

/* A single-rank communicator (no MPI calls ever). */
void t2__comm_init_single(t2__comm *c);

/* 1 if this build has the MPI communicator (T2EXP_WITH_MPI), else 0. */
int t2__comm_have_mpi(void);

/* The world size a parallel launcher announced to this process through the environment
 * (OMPI_COMM_WORLD_SIZE from Open MPI's mpirun, else PMI_SIZE from MPICH/Slurm PMI), or 0 when
 * the process was not started by one. Needs no MPI, so a runner can decide before initialising. */
int t2__comm_launched_size(void);

/* MPI_Init_thread(MPI_THREAD_FUNNELED) (unless MPI is already initialised) and a communicator
 * over a private duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN. Call it once, early in main,
 * from the thread that will train, before any thread starts. T2_EUNSUPPORTED in a build without
 * MPI or if the library cannot give FUNNELED; T2_EIO if MPI fails. argc/argv may be NULL. */
int t2__comm_init_mpi(t2__comm *c, int *argc, char ***argv);

/* What a runner binary calls first: t2__comm_init_mpi when started by a launcher
 * (t2__comm_launched_size() > 0), else t2__comm_init_single. T2_EUNSUPPORTED if a launcher
 * asked for several ranks and this build has no MPI. */
int t2__comm_init_auto(t2__comm *c, int *argc, char ***argv);

/* Ends MPI (MPI_Finalize, once per process) for an MPI communicator; nothing for a single rank.
 * Every rank must call it (it synchronises); c becomes a single-rank communicator. */
int t2__comm_finalize(t2__comm *c);

/* ---- data collectives (timed in c->seconds) ----------------------------------------------- */

/* Averages buf[0..n) across ranks, in place (gradient averaging): one MPI_Allreduce(SUM) over the
 * whole buffer, then a scale by 1/size, so every rank ends with bit-identical values. */
int t2__comm_allreduce_mean(t2__comm *c, float *buf, size_t n);

/* Sums buf[0..n) of doubles across ranks, in place (metric reduction). */
int t2__comm_allreduce_sum_double(t2__comm *c, double *buf, size_t n);

/* Metric reduction in one call: sums sum[0..n) and weight[0..n) across ranks, in place. A MEAN
 * metric is then sum/weight with each rank's weight its sample count, e.g. accuracy = total
 * correct / total samples however unevenly the validation set was sharded. */
int t2__comm_allreduce_weighted(t2__comm *c, double *sum, double *weight, size_t n);

/* MIN and MAX metrics in one call: min[i] becomes the smallest and max[i] the largest value of
 * any rank, in place. Either array may be NULL. */
int t2__comm_allreduce_minmax(t2__comm *c, double *min, double *max, size_t n);

/* Copies rank 0's buf[0..bytes) to every rank (initial parameters, restored state). */
int t2__comm_broadcast(t2__comm *c, void *buf, size_t bytes);

/* Every rank's n words, in rank order: all[r * n .. r * n + n) is rank r's mine[0..n) (all holds
 * size * n words). A one-rank communicator copies. Exact (integers, summed over zeros). */
int t2__comm_allgather_u64(t2__comm *c, const uint64_t *mine, size_t n, uint64_t *all);

/* ---- control (not timed) ------------------------------------------------------------------ */

/* Waits until every rank has called it. */
int t2__comm_barrier(t2__comm *c);

/* Relays one message from rank 0 to every rank (the controller's ops, which only rank 0 reads).
 * On rank 0, *msg and *len are the message (not changed; *msg NULL means "no message", e.g. the
 * controller closed the channel). On the others, *msg becomes a malloc'd copy with a NUL after
 * its *len bytes (free() it), or NULL for "no message". Two broadcasts: the length, then the
 * bytes. T2_ENOMEM if a copy cannot be allocated (after the collective, so ranks stay in step). */
int t2__comm_broadcast_msg(t2__comm *c, char **msg, size_t *len);

/* Checks that every rank passed the same bytes (metric names, parameter count, config): T2_OK if
 * so, T2_ESTATE naming the rank otherwise. One small allreduce of a 64-bit hash. */
int t2__comm_agree(t2__comm *c, const void *buf, size_t bytes, const char *what);

/* ---- MPI back end (comm_mpi.c; used only through the functions above) -------------------- */

typedef enum { T2__COMM_F32, T2__COMM_F64, T2__COMM_U64 } t2__comm_dtype;
typedef enum { T2__COMM_SUM, T2__COMM_MIN } t2__comm_op;

int t2__mpi_allreduce(t2__comm *c, void *buf, size_t n, t2__comm_dtype type, t2__comm_op op);
int t2__mpi_bcast(t2__comm *c, void *buf, size_t bytes);
int t2__mpi_barrier(t2__comm *c);

#endif
