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

int t2__ckpt_bad(const t2__ckpt *ck, const char *where, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return t2_seterr(T2_EFORMAT, "checkpoint %s: %s%s%s", ck->path, where ? where : "", where ? ": " : "", msg);
}

#define bad(ck, ...) t2__ckpt_bad((ck), NULL, __VA_ARGS__)

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

/* ---- checksums ---- */

int t2__ckpt_entry_spans(const t2__ckpt *ck, int k, t2__ckpt_span *out)
{
    const t2__ckpt_entry *en = &ck->e[k];
    int n = 0;
    if (k == E_PARAMS || k == E_BUFFERS) {
        for (int i = 0; i < ck->ntensors; i++) {
            const t2_param_info *t = &ck->tensors[i].info;
            if (t->is_buffer != (k == E_BUFFERS)) continue;
            out[n++] = (t2__ckpt_span){en->data + t->offset * sizeof(float), NULL, t->size * sizeof(float), 0, i};
        }
        return n;
    }
    out[0] = (t2__ckpt_span){en->data, NULL, (size_t)en->size, 0, -1 - k};
    return 1;
}

int t2__ckpt_check_spans(const t2__ckpt *ck, const t2__ckpt_span *s, int n)
{
    uint32_t *crc = calloc((size_t)ck->ntensors + 1, sizeof *crc);
    unsigned char *have = calloc((size_t)ck->ntensors + 1, 1);
    int rc = T2_OK;
    if (!crc || !have) rc = t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
    for (int i = 0; i < n && !rc; i++) {
        if (s[i].tensor < 0) {
            int k = -1 - s[i].tensor;
            if (s[i].crc != ck->e[k].crc)
                rc = bad(ck, "entry %s fails its CRC-32C check (stored %08x, computed %08x): the file is corrupt",
                         t2__ckpt_entry_name[k], (unsigned)ck->e[k].crc, (unsigned)s[i].crc);
            continue;
        }
        const t2__ckpt_tensor *t = &ck->tensors[s[i].tensor];
        if (s[i].crc != t->crc)
            rc = bad(ck, "entry %s: tensor %s fails its CRC-32C check (stored %08x, computed %08x): the file is corrupt",
                     t2__ckpt_entry_name[t->info.is_buffer ? E_BUFFERS : E_PARAMS], t->info.name, (unsigned)t->crc,
                     (unsigned)s[i].crc);
        crc[s[i].tensor] = s[i].crc;
        have[s[i].tensor] = 1;
    }
    /* The tensors tile the array (checked with the metadata), so their CRCs cover every byte;
     * the entry's own CRC then follows without another pass. */
    for (int buf = 0; buf < 2 && !rc; buf++) {
        int k = buf ? E_BUFFERS : E_PARAMS, all = 1, any = 0, in_order = 1;
        uint32_t whole = 0;
        size_t next = 0;
        for (int i = 0; i < ck->ntensors; i++) {
            const t2_param_info *t = &ck->tensors[i].info;
            if (t->is_buffer != buf) continue;
            all &= have[i];
            any |= have[i];
            if (t->offset != next) in_order = 0;
            whole = t2__crc32c_combine(whole, crc[i], (uint64_t)t->size * sizeof(float));
            next = t->offset + t->size;
        }
        if (any && all && in_order && whole != ck->e[k].crc)
            rc = bad(ck, "entry %s: CRC-32C of the entry (%08x) disagrees with metadata.json (%08x)",
                     t2__ckpt_entry_name[k], (unsigned)whole, (unsigned)ck->e[k].crc);
    }
    free(crc);
    free(have);
    return rc;
}

int t2__ckpt_verify(const t2__ckpt *ck, unsigned entries)
{
    t2__ckpt_span *s = malloc(((size_t)ck->ntensors + E_COUNT) * sizeof *s);
    if (!s) return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
    int n = 0;
    for (int k = 0; k < E_COUNT; k++)
        if (k != E_META && ck->e[k].declared && (entries >> k & 1)) n += t2__ckpt_entry_spans(ck, k, s + n);
    int rc = t2__ckpt_spans(s, n, 1);
    if (!rc) rc = t2__ckpt_check_spans(ck, s, n);
    free(s);
    return rc;
}

/* Checks every entry in one pass over the bytes; a lazy checkpoint leaves the float arrays to
 * restore, which checks them as it copies them. */
static int verify_all(const t2__ckpt *ck)
{
    unsigned floats = 1u << E_PARAMS | 1u << E_BUFFERS | 1u << E_OPT;
    return t2__ckpt_verify(ck, ck->lazy ? ~floats : ~0u);
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
static int parse(t2__ckpt **out, const char *name, unsigned char *file, size_t file_len, int mapped, int lazy)
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
    ck->lazy = lazy;
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
        }
    }
    for (int k = 0; k < E_COUNT; k++)
        if ((k == E_META || ck->e[k].declared) && !seen[k]) {
            rc = bad(ck, "missing entry %s", t2__ckpt_entry_name[k]);
            goto fail;
        }
    if ((rc = verify_all(ck))) goto fail;
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
    return parse(out, name, copy, len, 0, 0);
}

static int open_file(t2__ckpt **out, const char *path, int lazy)
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
            return parse(out, path, m, len, 1, lazy);
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
    return parse(out, path, buf, len, 0, lazy);
fail:
    close(fd);
    free(buf);
    return rc;
}

int t2__ckpt_open(t2__ckpt **out, const char *path) { return open_file(out, path, 0); }

int t2__ckpt_open_for_restore(t2__ckpt **out, const char *path) { return open_file(out, path, 1); }
