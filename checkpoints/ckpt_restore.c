/* ckpt_restore.c — putting a validated checkpoint back into a live model, the getters for the
 * rest of the training state, and the public t2_checkpoint_* calls built on them.
 *
 * Restore checks everything first and copies afterwards, so a mismatch leaves the net, the
 * optimizer and the schedule exactly as they were: a caller that falls back to an older
 * checkpoint, or to a fresh start, never trains from a half-restored model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ckpt_internal.h"
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

/* Every model tensor has a counterpart of the same kind and shape, and vice versa. */
static int check_net(const t2__ckpt *ck, t2_net *net, size_t np, size_t nb)
{
    int nt = t2_net_num_tensors(net);
    for (int i = 0; i < nt; i++) {
        t2_param_info m;
        int rc = t2_net_tensor_info(net, i, &m);
        if (rc) return rc;
        const t2__ckpt_tensor *t = find_tensor(ck, m.name);
        char a[64], b[64];
        shape_text(&m, b, sizeof b);
        if (!t) return t2_seterr(T2_ESHAPE, "checkpoint %s: has no tensor %s (shape %s in the model)", ck->path, m.name, b);
        shape_text(&t->info, a, sizeof a);
        int same = t->info.ndim == m.ndim && t->info.is_buffer == m.is_buffer && t->info.size == m.size;
        for (int d = 0; same && d < m.ndim; d++) same = t->info.shape[d] == m.shape[d];
        if (!same)
            return t2_seterr(T2_ESHAPE, "checkpoint %s: tensor %s has shape %s%s in the checkpoint but %s%s in the model",
                             ck->path, m.name, a, t->info.is_buffer ? " (buffer)" : "", b,
                             m.is_buffer ? " (buffer)" : "");
    }
    if (nt != ck->ntensors) {
        /* Same names are all present; the checkpoint has more. Name one the model lacks. */
        for (int i = 0; i < ck->ntensors; i++) {
            int found = 0;
            for (int j = 0; j < nt && !found; j++) {
                t2_param_info m;
                found = t2_net_tensor_info(net, j, &m) == T2_OK && !strcmp(m.name, ck->tensors[i].info.name);
            }
            if (!found)
                return t2_seterr(T2_ESHAPE, "checkpoint %s: tensor %s is not in the model", ck->path,
                                 ck->tensors[i].info.name);
        }
    }
    if (np != ck->num_params || nb != ck->num_buffers)
        return t2_seterr(T2_ESHAPE, "checkpoint %s: %zu parameters and %zu buffer floats, the model has %zu and %zu",
                         ck->path, ck->num_params, ck->num_buffers, np, nb);
    return T2_OK;
}

static int check_opt(const t2__ckpt *ck, t2_optim *opt, size_t np, size_t *ns)
{
    static const char *const names[] = {"?", "sgd", "adam", "adamw"};
    if (!ck->has_opt) return t2_seterr(T2_ENOTFOUND, "checkpoint %s: has no optimizer state", ck->path);
    int kind = (int)t2_optim_get_kind(opt);
    if (kind != ck->opt_kind)
        return t2_seterr(T2_EINVAL, "checkpoint %s: optimizer is %s in the checkpoint but %s in the model", ck->path,
                         names[ck->opt_kind], kind >= 1 && kind <= 3 ? names[kind] : "?");
    t2_optim_state(opt, ns);
    if (t2_optim_size(opt) != np || *ns != ck->opt_floats)
        return t2_seterr(T2_ESHAPE,
                         "checkpoint %s: optimizer state is %zu floats for %zu parameters in the checkpoint but %zu "
                         "for %zu in the model",
                         ck->path, ck->opt_floats, ck->opt_size, *ns, t2_optim_size(opt));
    return T2_OK;
}

/* rd is ck itself, writable, when the entries may still have to be read (t2__ckpt_restore);
 * NULL from the public API, whose checkpoints are read whole at open. */
