/* test_json_number.c — json_number.c against glibc: t2__decimal_double gives strtod's double, bit
 * for bit, for decimal texts of every shape (the shortest and the 15-17 digit texts of random
 * doubles of every kind, random 1-19 digit mantissas at every exponent its fast way takes and past
 * it, more than 19 digits, leading and trailing zeros, signs, exponent forms, what is no plain
 * number); t2__double_digits17 gives strfromd's %.16e digits whenever it answers. It also checks
 * the fast ways answer for most inputs of their range (what they are for): a way that always
 * declined would pass every comparison. T2_JSON_NUMBER_N (default 150000) sets each random kind's
 * count. */
#define __STDC_WANT_IEC_60559_BFP_EXT__ 1 /* strfromd */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "t2exp/rng.h"
#include "../../configs/value.h" /* configs/ is not on the test include path */

static long read_checked, read_bad, digits_checked, digits_answered, digits_bad, shortest_read, shortest_fast;

static t2_rng rng;
static uint64_t next(void) { return t2_rng_u64(&rng); }

static void reads(const char *text)
{
    double want = strtod(text, NULL), got = t2__decimal_double(text, strlen(text));
    read_checked++;
    if (memcmp(&want, &got, sizeof want) != 0 && !(isnan(want) && isnan(got)) && read_bad++ < 10)
        fprintf(stderr, "t2__decimal_double(\"%s\") = %a, strtod %a\n", text, got, want);
}

static void digits(double x)
{
    char want[40], dig[17];
    int e = 0;
    if (!(x > 0) || !isfinite(x)) return;
    digits_checked++;
    if (t2__double_digits17(x, dig, &e) != 0) return;
    digits_answered++;
    strfromd(want, sizeof want, "%.16e", x); /* d.dddddddddddddddde+XX */
    char got[40];
    snprintf(got, sizeof got, "%c.%.16se%+03d", dig[0], dig + 1, e);
    if (strcmp(want, got) != 0 && digits_bad++ < 10) fprintf(stderr, "%a: digits %s, strfromd %s\n", x, got, want);
}

/* A double's texts as runners and printf write them, each read back, and its 17 digits. */
static void double_texts(double d)
{
    char t[64];
    if (!isfinite(d)) return;
    t2__json_double_text(d, t, sizeof t);
    reads(t);
    double fast;
    shortest_read++;
    shortest_fast += t2__decimal_fast(t, strlen(t), &fast) == 0;
    for (int prec = 15; prec <= 19; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, d);
        reads(t);
    }
    snprintf(t, sizeof t, "%.16e", d);
    reads(t);
    digits(fabs(d));
}

