/* ckpt_write.c — writing a checkpoint archive atomically.
 *
 * Speed: each flat array goes to libarchive in one call, and libarchive's output blocking is
 * off, so every array reaches write(2) in one piece, straight from the net's or optimizer's
 * memory; uncompressed, the checksums are computed on another core meanwhile, and
 * metadata.json, which holds them and comes first, is rewritten in place at the end. Safety: the bytes go to "<path>.tmp-<pid>-<n>" in the same directory,
 * which is fsynced, closed, renamed over path, and the directory fsynced; any failure unlinks
 * the temporary file, so path only ever holds a complete archive (the old one or the new one). */
#define _POSIX_C_SOURCE 200809L
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "ckpt_internal.h"
#include "crc32c.h"
#include "parallel.h"
#include "t2exp.h"

int t2__ckpt_compression_parse(const char *s, t2__ckpt_compression *out)
{
    if (!s || !out) return t2_seterr(T2_EINVAL, "checkpoint compression: NULL argument");
    if (!strcmp(s, "none")) *out = T2__CKPT_COMPRESS_NONE;
    else if (!strcmp(s, "gzip")) *out = T2__CKPT_COMPRESS_GZIP;
    else if (!strcmp(s, "zstd")) *out = T2__CKPT_COMPRESS_ZSTD;
    else return t2_seterr(T2_EINVAL, "checkpoint compression \"%s\" is not none, gzip or zstd", s);
    return T2_OK;
}

const char *t2__ckpt_extension(t2__ckpt_compression comp)
{
    switch (comp) {
    case T2__CKPT_COMPRESS_GZIP: return ".tar.gz";
    case T2__CKPT_COMPRESS_ZSTD: return ".tar.zst";
    default: return ".tar";
    }
}

int t2__ckpt_path(char *buf, size_t len, const char *dir, const char *uuid, t2__ckpt_compression comp)
{
    if (!buf || !dir || !uuid) return t2_seterr(T2_EINVAL, "checkpoint path: NULL argument");
    int n = snprintf(buf, len, "%s/%s%s", dir, uuid, t2__ckpt_extension(comp));
    if (n < 0 || (size_t)n >= len)
        return t2_seterr(T2_EINVAL, "checkpoint path: \"%s/%s\" does not fit in %zu bytes", dir, uuid, len);
    return T2_OK;
}

/* ---------- gathering the contents ---------- */

/* The net's tensor table, then one entry per raw buffer, placed after the net's parameters. */
static int gather_tensors(t2__ckpt *ck, t2_net *net, const t2__ckpt_raw *raw, int nraw, size_t np)
{
    int nt = net ? t2_net_num_tensors(net) : 0;
    if (nt < 0) return t2_seterr(T2_EINVAL, "checkpoint %s: the net has no tensor table", ck->path);
    if (nt + nraw && !(ck->tensors = calloc((size_t)(nt + nraw), sizeof *ck->tensors)))
        return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
    for (int i = 0; i < nt; i++) {
        int rc = t2_net_tensor_info(net, i, &ck->tensors[i].info);
        if (rc) return rc;
    }
    size_t off = np;
    for (int j = 0; j < nraw; j++) {
        t2_param_info *t = &ck->tensors[nt + j].info;
        snprintf(t->name, sizeof t->name, "%s", raw[j].name);
        t->ndim = 1;
        t->shape[0] = (int)raw[j].n;
        t->offset = off;
        t->size = raw[j].n;
        off += raw[j].n;
    }
    ck->ntensors = nt + nraw;
    return T2_OK;
}

/* Raw buffers are checked here too (the runner checked them at wrap time): a name the reader
 * would refuse, or a duplicate, must fail now rather than in a checkpoint that cannot be read. */
