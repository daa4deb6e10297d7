/* fixture.h — reads the reference fixtures written by the tests/fixtures scripts (PyTorch).
 *
 * File format (text, one array per record):
 *   # comment lines
 *   NAME NDIM D0 D1 ...      header line
 *   v0 v1 v2 ...             values (whitespace-separated, %.9g, row-major), any number of lines
 * A file holds several named arrays; names are unique within a file. */
#ifndef T2_TEST_FIXTURE_H
#define T2_TEST_FIXTURE_H

#include <stddef.h>

typedef struct fixture fixture;

typedef struct fixture_array {
    const char *name;
    int ndim;
    int shape[8];
    size_t n;
    float *data;
} fixture_array;

/* Loads $T2EXP_FIXTURES/<file>; NULL (and a message on stderr) if it cannot. */
fixture *fixture_load(const char *file);
void fixture_free(fixture *f);

/* The array called name, or NULL if the file has none. */
const fixture_array *fixture_get(const fixture *f, const char *name);

/* Compares got[0..n) with the fixture array `name`: |got-want| <= atol + rtol*|want| elementwise.
 * Prints the first mismatches; returns the number of mismatching elements (or 1 if absent or the
 * sizes differ). */
size_t fixture_compare(const fixture *f, const char *name, const float *got, size_t n, double rtol,
                       double atol);

#endif
