/* Agreement with PyTorch: every layer, loss and metric against the fixtures written by
 * tests/fixtures/torch_nn.py (forward output, input gradient, parameter gradients, batchnorm
 * running statistics), within 1e-4 relative. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "fixture.h"
#include "t2exp.h"

#define RTOL 1e-4
#define ATOL 1e-5

typedef int (*add_fn)(t2_net *net, const fixture_array *meta);

static int add_dense(t2_net *n, const fixture_array *m) { return t2_net_dense(n, (int)m->data[1]); }
static int add_maxpool(t2_net *n, const fixture_array *m) { return t2_net_maxpool2d(n, (int)m->data[0], (int)m->data[1]); }
static int add_avgpool(t2_net *n, const fixture_array *m)
{
    return t2_net_avgpool2d(n, (int)m->data[0], (int)m->data[1], (int)m->data[2]);
}
static int add_relu(t2_net *n, const fixture_array *m) { (void)m; return t2_net_relu(n); }
static int add_leaky(t2_net *n, const fixture_array *m) { (void)m; return t2_net_leaky_relu(n, 0.1f); }
static int add_tanh(t2_net *n, const fixture_array *m) { (void)m; return t2_net_tanh(n); }
static int add_sigmoid(t2_net *n, const fixture_array *m) { (void)m; return t2_net_sigmoid(n); }
static int add_gelu(t2_net *n, const fixture_array *m) { (void)m; return t2_net_gelu(n); }
static int add_logsm(t2_net *n, const fixture_array *m) { (void)m; return t2_net_log_softmax(n); }
static int add_bn(t2_net *n, const fixture_array *m) { (void)m; return t2_net_batchnorm(n, 1e-5f, 0.1f); }

/* conv fixtures carry [stride, padding, kernel] and the out-channel count in the weight shape. */
static const fixture *conv_fx;
static int add_conv(t2_net *n, const fixture_array *m)
{
    const fixture_array *w = fixture_get(conv_fx, "weight");
    return t2_net_conv2d(n, w->shape[0], (int)m->data[2], (int)m->data[0], (int)m->data[1]);
}

static void copy_in(const fixture *f, const char *name, float *dst, size_t n)
{
    const fixture_array *a = fixture_get(f, name);
    CHECK(a && a->n == n);
    if (a && a->n == n) memcpy(dst, a->data, n * sizeof(float));
}

static void layer_case(const char *file, add_fn add, t2_mode mode)
{
    fixture *f = fixture_load(file);
    CHECK(f != NULL);
    if (!f) return;
    conv_fx = f;
    const fixture_array *x = fixture_get(f, "x"), *meta = fixture_get(f, "meta");
    t2_tensor xt = t2_tensor_view(x->data, x->ndim, x->shape);
    t2_net *net = NULL;
    CHECK_OK(t2_net_create(&net, x->ndim - 1, x->shape + 1));
    CHECK_OK(add(net, meta));
    t2_rng r;
    t2_rng_seed(&r, 1);
    CHECK_OK(t2_net_init(net, &r));
    size_t np, nb;
    float *p = t2_net_params(net, &np), *b = t2_net_buffers(net, &nb);
    int has_w = fixture_get(f, "weight") != NULL;
    if (has_w) {
        const fixture_array *w = fixture_get(f, "weight"), *bias = fixture_get(f, "bias");
        CHECK(np == w->n + bias->n);
        copy_in(f, "weight", p, w->n);
        copy_in(f, "bias", p + w->n, bias->n);
    }
    if (nb) {
        copy_in(f, "running_mean", b, nb / 2);
        copy_in(f, "running_var", b + nb / 2, nb / 2);
    }
    const t2_tensor *y, *dx;
    CHECK_OK(t2_net_forward(net, &xt, mode, &r, &y));
    size_t ny = t2_tensor_numel(y);
    CHECK(fixture_compare(f, "y", y->data, ny, RTOL, ATOL) == 0);
    if (mode == T2_TRAIN) {
        const fixture_array *dy = fixture_get(f, "dy");
        t2_tensor dyt = *y;
        dyt.data = dy->data;
        t2_net_zero_grad(net);
        CHECK_OK(t2_net_backward(net, &dyt, &dx));
        CHECK(fixture_compare(f, "dx", dx->data, t2_tensor_numel(&xt), RTOL, ATOL) == 0);
        if (has_w) {
            const float *g = t2_net_grads(net, NULL);
            size_t nw = fixture_get(f, "weight")->n;
            CHECK(fixture_compare(f, "d_weight", g, nw, RTOL, ATOL) == 0);
            CHECK(fixture_compare(f, "d_bias", g + nw, np - nw, RTOL, ATOL) == 0);
        }
        if (nb) {
            CHECK(fixture_compare(f, "running_mean_after", b, nb / 2, RTOL, ATOL) == 0);
            CHECK(fixture_compare(f, "running_var_after", b + nb / 2, nb / 2, RTOL, ATOL) == 0);
        }
    }
    t2_net_free(net);
    fixture_free(f);
}