static int check_raw(const t2__ckpt *ck, t2_net *net, const t2__ckpt_raw *raw, int nraw)
{
    if (nraw < 0 || (nraw && !raw)) return t2_seterr(T2_EINVAL, "checkpoint %s: bad raw buffer list", ck->path);
    for (int j = 0; j < nraw; j++) {
        const char *name = raw[j].name;
        if (!name || !t2__ckpt_name_ok(name) || strlen(name) >= sizeof(((t2_param_info *)0)->name))
            return t2_seterr(T2_EINVAL, "checkpoint %s: raw buffer name \"%s\" must be 1..47 printable characters",
                             ck->path, name ? name : "(null)");
        if (!raw[j].data || raw[j].n == 0 || raw[j].n > INT_MAX)
            return t2_seterr(T2_EINVAL, "checkpoint %s: raw buffer %s has no data or %zu floats", ck->path, name,
                             raw[j].n);
        for (int k = 0; k < j; k++)
            if (!strcmp(raw[k].name, name))
                return t2_seterr(T2_EINVAL, "checkpoint %s: raw buffer %s given twice", ck->path, name);
        for (int i = 0; net && i < t2_net_num_tensors(net); i++) {
            t2_param_info t;
            if (t2_net_tensor_info(net, i, &t) == T2_OK && !strcmp(t.name, name))
                return t2_seterr(T2_EINVAL, "checkpoint %s: raw buffer %s has the name of a net tensor", ck->path, name);
        }
    }
    return T2_OK;
}

/* The optimizers: their kinds, sizes (together the parameters') and states, gathered into one
 * optimizer.bin (zero-copy for a single one). */
static int gather_opts(t2__ckpt *ck, t2_optim *const *opts, int nopts, size_t np)
{
    if (nopts > T2__CKPT_MAX_OPTS)
        return t2_seterr(T2_EINVAL, "checkpoint %s: %d optimizers (at most %d)", ck->path, nopts, T2__CKPT_MAX_OPTS);
    size_t covered = 0, floats = 0;
    for (int i = 0; i < nopts; i++) {
        struct t2__ckpt_opt *o = &ck->opt[i];
        if (!opts[i]) return t2_seterr(T2_EINVAL, "checkpoint %s: optimizer %d is NULL", ck->path, i);
        t2_optim_state(opts[i], &o->floats);
        o->kind = (int)t2_optim_get_kind(opts[i]);
        o->size = t2_optim_size(opts[i]);
        o->steps = t2_optim_step_count(opts[i]);
        o->lr = t2_optim_lr(opts[i]);
        o->has_lr = 1;
        if (o->kind < T2_OPTIM_SGD || o->kind > T2_OPTIM_ADAMW)
            return t2_seterr(T2_EINVAL, "checkpoint %s: unknown optimizer kind %d", ck->path, o->kind);
        covered += o->size;
        floats += o->floats;
    }
    if (covered != np)
        return t2_seterr(T2_EINVAL, "checkpoint %s: the optimizer%s for %zu parameters but the model has %zu",
                         ck->path, nopts > 1 ? "s are" : " is", covered, np);
    ck->has_opt = 1;
    ck->nopt = nopts;
    ck->opt_floats = floats;
    ck->e[E_OPT].declared = 1;
    ck->e[E_OPT].size = (uint64_t)floats * sizeof(float);
    if (nopts == 1 || floats == 0) {
        ck->e[E_OPT].data = floats ? (const unsigned char *)t2_optim_state(opts[0], NULL) : NULL;
        return T2_OK;
    }
    if (!(ck->staged[1] = malloc(floats * sizeof(float))))
        return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
    size_t at = 0;
    for (int i = 0; i < nopts; i++) {
        size_t ns = 0;
        const float *st = t2_optim_state(opts[i], &ns);
        if (ns) memcpy(ck->staged[1] + at, st, ns * sizeof(float));
        at += ns;
    }
    ck->e[E_OPT].data = (const unsigned char *)ck->staged[1];
    return T2_OK;
}

/* ---------- checksums ---------- */

/* The spans to checksum: each tensor (its CRC goes in the metadata), the optimizer state and the
 * user state; the params/buffers entry CRCs then follow from the tensors' when the tensors tile
 * their array in order (they do in t2_net's table), else those arrays are spans of their own. */
static int tiled(const t2__ckpt *ck, int buf)
{
    size_t next = 0;
    for (int i = 0; i < ck->ntensors; i++) {
        const t2_param_info *t = &ck->tensors[i].info;
        if (t->is_buffer != buf) continue;
        if (t->offset != next) return 0;
        next = t->offset + t->size;
    }
    return next == (buf ? ck->num_buffers : ck->num_params);
}

