/* idx.c — the IDX file format of the MNIST family (raw, or gzip through libdeflate), strictly
 * validated: every size is checked against the bytes actually present before it is trusted. */
#define _DEFAULT_SOURCE /* POSIX: O_CLOEXEC, mkstemp, fchmod, madvise, strdup */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "data_internal.h"
#include "internal.h"

#define IDX_UBYTE 0x08

/* Reads the rest of an open file (size bytes by fstat) into a malloc'd buffer. */
static int read_fd(int fd, const char *path, size_t size, uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) return t2_seterr(T2_ENOMEM, "%s: cannot allocate %zu bytes", path, size);
    size_t got = 0;
    while (got < size) {
        ssize_t r = pread(fd, buf + got, size - got, (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            return t2_seterr(T2_EIO, "%s: read failed: %s", path, strerror(e));
        }
        if (r == 0) break; /* shrank while reading: judge what is there */
        got += (size_t)r;
    }
    *out = buf;
    *len = got;
    return T2_OK;
}

/* Parses the magic and dimensions in hdr[0..hdrlen) (hdrlen = 4 + 4*ndim) and sets the payload
 * size. Nothing is allocated from these numbers before this check passes. */
static int parse_header(const char *name, const uint8_t *hdr, size_t have, int want_ndim, t2__idx *out)
{
    size_t hdrlen = 4 + 4 * (size_t)want_ndim;
    uint32_t want_magic = (uint32_t)IDX_UBYTE << 8 | (uint32_t)want_ndim;
    if (have < 4)
        return t2_seterr(T2_EFORMAT, "%s: truncated: %zu bytes, too short for an IDX header", name, have);
    uint32_t magic = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
    if (magic != want_magic)
        return t2_seterr(T2_EFORMAT, "%s: bad magic 0x%08x (expected 0x%08x for idx%d ubyte)", name,
                         magic, want_magic, want_ndim);
    if (have < hdrlen)
        return t2_seterr(T2_EFORMAT, "%s: truncated header: %zu bytes, need %zu", name, have, hdrlen);
    size_t count = 1;
    for (int i = 0; i < want_ndim; i++) {
        const uint8_t *p = hdr + 4 + 4 * i;
        uint32_t d = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        /* The item count may be large (EMNIST has 700k); the per-item dimensions may not. */
        uint64_t max = i == 0 ? (uint64_t)T2__MAX_SAMPLES : T2__MAX_DIM;
        if (d == 0 || d > max)
            return t2_seterr(T2_EFORMAT, "%s: absurd dimension %d = %u (must be 1..%llu)", name, i, d,
                             (unsigned long long)max);
        if (t2__mul_size(count, d, &count) != 0)
            return t2_seterr(T2_EFORMAT, "%s: dimensions overflow", name);
        out->dims[i] = d;
    }
    out->ndim = want_ndim;
    out->count = count;
    return T2_OK;
}

/* Validates an uncompressed IDX image (a raw file, or a decoded gzip one) without copying it. */
static int raw_check(const char *name, const uint8_t *file, size_t len, int want_ndim, t2__idx *out)
{
    int rc = parse_header(name, file, len, want_ndim, out);
    if (rc) return rc;
    size_t hdrlen = 4 + 4 * (size_t)want_ndim, have = len - hdrlen;
    if (have < out->count)
        return t2_seterr(T2_EFORMAT, "%s: truncated: header promises %zu payload bytes, file has %zu",
                         name, out->count, have);
    if (have > out->count)
        return t2_seterr(T2_EFORMAT, "%s: %zu unexpected bytes after the %zu-byte payload", name,
                         have - out->count, out->count);
    return T2_OK;
}

/* ---- gzip ----
 * libdeflate decodes the whole member in one call, about twice as fast as zlib's inflate (the
 * load of a gzip dataset is that decode). It needs the output size up front: the gzip trailer
 * gives it (ISIZE, the length mod 2^32), bounded by deflate's largest expansion (1032:1) before
 * anything is allocated, so a trailer claiming gigabytes in a small file costs nothing.
 * libdeflate checks the trailer's CRC-32 and length, so a corrupted file cannot pass. */
#define GZ_MIN_MEMBER 18 /* 10-byte header, an empty deflate block, 8-byte trailer */
#define GZ_MAX_RATIO 1032
#define PREFAULT_MIN ((size_t)8 << 20)

