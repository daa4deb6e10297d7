/* fashion_mnist_common.h — what the Fashion-MNIST example trials share: preparing the data once
 * per experiment (a memory-mapped cache every trial then shares through the page cache), the
 * loaders, and the classification train/evaluate steps with NLL on log-softmax outputs. Uses
 * only the public header, like any user trial. */
#ifndef FASHION_MNIST_COMMON_H
#define FASHION_MNIST_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <t2exp.h>

typedef struct fm_state {
    t2_net *net;
    t2_optim *opt;
    t2_lr_schedule *sched; /* cosine annealing per epoch when hparam cosine_epochs > 0 */
    t2_tensor dlogp; /* loss gradient buffer, [batch, 10] */
} fm_state;

/* The IDX directory: data.dir if set and non-empty, else the Debian package's. */
static inline const char *fm_dir(t2_ctx *ctx)
{
    const char *dir = NULL;
    if (t2_data_str(ctx, "dir", &dir) != T2_OK || !dir || !*dir) dir = NULL;
    return dir ? dir : t2_fashion_mnist_dir();
}

/* Where the decoded splits are cached: data.cache_dir if set and non-empty, else NULL, the
 * library's private default ($T2EXP_HOME/cache, else $XDG_CACHE_HOME/t2exp, else
 * ~/.cache/t2exp). */
static inline const char *fm_cache_dir(t2_ctx *ctx)
{
    const char *cache = NULL;
    if (t2_data_str(ctx, "cache_dir", &cache) != T2_OK || !cache || !*cache) cache = NULL;
    return cache;
}

/* A dataset cache another program prepared for this split (a pipeline's prepare stage):
 * data.train_cache / data.test_cache if set and non-empty, else NULL. A relative path is taken
 * from the working directory (a pipeline stage's is the flow file's directory). */
static inline const char *fm_prepared(t2_ctx *ctx, const char *split)
{
    const char *path = NULL;
    const char *key = strcmp(split, "train") == 0 ? "train_cache" : "test_cache";
    if (t2_data_str(ctx, key, &path) != T2_OK || !path || !*path) path = NULL;
    return path;
}

/* The split: the prepared cache, mapped as it is (t2_dataset_cache_open: no copy, refused unless
 * it is this user's and nobody else can write it); else through the library's own cache, mapped
 * when it was made from these very IDX files (same path, size, modification time), rebuilt from
 * them otherwise, never used without them. */
static inline int fm_open(t2_ctx *ctx, const char *split, t2_dataset **ds)
{
    const char *prepared = fm_prepared(ctx, split);
    if (prepared) return t2_dataset_cache_open(ds, prepared);
    return t2_dataset_fashion_mnist_cached(ds, split, fm_dir(ctx), fm_cache_dir(ctx));
}

/* prepare_data: converts both splits to caches once, so trials map them instead of decoding gzip
 * (or checks that the prepared caches open, so a missing one fails the experiment at once). */
static inline int fm_prepare_data(t2_ctx *ctx)
{
    const char *splits[2] = {"train", "test"};
    for (int i = 0; i < 2; i++) {
        t2_dataset *ds = NULL;
        int rc = fm_open(ctx, splits[i], &ds);
        t2_dataset_free(ds);
        if (rc) return rc;
    }
    return T2_OK;
}

/* The examples' loader settings: the trial's batch size, shuffled and repeated for training (500
 * a batch, one pass, for validation), one prefetching worker. */
static inline t2_loader_params fm_loader_params(t2_ctx *ctx, int train)
{
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = train ? t2_ctx_batch_size(ctx) : 500;
    p.shuffle = train;
    p.seed = t2_ctx_seed(ctx);
    p.repeat = train;
    p.num_workers = 1;
    p.prefetch = 4;
    /* Each rank reads its shard of every global batch; for validation the runner combines the
     * ranks' metrics weighted by their sample counts. */
    p.rank = t2_ctx_rank(ctx);
    p.world_size = t2_ctx_size(ctx);
    return p;
}

