/* idx.c — the IDX file format of the MNIST family (raw or gzip through libarchive), strictly
 * validated: every size is checked against the bytes actually present before it is trusted. */
#define _DEFAULT_SOURCE /* POSIX: O_CLOEXEC, mkstemp, fchmod, madvise, strdup */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "data_internal.h"
#include "internal.h"

#define IDX_UBYTE 0x08

/* Reads a whole file into a malloc'd buffer. */
static int read_file(const char *path, uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return t2_seterr(e == ENOENT ? T2_ENOTFOUND : T2_EIO, "%s: cannot open: %s", path, strerror(e));
    }
    int rc = T2_OK;
    uint8_t *buf = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = t2_seterr(T2_EIO, "%s: cannot stat: %s", path, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = t2_seterr(T2_EIO, "%s: not a regular file", path);
        goto fail;
    }
    size_t size = (size_t)st.st_size;
    buf = malloc(size ? size : 1);
    if (!buf) {
        rc = t2_seterr(T2_ENOMEM, "%s: cannot allocate %zu bytes", path, size);
        goto fail;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            rc = t2_seterr(T2_EIO, "%s: read failed: %s", path, strerror(errno));
            goto fail;
        }
        if (r == 0) break; /* shrank while reading: judge what is there */
        got += (size_t)r;
    }
    close(fd);
    *out = buf;
    *len = got;
    return T2_OK;
fail:
    free(buf);
    close(fd);
    return rc;
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

/* Reads up to n bytes of decompressed data; returns bytes read, or -1 on a stream error. */
static ssize_t gz_read(struct archive *a, uint8_t *dst, size_t n)
{
    size_t got = 0;
    while (got < n) {
        la_ssize_t r = archive_read_data(a, dst + got, n - got);
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

static int gz_decode(const char *name, const uint8_t *file, size_t len, int want_ndim, t2__idx *out)
{
    int rc = T2_OK;
    uint8_t *buf = NULL;
    struct archive *a = archive_read_new();
    struct archive_entry *e;
    if (!a) return t2_seterr(T2_ENOMEM, "%s: cannot create a libarchive reader", name);
    if (archive_read_support_filter_all(a) != ARCHIVE_OK ||
        archive_read_support_format_raw(a) != ARCHIVE_OK ||
        archive_read_open_memory(a, file, len) != ARCHIVE_OK ||
        archive_read_next_header(a, &e) != ARCHIVE_OK)
        goto corrupt;
    if (archive_filter_code(a, 0) != ARCHIVE_FILTER_GZIP) {
        rc = t2_seterr(T2_EFORMAT, "%s: starts like gzip but is not a gzip stream", name);
        goto fail;
    }
    uint8_t hdr[16];
    size_t hdrlen = 4 + 4 * (size_t)want_ndim;
    ssize_t h = gz_read(a, hdr, hdrlen);
    if (h < 0) goto corrupt;
    if ((rc = parse_header(name, hdr, (size_t)h, want_ndim, out)) != 0) goto fail;
    size_t total = hdrlen + out->count;
    /* Grow with the data actually decompressed, so a header claiming terabytes costs nothing. */
    size_t cap = len < ((size_t)1 << 18) ? ((size_t)1 << 20) : len * 4;
    if (cap > total) cap = total;
    buf = malloc(cap);
    if (!buf) goto nomem;
    memcpy(buf, hdr, hdrlen);
    size_t got = hdrlen;
    while (got < total) {
        if (got == cap) {
            size_t ncap = cap > total / 2 ? total : cap * 2;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) goto nomem;
            buf = nb;
            cap = ncap;
        }
        ssize_t r = gz_read(a, buf + got, cap - got);
        if (r < 0) goto corrupt;
        got += (size_t)r;
        if (got < cap) break; /* end of stream */
    }
    if (got < total) {
        rc = t2_seterr(T2_EFORMAT, "%s: truncated: header promises %zu payload bytes, stream has %zu",
                       name, out->count, got - hdrlen);
        goto fail;
    }
    uint8_t extra[256];
    ssize_t x = gz_read(a, extra, sizeof extra);
    if (x < 0) goto corrupt;
    if (x > 0) {
        rc = t2_seterr(T2_EFORMAT, "%s: unexpected bytes after the %zu-byte payload", name, out->count);
        goto fail;
    }
    archive_read_free(a);
    out->buf = buf;
    out->data = buf + hdrlen;
    return T2_OK;
corrupt:
    rc = t2_seterr(T2_EFORMAT, "%s: corrupt gzip stream: %s", name,
                   archive_error_string(a) ? archive_error_string(a) : "unreadable");
    goto fail;
nomem:
    rc = t2_seterr(T2_ENOMEM, "%s: cannot allocate the decompressed data", name);
fail:
    free(buf);
    archive_read_free(a);
    return rc;
}

/* Validates a raw (uncompressed) IDX image without copying it. */
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
    uint8_t *file;
    size_t len;
    memset(out, 0, sizeof *out);
    int rc = read_file(path, &file, &len);
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