/* Maps a large output buffer's pages ahead of the decoder, on another core: the decoder then
 * writes to present pages instead of taking a page fault every 4 KiB (~10% of the decode).
 * MADV_POPULATE_WRITE (Linux 5.14) leaves the contents alone, so the two never race on data;
 * where it is missing the thread simply does nothing. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
typedef struct {
    uint8_t *p;
    size_t n;
} prefault_job;

static void *prefault(void *arg)
{
    prefault_job *j = arg;
    const size_t step = (size_t)2 << 20;
    uintptr_t a = ((uintptr_t)j->p + 4095) & ~(uintptr_t)4095, end = ((uintptr_t)j->p + j->n) & ~(uintptr_t)4095;
    for (; a < end; a += step) {
        size_t n = end - a < step ? end - a : step;
        if (madvise((void *)a, n, MADV_POPULATE_WRITE) != 0) break;
    }
    return NULL;
}

static int gz_decode(const char *name, const uint8_t *file, size_t len, int want_ndim, t2__idx *out)
{
    size_t hdrlen = 4 + 4 * (size_t)want_ndim;
    if (len < GZ_MIN_MEMBER)
        return t2_seterr(T2_EFORMAT, "%s: corrupt gzip stream: truncated at %zu bytes", name, len);
    const uint8_t *t = file + len - 4;
    size_t isize = (size_t)((uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24);
    if (isize / GZ_MAX_RATIO > len)
        return t2_seterr(T2_EFORMAT, "%s: corrupt or truncated gzip stream: its trailer claims %zu bytes, more than "
                         "%zu compressed bytes can hold", name, isize, len);
    uint8_t *buf = malloc(isize ? isize : 1);
    struct libdeflate_decompressor *d = buf ? libdeflate_alloc_decompressor() : NULL;
    if (!d) {
        free(buf);
        return t2_seterr(T2_ENOMEM, "%s: cannot allocate %zu bytes for the decompressed data", name, isize);
    }
    prefault_job pj = {buf, isize};
    pthread_t th;
    int threaded = isize >= PREFAULT_MIN && pthread_create(&th, NULL, prefault, &pj) == 0;
    size_t in_used = 0, got = 0;
    enum libdeflate_result r = libdeflate_gzip_decompress_ex(d, file, len, buf, isize, &in_used, &got);
    if (threaded) pthread_join(th, NULL);
    libdeflate_free_decompressor(d);
    int rc = T2_OK;
    if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
        rc = t2_seterr(T2_EFORMAT, "%s: corrupt gzip stream: the data is longer than the %zu bytes its trailer "
                       "gives (gzip files over 4 GiB decompressed are not supported: gunzip it)", name, isize);
    else if (r != LIBDEFLATE_SUCCESS)
        rc = t2_seterr(T2_EFORMAT, "%s: corrupt gzip stream: %s", name,
                       r == LIBDEFLATE_SHORT_OUTPUT ? "shorter than its trailer says"
                                                    : "bad header, deflate data, CRC-32 or length");
    else if (in_used != len)
        rc = t2_seterr(T2_EFORMAT, "%s: %zu unexpected bytes after the gzip stream (several members are not "
                       "supported)", name, len - in_used);
    else
        rc = raw_check(name, buf, got, want_ndim, out);
    if (rc) {
        free(buf);
        return rc;
    }
    out->buf = buf;
    out->data = buf + hdrlen;
    return T2_OK;
}

static int is_gzip(const uint8_t *file, size_t len) { return len >= 2 && file[0] == 0x1f && file[1] == 0x8b; }

int t2__idx_decode(const char *name, const uint8_t *file, size_t len, int want_ndim, t2__idx *out)
{
    memset(out, 0, sizeof *out);
    if (is_gzip(file, len)) return gz_decode(name, file, len, want_ndim, out);
    int rc = raw_check(name, file, len, want_ndim, out);
    if (rc) return rc;
    out->buf = malloc(len);
    if (!out->buf) return t2_seterr(T2_ENOMEM, "%s: cannot allocate %zu bytes", name, len);
    memcpy(out->buf, file, len);
    out->data = out->buf + (len - out->count);
    return T2_OK;
}

/* ---- the IDX dataset ---- */

