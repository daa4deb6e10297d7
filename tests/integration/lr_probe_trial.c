/* lr_probe_trial.c — reads its optimizer's lr before each step and reports it (the rate the previous
 * step used), under an exponential per-batch schedule; with data.fail_once_file it fails once at
 * batch 25 (removing the file), so the restart restores the batch-25 checkpoint (with a checkpoint every 5). For ckpt_restore_lr.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <t2exp.h>
typedef struct { float w[1], g[1]; t2_optim *opt; t2_lr_schedule *sched; } st;
static int get(void *u, int64_t i, float *x, float *t, int32_t *l) { (void)u, (void)l; x[0] = (float)(i % 10) / 10; if (t) t[0] = 2 * x[0]; return 0; }
static int build_model(t2_ctx *ctx, void **state)
{
    st *s = calloc(1, sizeof *s); int rc;
    if (!s) return T2_ENOMEM;
    *state = s;
    t2_sgd_params sp = t2_sgd_default(); sp.lr = 0.1;
    t2_lr_params lp = t2_lr_default(T2_LR_EXPONENTIAL, 0.1); lp.gamma = 0.9;   /* BATCH mode */
    if ((rc = t2_wrap_params(ctx, "w", s->w, s->g, 1)) || (rc = t2_sgd_create(&s->opt, &sp, 1)) ||
        (rc = t2_wrap_optimizer(ctx, s->opt)) || (rc = t2_lr_schedule_create(&s->sched, &lp)) ||
        (rc = t2_wrap_lr_schedule(ctx, s->sched)))
        return rc;
    return T2_OK;
}
static int mk(t2_ctx *ctx, int train, t2_loader **out)
{
    t2_dataset *ds; t2_dataset_source src = {.name = "d", .len = 100, .ndim = 1, .shape = {1, 1, 1}, .target_width = 1, .get = get};
    int rc = t2_dataset_define(&ds, &src, NULL); if (rc) return rc;
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = train ? t2_ctx_batch_size(ctx) : 50; p.repeat = train; p.shuffle = train; p.seed = t2_ctx_seed(ctx); p.own_dataset = 1;
    return t2_loader_create(out, ds, &p);
}
static int btl(t2_ctx *c, void *s, t2_loader **o) { (void)s; return mk(c, 1, o); }
static int bvl(t2_ctx *c, void *s, t2_loader **o) { (void)s; return mk(c, 0, o); }
static int train_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    st *s = state; int rc;
    const char *flag = NULL;
    if (t2_data_str(ctx, "fail_once_file", &flag) == T2_OK && t2_ctx_batches_trained(ctx) == 25 && remove(flag) == 0)
        return t2_seterr(T2_ETRIAL, "lrprobe: failing once at batch 25");
    for (int i = 0; i < b->n; i++) s->g[0] += 2 * (s->w[0] * b->x.data[i] - b->targets[i]) * b->x.data[i] / b->n;
    double lr_used_last = t2_optim_lr(s->opt);          /* the lr the previous step used */
    if ((rc = t2_step_optimizer(ctx))) return rc;
    return t2_metric_reduce(m, "lr_before_step", lr_used_last, T2_REDUCE_MAX);
}
static int evaluate_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)ctx; st *s = state; double e = 0;
    for (int i = 0; i < b->n; i++) e += (s->w[0] * b->x.data[i] - b->targets[i]) * (s->w[0] * b->x.data[i] - b->targets[i]);
    return t2_metric(m, "val_mse", e / b->n);
}
static void destroy(void *state) { st *s = state; if (!s) return; t2_optim_free(s->opt); t2_lr_schedule_free(s->sched); free(s); }
T2_TRIAL(.name = "lrprobe", .build_model = build_model, .build_training_loader = btl, .build_validation_loader = bvl,
         .train_batch = train_batch, .evaluate_batch = evaluate_batch, .destroy = destroy);