static int32_t *labels_of(const fixture *f, const char *name)
{
    const fixture_array *a = fixture_get(f, name);
    int32_t *l = malloc(a->n * sizeof *l);
    for (size_t i = 0; i < a->n; i++) l[i] = (int32_t)a->data[i];
    return l;
}

static void loss_case(const char *file, int kind)
{
    fixture *f = fixture_load(file);
    CHECK(f != NULL);
    if (!f) return;
    const fixture_array *in = fixture_get(f, kind == 3 ? "input" : kind == 2 ? "input" : "logits");
    t2_tensor x = t2_tensor_view(in->data, in->ndim, in->shape), d;
    CHECK_OK(t2_tensor_alloc(&d, in->ndim, in->shape));
    float loss = 0;
    int32_t *labels = kind < 3 ? labels_of(f, "labels") : NULL;
    if (kind == 0) CHECK_OK(t2_loss_softmax_xent(&x, labels, 0.0f, &loss, &d));
    if (kind == 1) CHECK_OK(t2_loss_softmax_xent(&x, labels, 0.1f, &loss, &d));
    if (kind == 2) CHECK_OK(t2_loss_nll(&x, labels, &loss, &d));
    if (kind == 3) {
        const fixture_array *t = fixture_get(f, "target");
        t2_tensor tt = t2_tensor_view(t->data, t->ndim, t->shape);
        CHECK_OK(t2_loss_mse(&x, &tt, &loss, &d));
    }
    CHECK(fixture_compare(f, "loss", &loss, 1, RTOL, ATOL) == 0);
    CHECK(fixture_compare(f, "d_input", d.data, t2_tensor_numel(&x), RTOL, ATOL) == 0);
    free(labels);
    t2_tensor_free(&d);
    fixture_free(f);
}

static void topk_case(void)
{
    fixture *f = fixture_load("metrics_topk.txt");
    CHECK(f != NULL);
    if (!f) return;
    const fixture_array *s = fixture_get(f, "logits");
    t2_tensor st = t2_tensor_view(s->data, s->ndim, s->shape);
    int32_t *labels = labels_of(f, "labels");
    int64_t c1 = -1, c3 = -1;
    CHECK_OK(t2_topk_correct(&st, labels, 1, &c1));
    CHECK_OK(t2_topk_correct(&st, labels, 3, &c3));
    float top1 = (float)c1 / s->shape[0], top3 = (float)c3 / s->shape[0];
    CHECK(fixture_compare(f, "top1", &top1, 1, RTOL, ATOL) == 0);
    CHECK(fixture_compare(f, "top3", &top3, 1, RTOL, ATOL) == 0);
    free(labels);
    fixture_free(f);
}

int main(void)
{
    layer_case("nn_dense.txt", add_dense, T2_TRAIN);
    layer_case("nn_dense_big.txt", add_dense, T2_TRAIN);
    layer_case("nn_conv2d.txt", add_conv, T2_TRAIN);
    layer_case("nn_conv2d_s2p1.txt", add_conv, T2_TRAIN);
    layer_case("nn_conv2d_k5p2.txt", add_conv, T2_TRAIN);
    layer_case("nn_conv2d_1x1.txt", add_conv, T2_TRAIN);
    layer_case("nn_maxpool2d.txt", add_maxpool, T2_TRAIN);
    layer_case("nn_maxpool2d_k3s2.txt", add_maxpool, T2_TRAIN);
    layer_case("nn_avgpool2d.txt", add_avgpool, T2_TRAIN);
    layer_case("nn_avgpool2d_k3s1p1.txt", add_avgpool, T2_TRAIN);
    layer_case("nn_relu.txt", add_relu, T2_TRAIN);
    layer_case("nn_leaky_relu.txt", add_leaky, T2_TRAIN);
    layer_case("nn_tanh.txt", add_tanh, T2_TRAIN);
    layer_case("nn_sigmoid.txt", add_sigmoid, T2_TRAIN);
    layer_case("nn_gelu.txt", add_gelu, T2_TRAIN);
    layer_case("nn_log_softmax.txt", add_logsm, T2_TRAIN);
    layer_case("nn_batchnorm1d_train.txt", add_bn, T2_TRAIN);
    layer_case("nn_batchnorm2d_train.txt", add_bn, T2_TRAIN);
    /* Eval mode: forward with the running statistics (backward needs a training forward). */
    layer_case("nn_batchnorm1d_eval.txt", add_bn, T2_EVAL);
    layer_case("nn_batchnorm2d_eval.txt", add_bn, T2_EVAL);
    loss_case("loss_softmax_xent.txt", 0);
    loss_case("loss_softmax_xent_ls.txt", 1);
    loss_case("loss_nll.txt", 2);
    loss_case("loss_mse.txt", 3);
    topk_case();
    return check_report("test_nn_torch");
}
