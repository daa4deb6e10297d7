/* ckpt_restore.c — putting a validated checkpoint back into a live model, the getters for the
 * rest of the training state, and the public t2_checkpoint_* calls built on them.
 *
 * Restore checks everything first and copies afterwards, so a mismatch leaves the net, the
 * optimizer and the schedule exactly as they were: a caller that falls back to an older
 * checkpoint, or to a fresh start, never trains from a half-restored model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include "ckpt_internal.h"
#include "crc32c.h"
#include "t2exp/error.h"

static void shape_text(const t2_param_info *t, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int d = 0; d < t->ndim && n < len; d++) {
        int w = snprintf(buf + n, len - n, "%s%d", d ? ", " : "[", t->shape[d]);
        if (w < 0) return;
        n += (size_t)w;
    }
    if (n < len) snprintf(buf + n, len - n, "]");
}

static const t2__ckpt_tensor *find_tensor(const t2__ckpt *ck, const char *name)
{
    for (int i = 0; i < ck->ntensors; i++)
        if (!strcmp(ck->tensors[i].info.name, name)) return &ck->tensors[i];
    return NULL;
}

/* The live model as one tensor list: the net's tensors (offsets into its arrays), then the raw
 * buffers, placed after the net's parameters as the writer places them. dst[i] is where tensor
 * i's floats go. n_net tells the net's tensors from the raw ones in messages. */
typedef struct live {
    t2_param_info *t;
    float **dst;
    int n, n_net;
    size_t np, nb;
} live;

static void live_free(live *l)
{
    free(l->t);
    free(l->dst);
}

static int live_build(const t2__ckpt *ck, const t2__ckpt_model *m, live *l)
{
    memset(l, 0, sizeof *l);
    float *params = NULL, *buffers = NULL;
    if (m->net) {
        params = t2_net_params(m->net, &l->np);
        buffers = t2_net_buffers(m->net, &l->nb);
        if (!params) return t2_seterr(T2_ESTATE, "checkpoint %s: the net is not initialised (t2_net_init)", ck->path);
    }
    int nt = m->net ? t2_net_num_tensors(m->net) : 0;
    if (nt < 0 || m->nraw < 0 || (m->nraw && !m->raw))
        return t2_seterr(T2_EINVAL, "checkpoint %s: bad model to restore into", ck->path);
    size_t total = (size_t)nt + (size_t)m->nraw;
    l->t = calloc(total ? total : 1, sizeof *l->t);
    l->dst = calloc(total ? total : 1, sizeof *l->dst);
    if (!l->t || !l->dst) return live_free(l), t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
    for (int i = 0; i < nt; i++) {
        int rc = t2_net_tensor_info(m->net, i, &l->t[i]);
        if (rc) return live_free(l), rc;
        l->dst[i] = (l->t[i].is_buffer ? buffers : params) + l->t[i].offset;
    }
    size_t off = l->np;
    for (int j = 0; j < m->nraw; j++) {
        t2_param_info *t = &l->t[nt + j];
        snprintf(t->name, sizeof t->name, "%s", m->raw[j].name ? m->raw[j].name : "");
        t->ndim = 1;
        t->shape[0] = m->raw[j].n > INT_MAX ? INT_MAX : (int)m->raw[j].n;
        t->offset = off;
        t->size = m->raw[j].n;
        off += m->raw[j].n;
        l->dst[nt + j] = m->raw[j].data;
    }
    l->n = (int)total;
    l->n_net = nt;
    l->np = off;
    return T2_OK;
}

/* Whether checkpoint tensor t is a raw buffer (t2_wrap_params) behind a net's parameters of np
 * floats: a parameter tensor placed after them. */
static int raw_after(const t2_param_info *t, size_t np)
{
    /* A layer's tensor is "<index>.<kind>.<name>": one of those the model lacks is another
     * architecture (a net with more layers), never a raw buffer, and stays a mismatch. */
    const char *p = t->name;
    while (*p >= '0' && *p <= '9') p++;
    int layer_like = p != t->name && *p == '.';
    return !t->is_buffer && t->offset >= np && !layer_like;
}

/* Every model tensor has a counterpart of the same kind and shape, and vice versa (net_alone: but
 * the checkpoint may also hold raw buffers after the net's parameters). */
