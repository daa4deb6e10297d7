/* test_json_double.c — json_double.c's shortest text is the text of the three printf calls it
 * replaced (the shortest of %.15g, %.16g, %.17g that strtod reads back), over doubles of every
 * kind: random bit patterns, a search's samples (uniform, log-uniform), short decimals, large
 * integers (where 15 and 16 digits can meet an exact half), powers of two and the extremes.
 * T2_JSON_DOUBLE_N (default 200000) sets how many of each random kind. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "../../configs/value.h" /* configs/ is not on the test include path */

static long compared, mismatches;

static void reference(double d, char *out, size_t cap)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, cap, "%.*g", prec, d);
        if (prec == 17 || strtod(out, NULL) == d) break;
    }
}

static void same(double d)
{
    char want[64], got[64];
    if (!isfinite(d)) return;
    reference(d, want, sizeof want);
    size_t n = t2__json_double_text(d, got, sizeof got);
    compared++;
    if (strcmp(want, got) != 0 || n != strlen(got)) {
        if (mismatches++ < 10) fprintf(stderr, "%a: got %s, wanted %s\n", d, got, want);
    }
}

static uint64_t state = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}
static double unit(void) { return (double)(next() >> 11) * 0x1p-53; }

int main(void)
{
    long n = 200000;
    const char *env = getenv("T2_JSON_DOUBLE_N");
    if (env) n = atol(env);
    for (long i = 0; i < n; i++) {
        uint64_t bits = next();
        double d;
        memcpy(&d, &bits, sizeof d);
        same(d);
        same(-10 + 20 * unit());                  /* uniform, as a search's double */
        same(pow(10, -5 + 4 * unit()));            /* log-uniform */
        same((double)(next() % 2000001) / 1e6);    /* short decimals */
        same(ldexp((double)(next() >> 11), (int)(next() % 80) - 20)); /* 53-bit integers scaled */
    }
    /* Large integers: 15, 16 and 17 digits where the dropped digits are exactly a half. */
    for (int64_t k = 0; k < 20000; k++) {
        same((double)(1000000000000000LL + k * 5));
        same((double)(9007199254740992LL + k * 2));
        same((double)(10000000000000000LL + k * 10));
        same((double)(123456789012345678LL + k * 50));
        same(1e22 + (double)k * 65536.0);
    }
    for (int j = 0; j <= 22; j++)
        for (int k = 1; k <= 1000; k++) same((double)k / pow(10, j));
    for (int e = -1074; e <= 1023; e++) {
        double p = ldexp(1.0, e);
        same(p);
        same(-p);
        same(nextafter(p, 0));
        same(nextafter(p, INFINITY));
    }
    for (int e = -323; e <= 308; e++) {
        double p = pow(10, e);
        same(p);
        same(nextafter(p, 0));
        same(nextafter(p, INFINITY));
    }
    const double special[] = {0.0, -0.0, DBL_MIN, DBL_MAX, -DBL_MAX, 5e-324, DBL_EPSILON, 0.1, 0.2, 0.3,
                              1.0 / 3, 2.0 / 3, 100, 1e15, 1e16, 1e17, 123456789012345.6, 0.5, 9.5, 99.5};
    for (size_t i = 0; i < sizeof special / sizeof *special; i++) same(special[i]);
    /* The short buffer and the non-finite values take printf's way, with the same text. */
    char small[24];
    t2__json_double_text(0.1, small, sizeof small);
    CHECK(strcmp(small, "0.1") == 0);
    t2__json_double_text(INFINITY, small, sizeof small);
    CHECK(strcmp(small, "inf") == 0);
    /* t2__json_real_text: the same, ".0" after an integral one (JSON and CSV write reals so). */
    const struct {
        double d;
        const char *text;
    } reals[] = {{0.0, "0.0"}, {-0.0, "-0.0"}, {12, "12.0"}, {0.840475899689919, "0.840475899689919"},
                 {1e300, "1e+300"}, {1e-7, "1e-07"}, {INFINITY, "inf"}};
    char text[40];
    for (size_t i = 0; i < sizeof reals / sizeof *reals; i++) {
        size_t n = t2__json_real_text(reals[i].d, text, sizeof text);
        CHECK_STR(text, reals[i].text);
        CHECK(n == strlen(reals[i].text));
    }
    printf("test_json_double: %ld doubles, %ld texts differ\n", compared, mismatches);
    CHECK(mismatches == 0);
    CHECK(compared > 5 * n);
    return check_report("test_json_double");
}
