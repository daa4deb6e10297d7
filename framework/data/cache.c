/* cache.c — a dataset written once to a flat file and memory-mapped read-only by every trial, so
 * concurrent trials share one copy of the pixels in the page cache instead of decoding their own.
 *
 * Layout (host byte order, recorded by an endianness marker; all offsets absolute):
 *   0 "T2DSCACH"  8 u32 0x01020304  12 u32 version  16 u64 n  24 u32 ndim  28 u32 shape[3]
 *   40 u32 pixel type (1 uint8, 2 float32)  44 u32 has_labels  48 i32 num_classes  52 u32 0
 *   56 u64 pixels offset (4096)  64 u64 pixel bytes  72 u64 labels offset  80 u64 label bytes
 *   88 u64 file size  96 u32 source count (0..8)  100 u32 0
 *   104 per source, 48 bytes: u64 hash of its absolute path, u64 size, i64 mtime s, i64 mtime ns,
 *       u64 inode, u64 device;  zero padding to 4096, pixels, zero padding to 64, int32 labels.
 * Version 2 added the sources: a cache is only as trustworthy as the files it was decoded from,
 * so the reader that names them (t2_dataset_cache_open_sources) refuses one made from others. */
#define _DEFAULT_SOURCE /* POSIX: O_CLOEXEC, O_NOFOLLOW, mkstemp, MAP_POPULATE, strdup, realpath */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "data_internal.h"
#include "internal.h"

#define CACHE_MAGIC "T2DSCACH"
#define CACHE_VERSION 2u
#define CACHE_ENDIAN 0x01020304u
#define CACHE_HDR 4096u
#define CACHE_SRC 96u      /* the source count; the entries follow at 104 */
#define CACHE_SRC_SIZE 48u

/* One source file as it was when the cache was made. */
typedef struct {
    uint64_t path_hash, size, ino, dev;
    int64_t mtime_s, mtime_ns;
} src_id;

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
            if ((rc = t2__dataset_read(ds, i, sample, NULL, &lab)) == 0)
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

static void put_src(uint8_t *p, const src_id *s)
{
    put64(p, s->path_hash);
    put64(p + 8, s->size);
    put64(p + 16, (uint64_t)s->mtime_s);
    put64(p + 24, (uint64_t)s->mtime_ns);
    put64(p + 32, s->ino);
    put64(p + 40, s->dev);
}

static void get_src(const uint8_t *p, src_id *s)
{
    s->path_hash = get64(p);
    s->size = get64(p + 8);
    s->mtime_s = (int64_t)get64(p + 16);
    s->mtime_ns = (int64_t)get64(p + 24);
    s->ino = get64(p + 32);
    s->dev = get64(p + 40);
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211u;
    return h;
}
#define FNV_BASIS 1469598103934665603u

/* The identity of each source file as it is now: its absolute path (symbolic links resolved),
 * size, modification time, inode and device. *key (if not NULL) hashes the absolute paths, so
 * caches of different files get different names. */
static int source_ids(const char *const *sources, int n, src_id *ids, uint64_t *key)
{
    if (n < 0 || n > T2_DATASET_CACHE_MAX_SOURCES || (n > 0 && !sources))
        return t2_seterr(T2_EINVAL, "dataset cache: %d source files (0..%d allowed)", n, T2_DATASET_CACHE_MAX_SOURCES);
    uint64_t k = FNV_BASIS;
    for (int i = 0; i < n; i++) {
        char abs[PATH_MAX];
        struct stat st;
        if (!sources[i]) return t2_seterr(T2_EINVAL, "dataset cache: source %d is NULL", i);
        if (!realpath(sources[i], abs) || stat(abs, &st) != 0)
            return t2_seterr(errno == ENOENT ? T2_ENOTFOUND : T2_EIO, "%s: %s", sources[i], strerror(errno));
        if (!S_ISREG(st.st_mode)) return t2_seterr(T2_EINVAL, "%s: not a regular file", sources[i]);
        size_t len = strlen(abs) + 1; /* the NUL separates the paths in the key */
        ids[i] = (src_id){.path_hash = fnv1a(FNV_BASIS, abs, len), .size = (uint64_t)st.st_size,
                          .ino = (uint64_t)st.st_ino, .dev = (uint64_t)st.st_dev,
                          .mtime_s = (int64_t)st.st_mtim.tv_sec, .mtime_ns = (int64_t)st.st_mtim.tv_nsec};
        k = fnv1a(k, abs, len);
    }
    if (key) *key = k;
    return T2_OK;
}

