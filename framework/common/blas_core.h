/* blas_core.h — choosing OpenBLAS's core for this CPU (internal; the public side is t2exp/blas.h).
 *
 * The choice is pure (t2__blas_candidates) plus a measurement: each candidate core runs a short
 * single-threaded sgemm in a child process started with OPENBLAS_CORETYPE set (OpenBLAS reads it
 * only when it loads), and the fastest wins. The result is cached per CPU and OpenBLAS build in
 * the cache directory, so only the first run on a machine pays for the probes (~0.2 s). */
#ifndef T2_COMMON_BLAS_CORE_H
#define T2_COMMON_BLAS_CORE_H

#include <stddef.h>
#include "cpu_features.h"

/* Set by the program that chose the core, for the processes after its re-exec: "CORE\tWHY". */
#define T2__BLAS_CHOSEN_ENV "T2EXP_BLAS_CHOSEN"
/* The argument that makes `t2exp` run one probe and print its GFLOPS (internal command). */
#define T2__BLAS_PROBE_ARG "__blas-probe"

/* The tier an OpenBLAS core name needs (case-insensitive), or -1 for a name t2exp does not know. */
int t2__blas_core_tier(const char *core);

/* The cores (OPENBLAS_CORETYPE spelling) worth measuring against `current` on a CPU of `tier`:
 * the best core of the CPU's tier and, on an AVX-512 BF16 CPU, the plain AVX-512 one too, leaving
 * out `current` itself and anything weaker than it. Strongest first; up to max names into out;
 * returns how many (0: keep what OpenBLAS chose, e.g. for a core this table does not know). */
int t2__blas_candidates(t2__vec_tier tier, const char *current, const char **out, int max);

/* Which of n measured candidates (g[i] GFLOPS, strongest first as t2__blas_candidates lists them;
 * 0 for one that did not run) replaces the current core measured at current_g: -1 for none. A
 * candidate must beat the current core by 10%, and among those the first in the list is taken
 * unless a later one is more than 1.5 times as fast: candidates of one tier (SkylakeX, Cooperlake)
 * measure within noise of each other and flipped between fresh homes, and a result is only
 * bit-reproducible on one core. Pure. */
int t2__blas_pick(double current_g, const double *g, int n);

/* GFLOPS of a single-threaded sgemm with the core this process loaded (best of a few short runs). */
double t2__blas_probe_gflops(void);

/* Decides the core for this process: returns 1 and writes the core to set (and why) when one of
 * the candidates measured faster than the current core, 0 when OpenBLAS's own choice stands (why
 * says so, or is "" when there was nothing to decide). `exe` is the program that runs probes when
 * given T2__BLAS_PROBE_ARG. cache_path (NULL: none) is the file that keeps the decision per CPU and
 * OpenBLAS build. Never fails: a probe that cannot run leaves its candidate out, and a cache that
 * cannot be read or written is measured around. */
int t2__blas_choose(const char *exe, const char *cache_path, char *core, size_t core_len, char *why,
                    size_t why_len);

/* On a CPU without AVX: runs OpenBLAS's own core `current` once in a probe child (`exe`, as for
 * t2__blas_choose). Returns 1 with core "PRESCOTT" (the generic kernel) and why when the probe
 * died of a signal (an instruction this CPU lacks), 0 when the core stands (why says whether it
 * was checked). *verdict (NULL: not asked) is 1 when the probe ran or died, a result worth
 * caching, 0 when it could not start. */
int t2__blas_check_own(const char *exe, const char *current, char *core, size_t core_len, char *why, size_t why_len,
                       int *verdict);

/* The internal command T2__BLAS_PROBE_ARG: prints "<core loaded> <GFLOPS>"; the exit status. */
int t2__blas_probe_main(void);

/* For a program's start, before it does anything else: unless OPENBLAS_CORETYPE or an earlier
 * decision is in the environment, decides the core (t2__blas_choose, cached in the dataset cache
 * directory as blas-core) and records the decision in the environment for every later process.
 * Returns 1 when it set OPENBLAS_CORETYPE: the caller must then re-execute itself for OpenBLAS to
 * load that core. */
int t2__blas_startup(void);

#endif
