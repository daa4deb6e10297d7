/* test_optim.c — SGD/Adam/AdamW and gradient clipping against PyTorch fixtures
 * (tests/fixtures/torch_optim.py), checkpoint-style state restore, and bad input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "fixture.h"
#include "t2exp.h"

#define RTOL 1e-4
#define ATOL 1e-6

static const char *const CONFIGS[] = {
    "sgd_plain", "sgd_wd", "sgd_momentum", "sgd_nesterov", "sgd_dampening", "sgd_momentum_wd",
    "sgd_nesterov_wd_lrs", "adam", "adam_betas", "adam_wd", "adam_lrs", "adamw", "adamw_wd",
};

static const fixture_array *get(const fixture *f, const char *cfg, const char *suffix)
{
    char name[128];
    snprintf(name, sizeof name, "%s_%s", cfg, suffix);
    return fixture_get(f, name);
}

/* hp = [kind, lr, momentum, dampening, weight_decay, nesterov, beta1, beta2, eps] */
static int make_optim(const fixture_array *hp, size_t n, t2_optim **out)
{
    const float *h = hp->data;
    int kind = (int)h[0];
    if (kind == T2_OPTIM_SGD) {
        t2_sgd_params p = t2_sgd_default();
        p.lr = h[1];
        p.momentum = h[2];
        p.dampening = h[3];
        p.weight_decay = h[4];
        p.nesterov = h[5] != 0;
        return t2_sgd_create(out, &p, n);
    }
    t2_adam_params p = kind == T2_OPTIM_ADAMW ? t2_adamw_default() : t2_adam_default();
    p.lr = h[1];
    p.weight_decay = h[4];
    p.beta1 = h[6];
    p.beta2 = h[7];
    p.eps = h[8];
    return kind == T2_OPTIM_ADAMW ? t2_adamw_create(out, &p, n) : t2_adam_create(out, &p, n);
}

/* Runs steps [from, to) of a config's gradient sequence on params. */
static void run_steps(t2_optim *opt, const fixture *f, const char *cfg, float *params, int from, int to)
{
    const fixture_array *grads = get(f, cfg, "grads"), *lrs = get(f, cfg, "lrs");
    size_t n = (size_t)grads->shape[1];
    for (int k = from; k < to; k++) {
        CHECK_OK(t2_optim_set_lr(opt, lrs->data[k]));
        CHECK_OK(t2_optim_step(opt, params, grads->data + (size_t)k * n, n));
    }
}

static void test_against_torch(const fixture *f)
{
    for (size_t c = 0; c < sizeof CONFIGS / sizeof *CONFIGS; c++) {
        const char *cfg = CONFIGS[c];
        const fixture_array *hp = get(f, cfg, "hp"), *p0 = get(f, cfg, "p0"), *grads = get(f, cfg, "grads");
        const fixture_array *want = get(f, cfg, "params");
        if (!hp || !p0 || !grads || !want) {
            check_failures++;
            continue;
        }
        size_t n = p0->n;
        int steps = grads->shape[0];
        t2_optim *opt = NULL;
        CHECK_OK(make_optim(hp, n, &opt));
        if (!opt) continue;
        float *params = malloc(n * sizeof *params);
        memcpy(params, p0->data, n * sizeof *params);
        const fixture_array *grads_lrs = get(f, cfg, "lrs");
        for (int k = 0; k < steps; k++) {
            CHECK_OK(t2_optim_set_lr(opt, grads_lrs->data[k]));
            CHECK_OK(t2_optim_step(opt, params, grads->data + (size_t)k * n, n));
            /* compare row k of the expected parameter trajectory */
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) {
                double w = want->data[(size_t)k * n + i];
                if (!(fabs(params[i] - w) <= ATOL + RTOL * fabs(w))) bad++;
            }
            if (bad) {
                fprintf(stderr, "%s: step %d: %zu of %zu params differ from torch (p[0] %.9g vs %.9g)\n", cfg,
                        k, bad, n, params[0], want->data[(size_t)k * n]);
                check_failures++;
            }
        }
        CHECK(t2_optim_step_count(opt) == steps);
        size_t sn = 0;
        float *st = t2_optim_state(opt, &sn);
        char sname[128];
        snprintf(sname, sizeof sname, "%s_state", cfg);
        if (sn == 0) {
            CHECK(st == NULL);
            CHECK(get(f, cfg, "state")->n == 0);
        } else {
            CHECK(fixture_compare(f, sname, st, sn, RTOL, 1e-8) == 0);
        }
        free(params);
        t2_optim_free(opt);
    }
}

