/* Custom layers, residual blocks and channel concatenation: finite-difference gradient checks
 * through t2_net_gradcheck, forward values against the same computation done by hand, the tensor
 * table entries of projections and custom layers, located errors, and the fused-relu/aliasing
 * cases at block boundaries. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "t2exp.h"

/* ---- the worked example of docs/writing-a-trial.md: a learnable per-feature scale and shift,
 * y[i, f] = a[f] * x[i, f] + b[f], parameters {a[F], b[F]} ---- */

static int ss_shape(void *user, int in_ndim, const int in_shape[3], int *out_ndim, int out_shape[3])
{
    (void)user;
    if (in_ndim != 1) return t2_seterr(T2_ESHAPE, "scale_shift needs [F] samples");
    *out_ndim = 1;
    out_shape[0] = in_shape[0];
    return T2_OK;
}

static size_t ss_count(void *user, int in_ndim, const int in_shape[3])
{
    (void)user;
    (void)in_ndim;
    return 2 * (size_t)in_shape[0];
}

static int ss_init(void *user, float *p, size_t n, t2_rng *rng)
{
    (void)user;
    (void)rng;
    for (size_t f = 0; f < n / 2; f++) p[f] = 1.0f, p[n / 2 + f] = 0.0f;
    return T2_OK;
}

static int ss_forward(void *user, const t2_layer_call *c, const float *x, float *y)
{
    (void)user;
    size_t nf = c->in_size;
    const float *a = c->params, *b = c->params + nf;
    for (int i = 0; i < c->n; i++)
        for (size_t f = 0; f < nf; f++) y[i * nf + f] = a[f] * x[i * nf + f] + b[f];
    return T2_OK;
}

static int ss_backward(void *user, const t2_layer_call *c, const float *x, const float *y, const float *dy, float *dx)
{
    (void)user;
    (void)y;
    size_t nf = c->in_size;
    const float *a = c->params;
    float *da = c->grads, *db = c->grads + nf;
    for (int i = 0; i < c->n; i++)
        for (size_t f = 0; f < nf; f++) {
            da[f] += dy[i * nf + f] * x[i * nf + f];
            db[f] += dy[i * nf + f];
            if (dx) dx[i * nf + f] = dy[i * nf + f] * a[f];
        }
    return T2_OK;
}

static const t2_layer_def scale_shift = {"scale_shift", ss_shape, ss_count, ss_init, ss_forward, ss_backward};

/* A layer that fails in forward once *user is set. */
static int fail_forward(void *user, const t2_layer_call *c, const float *x, float *y)
{
    if (*(int *)user) return t2_seterr(T2_ENUMERIC, "saw a NaN in sample 1");
    memcpy(y, x, (size_t)c->n * c->in_size * sizeof(float));
    return T2_OK;
}

static const t2_layer_def failing = {"failing", ss_shape, NULL, NULL, fail_forward, ss_backward};

static t2_net *net_of(int ndim, const int *shape)
{
    t2_net *net = NULL;
    if (t2_net_create(&net, ndim, shape) != T2_OK) abort();
    return net;
}

static t2_tensor input(int n, int ndim, const int *shape, uint64_t seed)
{
    int s[T2_MAX_DIMS] = {n, 1, 1, 1};
    for (int i = 0; i < ndim; i++) s[i + 1] = shape[i];
    t2_tensor x;
    if (t2_tensor_alloc(&x, ndim + 1, s) != T2_OK) abort();
    t2_rng r;
    t2_rng_seed(&r, seed);
    for (size_t i = 0, c = t2_tensor_numel(&x); i < c; i++) x.data[i] = t2_rng_normal(&r);
    return x;
}

static double worst_seen;

/* Initialises net, nudges its parameters off their symmetric starting values, and checks its
 * gradients on a random batch; frees the net. */
