/* fuzz_json.c — libFuzzer harness for the JSON codec (configs/json.c), which reads back every
 * searcher snapshot, hparams and metric map the store holds. Whatever it accepts must encode, and
 * the encoding must decode to an equal value that encodes to the same bytes (a round trip): a
 * difference aborts, so libFuzzer reports it like a crash. Every input is also read as one number
 * by json_number.c, which must give strtod's double bit for bit, and that double's 17 digits must
 * be strfromd's whenever json_number.c answers. */
#define __STDC_WANT_IEC_60559_BFP_EXT__ 1 /* strfromd */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "configs/value.h"

static void number_agrees(const uint8_t *data, size_t size)
{
    if (size > 4096) return;
    char text[4097];
    memcpy(text, data, size);
    text[size] = '\0';
    double want = strtod(text, NULL), got = t2__decimal_double((const char *)data, size);
    if (memcmp(&want, &got, sizeof want) != 0 && !(isnan(want) && isnan(got))) abort();
    char dig[17], s[40], mine[40];
    int e;
    double x = fabs(want);
    if (t2__double_digits17(x, dig, &e) == 0) {
        strfromd(s, sizeof s, "%.16e", x);
        snprintf(mine, sizeof mine, "%c.%.16se%+03d", dig[0], dig + 1, e);
        if (strcmp(s, mine) != 0) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    number_agrees(data, size);
    t2__val *v = NULL;
    size_t off = 0;
    if (t2__val_from_json((const char *)data, size, &v, &off) != 0) {
        if (off > size) abort(); /* the error offset must point into the input */
        return 0;
    }
    char *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    t2__val *w = NULL;
    if (t2__val_to_json(v, &a, &na) == 0) {
        if (t2__val_from_json(a, na, &w, &off) != 0) abort(); /* we cannot read what we wrote */
        if (!t2__val_equal(v, w)) abort();
        if (t2__val_to_json(w, &b, &nb) != 0) abort();
        if (na != nb || memcmp(a, b, na) != 0) abort();
    }
    free(a);
    free(b);
    t2__val_free(w);
    t2__val_free(v);
    return 0;
}