/* A checkpoint is the params, the state buffer and the step count; a fresh optimizer given them
 * must continue bit for bit like the one that never stopped. */
static void test_restore(const fixture *f)
{
    for (size_t c = 0; c < sizeof CONFIGS / sizeof *CONFIGS; c++) {
        const char *cfg = CONFIGS[c];
        const fixture_array *hp = get(f, cfg, "hp"), *p0 = get(f, cfg, "p0"), *grads = get(f, cfg, "grads");
        if (!hp || !p0 || !grads) continue;
        size_t n = p0->n;
        int steps = grads->shape[0], half = steps / 2;
        t2_optim *a = NULL, *b = NULL;
        CHECK_OK(make_optim(hp, n, &a));
        CHECK_OK(make_optim(hp, n, &b));
        if (!a || !b) goto next;
        float *pa = malloc(n * sizeof *pa), *pb = malloc(n * sizeof *pb);
        memcpy(pa, p0->data, n * sizeof *pa);
        run_steps(a, f, cfg, pa, 0, half);

        memcpy(pb, pa, n * sizeof *pb);
        size_t na = 0, nb = 0;
        float *sa = t2_optim_state(a, &na), *sb = t2_optim_state(b, &nb);
        CHECK(na == nb);
        if (na && na == nb) memcpy(sb, sa, na * sizeof *sa);
        CHECK_OK(t2_optim_set_step_count(b, t2_optim_step_count(a)));

        run_steps(a, f, cfg, pa, half, steps);
        run_steps(b, f, cfg, pb, half, steps);
        CHECK(memcmp(pa, pb, n * sizeof *pa) == 0);
        if (na && na == nb) CHECK(memcmp(sa, sb, na * sizeof *sa) == 0);
        char pname[128];
        snprintf(pname, sizeof pname, "%s_params", cfg);
        const fixture_array *want = fixture_get(f, pname);
        if (want) {
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) {
                double w = want->data[(size_t)(steps - 1) * n + i];
                if (!(fabs(pb[i] - w) <= ATOL + RTOL * fabs(w))) bad++;
            }
            if (bad) fprintf(stderr, "%s: restored run ends %zu params away from torch\n", cfg, bad);
            CHECK(bad == 0);
        }
        free(pa);
        free(pb);
    next:
        t2_optim_free(a);
        t2_optim_free(b);
    }
}

