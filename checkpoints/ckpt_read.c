/* ckpt_read.c — reading and validating a checkpoint archive, entirely in memory.
 *
 * The file is read in one piece and libarchive parses it from memory (tar only; gzip or zstd
 * filters). Nothing is ever written to disk, so hostile names or links cannot escape anywhere;
 * they are still rejected, with everything else a writer of this format never produces, so that
 * a damaged or foreign file fails loudly at open rather than oddly at restore.
 *
 * The file is mapped (MAP_POPULATE, read-only) rather than read: for a file in the page cache
 * that costs a tenth of a millisecond, where read(2) into fresh memory costs the kernel zeroing
 * and faulting ~10 MB first (3-4x the copy itself). For an uncompressed archive libarchive then
 * hands out each entry as one block pointing into the mapping: the entries alias it (tar data
 * is 512-byte aligned, so the floats are aligned) and opening costs the checksums only.
 * Compressed entries are copied out, into buffers that grow with the data actually decoded
 * rather than with the sizes headers claim, and the mapping is dropped after parsing. The one
 * condition: nobody truncates the file in place while it is open (a mapped page past the new
 * end faults); t2exp never does (checkpoints are replaced by rename), and a copy with cp should
 * not target a checkpoint being restored. Where mmap fails the file is read instead. */
#define _GNU_SOURCE /* MAP_POPULATE */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ckpt_internal.h"
#include "crc32c.h"
#include "parallel.h"
#include "t2exp/error.h"