static int crc_spans(const t2__ckpt *ck, t2__ckpt_span **out, int *n)
{
    t2__ckpt_span *s = malloc(((size_t)ck->ntensors + E_COUNT) * sizeof *s);
    if (!s) return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
    int k = 0;
    for (int i = 0; i < ck->ntensors; i++) {
        const t2_param_info *t = &ck->tensors[i].info;
        const t2__ckpt_entry *en = &ck->e[t->is_buffer ? E_BUFFERS : E_PARAMS];
        s[k++] = (t2__ckpt_span){en->data + t->offset * sizeof(float), NULL, t->size * sizeof(float), 0, i};
    }
    for (int e = E_PARAMS; e < E_COUNT; e++) {
        if (!ck->e[e].declared || ((e == E_PARAMS || e == E_BUFFERS) && tiled(ck, e == E_BUFFERS))) continue;
        s[k++] = (t2__ckpt_span){ck->e[e].data, NULL, (size_t)ck->e[e].size, 0, -1 - e};
    }
    *out = s;
    *n = k;
    return T2_OK;
}

static void set_crcs(t2__ckpt *ck, const t2__ckpt_span *s, int n)
{
    for (int i = 0; i < n; i++) {
        if (s[i].tensor >= 0) ck->tensors[s[i].tensor].crc = s[i].crc;
        else ck->e[-1 - s[i].tensor].crc = s[i].crc;
    }
    for (int buf = 0; buf < 2; buf++) {
        if (!tiled(ck, buf)) continue;
        uint32_t crc = 0;
        for (int i = 0; i < ck->ntensors; i++)
            if (ck->tensors[i].info.is_buffer == buf)
                crc = t2__crc32c_combine(crc, ck->tensors[i].crc, (uint64_t)ck->tensors[i].info.size * sizeof(float));
        ck->e[buf ? E_BUFFERS : E_PARAMS].crc = crc;
    }
}

/* Before the checksums are known the metadata carries the widest CRC there is, so the final
 * document is never longer than the one whose room the archive reserved. */
static void set_placeholder_crcs(t2__ckpt *ck)
{
    for (int i = 0; i < ck->ntensors; i++) ck->tensors[i].crc = UINT32_MAX;
    for (int e = 0; e < E_COUNT; e++) ck->e[e].crc = UINT32_MAX;
}

static int gather_named(t2__ckpt *ck, const t2__ckpt_contents *c)
{
    if (c->n_rngs < 0 || c->n_strings < 0 || (c->n_rngs && !c->rngs) || (c->n_strings && !c->strings))
        return t2_seterr(T2_EINVAL, "checkpoint %s: negative count or NULL array of rngs/strings", ck->path);
    if (c->n_rngs && !(ck->rngs = calloc((size_t)c->n_rngs, sizeof *ck->rngs)))
        return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
    for (int i = 0; i < c->n_rngs; i++) {
        const char *name = c->rngs[i].name;
        if (!t2__ckpt_name_ok(name))
            return t2_seterr(T2_EINVAL, "checkpoint %s: rng name \"%s\" must be 1..%d printable characters", ck->path,
                             name ? name : "(null)", T2__CKPT_MAX_NAME);
        for (int j = 0; j < i; j++)
            if (!strcmp(ck->rngs[j].name, name))
                return t2_seterr(T2_EINVAL, "checkpoint %s: rng \"%s\" given twice", ck->path, name);
        strcpy(ck->rngs[i].name, name);
        ck->rngs[i].state = c->rngs[i].state;
        ck->nrngs = i + 1;
    }
    if (c->n_strings) {
        ck->keys = calloc((size_t)c->n_strings, sizeof *ck->keys);
        ck->values = calloc((size_t)c->n_strings, sizeof *ck->values);
        if (!ck->keys || !ck->values) return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
    }
    for (int i = 0; i < c->n_strings; i++) {
        const t2__ckpt_kv *kv = &c->strings[i];
        if (!t2__ckpt_name_ok(kv->key) || !kv->value)
            return t2_seterr(T2_EINVAL, "checkpoint %s: string key \"%s\" must be 1..%d printable characters with a value",
                             ck->path, kv->key ? kv->key : "(null)", T2__CKPT_MAX_NAME);
        for (int j = 0; j < i; j++)
            if (!strcmp(ck->keys[j], kv->key))
                return t2_seterr(T2_EINVAL, "checkpoint %s: string key \"%s\" given twice", ck->path, kv->key);
        /* Borrowed: the writer's ck never outlives the call. */
        ck->keys[i] = (char *)kv->key;
        ck->values[i] = (char *)kv->value;
        ck->nstrings = i + 1;
    }
    return T2_OK;
}

