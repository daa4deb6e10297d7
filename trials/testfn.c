/* testfn.c — standard optimisation test functions as a trial, for `bench/run search` (our TPE
 * against Optuna's on the same functions). The hparam `fn` names the function and the function's
 * inputs are hparams; one batch of "training", then a validation that reports `value` = f(inputs)
 * (smaller is better; the same value is the training metric too).
 *   branin             x0 in [-5, 10], x1 in [0, 15]                      minimum 0.397887
 *   hartmann6          x0..x5 in [0, 1]                                    minimum -3.32237
 *   styblinski_tang10  x0..x9 in [-5, 5]                                   minimum -391.6617
 *   mixed              c in {a, b, c} (offset 0, 0.5, 2), lr in [1e-5, 1] (log-scaled),
 *                      x in [-3, 3]: (log10(lr) + 3)^2 + (x - 1)^2 + offset(c)   minimum 0
 * and, for checking the searchers beyond the functions they were tuned on:
 *   rosenbrock4        x0..x3 in [-5, 10]                                  minimum 0
 *   ackley5            x0..x4 in [-32.768, 32.768]                         minimum 0
 *   levy5              x0..x4 in [-10, 10]                                 minimum 0
 *   rastrigin5         x0..x4 in [-5.12, 5.12]                             minimum 0
 *   six_hump_camel     x0 in [-3, 3], x1 in [-2, 2]                        minimum -1.031628
 *   goldstein_price    x0, x1 in [-2, 2]                                   minimum 3
 *   hartmann3          x0..x2 in [0, 1]                                    minimum -3.86278
 *   michalewicz5       x0..x4 in [0, pi]                                   minimum -4.687658
 *   int_mix            a, b ints in [-20, 20], lr in [1e-4, 1] (log-scaled), k in {relu, tanh,
 *                      gelu, silu} (offset 0, 1, 0.25, 0.5):
 *                      (a - 3)^2 / 10 + (b + 7)^2 / 10 + (log10(lr) + 2)^2 + offset(k)   minimum 0
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

/* Hartmann-d: a and p (p x 1e-4) are 4 rows of d. */
static double hartmann(const double *x, int d, const double *a, const double *p)
{
    static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
    double f = 0;
    for (int i = 0; i < 4; i++) {
        double s = 0;
        for (int j = 0; j < d; j++) {
            double e = x[j] - p[i * d + j] * 1e-4;
            s += a[i * d + j] * e * e;
        }
        f -= alpha[i] * exp(-s);
    }
    return f;
}

static double hartmann6(const double *x)
{
    static const double a[4 * 6] = {10, 3, 17, 3.5, 1.7, 8,  0.05, 10, 17, 0.1, 8, 14,
                                    3,  3.5, 1.7, 10, 17, 8, 17, 8, 0.05, 10, 0.1, 14};
    static const double p[4 * 6] = {1312, 1696, 5569, 124,  8283, 5886, 2329, 4135, 8307, 3736, 1004, 9991,
                                    2348, 1451, 3522, 2883, 3047, 6650, 4047, 8828, 8732, 5743, 1091, 381};
    return hartmann(x, 6, a, p);
}

static double styblinski_tang(const double *x, int n)
{
    double f = 0;
    for (int i = 0; i < n; i++) f += x[i] * x[i] * x[i] * x[i] - 16 * x[i] * x[i] + 5 * x[i];
    return f / 2;
}

static const double PI = 3.14159265358979323846;

static double rosenbrock(const double *x, int n)
{
    double f = 0;
    for (int i = 0; i + 1 < n; i++) f += 100 * pow(x[i + 1] - x[i] * x[i], 2) + pow(x[i] - 1, 2);
    return f;
}

static double ackley(const double *x, int n)
{
    double sq = 0, cs = 0;
    for (int i = 0; i < n; i++) {
        sq += x[i] * x[i];
        cs += cos(2 * PI * x[i]);
    }
    return -20 * exp(-0.2 * sqrt(sq / n)) - exp(cs / n) + 20 + exp(1);
}

static double levy(const double *x, int n)
{
    double w1 = 1 + (x[0] - 1) / 4, wn = 1 + (x[n - 1] - 1) / 4;
    double f = pow(sin(PI * w1), 2) + pow(wn - 1, 2) * (1 + pow(sin(2 * PI * wn), 2));
    for (int i = 0; i + 1 < n; i++) {
        double w = 1 + (x[i] - 1) / 4;
        f += pow(w - 1, 2) * (1 + 10 * pow(sin(PI * w + 1), 2));
    }
    return f;
}

