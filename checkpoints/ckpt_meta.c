/* ckpt_meta.c — metadata.json, the first entry of every checkpoint (format version 2):
 *
 *   {"metadata_crc32c": "<8 hex>",
 *    "format": "t2exp-checkpoint", "format_version": 2, "t2exp_version": "0.1.0",
 *    "uuid": "…", "created_unix": 1700000000, "experiment_id": 7, "trial_id": 3,
 *    "batches_trained": 500, "epoch": 0, "hparams": {…},
 *    "loader": {"epoch": 0, "batch": 500} | null,
 *    "rngs": {"trial": ["<16 hex>", "<16 hex>", "<16 hex>", "<16 hex>"], …},
 *    "lr_schedule": {"kind": 5, "kind_name": "cosine", "step": 500, "lr": 0.01, "best": "inf",
 *                    "num_bad_epochs": 0, "cooldown_counter": 0} | null,
 *    "optimizer": {"kind": "sgd", "size": N, "state_floats": N, "step_count": 500, "lr": 0.01} | [{…}, …] | null,
 *    "checksum": "crc32c",
 *    "tensors": [{"name": "0.conv2d.weight", "array": "params", "shape": [32, 1, 3, 3],
 *                 "offset": 0, "size": 288, "crc32c": 305419896}, …],
 *    "entries": {"params.bin": {"size": 4N, "crc32c": …}, "buffers.bin": …, "optimizer.bin": …,
 *                "user_state.bin": …},
 *    "strings": {"key": "value", …}}
 *
 * Several optimizers (raw parameter buffers bound to their own, t2_wrap_optimizer_for) are a list
 * of such maps in binding order: their sizes add up to params.bin's floats and their states follow
 * each other in optimizer.bin. Raw buffers are further "params" tensors after the net's.
 *
 * Offsets and sizes of tensors are in floats, of entries in bytes. Doubles that JSON cannot hold
 * (the plateau schedule's initial best is ±inf) are written as the strings "inf", "-inf", "nan".
 * RNG words are hex so that the 64-bit state survives readers that parse numbers as doubles.
 * Unknown keys are ignored (additions need no version bump); missing or mistyped ones are errors.
 *
 * The document checks itself: it starts with exactly {"metadata_crc32c":"XXXXXXXX", and those
 * eight hex digits are the CRC-32C of the whole entry (trailing blanks included) with the digits
 * read as "00000000". Every other byte of a checkpoint is covered by the tensor and entry CRCs
 * above; without this a flipped digit in, say, batches_trained or an RNG word would restore a
 * wrong training state without a word (tar checks only its headers, and libarchive does not
 * check gzip's CRC). Version 1 documents, which predate it, are still read. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ckpt_internal.h"
#include "crc32c.h"
#include "configs/value.h"
#include "t2exp.h"

#define MAX_TENSORS 65536
#define MAX_RNGS 1024

const char *const t2__ckpt_entry_name[E_COUNT] = {"metadata.json", "params.bin", "buffers.bin", "optimizer.bin",
                                                  "user_state.bin"};

static const char *const optim_names[] = {NULL, "sgd", "adam", "adamw"};

int t2__ckpt_name_ok(const char *s)
{
    if (!s) return 0;
    size_t n = strlen(s);
    if (n == 0 || n > T2__CKPT_MAX_NAME) return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < 0x21 || s[i] > 0x7e) return 0;
    return 1;
}

void t2__ckpt_meta_clear(t2__ckpt *ck)
{
    if (!ck) return;
    free(ck->tensors);
    free(ck->rngs);
    for (int i = 0; i < ck->nstrings; i++) {
        free(ck->keys[i]);
        free(ck->values[i]);
    }
    free(ck->keys);
    free(ck->values);
    free(ck->hparams_json);
    ck->tensors = NULL;
    ck->rngs = NULL;
    ck->keys = ck->values = NULL;
    ck->hparams_json = NULL;
    ck->ntensors = ck->nrngs = ck->nstrings = 0;
}

/* ---------- the self checksum ---------- */

static const char SEAL[] = "{\"metadata_crc32c\":\"";
#define SEAL_LEN (sizeof SEAL - 1)
#define SEAL_DIGITS 8

static int has_seal(const char *text, size_t len)
{
    return len >= SEAL_LEN + SEAL_DIGITS + 1 && memcmp(text, SEAL, SEAL_LEN) == 0 &&
           text[SEAL_LEN + SEAL_DIGITS] == '"';
}

static uint32_t seal_crc(const char *text, size_t len)
{
    uint32_t c = t2__crc32c(0, text, SEAL_LEN);
    c = t2__crc32c(c, "00000000", SEAL_DIGITS);
    return t2__crc32c(c, text + SEAL_LEN + SEAL_DIGITS, len - SEAL_LEN - SEAL_DIGITS);
}