static int gather(t2__ckpt *ck, const t2__ckpt_contents *c)
{
    int rc;
    size_t np = 0, nb = 0, nraw_floats = 0;
    const float *params = c->net ? t2_net_params(c->net, &np) : NULL;
    const float *buffers = c->net ? t2_net_buffers(c->net, &nb) : NULL;
    if (c->net && (!params || np == 0))
        return t2_seterr(T2_EINVAL, "checkpoint %s: the net is not initialised", ck->path);
    if ((rc = check_raw(ck, c->net, c->raw, c->nraw))) return rc;
    for (int j = 0; j < c->nraw; j++) nraw_floats += c->raw[j].n;
    ck->format_version = T2__CKPT_FORMAT_VERSION;
    snprintf(ck->version, sizeof ck->version, "%s", t2_version());
    ck->created = (int64_t)time(NULL);
    ck->experiment_id = c->experiment_id;
    ck->trial_id = c->trial_id;
    if (c->batches_trained < 0 || c->epoch < 0)
        return t2_seterr(T2_EINVAL, "checkpoint %s: negative batches_trained or epoch", ck->path);
    ck->batches = c->batches_trained;
    ck->epoch = c->epoch;
    ck->hparams_json = (char *)c->hparams_json; /* borrowed; checked when the metadata is built */
    ck->num_params = np + nraw_floats;
    ck->num_buffers = nb;
    ck->e[E_META].declared = ck->e[E_PARAMS].declared = ck->e[E_BUFFERS].declared = 1;
    if (c->nraw) {
        /* params.bin is one array: the net's parameters, then each raw buffer. One copy of the
         * parameters per checkpoint is the price of keeping the format (and its readers) as is. */
        if (!(ck->staged[0] = malloc(ck->num_params * sizeof(float))))
            return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
        if (np) memcpy(ck->staged[0], params, np * sizeof(float));
        size_t at = np;
        for (int j = 0; j < c->nraw; j++) {
            memcpy(ck->staged[0] + at, c->raw[j].data, c->raw[j].n * sizeof(float));
            at += c->raw[j].n;
        }
        params = ck->staged[0];
    }
    ck->e[E_PARAMS].data = (const unsigned char *)params;
    ck->e[E_PARAMS].size = (uint64_t)ck->num_params * sizeof(float);
    ck->e[E_BUFFERS].data = nb ? (const unsigned char *)buffers : NULL;
    ck->e[E_BUFFERS].size = (uint64_t)nb * sizeof(float);
    if ((rc = gather_tensors(ck, c->net, c->raw, c->nraw, np))) return rc;

    if (c->nopts < 0 || (c->nopts && !c->opts))
        return t2_seterr(T2_EINVAL, "checkpoint %s: bad optimizer list", ck->path);
    if (c->nopts) rc = gather_opts(ck, c->opts, c->nopts, ck->num_params);
    else if (c->opt) rc = gather_opts(ck, &c->opt, 1, ck->num_params);
    if (rc) return rc;
    if (c->sched) {
        if ((rc = t2_lr_schedule_get_state(c->sched, &ck->lr))) return rc;
        ck->has_lr = 1;
    }
    if (c->loader) {
        if (c->loader->epoch < 0 || c->loader->batch < 0)
            return t2_seterr(T2_EINVAL, "checkpoint %s: negative loader position", ck->path);
        ck->loader = *c->loader;
        ck->has_loader = 1;
    }
    if (c->user_state) {
        /* The reader's limit (ckpt_read.c): refused here, where the trial can be told, rather
         * than in a checkpoint that could never be restored. */
        uint64_t cap = T2__CKPT_USER_BASE + 4 * ck->e[E_PARAMS].size;
        if ((uint64_t)c->user_state_len > cap)
            return t2_seterr(T2_EINVAL, "checkpoint %s: the user state (save_state) is %zu bytes, more than the "
                             "limit of %llu (64 MiB plus 4 times the parameters' bytes)",
                             ck->path, c->user_state_len, (unsigned long long)cap);
        ck->e[E_USER].declared = 1;
        ck->e[E_USER].data = c->user_state_len ? c->user_state : NULL;
        ck->e[E_USER].size = c->user_state_len;
    }
    if ((rc = gather_named(ck, c))) return rc;
    if (c->uuid) {
        if (strlen(c->uuid) != T2__UUID_LEN)
            return t2_seterr(T2_EINVAL, "checkpoint %s: uuid \"%s\" is not %d characters", ck->path, c->uuid,
                             T2__UUID_LEN);
        strcpy(ck->uuid, c->uuid);
    } else if ((rc = t2__uuid_v4(ck->uuid))) {
        return rc;
    }
    return T2_OK;
}

