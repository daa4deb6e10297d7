/* quadratic.c — the trivial trial for search tests and the trials benchmark: the "model" is the
 * point (x, y) from the hparams, and every batch reports loss = (x - 1)^2 + (y + 2)^2 (minimum 0 at
 * (1, -2)), so a search's result is known in advance; an optional hparam lr adds itself to the loss
 * (the Optuna reference's space: x, log-uniform lr, categorical c). Optional hparams for fault tests:
 * fail_at_batch (train_batch returns an error there), crash_at_batch (SIGSEGV there),
 * nan_at_batch (reports a NaN loss there), term_at_batch (SIGTERM to itself there, as a pause
 * would: the runner checkpoints after that batch and leaves), sleep_ms (per batch), invalid_above
 * (build_model says the hparams are invalid, T2_EHPARAM, when x is above it), rank_metric (1: also
 * reports "rank_share", (rank + 1) x (batch + 1), a training metric that differs between ranks).
 * With the optional hparam model: 1 it also wraps a 1 -> 1 dense net (unused by the loss) so that
 * the runner checkpoints it: searches that start trials from checkpoints (pbt) need one. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <t2exp.h>
#include "tiny_loader.h" /* four samples: the loop needs batches, the values do not matter */

typedef struct {
    double x, y, lr;
    int64_t fail_at, crash_at, nan_at, term_at, sleep_ms, rank_metric;
    float dummy[1];
    t2_net *net; /* hparam model: 1 only */
} quad;

static int64_t opt_int(t2_ctx *ctx, const char *key)
{
    int64_t v = -1;
    return t2_hp_int(ctx, key, &v) == T2_OK ? v : -1;
}

static int build_model(t2_ctx *ctx, void **state)
{
    quad *q = calloc(1, sizeof *q);
    if (!q) return t2_seterr(T2_ENOMEM, "quadratic: out of memory");
    *state = q;
    int rc;
    if ((rc = t2_hp_double(ctx, "x", &q->x)) || (rc = t2_hp_double(ctx, "y", &q->y))) return rc;
    if (t2_hp_double(ctx, "lr", &q->lr) != T2_OK) q->lr = 0.0;
    q->fail_at = opt_int(ctx, "fail_at_batch");
    q->crash_at = opt_int(ctx, "crash_at_batch");
    q->nan_at = opt_int(ctx, "nan_at_batch");
    q->term_at = opt_int(ctx, "term_at_batch");
    q->sleep_ms = opt_int(ctx, "sleep_ms");
    q->rank_metric = opt_int(ctx, "rank_metric");
    if (opt_int(ctx, "model") == 1 &&
        ((rc = t2_net_create(&q->net, 1, (int[]){1})) || (rc = t2_net_dense(q->net, 1)) ||
         (rc = t2_net_init(q->net, t2_ctx_rng(ctx))) || (rc = t2_wrap_model(ctx, q->net))))
        return rc;
    double limit;
    if (t2_hp_double(ctx, "invalid_above", &limit) == T2_OK && q->x > limit)
        return t2_seterr(T2_EHPARAM, "quadratic: x = %g is above invalid_above = %g", q->x, limit);
    return T2_OK;
}

static double loss_of(const quad *q) { return (q->x - 1) * (q->x - 1) + (q->y + 2) * (q->y + 2) + q->lr; }

static int train_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)b;
    quad *q = state;
    int64_t at = t2_ctx_batches_trained(ctx);
    if (q->sleep_ms > 0) nanosleep(&(struct timespec){q->sleep_ms / 1000, (q->sleep_ms % 1000) * 1000000L}, NULL);
    if (at == q->fail_at) return t2_seterr(T2_ETRIAL, "quadratic: failing at batch %lld as asked", (long long)at);
    if (at == q->crash_at) raise(SIGSEGV);
    if (at == q->term_at) raise(SIGTERM);
    if (q->rank_metric == 1) {
        int rc = t2_metric(m, "rank_share", (double)(t2_ctx_rank(ctx) + 1) * (double)(at + 1));
        if (rc) return rc;
    }
    return t2_metric(m, "loss", at == q->nan_at ? NAN : loss_of(q));
}

static int evaluate_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)ctx, (void)b;
    return t2_metric(m, "loss", loss_of(state));
}

static void destroy(void *state)
{
    quad *q = state;
    if (q) t2_net_free(q->net);
    free(q);
}

T2_TRIAL(.name = "quadratic", .build_model = build_model, .build_training_loader = build_training_loader,
         .build_validation_loader = build_validation_loader, .train_batch = train_batch,
         .evaluate_batch = evaluate_batch, .destroy = destroy);