static inline int fm_loader(t2_ctx *ctx, const char *split, int train, t2_loader **out)
{
    t2_dataset *ds = NULL;
    int rc = fm_open(ctx, split, &ds);
    if (rc) return rc;
    t2_loader_params p = fm_loader_params(ctx, train);
    p.own_dataset = 1;
    return t2_loader_create(out, ds, &p);
}

static inline int fm_build_training_loader(t2_ctx *ctx, void *state, t2_loader **out)
{
    (void)state;
    return fm_loader(ctx, "train", 1, out);
}

static inline int fm_build_validation_loader(t2_ctx *ctx, void *state, t2_loader **out)
{
    (void)state;
    return fm_loader(ctx, "test", 0, out);
}

/* Wraps an initialised net with SGD(learning_rate, momentum), an optional cosine schedule (hparam
 * cosine_epochs: the rate anneals to 0 over that many epochs, stepped per epoch), and a
 * loss-gradient buffer. */
static inline int fm_finish_model(t2_ctx *ctx, fm_state *s)
{
    double lr, momentum;
    int rc;
    if ((rc = t2_hp_double(ctx, "learning_rate", &lr)) || (rc = t2_hp_double(ctx, "momentum", &momentum))) return rc;
    size_t n;
    t2_net_params(s->net, &n);
    t2_sgd_params sp = t2_sgd_default();
    sp.lr = lr;
    sp.momentum = momentum;
    int cap = t2_ctx_batch_size(ctx) > 500 ? t2_ctx_batch_size(ctx) : 500;
    if ((rc = t2_sgd_create(&s->opt, &sp, n)) || (rc = t2_tensor_alloc(&s->dlogp, 2, (int[]){cap, 10})) ||
        (rc = t2_wrap_model(ctx, s->net)) || (rc = t2_wrap_optimizer(ctx, s->opt)))
        return rc;
    int64_t cosine = 0;
    if (t2_hp_int(ctx, "cosine_epochs", &cosine) == T2_OK && cosine > 0) {
        t2_lr_params lp = t2_lr_default(T2_LR_COSINE, lr);
        lp.t_max = cosine;
        lp.step_mode = T2_LR_STEP_EPOCH;
        if ((rc = t2_lr_schedule_create(&s->sched, &lp)) || (rc = t2_wrap_lr_schedule(ctx, s->sched))) return rc;
    }
    return T2_OK;
}

static inline void fm_destroy(void *state)
{
    fm_state *s = state;
    if (!s) return;
    t2_net_free(s->net);
    t2_optim_free(s->opt);
    t2_lr_schedule_free(s->sched);
    t2_tensor_free(&s->dlogp);
    free(s);
}

/* Forward, NLL, accuracy; in training also backward and the framework's optimizer step. */
static inline int fm_step(t2_ctx *ctx, fm_state *s, const t2_batch *b, t2_metrics *m, int train)
{
    const t2_tensor *y;
    float loss;
    int64_t correct;
    int rc;
    t2_tensor d = s->dlogp;
    d.shape[0] = b->n;
    if ((rc = t2_net_forward(s->net, &b->x, train ? T2_TRAIN : T2_EVAL, t2_ctx_rng(ctx), &y)) ||
        (rc = t2_loss_nll(y, b->labels, &loss, train ? &d : NULL)) ||
        (rc = t2_topk_correct(y, b->labels, 1, &correct)))
        return rc;
    if (train && ((rc = t2_net_backward(s->net, &d, NULL)) || (rc = t2_step_optimizer(ctx)))) return rc;
    if ((rc = t2_metric(m, train ? "loss" : "validation_loss", loss))) return rc;
    return t2_metric(m, train ? "accuracy" : "validation_accuracy", (double)correct / b->n);
}

static inline int fm_train_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    return fm_step(ctx, state, b, m, 1);
}

static inline int fm_evaluate_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    return fm_step(ctx, state, b, m, 0);
}

#endif