static int check_net(const t2__ckpt *ck, const live *l, int net_alone)
{
    for (int i = 0; i < l->n; i++) {
        const t2_param_info *m = &l->t[i];
        const t2__ckpt_tensor *t = find_tensor(ck, m->name);
        char a[64], b[64];
        shape_text(m, b, sizeof b);
        if (!t && i >= l->n_net)
            return t2_seterr(T2_ESHAPE, "checkpoint %s: has no raw buffer %s (%zu floats in the trial)", ck->path,
                             m->name, m->size);
        if (!t) return t2_seterr(T2_ESHAPE, "checkpoint %s: has no tensor %s (shape %s in the model)", ck->path, m->name, b);
        shape_text(&t->info, a, sizeof a);
        int same = t->info.ndim == m->ndim && t->info.is_buffer == m->is_buffer && t->info.size == m->size;
        for (int d = 0; same && d < m->ndim; d++) same = t->info.shape[d] == m->shape[d];
        if (!same && i >= l->n_net)
            return t2_seterr(T2_ESHAPE, "checkpoint %s: raw buffer %s holds %zu floats in the checkpoint but %zu in the "
                             "trial (t2_wrap_params)", ck->path, m->name, t->info.size, m->size);
        if (!same)
            return t2_seterr(T2_ESHAPE, "checkpoint %s: tensor %s has shape %s%s in the checkpoint but %s%s in the model",
                             ck->path, m->name, a, t->info.is_buffer ? " (buffer)" : "", b,
                             m->is_buffer ? " (buffer)" : "");
    }
    if (l->n != ck->ntensors) {
        /* Same names are all present; the checkpoint has more. Name one the model lacks. */
        for (int i = 0; i < ck->ntensors; i++) {
            int found = 0;
            for (int j = 0; j < l->n && !found; j++) found = !strcmp(l->t[j].name, ck->tensors[i].info.name);
            if (!found && !(net_alone && raw_after(&ck->tensors[i].info, l->np)))
                return t2_seterr(T2_ESHAPE, "checkpoint %s: tensor %s is not in the model", ck->path,
                                 ck->tensors[i].info.name);
        }
    }
    if ((net_alone ? ck->num_params < l->np : l->np != ck->num_params) || l->nb != ck->num_buffers)
        return t2_seterr(T2_ESHAPE, "checkpoint %s: %zu parameters and %zu buffer floats, the model has %zu and %zu",
                         ck->path, ck->num_params, ck->num_buffers, l->np, l->nb);
    return T2_OK;
}

static int check_opts(const t2__ckpt *ck, const t2__ckpt_model *m)
{
    static const char *const names[] = {"?", "sgd", "adam", "adamw"};
    if (!ck->has_opt) return t2_seterr(T2_ENOTFOUND, "checkpoint %s: has no optimizer state", ck->path);
    if (m->nopts != ck->nopt)
        return t2_seterr(T2_EINVAL, "checkpoint %s: %d optimizer%s in the checkpoint but %d in the model", ck->path,
                         ck->nopt, ck->nopt == 1 ? "" : "s", m->nopts);
    for (int i = 0; i < m->nopts; i++) {
        const struct t2__ckpt_opt *o = &ck->opt[i];
        char which[32] = "";
        if (m->nopts > 1) snprintf(which, sizeof which, " %d", i);
        int kind = (int)t2_optim_get_kind(m->opts[i]);
        if (kind != o->kind)
            return t2_seterr(T2_EINVAL, "checkpoint %s: optimizer%s is %s in the checkpoint but %s in the model",
                             ck->path, which, names[o->kind], kind >= 1 && kind <= 3 ? names[kind] : "?");
        size_t ns;
        t2_optim_state(m->opts[i], &ns);
        if (t2_optim_size(m->opts[i]) != o->size || ns != o->floats)
            return t2_seterr(T2_ESHAPE,
                             "checkpoint %s: optimizer%s state is %zu floats for %zu parameters in the checkpoint but "
                             "%zu for %zu in the model",
                             ck->path, which, o->floats, o->size, ns, t2_optim_size(m->opts[i]));
    }
    return T2_OK;
}

/* The optimizers' states: one span for a single optimizer (checked against the entry's CRC like
 * any entry); for several, one per optimizer, whose CRCs are combined and compared here. */