static int cache_write(const t2_dataset *ds, const char *path, const src_id *src, int nsrc)
{
    /* The format has no place for float targets; dropping them silently would train on nothing. */
    if (ds->target_width > 0)
        return t2_seterr(T2_EUNSUPPORTED, "%s: a cache holds inputs and labels only; this dataset has %d float targets per sample",
                         path, ds->target_width);
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
    put32(hdr + CACHE_SRC, (uint32_t)nsrc);
    for (int i = 0; i < nsrc; i++) put_src(hdr + CACHE_SRC + 8 + CACHE_SRC_SIZE * i, &src[i]);

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
    /* mkstemp makes it 0600, and so it stays: the trials that share it run as this user, and
     * a cache others could write is one they could poison (the readers refuse it). */
    if ((rc = write_all(fd, hdr, sizeof hdr, tmp)) != 0 || (rc = write_body(fd, ds, &h, tmp)) != 0) goto fail;
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
    if (get32(p + CACHE_SRC) > T2_DATASET_CACHE_MAX_SOURCES || get32(p + CACHE_SRC + 4) != 0)
        return t2_seterr(T2_EFORMAT, "%s: bad source count %u", path, get32(p + CACHE_SRC));
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

/* The recorded sources against the current ones (names: the source paths, for the message). */
static int check_sources(const char *path, const uint8_t *p, const char *const *names, const src_id *src, int nsrc)
{
    uint32_t have = get32(p + CACHE_SRC);
    if (have != (uint32_t)nsrc)
        return t2_seterr(T2_ESTATE, "%s: made from %u source file(s), not from these %d", path, have, nsrc);
    for (int i = 0; i < nsrc; i++) {
        src_id r;
        get_src(p + CACHE_SRC + 8 + CACHE_SRC_SIZE * i, &r);
        if (r.path_hash != src[i].path_hash || r.ino != src[i].ino || r.dev != src[i].dev)
            return t2_seterr(T2_ESTATE, "%s: made from another file than %s", path, names[i]);
        if (r.size != src[i].size || r.mtime_s != src[i].mtime_s || r.mtime_ns != src[i].mtime_ns)
            return t2_seterr(T2_ESTATE, "%s: %s changed since the cache was made (size %llu, modified %lld.%09lld; "
                             "recorded: size %llu, modified %lld.%09lld)", path, names[i],
                             (unsigned long long)src[i].size, (long long)src[i].mtime_s, (long long)src[i].mtime_ns,
                             (unsigned long long)r.size, (long long)r.mtime_s, (long long)r.mtime_ns);
    }
    return T2_OK;
}

/* nsrc < 0: whatever the cache was made from. */
static int cache_open(t2_dataset **out, const char *path, const char *const *names, const src_id *src, int nsrc)
{
    *out = NULL;
    /* O_NOFOLLOW: a link planted at the cache's name is not followed; O_NONBLOCK: nor is a FIFO
     * waited on. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return t2_seterr(errno == ENOENT ? T2_ENOTFOUND : T2_EIO, "%s: cannot open: %s%s", path, strerror(errno),
                         errno == ELOOP ? " (a symbolic link: refused)" : "");
    int rc = T2_OK;
    void *map = MAP_FAILED;
    size_t size = 0;
    t2_dataset *ds = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = t2_seterr(T2_EIO, "%s: not a readable regular file", path);
        goto fail;
    }
    /* Checked on the descriptor that is mapped, so the file cannot be swapped after the check. */
    if (st.st_uid != geteuid()) {
        rc = t2_seterr(T2_EIO, "%s: refused: owned by uid %u, not by this user (uid %u)", path, (unsigned)st.st_uid,
                       (unsigned)geteuid());
        goto fail;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        rc = t2_seterr(T2_EIO, "%s: refused: writable by %s (mode %04o)", path,
                       st.st_mode & S_IWOTH ? "everyone" : "its group", (unsigned)(st.st_mode & 07777));
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
    if ((rc = parse_cache(path, map, size, &h)) != 0 ||
        (nsrc >= 0 && (rc = check_sources(path, map, names, src, nsrc)) != 0))
        goto fail;
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

/* ---- the public entry points ---- */

int t2_dataset_cache_write(const t2_dataset *ds, const char *path)
{
    if (!ds || !path) return t2_seterr(T2_EINVAL, "t2_dataset_cache_write: NULL argument");
    return cache_write(ds, path, NULL, 0);
}

int t2_dataset_cache_write_sources(const t2_dataset *ds, const char *path, const char *const *sources, int nsources)
{
    if (!ds || !path) return t2_seterr(T2_EINVAL, "t2_dataset_cache_write_sources: NULL argument");
    src_id ids[T2_DATASET_CACHE_MAX_SOURCES];
    int rc = source_ids(sources, nsources, ids, NULL);
    return rc ? rc : cache_write(ds, path, ids, nsources);
}

int t2_dataset_cache_open(t2_dataset **out, const char *path)
{
    if (!out || !path) return t2_seterr(T2_EINVAL, "t2_dataset_cache_open: NULL argument");
    return cache_open(out, path, NULL, NULL, -1);
}

int t2_dataset_cache_open_sources(t2_dataset **out, const char *path, const char *const *sources, int nsources)
{
    if (!out || !path) return t2_seterr(T2_EINVAL, "t2_dataset_cache_open_sources: NULL argument");
    *out = NULL;
    src_id ids[T2_DATASET_CACHE_MAX_SOURCES];
    int rc = source_ids(sources, nsources, ids, NULL);
    return rc ? rc : cache_open(out, path, sources, ids, nsources);
}

static int put_dir(char *buf, size_t len, const char *a, const char *b)
{
    int n = snprintf(buf, len, "%s%s", a, b);
    if (n < 0 || (size_t)n >= len) return t2_seterr(T2_EINVAL, "dataset cache: %s%s is too long a path", a, b);
    return T2_OK;
}

int t2_dataset_cache_dir(char *buf, size_t len)
{
    if (!buf || !len) return t2_seterr(T2_EINVAL, "t2_dataset_cache_dir: no buffer");
    const char *v = getenv("T2EXP_HOME");
    if (v && *v) return put_dir(buf, len, v, "/cache");
    /* The XDG base-directory spec says a relative $XDG_CACHE_HOME is invalid and to be ignored. */
    v = getenv("XDG_CACHE_HOME");
    if (v && v[0] == '/') return put_dir(buf, len, v, "/t2exp");
    v = getenv("HOME");
    if (v && *v) return put_dir(buf, len, v, "/.cache/t2exp");
    return t2_seterr(T2_ENOTFOUND, "dataset cache: none of $T2EXP_HOME, $XDG_CACHE_HOME, $HOME is set");
}

int t2_dataset_idx_cached(t2_dataset **out, const char *images_path, const char *labels_path, const char *cache_dir)
{
    if (!out || !images_path || !labels_path) return t2_seterr(T2_EINVAL, "t2_dataset_idx_cached: NULL argument");
    *out = NULL;
    /* The sources first: without them there is no cache to trust, whatever lies in the cache dir. */
    const char *src[2] = {images_path, labels_path};
    src_id ids[2];
    uint64_t key = 0;
    char dir[PATH_MAX], path[PATH_MAX];
    int rc = source_ids(src, 2, ids, &key);
    if (!rc && (!cache_dir || !*cache_dir) && !(rc = t2_dataset_cache_dir(dir, sizeof dir))) cache_dir = dir;
    if (rc || (rc = t2__mkdirs(cache_dir))) return rc;
    /* <images file name without .gz>-<hash of both absolute paths>.t2c */
    const char *stem = strrchr(images_path, '/');
    stem = stem ? stem + 1 : images_path;
    size_t sl = strlen(stem);
    if (sl > 3 && strcmp(stem + sl - 3, ".gz") == 0) sl -= 3;
    int n = snprintf(path, sizeof path, "%s/%.*s-%016llx.t2c", cache_dir, (int)(sl < 128 ? sl : 128), stem,
                     (unsigned long long)key);
    if (n < 0 || (size_t)n >= sizeof path) return t2_seterr(T2_EINVAL, "dataset cache: %s: path too long", cache_dir);
    if (cache_open(out, path, src, ids, 2) == T2_OK) return T2_OK;
    /* Missing, stale, damaged or refused: made again from the sources (the rename replaces
     * whatever was there), then mapped like any cache. */
    t2_dataset *ds = NULL;
    if ((rc = t2_dataset_idx_open(&ds, images_path, labels_path))) return rc;
    rc = cache_write(ds, path, ids, 2);
    t2_dataset_free(ds);
    return rc ? rc : cache_open(out, path, src, ids, 2);
}
