/* ckpt_read.c — reading and validating a checkpoint archive.
 *
 * libarchive parses the archive (tar only; gzip or zstd filters) from the file's bytes in memory,
 * or, for t2__ckpt_stream_params, from the file in blocks. Nothing is ever written to disk, so
 * hostile names or links cannot escape anywhere; they are still rejected, with everything else a
 * writer of this format never produces, so that a damaged or foreign file fails loudly at open
 * rather than oddly at restore.
 *
 * The budget. A compressed archive can claim and hold far more than it costs on disk: 135 KB of
 * zstd decode to 4 GiB of zeros. So metadata.json, the first entry (16 MiB at most), is read and
 * checked before any other entry's data is decoded, and the sizes it declares must fit:
 *   - params.bin and buffers.bin are the tensor table's sizes, optimizer.bin 0, 1 or 2 times
 *     params.bin (ckpt_meta.c); user_state.bin at most T2__CKPT_USER_BASE (64 MiB) plus 4 times
 *     params.bin (room for, say, an average of the weights); everything else (RNGs, loader,
 *     schedule, hparams, strings) lives inside metadata.json and shares its 16 MiB;
 *   - all entries together at most T2__CKPT_MAX_RATIO (1032) times the file's size, or
 *     T2__CKPT_RATIO_FLOOR (64 MiB) for small files. 1032:1 is deflate's own ceiling, so no gzip
 *     checkpoint can exceed it; float weights compress by a few percent, so a real zstd one never
 *     comes near it either, except a model that is almost all zeros, which the floor lets through
 *     up to 16 M parameters. A file that claims more is refused naming its largest entry and the
 *     limit, at the cost of reading metadata.json only;
 *   - where the model is known (t2__ckpt_open_info / t2__ckpt_open_for_restore, then
 *     t2__ckpt_restore) the entries are not read at open at all: restore first checks the tensor
 *     table and optimizer against the live model, so what is then decoded is bounded by the
 *     model's own size.
 * Decoding is a stream checked against those sizes: a block past an entry's declared end is an
 * error before it is stored, and entries that are not kept are checksummed as they pass and
 * dropped.
 *
 * The file is mapped (MAP_POPULATE, read-only) rather than read: for a file in the page cache
 * that costs a tenth of a millisecond, where read(2) into fresh memory costs the kernel zeroing
 * and faulting ~10 MB first (3-4x the copy itself). For an uncompressed archive libarchive then
 * hands out each entry as one block pointing into the mapping: the entries alias it (tar data
 * is 512-byte aligned, so the floats are aligned) and opening costs the checksums only.
 * Compressed entries are copied out (into buffers of the size checked above) and the mapping is
 * dropped once every entry is read. The one condition: nobody truncates the file in place while
 * it is open (a mapped page past the new end faults); t2exp never does (checkpoints are replaced
 * by rename, exports never write over their checkpoint), and a copy with cp should not target a
 * checkpoint being restored. Where mmap fails the file is read instead.
 *
 * Paths are opened with O_NONBLOCK and refused unless they are regular files, so a FIFO named as
 * a checkpoint is an error rather than an open(2) that waits for a writer forever. */
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

#define STREAM_BLOCK ((size_t)1 << 20) /* read size when streaming from the file */

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

static void close_archive(t2__ckpt *ck)
{
    if (ck->ar) archive_read_free(ck->ar);
    ck->ar = NULL;
    if (ck->fd >= 0) close(ck->fd);
    ck->fd = -1;
}