static void test_defaults(void)
{
    t2_sgd_params s = t2_sgd_default();
    CHECK(s.lr == 1e-3 && s.momentum == 0 && s.dampening == 0 && s.weight_decay == 0 && s.nesterov == 0);
    t2_adam_params a = t2_adam_default();
    CHECK(a.lr == 1e-3 && a.beta1 == 0.9 && a.beta2 == 0.999 && a.eps == 1e-8 && a.weight_decay == 0);
    t2_adam_params w = t2_adamw_default();
    CHECK(w.lr == 1e-3 && w.beta1 == 0.9 && w.beta2 == 0.999 && w.eps == 1e-8 && w.weight_decay == 0.01);

    t2_optim *o = NULL;
    CHECK_OK(t2_sgd_create(&o, &s, 5));
    size_t n = 99;
    CHECK(t2_optim_state(o, &n) == NULL && n == 0);   /* no momentum, no state */
    CHECK(t2_optim_get_kind(o) == T2_OPTIM_SGD && t2_optim_size(o) == 5 && t2_optim_lr(o) == 1e-3);
    t2_optim_free(o);
    s.momentum = 0.5;
    CHECK_OK(t2_sgd_create(&o, &s, 5));
    CHECK(t2_optim_state(o, &n) != NULL && n == 5);
    t2_optim_free(o);
    CHECK_OK(t2_adamw_create(&o, &w, 7));
    CHECK(t2_optim_state(o, &n) != NULL && n == 14 && t2_optim_get_kind(o) == T2_OPTIM_ADAMW);
    CHECK_OK(t2_optim_set_lr(o, 0.25));
    CHECK(t2_optim_lr(o) == 0.25);
    t2_optim_free(o);
}

/* The call must fail with `code` and a message that mentions `word`. */
#define CHECK_ERR(expr, code, word)                                                            \
    do {                                                                                       \
        CHECK_RC(expr, code);                                                                  \
        if (!strstr(t2_errmsg(), word)) {                                                      \
            fprintf(stderr, "%s:%d: message \"%s\" does not name \"%s\"\n", __FILE__, __LINE__, \
                    t2_errmsg(), word);                                                        \
            check_failures++;                                                                  \
        }                                                                                      \
    } while (0)

static void test_bad_input(void)
{
    t2_optim *o = (t2_optim *)&o;   /* must be reset to NULL on failure */
    t2_sgd_params s = t2_sgd_default();
    s.lr = -0.1;
    CHECK_ERR(t2_sgd_create(&o, &s, 4), T2_EINVAL, "lr=-0.1");
    CHECK(o == NULL);
    s = t2_sgd_default();
    s.lr = NAN;
    CHECK_ERR(t2_sgd_create(&o, &s, 4), T2_EINVAL, "lr=");
    s = t2_sgd_default();
    s.momentum = 1.0;
    CHECK_ERR(t2_sgd_create(&o, &s, 4), T2_EINVAL, "momentum=1");
    s.momentum = -0.5;
    CHECK_ERR(t2_sgd_create(&o, &s, 4), T2_EINVAL, "momentum=-0.5");
    s = t2_sgd_default();
    s.nesterov = 1;
    CHECK_ERR(t2_sgd_create(&o, &s, 4), T2_EINVAL, "nesterov");
    s.momentum = 0.9;
    s.dampening = 0.1;
    CHECK_ERR(t2_sgd_create(&o, &s, 4), T2_EINVAL, "dampening=0.1");
    s = t2_sgd_default();
    s.dampening = 1.5;
    CHECK_ERR(t2_sgd_create(&o, &s, 4), T2_EINVAL, "dampening=1.5");
    s = t2_sgd_default();
    s.weight_decay = -1;
    CHECK_ERR(t2_sgd_create(&o, &s, 4), T2_EINVAL, "weight_decay=-1");
    s = t2_sgd_default();
    CHECK_ERR(t2_sgd_create(&o, &s, 0), T2_EINVAL, "n=0");
    CHECK_ERR(t2_sgd_create(&o, NULL, 4), T2_EINVAL, "NULL");
    CHECK_ERR(t2_sgd_create(NULL, &s, 4), T2_EINVAL, "NULL");

    t2_adam_params a = t2_adam_default();
    a.beta1 = 1.0;
    CHECK_ERR(t2_adam_create(&o, &a, 4), T2_EINVAL, "beta1=1");
    a = t2_adam_default();
    a.beta2 = -0.1;
    CHECK_ERR(t2_adamw_create(&o, &a, 4), T2_EINVAL, "beta2=-0.1");
    a = t2_adam_default();
    a.eps = -1e-8;
    CHECK_ERR(t2_adam_create(&o, &a, 4), T2_EINVAL, "eps=");
    a = t2_adam_default();
    a.lr = -1;
    CHECK_ERR(t2_adamw_create(&o, &a, 4), T2_EINVAL, "lr=-1");
    a = t2_adam_default();
    a.weight_decay = INFINITY;
    CHECK_ERR(t2_adam_create(&o, &a, 4), T2_EINVAL, "weight_decay=");
    a = t2_adam_default();
    CHECK_ERR(t2_adam_create(&o, &a, 0), T2_EINVAL, "n=0");
    CHECK(o == NULL);

    float p[8] = {0}, g[8] = {0};
    CHECK_OK(t2_adam_create(&o, &a, 4));
    CHECK_ERR(t2_optim_step(o, p, g, 5), T2_ESHAPE, "n=5");
    CHECK_ERR(t2_optim_step(o, NULL, g, 4), T2_EINVAL, "params");
    CHECK_ERR(t2_optim_step(o, p, NULL, 4), T2_EINVAL, "grads");
    CHECK_ERR(t2_optim_step(NULL, p, g, 4), T2_EINVAL, "NULL");
    CHECK_ERR(t2_optim_step(o, p, p + 2, 4), T2_EINVAL, "overlap");
    CHECK_OK(t2_optim_step(o, p, p + 4, 4));   /* adjacent is fine */
    CHECK_ERR(t2_optim_set_lr(o, -1e-3), T2_EINVAL, "lr=-0.001");
    CHECK_ERR(t2_optim_set_lr(o, INFINITY), T2_EINVAL, "lr=inf");
    CHECK_ERR(t2_optim_set_lr(NULL, 0.1), T2_EINVAL, "NULL");
    CHECK_ERR(t2_optim_set_step_count(o, -1), T2_EINVAL, "step=-1");
    CHECK(t2_optim_step_count(o) == 1);
    t2_optim_free(o);
    t2_optim_free(NULL);
    CHECK(t2_optim_lr(NULL) == 0 && t2_optim_size(NULL) == 0 && t2_optim_step_count(NULL) == 0);
    size_t n = 7;
    CHECK(t2_optim_state(NULL, &n) == NULL && n == 0);
}