typedef struct {
    uint8_t *images, *labels;
} idx_impl;

static void idx_destroy(t2_dataset *ds)
{
    idx_impl *m = ds->impl;
    if (!m) return;
    free(m->images);
    free(m->labels);
    free(m);
}

static const struct t2__dataset_ops idx_ops = {"idx", NULL, idx_destroy};

int t2__idx_dataset(t2_dataset **out, t2__idx *images, t2__idx *labels, const char *images_name,
                    const char *labels_name)
{
    int rc;
    t2_dataset *ds = NULL;
    *out = NULL;
    if (images->dims[0] != labels->dims[0]) {
        rc = t2_seterr(T2_EFORMAT, "%s has %u images but %s has %u labels", images_name,
                       images->dims[0], labels_name, labels->dims[0]);
        goto fail;
    }
    int shape[3] = {1, (int)images->dims[1], (int)images->dims[2]};
    if ((rc = t2__dataset_new(&ds, &idx_ops, images->dims[0], 3, shape)) != 0) goto fail;
    idx_impl *m = calloc(1, sizeof *m);
    if (!m) {
        rc = t2_seterr(T2_ENOMEM, "%s: out of memory", images_name);
        goto fail;
    }
    m->images = images->buf;
    m->labels = labels->buf;
    images->buf = labels->buf = NULL;
    ds->impl = m;
    ds->pix_type = T2__PIX_U8;
    ds->pixels = images->data;
    ds->labels8 = labels->data;
    int maxlab = 0;
    for (uint32_t i = 0; i < ds->n; i++)
        if (ds->labels8[i] > maxlab) maxlab = ds->labels8[i];
    ds->num_classes = maxlab + 1;
    *out = ds;
    return T2_OK;
fail:
    t2_dataset_free(ds);
    free(images->buf);
    free(labels->buf);
    images->buf = labels->buf = NULL;
    return rc;
}

static int idx_load(const char *path, int ndim, t2__idx *out)
{
    uint8_t *file, magic[2];
    size_t len;
    struct stat st;
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc;
    if (fd < 0) {
        int e = errno;
        return t2_seterr(e == ENOENT ? T2_ENOTFOUND : T2_EIO, "%s: cannot open: %s", path, strerror(e));
    }
    rc = fstat(fd, &st) != 0    ? t2_seterr(T2_EIO, "%s: cannot stat: %s", path, strerror(errno))
         : !S_ISREG(st.st_mode) ? t2_seterr(T2_EIO, "%s: not a regular file", path)
                                : T2_OK;
    if (rc) {
        close(fd);
        return rc;
    }
    size_t size = (size_t)st.st_size;
    /* A gzip file is mapped rather than read: decoded once and dropped, it needs no copy. */
    void *m = MAP_FAILED;
    if (size >= 2 && pread(fd, magic, 2, 0) == 2 && is_gzip(magic, 2))
        m = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (m != MAP_FAILED) {
        close(fd);
        rc = gz_decode(path, m, size, ndim, out);
        munmap(m, size);
        return rc;
    }
    rc = read_fd(fd, path, size, &file, &len);
    close(fd);
    if (rc) return rc;
    if (is_gzip(file, len)) {
        rc = gz_decode(path, file, len, ndim, out);
    } else if ((rc = raw_check(path, file, len, ndim, out)) == 0) {
        /* Keep the file buffer itself: no copy of the payload. */
        out->buf = file;
        out->data = file + (len - out->count);
        return T2_OK;
    }
    free(file);
    return rc;
}

int t2_dataset_idx_open(t2_dataset **out, const char *images_path, const char *labels_path)
{
    if (!out) return t2_seterr(T2_EINVAL, "t2_dataset_idx_open: NULL out");
    *out = NULL;
    if (!images_path || !labels_path) return t2_seterr(T2_EINVAL, "t2_dataset_idx_open: NULL path");
    t2__idx im, lb;
    memset(&lb, 0, sizeof lb);
    int rc = idx_load(images_path, 3, &im);
    if (rc) return rc;
    if ((rc = idx_load(labels_path, 1, &lb)) != 0) {
        free(im.buf);
        return rc;
    }
    return t2__idx_dataset(out, &im, &lb, images_path, labels_path);
}
