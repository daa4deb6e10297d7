/* cache.c — a dataset written once to a flat file and memory-mapped read-only by every trial, so
 * concurrent trials share one copy of the pixels in the page cache instead of decoding their own.
 *
 * Layout (host byte order, recorded by an endianness marker; all offsets absolute):
 *   0 "T2DSCACH"  8 u32 0x01020304  12 u32 version  16 u64 n  24 u32 ndim  28 u32 shape[3]
 *   40 u32 pixel type (1 uint8, 2 float32)  44 u32 has_labels  48 i32 num_classes  52 u32 0
 *   56 u64 pixels offset (4096)  64 u64 pixel bytes  72 u64 labels offset  80 u64 label bytes
 *   88 u64 file size;  zero padding to 4096, pixels, zero padding to 64, int32 labels. */
#define _DEFAULT_SOURCE /* POSIX: O_CLOEXEC, mkstemp, fchmod, MAP_POPULATE, strdup */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "data_internal.h"
#include "internal.h"

#define CACHE_MAGIC "T2DSCACH"
#define CACHE_VERSION 1u
#define CACHE_ENDIAN 0x01020304u
#define CACHE_HDR 4096u

typedef struct {
    uint64_t n, pix_off, pix_bytes, lab_off, lab_bytes, file_size;
    uint32_t ndim, shape[3], pix_type, has_labels;
    int32_t num_classes;
} cache_hdr;

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static uint64_t align64(uint64_t x) { return (x + 63) & ~(uint64_t)63; }

/* The layout implied by the shape fields; 0 on success, -1 on overflow. */
static int layout(cache_hdr *h)
{
    uint64_t esz = h->pix_type == T2__PIX_U8 ? 1 : 4, numel = 1;
    for (uint32_t i = 0; i < h->ndim; i++) numel *= h->shape[i]; /* each <= 2^16, ndim <= 3 */
    if (h->n > (uint64_t)T2__MAX_SAMPLES || numel > UINT64_MAX / 4 / h->n) return -1;
    h->pix_off = CACHE_HDR;
    h->pix_bytes = h->n * numel * esz;
    h->lab_off = h->has_labels ? align64(h->pix_off + h->pix_bytes) : 0;
    h->lab_bytes = h->has_labels ? h->n * 4 : 0;
    h->file_size = h->has_labels ? h->lab_off + h->lab_bytes : h->pix_off + h->pix_bytes;
    return 0;
}

static int write_all(int fd, const void *buf, size_t len, const char *path)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len > ((size_t)1 << 30) ? ((size_t)1 << 30) : len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return t2_seterr(T2_EIO, "%s: write failed: %s", path, w < 0 ? strerror(errno) : "no progress");
        p += w;
        len -= (size_t)w;
    }
    return T2_OK;
}

/* Writes the pixels and labels of ds at the current file position (just after the header). */
static int write_body(int fd, const t2_dataset *ds, const cache_hdr *h, const char *path)
{
    static const uint8_t zeros[64];
    int rc = T2_OK;
    float *sample = NULL;
    int32_t *labels = NULL;
    if (h->has_labels && !(labels = malloc((size_t)ds->n * sizeof(int32_t)))) goto nomem;
    if (ds->pix_type != T2__PIX_NONE) {
        rc = write_all(fd, ds->pixels, h->pix_bytes, path);
        for (uint32_t i = 0; labels && i < ds->n; i++) labels[i] = t2__dataset_label(ds, i);
    } else {
        /* No array view: materialise sample by sample through the dataset's own reader. */
        if (!(sample = malloc(ds->numel * sizeof(float)))) goto nomem;
        for (uint32_t i = 0; i < ds->n && rc == 0; i++) {
            int32_t lab;
            if ((rc = ds->ops->get(ds, i, sample, &lab)) == 0)
                rc = write_all(fd, sample, ds->numel * sizeof(float), path);
            if (labels) labels[i] = lab;
        }
    }
    if (rc == 0 && labels && (rc = write_all(fd, zeros, h->lab_off - (h->pix_off + h->pix_bytes), path)) == 0)
        rc = write_all(fd, labels, h->lab_bytes, path);
    goto done;
nomem:
    rc = t2_seterr(T2_ENOMEM, "%s: out of memory", path);
done:
    free(sample);
    free(labels);
    return rc;
}