void t2__ckpt_free(t2__ckpt *ck)
{
    if (!ck) return;
    close_archive(ck);
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

enum { KEEP, STREAM, SKIP }; /* what read_entry does with an entry's bytes */

/* Reads entry k's `size` bytes. KEEP: aliases the file's bytes when libarchive delivers the
 * entry as one block inside them, copies otherwise. STREAM (to sink) and SKIP: checksums the
 * bytes as they pass and compares with metadata.json. Either way no block may go past size,
 * which the budget has bounded, so this never holds more than was checked. */
static int read_entry(t2__ckpt *ck, int k, uint64_t size, int how, t2__ckpt_sink sink, void *sctx)
{
    struct archive *a = ck->ar;
    t2__ckpt_entry *en = &ck->e[k];
    const char *name = t2__ckpt_entry_name[k];
    uint64_t pos = 0;
    uint32_t crc = 0;
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
        if (how != KEEP) {
            crc = t2__crc32c(crc, blk, len);
            int rc = how == STREAM && sink ? sink(sctx, blk, len) : T2_OK;
            if (rc) return rc;
            pos += len;
            continue;
        }
        uintptr_t b = (uintptr_t)blk, f = (uintptr_t)ck->file;
        if (pos == 0 && len == size && ck->file && b >= f && b - f <= ck->file_len && len <= ck->file_len - (b - f)) {
            en->data = blk;
            pos = len;
            continue;
        }
        if (!en->own && !(en->own = malloc((size_t)size)))
            return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory for entry %s (%llu bytes)", ck->path, name,
                             (unsigned long long)size);
        memcpy(en->own + pos, blk, len);
        en->data = en->own;
        pos += len;
    }
    if (pos != size)
        return bad(ck, "entry %s: truncated archive: %llu of %llu bytes", name, (unsigned long long)pos,
                   (unsigned long long)size);
    if (how != KEEP && crc != en->crc)
        return bad(ck, "entry %s fails its CRC-32C check (stored %08x, computed %08x): the file is corrupt", name,
                   (unsigned)en->crc, (unsigned)crc);
    return T2_OK;
}

