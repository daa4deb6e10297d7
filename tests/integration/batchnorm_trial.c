/* batchnorm_trial.c — a small regression net with batchnorm and a raw buffer (a learned output
 * bias), its data sharded over the ranks as the tutorial does: for dist_batchnorm.sh. */
#include <stdlib.h>
#include <t2exp.h>
typedef struct { t2_net *net; t2_optim *opt; float bias[1], gbias[1]; t2_tensor d; } st;
static int get(void *u, int64_t i, float *x, float *t, int32_t *l)
{ (void)u, (void)l; x[0] = (float)(i % 17) / 17; x[1] = (float)(i % 5) / 5; if (t) t[0] = 3 * x[0] - x[1] + 2; return 0; }
static int build_model(t2_ctx *ctx, void **state)
{
    st *s = calloc(1, sizeof *s); int rc; if (!s) return T2_ENOMEM; *state = s;
    int sh[1] = {2};
    if ((rc = t2_net_create(&s->net, 1, sh)) || (rc = t2_net_dense(s->net, 8)) || (rc = t2_net_batchnorm(s->net, 1e-5f, 0.1f)) ||
        (rc = t2_net_relu(s->net)) || (rc = t2_net_dense(s->net, 1)) || (rc = t2_net_init(s->net, t2_ctx_rng(ctx))))
        return rc;
    size_t n; t2_net_params(s->net, &n);
    t2_adam_params ap = t2_adam_default(); ap.lr = 0.05;
    if ((rc = t2_adam_create(&s->opt, &ap, n + 1)) || (rc = t2_tensor_alloc(&s->d, 2, (int[]){t2_ctx_batch_size(ctx), 1})) ||
        (rc = t2_wrap_model(ctx, s->net)) || (rc = t2_wrap_params(ctx, "out.bias", s->bias, s->gbias, 1)) ||
        (rc = t2_wrap_optimizer(ctx, s->opt)))
        return rc;
    return T2_OK;
}
static int mk(t2_ctx *ctx, int train, t2_loader **out)
{
    t2_dataset *ds; t2_dataset_source src = {.name = "d", .len = 200, .ndim = 1, .shape = {2, 1, 1}, .target_width = 1, .get = get};
    int rc = t2_dataset_define(&ds, &src, NULL); if (rc) return rc;
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = train ? t2_ctx_batch_size(ctx) : 200; p.repeat = train; p.shuffle = train; p.drop_last = train; p.seed = t2_ctx_seed(ctx); p.own_dataset = 1; p.rank = t2_ctx_rank(ctx); p.world_size = t2_ctx_size(ctx);
    return t2_loader_create(out, ds, &p);
}
static int btl(t2_ctx *c, void *s, t2_loader **o) { (void)s; return mk(c, 1, o); }
static int bvl(t2_ctx *c, void *s, t2_loader **o) { (void)s; return mk(c, 0, o); }
static int train_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    st *s = state; const t2_tensor *y; int rc; float loss;
    if ((rc = t2_net_forward(s->net, &b->x, T2_TRAIN, t2_ctx_rng(ctx), &y))) return rc;
    t2_tensor pred; if ((rc = t2_tensor_alloc(&pred, 2, (int[]){b->n, 1}))) return rc;
    for (int i = 0; i < b->n; i++) pred.data[i] = y->data[i] + s->bias[0];
    t2_tensor tg = t2_tensor_view(b->targets, 2, (int[]){b->n, 1}), d = s->d; d.shape[0] = b->n;
    rc = t2_loss_mse(&pred, &tg, &loss, &d);
    t2_tensor_free(&pred);
    if (rc) return rc;
    for (int i = 0; i < b->n; i++) s->gbias[0] += d.data[i];
    if ((rc = t2_net_backward(s->net, &d, NULL)) || (rc = t2_step_optimizer(ctx))) return rc;
    return t2_metric(m, "loss", loss);
}
static int evaluate_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)ctx; st *s = state; const t2_tensor *y; int rc; double se = 0;
    if ((rc = t2_net_forward(s->net, &b->x, T2_EVAL, NULL, &y))) return rc;
    for (int i = 0; i < b->n; i++) { double e = y->data[i] + s->bias[0] - b->targets[i]; se += e * e; }
    return t2_metric(m, "val_mse", se / b->n);
}
static void destroy(void *state) { st *s = state; if (!s) return; t2_net_free(s->net); t2_optim_free(s->opt); t2_tensor_free(&s->d); free(s); }
T2_TRIAL(.name = "bnraw", .build_model = build_model, .build_training_loader = btl, .build_validation_loader = bvl,
         .train_batch = train_batch, .evaluate_batch = evaluate_batch, .destroy = destroy);
