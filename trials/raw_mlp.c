/* raw_mlp.c — a model with no t2_net at all: the plain-array MLP of raw_mlp_model.h (one hidden
 * layer, forward and backward by hand), its four arrays wrapped with t2_wrap_params, trained for
 * regression on CSV files (t2_dataset_csv_open, float targets, MSE) with the features
 * standardised by the training file's statistics. AdamW with weight decay steps the two weight
 * matrices and Adam without decay the two biases: two optimizers, bound with
 * t2_wrap_optimizer_for. The framework broadcasts, averages, clips, checkpoints and exports the
 * arrays as it would a wrapped net's.
 *
 * data:            train_csv, val_csv (paths), target (the target column's name; every other
 *                  column is a feature)
 * hyperparameters: hidden (units), learning_rate, weight_decay (on the weights)
 * metrics:         training loss (MSE); validation mse and rmse (the validation set is one
 *                  batch per slot, so on one slot rmse is the exact RMSE of the whole set) */
#include <math.h>
#include <stdlib.h>
#include <t2exp.h>
#include "raw_mlp_model.h"

typedef struct state {
    rmlp m;
    t2_dataset *train;
    float *mean, *std; /* the training file's per-feature statistics */
    t2_optim *ow, *ob;
    const char *target;
} state;

static int open_csv(t2_ctx *ctx, const char *key, const char *target, t2_dataset **out)
{
    const char *path;
    int rc = t2_data_str(ctx, key, &path);
    if (rc) return rc;
    t2_csv_params p = t2_csv_params_default();
    p.target_columns = &target;
    p.ntargets = 1;
    return t2_dataset_csv_open(out, path, &p);
}

static int build_model(t2_ctx *ctx, void **out)
{
    state *s = calloc(1, sizeof *s);
    if (!s) return t2_seterr(T2_ENOMEM, "raw_mlp: out of memory");
    *out = s;
    int64_t hidden;
    double lr, wd;
    int rc, ndim, shape[3];
    if ((rc = t2_hp_int(ctx, "hidden", &hidden)) || (rc = t2_hp_double(ctx, "learning_rate", &lr)) ||
        (rc = t2_hp_double(ctx, "weight_decay", &wd)) || (rc = t2_data_str(ctx, "target", &s->target)))
        return rc;
    if (hidden < 1 || hidden > 4096) return t2_seterr(T2_EHPARAM, "raw_mlp: hidden = %lld (1..4096)", (long long)hidden);
    if ((rc = open_csv(ctx, "train_csv", s->target, &s->train)) || (rc = t2_dataset_sample_shape(s->train, &ndim, shape)))
        return rc;
    int in = shape[0];
    s->mean = malloc((size_t)in * sizeof(float));
    s->std = malloc((size_t)in * sizeof(float));
    if (!s->mean || !s->std) return t2_seterr(T2_ENOMEM, "raw_mlp: out of memory");
    if ((rc = t2_dataset_feature_stats(s->train, s->mean, s->std))) return rc;
    if ((rc = rmlp_init(&s->m, in, (int)hidden, 1, t2_ctx_batch_size(ctx), t2_ctx_rng(ctx))) ||
        (rc = rmlp_wrap(ctx, &s->m)))
        return rc;
    t2_adam_params w = t2_adamw_default(), b = t2_adam_default();
    w.lr = b.lr = lr;
    w.weight_decay = wd;
    if ((rc = t2_adamw_create(&s->ow, &w, s->m.n[RMLP_W1] + s->m.n[RMLP_W2])) ||
        (rc = t2_adam_create(&s->ob, &b, s->m.n[RMLP_B1] + s->m.n[RMLP_B2])))
        return rc;
    /* Decay on the weights only, the usual practice: two optimizers, each over named buffers. */
    if ((rc = t2_wrap_optimizer_for(ctx, s->ow, (const char *[]){"fc1.weight", "fc2.weight"}, 2)) ||
        (rc = t2_wrap_optimizer_for(ctx, s->ob, (const char *[]){"fc1.bias", "fc2.bias"}, 2)))
        return rc;
    return T2_OK;
}