int t2_dataset_cache_write(const t2_dataset *ds, const char *path)
{
    if (!ds || !path) return t2_seterr(T2_EINVAL, "t2_dataset_cache_write: NULL argument");
    cache_hdr h = {.n = ds->n, .ndim = (uint32_t)ds->ndim, .num_classes = ds->num_classes,
                   .pix_type = ds->pix_type == T2__PIX_U8 ? T2__PIX_U8 : T2__PIX_F32,
                   .has_labels = ds->num_classes > 0};
    for (int i = 0; i < 3; i++) h.shape[i] = (uint32_t)ds->shape[i];
    if (layout(&h) != 0) return t2_seterr(T2_EINVAL, "%s: dataset too large for a cache", path);
    uint8_t hdr[CACHE_HDR] = {0};
    memcpy(hdr, CACHE_MAGIC, 8);
    put32(hdr + 8, CACHE_ENDIAN);
    put32(hdr + 12, CACHE_VERSION);
    put64(hdr + 16, h.n);
    put32(hdr + 24, h.ndim);
    for (int i = 0; i < 3; i++) put32(hdr + 28 + 4 * i, h.shape[i]);
    put32(hdr + 40, h.pix_type);
    put32(hdr + 44, h.has_labels);
    put32(hdr + 48, (uint32_t)h.num_classes);
    put64(hdr + 56, h.pix_off);
    put64(hdr + 64, h.pix_bytes);
    put64(hdr + 72, h.lab_off);
    put64(hdr + 80, h.lab_bytes);
    put64(hdr + 88, h.file_size);

    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16), *dirbuf = NULL;
    if (!tmp) return t2_seterr(T2_ENOMEM, "%s: out of memory", path);
    snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
    int rc = T2_OK, fd = mkstemp(tmp);
    if (fd < 0) {
        rc = t2_seterr(T2_EIO, "%s: cannot create a temporary file: %s", path, strerror(errno));
        free(tmp);
        return rc;
    }
    /* mkstemp makes 0600; a cache is meant to be shared by every trial that reads the dataset. */
    if (fchmod(fd, 0644) != 0 ||
        (rc = write_all(fd, hdr, sizeof hdr, tmp)) != 0 || (rc = write_body(fd, ds, &h, tmp)) != 0)
        goto fail;
    if (fsync(fd) != 0) {
        rc = t2_seterr(T2_EIO, "%s: fsync failed: %s", tmp, strerror(errno));
        goto fail;
    }
    int cfd = fd;
    fd = -1;
    if (close(cfd) != 0) {
        rc = t2_seterr(T2_EIO, "%s: close failed: %s", tmp, strerror(errno));
        goto fail;
    }
    if (rename(tmp, path) != 0) {
        rc = t2_seterr(T2_EIO, "%s: cannot rename %s into place: %s", path, tmp, strerror(errno));
        goto fail;
    }
    /* Make the rename itself durable; a failure here leaves a valid file, so it is not fatal. */
    if ((dirbuf = strdup(path)) != NULL) {
        int dfd = open(dirname(dirbuf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
    }
    free(dirbuf);
    free(tmp);
    return T2_OK;
fail:
    if (rc == T2_OK) rc = t2_seterr(T2_EIO, "%s: cannot set permissions: %s", tmp, strerror(errno));
    if (fd >= 0) close(fd);
    unlink(tmp);
    free(tmp);
    return rc;
}

/* ---- reading ---- */

typedef struct {
    void *map;
    size_t len;
} cache_impl;

static void cache_destroy(t2_dataset *ds)
{
    cache_impl *c = ds->impl;
    if (!c) return;
    if (c->map) munmap(c->map, c->len);
    free(c);
}

static const struct t2__dataset_ops cache_ops = {"cache", NULL, cache_destroy};

static int parse_cache(const char *path, const uint8_t *p, size_t size, cache_hdr *h)
{
    if (size < CACHE_HDR || memcmp(p, CACHE_MAGIC, 8) != 0)
        return t2_seterr(T2_EFORMAT, "%s: not a t2exp dataset cache (bad magic or shorter than the header)", path);
    if (get32(p + 8) != CACHE_ENDIAN)
        return t2_seterr(T2_EFORMAT, "%s: cache written with another byte order", path);
    if (get32(p + 12) != CACHE_VERSION)
        return t2_seterr(T2_EFORMAT, "%s: cache version %u (this build reads %u)", path, get32(p + 12),
                         CACHE_VERSION);
    h->n = get64(p + 16);
    h->ndim = get32(p + 24);
    for (int i = 0; i < 3; i++) h->shape[i] = get32(p + 28 + 4 * i);
    h->pix_type = get32(p + 40);
    h->has_labels = get32(p + 44);
    h->num_classes = (int32_t)get32(p + 48);
    if (h->n == 0 || h->n > (uint64_t)T2__MAX_SAMPLES || (h->ndim != 1 && h->ndim != 3))
        return t2_seterr(T2_EFORMAT, "%s: bad sample count %llu or ndim %u", path,
                         (unsigned long long)h->n, h->ndim);
    for (uint32_t i = 0; i < 3; i++)
        if (h->shape[i] == 0 || h->shape[i] > T2__MAX_DIM || (i >= h->ndim && h->shape[i] != 1))
            return t2_seterr(T2_EFORMAT, "%s: absurd sample dimension %u = %u", path, i, h->shape[i]);
    if ((h->pix_type != T2__PIX_U8 && h->pix_type != T2__PIX_F32) || h->has_labels > 1 ||
        (h->has_labels ? h->num_classes <= 0 : h->num_classes != 0))
        return t2_seterr(T2_EFORMAT, "%s: bad pixel type %u / labels %u / classes %d", path, h->pix_type,
                         h->has_labels, h->num_classes);
    cache_hdr want = *h;
    if (layout(&want) != 0) return t2_seterr(T2_EFORMAT, "%s: sizes overflow", path);
    if (get64(p + 56) != want.pix_off || get64(p + 64) != want.pix_bytes || get64(p + 72) != want.lab_off ||
        get64(p + 80) != want.lab_bytes || get64(p + 88) != want.file_size)
        return t2_seterr(T2_EFORMAT, "%s: header offsets and sizes do not match its shape", path);
    if (want.file_size != size)
        return t2_seterr(T2_EFORMAT, "%s: truncated or padded: header says %llu bytes, file has %zu", path,
                         (unsigned long long)want.file_size, size);
    *h = want;
    return T2_OK;
}

int t2_dataset_cache_open(t2_dataset **out, const char *path)
{
    if (!out || !path) return t2_seterr(T2_EINVAL, "t2_dataset_cache_open: NULL argument");
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return t2_seterr(errno == ENOENT ? T2_ENOTFOUND : T2_EIO, "%s: cannot open: %s", path, strerror(errno));
    int rc = T2_OK;
    void *map = MAP_FAILED;
    size_t size = 0;
    t2_dataset *ds = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = t2_seterr(T2_EIO, "%s: not a readable regular file", path);
        goto fail;
    }
    size = (size_t)st.st_size;
    if (size < CACHE_HDR) {
        rc = t2_seterr(T2_EFORMAT, "%s: not a t2exp dataset cache (%zu bytes, shorter than the header)", path, size);
        goto fail;
    }
    /* Populating the mapping up front (from the shared page cache) is far cheaper than the
     * ~11k single-page faults the first epoch would take on Fashion-MNIST. */
    int flags = MAP_SHARED;
#ifdef MAP_POPULATE
    flags |= MAP_POPULATE;
#endif
    map = mmap(NULL, size, PROT_READ, flags, fd, 0);
    if (map == MAP_FAILED) {
        rc = t2_seterr(T2_EIO, "%s: mmap failed: %s", path, strerror(errno));
        goto fail;
    }
    close(fd);
    fd = -1;
    cache_hdr h;
    if ((rc = parse_cache(path, map, size, &h)) != 0) goto fail;
    int shape[3] = {(int)h.shape[0], (int)h.shape[1], (int)h.shape[2]};
    if ((rc = t2__dataset_new(&ds, &cache_ops, (int64_t)h.n, (int)h.ndim, shape)) != 0) goto fail;
    cache_impl *c = calloc(1, sizeof *c);
    if (!c) {
        rc = t2_seterr(T2_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    c->map = map;
    c->len = size;
    map = MAP_FAILED;
    ds->impl = c;
    ds->pix_type = (int)h.pix_type;
    ds->pixels = (const uint8_t *)c->map + h.pix_off;
    ds->num_classes = h.num_classes;
    if (h.has_labels) {
        ds->labels32 = (const int32_t *)((const uint8_t *)c->map + h.lab_off);
        for (uint32_t i = 0; i < ds->n; i++)
            if (ds->labels32[i] < 0 || ds->labels32[i] >= h.num_classes) {
                rc = t2_seterr(T2_EFORMAT, "%s: label %u is %d, outside 0..%d", path, i, ds->labels32[i],
                               h.num_classes - 1);
                goto fail;
            }
    }
    *out = ds;
    return T2_OK;
fail:
    if (map != MAP_FAILED) munmap(map, size);
    if (fd >= 0) close(fd);
    t2_dataset_free(ds);
    return rc;
}
