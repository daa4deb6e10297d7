/* Residual blocks (same shape, and with a 1x1 stride-2 projection) and channel concatenation
 * against PyTorch (tests/fixtures/nn_residual*.txt, nn_concat.txt from torch_nn.py's
 * graph_blocks()): the forward output, the input gradient and every parameter gradient,
 * the parameters loaded in the net's tensor-table order. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "fixture.h"
#include "t2exp.h"

#define RTOL 1e-4
#define ATOL 1e-5

typedef int (*build_fn)(t2_net *net);

static int residual(t2_net *n)
{
    int rc;
    if ((rc = t2_net_residual_begin(n)) || (rc = t2_net_conv2d(n, 3, 3, 1, 1)) || (rc = t2_net_tanh(n)) ||
        (rc = t2_net_conv2d(n, 3, 3, 1, 1)) || (rc = t2_net_residual_end(n)))
        return rc;
    return T2_OK;
}

static int residual_proj(t2_net *n)
{
    int rc;
    if ((rc = t2_net_residual_begin(n)) || (rc = t2_net_conv2d(n, 5, 3, 2, 1)) || (rc = t2_net_tanh(n)) ||
        (rc = t2_net_conv2d(n, 5, 3, 1, 1)) || (rc = t2_net_residual_end(n)))
        return rc;
    return T2_OK;
}

static int concat(t2_net *n)
{
    int rc;
    if ((rc = t2_net_concat_begin(n)) || (rc = t2_net_conv2d(n, 3, 3, 1, 1)) || (rc = t2_net_tanh(n)) ||
        (rc = t2_net_concat_end(n)))
        return rc;
    return T2_OK;
}

static void block_case(const char *file, build_fn build)
{
    fixture *f = fixture_load(file);
    CHECK(f != NULL);
    if (!f) return;
    const fixture_array *x = fixture_get(f, "x"), *dya = fixture_get(f, "dy");
    t2_tensor xt = t2_tensor_view(x->data, x->ndim, x->shape);
    t2_net *net = NULL;
    CHECK_OK(t2_net_create(&net, x->ndim - 1, x->shape + 1));
    CHECK_OK(build(net));
    t2_rng r;
    t2_rng_seed(&r, 1);
    CHECK_OK(t2_net_init(net, &r));
    size_t np;
    float *p = t2_net_params(net, &np), *g = t2_net_grads(net, NULL);
    /* Tensor i of the table is the fixture's p<i>, same size and layout. */
    int nt = t2_net_num_tensors(net);
    for (int i = 0; i < nt; i++) {
        t2_param_info info;
        char name[16];
        CHECK_OK(t2_net_tensor_info(net, i, &info));
        snprintf(name, sizeof name, "p%d", i);
        const fixture_array *a = fixture_get(f, name);
        CHECK(a && a->n == info.size);
        if (a && a->n == info.size) memcpy(p + info.offset, a->data, info.size * sizeof(float));
    }
    char extra[16];
    snprintf(extra, sizeof extra, "p%d", nt);
    CHECK(fixture_get(f, extra) == NULL); /* and no parameter the net lacks */
    const t2_tensor *y, *dx;
    CHECK_OK(t2_net_forward(net, &xt, T2_TRAIN, &r, &y));
    CHECK(fixture_compare(f, "y", y->data, t2_tensor_numel(y), RTOL, ATOL) == 0);
    t2_tensor dyt = *y;
    dyt.data = dya->data;
    CHECK(dya->n == t2_tensor_numel(y));
    t2_net_zero_grad(net);
    CHECK_OK(t2_net_backward(net, &dyt, &dx));
    CHECK(fixture_compare(f, "dx", dx->data, t2_tensor_numel(&xt), RTOL, ATOL) == 0);
    for (int i = 0; i < nt; i++) {
        t2_param_info info;
        char name[16];
        CHECK_OK(t2_net_tensor_info(net, i, &info));
        snprintf(name, sizeof name, "d_p%d", i);
        CHECK(fixture_compare(f, name, g + info.offset, info.size, RTOL, ATOL) == 0);
    }
    t2_net_free(net);
    fixture_free(f);
}

int main(void)
{
    for (int threads = 1; threads <= 2; threads++) {
        CHECK_OK(t2_set_num_threads(threads));
        block_case("nn_residual.txt", residual);
        block_case("nn_residual_proj.txt", residual_proj);
        block_case("nn_concat.txt", concat);
    }
    return check_report("test_nn_graph_torch");
}
