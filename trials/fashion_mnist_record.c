/* fashion_mnist_record.c — the trial of configs/examples/fashion_mnist_record.yaml: a VGG-style
 * CNN with batchnorm on Fashion-MNIST, trained on augmented images (random crop after 2-pixel
 * padding, horizontal flip) with label smoothing and SGD (Nesterov momentum, weight decay) under a
 * linear warmup followed by cosine annealing, stepped per batch.
 *
 *   [conv 3x3 w, bn, relu] x2, maxpool 2          [w, 14, 14]
 *   [conv 3x3 2w, bn, relu] x2, maxpool 2         [2w, 7, 7]
 *   [conv 3x3 4w, bn, relu] x2, maxpool 2         [4w, 3, 3]     (hparam blocks: 3)
 *   flatten, dropout, dense hidden, relu, dropout, dense 10 (logits)
 *
 * The search must not choose on the test images it is judged on, so by default the trial trains
 * on 55,000 training images and validates on the other 5,000 (data.holdout; the split depends
 * only on data.holdout_seed). data.validation: test validates on the 10,000 test images instead:
 * `t2exp evaluate CHECKPOINT fashion_mnist_record.so --config data.validation=test` reports the
 * test accuracy of a chosen checkpoint. data.tta: flip averages the logits of each validation image
 * and its mirror image (test-time augmentation; off by default).
 *
 * hparams: global_batch_size, learning_rate (the peak), momentum, weight_decay, label_smoothing,
 * dropout, width, blocks (2 or 3; 2 when absent), hidden, epochs (the schedule's length: the searcher's max_length in epochs),
 * warmup_epochs. */
#include "fashion_mnist_common.h"

/* Fashion-MNIST's training-set pixel mean and standard deviation (values in [0, 1]). */
#define RECORD_MEAN 0.2860f
#define RECORD_STD 0.3530f

typedef struct record_state {
    fm_state fm;
    t2_dataset *train_all; /* the full training split, which both holdout views borrow */
    t2_dataset *train;     /* its training part (NULL when not split yet) */
    t2_dataset *holdout;   /* its validation part */
    float label_smoothing;
    int tta_flip;          /* data.tta: flip */
    t2_tensor mirror;      /* the validation batch mirrored, [500, 1, 28, 28] (tta only) */
    t2_tensor logits;      /* the first pass's logits, [500, 10] (tta only) */
} record_state;

/* data.KEY as an integer, def when absent. */
static int data_int(t2_ctx *ctx, const char *key, int64_t def, int64_t *out)
{
    *out = def;
    int rc = t2_data_int(ctx, key, out);
    return rc == T2_ENOTFOUND ? T2_OK : rc;
}

static int holdout_size(t2_ctx *ctx, int64_t *n)
{
    int rc = data_int(ctx, "holdout", 5000, n);
    if (rc) return rc;
    if (*n < 1 || *n > 30000)
        return t2_seterr(T2_EHPARAM, "fashion_mnist_record: data.holdout %lld not in 1..30000", (long long)*n);
    return T2_OK;
}

/* "holdout" (the default) or "test". */
static int validate_on_test(t2_ctx *ctx, int *test)
{
    const char *v = NULL;
    *test = 0;
    if (t2_data_str(ctx, "validation", &v) != T2_OK || !v || !*v || !strcmp(v, "holdout")) return T2_OK;
    if (!strcmp(v, "test")) {
        *test = 1;
        return T2_OK;
    }
    return t2_seterr(T2_EHPARAM, "fashion_mnist_record: data.validation is '%s'; expected holdout or test", v);
}

/* Splits the training images into the part trained on and the holdout, once per trial. */
static int open_split(t2_ctx *ctx, record_state *s)
{
    if (s->train) return T2_OK;
    int64_t n, seed;
    int rc;
    if ((rc = holdout_size(ctx, &n)) || (rc = data_int(ctx, "holdout_seed", 20261125, &seed))) return rc;
    if ((rc = fm_open(ctx, "train", &s->train_all))) return rc;
    double fraction = (double)n / (double)t2_dataset_len(s->train_all);
    return t2_dataset_split(s->train_all, fraction, (uint64_t)seed, &s->holdout, &s->train);
}

static int hp_unit(t2_ctx *ctx, const char *key, double *v)
{
    int rc = t2_hp_double(ctx, key, v);
    if (rc) return rc;
    if (!(*v >= 0.0 && *v < 1.0))
        return t2_seterr(T2_EHPARAM, "fashion_mnist_record: hparam %s %g not in [0, 1)", key, *v);
    return T2_OK;
}

static int build_net(t2_net **out, int w, int blocks, int hidden, float dropout)
{
    int shape[3] = {1, 28, 28}, rc;
    t2_net *net = NULL;
    if ((rc = t2_net_create(&net, 3, shape))) return rc;
    for (int stage = 0; stage < blocks && !rc; stage++) {
        int c = w << stage;
        for (int k = 0; k < 2 && !rc; k++)
            if (!(rc = t2_net_conv2d(net, c, 3, 1, 1)) && !(rc = t2_net_batchnorm(net, 1e-5f, 0.1f))) rc = t2_net_relu(net);
        if (!rc) rc = t2_net_maxpool2d(net, 2, 2);
    }
    if (rc || (rc = t2_net_flatten(net)) || (rc = t2_net_dropout(net, dropout)) || (rc = t2_net_dense(net, hidden)) ||
        (rc = t2_net_relu(net)) || (rc = t2_net_dropout(net, dropout)) || (rc = t2_net_dense(net, 10))) {
        t2_net_free(net);
        return rc;
    }
    *out = net;
    return T2_OK;
}