static int restore_opts(const t2__ckpt *ck, const t2__ckpt_model *m)
{
    t2__ckpt_span s[T2__CKPT_MAX_OPTS];
    int n = 0;
    size_t at = 0;
    for (int i = 0; i < m->nopts; i++) {
        size_t ns;
        float *st = t2_optim_state(m->opts[i], &ns);
        if (ns) s[n++] = (t2__ckpt_span){ck->e[E_OPT].data + at * sizeof(float), (unsigned char *)st,
                                         ns * sizeof(float), 0, -1 - E_OPT};
        at += ns;
    }
    int rc = n ? t2__ckpt_spans(s, n, ck->lazy) : T2_OK;
    if (!rc && ck->lazy && n == 1) rc = t2__ckpt_check_spans(ck, s, n);
    if (!rc && ck->lazy && n > 1) {
        uint32_t whole = 0;
        for (int i = 0; i < n; i++) whole = t2__crc32c_combine(whole, s[i].crc, s[i].len);
        if (whole != ck->e[E_OPT].crc)
            rc = t2__ckpt_bad(ck, NULL, "entry %s fails its CRC-32C check (stored %08x, computed %08x): the file is "
                              "corrupt", t2__ckpt_entry_name[E_OPT], (unsigned)ck->e[E_OPT].crc, (unsigned)whole);
    }
    /* The rate too: t2_optim_lr() before the next step returns what the last step used, as in a
     * run that never stopped (it returned the rate the optimizer was created with). */
    for (int i = 0; !rc && i < m->nopts; i++) {
        rc = t2_optim_set_step_count(m->opts[i], ck->opt[i].steps);
        if (!rc && ck->opt[i].has_lr) rc = t2_optim_set_lr(m->opts[i], ck->opt[i].lr);
    }
    return rc;
}

/* rd is ck itself, writable, when the entries may still have to be read (t2__ckpt_restore);
 * NULL from the public API, whose checkpoints are read whole at open. */
static int restore(t2__ckpt *rd, const t2__ckpt *ck, const t2__ckpt_model *m, t2_lr_schedule *sched)
{
    if (!ck || !m || (!m->net && m->nraw <= 0))
        return t2_seterr(T2_EINVAL, "checkpoint restore: NULL checkpoint or nothing to restore into");
    if (m->nopts < 0 || m->nopts > T2__CKPT_MAX_OPTS || (m->nopts && !m->opts))
        return t2_seterr(T2_EINVAL, "checkpoint restore: bad optimizer list");
    live l;
    int rc = live_build(ck, m, &l);
    if (rc) return rc;
    if ((rc = check_net(ck, &l, m->net_alone && !m->nraw)) || (m->nopts && (rc = check_opts(ck, m)))) goto out;
    if (sched && !ck->has_lr) {
        rc = t2_seterr(T2_ENOTFOUND, "checkpoint %s: has no LR-schedule state", ck->path);
        goto out;
    }
    /* Only now, with the sizes checked against the model, are the entries decoded: what a
     * checkpoint can make us read is bounded by the model it is restored into. An optimizer
     * state that is not wanted is checksummed as it streams past, not kept. */
    if (rd && (rc = t2__ckpt_read_entries(rd, 1u << E_PARAMS | 1u << E_BUFFERS | 1u << E_USER |
                                                  (m->nopts ? 1u << E_OPT : 0u))))
        goto out;
    if ((rc = t2__ckpt_have(ck, E_PARAMS)) || (rc = t2__ckpt_have(ck, E_BUFFERS)) ||
        (m->nopts && (rc = t2__ckpt_have(ck, E_OPT))))
        goto out;
    /* Gather the copies first (allocation is the one thing that can still fail), then do them
     * in one pass over the thread pool, checksumming them on the way when open left that to us. */
    t2__ckpt_span *spans = malloc(((size_t)ck->ntensors + 1) * sizeof *spans);
    if (!spans) {
        rc = t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
        goto out;
    }
    int n = 0;
    for (int i = 0; i < ck->ntensors; i++) {
        const t2_param_info *t = &ck->tensors[i].info;
        float *dst = NULL;
        /* Destinations come from the model: its layout is what its layers point into. */
        for (int j = 0; j < l.n && !dst; j++)
            if (!strcmp(l.t[j].name, t->name)) dst = l.dst[j];
        const t2__ckpt_entry *en = &ck->e[t->is_buffer ? E_BUFFERS : E_PARAMS];
        spans[n++] = (t2__ckpt_span){en->data + t->offset * sizeof(float), (unsigned char *)dst,
                                     t->size * sizeof(float), 0, i};
    }
    if (sched && (rc = t2_lr_schedule_set_state(sched, &ck->lr))) {
        /* Last of the checks and atomic itself: nothing has changed if it fails. */
        char why[256];
        snprintf(why, sizeof why, "%s", t2_errmsg());
        rc = t2_seterr(rc, "checkpoint %s: %s", ck->path, why);
    }
    if (!rc) rc = t2__ckpt_spans(spans, n, ck->lazy);
    if (!rc && ck->lazy) rc = t2__ckpt_check_spans(ck, spans, n);
    free(spans);
    if (!rc && m->nopts) rc = restore_opts(ck, m);
out:
    live_free(&l);
    return rc;
}