static void gradcheck(const char *what, t2_net *net, int n, int ndim, const int *shape, float eps)
{
    t2_rng r;
    t2_rng_seed(&r, 5);
    CHECK_OK(t2_net_init(net, &r));
    size_t np;
    float *p = t2_net_params(net, &np);
    for (size_t i = 0; i < np; i++) p[i] += 0.1f * t2_rng_normal(&r);
    t2_tensor x = input(n, ndim, shape, 17);
    t2_gradcheck_report rep;
    CHECK_OK(t2_net_gradcheck(net, &x, 3, eps, &rep));
    printf("gradcheck %-22s max_rel_err %.3g at %s (%d entries)\n", what, rep.max_rel_err, rep.worst, rep.nchecked);
    CHECK(rep.nchecked > 0);
    if (!(rep.max_rel_err < 1e-2)) {
        fprintf(stderr, "gradcheck %s: %s analytic %.6g numeric %.6g\n", what, rep.worst, rep.analytic, rep.numeric);
        check_failures++;
    }
    if (rep.max_rel_err > worst_seen) worst_seen = rep.max_rel_err;
    t2_tensor_free(&x);
    t2_net_free(net);
}

/* The index of the tensor named `name`, -1 if none. */
static int find_tensor(const t2_net *net, const char *name, t2_param_info *out)
{
    for (int i = 0; i < t2_net_num_tensors(net); i++) {
        t2_net_tensor_info(net, i, out);
        if (!strcmp(out->name, name)) return i;
    }
    return -1;
}

static void custom_layers(void)
{
    int flat[1] = {6};
    t2_net *net = net_of(1, flat);
    CHECK_OK(t2_net_dense(net, 5));
    CHECK_OK(t2_net_custom(net, &scale_shift, NULL));
    CHECK_OK(t2_net_tanh(net));
    t2_rng r;
    t2_rng_seed(&r, 1);
    CHECK_OK(t2_net_init(net, &r));
    t2_param_info info;
    CHECK(find_tensor(net, "1.custom:scale_shift.param", &info) >= 0);
    CHECK(info.size == 10 && info.ndim == 1 && !info.is_buffer);
    /* Its init ran on its own slice: a = 1, b = 0. */
    float *p = t2_net_params(net, NULL) + info.offset;
    CHECK(p[0] == 1.0f && p[4] == 1.0f && p[5] == 0.0f && p[9] == 0.0f);
    char sum[512];
    CHECK_OK(t2_net_summary(net, sum, sizeof sum));
    CHECK(strstr(sum, "custom:scale_shift") != NULL);
    t2_net_free(net);

    net = net_of(1, flat);
    CHECK_OK(t2_net_dense(net, 5));
    CHECK_OK(t2_net_custom(net, &scale_shift, NULL));
    CHECK_OK(t2_net_tanh(net));
    gradcheck("custom scale_shift", net, 4, 1, flat, 1e-2f);

    /* Refusals, located. */
    int img[3] = {2, 4, 4};
    net = net_of(3, img);
    CHECK_RC(t2_net_custom(net, &scale_shift, NULL), T2_ESHAPE);
    CHECK(strstr(t2_errmsg(), "layer 0 (custom:scale_shift)") && strstr(t2_errmsg(), "needs [F] samples"));
    t2_layer_def bad = scale_shift;
    bad.name = "has space";
    CHECK_RC(t2_net_custom(net, &bad, NULL), T2_EINVAL);
    bad = scale_shift;
    bad.backward = NULL;
    CHECK_RC(t2_net_custom(net, &bad, NULL), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "backward") != NULL);
    t2_net_free(net);

    /* A failing forward fails the net's forward, naming layer and callback message; no backward
     * may follow it. */
    int fail = 0;
    net = net_of(1, flat);
    CHECK_OK(t2_net_dense(net, 6));
    CHECK_OK(t2_net_custom(net, &failing, &fail));
    CHECK_OK(t2_net_init(net, &r));
    t2_tensor x = input(2, 1, flat, 3);
    const t2_tensor *y;
    CHECK_OK(t2_net_forward(net, &x, T2_TRAIN, &r, &y));
    fail = 1;
    CHECK_RC(t2_net_forward(net, &x, T2_TRAIN, &r, &y), T2_ENUMERIC);
    CHECK(strstr(t2_errmsg(), "t2_net_forward: layer 1 (custom:failing) failed: saw a NaN in sample 1") != NULL);
    t2_tensor dy = input(2, 1, flat, 4);
    CHECK_RC(t2_net_backward(net, &dy, NULL), T2_ESTATE);
    t2_tensor_free(&dy);
    t2_tensor_free(&x);
    t2_net_free(net);
}