/* SGD with Nesterov momentum and weight decay; warmup then cosine to 0 at `epochs`, per batch. */
static int build_optimizer(t2_ctx *ctx, record_state *s)
{
    double lr, momentum, wd;
    int64_t epochs, warmup, holdout;
    int rc;
    if ((rc = t2_hp_double(ctx, "learning_rate", &lr)) || (rc = hp_unit(ctx, "momentum", &momentum)) ||
        (rc = t2_hp_double(ctx, "weight_decay", &wd)) || (rc = t2_hp_int(ctx, "epochs", &epochs)) ||
        (rc = t2_hp_int(ctx, "warmup_epochs", &warmup)) || (rc = holdout_size(ctx, &holdout)))
        return rc;
    if (!(lr > 0) || !(wd >= 0) || epochs < 1 || warmup < 0 || warmup >= epochs)
        return t2_seterr(T2_EHPARAM, "fashion_mnist_record: need learning_rate > 0, weight_decay >= 0, epochs >= 1 "
                                     "and 0 <= warmup_epochs < epochs (got %g, %g, %lld, %lld)",
                         lr, wd, (long long)epochs, (long long)warmup);
    size_t n;
    t2_net_params(s->fm.net, &n);
    t2_sgd_params sp = t2_sgd_default();
    sp.lr = lr;
    sp.momentum = momentum;
    sp.weight_decay = wd;
    sp.nesterov = momentum > 0;
    int64_t batch = t2_ctx_global_batch_size(ctx);
    int64_t per_epoch = (60000 - holdout + batch - 1) / batch; /* the loader keeps the short batch */
    t2_lr_params lp = t2_lr_default(T2_LR_COSINE, lr);
    lp.warmup_steps = warmup * per_epoch;
    lp.warmup_start_factor = 0.1;
    lp.t_max = (epochs - warmup) * per_epoch;
    lp.step_mode = T2_LR_STEP_BATCH;
    int cap = t2_ctx_batch_size(ctx) > 500 ? t2_ctx_batch_size(ctx) : 500;
    if ((rc = t2_sgd_create(&s->fm.opt, &sp, n)) || (rc = t2_tensor_alloc(&s->fm.dlogp, 2, (int[]){cap, 10})) ||
        (rc = t2_wrap_model(ctx, s->fm.net)) || (rc = t2_wrap_optimizer(ctx, s->fm.opt)) ||
        (rc = t2_lr_schedule_create(&s->fm.sched, &lp)) || (rc = t2_wrap_lr_schedule(ctx, s->fm.sched)))
        return rc;
    return T2_OK;
}

static int build_model(t2_ctx *ctx, void **state)
{
    int64_t width, blocks, hidden;
    double dropout, smoothing;
    const char *tta = NULL;
    int rc;
    blocks = 2; /* optional: configs before the third block have none */
    if ((rc = t2_hp_int(ctx, "blocks", &blocks)) == T2_ENOTFOUND) t2_clearerr();
    else if (rc) return rc;
    if ((rc = t2_hp_int(ctx, "width", &width)) || (rc = t2_hp_int(ctx, "hidden", &hidden)) || (rc = hp_unit(ctx, "dropout", &dropout)) ||
        (rc = hp_unit(ctx, "label_smoothing", &smoothing)))
        return rc;
    if (width < 1 || width > 64 || blocks < 2 || blocks > 3 || hidden < 1 || hidden > 4096)
        return t2_seterr(T2_EHPARAM, "fashion_mnist_record: width %lld not in 1..64, blocks %lld not 2 or 3, or hidden %lld "
                         "not in 1..4096", (long long)width, (long long)blocks, (long long)hidden);
    if (t2_data_str(ctx, "tta", &tta) != T2_OK || (tta && !*tta)) tta = NULL;
    if (tta && strcmp(tta, "flip") && strcmp(tta, "none"))
        return t2_seterr(T2_EHPARAM, "fashion_mnist_record: data.tta is '%s'; expected none or flip", tta);
    record_state *s = calloc(1, sizeof *s);
    if (!s) return t2_seterr(T2_ENOMEM, "fashion_mnist_record: out of memory");
    *state = s;
    s->label_smoothing = (float)smoothing;
    s->tta_flip = tta && !strcmp(tta, "flip");
    if (s->tta_flip && ((rc = t2_tensor_alloc(&s->mirror, 4, (int[]){500, 1, 28, 28})) ||
                        (rc = t2_tensor_alloc(&s->logits, 2, (int[]){500, 10}))))
        return rc;
    if ((rc = build_net(&s->fm.net, (int)width, (int)blocks, (int)hidden, (float)dropout)) ||
        (rc = t2_net_init(s->fm.net, t2_ctx_rng(ctx))))
        return rc;
    return build_optimizer(ctx, s);
}