int t2__ckpt_restore_model(t2__ckpt *ck, const t2__ckpt_model *m, t2_lr_schedule *sched)
{
    return restore(ck, ck, m, sched);
}

int t2__ckpt_restore(t2__ckpt *ck, t2_net *net, t2_optim *opt, t2_lr_schedule *sched)
{
    if (!net) return t2_seterr(T2_EINVAL, "checkpoint restore: NULL checkpoint or net");
    t2__ckpt_model m = {.net = net, .opts = opt ? &opt : NULL, .nopts = opt ? 1 : 0};
    return restore(ck, ck, &m, sched);
}

int t2__ckpt_get_info(const t2__ckpt *ck, t2_checkpoint_info *info)
{
    if (!ck || !info) return t2_seterr(T2_EINVAL, "checkpoint info: NULL argument");
    memset(info, 0, sizeof *info);
    info->format_version = ck->format_version;
    info->t2exp_version = ck->version;
    info->uuid = ck->uuid;
    info->experiment_id = ck->experiment_id;
    info->trial_id = ck->trial_id;
    info->created_unix = ck->created;
    info->batches_trained = ck->batches;
    info->epoch = ck->epoch;
    info->hparams_json = ck->hparams_json ? ck->hparams_json : "{}";
    info->num_params = ck->num_params;
    info->num_buffers = ck->num_buffers;
    info->num_tensors = ck->ntensors;
    info->has_optimizer = ck->has_opt;
    info->optimizer_kind = ck->has_opt ? ck->opt[0].kind : 0;
    info->optimizer_steps = ck->has_opt ? ck->opt[0].steps : 0;
    info->has_lr_schedule = ck->has_lr;
    info->has_loader_state = ck->has_loader;
    info->has_user_state = ck->e[E_USER].declared;
    info->user_state_bytes = (size_t)ck->e[E_USER].size;
    return T2_OK;
}

int t2__ckpt_loader_state(const t2__ckpt *ck, t2_loader_state *out)
{
    if (!ck || !out) return t2_seterr(T2_EINVAL, "checkpoint: NULL argument");
    if (!ck->has_loader) return t2_seterr(T2_ENOTFOUND, "checkpoint %s: has no loader state", ck->path);
    *out = ck->loader;
    return T2_OK;
}

int t2__ckpt_lr_state(const t2__ckpt *ck, t2_lr_state *out)
{
    if (!ck || !out) return t2_seterr(T2_EINVAL, "checkpoint: NULL argument");
    if (!ck->has_lr) return t2_seterr(T2_ENOTFOUND, "checkpoint %s: has no LR-schedule state", ck->path);
    *out = ck->lr;
    return T2_OK;
}

int t2__ckpt_get_rng(const t2__ckpt *ck, const char *name, t2_rng *out)
{
    if (!ck || !name || !out) return t2_seterr(T2_EINVAL, "checkpoint: NULL argument");
    for (int i = 0; i < ck->nrngs; i++)
        if (!strcmp(ck->rngs[i].name, name)) {
            *out = ck->rngs[i].state;
            return T2_OK;
        }
    return t2_seterr(T2_ENOTFOUND, "checkpoint %s: has no rng \"%s\"", ck->path, name);
}

int t2__ckpt_user_state(const t2__ckpt *ck, const void **data, size_t *len)
{
    if (!ck || !data || !len) return t2_seterr(T2_EINVAL, "checkpoint: NULL argument");
    if (!ck->e[E_USER].declared) return t2_seterr(T2_ENOTFOUND, "checkpoint %s: has no user state", ck->path);
    int rc = t2__ckpt_have(ck, E_USER);
    if (rc) return rc;
    *data = ck->e[E_USER].data;
    *len = (size_t)ck->e[E_USER].size;
    return T2_OK;
}