int t2__ckpt_meta_seal(char *text, size_t len)
{
    if (!text || !has_seal(text, len))
        return t2_seterr(T2_EINVAL, "metadata.json: does not start with %s\"XXXXXXXX\"", SEAL);
    char hex[SEAL_DIGITS + 1];
    snprintf(hex, sizeof hex, "%08x", (unsigned)seal_crc(text, len));
    memcpy(text + SEAL_LEN, hex, SEAL_DIGITS);
    return T2_OK;
}

/* ---------- writer ---------- */

static t2__val *dbl(double d)
{
    if (isfinite(d)) return t2__val_double(d);
    return t2__val_string(isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
}

#define SET(m, k, v)                                                                              \
    do {                                                                                          \
        if ((rc = t2__val_map_set((m), (k), (v)))) goto fail;                                      \
    } while (0)
#define APPEND(l, v)                                                                              \
    do {                                                                                          \
        if ((rc = t2__val_list_append((l), (v)))) goto fail;                                       \
    } while (0)

int t2__ckpt_meta_to_json(const t2__ckpt *ck, char **out, size_t *len)
{
    int rc = T2_ENOMEM;
    size_t err_at = 0;
    t2__val *root = t2__val_map(), *hp = NULL;
    if (!root) goto fail;
    const char *hj = ck->hparams_json ? ck->hparams_json : "{}";
    if (t2__val_from_json(hj, strlen(hj), &hp, &err_at)) {
        rc = t2_seterr(T2_EINVAL, "checkpoint %s: hparams are not valid JSON (at byte %zu): %s", ck->path, err_at,
                       hj);
        goto fail;
    }
    /* First, so the document starts with the seal (filled in by t2__ckpt_meta_seal). */
    if (ck->format_version >= 2) SET(root, "metadata_crc32c", t2__val_string("00000000"));
    SET(root, "format", t2__val_string("t2exp-checkpoint"));
    SET(root, "format_version", t2__val_int(ck->format_version));
    SET(root, "t2exp_version", t2__val_string(ck->version));
    SET(root, "uuid", t2__val_string(ck->uuid));
    SET(root, "created_unix", t2__val_int(ck->created));
    SET(root, "experiment_id", t2__val_int(ck->experiment_id));
    SET(root, "trial_id", t2__val_int(ck->trial_id));
    SET(root, "batches_trained", t2__val_int(ck->batches));
    SET(root, "epoch", t2__val_int(ck->epoch));
    SET(root, "hparams", hp);
    hp = NULL;

    if (ck->has_loader) {
        t2__val *l = t2__val_map();
        SET(root, "loader", l);
        SET(l, "epoch", t2__val_int(ck->loader.epoch));
        SET(l, "batch", t2__val_int(ck->loader.batch));
    } else {
        SET(root, "loader", t2__val_null());
    }

    t2__val *rngs = t2__val_map();
    SET(root, "rngs", rngs);
    for (int i = 0; i < ck->nrngs; i++) {
        t2__val *w = t2__val_list();
        SET(rngs, ck->rngs[i].name, w);
        for (int k = 0; k < 4; k++) {
            char hex[17];
            snprintf(hex, sizeof hex, "%016" PRIx64, ck->rngs[i].state.s[k]);
            APPEND(w, t2__val_string(hex));
        }
    }

    if (ck->has_lr) {
        t2__val *l = t2__val_map();
        SET(root, "lr_schedule", l);
        SET(l, "kind", t2__val_int(ck->lr.kind));
        SET(l, "kind_name", t2__val_string(t2_lr_kind_name((t2_lr_kind)ck->lr.kind)));
        SET(l, "step", t2__val_int(ck->lr.step));
        SET(l, "lr", dbl(ck->lr.lr));
        SET(l, "best", dbl(ck->lr.best));
        SET(l, "num_bad_epochs", t2__val_int(ck->lr.num_bad_epochs));
        SET(l, "cooldown_counter", t2__val_int(ck->lr.cooldown_counter));
    } else {
        SET(root, "lr_schedule", t2__val_null());
    }

    if (ck->has_opt) {
        /* One optimizer is a map, as ever; several (raw buffers with their own) are a list. */
        t2__val *list = ck->nopt > 1 ? t2__val_list() : NULL;
        if (list) SET(root, "optimizer", list);
        for (int i = 0; i < ck->nopt; i++) {
            t2__val *o = t2__val_map();
            if (list) APPEND(list, o);
            else SET(root, "optimizer", o);
            SET(o, "kind", t2__val_string(optim_names[ck->opt[i].kind]));
            SET(o, "size", t2__val_int((int64_t)ck->opt[i].size));
            SET(o, "state_floats", t2__val_int((int64_t)ck->opt[i].floats));
            SET(o, "step_count", t2__val_int(ck->opt[i].steps));
            if (ck->opt[i].has_lr) SET(o, "lr", t2__val_double(ck->opt[i].lr));
        }
    } else {
        SET(root, "optimizer", t2__val_null());
    }

    SET(root, "checksum", t2__val_string("crc32c"));
    t2__val *tl = t2__val_list();
    SET(root, "tensors", tl);
    for (int i = 0; i < ck->ntensors; i++) {
        const t2_param_info *t = &ck->tensors[i].info;
        t2__val *m = t2__val_map(), *shape;
        APPEND(tl, m);
        SET(m, "name", t2__val_string(t->name));
        SET(m, "array", t2__val_string(t->is_buffer ? "buffers" : "params"));
        SET(m, "shape", shape = t2__val_list());
        for (int d = 0; d < t->ndim; d++) APPEND(shape, t2__val_int(t->shape[d]));
        SET(m, "offset", t2__val_int((int64_t)t->offset));
        SET(m, "size", t2__val_int((int64_t)t->size));
        SET(m, "crc32c", t2__val_int(ck->tensors[i].crc));
    }

    t2__val *en = t2__val_map();
    SET(root, "entries", en);
    for (int k = E_PARAMS; k < E_COUNT; k++) {
        if (!ck->e[k].declared) continue;
        t2__val *m = t2__val_map();
        SET(en, t2__ckpt_entry_name[k], m);
        SET(m, "size", t2__val_int((int64_t)ck->e[k].size));
        SET(m, "crc32c", t2__val_int(ck->e[k].crc));
    }

    t2__val *sm = t2__val_map();
    SET(root, "strings", sm);
    for (int i = 0; i < ck->nstrings; i++) SET(sm, ck->keys[i], t2__val_string(ck->values[i]));

    rc = t2__val_to_json(root, out, len);
    if (rc && rc != T2_ENOMEM) {
        char why[256];
        snprintf(why, sizeof why, "%s", t2_errmsg()); /* t2_seterr overwrites the message it reads */
        rc = t2_seterr(rc, "checkpoint %s: cannot serialise metadata.json: %s", ck->path, why);
    }
fail:
    if (rc == T2_ENOMEM) t2_seterr(rc, "checkpoint %s: out of memory building metadata.json", ck->path);
    t2__val_free(hp);
    t2__val_free(root);
    return rc;
}

/* ---------- reader ---------- */

#define bad(ck, ...) t2__ckpt_bad((ck), "metadata.json", __VA_ARGS__)

static int get_int(const t2__ckpt *ck, const t2__val *map, const char *ctx, const char *key, int64_t lo, int64_t hi,
                   int64_t *out)
{
    const t2__val *v = t2__val_map_get(map, key);
    if (!v) return bad(ck, "%s%s is missing", ctx, key);
    if (v->kind != T2__VAL_INT) return bad(ck, "%s%s is %s, not an integer", ctx, key, t2__val_kind_article(v->kind));
    if (v->i < lo || v->i > hi)
        return bad(ck, "%s%s = %lld is outside %lld..%lld", ctx, key, (long long)v->i, (long long)lo, (long long)hi);
    *out = v->i;
    return T2_OK;
}

static int get_str(const t2__ckpt *ck, const t2__val *map, const char *ctx, const char *key, const char **out)
{
    const t2__val *v = t2__val_map_get(map, key);
    if (!v) return bad(ck, "%s%s is missing", ctx, key);
    if (v->kind != T2__VAL_STRING) return bad(ck, "%s%s is %s, not a string", ctx, key, t2__val_kind_article(v->kind));
    *out = v->s;
    return T2_OK;
}

static int get_dbl(const t2__ckpt *ck, const t2__val *map, const char *ctx, const char *key, double *out)
{
    const t2__val *v = t2__val_map_get(map, key);
    if (!v) return bad(ck, "%s%s is missing", ctx, key);
    if (v->kind == T2__VAL_STRING) {
        if (!strcmp(v->s, "inf")) *out = INFINITY;
        else if (!strcmp(v->s, "-inf")) *out = -INFINITY;
        else if (!strcmp(v->s, "nan")) *out = NAN;
        else return bad(ck, "%s%s = \"%.40s\" is not a number", ctx, key, v->s);
        return T2_OK;
    }
    if (t2__val_as_double(v, out)) return bad(ck, "%s%s is %s, not a number", ctx, key, t2__val_kind_article(v->kind));
    return T2_OK;
}

/* A map or null at key: *out is NULL for null. */
static int get_opt_map(const t2__ckpt *ck, const t2__val *root, const char *key, const t2__val **out)
{
    const t2__val *v = t2__val_map_get(root, key);
    if (!v) return bad(ck, "%s is missing", key);
    if (v->kind == T2__VAL_NULL) {
        *out = NULL;
        return T2_OK;
    }
    if (v->kind != T2__VAL_MAP) return bad(ck, "%s is %s, not a map or null", key, t2__val_kind_article(v->kind));
    *out = v;
    return T2_OK;
}

static int parse_hex64(const char *s, uint64_t *out)
{
    uint64_t x = 0;
    if (strlen(s) != 16) return -1;
    for (int i = 0; i < 16; i++) {
        int c = s[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else return -1;
        x = x << 4 | (uint64_t)d;
    }
    *out = x;
    return 0;
}

static int parse_entries(t2__ckpt *ck, const t2__val *root)
{
    const t2__val *en = t2__val_map_get(root, "entries");
    if (!en) return bad(ck, "entries is missing");
    if (en->kind != T2__VAL_MAP) return bad(ck, "entries is %s, not a map", t2__val_kind_article(en->kind));
    for (size_t i = 0; i < en->n; i++) {
        int k;
        for (k = E_PARAMS; k < E_COUNT; k++)
            if (!strcmp(en->keys[i], t2__ckpt_entry_name[k])) break;
        if (k == E_COUNT) return bad(ck, "entries lists an unknown entry \"%.64s\"", en->keys[i]);
        const t2__val *m = en->items[i];
        char ctx[64];
        snprintf(ctx, sizeof ctx, "entries.%s.", t2__ckpt_entry_name[k]);
        if (m->kind != T2__VAL_MAP) return bad(ck, "entries.%s is not a map", t2__ckpt_entry_name[k]);
        int64_t size = 0, crc = 0;
        int rc;
        if ((rc = get_int(ck, m, ctx, "size", 0, (int64_t)T2__CKPT_MAX_ENTRY, &size)) ||
            (rc = get_int(ck, m, ctx, "crc32c", 0, UINT32_MAX, &crc)))
            return rc;
        ck->e[k].declared = 1;
        ck->e[k].size = (uint64_t)size;
        ck->e[k].crc = (uint32_t)crc;
    }
    for (int k = E_PARAMS; k <= E_BUFFERS; k++)
        if (!ck->e[k].declared) return bad(ck, "entries does not list %s", t2__ckpt_entry_name[k]);
    for (int k = E_PARAMS; k <= E_OPT; k++)
        if (ck->e[k].size % sizeof(float))
            return bad(ck, "entries.%s.size = %llu is not a whole number of floats", t2__ckpt_entry_name[k],
                       (unsigned long long)ck->e[k].size);
    ck->num_params = (size_t)(ck->e[E_PARAMS].size / sizeof(float));
    ck->num_buffers = (size_t)(ck->e[E_BUFFERS].size / sizeof(float));
    return T2_OK;
}

static int cmp_tensor_name(const void *a, const void *b)
{
    const t2__ckpt_tensor *x = *(const t2__ckpt_tensor *const *)a, *y = *(const t2__ckpt_tensor *const *)b;
    return strcmp(x->info.name, y->info.name);
}

static int cmp_tensor_place(const void *a, const void *b)
{
    const t2_param_info *x = &(*(const t2__ckpt_tensor *const *)a)->info;
    const t2_param_info *y = &(*(const t2__ckpt_tensor *const *)b)->info;
    if (x->is_buffer != y->is_buffer) return x->is_buffer - y->is_buffer;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

/* The tensors of each array must cover it exactly, without gaps or overlaps: then the tensor
 * CRCs check every byte, and restoring tensor by tensor fills the whole array. */
static int check_tiling(t2__ckpt *ck)
{
    int rc = T2_OK;
    if (ck->ntensors == 0) {
        if (ck->num_params || ck->num_buffers) return bad(ck, "tensors is empty but params.bin or buffers.bin is not");
        return T2_OK;
    }
    t2__ckpt_tensor **p = malloc((size_t)ck->ntensors * sizeof *p);
    if (!p) return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
    for (int i = 0; i < ck->ntensors; i++) p[i] = &ck->tensors[i];
    qsort(p, (size_t)ck->ntensors, sizeof *p, cmp_tensor_name);
    for (int i = 1; i < ck->ntensors; i++)
        if (!strcmp(p[i]->info.name, p[i - 1]->info.name)) {
            rc = bad(ck, "tensor %s appears twice", p[i]->info.name);
            goto out;
        }
    qsort(p, (size_t)ck->ntensors, sizeof *p, cmp_tensor_place);
    size_t next[2] = {0, 0}, total[2] = {ck->num_params, ck->num_buffers};
    for (int i = 0; i < ck->ntensors; i++) {
        const t2_param_info *t = &p[i]->info;
        int b = t->is_buffer;
        if (t->offset != next[b]) {
            rc = bad(ck, "tensor %s at offset %zu %s (the %s array's tensors must follow each other from 0)", t->name,
                     t->offset, t->offset < next[b] ? "overlaps the one before" : "leaves a gap",
                     b ? "buffers" : "params");
            goto out;
        }
        if (t->size > total[b] - next[b]) {
            rc = bad(ck, "tensor %s (offset %zu, %zu floats) runs past the end of %s (%zu floats)", t->name, t->offset,
                     t->size, t2__ckpt_entry_name[b ? E_BUFFERS : E_PARAMS], total[b]);
            goto out;
        }
        next[b] += t->size;
    }
    for (int b = 0; b < 2; b++)
        if (next[b] != total[b]) {
            rc = bad(ck, "the tensors cover %zu of the %zu floats in %s", next[b], total[b],
                     t2__ckpt_entry_name[b ? E_BUFFERS : E_PARAMS]);
            goto out;
        }
out:
    free(p);
    return rc;
}

static int parse_tensors(t2__ckpt *ck, const t2__val *root)
{
    const t2__val *tl = t2__val_map_get(root, "tensors");
    if (!tl) return bad(ck, "tensors is missing");
    if (tl->kind != T2__VAL_LIST) return bad(ck, "tensors is %s, not a list", t2__val_kind_article(tl->kind));
    if (tl->n > MAX_TENSORS) return bad(ck, "tensors has %zu entries (at most %d)", tl->n, MAX_TENSORS);
    if (tl->n) {
        ck->tensors = calloc(tl->n, sizeof *ck->tensors);
        if (!ck->tensors) return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
    }
    for (size_t i = 0; i < tl->n; i++) {
        const t2__val *m = tl->items[i];
        t2__ckpt_tensor *t = &ck->tensors[i];
        char ctx[64];
        snprintf(ctx, sizeof ctx, "tensors.%zu.", i);
        if (m->kind != T2__VAL_MAP) return bad(ck, "tensors.%zu is not a map", i);
        const char *name = "", *array = "";
        int64_t off = 0, size = 0, crc = 0;
        int rc;
        if ((rc = get_str(ck, m, ctx, "name", &name)) || (rc = get_str(ck, m, ctx, "array", &array)) ||
            (rc = get_int(ck, m, ctx, "offset", 0, (int64_t)T2__CKPT_MAX_ENTRY, &off)) ||
            (rc = get_int(ck, m, ctx, "size", 1, (int64_t)T2__CKPT_MAX_ENTRY, &size)) ||
            (rc = get_int(ck, m, ctx, "crc32c", 0, UINT32_MAX, &crc)))
            return rc;
        if (!*name || strlen(name) >= sizeof t->info.name)
            return bad(ck, "%sname \"%.64s\" is empty or longer than %zu bytes", ctx, name, sizeof t->info.name - 1);
        strcpy(t->info.name, name);
        if (!strcmp(array, "params")) t->info.is_buffer = 0;
        else if (!strcmp(array, "buffers")) t->info.is_buffer = 1;
        else return bad(ck, "tensor %s: array is \"%.32s\", not \"params\" or \"buffers\"", name, array);
        const t2__val *sh = t2__val_map_get(m, "shape");
        if (!sh || sh->kind != T2__VAL_LIST || sh->n < 1 || sh->n > T2_MAX_DIMS)
            return bad(ck, "tensor %s: shape must be a list of 1..%d dimensions", name, T2_MAX_DIMS);
        uint64_t numel = 1;
        t->info.ndim = (int)sh->n;
        for (int d = 0; d < T2_MAX_DIMS; d++) t->info.shape[d] = 1;
        for (size_t d = 0; d < sh->n; d++) {
            const t2__val *x = sh->items[d];
            if (x->kind != T2__VAL_INT || x->i < 1 || x->i > INT32_MAX)
                return bad(ck, "tensor %s: dimension %zu is not a positive int", name, d);
            t->info.shape[d] = (int)x->i;
            numel *= (uint64_t)x->i; /* <= (2^31)^4 would overflow; bounded below */
            if (numel > T2__CKPT_MAX_ENTRY) return bad(ck, "tensor %s: shape is too large", name);
        }
        if (numel != (uint64_t)size)
            return bad(ck, "tensor %s: shape has %llu elements but size is %lld", name, (unsigned long long)numel,
                       (long long)size);
        t->info.offset = (size_t)off;
        t->info.size = (size_t)size;
        t->crc = (uint32_t)crc;
        ck->ntensors = (int)i + 1;
    }
    return check_tiling(ck);
}

/* One optimizer's map; prefix names it in messages ("optimizer." or "optimizer.N."). */
static int parse_one_optimizer(t2__ckpt *ck, const t2__val *o, const char *prefix, struct t2__ckpt_opt *out)
{
    const char *kind = "";
    int64_t size = 0, floats = 0, steps = 0;
    int rc;
    if (o->kind != T2__VAL_MAP)
        return bad(ck, "%.*s is %s, not a map", (int)strlen(prefix) - 1, prefix, t2__val_kind_article(o->kind));
    if ((rc = get_str(ck, o, prefix, "kind", &kind)) ||
        (rc = get_int(ck, o, prefix, "size", 0, (int64_t)T2__CKPT_MAX_ENTRY, &size)) ||
        (rc = get_int(ck, o, prefix, "state_floats", 0, (int64_t)T2__CKPT_MAX_ENTRY, &floats)) ||
        (rc = get_int(ck, o, prefix, "step_count", 0, INT64_MAX, &steps)))
        return rc;
    out->kind = 0;
    for (int k = 1; k <= 3; k++)
        if (!strcmp(kind, optim_names[k])) out->kind = k;
    if (!out->kind) return bad(ck, "%skind \"%.32s\" is not sgd, adam or adamw", prefix, kind);
    int sgd = out->kind == T2_OPTIM_SGD;
    if (!(sgd ? floats == 0 || floats == size : floats == 2 * size))
        return bad(ck, "%sstate_floats = %lld does not suit %s with %lld parameters", prefix, (long long)floats, kind,
                   (long long)size);
    out->size = (size_t)size;
    out->floats = (size_t)floats;
    out->steps = steps;
    /* Optional (written since the restore sets it): the rate the optimizer's last step used. */
    out->has_lr = t2__val_map_get(o, "lr") != NULL;
    if (out->has_lr && (rc = get_dbl(ck, o, prefix, "lr", &out->lr))) return rc;
    if (out->has_lr && !(isfinite(out->lr) && out->lr >= 0))
        return bad(ck, "%slr = %g is not a finite rate >= 0", prefix, out->lr);
    return T2_OK;
}

static int parse_optimizer(t2__ckpt *ck, const t2__val *root)
{
    const t2__val *o = t2__val_map_get(root, "optimizer");
    if (!o) return bad(ck, "optimizer is missing");
    if (o->kind != T2__VAL_NULL && o->kind != T2__VAL_MAP && o->kind != T2__VAL_LIST)
        return bad(ck, "optimizer is %s, not a map, a list or null", t2__val_kind_article(o->kind));
    ck->has_opt = o->kind != T2__VAL_NULL;
    if (ck->has_opt != ck->e[E_OPT].declared)
        return bad(ck, "optimizer is %s but entries %s optimizer.bin", ck->has_opt ? "set" : "null",
                   ck->has_opt ? "lacks" : "lists");
    if (!ck->has_opt) return T2_OK;
    int rc;
    uint64_t size = 0, floats = 0;
    if (o->kind == T2__VAL_MAP) {
        if ((rc = parse_one_optimizer(ck, o, "optimizer.", &ck->opt[0]))) return rc;
        ck->nopt = 1;
    } else {
        if (o->n < 1 || o->n > T2__CKPT_MAX_OPTS)
            return bad(ck, "optimizer lists %zu optimizers (1..%d)", o->n, T2__CKPT_MAX_OPTS);
        for (size_t i = 0; i < o->n; i++) {
            char prefix[32];
            snprintf(prefix, sizeof prefix, "optimizer.%zu.", i);
            if ((rc = parse_one_optimizer(ck, o->items[i], prefix, &ck->opt[i]))) return rc;
            ck->nopt = (int)i + 1;
        }
    }
    for (int i = 0; i < ck->nopt; i++) {
        size += ck->opt[i].size;
        floats += ck->opt[i].floats;
    }
    if (size != ck->num_params)
        return bad(ck, "optimizer.size = %llu but params.bin holds %zu floats", (unsigned long long)size,
                   ck->num_params);
    if (floats * sizeof(float) != ck->e[E_OPT].size)
        return bad(ck, "optimizer.state_floats = %llu but optimizer.bin is %llu bytes", (unsigned long long)floats,
                   (unsigned long long)ck->e[E_OPT].size);
    ck->opt_floats = (size_t)floats;
    return T2_OK;
}

static int parse_lr(t2__ckpt *ck, const t2__val *root)
{
    const t2__val *l = NULL;
    int rc = get_opt_map(ck, root, "lr_schedule", &l);
    if (rc || !l) return rc;
    int64_t kind = 0;
    const char *c = "lr_schedule.";
    if ((rc = get_int(ck, l, c, "kind", T2_LR_CONSTANT, T2_LR_PLATEAU, &kind)) ||
        (rc = get_int(ck, l, c, "step", 0, INT64_MAX, &ck->lr.step)) || (rc = get_dbl(ck, l, c, "lr", &ck->lr.lr)) ||
        (rc = get_dbl(ck, l, c, "best", &ck->lr.best)) ||
        (rc = get_int(ck, l, c, "num_bad_epochs", 0, INT64_MAX, &ck->lr.num_bad_epochs)) ||
        (rc = get_int(ck, l, c, "cooldown_counter", 0, INT64_MAX, &ck->lr.cooldown_counter)))
        return rc;
    ck->lr.kind = (int32_t)kind;
    ck->has_lr = 1;
    return T2_OK;
}

static int parse_rngs(t2__ckpt *ck, const t2__val *root)
{
    const t2__val *r = t2__val_map_get(root, "rngs");
    if (!r) return bad(ck, "rngs is missing");
    if (r->kind != T2__VAL_MAP) return bad(ck, "rngs is %s, not a map", t2__val_kind_article(r->kind));
    if (r->n > MAX_RNGS) return bad(ck, "rngs has %zu entries (at most %d)", r->n, MAX_RNGS);
    if (r->n && !(ck->rngs = calloc(r->n, sizeof *ck->rngs)))
        return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
    for (size_t i = 0; i < r->n; i++) {
        if (!t2__ckpt_name_ok(r->keys[i])) return bad(ck, "rngs has a bad name \"%.64s\"", r->keys[i]);
        const t2__val *w = r->items[i];
        if (w->kind != T2__VAL_LIST || w->n != 4) return bad(ck, "rngs.%s is not a list of 4 words", r->keys[i]);
        for (int k = 0; k < 4; k++)
            if (w->items[k]->kind != T2__VAL_STRING || parse_hex64(w->items[k]->s, &ck->rngs[i].state.s[k]))
                return bad(ck, "rngs.%s.%d is not 16 lower-case hex digits", r->keys[i], k);
        strcpy(ck->rngs[i].name, r->keys[i]);
        ck->nrngs = (int)i + 1;
    }
    return T2_OK;
}

static int parse_strings(t2__ckpt *ck, const t2__val *root)
{
    const t2__val *s = t2__val_map_get(root, "strings");
    if (!s) return bad(ck, "strings is missing");
    if (s->kind != T2__VAL_MAP) return bad(ck, "strings is %s, not a map", t2__val_kind_article(s->kind));
    if (!s->n) return T2_OK;
    ck->keys = calloc(s->n, sizeof *ck->keys);
    ck->values = calloc(s->n, sizeof *ck->values);
    if (!ck->keys || !ck->values) return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
    for (size_t i = 0; i < s->n; i++) {
        if (!t2__ckpt_name_ok(s->keys[i])) return bad(ck, "strings has a bad key \"%.64s\"", s->keys[i]);
        if (s->items[i]->kind != T2__VAL_STRING) return bad(ck, "strings.%s is not a string", s->keys[i]);
        ck->keys[i] = strdup(s->keys[i]);
        ck->values[i] = strdup(s->items[i]->s);
        ck->nstrings = (int)i + 1;
        if (!ck->keys[i] || !ck->values[i]) return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
    }
    return T2_OK;
}

static int parse_root(t2__ckpt *ck, const t2__val *root)
{
    int rc;
    int64_t ver = 0;
    const char *s = "";
    if (root->kind != T2__VAL_MAP) return bad(ck, "the document is %s, not a map", t2__val_kind_article(root->kind));
    /* The version first: a later format may change everything else. */
    if ((rc = get_int(ck, root, "", "format_version", INT64_MIN, INT64_MAX, &ver))) return rc;
    if (ver < 1 || ver > T2__CKPT_FORMAT_VERSION)
        return t2_seterr(T2_EUNSUPPORTED,
                         "checkpoint %s: format version %lld is not supported (this t2exp %s reads versions 1 to %d)",
                         ck->path, (long long)ver, t2_version(), T2__CKPT_FORMAT_VERSION);
    ck->format_version = (int)ver;
    if ((rc = get_str(ck, root, "", "format", &s))) return rc;
    if (strcmp(s, "t2exp-checkpoint")) return bad(ck, "format is \"%.40s\", not \"t2exp-checkpoint\"", s);
    if ((rc = get_str(ck, root, "", "checksum", &s))) return rc;
    if (strcmp(s, "crc32c")) return bad(ck, "checksum is \"%.40s\", not \"crc32c\"", s);
    if ((rc = get_str(ck, root, "", "t2exp_version", &s))) return rc;
    if (strlen(s) >= sizeof ck->version) return bad(ck, "t2exp_version is longer than %zu bytes", sizeof ck->version - 1);
    strcpy(ck->version, s);
    if ((rc = get_str(ck, root, "", "uuid", &s))) return rc;
    if (!t2__uuid_valid(s)) return bad(ck, "uuid \"%.40s\" is not a lower-case uuid", s);
    strcpy(ck->uuid, s);
    /* A file named as a checkpoint (<uuid>.tar[.gz|.zst], as every one t2exp writes, and as the
     * store finds them) must be that checkpoint: another one copied over it would otherwise be
     * exported, evaluated or resumed as it, another trial's weights under this one's name. */
    const char *base = strrchr(ck->path, '/');
    char named[T2__UUID_LEN + 1];
    if (t2__ckpt_name_parse(base ? base + 1 : ck->path, named, NULL) && strcmp(named, ck->uuid) != 0)
        return bad(ck, "its name says checkpoint %s, but it holds checkpoint %s: the file was replaced by another "
                       "checkpoint or renamed, so it is not the one its name stands for", named, ck->uuid);
    if ((rc = get_int(ck, root, "", "created_unix", INT64_MIN, INT64_MAX, &ck->created)) ||
        (rc = get_int(ck, root, "", "experiment_id", INT64_MIN, INT64_MAX, &ck->experiment_id)) ||
        (rc = get_int(ck, root, "", "trial_id", INT64_MIN, INT64_MAX, &ck->trial_id)) ||
        (rc = get_int(ck, root, "", "batches_trained", 0, INT64_MAX, &ck->batches)) ||
        (rc = get_int(ck, root, "", "epoch", 0, INT64_MAX, &ck->epoch)))
        return rc;
    const t2__val *hp = t2__val_map_get(root, "hparams");
    if (!hp) return bad(ck, "hparams is missing");
    if ((rc = t2__val_to_json(hp, &ck->hparams_json, NULL)))
        return rc == T2_ENOMEM ? t2_seterr(rc, "checkpoint %s: out of memory", ck->path)
                               : bad(ck, "hparams cannot be written back as JSON");
    const t2__val *l = NULL;
    if ((rc = get_opt_map(ck, root, "loader", &l))) return rc;
    if (l) {
        if ((rc = get_int(ck, l, "loader.", "epoch", 0, INT64_MAX, &ck->loader.epoch)) ||
            (rc = get_int(ck, l, "loader.", "batch", 0, INT64_MAX, &ck->loader.batch)))
            return rc;
        ck->has_loader = 1;
    }
    if ((rc = parse_entries(ck, root)) || (rc = parse_tensors(ck, root)) || (rc = parse_optimizer(ck, root)) ||
        (rc = parse_lr(ck, root)) || (rc = parse_rngs(ck, root)) || (rc = parse_strings(ck, root)))
        return rc;
    return T2_OK;
}

/* T2_OK with *sealed 0 for a document without the seal (version 1; the version check decides). */
static int check_seal(const t2__ckpt *ck, const char *text, size_t len, int *sealed)
{
    *sealed = has_seal(text, len);
    if (!*sealed) return T2_OK;
    char stored[SEAL_DIGITS + 1];
    memcpy(stored, text + SEAL_LEN, SEAL_DIGITS);
    stored[SEAL_DIGITS] = '\0';
    char want[SEAL_DIGITS + 1];
    snprintf(want, sizeof want, "%08x", (unsigned)seal_crc(text, len));
    if (strcmp(stored, want) != 0)
        return bad(ck, "fails its CRC-32C check (stored %s, computed %s): the file is corrupt", stored, want);
    return T2_OK;
}

int t2__ckpt_meta_from_json(t2__ckpt *ck, const char *text, size_t len)
{
    t2__val *root = NULL;
    size_t at = 0;
    int sealed = 0;
    int rc = check_seal(ck, text, len, &sealed);
    if (rc) return rc;
    rc = t2__val_from_json(text, len, &root, &at);
    if (rc == T2_ENOMEM) return t2_seterr(rc, "checkpoint %s: out of memory reading metadata.json", ck->path);
    if (rc) return bad(ck, "not valid JSON at byte %zu: %s", at, t2_errmsg());
    rc = parse_root(ck, root);
    t2__val_free(root);
    if (!rc && ck->format_version >= 2 && !sealed)
        rc = bad(ck, "does not start with its own checksum (%s\"…\"), which format version %d requires", SEAL,
                 ck->format_version);
    return rc;
}
