/* gradcheck.c — t2_net_gradcheck: t2_net_backward's gradients against central differences of
 * L = sum(y * r), for the input and every parameter tensor (built-in, projection or custom). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "net.h"

/* Entries checked per tensor: enough to catch an indexing bug, few enough to stay fast. */
#define CHECKS_PER_TENSOR 40

typedef struct {
    t2_net *net;
    t2_tensor x;        /* a private copy of the input, perturbed in place */
    const float *r;     /* the fixed weights of L */
    uint64_t seed;
    float eps;
    t2_gradcheck_report *rep;
} gc_state;

/* L at the current input and parameters; the same dropout mask every time (rng from seed). */
static int objective(gc_state *g, double *out)
{
    t2_rng rng;
    t2_rng_seed(&rng, g->seed);
    const t2_tensor *y;
    int rc = t2_net_forward(g->net, &g->x, T2_TRAIN, &rng, &y);
    if (rc) return rc;
    double s = 0.0;
    for (size_t i = 0, n = t2_tensor_numel(y); i < n; i++) s += (double)y->data[i] * g->r[i];
    *out = s;
    return T2_OK;
}

/* Checks every step-th entry of v (perturbed in place) against analytic gradients a. */
static int check_tensor(gc_state *g, const char *what, float *v, const float *a, size_t n)
{
    size_t step = n > CHECKS_PER_TENSOR ? n / CHECKS_PER_TENSOR : 1;
    for (size_t i = 0; i < n; i += step) {
        float keep = v[i];
        double up, down;
        int rc;
        v[i] = keep + g->eps;
        rc = objective(g, &up);
        v[i] = keep - g->eps;
        if (!rc) rc = objective(g, &down);
        v[i] = keep;
        if (rc) return rc;
        /* The actual float step, which differs from 2 eps by rounding. */
        double num = (up - down) / ((double)(keep + g->eps) - (double)(keep - g->eps));
        double err = fabs(a[i] - num) / fmax(1.0, fmax(fabs(a[i]), fabs(num)));
        g->rep->nchecked++;
        if (err > g->rep->max_rel_err || g->rep->nchecked == 1) {
            g->rep->max_rel_err = err;
            g->rep->analytic = a[i];
            g->rep->numeric = num;
            snprintf(g->rep->worst, sizeof g->rep->worst, "%s[%zu]", what, i);
        }
    }
    return T2_OK;
}

int t2_net_gradcheck(t2_net *net, const t2_tensor *x, uint64_t seed, float eps, t2_gradcheck_report *report)
{
    if (!net || !x || !report || !x->data) return t2_seterr(T2_EINVAL, "t2_net_gradcheck: NULL argument");
    if (!(eps > 0.0f && isfinite(eps)))
        return t2_seterr(T2_EINVAL, "t2_net_gradcheck: eps %g must be finite and positive", eps);
    memset(report, 0, sizeof *report);
    size_t np, nb, nx = t2_tensor_numel(x);
    float *params = t2_net_params(net, &np), *grads = t2_net_grads(net, NULL), *bufs = t2_net_buffers(net, &nb);
    if (!params) return t2_seterr(T2_ESTATE, "t2_net_gradcheck: call t2_net_init first");
    gc_state g = {.net = net, .seed = seed, .eps = eps, .rep = report};
    float *saved = malloc((nb ? nb : 1) * sizeof(float)), *ga = malloc((np + nx) * sizeof(float)), *r = NULL;
    int rc = T2_ENOMEM, have_saved = 0;
    if (!saved || !ga || t2_tensor_alloc(&g.x, x->ndim, x->shape) != T2_OK) {
        rc = t2_seterr(T2_ENOMEM, "t2_net_gradcheck: out of memory");
        goto done;
    }
    memcpy(saved, bufs, nb * sizeof(float));
    have_saved = 1;
    memcpy(g.x.data, x->data, nx * sizeof(float));

    t2_rng rng;
    t2_rng_seed(&rng, seed);
    const t2_tensor *y, *dx;
    if ((rc = t2_net_forward(net, &g.x, T2_TRAIN, &rng, &y))) goto done;
    size_t ny = t2_tensor_numel(y);
    if (!(r = malloc(ny * sizeof(float)))) {
        rc = t2_seterr(T2_ENOMEM, "t2_net_gradcheck: out of memory");
        goto done;
    }
    t2_rng_seed(&rng, seed ^ 0x9e3779b97f4a7c15ull);
    for (size_t i = 0; i < ny; i++) r[i] = t2_rng_normal(&rng);
    g.r = r;
    t2_tensor dyt = *y;
    dyt.data = r;
    t2_net_zero_grad(net);
    if ((rc = t2_net_backward(net, &dyt, &dx))) goto done;
    memcpy(ga, grads, np * sizeof(float));
    memcpy(ga + np, dx->data, nx * sizeof(float));

    if ((rc = check_tensor(&g, "input", g.x.data, ga + np, nx))) goto done;
    for (int t = 0, nt = t2_net_num_tensors(net); t < nt; t++) {
        t2_param_info info;
        if ((rc = t2_net_tensor_info(net, t, &info))) goto done;
        if (info.is_buffer) continue;
        if ((rc = check_tensor(&g, info.name, params + info.offset, ga + info.offset, info.size))) goto done;
    }
    /* Leave the gradients of L, as documented (the perturbed forwards did not touch them). */
    memcpy(grads, ga, np * sizeof(float));
    rc = T2_OK;
done:
    if (have_saved) memcpy(bufs, saved, nb * sizeof(float));
    free(saved);
    free(ga);
    free(r);
    t2_tensor_free(&g.x);
    return rc;
}
