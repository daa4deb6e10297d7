/* parallel.h — a small fork-join pool for the memory-bound loops around the GEMMs (im2col,
 * activations, pooling). Matrix products are threaded by OpenBLAS itself; these loops would
 * otherwise leave all but one core idle for a large part of every training step. */
#ifndef T2_PARALLEL_H
#define T2_PARALLEL_H

#include <stddef.h>

/* Work on items [begin, end) of a parallel loop. */
typedef void (*t2__range_fn)(void *ctx, size_t begin, size_t end);

/* Runs fn over [0, n) split into contiguous ranges, one per thread, and returns when all are done.
 * Runs inline when n is small (below min_per_thread items per thread), when the pool has one
 * thread, or when called from inside a pool worker. The split depends on n and the thread count,
 * which may change mid-trial (the runner follows the cores the controller hands out): a loop whose
 * result depends on where the ranges end (a reduction) must run over the t2__pool_parts() parts
 * instead, one item per part, each part computed alone and the parts combined in part order. */
void t2__parallel_for(size_t n, size_t min_per_thread, t2__range_fn fn, void *ctx);

/* In a child just forked from a process that may have had pool workers: the workers do not exist
 * in the child, so forget them (and the locks they might have held) and start with one thread. */
void t2__pool_reset_after_fork(void);

/* Threads the pool uses (including the caller), 1 if no pool. */
int t2__pool_threads(void);

/* The part count P that the layers split a batch into (their reductions go by parts, so the
 * numbers depend on P and never on the thread count). Set with t2__set_num_parts; 0 (the default)
 * makes P follow t2_set_num_threads, so a program that only sets threads keeps P = threads. */
int t2__pool_parts(void);

/* Fixes P (the runner does, for a whole trial: the most threads the trial could ever get) or, with
 * 0, lets it follow the thread count again. T2_EINVAL outside 0..64. */
int t2__set_num_parts(int parts);

#endif