static void test_clip(const fixture *f)
{
    const fixture_array *g = fixture_get(f, "grad");
    if (!g) {
        check_failures++;
        return;
    }
    size_t n = g->n;
    float *buf = malloc(n * sizeof *buf);
    static const char *const cases[] = {"norm1", "norm100", "norm0_5"};
    for (int c = 0; c < 3; c++) {
        char name[64];
        snprintf(name, sizeof name, "%s_max", cases[c]);
        double max_norm = fixture_get(f, name)->data[0];
        snprintf(name, sizeof name, "%s_total", cases[c]);
        double want_total = fixture_get(f, name)->data[0], total = -1;
        memcpy(buf, g->data, n * sizeof *buf);
        CHECK_OK(t2_clip_grad_norm(buf, n, max_norm, &total));
        CHECK_NEAR(total, want_total, 1e-5 * want_total);
        snprintf(name, sizeof name, "%s_out", cases[c]);
        CHECK(fixture_compare(f, name, buf, n, RTOL, 1e-7) == 0);
    }
    memcpy(buf, g->data, n * sizeof *buf);
    CHECK_OK(t2_clip_grad_norm(buf, n, 1.0, NULL));   /* total_norm is optional */
    memcpy(buf, g->data, n * sizeof *buf);
    CHECK_OK(t2_clip_grad_value(buf, n, 0.5));
    CHECK(fixture_compare(f, "value0_5_out", buf, n, 0, 0) == 0);

    /* Non-finite norm: report, leave the gradients alone. */
    float bad[5] = {1, 2, NAN, 3, 4}, inf[3] = {1, INFINITY, 0};
    double total = 0;
    CHECK_ERR(t2_clip_grad_norm(bad, 5, 1.0, &total), T2_ENUMERIC, "norm");
    CHECK(isnan(total) && bad[0] == 1 && bad[4] == 4);
    CHECK_RC(t2_clip_grad_norm(inf, 3, 1.0, &total), T2_ENUMERIC);
    CHECK(isinf(total) && inf[0] == 1);
    CHECK_OK(t2_clip_grad_value(bad, 5, 1.5));
    CHECK(bad[0] == 1 && bad[1] == 1.5f && isnan(bad[2]) && bad[3] == 1.5f);
    float zero[4] = {0};
    CHECK_OK(t2_clip_grad_norm(zero, 4, 1.0, &total));
    CHECK(total == 0 && zero[0] == 0);

    CHECK_ERR(t2_clip_grad_norm(NULL, 4, 1.0, NULL), T2_EINVAL, "NULL");
    CHECK_ERR(t2_clip_grad_norm(buf, 0, 1.0, NULL), T2_EINVAL, "n=0");
    CHECK_ERR(t2_clip_grad_norm(buf, n, -1.0, NULL), T2_EINVAL, "max_norm=-1");
    CHECK_ERR(t2_clip_grad_norm(buf, n, NAN, NULL), T2_EINVAL, "max_norm=");
    CHECK_ERR(t2_clip_grad_value(buf, n, -0.5), T2_EINVAL, "clip=-0.5");
    CHECK_ERR(t2_clip_grad_value(NULL, n, 0.5), T2_EINVAL, "NULL");
    CHECK_ERR(t2_clip_grad_value(buf, 0, 0.5), T2_EINVAL, "n=0");
    free(buf);
}