const char *t2__ckpt_string(const t2__ckpt *ck, const char *key)
{
    if (!ck || !key) return NULL;
    for (int i = 0; i < ck->nstrings; i++)
        if (!strcmp(ck->keys[i], key)) return ck->values[i];
    return NULL;
}

/* ---------- public API ---------- */

int t2_checkpoint_open(t2_checkpoint **out, const char *path) { return t2__ckpt_open(out, path); }

void t2_checkpoint_free(t2_checkpoint *ck) { t2__ckpt_free(ck); }

int t2_checkpoint_get_info(const t2_checkpoint *ck, t2_checkpoint_info *info) { return t2__ckpt_get_info(ck, info); }

int t2_checkpoint_tensor_info(const t2_checkpoint *ck, int i, t2_param_info *info)
{
    if (!ck || !info) return t2_seterr(T2_EINVAL, "t2_checkpoint_tensor_info: NULL argument");
    if (i < 0 || i >= ck->ntensors)
        return t2_seterr(T2_EINVAL, "t2_checkpoint_tensor_info: index %d outside 0..%d", i, ck->ntensors - 1);
    *info = ck->tensors[i].info;
    return T2_OK;
}

const char *t2_checkpoint_user_value(const t2_checkpoint *ck, const char *key) { return t2__ckpt_string(ck, key); }

int t2_checkpoint_restore_model(const t2_checkpoint *ck, t2_net *net)
{
    if (!net) return t2_seterr(T2_EINVAL, "checkpoint restore: NULL checkpoint or net");
    t2__ckpt_model m = {.net = net, .net_alone = 1};
    return restore(NULL, ck, &m, NULL);
}

/* The tensor named name, a parameter or a buffer tensor (a batchnorm's running statistics) of
 * exactly n floats. */
static int find_params(const t2_checkpoint *ck, const char *name, size_t n, const t2__ckpt_tensor **out)
{
    if (!ck || !name) return t2_seterr(T2_EINVAL, "t2_checkpoint_restore_params: NULL argument");
    const t2__ckpt_tensor *t = find_tensor(ck, name);
    if (!t) return t2_seterr(T2_ENOTFOUND, "checkpoint %s: has no tensor %s", ck->path, name);
    if (t->info.size != n)
        return t2_seterr(T2_ESHAPE, "checkpoint %s: tensor %s holds %zu floats but the destination %zu", ck->path,
                         name, t->info.size, n);
    *out = t;
    return T2_OK;
}

int t2_checkpoint_restore_params(const t2_checkpoint *ck, const char *name, float *dst, size_t n)
{
    const t2__ckpt_tensor *t;
    int rc = find_params(ck, name, n, &t);
    if (rc) return rc;
    if (!dst) return t2_seterr(T2_EINVAL, "t2_checkpoint_restore_params: NULL destination");
    int k = t->info.is_buffer ? E_BUFFERS : E_PARAMS;
    if ((rc = t2__ckpt_have(ck, k))) return rc;
    memcpy(dst, ck->e[k].data + t->info.offset * sizeof(float), n * sizeof(float));
    return T2_OK;
}

int t2_checkpoint_load_params(const char *path, const char *name, float *dst, size_t n)
{
    if (!path || !name || !dst) return t2_seterr(T2_EINVAL, "t2_checkpoint_load_params: NULL argument");
    t2_checkpoint *ck = NULL;
    const t2__ckpt_tensor *t;
    /* The tensor table first: a checkpoint without the buffer costs nothing but its metadata. */
    int rc = t2__ckpt_open_info(&ck, path);
    if (!rc) rc = find_params(ck, name, n, &t);
    if (!rc) rc = t2__ckpt_read_entries(ck, 1u << (t->info.is_buffer ? E_BUFFERS : E_PARAMS));
    if (!rc) rc = t2_checkpoint_restore_params(ck, name, dst, n);
    t2__ckpt_free(ck);
    return rc;
}

int t2_checkpoint_load_model(const char *path, t2_net *net)
{
    if (!path || !net) return t2_seterr(T2_EINVAL, "t2_checkpoint_load_model: NULL argument");
    t2_checkpoint *ck = NULL;
    /* The entries are read once the tensor table matches net: bounded by the model's size. */
    int rc = t2__ckpt_open_info(&ck, path);
    t2__ckpt_model m = {.net = net, .net_alone = 1};
    if (!rc) rc = t2__ckpt_restore_model(ck, &m, NULL);
    t2__ckpt_free(ck);
    return rc;
}