static int make_loader(t2_ctx *ctx, t2_dataset *ds, int own, int train, t2_loader **out)
{
    t2_loader_params p = fm_loader_params(ctx, train);
    p.own_dataset = own;
    if (train) {
        p.crop_padding = 2;
        p.hflip_prob = 0.5f;
    }
    p.normalize_channels = 1;
    p.mean[0] = RECORD_MEAN;
    p.std[0] = RECORD_STD;
    return t2_loader_create(out, ds, &p);
}

static int build_training_loader(t2_ctx *ctx, void *state, t2_loader **out)
{
    record_state *s = state;
    int rc = open_split(ctx, s);
    return rc ? rc : make_loader(ctx, s->train, 0, 1, out);
}

static int build_validation_loader(t2_ctx *ctx, void *state, t2_loader **out)
{
    record_state *s = state;
    int test, rc;
    if ((rc = validate_on_test(ctx, &test))) return rc;
    if (test) {
        t2_dataset *ds = NULL;
        if ((rc = fm_open(ctx, "test", &ds))) return rc;
        return make_loader(ctx, ds, 1, 0, out);
    }
    if ((rc = open_split(ctx, s))) return rc;
    return make_loader(ctx, s->holdout, 0, 0, out);
}

/* Validation logits with data.tta: flip, the mean of the logits of the images and of their mirror
 * images, in s->logits (shaped to the batch). */
static int mirrored_logits(record_state *s, const t2_batch *b, const t2_tensor **out)
{
    const t2_tensor *y;
    int rc, h = b->x.shape[2], w = b->x.shape[3];
    if (b->n > s->logits.shape[0] || b->x.shape[1] != 1 || h != 28 || w != 28)
        return t2_seterr(T2_EINVAL, "fashion_mnist_record: tta: a batch of %d images of %dx%d", b->n, h, w);
    if ((rc = t2_net_forward(s->fm.net, &b->x, T2_EVAL, NULL, &y))) return rc;
    memcpy(s->logits.data, y->data, (size_t)b->n * 10 * sizeof(float));
    t2_tensor mirror = s->mirror;
    mirror.shape[0] = b->n;
    for (int i = 0; i < b->n * h; i++) /* every image row, reversed */
        for (int x = 0; x < w; x++) mirror.data[(size_t)i * w + x] = b->x.data[(size_t)i * w + (w - 1 - x)];
    if ((rc = t2_net_forward(s->fm.net, &mirror, T2_EVAL, NULL, &y))) return rc;
    for (int i = 0; i < b->n * 10; i++) s->logits.data[i] = 0.5f * (s->logits.data[i] + y->data[i]);
    s->logits.shape[0] = b->n;
    *out = &s->logits;
    return T2_OK;
}

/* Forward, softmax cross-entropy (label smoothing in training only), accuracy; in training also
 * backward and the framework's optimizer step. */
static int step(t2_ctx *ctx, record_state *s, const t2_batch *b, t2_metrics *m, int train)
{
    const t2_tensor *y;
    float loss;
    int64_t correct;
    int rc;
    t2_tensor d = s->fm.dlogp;
    d.shape[0] = b->n;
    if (!train && s->tta_flip) rc = mirrored_logits(s, b, &y);
    else rc = t2_net_forward(s->fm.net, &b->x, train ? T2_TRAIN : T2_EVAL, t2_ctx_rng(ctx), &y);
    if (rc ||
        (rc = t2_loss_softmax_xent(y, b->labels, train ? s->label_smoothing : 0.0f, &loss, train ? &d : NULL)) ||
        (rc = t2_topk_correct(y, b->labels, 1, &correct)))
        return rc;
    if (train && ((rc = t2_net_backward(s->fm.net, &d, NULL)) || (rc = t2_step_optimizer(ctx)))) return rc;
    if ((rc = t2_metric(m, train ? "loss" : "validation_loss", loss))) return rc;
    return t2_metric(m, train ? "accuracy" : "validation_accuracy", (double)correct / b->n);
}

static int train_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    return step(ctx, state, b, m, 1);
}

static int evaluate_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    return step(ctx, state, b, m, 0);
}

static void destroy(void *state)
{
    record_state *s = state;
    if (!s) return;
    t2_net_free(s->fm.net);
    t2_optim_free(s->fm.opt);
    t2_lr_schedule_free(s->fm.sched);
    t2_tensor_free(&s->fm.dlogp);
    t2_tensor_free(&s->mirror);
    t2_tensor_free(&s->logits);
    t2_dataset_free(s->train);
    t2_dataset_free(s->holdout);
    t2_dataset_free(s->train_all);
    free(s);
}

T2_TRIAL(.name = "fashion_mnist_record", .prepare_data = fm_prepare_data, .build_model = build_model,
         .build_training_loader = build_training_loader, .build_validation_loader = build_validation_loader,
         .train_batch = train_batch, .evaluate_batch = evaluate_batch, .destroy = destroy);
