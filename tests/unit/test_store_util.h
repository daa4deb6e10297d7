/* test_store_util.h — scratch homes and raw SQL for the store tests. */
#ifndef T2_TEST_STORE_UTIL_H
#define T2_TEST_STORE_UTIL_H

#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "store/store.h"

/* A fresh directory under $TMPDIR (or /tmp); the store's home is a subdirectory that does not
 * exist yet, so open's mkdir -p is exercised every time. */
static inline void scratch_home(char *dir, size_t dlen, char *home, size_t hlen)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, dlen, "%s/t2store.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(home, hlen, "%s/home/t2exp", dir);
}

static inline int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
    (void)sb, (void)flag, (void)f;
    return remove(p);
}

static inline void rm_rf(const char *dir) { nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

/* First column of the first row of a raw query as an integer (-1 on error). */
static inline long long sql_int(t2__store *st, const char *sql)
{
    int64_t v = -1;
    if (t2__store_query_int(st, sql, &v)) {
        fprintf(stderr, "sql_int(%s): %s\n", sql, t2_errmsg());
        return -1;
    }
    return v;
}

/* First column of the first row as text into buf ("" on error). */
static inline const char *sql_text(t2__store *st, const char *sql, char *buf, size_t len)
{
    if (t2__store_query_text(st, sql, buf, len)) fprintf(stderr, "sql_text(%s): %s\n", sql, t2_errmsg());
    return buf;
}

/* Everything a print function wrote, as a malloc'ed string (via a temporary file). */
typedef int (*print_fn)(t2__store *st, void *ud, FILE *out);

static inline char *capture(t2__store *st, print_fn fn, void *ud, int *rc)
{
    FILE *f = tmpfile();
    if (!f) {
        perror("tmpfile");
        exit(1);
    }
    *rc = fn(st, ud, f);
    long n = ftell(f);
    char *buf = malloc((size_t)(n > 0 ? n : 0) + 1);
    rewind(f);
    size_t got = n > 0 ? fread(buf, 1, (size_t)n, f) : 0;
    buf[got] = '\0';
    fclose(f);
    return buf;
}

static inline double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A clock the tests move by hand. */
static inline double fixed_clock(void *ud) { return *(double *)ud; }

/* Two texts (tables, several lines) must be equal; printed one after the other when not. */
#define CHECK_TEXT(got, want)                                                                  \
    do {                                                                                      \
        const char *g_ = (got), *w_ = (want);                                                 \
        if (strcmp(g_, w_) != 0) {                                                            \
            fprintf(stderr, "%s:%d: %s\n--- got ---\n%s\n--- wanted ---\n%s\n---\n", __FILE__, \
                    __LINE__, #got, g_, w_);                                                   \
            check_failures++;                                                                 \
        }                                                                                     \
    } while (0)

#define CHECK_MSG(needle)                                                                     \
    do {                                                                                      \
        if (!strstr(t2_errmsg(), (needle))) {                                                 \
            fprintf(stderr, "%s:%d: errmsg \"%s\" lacks \"%s\"\n", __FILE__, __LINE__,         \
                    t2_errmsg(), (needle));                                                   \
            check_failures++;                                                                 \
        }                                                                                     \
    } while (0)

#endif