static double random_double(void)
{
    uint64_t b = next();
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

int main(void)
{
    t2_rng_seed(&rng, 0x2545f4914f6cdd1dULL);
    const char *env = getenv("T2_JSON_NUMBER_N");
    long n = env ? atol(env) : 150000;

    /* Random bit patterns (every exponent), a search's samples, decimals of a few digits. */
    for (long i = 0; i < n; i++) double_texts(random_double());
    long fast_checked = digits_checked;
    shortest_read = shortest_fast = 0;
    for (long i = 0; i < n; i++) {
        double u = (double)(next() >> 11) / 9007199254740992.0;
        double_texts(1e-5 * pow(10, 5 * u)); /* log-uniform 1e-5..1 */
        double_texts(-3 + 13 * u);
        double_texts(round(u * 1e6) / 1e3);
    }
    /* Samples are in the fast ways' range: they must answer nearly all (a tie or a halfway point
     * is rare). */
    if (t2__long_double_exact()) {
        CHECK(digits_answered > 0.9 * (digits_checked - fast_checked));
        CHECK(shortest_fast > 0.95 * shortest_read);
    } else { /* valgrind's x87, say: only the double fast way, and glibc answers the rest */
        printf("test_json_number: long doubles are not exact here; the fast ways that need them are off\n");
        CHECK(digits_answered == 0);
    }
    printf("test_json_number: samples' shortest texts read without strtod: %ld of %ld\n", shortest_fast, shortest_read);

    /* Decimal texts built digit by digit: 1-19 significant digits (the fast way's limit), then
     * 20-25, at exponents in and past its +-27, written with the point anywhere and in e form. */
    char t[128];
    for (long i = 0; i < 2 * n; i++) {
        int nd = 1 + (int)(next() % 25), q = (int)(next() % 81) - 40;
        char m[32];
        m[0] = (char)('1' + next() % 9);
        for (int k = 1; k < nd; k++) m[k] = (char)('0' + next() % 10);
        if (next() % 4 == 0) /* ending in zeros or nines: exact halves and carries */
            for (int k = nd / 2; k < nd; k++) m[k] = next() % 2 ? '0' : '9';
        if (nd >= 2 && next() % 8 == 0) m[nd - 1] = '5'; /* ...5: a tie when the digits are exact */
        m[nd] = '\0';
        const char *sign = next() % 3 == 0 ? "-" : "";
        switch (next() % 4) {
        case 0: snprintf(t, sizeof t, "%s%se%d", sign, m, q); break;
        case 1: snprintf(t, sizeof t, "%s%c.%se%+d", sign, m[0], m + 1, q); break;
        case 2: { /* a point inside the digits, or zeros before them */
            int at = (int)(next() % (unsigned)(nd + 1));
            if (next() % 2) snprintf(t, sizeof t, "%s%.*s.%s", sign, at, m, m + at);
            else snprintf(t, sizeof t, "%s0.%0*d%s", sign, (int)(next() % 12), 0, m);
            break;
        }
        default: snprintf(t, sizeof t, "%s%sE%d", sign, m, q); break;
        }
        reads(t);
    }

    /* Integers of 15-19 digits near 2^53..2^64 (where a double's halves are integers and .5). */
    for (long i = 0; i < n; i++) {
        uint64_t w = next() >> (next() % 12);
        snprintf(t, sizeof t, "%llu", (unsigned long long)w);
        reads(t);
        snprintf(t, sizeof t, "%llu.5", (unsigned long long)(w >> 11));
        reads(t);
        digits((double)w);
        digits(ldexp((double)(w | 1), -(int)(next() % 90)));
    }

    /* Shapes: zeros and signs, edges of each path, what a strict reader would refuse. */
    static const char *const shapes[] = {
        "0", "-0", "0.0", "-0.0", "0e0", "-0e-5", "00012", "0.000", "1", "-1", "1.", ".5", "-.5", "+3", "1e0", "1E+2",
        "1e-2", "1.5e308", "1.7976931348623157e308", "1.7976931348623159e308", "2e308", "4.9e-324", "2.4703282292062327e-324",
        "2.2250738585072014e-308", "1e-400", "1e22", "1e23", "9007199254740993", "9007199254740992.5",
        "18446744073709551615", "18446744073709551616", "9999999999999999999", "99999999999999999999",
        "1e27", "1e28", "1e-27", "1e-28", "123456789012345678e10", "123456789012345678e-27",
        "0.1", "0.2", "0.3", "2.5", "3.5", "1e", "1e+", "e5", "-", "", ".", "1.2.3", "1e5x", " 1", "1 ", "0x1p3",
        "inf", "-inf", "nan", "1e100000", "1e-100000", "1e9999999999", "0.00000000000000000000000000001234",
        "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) reads(shapes[i]);

    /* 17 digits at the edges: powers of ten and two, 9.999..., halves of the last digit. */
    for (int e = -12; e <= 42; e++) {
        double p = pow(10, e);
        digits(p);
        digits(nextafter(p, 0));
        digits(nextafter(p, INFINITY));
        digits(9.9999999999999999 * p);
    }
    for (int e = -60; e <= 140; e++) digits(ldexp(1, e));
    digits(DBL_MAX);
    digits(DBL_MIN);
    digits(5e-324);

    printf("test_json_number: %ld texts read (%ld differ from strtod); %ld doubles' digits, %ld answered "
           "(%ld differ from strfromd)\n",
           read_checked, read_bad, digits_checked, digits_answered, digits_bad);
    CHECK(read_bad == 0);
    CHECK(digits_bad == 0);
    return check_report("test_json_number");
}
