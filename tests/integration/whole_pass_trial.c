/* whole_pass_trial.c — a trial whose searcher metric exists only for the whole validation pass
 * (evaluate_end): val_rmse = sqrt(sum of squared errors / samples), over N_VALID samples in
 * batches of 3 (a short last one), sharded over the trial's ranks. The "model" is y = w * x with
 * w from the hparams (a 1 -> 1 net is wrapped only so that the trial checkpoints; training repeats the
 * same samples); sample i has
 * x = i and target 2i + (i mod 3), so the RMSE is known in advance. Hparams for the error tests:
 * end_dup (evaluate_end reports sse again), end_twice (val_rmse twice), end_nan (val_rmse is NaN),
 * end_skip_after (no val_rmse once past that many batches); hits_rank0_after: past that many
 * batches only rank 0 reports `hits` (the samples it saw), which evaluate_end reads on every rank
 * as val_hits. Public header only. */
#include <math.h>
#include <stdlib.h>
#include <t2exp.h>

#define N_VALID 10

typedef struct {
    double w;
    int64_t end_dup, end_twice, end_nan, end_skip_after, hits_rank0_after;
    t2_net *net;
} wp;

static int64_t opt_int(t2_ctx *ctx, const char *key)
{
    int64_t v = 0;
    return t2_hp_int(ctx, key, &v) == T2_OK ? v : 0;
}

static int build_model(t2_ctx *ctx, void **state)
{
    wp *s = calloc(1, sizeof *s);
    if (!s) return t2_seterr(T2_ENOMEM, "whole_pass: out of memory");
    *state = s;
    int rc = t2_hp_double(ctx, "w", &s->w);
    s->end_dup = opt_int(ctx, "end_dup");
    s->end_twice = opt_int(ctx, "end_twice");
    s->end_nan = opt_int(ctx, "end_nan");
    s->end_skip_after = opt_int(ctx, "end_skip_after");
    s->hits_rank0_after = opt_int(ctx, "hits_rank0_after");
    if (rc || (rc = t2_net_create(&s->net, 1, (int[]){1})) || (rc = t2_net_dense(s->net, 1)) ||
        (rc = t2_net_init(s->net, t2_ctx_rng(ctx))))
        return rc;
    return t2_wrap_model(ctx, s->net);
}

/* The N_VALID samples (label = index), batches of 3 sharded over the ranks; repeating to train. */
static int loader(t2_ctx *ctx, int train, t2_loader **out)
{
    float x[N_VALID];
    int32_t labels[N_VALID];
    for (int i = 0; i < N_VALID; i++) x[i] = (float)i, labels[i] = i;
    t2_tensor t = t2_tensor_view(x, 2, (int[]){N_VALID, 1});
    t2_dataset *ds = NULL;
    int rc = t2_dataset_from_tensor(&ds, &t, labels, 1);
    if (rc) return rc;
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = 3;
    p.repeat = train;
    p.own_dataset = 1;
    p.rank = t2_ctx_rank(ctx);
    p.world_size = t2_ctx_size(ctx);
    return t2_loader_create(out, ds, &p);
}

static int train_loader(t2_ctx *ctx, void *state, t2_loader **out)
{
    (void)state;
    return loader(ctx, 1, out);
}

static int valid_loader(t2_ctx *ctx, void *state, t2_loader **out)
{
    (void)state;
    return loader(ctx, 0, out);
}

static int train_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)b;
    (void)ctx;
    wp *s = state;
    return t2_metric(m, "loss", s->w * s->w);
}

static int evaluate_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    wp *s = state;
    double sse = 0;
    for (int k = 0; k < b->n; k++) {
        int i = b->labels[k];
        double err = s->w * i - (2.0 * i + i % 3);
        sse += err * err;
    }
    int rc;
    if ((rc = t2_metric_reduce(m, "sse", sse, T2_REDUCE_SUM)) || (rc = t2_metric_reduce(m, "count", b->n, T2_REDUCE_SUM)))
        return rc;
    if (s->hits_rank0_after &&
        (t2_ctx_batches_trained(ctx) <= s->hits_rank0_after || t2_ctx_rank(ctx) == 0) &&
        (rc = t2_metric_reduce(m, "hits", b->n, T2_REDUCE_SUM)))
        return rc;
    return t2_metric(m, "val_mse", sse / b->n); /* the per-sample mean, as a MEAN reducer gives it */
}

static int evaluate_end(t2_ctx *ctx, void *state, t2_metrics *m)
{
    wp *s = state;
    double sse, n;
    int rc;
    if ((rc = t2_metrics_get(m, "sse", &sse)) || (rc = t2_metrics_get(m, "count", &n))) return rc;
    if (s->end_dup) return t2_metric(m, "sse", sse);
    if (s->end_skip_after && t2_ctx_batches_trained(ctx) > s->end_skip_after) return T2_OK;
    if (s->hits_rank0_after) {
        double hits;
        if ((rc = t2_metrics_get(m, "hits", &hits)) || (rc = t2_metric(m, "val_hits", hits))) return rc;
    }
    if (s->end_twice && (rc = t2_metric(m, "val_rmse", sqrt(sse / n)))) return rc;
    return t2_metric(m, "val_rmse", s->end_nan ? NAN : sqrt(sse / n));
}

static void destroy(void *state)
{
    wp *s = state;
    if (s) t2_net_free(s->net);
    free(s);
}

#ifdef WHOLE_PASS_ABI1
/* As an object built for the first trial ABI, whose vtable ended before evaluate_end: the runner
 * must read only that much (the member set here is past it, and never called). */
__attribute__((visibility("default"))) const t2_trial_def t2_trial = {
    .abi_version = 1, .name = "whole_pass_v1", .build_model = build_model, .build_training_loader = train_loader,
    .build_validation_loader = valid_loader, .train_batch = train_batch, .evaluate_batch = evaluate_batch,
    .destroy = destroy, .evaluate_end = evaluate_end};
#else
T2_TRIAL(.name = "whole_pass", .build_model = build_model, .build_training_loader = train_loader,
         .build_validation_loader = valid_loader, .train_batch = train_batch, .evaluate_batch = evaluate_batch,
         .evaluate_end = evaluate_end, .destroy = destroy);
#endif
