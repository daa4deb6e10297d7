/* wrap.c — raw parameter buffers, the optimizers that cover them, and the framework-managed
 * optimizer step over everything wrapped.
 *
 * The wrapped parameters are segments: the net's flat buffer (if a net is wrapped), then each
 * raw buffer in wrap order. Every segment is averaged across ranks, clipped by one global norm
 * over all of them, and stepped by exactly one optimizer. An optimizer covering several segments
 * numbers its parameters by laying them end to end (t2_wrap_optimizer: net first, then the raw
 * buffers; t2_wrap_optimizer_for: in the order of the names given), and steps them slice by
 * slice (optim/optim_slice.h), so the update is the one a contiguous buffer would get. */
#include <stdio.h>
#include <string.h>
#include "ctx.h"
#include "optim/optim_slice.h"

/* Pointers and size of segment s (-1: the net). */
static void seg_get(t2_ctx *ctx, int s, float **p, float **g, size_t *n)
{
    if (s < 0) {
        *p = t2_net_params(ctx->net, n);
        *g = t2_net_grads(ctx->net, NULL);
    } else {
        *p = ctx->raw[s].p;
        *g = ctx->raw[s].g;
        *n = ctx->raw[s].n;
    }
}

static size_t seg_size(t2_ctx *ctx, int s)
{
    float *p, *g;
    size_t n = 0;
    seg_get(ctx, s, &p, &g, &n);
    return n;
}

static const char *seg_name(const t2_ctx *ctx, int s) { return s < 0 ? "model" : ctx->raw[s].name; }

/* Letters, digits, '.', '_' and '-': what a net's tensor names use, safe in messages and export. */
static int name_ok(const char *s)
{
    size_t len = s ? strlen(s) : 0;
    if (len == 0 || len >= sizeof(((t2__raw_buf *)0)->name)) return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-'))
            return 0;
    }
    return 1;
}

/* T2_EINVAL if raw buffer name is also a tensor of the wrapped net (the checkpoint's tensor table
 * holds both, by name). */
static int clash_with_net(const t2_ctx *ctx, const char *name, const char *who)
{
    int nt = ctx->net ? t2_net_num_tensors(ctx->net) : 0;
    for (int i = 0; i < nt; i++) {
        t2_param_info t;
        if (t2_net_tensor_info(ctx->net, i, &t) == T2_OK && !strcmp(t.name, name))
            return t2_seterr(T2_EINVAL, "%s: the name '%s' is a tensor of the wrapped model; choose another", who, name);
    }
    return T2_OK;
}

static int overlap(const float *a, size_t na, const float *b, size_t nb)
{
    return (const char *)a < (const char *)(b + nb) && (const char *)b < (const char *)(a + na);
}

int t2_wrap_params(t2_ctx *ctx, const char *name, float *params, float *grads, size_t n)
{
    static const char who[] = "t2_wrap_params";
    if (!ctx || !name || !params || !grads) return t2_seterr(T2_EINVAL, "%s: NULL argument", who);
    if (!name_ok(name))
        return t2_seterr(T2_EINVAL, "%s: name '%.64s' must be 1..47 letters, digits, '.', '_' or '-'", who, name);
    if (!strcmp(name, "model"))
        return t2_seterr(T2_EINVAL, "%s: the name 'model' stands for the wrapped net; choose another", who);
    if (n == 0 || n > (size_t)INT32_MAX)
        return t2_seterr(T2_EINVAL, "%s: buffer '%s' has %zu floats (1..%d)", who, name, n, INT32_MAX);
    if (overlap(params, n, grads, n)) return t2_seterr(T2_EINVAL, "%s: buffer '%s': params and grads overlap", who, name);
    if (ctx->bound) return t2_seterr(T2_ESTATE, "%s: wrap '%s' in build_model, before training starts", who, name);
    for (int k = 0; k < ctx->nraw; k++) {
        const t2__raw_buf *r = &ctx->raw[k];
        if (!strcmp(r->name, name)) return t2_seterr(T2_EINVAL, "%s: a buffer named '%s' is already wrapped", who, name);
        if (overlap(params, n, r->p, r->n) || overlap(grads, n, r->g, r->n) || overlap(params, n, r->g, r->n) ||
            overlap(grads, n, r->p, r->n))
            return t2_seterr(T2_EINVAL, "%s: buffer '%s' overlaps the wrapped buffer '%s'", who, name, r->name);
    }
    int rc = clash_with_net(ctx, name, who);
    if (rc) return rc;
    if (ctx->nraw == T2__MAX_RAW) return t2_seterr(T2_EINVAL, "%s: more than %d raw buffers", who, T2__MAX_RAW);
    /* Every rank starts from rank 0's values, as for a wrapped net. */
    if ((rc = t2__comm_broadcast(&ctx->comm, params, n * sizeof(float)))) return rc;
    memset(grads, 0, n * sizeof(float));
    t2__raw_buf *r = &ctx->raw[ctx->nraw];
    snprintf(r->name, sizeof r->name, "%s", name);
    r->p = params;
    r->g = grads;
    r->n = n;
    ctx->ckraw[ctx->nraw] = (t2__ckpt_raw){r->name, params, n};
    ctx->nraw++;
    return T2_OK;
}

