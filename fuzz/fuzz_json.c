/* fuzz_json.c — libFuzzer harness for the JSON codec (configs/json.c), which reads back every
 * searcher snapshot, hparams and metric map the store holds. Whatever it accepts must encode, and
 * the encoding must decode to an equal value that encodes to the same bytes (a round trip): a
 * difference aborts, so libFuzzer reports it like a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "configs/value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