static t2_loader_params loader_params(t2_ctx *ctx, const state *s)
{
    t2_loader_params p = t2_loader_params_default();
    p.seed = t2_ctx_seed(ctx);
    p.rank = t2_ctx_rank(ctx);
    p.world_size = t2_ctx_size(ctx);
    p.standardize_mean = s->mean;
    p.standardize_std = s->std;
    return p;
}

static int build_training_loader(t2_ctx *ctx, void *st, t2_loader **out)
{
    state *s = st;
    t2_loader_params p = loader_params(ctx, s);
    p.batch_size = t2_ctx_batch_size(ctx);
    p.shuffle = 1;
    p.drop_last = 1;
    return t2_loader_create(out, s->train, &p);
}

static int build_validation_loader(t2_ctx *ctx, void *st, t2_loader **out)
{
    state *s = st;
    t2_dataset *val = NULL;
    int rc = open_csv(ctx, "val_csv", s->target, &val);
    if (rc) return rc;
    int in, ndim, shape[3];
    if ((rc = t2_dataset_sample_shape(val, &ndim, shape))) return t2_dataset_free(val), rc;
    in = shape[0];
    if (in != s->m.in)
        return t2_dataset_free(val), t2_seterr(T2_EINVAL, "raw_mlp: val_csv has %d features, train_csv %d", in, s->m.in);
    int64_t n = t2_dataset_len(val), w = t2_ctx_size(ctx);
    t2_loader_params p = loader_params(ctx, s);
    p.batch_size = (int)((n + w - 1) / w); /* one batch per slot */
    p.repeat = 0;
    p.own_dataset = 1;
    if ((rc = rmlp_reserve(&s->m, p.batch_size))) return t2_dataset_free(val), rc;
    return t2_loader_create(out, val, &p);
}

/* MSE of the batch's predictions; dL/dy into m->dy when grad. */
static int mse(state *s, const t2_batch *b, int grad, float *loss)
{
    if (!b->targets || b->target_width != 1)
        return t2_seterr(T2_EINVAL, "raw_mlp: the batch has %d target floats per sample, 1 expected", b->target_width);
    int rc = rmlp_forward(&s->m, b->x.data, b->n);
    if (rc) return rc;
    t2_tensor pred = t2_tensor_view(s->m.y, 2, (int[]){b->n, 1});
    t2_tensor target = t2_tensor_view(b->targets, 2, (int[]){b->n, 1});
    t2_tensor d = t2_tensor_view(s->m.dy, 2, (int[]){b->n, 1});
    return t2_loss_mse(&pred, &target, loss, grad ? &d : NULL);
}

static int train_batch(t2_ctx *ctx, void *st, const t2_batch *b, t2_metrics *m)
{
    state *s = st;
    float loss;
    int rc = mse(s, b, 1, &loss);
    if (rc) return rc;
    rmlp_backward(&s->m, b->x.data, b->n);
    if ((rc = t2_step_optimizer(ctx))) return rc;
    return t2_metric(m, "loss", loss);
}

static int evaluate_batch(t2_ctx *ctx, void *st, const t2_batch *b, t2_metrics *m)
{
    (void)ctx;
    float loss;
    int rc = mse(st, b, 0, &loss);
    if (!rc) rc = t2_metric(m, "mse", loss);
    if (!rc) rc = t2_metric(m, "rmse", sqrt(loss));
    return rc;
}

static void destroy(void *st)
{
    state *s = st;
    rmlp_free(&s->m);
    t2_dataset_free(s->train);
    t2_optim_free(s->ow);
    t2_optim_free(s->ob);
    free(s->mean);
    free(s->std);
    free(s);
}

T2_TRIAL(.name = "raw_mlp", .build_model = build_model, .build_training_loader = build_training_loader,
         .build_validation_loader = build_validation_loader, .train_batch = train_batch,
         .evaluate_batch = evaluate_batch, .destroy = destroy);