int t2_wrap_optimizer(t2_ctx *ctx, t2_optim *opt)
{
    if (!ctx || !opt) return t2_seterr(T2_EINVAL, "t2_wrap_optimizer: NULL argument");
    if (ctx->bind_all && ctx->opt == opt) return T2_OK;
    if (ctx->nbind)
        return t2_seterr(T2_ESTATE, "t2_wrap_optimizer: an optimizer is already wrapped (several optimizers: "
                                    "t2_wrap_optimizer_for each)");
    ctx->bind[0] = (t2__opt_bind){.opt = opt};
    ctx->nbind = 1;
    ctx->bind_all = 1;
    ctx->opt = opt;
    return T2_OK;
}

/* The names wrapped so far, for messages. */
static const char *wrapped_names(const t2_ctx *ctx, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int s = ctx->net ? -1 : 0; s < ctx->nraw && off + 1 < len; s++) {
        int w = snprintf(buf + off, len - off, "%s%s", off ? ", " : "", seg_name(ctx, s));
        if (w < 0) break;
        off += (size_t)w;
    }
    return buf[0] ? buf : "nothing";
}

/* The optimizer covering segment s, or -1. */
static int covered_by(const t2_ctx *ctx, int s)
{
    for (int b = 0; b < ctx->nbind; b++)
        for (int i = 0; i < ctx->bind[b].nseg; i++)
            if (ctx->bind[b].seg[i] == s) return b;
    return -1;
}

int t2_wrap_optimizer_for(t2_ctx *ctx, t2_optim *opt, const char *const *names, int nnames)
{
    static const char who[] = "t2_wrap_optimizer_for";
    char list[1024];
    if (!ctx || !opt || !names) return t2_seterr(T2_EINVAL, "%s: NULL argument", who);
    if (nnames < 1 || nnames > T2__MAX_RAW + 1)
        return t2_seterr(T2_EINVAL, "%s: %d names (1..%d)", who, nnames, T2__MAX_RAW + 1);
    if (ctx->bind_all)
        return t2_seterr(T2_ESTATE, "%s: t2_wrap_optimizer already wrapped an optimizer over everything", who);
    if (ctx->bound) return t2_seterr(T2_ESTATE, "%s: wrap optimizers in build_model, before training starts", who);
    if (ctx->nbind == T2__CKPT_MAX_OPTS) return t2_seterr(T2_EINVAL, "%s: more than %d optimizers", who, T2__CKPT_MAX_OPTS);
    for (int b = 0; b < ctx->nbind; b++)
        if (ctx->bind[b].opt == opt) return t2_seterr(T2_EINVAL, "%s: this optimizer is wrapped already", who);
    t2__opt_bind nb = {.opt = opt};
    size_t total = 0;
    for (int i = 0; i < nnames; i++) {
        const char *nm = names[i] ? names[i] : "(null)";
        int s = -2;
        if (!strcmp(nm, "model") && ctx->net) s = -1;
        for (int k = 0; k < ctx->nraw && s == -2; k++)
            if (!strcmp(ctx->raw[k].name, nm)) s = k;
        if (s == -2)
            return t2_seterr(T2_ENOTFOUND, "%s: nothing wrapped is named '%.64s' (wrapped: %s; wrap buffers before "
                             "their optimizer)", who, nm, wrapped_names(ctx, list, sizeof list));
        int b = covered_by(ctx, s);
        for (int j = 0; j < nb.nseg && b < 0; j++)
            if (nb.seg[j] == s) b = ctx->nbind;
        if (b >= 0)
            return t2_seterr(T2_EINVAL, "%s: '%s' is covered twice (%s)", who, nm,
                             b == ctx->nbind ? "named twice" : "by an optimizer wrapped before");
        nb.seg[nb.nseg++] = s;
        total += seg_size(ctx, s);
    }
    if (total != t2_optim_size(opt))
        return t2_seterr(T2_ESHAPE, "%s: the optimizer is for %zu parameters but the %d buffer%s named hold %zu", who,
                         t2_optim_size(opt), nnames, nnames == 1 ? "" : "s", total);
    ctx->bind[ctx->nbind++] = nb;
    if (!ctx->opt) ctx->opt = opt;
    return T2_OK;
}