static double rastrigin(const double *x, int n)
{
    double f = 10.0 * n;
    for (int i = 0; i < n; i++) f += x[i] * x[i] - 10 * cos(2 * PI * x[i]);
    return f;
}

static double six_hump_camel(const double *x)
{
    double a = x[0], b = x[1];
    return (4 - 2.1 * a * a + a * a * a * a / 3) * a * a + a * b + (-4 + 4 * b * b) * b * b;
}

static double goldstein_price(const double *x)
{
    double a = x[0], b = x[1];
    double u = 1 + pow(a + b + 1, 2) * (19 - 14 * a + 3 * a * a - 14 * b + 6 * a * b + 3 * b * b);
    double v = 30 + pow(2 * a - 3 * b, 2) * (18 - 32 * a + 12 * a * a + 48 * b - 36 * a * b + 27 * b * b);
    return u * v;
}

static double hartmann3(const double *x)
{
    static const double a[4 * 3] = {3, 10, 30, 0.1, 10, 35, 3, 10, 30, 0.1, 10, 35};
    static const double p[4 * 3] = {3689, 1170, 2673, 4699, 4387, 7470, 1091, 8732, 5547, 381, 5743, 8828};
    return hartmann(x, 3, a, p);
}

static double michalewicz(const double *x, int n)
{
    double f = 0;
    for (int i = 0; i < n; i++) f -= sin(x[i]) * pow(sin((i + 1) * x[i] * x[i] / PI), 20);
    return f;
}

/* The functions of x0..x(n-1), by name. */
typedef struct {
    const char *name;
    int n;
    double (*f)(const double *x, int n);
    double (*f_fixed)(const double *x); /* or this, for one n */
} xs_fn;

static const xs_fn XS_FNS[] = {
    {"branin", 2, NULL, branin},          {"hartmann6", 6, NULL, hartmann6},
    {"styblinski_tang10", 10, styblinski_tang, NULL}, {"rosenbrock4", 4, rosenbrock, NULL},
    {"ackley5", 5, ackley, NULL},         {"levy5", 5, levy, NULL},
    {"rastrigin5", 5, rastrigin, NULL},   {"six_hump_camel", 2, NULL, six_hump_camel},
    {"goldstein_price", 2, NULL, goldstein_price}, {"hartmann3", 3, NULL, hartmann3},
    {"michalewicz5", 5, michalewicz, NULL},
};

static int read_xs(t2_ctx *ctx, double *x, int n)
{
    for (int i = 0; i < n; i++) {
        char key[16];
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
    for (size_t k = 0; k < sizeof XS_FNS / sizeof XS_FNS[0]; k++) {
        const xs_fn *g = &XS_FNS[k];
        if (strcmp(fn, g->name)) continue;
        if ((rc = read_xs(ctx, x, g->n))) return rc;
        t->value = g->f ? g->f(x, g->n) : g->f_fixed(x);
        return T2_OK;
    }
    if (!strcmp(fn, "mixed")) {
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
    } else if (!strcmp(fn, "int_mix")) {
        int64_t a, b;
        double lr;
        const char *k;
        if ((rc = t2_hp_int(ctx, "a", &a)) || (rc = t2_hp_int(ctx, "b", &b)) || (rc = t2_hp_double(ctx, "lr", &lr)) ||
            (rc = t2_hp_str(ctx, "k", &k)))
            return rc;
        double offset = !strcmp(k, "relu")   ? 0
                        : !strcmp(k, "tanh") ? 1
                        : !strcmp(k, "gelu") ? 0.25
                        : !strcmp(k, "silu") ? 0.5
                                             : NAN;
        if (isnan(offset)) return t2_seterr(T2_EHPARAM, "testfn: k = \"%s\" is not relu, tanh, gelu or silu", k);
        if (!(lr > 0)) return t2_seterr(T2_EHPARAM, "testfn: lr = %g is not positive", lr);
        double e = log10(lr) + 2;
        t->value = (a - 3) * (a - 3) / 10.0 + (b + 7) * (b + 7) / 10.0 + e * e + offset;
    } else {
        return t2_seterr(T2_EHPARAM, "testfn: fn = \"%s\" is none of the functions trials/testfn.c lists", fn);
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