static int restore(t2__ckpt *rd, const t2__ckpt *ck, t2_net *net, t2_optim *opt, t2_lr_schedule *sched)
{
    if (!ck || !net) return t2_seterr(T2_EINVAL, "checkpoint restore: NULL checkpoint or net");
    size_t np = 0, nb = 0, ns = 0;
    float *params = t2_net_params(net, &np), *buffers = t2_net_buffers(net, &nb);
    if (!params) return t2_seterr(T2_ESTATE, "checkpoint %s: the net is not initialised (t2_net_init)", ck->path);
    int rc;
    if ((rc = check_net(ck, net, np, nb))) return rc;
    if (opt && (rc = check_opt(ck, opt, np, &ns))) return rc;
    if (sched && !ck->has_lr) return t2_seterr(T2_ENOTFOUND, "checkpoint %s: has no LR-schedule state", ck->path);
    /* Only now, with the sizes checked against the model, are the entries decoded: what a
     * checkpoint can make us read is bounded by the model it is restored into. An optimizer
     * state that is not wanted is checksummed as it streams past, not kept. */
    if (rd && (rc = t2__ckpt_read_entries(rd, 1u << E_PARAMS | 1u << E_BUFFERS | 1u << E_USER |
                                                  (opt ? 1u << E_OPT : 0u))))
        return rc;
    if ((rc = t2__ckpt_have(ck, E_PARAMS)) || (rc = t2__ckpt_have(ck, E_BUFFERS)) ||
        (opt && (rc = t2__ckpt_have(ck, E_OPT))))
        return rc;
    /* Gather the copies first (allocation is the one thing that can still fail), then do them
     * in one pass over the thread pool, checksumming them on the way when open left that to us. */
    t2__ckpt_span *spans = malloc(((size_t)ck->ntensors + 1) * sizeof *spans);
    if (!spans) return t2_seterr(T2_ENOMEM, "checkpoint %s: out of memory", ck->path);
    int n = 0;
    for (int i = 0; i < ck->ntensors; i++) {
        const t2_param_info *t = &ck->tensors[i].info;
        const t2_param_info *m = t;
        t2_param_info mi;
        /* Offsets come from the model: its layout is what its layers point into. */
        for (int j = 0; j < t2_net_num_tensors(net); j++)
            if (t2_net_tensor_info(net, j, &mi) == T2_OK && !strcmp(mi.name, t->name)) {
                m = &mi;
                break;
            }
        const t2__ckpt_entry *en = &ck->e[t->is_buffer ? E_BUFFERS : E_PARAMS];
        float *dst = t->is_buffer ? buffers : params;
        spans[n++] = (t2__ckpt_span){en->data + t->offset * sizeof(float), (unsigned char *)(dst + m->offset),
                                     t->size * sizeof(float), 0, i};
    }
    if (opt && ns)
        spans[n++] = (t2__ckpt_span){ck->e[E_OPT].data, (unsigned char *)t2_optim_state(opt, NULL),
                                     ns * sizeof(float), 0, -1 - E_OPT};
    if (sched) {
        /* Last of the checks and atomic itself: nothing has changed if it fails. */
        if ((rc = t2_lr_schedule_set_state(sched, &ck->lr))) {
            char why[256];
            snprintf(why, sizeof why, "%s", t2_errmsg());
            rc = t2_seterr(rc, "checkpoint %s: %s", ck->path, why);
        }
        if (rc) {
            free(spans);
            return rc;
        }
    }
    rc = t2__ckpt_spans(spans, n, ck->lazy);
    if (!rc && ck->lazy) rc = t2__ckpt_check_spans(ck, spans, n);
    free(spans);
    if (rc) return rc;
    if (opt && (rc = t2_optim_set_step_count(opt, ck->opt_steps))) return rc;
    return T2_OK;
}

int t2__ckpt_restore(t2__ckpt *ck, t2_net *net, t2_optim *opt, t2_lr_schedule *sched)
{
    return restore(ck, ck, net, opt, sched);
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
    info->optimizer_kind = ck->has_opt ? ck->opt_kind : 0;
    info->optimizer_steps = ck->has_opt ? ck->opt_steps : 0;
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

int t2_checkpoint_restore_model(const t2_checkpoint *ck, t2_net *net) { return restore(NULL, ck, net, NULL, NULL); }

int t2_checkpoint_load_model(const char *path, t2_net *net)
{
    if (!path || !net) return t2_seterr(T2_EINVAL, "t2_checkpoint_load_model: NULL argument");
    t2_checkpoint *ck = NULL;
    /* The entries are read once the tensor table matches net: bounded by the model's size. */
    int rc = t2__ckpt_open_info(&ck, path);
    if (!rc) rc = t2__ckpt_restore(ck, net, NULL, NULL);
    t2__ckpt_free(ck);
    return rc;
}