int t2__ctx_bind(t2_ctx *ctx)
{
    char list[1024];
    if (ctx->bound || ctx->nbind == 0) return T2_OK;
    for (int k = 0; k < ctx->nraw; k++) {
        int rc = clash_with_net(ctx, ctx->raw[k].name, "t2_wrap_params");
        if (rc) return rc;
    }
    if (ctx->bind_all) {
        t2__opt_bind *b = &ctx->bind[0];
        size_t total = 0;
        b->nseg = 0;
        for (int s = ctx->net ? -1 : 0; s < ctx->nraw; s++) {
            b->seg[b->nseg++] = s;
            total += seg_size(ctx, s);
        }
        if (b->nseg == 0)
            return t2_seterr(T2_ESTATE, "t2_wrap_optimizer: nothing to optimize (t2_wrap_model or t2_wrap_params first)");
        if (total != t2_optim_size(b->opt))
            return t2_seterr(T2_ESHAPE, "t2_wrap_optimizer: the optimizer is for %zu parameters but the wrapped %s "
                             "hold %zu (the optimizer covers them all, the model first; one per buffer: "
                             "t2_wrap_optimizer_for)", t2_optim_size(b->opt), wrapped_names(ctx, list, sizeof list),
                             total);
    } else {
        for (int s = ctx->net ? -1 : 0; s < ctx->nraw; s++) {
            if (covered_by(ctx, s) >= 0) continue;
            if (s < 0) return t2_seterr(T2_EINVAL, "t2_wrap_optimizer_for: the model is covered by no optimizer");
            return t2_seterr(T2_EINVAL, "t2_wrap_optimizer_for: raw buffer '%s' is covered by no optimizer",
                             ctx->raw[s].name);
        }
    }
    for (int b = 0; b < ctx->nbind; b++) ctx->opts[b] = ctx->bind[b].opt;
    ctx->bound = 1;
    return T2_OK;
}

int t2__ctx_has_model(const t2_ctx *ctx) { return ctx->net || ctx->nraw > 0; }

size_t t2__ctx_num_params(const t2_ctx *ctx)
{
    size_t n = 0;
    if (ctx->net) t2_net_params(ctx->net, &n);
    for (int k = 0; k < ctx->nraw; k++) n += ctx->raw[k].n;
    return n;
}

t2__ckpt_model t2__ctx_ckpt_model(t2_ctx *ctx, int with_opts)
{
    t2__ckpt_model m = {.net = ctx->net, .raw = ctx->ckraw, .nraw = ctx->nraw};
    if (with_opts && ctx->bound) {
        m.opts = ctx->opts;
        m.nopts = ctx->nbind;
    }
    return m;
}

int t2_step_optimizer(t2_ctx *ctx)
{
    if (!ctx) return t2_seterr(T2_EINVAL, "t2_step_optimizer: NULL context");
    if (ctx->phase == T2__PHASE_OTHER)
        return t2_seterr(T2_ESTATE, "t2_step_optimizer belongs in train_batch: called from another callback "
                         "(build_model, evaluate_batch, ...), it would change the model outside training");
    if (!t2__ctx_has_model(ctx) || !ctx->nbind)
        return t2_seterr(T2_ESTATE, "t2_step_optimizer: wrap the model (t2_wrap_model or t2_wrap_params) and the "
                         "optimizer (t2_wrap_optimizer) first, in build_model");
    int rc = t2__ctx_bind(ctx);
    if (rc) return rc;
    float *gs[T2__MAX_RAW + 1];
    size_t ns[T2__MAX_RAW + 1];
    int k = 0;
    for (int s = ctx->net ? -1 : 0; s < ctx->nraw; s++, k++) {
        float *p;
        seg_get(ctx, s, &p, &gs[k], &ns[k]);
        if ((rc = t2__comm_allreduce_mean(&ctx->comm, gs[k], ns[k]))) return rc;
    }
    /* One norm over every wrapped gradient, as torch's clip_grad_norm_ over all parameters. */
    if (ctx->clip == T2__CLIP_NORM) rc = t2__clip_grad_norm_multi(gs, ns, k, ctx->clip_max, NULL);
    for (int i = 0; !rc && ctx->clip == T2__CLIP_VALUE && i < k; i++) rc = t2_clip_grad_value(gs[i], ns[i], ctx->clip_max);
    if (rc) return rc;
    /* The wrapped schedule sets every optimizer's rate. */
    for (int b = 0; b < ctx->nbind; b++) {
        t2__opt_bind *ob = &ctx->bind[b];
        if (ctx->sched && (rc = t2_optim_set_lr(ob->opt, t2_lr_schedule_lr(ctx->sched)))) return rc;
        float *p, *g;
        size_t n;
        if (ob->nseg == 1) {
            seg_get(ctx, ob->seg[0], &p, &g, &n);
            if ((rc = t2_optim_step(ob->opt, p, g, n))) return rc;
            continue;
        }
        size_t off = 0;
        for (int i = 0; i < ob->nseg; i++) {
            seg_get(ctx, ob->seg[i], &p, &g, &n);
            if ((rc = t2__optim_step_slice(ob->opt, off, p, g, n))) return rc;
            off += n;
        }
        t2__optim_advance(ob->opt);
    }
    if (ctx->net) t2_net_zero_grad(ctx->net);
    for (int i = 0; i < ctx->nraw; i++) memset(ctx->raw[i].g, 0, ctx->raw[i].n * sizeof(float));
    ctx->optimizer_steps++;
    if (ctx->sched && t2_lr_schedule_step_mode(ctx->sched) == T2_LR_STEP_BATCH && !t2__is_plateau(ctx->sched)) {
        rc = t2_lr_schedule_step(ctx->sched);
        /* A finished one-cycle schedule keeps its last rate rather than failing the trial. */
        if (rc == T2_ESTATE) rc = T2_OK;
    }
    return rc;
}
