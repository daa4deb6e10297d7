/* test_checkpoint_util.h — helpers for the checkpoint tests: a scratch directory, a small model
 * with every kind of state, file I/O, and a minimal ustar writer/reader for crafting archives
 * byte by byte (the tests link only libt2exp, so they cannot call libarchive themselves). */
#ifndef T2_TEST_CHECKPOINT_UTIL_H
#define T2_TEST_CHECKPOINT_UTIL_H

#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "checkpoints/ckpt.h"
#include "t2exp.h"

/* A fresh directory under $TMPDIR (or /tmp); removed with rm_dir. */
static inline char *make_dir(void)
{
    const char *t = getenv("TMPDIR");
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/t2ckpt-XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(buf);
}

static inline void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* Number of directory entries whose name contains `part`. */
static inline int count_files(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strstr(e->d_name, part)) n++;
    closedir(d);
    return n;
}

static inline unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static inline int write_all(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* dense 4->3, batchnorm, relu, dense 3->2: parameters and buffers. */
static inline int small_net(t2_net **out, uint64_t seed)
{
    int shape[1] = {4};
    t2_net *n = NULL;
    t2_rng r;
    t2_rng_seed(&r, seed);
    int rc = t2_net_create(&n, 1, shape);
    if (!rc) rc = t2_net_dense(n, 3);
    if (!rc) rc = t2_net_batchnorm(n, 1e-5f, 0.1f);
    if (!rc) rc = t2_net_relu(n);
    if (!rc) rc = t2_net_dense(n, 2);
    if (!rc) rc = t2_net_init(n, &r);
    if (rc) {
        t2_net_free(n);
        return rc;
    }
    size_t nb;
    float *b = t2_net_buffers(n, &nb);
    for (size_t i = 0; i < nb; i++) b[i] = t2_rng_uniform(&r);
    *out = n;
    return 0;
}

/* ---- minimal ustar ---- */

typedef struct tar_ent {
    const char *name;
    char type;          /* '0' file, '1' hard link, '2' symlink, '3' char device, '5' directory */
    const void *data;
    size_t len;
    long long size;     /* header size field; -1: len */
    const char *link;
} tar_ent;

static inline void tar_octal(unsigned char *f, size_t w, unsigned long long v)
{
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%0*llo", (int)(w - 1), v);
    memcpy(f, tmp, w - 1);
    f[w - 1] = 0;
}

/* The archive of ents followed by the two zero blocks; *len gets its size. */
static inline unsigned char *tar_build(const tar_ent *ents, int n, size_t *len)
{
    size_t total = 1024;
    for (int i = 0; i < n; i++) total += 512 + (ents[i].len + 511) / 512 * 512;
    unsigned char *out = calloc(1, total), *p = out;
    if (!out) return NULL;
    for (int i = 0; i < n; i++) {
        const tar_ent *e = &ents[i];
        unsigned char *h = p;
        strncpy((char *)h, e->name, 100);
        tar_octal(h + 100, 8, 0644);
        tar_octal(h + 108, 8, 0);
        tar_octal(h + 116, 8, 0);
        tar_octal(h + 124, 12, (unsigned long long)(e->size >= 0 ? (size_t)e->size : e->len));
        tar_octal(h + 136, 12, 1700000000);
        h[156] = (unsigned char)(e->type ? e->type : '0');
        if (e->link) strncpy((char *)h + 157, e->link, 100);
        memcpy(h + 257, "ustar", 6);
        memcpy(h + 263, "00", 2);
        memset(h + 148, ' ', 8);
        unsigned sum = 0;
        for (int k = 0; k < 512; k++) sum += h[k];
        char ck[8];
        snprintf(ck, sizeof ck, "%06o", sum);
        memcpy(h + 148, ck, 7);
        h[155] = ' ';
        p += 512;
        if (e->len) memcpy(p, e->data, e->len);
        p += (e->len + 511) / 512 * 512;
    }
    *len = total;
    return out;
}

/* Splits an uncompressed archive into its entries (names, data pointers into buf, data offsets).
 * Returns the count, at most max. */
static inline int tar_parse(const unsigned char *buf, size_t len, tar_ent *ents, size_t *offsets, int max)
{
    size_t at = 0;
    int n = 0;
    while (at + 512 <= len && buf[at] && n < max) {
        unsigned long long size = strtoull((const char *)buf + at + 124, NULL, 8);
        ents[n] = (tar_ent){(const char *)buf + at, (char)buf[at + 156], buf + at + 512, (size_t)size, -1, NULL};
        offsets[n] = at + 512;
        n++;
        at += 512 + (size + 511) / 512 * 512;
    }
    return n;
}

#endif