int t2__ckpt_have(const t2__ckpt *ck, int k)
{
    const t2__ckpt_entry *en = &ck->e[k];
    if (!en->declared || en->size == 0 || en->data) return T2_OK;
    return t2_seterr(T2_ESTATE, "checkpoint %s: entry %s is not in memory (%s)", ck->path, t2__ckpt_entry_name[k],
                     ck->failed ? "reading the entries failed" : ck->ar ? "it was opened without its entries: restore reads them"
                                                                         : "an earlier restore without it skipped it");
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

static int check_header(t2__ckpt *ck, struct archive_entry *e, int first, int *kout, uint64_t *size)
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
    if (ck->seen >> k & 1) return bad(ck, "duplicate entry %s", name);
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

/* The next header, checked; *k = -1 at the end of the archive. */
static int next_entry(t2__ckpt *ck, int *k, uint64_t *size)
{
    struct archive_entry *e;
    int r = archive_read_next_header(ck->ar, &e);
    *k = -1;
    if (r == ARCHIVE_EOF) return T2_OK;
    if (r != ARCHIVE_OK)
        return bad(ck, "truncated or corrupt archive %s%s: %s", ck->last < 0 ? "at the start" : "after entry ",
                   ck->last < 0 ? "" : t2__ckpt_entry_name[ck->last],
                   archive_error_string(ck->ar) ? archive_error_string(ck->ar) : "read error");
    return check_header(ck, e, ck->last < 0, k, size);
}

/* The sizes metadata.json declares against the budget (see the top of the file), before any of
 * those bytes is decoded. */
static int check_budget(const t2__ckpt *ck, uint64_t meta_len)
{
    const t2__ckpt_entry *u = &ck->e[E_USER];
    uint64_t ucap = T2__CKPT_USER_BASE + 4 * ck->e[E_PARAMS].size; /* sizes are <= 2^36: no overflow */
    if (u->declared && u->size > ucap)
        return bad(ck, "entry user_state.bin declares %llu bytes, more than its limit of %llu (64 MiB plus 4 times "
                       "params.bin)", (unsigned long long)u->size, (unsigned long long)ucap);
    uint64_t total = meta_len, limit = (uint64_t)T2__CKPT_MAX_RATIO * ck->file_len;
    if (limit < T2__CKPT_RATIO_FLOOR) limit = T2__CKPT_RATIO_FLOOR;
    int big = E_PARAMS;
    for (int k = E_PARAMS; k < E_COUNT; k++) {
        if (!ck->e[k].declared) continue;
        total += ck->e[k].size;
        if (ck->e[k].size > ck->e[big].size) big = k;
    }
    if (total > limit)
        return bad(ck, "entry %s declares %llu bytes (%llu for all entries), more than a %zu-byte archive may expand "
                       "to: %llu bytes (%u times its size, at least %llu MiB)",
                   t2__ckpt_entry_name[big], (unsigned long long)ck->e[big].size, (unsigned long long)total,
                   ck->file_len, (unsigned long long)limit, T2__CKPT_MAX_RATIO,
                   (unsigned long long)(T2__CKPT_RATIO_FLOOR >> 20));
    return T2_OK;
}

/* metadata.json: the first entry, parsed, and the budget checked. */
static int read_meta(t2__ckpt *ck)
{
    int k, rc;
    uint64_t size = 0;
    if ((rc = next_entry(ck, &k, &size))) return rc;
    if (k < 0) return bad(ck, "missing entry %s", t2__ckpt_entry_name[E_META]);
    if ((rc = read_entry(ck, k, size, KEEP, NULL, NULL))) return rc;
    ck->seen |= 1u << k;
    ck->last = k;
    rc = t2__ckpt_meta_from_json(ck, size ? (const char *)ck->e[k].data : "", (size_t)size);
    free(ck->e[k].own); /* parsed: the text is not needed any more */
    ck->e[k].own = NULL;
    ck->e[k].data = NULL;
    return rc ? rc : check_budget(ck, size);
}

/* The entries after metadata.json: kept (bit set in keep), streamed to sink (bit set in stream) or
 * checksummed and dropped; then the kept ones' checksums (a lazy checkpoint leaves the float
 * arrays to restore, which checks them as it copies them). */
static int read_rest(t2__ckpt *ck, unsigned keep, unsigned stream, t2__ckpt_sink sink, void *sctx)
{
    int rc = T2_OK;
    for (;;) {
        int k;
        uint64_t size = 0;
        if ((rc = next_entry(ck, &k, &size))) return rc;
        if (k < 0) break;
        int how = keep >> k & 1 ? KEEP : stream >> k & 1 ? STREAM : SKIP;
        /* The streamed entries reach the sink in the writer's order, params.bin first (export's
         * offsets say so): an archive that has them the other way round is refused. */
        if (how == STREAM && k == E_BUFFERS && (stream >> E_PARAMS & 1) && !(ck->seen >> E_PARAMS & 1))
            return bad(ck, "entry buffers.bin comes before params.bin");
        if ((rc = read_entry(ck, k, size, how, sink, sctx))) return rc;
        ck->seen |= 1u << k;
        ck->last = k;
    }
    for (int k = 0; k < E_COUNT; k++)
        if (ck->e[k].declared && !(ck->seen >> k & 1)) return bad(ck, "missing entry %s", t2__ckpt_entry_name[k]);
    unsigned floats = 1u << E_PARAMS | 1u << E_BUFFERS | 1u << E_OPT;
    return t2__ckpt_verify(ck, keep & ~(1u << E_META) & (ck->lazy ? ~floats : ~0u));
}

static int finish(t2__ckpt *ck, unsigned keep, unsigned stream, t2__ckpt_sink sink, void *sctx)
{
    int rc = read_rest(ck, keep, stream, sink, sctx);
    close_archive(ck);
    if (rc) {
        ck->failed = 1;
        return rc;
    }
    int aliased = 0;
    for (int k = 0; k < E_COUNT; k++) aliased |= ck->e[k].data && !ck->e[k].own;
    if (!aliased) release_file(ck);
    return T2_OK;
}

int t2__ckpt_read_entries(t2__ckpt *ck, unsigned keep)
{
    if (ck->failed) return t2_seterr(T2_ESTATE, "checkpoint %s: reading its entries failed before", ck->path);
    return ck->ar ? finish(ck, keep, 0, NULL, NULL) : T2_OK;
}

enum { ALL, INFO, STREAM_PARAMS }; /* what an open reads */

/* Takes ownership of file (file_len bytes, mmap'd when mapped, malloc'd otherwise) or of fd
 * (file NULL: streamed in blocks). Reads metadata.json and, for ALL, the entries. */
static int begin(t2__ckpt **out, const char *name, unsigned char *file, size_t file_len, int mapped, int fd,
                 int lazy, int what, t2__ckpt_sink sink, void *sctx)
{
    int rc = T2_OK;
    t2__ckpt *ck = calloc(1, sizeof *ck);
    if (!ck || !(ck->path = strdup(name))) {
        if (mapped) munmap(file, file_len);
        else free(file);
        if (fd >= 0) close(fd);
        free(ck);
        return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", name);
    }
    ck->file = file;
    ck->file_len = file_len;
    ck->file_mapped = mapped ? file_len : 0;
    ck->fd = fd;
    ck->lazy = lazy;
    ck->last = -1;
    struct archive *a = archive_read_new();
    if (!(ck->ar = a)) {
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
    if ((fd >= 0 ? archive_read_open_fd(a, fd, STREAM_BLOCK) : archive_read_open_memory(a, file, file_len)) !=
        ARCHIVE_OK) {
        rc = bad(ck, "not a tar archive, or truncated: %s", archive_error_string(a) ? archive_error_string(a) : "unreadable");
        goto fail;
    }
    if ((rc = read_meta(ck))) goto fail;
    if (what == ALL) rc = finish(ck, ~0u, 0, NULL, NULL);
    else if (what == STREAM_PARAMS) rc = finish(ck, 0, 1u << E_PARAMS | 1u << E_BUFFERS, sink, sctx);
    if (rc) goto fail;
    *out = ck;
    return T2_OK;
fail:
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
    return begin(out, name, copy, len, 0, -1, 0, ALL, NULL, NULL);
}

static const char *file_kind(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "an unknown kind";
}

/* Opens path for reading without blocking (a FIFO would wait for a writer in open(2)) and
 * refuses anything but a regular file within the size cap; the descriptor is blocking again. */
static int open_regular(const char *path, int *fd_out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        return t2_seterr(e == ENOENT ? T2_ENOTFOUND : T2_EIO, "checkpoint %s: cannot open: %s", path, strerror(e));
    }
    struct stat st;
    int rc = T2_OK, fl;
    if (fstat(fd, &st) != 0) rc = t2_seterr(T2_EIO, "checkpoint %s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = t2_seterr(T2_EINVAL, "checkpoint %s: not a regular file (%s)", path, file_kind(st.st_mode));
    else if ((uint64_t)st.st_size > T2__CKPT_MAX_ENTRY)
        rc = t2_seterr(T2_EFORMAT, "checkpoint %s: %lld bytes is more than the %llu-byte limit", path,
                       (long long)st.st_size, (unsigned long long)T2__CKPT_MAX_ENTRY);
    else if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
        rc = t2_seterr(T2_EIO, "checkpoint %s: fcntl: %s", path, strerror(errno));
    if (rc) {
        close(fd);
        return rc;
    }
    *fd_out = fd;
    *len = (size_t)st.st_size;
    return T2_OK;
}

static int open_file(t2__ckpt **out, const char *path, int lazy, int what)
{
    if (!out) return t2_seterr(T2_EINVAL, "t2__ckpt_open: NULL argument");
    *out = NULL;
    if (!path) return t2_seterr(T2_EINVAL, "t2__ckpt_open: NULL path");
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return t2_seterr(T2_EUNSUPPORTED, "checkpoint %s: reading on a big-endian host is not supported", path);
#endif
    int fd = -1;
    size_t len = 0, got = 0;
    int rc = open_regular(path, &fd, &len);
    if (rc) return rc;
    if (len > 0) {
        void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (m != MAP_FAILED) {
            close(fd);
            return begin(out, path, m, len, 1, -1, lazy, what, NULL, NULL);
        }
    }
    /* Aligned for the entries that will alias it (no zeroing: every byte is read over). */
    void *p = NULL;
    unsigned char *buf = NULL;
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
    return begin(out, path, buf, len, 0, -1, lazy, what, NULL, NULL);
fail:
    close(fd);
    free(buf);
    return rc;
}

int t2__ckpt_open(t2__ckpt **out, const char *path) { return open_file(out, path, 0, ALL); }

int t2__ckpt_open_info(t2__ckpt **out, const char *path) { return open_file(out, path, 0, INFO); }

int t2__ckpt_open_for_restore(t2__ckpt **out, const char *path) { return open_file(out, path, 1, INFO); }

int t2__ckpt_stream_params(t2__ckpt **out, const char *path, t2__ckpt_sink sink, void *ctx)
{
    if (!out || !path) return t2_seterr(T2_EINVAL, "t2__ckpt_stream_params: NULL argument");
    *out = NULL;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return t2_seterr(T2_EUNSUPPORTED, "checkpoint %s: reading on a big-endian host is not supported", path);
#endif
    int fd = -1;
    size_t len = 0;
    int rc = open_regular(path, &fd, &len);
    return rc ? rc : begin(out, path, NULL, len, 0, fd, 0, STREAM_PARAMS, sink, ctx);
}
