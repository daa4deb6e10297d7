/* idx.c — the IDX file format of the MNIST family (raw or gzip through libarchive), strictly
 * validated: every size is checked against the bytes actually present before it is trusted. */
#define _DEFAULT_SOURCE /* POSIX: O_CLOEXEC, mkstemp, fchmod, madvise, strdup */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <zlib.h>
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

/* gzip through zlib in one inflate call into a buffer sized from the gzip trailer: no stream
 * copies, and zlib checks the trailer's CRC-32 and length, so a corrupted file cannot pass. The
 * header is decoded first (from a small inflate), so a header claiming terabytes costs nothing. */
static int gz_decode(const char *name, const uint8_t *file, size_t len, int want_ndim, t2__idx *out)
{
    int rc = T2_OK, zrc;
    uint8_t *buf = NULL;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return t2_seterr(T2_ENOMEM, "%s: cannot start zlib", name);
    /* 1. The IDX header. */
    uint8_t hdr[16];
    size_t hdrlen = 4 + 4 * (size_t)want_ndim;
    z.next_in = (Bytef *)file;
    z.avail_in = len > UINT_MAX ? UINT_MAX : (uInt)len;
    z.next_out = hdr;
    z.avail_out = (uInt)hdrlen;
    zrc = inflate(&z, Z_SYNC_FLUSH);
    if (zrc != Z_OK && zrc != Z_STREAM_END) goto corrupt;
    if ((rc = parse_header(name, hdr, hdrlen - z.avail_out, want_ndim, out)) != 0) goto fail;
    /* 2. The payload, straight into its final buffer. */
    size_t total = hdrlen + out->count;
    if (out->count / 1024 > len) { /* deflate cannot expand beyond ~1032:1 */
        rc = t2_seterr(T2_EFORMAT, "%s: truncated: header promises %zu payload bytes, the %zu-byte stream cannot hold them",
                       name, out->count, len);
        goto fail;
    }
    buf = malloc(total + 1);
    if (!buf) goto nomem;
    memcpy(buf, hdr, hdrlen);
    size_t got = hdrlen;
    while (zrc != Z_STREAM_END) {
        /* One extra byte of room shows trailing data instead of silently stopping at total. */
        size_t room = total + 1 - got;
        z.next_out = buf + got;
        z.avail_out = room > UINT_MAX ? UINT_MAX : (uInt)room;
        if (z.avail_in == 0 && (size_t)z.total_in < len) {
            size_t left = len - (size_t)z.total_in;
            z.avail_in = left > UINT_MAX ? UINT_MAX : (uInt)left;
        }
        zrc = inflate(&z, Z_NO_FLUSH);
        got = (size_t)(z.next_out - buf);
        if (zrc == Z_STREAM_END) break;
        if (zrc == Z_BUF_ERROR && z.avail_in == 0 && (size_t)z.total_in >= len) {
            rc = t2_seterr(T2_EFORMAT, "%s: truncated: header promises %zu payload bytes, stream has %zu", name,
                           out->count, got - hdrlen);
            goto fail;
        }
        if (zrc != Z_OK && zrc != Z_BUF_ERROR) goto corrupt;
        if (got > total) break;
    }
    if (got < total) {
        rc = t2_seterr(T2_EFORMAT, "%s: truncated: header promises %zu payload bytes, stream has %zu", name,
                       out->count, got - hdrlen);
        goto fail;
    }
    if (got > total || zrc != Z_STREAM_END) {
        rc = t2_seterr(T2_EFORMAT, "%s: unexpected bytes after the %zu-byte payload", name, out->count);
        goto fail;
    }
    inflateEnd(&z);
    out->buf = buf;
    out->data = buf + hdrlen;
    return T2_OK;
corrupt:
    rc = t2_seterr(T2_EFORMAT, "%s: corrupt gzip stream: %s", name, z.msg ? z.msg : zError(zrc));
    goto fail;
nomem:
    rc = t2_seterr(T2_ENOMEM, "%s: cannot allocate the decompressed data", name);
fail:
    free(buf);
    inflateEnd(&z);
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
