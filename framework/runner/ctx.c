/* ctx.c — what a trial can ask its context: hyperparameters, the data section, its situation
 * (batch sizes, rank, seed), and wrapping the model (wrap.c has the raw buffers, the
 * optimizers and the managed optimizer step). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ctx.h"
#include "internal.h"

void t2__ctx_init(t2_ctx *ctx, const t2__config *cfg, const t2__val *hparams, int64_t global_batch,
                  int64_t batch_size, int64_t trial_id, uint64_t seed, int threads)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->hparams = hparams;
    ctx->data = cfg ? cfg->data : NULL;
    ctx->global_batch = global_batch;
    ctx->batch_size = batch_size;
    t2__comm_init_single(&ctx->comm);
    ctx->trial_id = trial_id;
    ctx->seed = seed;
    t2_rng_seed(&ctx->rng, seed);
    ctx->threads = threads;
    if (cfg) {
        ctx->clip = cfg->optimizations.clip;
        ctx->clip_max = cfg->optimizations.clip_max;
    }
}

/* Appends n bytes of s to buf (at most cap - 1 in all, NUL-terminated): the new length. */
static size_t append(char *buf, size_t at, size_t cap, const char *s, size_t n)
{
    if (at + 1 >= cap) return at;
    if (n > cap - 1 - at) n = cap - 1 - at;
    memcpy(buf + at, s, n);
    buf[at + n] = '\0';
    return at + n;
}

static size_t append_str(char *buf, size_t at, size_t cap, const char *s) { return append(buf, at, cap, s, strlen(s)); }

/* Lists the top-level keys of a map into buf, for "missing key" messages. */
static const char *keys_of(const t2__val *map, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; map && map->kind == T2__VAL_MAP && i < map->n && off + 1 < len; i++) {
        if (i) off = append(buf, off, len, ", ", 2);
        off = append_str(buf, off, len, map->keys[i]);
    }
    return buf[0] ? buf : "none";
}

/* "SECTION 'KEY' is missing (WHERE has: KEYS)", built without printf: a trial that probes an
 * optional hyperparameter (`if (t2_hp_int(...) != T2_OK) use a default`) meets this every call, and
 * formatting it with snprintf was 40% of a one-batch trial's worker (callgrind). */
static int missing(const char *section, const char *key, size_t plen, const t2__val *where)
{
    char keys[512], msg[1024];
    size_t at = append_str(msg, 0, sizeof msg, section);
    at = append(msg, at, sizeof msg, " '", 2);
    at = append_str(msg, at, sizeof msg, key);
    at = append_str(msg, at, sizeof msg, "' is missing (");
    if (plen) {
        at = append(msg, at, sizeof msg, "'", 1);
        at = append(msg, at, sizeof msg, key, plen);
        at = append_str(msg, at, sizeof msg, "' has: ");
    } else {
        at = append_str(msg, at, sizeof msg, "it has: ");
    }
    at = append_str(msg, at, sizeof msg, keys_of(where, keys, sizeof keys));
    append(msg, at, sizeof msg, ")", 1);
    return t2__seterr_text(T2_ENOTFOUND, msg);
}

static int lookup(const t2__val *root, const char *section, const char *key, const t2__val **out)
{
    char prefix[256];
    if (!key) return t2_seterr(T2_EINVAL, "%s: NULL key", section);
    const t2__val *v = root ? t2__val_lookup(root, key) : NULL;
    if (v) {
        *out = v;
        return T2_OK;
    }
    /* Name the deepest part of a dotted key that exists, and what it holds. */
    const t2__val *parent = root;
    size_t plen = 0;
    for (const char *dot = strchr(key, '.'); dot && parent; dot = strchr(dot + 1, '.')) {
        size_t n = (size_t)(dot - key);
        if (n >= sizeof prefix) break;
        memcpy(prefix, key, n);
        prefix[n] = '\0';
        const t2__val *p = t2__val_lookup(root, prefix);
        if (!p) break;
        if (p->kind != T2__VAL_MAP)
            return t2_seterr(T2_EINVAL, "%s '%s': '%s' is %s, not a map", section, key, prefix,
                             t2__val_kind_article(p->kind));
        parent = p;
        plen = n;
    }
    return missing(section, key, plen, plen ? parent : root);
}

static int get_int(const t2__val *root, const char *section, const char *key, int64_t *out)
{
    const t2__val *v = NULL;
    int rc = lookup(root, section, key, &v);
    if (rc) return rc;
    if (v->kind == T2__VAL_INT) *out = v->i;
    else if (v->kind == T2__VAL_DOUBLE && v->d == floor(v->d) && fabs(v->d) < 9e15) *out = (int64_t)v->d;
    else return t2_seterr(T2_EINVAL, "%s '%s' is %s, not an integer", section, key, t2__val_kind_article(v->kind));
    return T2_OK;
}

static int get_double(const t2__val *root, const char *section, const char *key, double *out)
{
    const t2__val *v = NULL;
    int rc = lookup(root, section, key, &v);
    if (rc) return rc;
    if (t2__val_as_double(v, out) != T2_OK)
        return t2_seterr(T2_EINVAL, "%s '%s' is %s, not a number", section, key, t2__val_kind_article(v->kind));
    return T2_OK;
}

