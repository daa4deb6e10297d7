/* t2exp/blas.h — which BLAS kernels this process runs on, and whether they suit the CPU.
 *
 * OpenBLAS built with DYNAMIC_ARCH (Debian's) picks a kernel set ("core") when it loads, from a
 * table that predates many CPUs: Debian 12's 0.3.21 runs AMD Zen 4 on its Haswell kernels (half
 * the sgemm speed of its SkylakeX ones there) and recent Xeons on the generic Prescott kernels.
 * The core can only be changed before OpenBLAS loads, through the OPENBLAS_CORETYPE environment
 * variable. The `t2exp` program does that itself (it measures the candidate cores once, caches the
 * choice, and re-executes with the variable set); a program of your own that links libt2exp can
 * call t2_blas_check() at start-up to learn what to set. A user's OPENBLAS_CORETYPE always wins. */
#ifndef T2EXP_BLAS_H
#define T2EXP_BLAS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct t2_blas_report {
    char library[64];   /* "OpenBLAS 0.3.21" */
    char core[32];      /* the core in use, as OpenBLAS names it ("Haswell", "SkylakeX", ...) */
    char cpu_core[32];  /* the strongest core this CPU's features allow (OPENBLAS_CORETYPE spelling) */
    char cpu[64];       /* the CPU's brand string */
    char features[128]; /* its vector extensions ("avx2 fma avx512f ...") */
    int weaker;         /* 1: the core in use is weaker than cpu_core */
    int user_set;       /* 1: OPENBLAS_CORETYPE was set by the user (not by t2exp) */
    int chosen;         /* 1: t2exp's program set OPENBLAS_CORETYPE after measuring */
    char why[384];      /* how the core came to be used, in one line */
} t2_blas_report;

/* Fills *r for this process. T2_EINVAL for NULL. */
int t2_blas_report_get(t2_blas_report *r);

/* Returns 1, with advice in msg ("OpenBLAS uses its Haswell kernels on a CPU with AVX-512:
 * set OPENBLAS_CORETYPE=SKYLAKEX before the program starts"), when the core in use is weaker than
 * the CPU allows and OPENBLAS_CORETYPE is not set; 0 (msg "") when it is as strong; also 0, with a
 * warning in msg, when OPENBLAS_CORETYPE names a core OpenBLAS did not take. msg may be NULL. */
int t2_blas_check(char *msg, size_t len);

/* One line for logs and bug reports: "BLAS: OpenBLAS 0.3.21, core SkylakeX (<why>)". */
int t2_blas_line(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
