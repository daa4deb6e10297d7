/* json_double.c — a double's shortest text that reads back to exactly it, as JSON writes it: the
 * shortest of printf's %.15g, %.16g and %.17g that strtod reads back to the same double.
 *
 * Why not just those three printf calls, as before: the controller prints every sampled
 * hyperparameter of every trial, and the three calls and two strtod were 15% of its main thread's
 * instructions (callgrind, a 4,000-trial random search). Here one printf gives the 17 significant
 * digits, the 16- and 15-digit candidates are rounded from them, and only strtod checks them. The
 * text is the same as the three calls': rounding the 17 digits again gives the correctly rounded
 * shorter digits except when the dropped digits are exactly 5 then zeros (the exact value may lie
 * on either side of that midpoint, and printf breaks an exact tie to even); those few values take
 * the three calls. test_json_double compares the two over millions of doubles. (The digits and the
 * reading back are json_number.c's for most doubles, printf's and strtod's exactly.) */
#define __STDC_WANT_IEC_60559_BFP_EXT__ 1 /* strfromd */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "value.h"

/* The old way, for the values the digits cannot settle. */
static size_t by_printf(double d, char *out, size_t cap)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, cap, "%.*g", prec, d);
        if (prec == 17 || strtod(out, NULL) == d) break;
    }
    return strlen(out);
}

/* %g's layout of p significant digits dig with decimal exponent x (that of the first digit),
 * trailing zeros dropped: style e when x < -4 or x >= p, else style f. */
static size_t layout(char *o, int neg, const char *dig, int p, int x)
{
    int n = p;
    while (n > 1 && dig[n - 1] == '0') n--;
    size_t k = 0;
    if (neg) o[k++] = '-';
    if (x < -4 || x >= p) {
        o[k++] = dig[0];
        if (n > 1) {
            o[k++] = '.';
            memcpy(o + k, dig + 1, (size_t)n - 1);
            k += (size_t)n - 1;
        }
        int ax = x < 0 ? -x : x;
        o[k++] = 'e';
        o[k++] = x < 0 ? '-' : '+';
        if (ax >= 100) o[k++] = (char)('0' + ax / 100);
        o[k++] = (char)('0' + ax / 10 % 10);
        o[k++] = (char)('0' + ax % 10);
    } else if (x >= 0) {
        for (int i = 0; i <= x; i++) o[k++] = i < n ? dig[i] : '0';
        if (n > x + 1) {
            o[k++] = '.';
            memcpy(o + k, dig + x + 1, (size_t)(n - x - 1));
            k += (size_t)(n - x - 1);
        }
    } else {
        o[k++] = '0';
        o[k++] = '.';
        for (int i = 0; i < -x - 1; i++) o[k++] = '0';
        memcpy(o + k, dig, (size_t)n);
        k += (size_t)n;
    }
    o[k] = '\0';
    return k;
}

/* The 17 digits d17 (exponent x) rounded to p digits into dig (*xp its exponent); -1 when the
 * dropped digits are exactly a half (see the top). */
static int round_to(const char *d17, int x, int p, char *dig, int *xp)
{
    if (d17[p] == '5') {
        int rest = 0;
        for (int i = p + 1; i < 17; i++) rest |= d17[i] != '0';
        if (!rest) return -1;
    }
    memcpy(dig, d17, (size_t)p);
    *xp = x;
    if (d17[p] < '5') return 0;
    int i = p - 1;
    while (i >= 0 && dig[i] == '9') dig[i--] = '0';
    if (i >= 0) {
        dig[i]++;
    } else { /* 99..9 -> 100..0 */
        dig[0] = '1';
        (*xp)++;
    }
    return 0;
}

size_t t2__json_double_text(double d, char *out, size_t cap)
{
    char s[40], dig[17], c[40];
    if (cap < 32 || !isfinite(d)) return by_printf(d, out, cap);
    /* 17 significant digits, correctly rounded: json_number.c's where it is sure, else strfromd's
     * "-d.dddddddddddddddde-XXX" (not snprintf: the same conversion without printf's format parser,
     * which takes its slow, positional path in every process that loaded libquadmath, as OpenBLAS's
     * Fortran runtime does: 452 against 575 ns a call here). The candidates are read back by
     * json_number.c too, which asks strtod only where it cannot tell. */
    int neg = signbit(d) != 0, x;
    char d17[17];
    if (t2__double_digits17(fabs(d), d17, &x) != 0) {
        strfromd(s, sizeof s, "%.16e", d);
        const char *m = s + neg;
        d17[0] = m[0];
        memcpy(d17 + 1, m + 2, 16);
        x = atoi(m + 19);
    }
    int x16, x15;
    if (round_to(d17, x, 16, dig, &x16)) return by_printf(d, out, cap);
    size_t n16 = layout(c, neg, dig, 16, x16);
    int fits16 = t2__decimal_double(c, n16) == d;
    /* The 16 digits are at least as close to d as the 15. The doubles that read back to d lie
     * around it evenly, so when 16 do not read back, 15 cannot either; except at a power of two,
     * whose neighbour below is half as far as the one above (test_json_double found 2^-499). */
    int e;
    if (!fits16 && frexp(fabs(d), &e) != 0.5) return layout(out, neg, d17, 17, x);
    if (round_to(d17, x, 15, dig, &x15)) return by_printf(d, out, cap);
    size_t k = layout(out, neg, dig, 15, x15);
    if (t2__decimal_double(out, k) == d) return k;
    if (!fits16) return layout(out, neg, d17, 17, x);
    memcpy(out, c, n16 + 1);
    return n16;
}

size_t t2__json_real_text(double d, char *out, size_t cap)
{
    size_t n = t2__json_double_text(d, out, cap);
    if (!strpbrk(out, ".eEn") && n + 3 <= cap) { /* 'n': inf and nan stay words */
        memcpy(out + n, ".0", 3);
        n += 2;
    }
    return n;
}