static int get_bool(const t2__val *root, const char *section, const char *key, int *out)
{
    const t2__val *v = NULL;
    int rc = lookup(root, section, key, &v);
    if (rc) return rc;
    if (v->kind != T2__VAL_BOOL)
        return t2_seterr(T2_EINVAL, "%s '%s' is %s, not a boolean", section, key, t2__val_kind_article(v->kind));
    *out = v->b;
    return T2_OK;
}

static int get_str(const t2__val *root, const char *section, const char *key, const char **out)
{
    const t2__val *v = NULL;
    int rc = lookup(root, section, key, &v);
    if (rc) return rc;
    if (v->kind != T2__VAL_STRING)
        return t2_seterr(T2_EINVAL, "%s '%s' is a %s, not a string", section, key, t2__val_kind_name(v->kind));
    *out = v->s;
    return T2_OK;
}

#define CHECK_CTX(ctx, out) \
    if (!(ctx) || !(out)) return t2_seterr(T2_EINVAL, "%s: NULL argument", __func__)

int t2_hp_int(t2_ctx *ctx, const char *key, int64_t *out) { CHECK_CTX(ctx, out); return get_int(ctx->hparams, "hyperparameter", key, out); }
int t2_hp_double(t2_ctx *ctx, const char *key, double *out) { CHECK_CTX(ctx, out); return get_double(ctx->hparams, "hyperparameter", key, out); }
int t2_hp_bool(t2_ctx *ctx, const char *key, int *out) { CHECK_CTX(ctx, out); return get_bool(ctx->hparams, "hyperparameter", key, out); }
int t2_hp_str(t2_ctx *ctx, const char *key, const char **out) { CHECK_CTX(ctx, out); return get_str(ctx->hparams, "hyperparameter", key, out); }
int t2_data_int(t2_ctx *ctx, const char *key, int64_t *out) { CHECK_CTX(ctx, out); return get_int(ctx->data, "data key", key, out); }
int t2_data_double(t2_ctx *ctx, const char *key, double *out) { CHECK_CTX(ctx, out); return get_double(ctx->data, "data key", key, out); }
int t2_data_bool(t2_ctx *ctx, const char *key, int *out) { CHECK_CTX(ctx, out); return get_bool(ctx->data, "data key", key, out); }
int t2_data_str(t2_ctx *ctx, const char *key, const char **out) { CHECK_CTX(ctx, out); return get_str(ctx->data, "data key", key, out); }

int t2_ctx_global_batch_size(const t2_ctx *ctx) { return ctx ? (int)ctx->global_batch : 0; }
int t2_ctx_batch_size(const t2_ctx *ctx) { return ctx ? (int)ctx->batch_size : 0; }
int t2_ctx_rank(const t2_ctx *ctx) { return ctx ? ctx->comm.rank : 0; }
int t2_ctx_size(const t2_ctx *ctx) { return ctx ? ctx->comm.size : 1; }
int64_t t2_ctx_trial_id(const t2_ctx *ctx) { return ctx ? ctx->trial_id : 0; }
uint64_t t2_ctx_seed(const t2_ctx *ctx) { return ctx ? ctx->seed : 0; }
t2_rng *t2_ctx_rng(t2_ctx *ctx) { return ctx ? &ctx->rng : NULL; }
int64_t t2_ctx_batches_trained(const t2_ctx *ctx) { return ctx ? ctx->batches_trained : 0; }
int64_t t2_ctx_epoch(const t2_ctx *ctx) { return ctx ? ctx->epoch : 0; }
int t2_ctx_threads(const t2_ctx *ctx) { return ctx ? ctx->threads : 1; }

int t2_wrap_model(t2_ctx *ctx, t2_net *net)
{
    if (!ctx || !net) return t2_seterr(T2_EINVAL, "t2_wrap_model: NULL argument");
    if (ctx->net && ctx->net != net) return t2_seterr(T2_ESTATE, "t2_wrap_model: a model is already wrapped");
    if (ctx->bound && !ctx->net)
        return t2_seterr(T2_ESTATE, "t2_wrap_model: wrap the model in build_model (the optimizers are bound already)");
    size_t n;
    float *p = t2_net_params(net, &n);
    if (!p) return t2_seterr(T2_ESTATE, "t2_wrap_model: call t2_net_init before wrapping the model");
    /* Every rank starts from rank 0's initial weights. */
    int rc = t2__comm_broadcast(&ctx->comm, p, n * sizeof(float));
    if (rc) return rc;
    ctx->net = net;
    return T2_OK;
}

int t2_wrap_lr_schedule(t2_ctx *ctx, t2_lr_schedule *sched)
{
    if (!ctx || !sched) return t2_seterr(T2_EINVAL, "t2_wrap_lr_schedule: NULL argument");
    if (ctx->sched && ctx->sched != sched)
        return t2_seterr(T2_ESTATE, "t2_wrap_lr_schedule: a schedule is already wrapped");
    ctx->sched = sched;
    return T2_OK;
}

int t2__is_plateau(const t2_lr_schedule *s)
{
    t2_lr_state st;
    return s && t2_lr_schedule_get_state(s, &st) == T2_OK && st.kind == T2_LR_PLATEAU;
}