/* ---------- the file ---------- */

typedef struct wstate {
    int fd;
    int err;        /* errno of the first failed write */
    uint64_t bytes;
    uint64_t meta_at, meta_end; /* where metadata.json's bytes went */
} wstate;

static la_ssize_t write_cb(struct archive *a, void *ud, const void *buf, size_t n)
{
    wstate *w = ud;
    const char *p = buf;
    size_t left = n;
    while (left) {
        ssize_t r = write(w->fd, p, left > ((size_t)1 << 30) ? (size_t)1 << 30 : left);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            w->err = r < 0 ? errno : EIO;
            archive_set_error(a, w->err, "%s", strerror(w->err));
            return -1;
        }
        p += r;
        left -= (size_t)r;
    }
    w->bytes += n;
    return (la_ssize_t)n;
}

static int io_error(const t2__ckpt *ck, const char *what, const char *file, int err)
{
    return t2_seterr(T2_EIO, "checkpoint %s: %s %s: %s", ck->path, what, file, strerror(err));
}

/* libarchive's failure: the write's errno when a write failed, else libarchive's own text. */
static int archive_fail(const t2__ckpt *ck, struct archive *a, const wstate *w, const char *tmp)
{
    if (w->err) return io_error(ck, "writing", tmp, w->err);
    return t2_seterr(T2_EIO, "checkpoint %s: writing %s: %s", ck->path, tmp,
                     archive_error_string(a) ? archive_error_string(a) : "libarchive failed");
}

static int write_archive(const t2__ckpt *ck, const char *meta, size_t meta_len, t2__ckpt_compression comp,
                         wstate *w, const char *tmp)
{
    int rc = T2_OK;
    struct archive *a = archive_write_new();
    struct archive_entry *e = archive_entry_new();
    if (!a || !e) {
        rc = t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
        goto out;
    }
    int r = archive_write_set_format_pax_restricted(a);
    if (r == ARCHIVE_OK && comp == T2__CKPT_COMPRESS_GZIP) {
        r = archive_write_add_filter_gzip(a);
        /* Float weights barely compress; a higher level costs much more time for a few percent. */
        if (r == ARCHIVE_OK) r = archive_write_set_filter_option(a, "gzip", "compression-level", "1");
    } else if (r == ARCHIVE_OK && comp == T2__CKPT_COMPRESS_ZSTD) {
        r = archive_write_add_filter_zstd(a);
        if (r != ARCHIVE_OK) {
            rc = t2_seterr(T2_EUNSUPPORTED, "checkpoint %s: this libarchive cannot write zstd: %s", ck->path,
                           archive_error_string(a));
            goto out;
        }
    }
    /* Block size 0: no re-blocking into 10 KiB records, each buffer goes to write() as given. */
    if (r == ARCHIVE_OK) r = archive_write_set_bytes_per_block(a, 0);
    if (r == ARCHIVE_OK) r = archive_write_open(a, w, NULL, write_cb, NULL);
    if (r != ARCHIVE_OK) {
        rc = archive_fail(ck, a, w, tmp);
        goto out;
    }
    for (int k = 0; k < E_COUNT; k++) {
        if (!ck->e[k].declared) continue;
        const unsigned char *p = k == E_META ? (const unsigned char *)meta : ck->e[k].data;
        uint64_t left = k == E_META ? meta_len : ck->e[k].size;
        archive_entry_clear(e);
        archive_entry_set_pathname(e, t2__ckpt_entry_name[k]);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_size(e, (la_int64_t)left);
        archive_entry_set_mtime(e, (time_t)ck->created, 0);
        if (archive_write_header(a, e) != ARCHIVE_OK) {
            rc = archive_fail(ck, a, w, tmp);
            goto out;
        }
        if (k == E_META) w->meta_at = w->bytes;
        while (left) {
            la_ssize_t n = archive_write_data(a, p, (size_t)left);
            if (n <= 0) {
                rc = archive_fail(ck, a, w, tmp);
                goto out;
            }
            p += n;
            left -= (uint64_t)n;
        }
        if (k == E_META) w->meta_end = w->bytes;
    }
    if (archive_write_close(a) != ARCHIVE_OK) rc = archive_fail(ck, a, w, tmp);
out:
    archive_entry_free(e);
    archive_write_free(a);
    return rc;
}