static void residual_blocks(void)
{
    int flat[1] = {6}, img[3] = {3, 7, 6};
    t2_net *net;

    /* Same shape, vectors. */
    net = net_of(1, flat);
    CHECK_OK(t2_net_residual_begin(net));
    CHECK_OK(t2_net_dense(net, 8));
    CHECK_OK(t2_net_tanh(net));
    CHECK_OK(t2_net_dense(net, 6));
    CHECK_OK(t2_net_residual_end(net));
    CHECK_OK(t2_net_tanh(net));
    gradcheck("residual vector", net, 4, 1, flat, 1e-2f);

    /* Projected, vectors (6 -> 4): a dense projection. */
    net = net_of(1, flat);
    CHECK_OK(t2_net_dense(net, 6));
    CHECK_OK(t2_net_residual_begin(net));
    CHECK_OK(t2_net_dense(net, 4));
    CHECK_OK(t2_net_sigmoid(net));
    CHECK_OK(t2_net_residual_end(net));
    gradcheck("residual vector proj", net, 3, 1, flat, 1e-2f);

    /* Same shape, images, with batchnorm inside. */
    net = net_of(3, img);
    CHECK_OK(t2_net_residual_begin(net));
    CHECK_OK(t2_net_conv2d(net, 3, 3, 1, 1));
    CHECK_OK(t2_net_batchnorm(net, 1e-5f, 0.1f));
    CHECK_OK(t2_net_tanh(net));
    CHECK_OK(t2_net_residual_end(net));
    gradcheck("residual image", net, 3, 3, img, 1e-2f);

    /* Projected, images: stride 2 and more channels (3x7x6 -> 5x4x3), 1x1 conv with stride 2. */
    net = net_of(3, img);
    CHECK_OK(t2_net_conv2d(net, 3, 3, 1, 1));
    CHECK_OK(t2_net_residual_begin(net));
    CHECK_OK(t2_net_conv2d(net, 5, 3, 2, 1));
    CHECK_OK(t2_net_tanh(net));
    CHECK_OK(t2_net_conv2d(net, 5, 3, 1, 1));
    CHECK_OK(t2_net_residual_end(net));
    CHECK_OK(t2_net_flatten(net));
    CHECK_OK(t2_net_dense(net, 3));
    t2_rng r;
    t2_rng_seed(&r, 1);
    {
        /* Look at the table before the check frees the net. */
        t2_net *probe = net_of(3, img);
        CHECK_OK(t2_net_conv2d(probe, 3, 3, 1, 1));
        CHECK_OK(t2_net_residual_begin(probe));
        CHECK_OK(t2_net_conv2d(probe, 5, 3, 2, 1));
        CHECK_OK(t2_net_residual_end(probe));
        CHECK_OK(t2_net_init(probe, &r));
        t2_param_info info;
        CHECK(find_tensor(probe, "2.residual.proj_weight", &info) >= 0);
        CHECK(info.ndim == 4 && info.shape[0] == 5 && info.shape[1] == 3 && info.shape[2] == 1 && info.shape[3] == 1);
        CHECK(find_tensor(probe, "2.residual.proj_bias", &info) >= 0 && info.size == 5);
        int nd, os[T2_MAX_DIMS];
        CHECK_OK(t2_net_output_shape(probe, &nd, os));
        CHECK(nd == 3 && os[0] == 5 && os[1] == 4 && os[2] == 3);
        t2_net_free(probe);
    }
    gradcheck("residual image proj s2", net, 2, 3, img, 1e-2f);

    /* Nested: a residual inside a residual, and blocks back to back sharing a skip source. */
    net = net_of(1, flat);
    CHECK_OK(t2_net_residual_begin(net));
    CHECK_OK(t2_net_residual_begin(net));
    CHECK_OK(t2_net_dense(net, 6));
    CHECK_OK(t2_net_tanh(net));
    CHECK_OK(t2_net_residual_end(net));
    CHECK_OK(t2_net_dense(net, 5));
    CHECK_OK(t2_net_residual_end(net));
    CHECK_OK(t2_net_residual_begin(net));
    CHECK_OK(t2_net_gelu(net));
    CHECK_OK(t2_net_residual_end(net));
    gradcheck("residual nested", net, 3, 1, flat, 1e-2f);

    /* With relu (kinks: a smaller eps; 1e-3 crosses some even without blocks) and the fusion cases: conv+relu inside, relu opening a block
     * right after a conv (must not fuse: the skip input is the conv's raw output). */
    net = net_of(3, img);
    CHECK_OK(t2_net_conv2d(net, 4, 3, 1, 1));
    CHECK_OK(t2_net_residual_begin(net));
    CHECK_OK(t2_net_relu(net));
    CHECK_OK(t2_net_conv2d(net, 4, 3, 1, 1));
    CHECK_OK(t2_net_relu(net));
    CHECK_OK(t2_net_residual_end(net));
    CHECK_OK(t2_net_relu(net));
    gradcheck("residual relu fusion", net, 2, 3, img, 3e-4f);
}

