/* tutorial_trial.c — the trial built step by step in docs/writing-a-trial.md: a one-hidden-layer
 * MLP on Fashion-MNIST (GELU, dropout, raw logits), softmax cross-entropy with label smoothing,
 * AdamW, and a learning rate that decays exponentially per epoch.
 * hparams: global_batch_size, hidden, dropout, label_smoothing,
 *          optimizer.lr, optimizer.weight_decay, schedule.gamma.
 * data:    cache_dir (optional; where prepare_data puts the decoded dataset, default
 *          $T2EXP_HOME/cache). */
#include <stdio.h>
#include <stdlib.h>
#include <t2exp.h>

typedef struct {
    t2_net *net;
    t2_optim *opt;
    t2_lr_schedule *sched;
    t2_tensor dlogits; /* d(loss)/d(logits), [per-slot batch size, 10] */
    float label_smoothing;
} tut;

/* ---- data: decode the gzip'd IDX files once per experiment, map the cache in every trial ---- */

/* data.cache_dir, or NULL for the library's private default ($T2EXP_HOME/cache, ...). */
static const char *cache_dir(t2_ctx *ctx)
{
    const char *dir = NULL;
    if (t2_data_str(ctx, "cache_dir", &dir) != T2_OK || !*dir) dir = NULL;
    return dir;
}

static int prepare_data(t2_ctx *ctx)
{
    const char *splits[] = {"train", "test"};
    for (int i = 0; i < 2; i++) {
        t2_dataset *ds = NULL; /* opening through the cache writes it when it is missing or stale */
        int rc = t2_dataset_fashion_mnist_cached(&ds, splits[i], NULL, cache_dir(ctx));
        t2_dataset_free(ds);
        if (rc) return rc;
    }
    return T2_OK;
}

static int make_loader(t2_ctx *ctx, const char *split, int train, t2_loader **out)
{
    t2_dataset *ds = NULL;
    int rc = t2_dataset_fashion_mnist_cached(&ds, split, NULL, cache_dir(ctx));
    if (rc) return rc;
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = train ? t2_ctx_batch_size(ctx) : 1000; /* per slot, not global */
    p.shuffle = train;
    p.drop_last = train;
    p.repeat = train;                 /* training streams forever; validation is one pass */
    p.seed = t2_ctx_seed(ctx);
    p.rank = t2_ctx_rank(ctx);        /* each rank reads its own shard of every global */
    p.world_size = t2_ctx_size(ctx);  /* batch; validation metrics are reduced across ranks */
    p.num_workers = 1;
    p.own_dataset = 1;                /* the loader frees the dataset */
    return t2_loader_create(out, ds, &p);
}

static int build_training_loader(t2_ctx *ctx, void *state, t2_loader **out)
{
    (void)state;
    return make_loader(ctx, "train", 1, out);
}

static int build_validation_loader(t2_ctx *ctx, void *state, t2_loader **out)
{
    (void)state;
    return make_loader(ctx, "test", 0, out);
}

/* ---- model, optimizer, schedule ---- */

