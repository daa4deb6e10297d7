/* Gradient checks for layer norm, embedding and global average pooling, alone and in small nets,
 * and their independence from the thread count: the same input through 1 and 2 threads gives
 * bit-identical outputs, input gradients and parameter gradients. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "t2exp.h"

#define EPS 1e-2f
#define TOL 2e-2

static t2_net *net_of(int ndim, const int *shape)
{
    t2_net *net = NULL;
    if (t2_net_create(&net, ndim, shape) != T2_OK) abort();
    return net;
}

/* [n, sample] of N(0,1) values, or of integer ids in [0, ids) when ids > 0. */
static t2_tensor input(int n, int ndim, const int *shape, uint64_t seed, int ids)
{
    int s[T2_MAX_DIMS] = {n, 1, 1, 1};
    for (int i = 0; i < ndim; i++) s[i + 1] = shape[i];
    t2_tensor x;
    if (t2_tensor_alloc(&x, ndim + 1, s) != T2_OK) abort();
    t2_rng r;
    t2_rng_seed(&r, seed);
    for (size_t i = 0, c = t2_tensor_numel(&x); i < c; i++)
        x.data[i] = ids ? (float)t2_rng_below(&r, (uint64_t)ids) : t2_rng_normal(&r);
    return x;
}

/* Initialises net and moves its parameters off their initial values (layer norm starts at
 * weight 1, bias 0, which would hide a swapped weight/bias gradient). */
static void init(t2_net *net)
{
    t2_rng r;
    t2_rng_seed(&r, 7);
    CHECK_OK(t2_net_init(net, &r));
    size_t np;
    float *p = t2_net_params(net, &np);
    for (size_t i = 0; i < np; i++) p[i] += 0.3f * t2_rng_normal(&r);
}

/* The library's checker (input and every parameter tensor). */
static void check_net(const char *what, t2_net *net, int n, int ndim, const int *shape)
{
    init(net);
    t2_tensor x = input(n, ndim, shape, 11, 0);
    t2_gradcheck_report rep;
    CHECK_OK(t2_net_gradcheck(net, &x, 99, EPS, &rep));
    CHECK(rep.nchecked > 0);
    if (!(rep.max_rel_err <= TOL)) {
        fprintf(stderr, "gradcheck %s %s: analytic %.6g numeric %.6g\n", what, rep.worst, rep.analytic, rep.numeric);
        check_failures++;
    }
    t2_tensor_free(&x);
    t2_net_free(net);
}

static double objective(t2_net *net, const t2_tensor *x, const float *r)
{
    const t2_tensor *y;
    t2_rng rng; /* training mode wants one; none of these layers draws from it */
    t2_rng_seed(&rng, 1);
    if (t2_net_forward(net, x, T2_TRAIN, &rng, &y) != T2_OK) {
        fprintf(stderr, "forward failed: %s\n", t2_errmsg());
        check_failures++;
        return 0.0;
    }
    double s = 0.0;
    for (size_t i = 0, c = t2_tensor_numel(y); i < c; i++) s += (double)y->data[i] * r[i];
    return s;
}

/* A net that starts with an embedding: its input (ids) cannot be perturbed, so only parameters
 * are checked here, every entry of the embedding weight included (ids repeat: their gradients
 * must add up), against central differences of L = sum(y * r). dx must be zero. */
static void check_embedding_net(const char *what, t2_net *net, int n, int T, int num)
{
    init(net);
    int shape[1] = {T};
    t2_tensor x = input(n, 1, shape, 13, num);
    const t2_tensor *y, *dx;
    t2_rng rng;
    t2_rng_seed(&rng, 5);
    if (t2_net_forward(net, &x, T2_TRAIN, &rng, &y) != T2_OK) abort();
    size_t ny = t2_tensor_numel(y), np;
    float *r = malloc(ny * sizeof *r);
    if (!r) abort();
    for (size_t i = 0; i < ny; i++) r[i] = t2_rng_normal(&rng);
    t2_tensor dy = *y;
    dy.data = r;
    t2_net_zero_grad(net);
    if (t2_net_backward(net, &dy, &dx) != T2_OK) abort();
    for (size_t i = 0, c = t2_tensor_numel(&x); i < c; i++) CHECK(dx->data[i] == 0.0f);
    float *p = t2_net_params(net, &np), *g = t2_net_grads(net, NULL);
    float *a = malloc(np * sizeof *a);
    if (!a) abort();
    memcpy(a, g, np * sizeof *a);
    double worst = 0.0;
    size_t nonzero = 0;
    for (size_t i = 0; i < np; i++) {
        float keep = p[i];
        p[i] = keep + EPS;
        double up = objective(net, &x, r);
        p[i] = keep - EPS;
        double down = objective(net, &x, r);
        p[i] = keep;
        double num_g = (up - down) / ((double)(keep + EPS) - (double)(keep - EPS));
        double err = fabs(a[i] - num_g) / fmax(1.0, fmax(fabs(a[i]), fabs(num_g)));
        if (err > worst) worst = err;
        if (err > TOL) fprintf(stderr, "gradcheck %s param[%zu]: analytic %.6g numeric %.6g\n", what, i, a[i], num_g);
        nonzero += a[i] != 0.0f;
    }
    CHECK(worst <= TOL);
    CHECK(nonzero > np / 4); /* the check saw real gradients, not a net of zeros */
    free(a);
    free(r);
    t2_tensor_free(&x);
    t2_net_free(net);
}