/* ---------- writing while checksumming ----------
 * Uncompressed, the archive's bytes can go to the kernel while another core checksums them:
 * metadata.json goes out first with the widest CRC as a placeholder for each, and its final
 * text, padded with spaces to the same length (JSON allows trailing blanks), is written over it
 * afterwards. Compressed, the bytes vanish into the compressor, so the checksums come first. */
typedef struct write_job {
    const t2__ckpt *ck;
    const char *meta;
    size_t meta_len;
    wstate *w;
    const char *tmp;
    t2__ckpt_span *spans;
    int n;
    int rc[2];
    char err[2][512]; /* messages are per thread; the caller re-raises them */
} write_job;

static void write_or_crc(void *ctx, size_t begin, size_t end)
{
    write_job *j = ctx;
    for (size_t i = begin; i < end && i < 2; i++) {
        int rc = i == 0 ? write_archive(j->ck, j->meta, j->meta_len, T2__CKPT_COMPRESS_NONE, j->w, j->tmp)
                        : t2__ckpt_spans(j->spans, j->n, 1);
        j->rc[i] = rc;
        if (rc) snprintf(j->err[i], sizeof j->err[i], "%s", t2_errmsg());
    }
}

static int write_overlapped(t2__ckpt *ck, const char *meta, size_t meta_len, t2__ckpt_span *spans, int n,
                            wstate *w, const char *tmp)
{
    write_job j = {ck, meta, meta_len, w, tmp, spans, n, {0, 0}, {"", ""}};
    t2__parallel_for(2, 1, write_or_crc, &j);
    for (int i = 0; i < 2; i++)
        if (j.rc[i]) return t2_seterr(j.rc[i], "%s", j.err[i]);
    if (w->meta_end - w->meta_at != meta_len)
        return t2_seterr(T2_EIO, "checkpoint %s: metadata.json did not reach %s in one piece", ck->path, tmp);
    set_crcs(ck, spans, n);
    char *text = NULL;
    size_t len = 0;
    int rc = t2__ckpt_meta_to_json(ck, &text, &len);
    if (rc) return rc;
    char *padded = len <= meta_len ? realloc(text, meta_len ? meta_len : 1) : NULL;
    if (!padded) {
        free(text);
        return len > meta_len ? t2_seterr(T2_EIO, "checkpoint %s: metadata.json grew from %zu to %zu bytes", ck->path,
                                          meta_len, len)
                              : t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
    }
    memset(padded + len, ' ', meta_len - len);
    if ((rc = t2__ckpt_meta_seal(padded, meta_len))) {
        free(padded);
        return rc;
    }
    size_t done = 0;
    while (done < meta_len && !rc) {
        ssize_t r = pwrite(w->fd, padded + done, meta_len - done, (off_t)(w->meta_at + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) rc = io_error(ck, "writing", tmp, r < 0 ? errno : EIO);
        else done += (size_t)r;
    }
    free(padded);
    return rc;
}

/* fsync of the directory makes the rename itself durable. */
static int sync_dir(const t2__ckpt *ck, const char *path)
{
    char *dir = strdup(path);
    if (!dir) return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", path);
    char *slash = strrchr(dir, '/');
    const char *d = !slash ? "." : slash == dir ? "/" : (*slash = '\0', dir);
    int rc = T2_OK, fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) rc = io_error(ck, "syncing directory", d, errno);
    if (fd >= 0) close(fd);
    free(dir);
    return rc;
}

/* A compressed archive the reader would refuse as a decompression bomb (more than
 * T2__CKPT_MAX_RATIO times its size and above the floor: only a model of almost all zeros gets
 * there) is an error now rather than a checkpoint that cannot be restored. */