/* y = conv(x) + relu(conv(x)) through a block opening with relu after the conv, against the conv
 * alone: the skip input must stay un-relu'd. And a flatten opening a block aliases its input. */
static void aliasing_at_boundaries(void)
{
    int img[3] = {2, 5, 5};
    t2_rng r;
    t2_net *a = net_of(3, img), *b = net_of(3, img);
    CHECK_OK(t2_net_conv2d(a, 3, 3, 1, 1));
    CHECK_OK(t2_net_residual_begin(a));
    CHECK_OK(t2_net_relu(a));
    CHECK_OK(t2_net_residual_end(a));
    CHECK_OK(t2_net_flatten(a));
    CHECK_OK(t2_net_concat_begin(a));
    CHECK_OK(t2_net_flatten(a));
    CHECK_OK(t2_net_concat_end(a));
    CHECK_OK(t2_net_conv2d(b, 3, 3, 1, 1));
    t2_rng_seed(&r, 9);
    CHECK_OK(t2_net_init(a, &r));
    t2_rng_seed(&r, 9);
    CHECK_OK(t2_net_init(b, &r));
    t2_tensor x = input(2, 3, img, 21);
    const t2_tensor *ya, *yb;
    CHECK_OK(t2_net_forward(a, &x, T2_TRAIN, &r, &ya));
    CHECK_OK(t2_net_forward(b, &x, T2_TRAIN, &r, &yb));
    size_t per = 3 * 5 * 5;
    CHECK(ya->ndim == 2 && ya->shape[1] == (int)(2 * per));
    int bad = 0;
    for (int i = 0; i < 2; i++)
        for (size_t k = 0; k < per; k++) {
            float c = yb->data[i * per + k], want = c + (c > 0 ? c : 0);
            if (fabsf(ya->data[i * 2 * per + k] - want) > 1e-5f || fabsf(ya->data[i * 2 * per + per + k] - want) > 1e-5f)
                bad++;
        }
    CHECK(bad == 0);
    t2_tensor_free(&x);
    t2_net_free(a);
    t2_net_free(b);
}

static void concat_blocks(void)
{
    int flat[1] = {5}, img[3] = {2, 6, 5};
    t2_net *net = net_of(3, img);
    CHECK_OK(t2_net_concat_begin(net));
    CHECK_OK(t2_net_conv2d(net, 3, 3, 1, 1));
    CHECK_OK(t2_net_tanh(net));
    CHECK_OK(t2_net_concat_end(net));
    CHECK_OK(t2_net_conv2d(net, 2, 3, 1, 0));
    gradcheck("concat image", net, 2, 3, img, 1e-2f);

    net = net_of(1, flat);
    CHECK_OK(t2_net_dense(net, 4));
    CHECK_OK(t2_net_concat_begin(net));
    CHECK_OK(t2_net_dense(net, 3));
    CHECK_OK(t2_net_sigmoid(net));
    CHECK_OK(t2_net_residual_begin(net));
    CHECK_OK(t2_net_dense(net, 3));
    CHECK_OK(t2_net_residual_end(net));
    CHECK_OK(t2_net_concat_end(net));
    int nd, os[T2_MAX_DIMS];
    CHECK_OK(t2_net_output_shape(net, &nd, os));
    CHECK(nd == 1 && os[0] == 7);
    gradcheck("concat vector + nested", net, 3, 1, flat, 1e-2f);
}