/* One training step's output, input gradient and parameter gradients at 1 and at 2 threads must
 * be identical bit for bit. */
static void check_threads(const char *what, t2_net *net, int n, int ndim, const int *shape, int ids)
{
    init(net);
    t2_tensor x = input(n, ndim, shape, 17, ids);
    float *keep[3] = {NULL, NULL, NULL};
    size_t len[3] = {0, 0, 0};
    for (int threads = 1; threads <= 2; threads++) {
        CHECK_OK(t2_set_num_threads(threads));
        const t2_tensor *y, *dx;
        t2_rng rng;
        t2_rng_seed(&rng, 3);
        if (t2_net_forward(net, &x, T2_TRAIN, &rng, &y) != T2_OK) abort();
        t2_tensor dy = *y;
        size_t ny = t2_tensor_numel(y), np;
        float *r = malloc(ny * sizeof *r);
        if (!r) abort();
        for (size_t i = 0; i < ny; i++) r[i] = t2_rng_normal(&rng);
        dy.data = r;
        t2_net_zero_grad(net);
        if (t2_net_backward(net, &dy, &dx) != T2_OK) abort();
        const float *g = t2_net_grads(net, &np);
        const float *got[3] = {y->data, dx->data, g};
        size_t glen[3] = {ny, t2_tensor_numel(&x), np};
        for (int k = 0; k < 3; k++) {
            if (threads == 1) {
                keep[k] = malloc(glen[k] * sizeof(float));
                if (!keep[k]) abort();
                memcpy(keep[k], got[k], glen[k] * sizeof(float));
                len[k] = glen[k];
            } else if (len[k] != glen[k] || memcmp(keep[k], got[k], glen[k] * sizeof(float)) != 0) {
                fprintf(stderr, "%s: %s differs between 1 and 2 threads\n", what,
                        k == 0 ? "output" : k == 1 ? "input gradient" : "parameter gradient");
                check_failures++;
            }
        }
        free(r);
    }
    for (int k = 0; k < 3; k++) free(keep[k]);
    CHECK_OK(t2_set_num_threads(1));
    t2_tensor_free(&x);
    t2_net_free(net);
}

static void all(void)
{
    int flat[1] = {6}, img[3] = {2, 3, 5}, big[3] = {3, 4, 5}, ids[1] = {6};
    t2_net *net;

    net = net_of(1, flat);
    CHECK_OK(t2_net_layernorm(net, 1e-5f));
    check_net("layernorm_1d", net, 5, 1, flat);
    net = net_of(3, img);
    CHECK_OK(t2_net_layernorm(net, 1e-5f));
    check_net("layernorm_3d", net, 3, 3, img);
    net = net_of(3, big);
    CHECK_OK(t2_net_global_avgpool(net));
    check_net("global_avgpool", net, 3, 3, big);

    /* A small all-smooth CNN head: conv, layer norm over W, global pooling, dense. */
    net = net_of(3, big);
    CHECK_OK(t2_net_conv2d(net, 4, 3, 1, 1));
    CHECK_OK(t2_net_layernorm(net, 1e-5f));
    CHECK_OK(t2_net_tanh(net));
    CHECK_OK(t2_net_global_avgpool(net));
    CHECK_OK(t2_net_dense(net, 3));
    check_net("conv_layernorm_gap_dense", net, 2, 3, big);

    net = net_of(1, ids);
    CHECK_OK(t2_net_embedding(net, 5, 3));
    check_embedding_net("embedding", net, 4, 6, 5);
    /* Tokens -> embedding -> layer norm over dim -> flatten -> dense, and -> global pooling. */
    net = net_of(1, ids);
    CHECK_OK(t2_net_embedding(net, 9, 4));
    CHECK_OK(t2_net_layernorm(net, 1e-5f));
    CHECK_OK(t2_net_flatten(net));
    CHECK_OK(t2_net_dense(net, 3));
    check_embedding_net("embedding_layernorm_dense", net, 3, 6, 9);
    net = net_of(1, ids);
    CHECK_OK(t2_net_embedding(net, 9, 4));
    CHECK_OK(t2_net_global_avgpool(net));
    check_embedding_net("embedding_gap", net, 3, 6, 9);
}

static void threads(void)
{
    int flat[1] = {33}, img[3] = {3, 7, 9}, ids[1] = {12};
    t2_net *net;
    net = net_of(1, flat);
    CHECK_OK(t2_net_layernorm(net, 1e-5f));
    check_threads("layernorm_1d", net, 17, 1, flat, 0);
    net = net_of(3, img);
    CHECK_OK(t2_net_layernorm(net, 1e-5f));
    check_threads("layernorm_3d", net, 9, 3, img, 0);
    net = net_of(3, img);
    CHECK_OK(t2_net_global_avgpool(net));
    check_threads("global_avgpool", net, 9, 3, img, 0);
    net = net_of(1, ids);
    CHECK_OK(t2_net_embedding(net, 20, 8));
    CHECK_OK(t2_net_layernorm(net, 1e-5f));
    CHECK_OK(t2_net_global_avgpool(net));
    check_threads("embedding_layernorm_gap", net, 15, 1, ids, 20);
}

int main(void)
{
    all();
    CHECK_OK(t2_set_num_threads(3));
    all();
    CHECK_OK(t2_set_num_threads(1));
    threads();
    return check_report("test_nn_modern_gradcheck");
}