static int check_ratio(const t2__ckpt *ck, size_t meta_len, uint64_t file_bytes)
{
    uint64_t total = meta_len, limit = (uint64_t)T2__CKPT_MAX_RATIO * file_bytes;
    for (int k = E_PARAMS; k < E_COUNT; k++) total += ck->e[k].declared ? ck->e[k].size : 0;
    if (total <= T2__CKPT_RATIO_FLOOR || total <= limit) return T2_OK;
    return t2_seterr(T2_EINVAL, "checkpoint %s: %llu bytes compress to %llu, more than the %u:1 a reader accepts "
                     "above %llu MiB (an almost all-zero model?): use checkpoint_storage.compression: none",
                     ck->path, (unsigned long long)total, (unsigned long long)file_bytes, T2__CKPT_MAX_RATIO,
                     (unsigned long long)(T2__CKPT_RATIO_FLOOR >> 20));
}

int t2__ckpt_write(const char *path, const t2__ckpt_contents *c, t2__ckpt_compression comp,
                   t2__ckpt_result *res)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return t2_seterr(T2_EUNSUPPORTED, "checkpoint %s: writing on a big-endian host is not supported", path);
#endif
    if (!path || !*path || !c || (!c->net && c->nraw <= 0))
        return t2_seterr(T2_EINVAL, "t2__ckpt_write: NULL path or contents, or neither a net nor raw buffers");
    if (comp < T2__CKPT_COMPRESS_NONE || comp > T2__CKPT_COMPRESS_ZSTD)
        return t2_seterr(T2_EINVAL, "checkpoint %s: unknown compression %d", path, (int)comp);
    static int counter; /* temp-name uniqueness within a process; O_EXCL catches the rest */
    t2__ckpt ck;
    memset(&ck, 0, sizeof ck);
    ck.path = (char *)path;
    char *meta = NULL, *tmp = NULL;
    size_t meta_len = 0;
    int fd = -1, rc, nspans = 0;
    t2__ckpt_span *spans = NULL;
    int overlap = comp == T2__CKPT_COMPRESS_NONE;
    if ((rc = gather(&ck, c)) || (rc = crc_spans(&ck, &spans, &nspans))) goto out;
    if (overlap) set_placeholder_crcs(&ck);
    else if ((rc = t2__ckpt_spans(spans, nspans, 1))) goto out;
    else set_crcs(&ck, spans, nspans);
    if ((rc = t2__ckpt_meta_to_json(&ck, &meta, &meta_len))) goto out;
    /* Overlapped, this text is a placeholder that write_overlapped replaces (and seals). */
    if (!overlap && (rc = t2__ckpt_meta_seal(meta, meta_len))) goto out;

    size_t tlen = strlen(path) + 48;
    if (!(tmp = malloc(tlen))) {
        rc = t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", path);
        goto out;
    }
    for (int attempt = 0; fd < 0; attempt++) {
        snprintf(tmp, tlen, "%s.tmp-%ld-%d", path, (long)getpid(), __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
        /* Private: a checkpoint holds the model and the trial's state (the umask may narrow it). */
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 && (errno != EEXIST || attempt == 100)) {
            rc = io_error(&ck, "creating", tmp, errno);
            goto out;
        }
    }
    wstate w = {fd, 0, 0, 0, 0};
    rc = overlap ? write_overlapped(&ck, meta, meta_len, spans, nspans, &w, tmp)
                 : write_archive(&ck, meta, meta_len, comp, &w, tmp);
    if (rc) goto unlink_tmp;
    if ((rc = check_ratio(&ck, meta_len, w.bytes))) goto unlink_tmp;
    if (fsync(fd) != 0) {
        rc = io_error(&ck, "syncing", tmp, errno);
        goto unlink_tmp;
    }
    int cfd = fd;
    fd = -1;
    if (close(cfd) != 0) {
        rc = io_error(&ck, "closing", tmp, errno);
        goto unlink_tmp;
    }
    if (rename(tmp, path) != 0) {
        rc = io_error(&ck, "renaming", tmp, errno);
        goto unlink_tmp;
    }
    if ((rc = sync_dir(&ck, path))) goto out;
    if (res) {
        strcpy(res->uuid, ck.uuid);
        res->bytes = w.bytes;
    }
    goto out; /* success: the common cleanup */
unlink_tmp:
    if (fd >= 0) close(fd);
    fd = -1;
    unlink(tmp);
out:
    if (fd >= 0) close(fd);
    free(tmp);
    free(meta);
    free(spans);
    free(ck.tensors);
    free(ck.staged[0]);
    free(ck.staged[1]);
    free(ck.rngs);
    free(ck.keys);
    free(ck.values);
    return rc;
}
