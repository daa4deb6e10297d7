/* testfn.c — standard optimisation test functions as a trial, for `bench/run search` (our TPE
 * against Optuna's on the same functions). The hparam `fn` names the function and the function's
 * inputs are hparams; one batch of "training", then a validation that reports `value` = f(inputs)
 * (smaller is better; the same value is the training metric too).
 *   branin             x0 in [-5, 10], x1 in [0, 15]                      minimum 0.397887
 *   hartmann6          x0..x5 in [0, 1]                                    minimum -3.32237
 *   styblinski_tang10  x0..x9 in [-5, 5]                                   minimum -391.6617
 *   mixed              c in {a, b, c} (offset 0, 0.5, 2), lr in [1e-5, 1] (log-scaled),
 *                      x in [-3, 3]: (log10(lr) + 3)^2 + (x - 1)^2 + offset(c)   minimum 0
 * The domains are the search space's business (bench/configs/search_*.yaml); the trial computes f
 * wherever it is asked. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <t2exp.h>
/* One sample: one training batch per epoch, and a validation pass of one batch, so the validation
 * metric is f itself, not a mean of copies. */
#define TINY_LOADER_SAMPLES 1
#include "tiny_loader.h"

typedef struct {
    double value;
} testfn;

static double branin(const double *x)
{
    const double pi = 3.14159265358979323846;
    const double b = 5.1 / (4 * pi * pi), c = 5 / pi, t = 1 / (8 * pi);
    double u = x[1] - b * x[0] * x[0] + c * x[0] - 6;
    return u * u + 10 * (1 - t) * cos(x[0]) + 10;
}

static double hartmann6(const double *x)
{
    static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
    static const double a[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                   {0.05, 10, 17, 0.1, 8, 14},
                                   {3, 3.5, 1.7, 10, 17, 8},
                                   {17, 8, 0.05, 10, 0.1, 14}};
    static const double p[4][6] = {{1312, 1696, 5569, 124, 8283, 5886},
                                   {2329, 4135, 8307, 3736, 1004, 9991},
                                   {2348, 1451, 3522, 2883, 3047, 6650},
                                   {4047, 8828, 8732, 5743, 1091, 381}};
    double f = 0;
    for (int i = 0; i < 4; i++) {
        double s = 0;
        for (int j = 0; j < 6; j++) {
            double d = x[j] - p[i][j] * 1e-4;
            s += a[i][j] * d * d;
        }
        f -= alpha[i] * exp(-s);
    }
    return f;
}

static double styblinski_tang(const double *x, int n)
{
    double f = 0;
    for (int i = 0; i < n; i++) f += x[i] * x[i] * x[i] * x[i] - 16 * x[i] * x[i] + 5 * x[i];
    return f / 2;
}

static int read_xs(t2_ctx *ctx, double *x, int n)
{
    for (int i = 0; i < n; i++) {
        char key[8];
        snprintf(key, sizeof key, "x%d", i);
        int rc = t2_hp_double(ctx, key, &x[i]);
        if (rc) return rc;
    }
    return T2_OK;
}

static int build_model(t2_ctx *ctx, void **state)
{
    testfn *t = calloc(1, sizeof *t);
    if (!t) return t2_seterr(T2_ENOMEM, "testfn: out of memory");
    *state = t;
    const char *fn;
    int rc = t2_hp_str(ctx, "fn", &fn);
    if (rc) return rc;
    double x[10];
    if (!strcmp(fn, "branin")) {
        if ((rc = read_xs(ctx, x, 2))) return rc;
        t->value = branin(x);
    } else if (!strcmp(fn, "hartmann6")) {
        if ((rc = read_xs(ctx, x, 6))) return rc;
        t->value = hartmann6(x);
    } else if (!strcmp(fn, "styblinski_tang10")) {
        if ((rc = read_xs(ctx, x, 10))) return rc;
        t->value = styblinski_tang(x, 10);
    } else if (!strcmp(fn, "mixed")) {
        const char *c;
        double lr, xx;
        if ((rc = t2_hp_str(ctx, "c", &c)) || (rc = t2_hp_double(ctx, "lr", &lr)) ||
            (rc = t2_hp_double(ctx, "x", &xx)))
            return rc;
        double offset = !strcmp(c, "a") ? 0 : !strcmp(c, "b") ? 0.5 : !strcmp(c, "c") ? 2 : NAN;
        if (isnan(offset)) return t2_seterr(T2_EHPARAM, "testfn: c = \"%s\" is not a, b or c", c);
        if (!(lr > 0)) return t2_seterr(T2_EHPARAM, "testfn: lr = %g is not positive", lr);
        double e = log10(lr) + 3;
        t->value = e * e + (xx - 1) * (xx - 1) + offset;
    } else {
        return t2_seterr(T2_EHPARAM, "testfn: fn = \"%s\" is not branin, hartmann6, styblinski_tang10 or mixed", fn);
    }
    return T2_OK;
}

static int train_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)ctx, (void)b;
    return t2_metric(m, "value", ((testfn *)state)->value);
}

static int evaluate_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)ctx, (void)b;
    return t2_metric(m, "value", ((testfn *)state)->value);
}

static void destroy(void *state) { free(state); }

T2_TRIAL(.name = "testfn", .build_model = build_model, .build_training_loader = build_training_loader,
         .build_validation_loader = build_validation_loader, .train_batch = train_batch,
         .evaluate_batch = evaluate_batch, .destroy = destroy);