static int bad(const t2__ckpt *ck, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int bad(const t2__ckpt *ck, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return t2_seterr(T2_EFORMAT, "checkpoint %s: %s", ck->path, msg);
}

static void release_file(t2__ckpt *ck);

void t2__ckpt_free(t2__ckpt *ck)
{
    if (!ck) return;
    for (int k = 0; k < E_COUNT; k++) free(ck->e[k].own);
    release_file(ck);
    t2__ckpt_meta_clear(ck);
    free(ck->path);
    free(ck);
}

static void release_file(t2__ckpt *ck)
{
    if (ck->file_mapped) munmap(ck->file, ck->file_mapped);
    else free(ck->file);
    ck->file = NULL;
    ck->file_mapped = 0;
}

static const char *kind_name(const struct archive_entry *e)
{
    if (archive_entry_hardlink((struct archive_entry *)e)) return "a hard link";
    switch (archive_entry_filetype((struct archive_entry *)e)) {
    case AE_IFREG: return NULL;
    case AE_IFLNK: return "a symbolic link";
    case AE_IFDIR: return "a directory";
    case AE_IFCHR: return "a character device";
    case AE_IFBLK: return "a block device";
    case AE_IFIFO: return "a fifo";
    case AE_IFSOCK: return "a socket";
    default: return "not a regular file";
    }
}

static int entry_index(const char *name)
{
    for (int k = 0; k < E_COUNT; k++)
        if (!strcmp(name, t2__ckpt_entry_name[k])) return k;
    return -1;
}

/* Reads entry k's `size` bytes: aliases the file buffer when libarchive delivers the entry as
 * one block inside it, copies otherwise. */
static int read_entry(t2__ckpt *ck, struct archive *a, int k, uint64_t size, const unsigned char *file,
                      size_t file_len)
{
    t2__ckpt_entry *en = &ck->e[k];
    const char *name = t2__ckpt_entry_name[k];
    uint64_t pos = 0, cap = 0;
    for (;;) {
        const void *blk;
        size_t len;
        la_int64_t off;
        int r = archive_read_data_block(a, &blk, &len, &off);
        if (r == ARCHIVE_EOF) break;
        if (r != ARCHIVE_OK)
            return bad(ck, "entry %s: truncated or corrupt archive: %s", name,
                       archive_error_string(a) ? archive_error_string(a) : "read error");
        if (off < 0 || (uint64_t)off != pos || len > size - pos)
            return bad(ck, "entry %s: data block at %lld+%zu does not follow the %llu bytes before it within %llu",
                       name, (long long)off, len, (unsigned long long)pos, (unsigned long long)size);
        if (len == 0) continue;
        uintptr_t b = (uintptr_t)blk, f = (uintptr_t)file;
        if (pos == 0 && len == size && file && b >= f && b - f <= file_len && len <= file_len - (b - f)) {
            en->data = blk;
            pos = len;
            continue;
        }
        if (pos + len > cap) {
            uint64_t want = cap ? cap : (size < ((uint64_t)1 << 20) ? size : (uint64_t)1 << 20);
            while (want < pos + len) want = want > size / 2 ? size : want * 2;
            unsigned char *grown = realloc(en->own, (size_t)want);
            if (!grown) return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory for entry %s", ck->path, name);
            en->own = grown;
            cap = want;
        }
        memcpy(en->own + pos, blk, len);
        en->data = en->own;
        pos += len;
    }
    if (pos != size)
        return bad(ck, "entry %s: truncated archive: %llu of %llu bytes", name, (unsigned long long)pos,
                   (unsigned long long)size);
    return T2_OK;
}

/* ---- CRCs over a set of byte ranges, split over the thread pool ----
 * The checksums are most of what opening costs (the bytes come from the page cache at memory
 * speed), so a large entry is cut into one contiguous byte range per pool thread; each thread
 * computes the CRC of every piece of every range (tensor) that falls into its part, and the
 * pieces of a range are then joined in order with t2__crc32c_combine. The result is the same
 * CRC, bit for bit, whatever the thread count. */
#define CRC_PAR_MIN ((size_t)1 << 20) /* below this, one thread: waking the pool costs more */
#define CRC_MAX_PARTS 8

typedef struct crc_job {
    const unsigned char *base; /* the entry's bytes */
    const size_t *off, *len;   /* nr ranges of base (they tile [0, total) in some order) */
    int nr;
    size_t total;
    int parts;
    uint32_t *piece;           /* [range * parts + part]: CRC of the range's piece in that part */
} crc_job;

static void crc_parts(void *ctx, size_t begin, size_t end)
{
    const crc_job *j = ctx;
    for (size_t part = begin; part < end; part++) {
        size_t lo = j->total * part / (size_t)j->parts, hi = j->total * (part + 1) / (size_t)j->parts;
        for (int r = 0; r < j->nr; r++) {
            size_t a = j->off[r] > lo ? j->off[r] : lo, b = j->off[r] + j->len[r] < hi ? j->off[r] + j->len[r] : hi;
            j->piece[(size_t)r * (size_t)j->parts + part] = a < b ? t2__crc32c(0, j->base + a, b - a) : 0;
        }
    }
}

/* crc[r] = CRC-32C of base[off[r] .. off[r] + len[r]) for every r; the ranges must lie within
 * [0, total) and not overlap (checked by the metadata for the tensors). T2_ENOMEM only. */
static int crc_ranges(const t2__ckpt *ck, const unsigned char *base, size_t total, const size_t *off,
                      const size_t *len, int nr, uint32_t *crc)
{
    int parts = total >= CRC_PAR_MIN ? t2__pool_threads() : 1;
    if (parts > CRC_MAX_PARTS) parts = CRC_MAX_PARTS;
    if (parts <= 1) {
        for (int r = 0; r < nr; r++) crc[r] = t2__crc32c(0, base + off[r], len[r]);
        return T2_OK;
    }
    uint32_t *piece = malloc((size_t)nr * (size_t)parts * sizeof *piece);
    if (!piece) return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
    crc_job j = {base, off, len, nr, total, parts, piece};
    t2__parallel_for((size_t)parts, 1, crc_parts, &j);
    for (int r = 0; r < nr; r++) {
        uint32_t c = 0;
        for (int part = 0; part < parts; part++) {
            size_t lo = total * (size_t)part / (size_t)parts, hi = total * (size_t)(part + 1) / (size_t)parts;
            size_t a = off[r] > lo ? off[r] : lo, b = off[r] + len[r] < hi ? off[r] + len[r] : hi;
            if (a < b) c = t2__crc32c_combine(c, piece[(size_t)r * (size_t)parts + (size_t)part], b - a);
        }
        crc[r] = c;
    }
    free(piece);
    return T2_OK;
}

/* Tensor by tensor for the float arrays, so that a mismatch names the tensor. */
static int verify(t2__ckpt *ck, int k)
{
    const t2__ckpt_entry *en = &ck->e[k];
    if (k == E_PARAMS || k == E_BUFFERS) {
        int buf = k == E_BUFFERS, in_order = 1, nr = 0, rc;
        uint32_t whole = 0;
        size_t next = 0;
        size_t *off = malloc(((size_t)ck->ntensors + 1) * 2 * sizeof *off);
        uint32_t *crc = malloc(((size_t)ck->ntensors + 1) * sizeof *crc);
        if (!off || !crc) {
            free(off);
            free(crc);
            return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
        }
        size_t *len = off + ck->ntensors + 1;
        for (int i = 0; i < ck->ntensors; i++) {
            const t2__ckpt_tensor *t = &ck->tensors[i];
            if (t->info.is_buffer != buf) continue;
            off[nr] = t->info.offset * sizeof(float);
            len[nr++] = t->info.size * sizeof(float);
        }
        if ((rc = crc_ranges(ck, en->data, (size_t)en->size, off, len, nr, crc))) {
            free(off);
            free(crc);
            return rc;
        }
        nr = 0;
        for (int i = 0; i < ck->ntensors && !rc; i++) {
            const t2__ckpt_tensor *t = &ck->tensors[i];
            if (t->info.is_buffer != buf) continue;
            uint32_t c = crc[nr++];
            if (c != t->crc)
                rc = bad(ck, "entry %s: tensor %s fails its CRC-32C check (stored %08x, computed %08x): the file is "
                             "corrupt",
                         t2__ckpt_entry_name[k], t->info.name, (unsigned)t->crc, (unsigned)c);
            if (t->info.offset != next) in_order = 0;
            whole = t2__crc32c_combine(whole, c, (uint64_t)t->info.size * sizeof(float));
            next = t->info.offset + t->info.size;
        }
        free(off);
        free(crc);
        if (rc) return rc;
        /* The tensors tile the array (checked with the metadata), so their CRCs cover every
         * byte; the entry's own CRC then follows without another pass. */
        if (in_order && whole != en->crc)
            return bad(ck, "entry %s: CRC-32C of the entry (%08x) disagrees with metadata.json (%08x)",
                       t2__ckpt_entry_name[k], (unsigned)whole, (unsigned)en->crc);
        return T2_OK;
    }
    uint32_t c = 0;
    size_t zero = 0, size = (size_t)en->size;
    int rc = size ? crc_ranges(ck, en->data, size, &zero, &size, 1, &c) : T2_OK;
    if (rc) return rc;
    if (c != en->crc)
        return bad(ck, "entry %s fails its CRC-32C check (stored %08x, computed %08x): the file is corrupt",
                   t2__ckpt_entry_name[k], (unsigned)en->crc, (unsigned)c);
    return T2_OK;
}

static int check_header(t2__ckpt *ck, struct archive_entry *e, const int *seen, int first, int *kout,
                        uint64_t *size)
{
    const char *name = archive_entry_pathname(e);
    if (!name) return bad(ck, "an entry has no readable name");
    if (name[0] == '/' || strstr(name, "..") || strchr(name, '/') || strchr(name, '\\'))
        return bad(ck, "entry \"%.100s\": paths are not allowed in a checkpoint (absolute, '..' or '/')", name);
    const char *kind = kind_name(e);
    if (kind) return bad(ck, "entry %.100s is %s, not a regular file", name, kind);
    if (archive_entry_sparse_count(e) > 0) return bad(ck, "entry %.100s is a sparse file", name);
    int k = entry_index(name);
    if (k < 0) return bad(ck, "unknown entry \"%.100s\"", name);
    if (seen[k]) return bad(ck, "duplicate entry %s", name);
    if (first && k != E_META) return bad(ck, "the first entry is %s, not metadata.json", name);
    if (!first && !ck->e[k].declared) return bad(ck, "entry %s is not listed in metadata.json", name);
    if (!archive_entry_size_is_set(e) || archive_entry_size(e) < 0) return bad(ck, "entry %s has no size", name);
    uint64_t sz = (uint64_t)archive_entry_size(e);
    uint64_t limit = k == E_META ? T2__CKPT_MAX_META : ck->e[k].size;
    if (k == E_META ? sz > limit : sz != limit)
        return bad(ck, "entry %s is %llu bytes but %s %llu", name, (unsigned long long)sz,
                   k == E_META ? "the limit is" : "metadata.json says", (unsigned long long)limit);
    *kout = k;
    *size = sz;
    return T2_OK;
}

/* Takes ownership of file: file_len bytes, mmap'd when mapped, malloc'd otherwise. */
static int parse(t2__ckpt **out, const char *name, unsigned char *file, size_t file_len, int mapped)
{
    int rc = T2_OK;
    int seen[E_COUNT] = {0}, last = -1;
    struct archive *a = NULL;
    t2__ckpt *ck = calloc(1, sizeof *ck);
    if (!ck || !(ck->path = strdup(name))) {
        if (mapped) munmap(file, file_len);
        else free(file);
        free(ck);
        return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", name);
    }
    ck->file = file;
    ck->file_mapped = mapped ? file_len : 0;
    if (!(a = archive_read_new())) {
        rc = t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", name);
        goto fail;
    }
    archive_read_support_format_tar(a);
    archive_read_support_filter_gzip(a);
    archive_read_support_filter_zstd(a);
    if (file_len == 0) {
        rc = bad(ck, "the file is empty");
        goto fail;
    }
    if (archive_read_open_memory(a, file, file_len) != ARCHIVE_OK) {
        rc = bad(ck, "not a tar archive, or truncated: %s", archive_error_string(a) ? archive_error_string(a) : "unreadable");
        goto fail;
    }
    for (;;) {
        struct archive_entry *e;
        int r = archive_read_next_header(a, &e);
        if (r == ARCHIVE_EOF) break;
        if (r != ARCHIVE_OK) {
            rc = bad(ck, "truncated or corrupt archive %s%s: %s", last < 0 ? "at the start" : "after entry ",
                     last < 0 ? "" : t2__ckpt_entry_name[last],
                     archive_error_string(a) ? archive_error_string(a) : "read error");
            goto fail;
        }
        int k = 0;
        uint64_t size = 0;
        if ((rc = check_header(ck, e, seen, last < 0, &k, &size)) ||
            (rc = read_entry(ck, a, k, size, file, file_len)))
            goto fail;
        seen[k] = 1;
        last = k;
        if (k == E_META) {
            rc = t2__ckpt_meta_from_json(ck, size ? (const char *)ck->e[k].data : "", (size_t)size);
            free(ck->e[k].own); /* parsed: the text is not needed any more */
            ck->e[k].own = NULL;
            ck->e[k].data = NULL;
            if (rc) goto fail;
        } else if ((rc = verify(ck, k))) {
            goto fail;
        }
    }
    for (int k = 0; k < E_COUNT; k++)
        if ((k == E_META || ck->e[k].declared) && !seen[k]) {
            rc = bad(ck, "missing entry %s", t2__ckpt_entry_name[k]);
            goto fail;
        }
    archive_read_free(a);
    int aliased = 0;
    for (int k = 0; k < E_COUNT; k++) aliased |= ck->e[k].data && !ck->e[k].own;
    if (!aliased) release_file(ck);
    *out = ck;
    return T2_OK;
fail:
    archive_read_free(a);
    t2__ckpt_free(ck);
    return rc;
}

int t2__ckpt_open_memory(t2__ckpt **out, const char *name, const void *data, size_t len)
{
    if (!out) return t2_seterr(T2_EINVAL, "t2__ckpt_open_memory: NULL argument");
    *out = NULL;
    if (!name || (!data && len)) return t2_seterr(T2_EINVAL, "t2__ckpt_open_memory: NULL argument");
    unsigned char *copy = malloc(len ? len : 1);
    if (!copy) return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory for %zu bytes", name, len);
    if (len) memcpy(copy, data, len);
    return parse(out, name, copy, len, 0);
}

int t2__ckpt_open(t2__ckpt **out, const char *path)
{
    if (!out) return t2_seterr(T2_EINVAL, "t2__ckpt_open: NULL argument");
    *out = NULL;
    if (!path) return t2_seterr(T2_EINVAL, "t2__ckpt_open: NULL path");
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return t2_seterr(T2_EUNSUPPORTED, "checkpoint %s: reading on a big-endian host is not supported", path);
#endif
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return t2_seterr(e == ENOENT ? T2_ENOTFOUND : T2_EIO, "checkpoint %s: cannot open: %s", path, strerror(e));
    }
    struct stat st;
    unsigned char *buf = NULL;
    int rc = T2_OK;
    if (fstat(fd, &st) != 0) {
        rc = t2_seterr(T2_EIO, "checkpoint %s: cannot stat: %s", path, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = t2_seterr(T2_EIO, "checkpoint %s: not a regular file", path);
        goto fail;
    }
    if ((uint64_t)st.st_size > T2__CKPT_MAX_ENTRY) {
        rc = t2_seterr(T2_EFORMAT, "checkpoint %s: %lld bytes is more than the %llu-byte limit", path,
                       (long long)st.st_size, (unsigned long long)T2__CKPT_MAX_ENTRY);
        goto fail;
    }
    size_t len = (size_t)st.st_size, got = 0;
    if (len > 0) {
        void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (m != MAP_FAILED) {
            close(fd);
            return parse(out, path, m, len, 1);
        }
    }
    /* Aligned for the entries that will alias it (no zeroing: every byte is read over). */
    void *p = NULL;
    if (posix_memalign(&p, 64, len ? len : 1) != 0) {
        rc = t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory for %zu bytes", path, len);
        goto fail;
    }
    buf = p;
    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got > ((size_t)1 << 30) ? (size_t)1 << 30 : len - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            rc = t2_seterr(T2_EIO, "checkpoint %s: read failed: %s", path, strerror(errno));
            goto fail;
        }
        if (r == 0) {
            rc = t2_seterr(T2_EIO, "checkpoint %s: the file shrank while being read (%zu of %zu bytes)", path, got,
                           len);
            goto fail;
        }
        got += (size_t)r;
    }
    close(fd);
    return parse(out, path, buf, len, 0);
fail:
    close(fd);
    free(buf);
    return rc;
}
