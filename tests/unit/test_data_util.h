/* test_data_util.h — helpers shared by the data tests: a scratch directory and IDX file makers. */
#ifndef T2_TEST_DATA_UTIL_H
#define T2_TEST_DATA_UTIL_H

#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "data/data_internal.h"

static char tdir[256];

/* A fresh directory under $TMPDIR (or /tmp) for this test's files; removed by tdir_cleanup. */
static inline const char *tdir_make(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tdir, sizeof tdir, "%s/t2data.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tdir)) {
        perror("mkdtemp");
        exit(1);
    }
    return tdir;
}

static inline void tdir_cleanup(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tdir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", tdir);
}

static inline const char *tpath(const char *name)
{
    static char buf[64][512];
    static int k;
    k = (k + 1) % 64;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tdir, name);
    return buf[k];
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* An IDX ubyte file image: magic 0x0000080<ndim>, dims, then payload (count bytes). Returns a
 * malloc'd buffer and its length. */
static inline uint8_t *idx_build(int ndim, const uint32_t *dims, const uint8_t *payload, size_t count, size_t *len)
{
    *len = 4 + 4 * (size_t)ndim + count;
    uint8_t *b = malloc(*len ? *len : 1);
    put_be32(b, 0x800u | (uint32_t)ndim);
    for (int i = 0; i < ndim; i++) put_be32(b + 4 + 4 * i, dims[i]);
    if (count) memcpy(b + 4 + 4 * ndim, payload, count);
    return b;
}

static inline void write_raw(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static inline void write_gz(const char *path, const void *data, size_t len)
{
    if (t2__gzip_write_file(path, data, len) != 0) {
        fprintf(stderr, "%s\n", t2_errmsg());
        exit(1);
    }
}

/* Writes an IDX image/label pair of n images H x W: pixel j of image i = (i * 7 + j * 3) % 256,
 * label i = i % classes. gz selects gzip or raw. */
static inline void make_pair(const char *img, const char *lab, uint32_t n, uint32_t h, uint32_t w, int classes, int gz)
{
    size_t count = (size_t)n * h * w, len;
    uint8_t *pix = malloc(count), *labels = malloc(n);
    for (uint32_t i = 0; i < n; i++) {
        for (size_t j = 0; j < (size_t)h * w; j++) pix[(size_t)i * h * w + j] = (uint8_t)((i * 7 + j * 3) % 256);
        labels[i] = (uint8_t)(i % (uint32_t)classes);
    }
    uint32_t d3[3] = {n, h, w}, d1[1] = {n};
    uint8_t *f = idx_build(3, d3, pix, count, &len);
    (gz ? write_gz : write_raw)(img, f, len);
    free(f);
    f = idx_build(1, d1, labels, n, &len);
    (gz ? write_gz : write_raw)(lab, f, len);
    free(f);
    free(pix);
    free(labels);
}

#endif
