/* json_number.c — a decimal number's double and a double's 17 significant digits, exactly, for the
 * common case, without strtod or printf.
 *
 * Why: the controller reads every number a runner reports with strtod and prints every sampled
 * hyperparameter with strfromd (then checks the shorter candidates with strtod): about a fifth of
 * its main thread's instructions a trial (callgrind, a random search of one-batch trials), and the
 * workers pay the same for the numbers they print and read. glibc's conversions are exact for
 * every input, through multi-precision arithmetic; most of ours need far less.
 *
 * How: a decimal w * 10^q with w < 2^64 and |q| <= 27 is one multiplication or division of two
 * numbers that x87's 64-bit-mantissa long double holds exactly (10^27 = 5^27 * 2^27, 5^27 < 2^64),
 * so the long double result is the exact value correctly rounded to 64 bits. Rounding that to a
 * double's 53 bits gives the exact value's rounding unless the 64-bit result sits exactly on a
 * halfway point between two doubles (its low 11 bits 0x400): the exact value is then on either
 * side of it, and we ask strtod. (With w < 2^53 and |q| <= 22 one double operation is already
 * exact, Clinger's fast path.) The 17 digits are the same trick the other way: x * 10^(16 - e) as
 * a long double, rounded to an integer, unless its fraction is too near a half to tell. Anything
 * else (more than 19 significant digits, exponents past the tables, no 64-bit long double) takes
 * strtod or strfromd as before. test_json_number compares both with glibc over millions of inputs,
 * and fuzz_json on every number it meets. */
#define __STDC_WANT_IEC_60559_BFP_EXT__ 1 /* strfromd */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "value.h"

#define MAX_Q 27

static const long double P10L[MAX_Q + 1] = {
    1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,  1e10L, 1e11L, 1e12L, 1e13L,
    1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L,
};
static const double P10D[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Whether the long doubles are x87's 80-bit ones: a 64-bit mantissa, explicit leading bit, in a
 * value's first 8 bytes (little-endian), and exact powers of ten up to 10^27 (the literals above
 * are exact there). Elsewhere the fast ways are off and glibc does it all. */
#if LDBL_MANT_DIG == 64 && (defined(__x86_64__) || defined(__i386__))
#define X87_LDBL 1
#else
#define X87_LDBL 0
#endif
/* Whether a double operation rounds once, to a double (not through a wider format). */
#define DOUBLE_EXACT_OPS (FLT_EVAL_METHOD == 0)

/* Whether this process's long doubles really compute at 64 bits. Not under valgrind, whose x87 works
 * in doubles (test_json_number then read 4% of its texts wrong), nor with the FPU's precision set
 * lower: 3 * (2^53 + 1) needs 55 bits. Checked once, at run time; without it the fast ways that
 * need it are off and glibc answers. */
static int ldbl_exact;
static pthread_once_t ldbl_once = PTHREAD_ONCE_INIT;

static void ldbl_check(void)
{
    volatile long double a = 9007199254740993.0L, b = 3.0L;
    long double p = a * b;
    ldbl_exact = X87_LDBL && p == 27021597764222979.0L;
}

int t2__long_double_exact(void)
{
    pthread_once(&ldbl_once, ldbl_check);
    return ldbl_exact;
}

static double by_strtod(const char *s, size_t len)
{
    char tmp[64];
    if (len < sizeof tmp) {
        memcpy(tmp, s, len);
        tmp[len] = '\0';
        return strtod(tmp, NULL);
    }
    char *heap = malloc(len + 1);
    if (!heap) return strtod(s, NULL); /* out of memory: s's number ends at s[len] (value.h) */
    memcpy(heap, s, len);
    heap[len] = '\0';
    double d = strtod(heap, NULL);
    free(heap);
    return d;
}

int t2__decimal_fast(const char *s, size_t len, double *out)
{
    const char *p = s, *end = s + len;
    int neg = p < end && *p == '-';
    if (neg || (p < end && *p == '+')) p++;
    uint64_t w = 0;
    int digits = 0, q = 0, any = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++, any = 1) {
        if (w == 0 && *p == '0') continue; /* a leading zero is no significant digit */
        if (++digits > 19) return -1;
        w = w * 10 + (uint64_t)(*p - '0');
    }
    if (p < end && *p == '.')
        for (p++; p < end && *p >= '0' && *p <= '9'; p++, any = 1) {
            q--;
            if (w == 0 && *p == '0') continue;
            if (++digits > 19) return -1;
            w = w * 10 + (uint64_t)(*p - '0');
        }
    if (!any) return -1;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = p < end && *p == '-';
        if (eneg || (p < end && *p == '+')) p++;
        if (p >= end || *p < '0' || *p > '9') return -1;
        int e = 0;
        for (; p < end && *p >= '0' && *p <= '9'; p++)
            if ((e = e * 10 + (*p - '0')) > 100000) return -1;
        q += eneg ? -e : e;
    }
    if (p != end) return -1;
    if (w == 0) {
        *out = neg ? -0.0 : 0.0;
        return 0;
    }
    double d;
    if (DOUBLE_EXACT_OPS && w < (UINT64_C(1) << 53) && q >= -22 && q <= 22) {
        d = q >= 0 ? (double)w * P10D[q] : (double)w / P10D[-q];
    } else if (X87_LDBL && q >= -MAX_Q && q <= MAX_Q && t2__long_double_exact()) {
        long double r = q >= 0 ? (long double)w * P10L[q] : (long double)w / P10L[-q];
        uint64_t bits;
        memcpy(&bits, &r, sizeof bits); /* the 64-bit mantissa */
        if ((bits & 0x7ff) == 0x400) return -1; /* on a halfway point: which side? */
        d = (double)r;
    } else {
        return -1;
    }
    *out = neg ? -d : d;
    return 0;
}

double t2__decimal_double(const char *s, size_t len)
{
    double d;
    return t2__decimal_fast(s, len, &d) == 0 ? d : by_strtod(s, len);
}

int t2__double_digits17(double x, char dig[17], int *exp10)
{
    if (!X87_LDBL || !(x > 0) || !isfinite(x) || !t2__long_double_exact()) return -1;
    int e2;
    frexp(x, &e2);
    /* floor(log10(x)), or one less: log10(2) a little low. */
    int e = (int)floor((e2 - 1) * 0.30102999566398114);
    for (int tries = 0; tries < 2; tries++) {
        int k = 16 - e;
        if (k < -MAX_Q || k > MAX_Q) return -1;
        long double r = k >= 0 ? (long double)x * P10L[k] : (long double)x / P10L[-k];
        if (r < 1e16L) { /* e was one too high */
            e--;
            continue;
        }
        if (r >= 1e17L) { /* one too low */
            e++;
            continue;
        }
        long double ip = floorl(r), frac = r - ip;
        /* r is within half a 64-bit ulp (at most 2^-8 below 2^57 > 10^17) of x * 10^k. */
        if (fabsl(frac - 0.5L) < 0.0078125L) return -1;
        uint64_t n = (uint64_t)ip + (frac > 0.5L);
        if (n == UINT64_C(100000000000000000)) { /* 99..9.5 rounds up to a new digit */
            n = UINT64_C(10000000000000000);
            e++;
        }
        for (int i = 16; i >= 0; i--, n /= 10) dig[i] = (char)('0' + n % 10);
        *exp10 = e;
        return 0;
    }
    return -1;
}