static void block_errors(void)
{
    int img[3] = {2, 6, 6}, flat[1] = {4};
    t2_rng r;
    t2_rng_seed(&r, 1);
    t2_net *net = net_of(3, img);
    CHECK_RC(t2_net_residual_end(net), T2_ESTATE);
    CHECK_OK(t2_net_residual_begin(net));
    CHECK_RC(t2_net_concat_end(net), T2_ESTATE);
    CHECK(strstr(t2_errmsg(), "no matching t2_net_concat_begin") != NULL);
    CHECK_RC(t2_net_residual_end(net), T2_ESTATE);
    CHECK(strstr(t2_errmsg(), "empty") != NULL);
    CHECK_OK(t2_net_maxpool2d(net, 2, 2));
    CHECK_OK(t2_net_flatten(net));
    CHECK_RC(t2_net_residual_end(net), T2_ESHAPE);
    CHECK(strstr(t2_errmsg(), "[2, 6, 6] to [18]") != NULL);
    CHECK_RC(t2_net_init(net, &r), T2_ESTATE);
    CHECK(strstr(t2_errmsg(), "residual block opened after layer -1 is not closed") != NULL);
    t2_net_free(net);

    /* Channels stay, pixels cannot be reached by a stride (6x6 -> 5x5). */
    net = net_of(3, img);
    CHECK_OK(t2_net_residual_begin(net));
    CHECK_OK(t2_net_conv2d(net, 2, 2, 1, 0));
    CHECK_RC(t2_net_residual_end(net), T2_ESHAPE);
    CHECK_OK(t2_net_conv2d(net, 2, 1, 1, 0)); /* still open: keeps going after the refusal */
    CHECK_RC(t2_net_concat_end(net), T2_ESTATE);
    t2_net_free(net);

    net = net_of(3, img);
    CHECK_OK(t2_net_concat_begin(net));
    CHECK_OK(t2_net_maxpool2d(net, 2, 2));
    CHECK_RC(t2_net_concat_end(net), T2_ESHAPE);
    CHECK(strstr(t2_errmsg(), "H and W must agree") != NULL);
    t2_net_free(net);

    net = net_of(1, flat);
    for (int i = 0; i < T2_NET_MAX_NESTING; i++) CHECK_OK(t2_net_residual_begin(net));
    CHECK_RC(t2_net_residual_begin(net), T2_ESTATE);
    CHECK(strstr(t2_errmsg(), "at most") != NULL);
    CHECK_RC(t2_net_residual_begin(NULL), T2_EINVAL);
    t2_net_free(net);

    t2_gradcheck_report rep;
    net = net_of(1, flat);
    CHECK_OK(t2_net_dense(net, 2));
    t2_tensor x = input(2, 1, flat, 1);
    CHECK_RC(t2_net_gradcheck(net, &x, 1, 1e-2f, &rep), T2_ESTATE);
    CHECK_OK(t2_net_init(net, &r));
    CHECK_RC(t2_net_gradcheck(net, &x, 1, 0.0f, &rep), T2_EINVAL);
    t2_tensor_free(&x);
    t2_net_free(net);
}

int main(void)
{
    custom_layers();
    residual_blocks();
    concat_blocks();
    aliasing_at_boundaries();
    block_errors();
    /* Again with a pool of three threads: layers split batches per thread. */
    CHECK_OK(t2_set_num_threads(3));
    residual_blocks();
    concat_blocks();
    CHECK_OK(t2_set_num_threads(1));
    printf("worst gradcheck error: %.3g\n", worst_seen);
    return check_report("test_nn_graph");
}