/* A large, odd-sized buffer through the vector loops must agree with a plain scalar reference
 * of the same formulas (catches remainder/aliasing mistakes the small fixtures could miss). */
static void test_large_adamw(void)
{
    const size_t n = 100003;
    float *p = malloc(n * sizeof *p), *g = malloc(n * sizeof *g), *rp = malloc(n * sizeof *rp);
    double *m = calloc(n, sizeof *m), *v = calloc(n, sizeof *v);
    t2_rng r;
    t2_rng_seed(&r, 42);
    for (size_t i = 0; i < n; i++) rp[i] = p[i] = t2_rng_normal(&r);
    t2_adam_params a = t2_adamw_default();
    a.lr = 0.01;
    t2_optim *o = NULL;
    CHECK_OK(t2_adamw_create(&o, &a, n));
    for (int k = 1; k <= 3; k++) {
        for (size_t i = 0; i < n; i++) g[i] = t2_rng_normal(&r);
        CHECK_OK(t2_optim_step(o, p, g, n));
        double bc1 = 1 - pow(0.9, k), bc2 = 1 - pow(0.999, k);
        for (size_t i = 0; i < n; i++) {
            double x = rp[i] * (1 - 0.01 * 0.01);
            m[i] = 0.9 * m[i] + 0.1 * g[i];
            v[i] = 0.999 * v[i] + 0.001 * (double)g[i] * g[i];
            rp[i] = (float)(x - 0.01 / bc1 * m[i] / (sqrt(v[i]) / sqrt(bc2) + 1e-8));
        }
    }
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (!(fabs(p[i] - rp[i]) <= 1e-6 + 1e-4 * fabs(rp[i]))) bad++;
    CHECK(bad == 0);
    t2_optim_free(o);
    free(p);
    free(g);
    free(rp);
    free(m);
    free(v);
}

int main(void)
{
    fixture *f = fixture_load("optim_steps.txt");
    fixture *c = fixture_load("optim_clip.txt");
    CHECK(f != NULL && c != NULL);
    if (f) {
        test_against_torch(f);
        test_restore(f);
    }
    if (c) test_clip(c);
    test_defaults();
    test_bad_input();
    test_large_adamw();
    fixture_free(f);
    fixture_free(c);
    return check_report("test_optim");
}
