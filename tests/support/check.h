/* check.h — the few assertion macros the unit tests use. A failed check prints where and why and
 * counts; main() returns check_report() so ctest sees the failure. */
#ifndef T2_TEST_CHECK_H
#define T2_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "t2exp/error.h"

static int check_failures;

#define CHECK(cond)                                                                           \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);           \
            check_failures++;                                                                 \
        }                                                                                     \
    } while (0)

/* An expression returning a t2exp status must return `want`; prints t2_errmsg() otherwise. */
#define CHECK_RC(expr, want)                                                                  \
    do {                                                                                      \
        int rc_ = (expr);                                                                     \
        if (rc_ != (want)) {                                                                  \
            fprintf(stderr, "%s:%d: %s returned %d (%s), wanted %d; errmsg: %s\n", __FILE__,  \
                    __LINE__, #expr, rc_, t2_strerror(rc_), (want), t2_errmsg());               \
            check_failures++;                                                                 \
        }                                                                                     \
    } while (0)

#define CHECK_OK(expr) CHECK_RC(expr, T2_OK)

#define CHECK_NEAR(a, b, tol)                                                                 \
    do {                                                                                      \
        double a_ = (a), b_ = (b);                                                            \
        if (!(fabs(a_ - b_) <= (tol))) {                                                      \
            fprintf(stderr, "%s:%d: %s = %.9g, %s = %.9g, differ by more than %g\n", __FILE__, \
                    __LINE__, #a, a_, #b, b_, (double)(tol));                                  \
            check_failures++;                                                                 \
        }                                                                                     \
    } while (0)

/* Two strings must be equal (got may be NULL); both are printed, aligned, when they differ. */
#define CHECK_STR(got, want)                                                                      \
    do {                                                                                          \
        const char *g_ = (got), *w_ = (want);                                                     \
        if (!g_ || strcmp(g_, w_) != 0) {                                                         \
            fprintf(stderr, "%s:%d: got  \"%s\"\n%*swant \"%s\"\n", __FILE__, __LINE__,           \
                    g_ ? g_ : "(null)", (int)strlen(__FILE__) + 8, "", w_);                        \
            check_failures++;                                                                     \
        }                                                                                         \
    } while (0)

static inline int check_report(const char *name)
{
    if (check_failures) fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
    else printf("%s: all checks passed\n", name);
    return check_failures ? 1 : 0;
}

#endif
