/* dashboard_trial.c — the trial dashboard_browser.sh shows in Chromium: a loss that is known in
 * advance, (x - 1)^2 + 1 / (batches + 1), reported for training and as the validation metric
 * "loss"; hparam `tag` (any string, e.g. markup) printed to the trial's log at every batch, so the
 * test can check that log lines are shown as text; hparam `sleep_ms` slows each batch down, so an
 * experiment stays running while the test watches its page change.
 * Built by the test with the public header only: cc -shared -fPIC -I framework/include. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <t2exp.h>
#include "tiny_trial.h"

typedef struct {
    t2_net *net;
    double x;
    int64_t sleep_ms;
    const char *tag;
} dash_trial;

static int build_model(t2_ctx *ctx, void **state)
{
    dash_trial *s = calloc(1, sizeof *s);
    if (!s) return t2_seterr(T2_ENOMEM, "dashboard_trial: out of memory");
    *state = s;
    int rc = t2_hp_double(ctx, "x", &s->x);
    if (rc) return rc;
    if (t2_hp_int(ctx, "sleep_ms", &s->sleep_ms) != T2_OK) s->sleep_ms = 0;
    if (t2_hp_str(ctx, "tag", &s->tag) != T2_OK) s->tag = "";
    return tiny_net(ctx, &s->net);
}

static double loss_at(const dash_trial *s, int64_t batches)
{
    return (s->x - 1) * (s->x - 1) + 1.0 / (double)(batches + 1);
}

static int train_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)b;
    dash_trial *s = state;
    if (s->sleep_ms > 0) {
        struct timespec ts = {.tv_sec = s->sleep_ms / 1000, .tv_nsec = (s->sleep_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    /* The log line the dashboard must show as text, markup and all. */
    printf("batch %lld tag %s\n", (long long)t2_ctx_batches_trained(ctx), s->tag);
    fflush(stdout);
    return t2_metric(m, "loss", loss_at(s, t2_ctx_batches_trained(ctx)));
}

static int evaluate_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)b;
    return t2_metric(m, "loss", loss_at(state, t2_ctx_batches_trained(ctx)));
}

static void destroy(void *state)
{
    dash_trial *s = state;
    if (!s) return;
    t2_net_free(s->net);
    free(s);
}

T2_TRIAL(.name = "dashboard", .build_model = build_model, .build_training_loader = build_training_loader,
         .build_validation_loader = build_validation_loader, .train_batch = train_batch,
         .evaluate_batch = evaluate_batch, .destroy = destroy);
