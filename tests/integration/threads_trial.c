/* threads_trial.c — a small CNN (conv2d, whose weight gradients are summed over the batch's parts)
 * on synthetic 1x8x8 images, for it_threads_follow_slots. Hyperparameter stall (int, 0: none):
 * from batch 3 on, while the trial has fewer than `stall` threads, each batch first waits 50 ms
 * (a new thread count is taken between batches), so that the trial is still training when another trial ends and its core
 * comes to this one. The waiting touches no number: the parameters must come out the same
 * whatever the thread count was, batch by batch. Public headers only, like any user trial. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <t2exp.h>

enum { SAMPLES = 256, SIDE = 8, CLASSES = 4 };

typedef struct {
    t2_net *net;
    t2_optim *opt;
    t2_tensor d;
    int64_t stall;
} cnn;

static int build_model(t2_ctx *ctx, void **state)
{
    cnn *s = calloc(1, sizeof *s);
    if (!s) return t2_seterr(T2_ENOMEM, "threads_trial: out of memory");
    *state = s;
    if (t2_hp_int(ctx, "stall", &s->stall) != T2_OK) s->stall = 0;
    int rc;
    if ((rc = t2_net_create(&s->net, 3, (int[]){1, SIDE, SIDE})) || (rc = t2_net_conv2d(s->net, 8, 3, 1, 1)) ||
        (rc = t2_net_relu(s->net)) || (rc = t2_net_conv2d(s->net, 8, 3, 1, 1)) || (rc = t2_net_relu(s->net)) ||
        (rc = t2_net_flatten(s->net)) || (rc = t2_net_dense(s->net, CLASSES)) ||
        (rc = t2_net_log_softmax(s->net)) || (rc = t2_net_init(s->net, t2_ctx_rng(ctx))))
        return rc;
    size_t n;
    t2_net_params(s->net, &n);
    t2_sgd_params sp = t2_sgd_default();
    sp.lr = 0.05;
    sp.momentum = 0.9;
    if ((rc = t2_sgd_create(&s->opt, &sp, n)) ||
        (rc = t2_tensor_alloc(&s->d, 2, (int[]){t2_ctx_batch_size(ctx), CLASSES})) ||
        (rc = t2_wrap_model(ctx, s->net)) || (rc = t2_wrap_optimizer(ctx, s->opt)))
        return rc;
    return T2_OK;
}

/* Images whose class is the quadrant holding the brightest pixel, plus a fixed texture. */
static int loader(t2_ctx *ctx, int train, t2_loader **out)
{
    static float x[SAMPLES * SIDE * SIDE];
    static int32_t labels[SAMPLES];
    uint64_t h = train ? 12345 : 54321;
    for (int i = 0; i < SAMPLES; i++) {
        float *img = x + (size_t)i * SIDE * SIDE;
        for (int p = 0; p < SIDE * SIDE; p++) {
            h = h * 6364136223846793005ULL + 1442695040888963407ULL;
            img[p] = (float)((h >> 40) & 0xffff) / 65536.0f;
        }
        int c = i % CLASSES, r = (c / 2) * (SIDE / 2) + 1, col = (c % 2) * (SIDE / 2) + 2;
        img[r * SIDE + col] += 2.0f;
        labels[i] = c;
    }
    t2_tensor t = t2_tensor_view(x, 4, (int[]){SAMPLES, 1, SIDE, SIDE});
    t2_dataset *ds = NULL;
    int rc = t2_dataset_from_tensor(&ds, &t, labels, 1);
    if (rc) return rc;
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = t2_ctx_batch_size(ctx);
    p.repeat = train;
    p.shuffle = train;
    p.own_dataset = 1;
    p.seed = t2_ctx_seed(ctx);
    return t2_loader_create(out, ds, &p);
}

static int build_training_loader(t2_ctx *ctx, void *state, t2_loader **out)
{
    (void)state;
    return loader(ctx, 1, out);
}

static int build_validation_loader(t2_ctx *ctx, void *state, t2_loader **out)
{
    (void)state;
    return loader(ctx, 0, out);
}

static int step(t2_ctx *ctx, cnn *s, const t2_batch *b, t2_metrics *m, int train)
{
    const t2_tensor *y;
    float loss;
    int rc;
    t2_tensor d = s->d;
    d.shape[0] = b->n;
    if ((rc = t2_net_forward(s->net, &b->x, train ? T2_TRAIN : T2_EVAL, t2_ctx_rng(ctx), &y)) ||
        (rc = t2_loss_nll(y, b->labels, &loss, train ? &d : NULL)))
        return rc;
    if (train && ((rc = t2_net_backward(s->net, &d, NULL)) || (rc = t2_step_optimizer(ctx)))) return rc;
    return t2_metric(m, train ? "loss" : "validation_loss", loss);
}

static int train_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    cnn *s = state;
    struct timespec tick = {0, 50 * 1000 * 1000};
    if (s->stall > 0 && t2_ctx_batches_trained(ctx) >= 3 && t2_ctx_threads(ctx) < s->stall) nanosleep(&tick, NULL);
    return step(ctx, s, b, m, 1);
}

static int evaluate_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    return step(ctx, state, b, m, 0);
}

static void destroy(void *state)
{
    cnn *s = state;
    if (!s) return;
    t2_net_free(s->net);
    t2_optim_free(s->opt);
    t2_tensor_free(&s->d);
    free(s);
}

T2_TRIAL(.name = "threads_trial", .build_model = build_model, .build_training_loader = build_training_loader,
         .build_validation_loader = build_validation_loader, .train_batch = train_batch,
         .evaluate_batch = evaluate_batch, .destroy = destroy);