static int build_model(t2_ctx *ctx, void **state)
{
    int64_t hidden;
    double dropout, smoothing, gamma;
    int rc;
    t2_adam_params ap = t2_adamw_default();
    if ((rc = t2_hp_int(ctx, "hidden", &hidden)) || (rc = t2_hp_double(ctx, "dropout", &dropout)) ||
        (rc = t2_hp_double(ctx, "label_smoothing", &smoothing)) ||
        (rc = t2_hp_double(ctx, "optimizer.lr", &ap.lr)) ||
        (rc = t2_hp_double(ctx, "optimizer.weight_decay", &ap.weight_decay)) ||
        (rc = t2_hp_double(ctx, "schedule.gamma", &gamma)))
        return rc;

    tut *s = calloc(1, sizeof *s);
    if (!s) return t2_seterr(T2_ENOMEM, "tutorial: out of memory");
    *state = s; /* from here on, the runner calls destroy(s) whatever happens */
    s->label_smoothing = (float)smoothing;

    int shape[3] = {1, 28, 28};
    if ((rc = t2_net_create(&s->net, 3, shape)) || (rc = t2_net_flatten(s->net)) ||
        (rc = t2_net_dense(s->net, (int)hidden)) || (rc = t2_net_gelu(s->net)) ||
        (rc = t2_net_dropout(s->net, (float)dropout)) || (rc = t2_net_dense(s->net, 10)) ||
        (rc = t2_net_init(s->net, t2_ctx_rng(ctx))))
        return rc;

    size_t n;
    t2_net_params(s->net, &n);
    if ((rc = t2_adamw_create(&s->opt, &ap, n))) return rc;

    /* lr = optimizer.lr * gamma^epoch. The step mode says who advances the schedule: EPOCH =
     * the framework, at every epoch boundary. */
    t2_lr_params lp = t2_lr_default(T2_LR_EXPONENTIAL, ap.lr);
    lp.gamma = gamma;
    lp.step_mode = T2_LR_STEP_EPOCH;
    if ((rc = t2_lr_schedule_create(&s->sched, &lp))) return rc;

    if ((rc = t2_tensor_alloc(&s->dlogits, 2, (int[]){t2_ctx_batch_size(ctx), 10}))) return rc;

    /* Hand the three objects to the framework: gradient averaging, checkpoints, lr stepping. */
    if ((rc = t2_wrap_model(ctx, s->net)) || (rc = t2_wrap_optimizer(ctx, s->opt)) ||
        (rc = t2_wrap_lr_schedule(ctx, s->sched)))
        return rc;
    return T2_OK;
}

/* ---- one batch ---- */

static int train_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    tut *s = state;
    const t2_tensor *logits;
    t2_tensor d = s->dlogits;
    d.shape[0] = b->n;
    float loss;
    int64_t correct;
    int rc;
    if ((rc = t2_net_forward(s->net, &b->x, T2_TRAIN, t2_ctx_rng(ctx), &logits)) ||
        (rc = t2_loss_softmax_xent(logits, b->labels, s->label_smoothing, &loss, &d)) ||
        (rc = t2_topk_correct(logits, b->labels, 1, &correct)) ||
        (rc = t2_net_backward(s->net, &d, NULL)) ||
        (rc = t2_step_optimizer(ctx))) /* allreduce, clip, lr, step, zero grads */
        return rc;
    if ((rc = t2_metric(m, "loss", loss)) || (rc = t2_metric(m, "accuracy", (double)correct / b->n)))
        return rc;
    return t2_metric_reduce(m, "lr", t2_optim_lr(s->opt), T2_REDUCE_MAX);
}

static int evaluate_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)ctx;
    tut *s = state;
    const t2_tensor *logits;
    float loss;
    int64_t top1, top3;
    int rc;
    if ((rc = t2_net_forward(s->net, &b->x, T2_EVAL, NULL, &logits)) ||
        (rc = t2_loss_softmax_xent(logits, b->labels, 0.0f, &loss, NULL)) ||
        (rc = t2_topk_correct(logits, b->labels, 1, &top1)) ||
        (rc = t2_topk_correct(logits, b->labels, 3, &top3)))
        return rc;
    if ((rc = t2_metric(m, "validation_loss", loss)) ||
        (rc = t2_metric(m, "validation_accuracy", (double)top1 / b->n)) ||
        (rc = t2_metric(m, "validation_top3_accuracy", (double)top3 / b->n)) ||
        (rc = t2_metric_reduce(m, "validation_errors", (double)(b->n - top1), T2_REDUCE_SUM)))
        return rc;
    return t2_metric_reduce(m, "validation_worst_batch_loss", loss, T2_REDUCE_MAX);
}

static void destroy(void *state)
{
    tut *s = state;
    if (!s) return;
    t2_lr_schedule_free(s->sched);
    t2_optim_free(s->opt);
    t2_net_free(s->net);
    t2_tensor_free(&s->dlogits);
    free(s);
}

T2_TRIAL(.name = "tutorial_trial", .prepare_data = prepare_data, .build_model = build_model,
         .build_training_loader = build_training_loader, .build_validation_loader = build_validation_loader,
         .train_batch = train_batch, .evaluate_batch = evaluate_batch, .destroy = destroy);
